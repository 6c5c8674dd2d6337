"""Stored outputs are clean: what a reader sees on GitHub and what nbval compares against."""

from __future__ import annotations

import getpass
import json
import re
import socket

import pytest

from tools.series import ROOT, all_notebooks

NOTEBOOKS = all_notebooks()
IDS = [p.relative_to(ROOT).as_posix() for p in NOTEBOOKS]

LOCAL_PATH = re.compile(r"(/root/|/home/\w|/Users/\w|/tmp/|/private/var/|[A-Za-z]:\\\\|site-packages|\.venv)")
ANSI = re.compile(r"\x1b\[")
ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]{6,}\b|0x[0-9a-fA-F]{8,}")
NOTEBOOK_METADATA = {"kernelspec", "language_info", "accelerator", "colab"}


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def output_texts(nb):
    for i, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            yield i, json.dumps(out)


def private_names() -> list[str]:
    names = [getpass.getuser(), socket.gethostname()]
    return [n for n in names if len(n) >= 4 and n not in {"root", "runner", "localhost", "jovyan"}]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_outputs_hold_no_local_paths_names_colours_or_addresses(path):
    for i, text in output_texts(load(path)):
        assert not LOCAL_PATH.search(text), f"cell {i}: local path {LOCAL_PATH.search(text).group(0)!r}"
        assert not ANSI.search(text), f"cell {i}: ANSI colour codes (run `make outputs`)"
        assert not ADDRESS.search(text), f"cell {i}: a memory address changes every run"
        for name in private_names():
            assert name not in text, f"cell {i}: user or host name {name!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_metadata_is_clean(path):
    nb = load(path)
    assert (nb["nbformat"], nb["nbformat_minor"]) == (4, 5)
    assert set(nb["metadata"]) <= NOTEBOOK_METADATA, set(nb["metadata"]) - NOTEBOOK_METADATA
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    # What Jupyter fills in itself, so that opening a notebook does not mark it modified.
    assert {"codemirror_mode", "file_extension", "mimetype", "pygments_lexer", "version"} <= set(
        nb["metadata"]["language_info"])
    for i, cell in enumerate(nb["cells"]):
        # collapsed code cells (the setup, #@save and check cells) also carry Colab's and JupyterLab's markers,
        # and a markdown cell the names of the diagrams it embeds
        allowed = {"tags", "cellView", "jupyter"} if cell["cell_type"] == "code" else {"tags", "diagrams"}
        assert set(cell["metadata"]) <= allowed, f"cell {i}: metadata {cell['metadata']}"
        for out in cell.get("outputs", []):
            assert not out.get("metadata"), f"cell {i}: output metadata {out['metadata']}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_code_cell_ran_once_in_order(path):
    counts = [c["execution_count"] for c in load(path)["cells"] if c["cell_type"] == "code"]
    assert counts == list(range(1, len(counts) + 1)), "run `make outputs` (cells ran out of order or not at all)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_cell_ids_are_present_unique_and_readable(path):
    ids = [c.get("id") for c in load(path)["cells"]]
    assert all(ids) and len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9-]+", i) for i in ids), ids


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_cells_meant_to_fail_store_their_error_and_others_do_not(path):
    for i, cell in enumerate(load(path)["cells"]):
        if cell["cell_type"] != "code":
            continue
        errors = [o for o in cell["outputs"] if o["output_type"] == "error"]
        if "raises-exception" in cell["metadata"].get("tags", []):
            assert errors, f"cell {i} is tagged raises-exception but stored no error"
            assert "nbval-ignore-output" not in cell["metadata"]["tags"], \
                f"cell {i}: ignoring the output of a failing cell would stop nbval checking that it fails"
        else:
            assert not errors, f"cell {i} stored an error without the raises-exception tag"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_cell_tag_is_one_nbval_or_the_series_knows(path):
    """A misspelt tag is silently ignored by nbval, and the cell is then compared after all."""
    known = {"nbval-ignore-output", "raises-exception", "nbval-skip", "nbval-check-output",
             "hide-input"}  # myst-nb: the site shows the cell's source folded (tools/sync_notebooks.py)
    for i, cell in enumerate(load(path)["cells"]):
        unknown = set(cell["metadata"].get("tags", [])) - known
        assert not unknown, f"cell {i}: unknown tags {unknown}"
