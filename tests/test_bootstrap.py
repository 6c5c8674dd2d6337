"""A lesson opened alone (Colab, Kaggle, a download) fetches utils.py and runs.

The setup cell downloads the utils.py of the release it is pinned to. The network is not
reachable here, so GPU_LESSONS_URL points the very same code at this checkout's utils.py as a
file:// URL, the way `make` runs the repository's notebooks; everything else is the real thing:
an empty folder holding only the notebook, a fresh kernel, every cell executed. Running every
lesson a second time takes as long as the nbval suite itself, so those tests carry the `alone`
mark: `make test` runs the quick checks, `make test-alone` (and CI) the full runs.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys

import nbformat
import pytest

from tools import execute
from tools.i18n import ZH
from tools.series import ROOT, UTILS_URL, VERSION, all_notebooks, lessons, read

LESSONS = lessons()
UTILS = (ROOT / "utils.py").as_uri()


def kernel_env(url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GPU_LESSONS_URL")}
    env["GPU_LESSONS_URL"] = url
    return env


def setup_cell_source(path=LESSONS[0].path) -> str:
    return next(c.source for c in read(path).cells if c.get("id") == "setup")


def run_python(code: str, cwd, url: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          env=kernel_env(url))


@pytest.mark.alone
@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.path.name for lesson in LESSONS])
def test_a_lesson_opened_alone_in_an_empty_folder_fetches_utils_and_runs(tmp_path, lesson):
    alone = tmp_path / lesson.path.name
    shutil.copy(lesson.path, alone)
    nb = nbformat.read(alone, as_version=4)
    execute.execute(nb, tmp_path, timeout=300, env=kernel_env(UTILS))
    assert sorted(p.name for p in tmp_path.iterdir()) == [lesson.path.name], "the setup cell wrote beside the notebook"


def test_the_setup_cell_in_an_empty_folder_makes_the_series_utils_importable(tmp_path):
    run = run_python(setup_cell_source() + "\nimport utils; print(utils.__file__); print(utils.try_gpu())",
                     tmp_path, UTILS)
    assert run.returncode == 0, run.stderr
    fetched, device = run.stdout.split()
    assert open(fetched).read() == (ROOT / "utils.py").read_text()
    assert device in ("cpu", "cuda:0", "mps:0")
    assert list(tmp_path.iterdir()) == []


def test_a_readers_own_utils_py_survives_and_is_not_the_one_imported(tmp_path):
    mine = "# the reader's own helpers\ndef mine():\n    return 42\n"
    (tmp_path / "utils.py").write_text(mine)
    run = run_python(setup_cell_source() + "\nimport utils; print(utils.__file__); print(hasattr(utils, 'try_gpu'))",
                     tmp_path, UTILS)
    assert run.returncode == 0, run.stderr
    imported, has_series_helpers = run.stdout.split()
    assert (tmp_path / "utils.py").read_text() == mine
    assert imported != str(tmp_path / "utils.py") and has_series_helpers == "True"


def test_worker_processes_started_by_spawning_import_the_fetched_utils(tmp_path):
    """DataLoader workers on macOS and Windows are spawned: they must find utils.py too."""
    code = setup_cell_source() + (
        "\nimport multiprocessing as mp, utils"
        "\nif __name__ == '__main__':"
        "\n    with mp.get_context('spawn').Pool(1) as pool:"
        "\n        print(pool.apply(utils.try_gpu))"
    )
    (tmp_path / "main.py").write_text(code)
    run = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, capture_output=True, text=True,
                         env=kernel_env(UTILS), timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() in ("cpu", "cuda:0", "mps:0")


def test_without_network_the_error_says_what_to_do(tmp_path):
    run = run_python(setup_cell_source(), tmp_path, (tmp_path / "nowhere" / "utils.py").as_uri())
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: Could not fetch") and "Kaggle: Settings > Internet on" in last


def test_the_setup_cell_is_short_formatted_and_leaves_only_modules_and_its_url(tmp_path):
    source = setup_cell_source()
    assert len(source.splitlines()) <= 7 and ";" not in source and "exec(" not in source and "eval(" not in source
    ruff = subprocess.run([sys.executable, "-m", "ruff", "format", "--diff", "--stdin-filename", "setup.py", "-"],
                          input=source + "\n", capture_output=True, text=True)
    assert ruff.returncode == 0, ruff.stdout
    run = run_python(f"before = set(dir())\n{source}\nprint(sorted(set(dir()) - before - {{'before'}}))",
                     tmp_path, UTILS)
    assert run.returncode == 0, run.stderr
    assert ast.literal_eval(run.stdout.strip()) == ["os", "sys", "tempfile", "url", "urllib"]


def test_every_notebook_has_the_same_collapsed_setup_cell_pinned_to_the_release():
    for path in all_notebooks():
        cell = next(c for c in read(path).cells if c.get("id") == "setup")
        assert cell.source == setup_cell_source(), path.name
        assert cell.metadata.get("cellView") == "form" and cell.metadata["jupyter"]["source_hidden"], path.name
    assert f'"{UTILS_URL}"' in setup_cell_source() and f"/{VERSION}/utils.py" in UTILS_URL


def test_the_setup_cell_never_installs_or_imports_torch():
    source = setup_cell_source()
    assert not re.search(r"import torch|\bpip\b|install", source)


def test_every_helper_the_notebooks_use_exists_in_the_pinned_release():
    """An old notebook gets the helpers it was written with: the release it names must hold them."""
    tag = subprocess.run(["git", "rev-parse", "-q", "--verify", f"refs/tags/{VERSION}"], cwd=ROOT,
                         capture_output=True, text=True)
    if tag.returncode != 0:
        pytest.skip(f"the release tag {VERSION} does not exist yet (cut it with `make release VERSION={VERSION}`)")
    pinned = subprocess.run(["git", "show", f"{VERSION}:utils.py"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout
    defined = set()
    for node in ast.parse(pinned).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    used = set()
    for path in all_notebooks():
        for cell in read(path).cells:
            if cell.cell_type != "code":
                continue
            for node in ast.walk(ast.parse(re.sub(r"^\s*[%!].*$", "pass", cell.source, flags=re.MULTILINE))):
                if isinstance(node, ast.ImportFrom) and node.module == "utils":
                    used |= {a.name for a in node.names}
                elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                      and node.value.id == "utils"):
                    used.add(node.attr)
    assert used <= defined, f"not in utils.py of {VERSION}: {sorted(used - defined)}"


# --- the Chinese edition: the same cell, speaking Chinese ------------------------------------

ZH_ALONE = [ZH / "00_check_your_setup.ipynb", ZH / "03_copies_between_devices.ipynb"]


@pytest.mark.alone
@pytest.mark.parametrize("path", ZH_ALONE, ids=[f"zh/{p.name}" for p in ZH_ALONE])
def test_a_chinese_lesson_opened_alone_in_an_empty_folder_fetches_utils_and_runs(tmp_path, path):
    alone = tmp_path / path.name
    shutil.copy(path, alone)
    nb = nbformat.read(alone, as_version=4)
    execute.execute(nb, tmp_path, timeout=300, env=kernel_env(UTILS))
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name], "the setup cell wrote beside the notebook"


def test_every_chinese_notebook_has_the_chinese_setup_cell_with_the_same_code(tmp_path):
    from tools.i18n import code_without_comments

    english = setup_cell_source()
    zh = setup_cell_source(ZH / "00_check_your_setup.ipynb")
    for path in sorted(ZH.rglob("*.ipynb")):
        cell = next(c for c in read(path).cells if c.get("id") == "setup")
        assert cell.source == zh, path.name
        assert cell.metadata.get("cellView") == "form" and cell.metadata["jupyter"]["source_hidden"], path.name
    # Only the comment and the error message differ from the English cell.
    differ = [(a, b) for a, b in zip(code_without_comments(english), code_without_comments(zh), strict=True) if a != b]
    assert len(differ) == 1 and differ[0][0][1].startswith('f"Could not fetch') and "请先联网" in differ[0][1][1]
    assert len(zh.splitlines()) <= 7
    ruff = subprocess.run([sys.executable, "-m", "ruff", "format", "--diff", "--stdin-filename", "setup.py", "-"],
                          input=zh + "\n", capture_output=True, text=True)
    assert ruff.returncode == 0, ruff.stdout


def test_without_network_the_chinese_error_says_what_to_do(tmp_path):
    run = run_python(setup_cell_source(ZH / "00_check_your_setup.ipynb"), tmp_path,
                     (tmp_path / "nowhere" / "utils.py").as_uri())
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: 无法下载") and "请先联网（Kaggle：Settings > Internet on）" in last
