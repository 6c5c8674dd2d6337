"""A lesson opened alone (Colab, Kaggle, a download) fetches utils.py and runs.

The setup cell downloads utils.py from the series' repository. The network is not reachable
here, so GPU_LESSONS_URL points the very same code at this checkout as a file:// URL, the
way a local clone would serve it; everything else is the real thing: an empty folder holding
only the notebook, a fresh kernel, every cell executed. Running every lesson a second time
takes as long as the nbval suite itself, so those tests carry the `alone` mark: `make test`
runs the quick checks, `make test-alone` (and CI) the full runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import execute
import nbformat
import pytest
from series import ROOT, lessons

LESSONS = lessons()


def kernel_env(url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["GPU_LESSONS_URL"] = url
    return env


@pytest.mark.alone
@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.path.name for lesson in LESSONS])
def test_a_lesson_opened_alone_in_an_empty_folder_fetches_utils_and_runs(tmp_path, lesson):
    alone = tmp_path / lesson.path.name
    shutil.copy(lesson.path, alone)
    nb = nbformat.read(alone, as_version=4)
    execute.execute(nb, tmp_path, timeout=300, env=kernel_env(ROOT.as_uri()))
    setup = next(c for c in nb.cells if c.get("id") == "setup")
    assert "Fetched utils.py" in "".join(o.get("text", "") for o in setup.outputs)
    assert (tmp_path / "utils.py").read_text() == (ROOT / "utils.py").read_text()


def setup_cell_source() -> str:
    nb = nbformat.read(LESSONS[0].path, as_version=4)
    return next(c.source for c in nb.cells if c.get("id") == "setup")


def test_the_setup_cell_in_an_empty_folder_makes_utils_importable(tmp_path):
    """The quick form of the test above, run by `make test`: setup cell, then the first use of utils."""
    run = subprocess.run([sys.executable, "-c", setup_cell_source() + "\nimport utils; print(utils.try_gpu())"],
                         cwd=tmp_path, capture_output=True, text=True, env=kernel_env(ROOT.as_uri()))
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("Fetched utils.py from the series' repository.")
    assert (tmp_path / "utils.py").read_text() == (ROOT / "utils.py").read_text()


def test_an_unreachable_repository_gives_a_clear_error(tmp_path):
    run = subprocess.run([sys.executable, "-c", setup_cell_source()], cwd=tmp_path, capture_output=True, text=True,
                         env=kernel_env((tmp_path / "nowhere").as_uri()))
    assert run.returncode != 0
    assert "Could not fetch utils.py" in run.stderr and "Download it into this folder" in run.stderr


def test_inside_the_repository_nothing_is_fetched(tmp_path):
    run = subprocess.run([sys.executable, "-c", setup_cell_source() + "\nimport utils; print(utils.__file__)"],
                         cwd=ROOT / "notebooks", capture_output=True, text=True,
                         env=kernel_env((tmp_path / "nowhere").as_uri()))
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(ROOT / "utils.py")


def test_the_setup_cell_never_installs_or_imports_torch():
    source = setup_cell_source()
    assert "import torch" not in source and "torch" not in source.split("pip")[-1].split("\n")[0]
    assert '"matplotlib",)' in source  # the only package it may install, and only when missing
