"""`make new-lesson` (tools/new_lesson.py) end to end, in a scratch copy of this working tree: the
scaffold writes a lesson, its solutions, its check, its messages and its tests, runs `make sync` and
`make outputs`, and then `make lint`'s checks and the new lesson's own tests pass (strict nbval over
its four notebooks, its check's tests). The workflows' linters are left out: the scaffold touches no
workflow. A maintainer then replaces the template's idea, exercise and check with the lesson's own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools import new_lesson, series

ROOT = series.ROOT
BIN = Path(sys.executable).parent


def scratch_copy(folder: Path) -> Path:
    """The files of this working tree that git tracks or would (ignored ones aside), as they are now, times kept."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True)
    for name in filter(None, listed.stdout.split("\0")):
        source, target = ROOT / name, folder / name
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return folder


@pytest.mark.slow
def test_a_new_lesson_from_the_scaffold_passes_lint_and_its_own_tests(tmp_path):
    repo = scratch_copy(tmp_path / "repo")
    # No GPU_LESSONS_URL: the scratch copy's notebooks find its own helpers.
    env = {k: v for k, v in os.environ.items() if k != "GPU_LESSONS_URL"} | {"PYTHONDONTWRITEBYTECODE": "1"}
    next_number = max(int(p.name[:2]) for p in (ROOT / "notebooks").glob("*.ipynb")
                      if series.LESSON_NAME.match(p.name)) + 1
    name = f"{next_number:02d}_first_look"

    def run(*command: str | Path) -> subprocess.CompletedProcess:
        done = subprocess.run([str(c) for c in command], cwd=repo, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{' '.join(map(str, command))}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done

    made = run(sys.executable, "-m", "tools.new_lesson", name, "A first look")
    assert f'"lesson": "notebooks/{name}.ipynb"' in made.stdout
    for path in (f"notebooks/{name}.ipynb", f"notebooks/solutions/{name}_solutions.ipynb",
                 f"notebooks/zh/{name}.ipynb", f"notebooks/zh/solutions/{name}_solutions.ipynb",
                 f"i18n/zh/{name}.po", "exercises/first_look.py", "tests/test_checks_first_look.py"):
        assert (repo / path).is_file(), path
    assert f"notebooks/{name}.ipynb" in (repo / "README.md").read_text(encoding="utf-8")
    # make lint, but for the workflows' linters
    run(BIN / "ruff", "check", ".")
    run(BIN / "nb-clean", "check", "--preserve-cell-outputs", "--preserve-execution-counts",
        "--preserve-cell-metadata-field", "tags", "--preserve-cell-metadata-field", "cellView",
        "--preserve-cell-metadata-field", "jupyter", "--preserve-cell-metadata-field", "diagrams",
        "--preserve-notebook-metadata", "notebooks")
    synced = run(sys.executable, "-m", "tools.sync_notebooks", "--check")
    assert "wait for a translator" in synced.stdout  # the Chinese edition shows the English until translated
    run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_lesson_text.py")
    run(sys.executable, "-m", "tools.lesson_figures", "--check")
    run(sys.executable, "-m", "tools.zh_rhythm", "--check")
    # the new lesson's own tests: its check, and strict nbval over its notebooks in both editions
    run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "tests/test_checks_first_look.py",
        f"notebooks/{name}.ipynb", f"notebooks/solutions/{name}_solutions.ipynb",
        f"notebooks/zh/{name}.ipynb", f"notebooks/zh/solutions/{name}_solutions.ipynb")


def test_the_scaffold_refuses_a_number_that_is_not_the_next_and_a_name_out_of_form(capsys):
    with pytest.raises(SystemExit):
        new_lesson.main(["03_again", "Again"])
    assert "this tool never renumbers lessons" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        new_lesson.main(["16-First", "First"])
    assert "is not NN_topic" in capsys.readouterr().err
