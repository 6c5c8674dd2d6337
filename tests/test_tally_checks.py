"""tools/tally_checks.py, the teacher's pack's tally of returned notebooks: it reads stored check outputs
(in both editions' words), runs nothing, and says what it skipped."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import subprocess
import sys

import nbformat
import pytest

import exercises.core
import exercises.messages
import utils
from tools import tally_checks
from tools.series import ROOT

KAGGLE = dict(driver_cuda=None, torch_cuda="12.6", cuda_available=False, service="Kaggle")


def printed_by_check(*answers):
    """What check("setup.kaggle-no-gpu", ...) prints, as a stored stream output."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exercises.check("setup.kaggle-no-gpu", *answers)
    return nbformat.v4.new_output("stream", name="stdout", text=out.getvalue())


def returned(path, outputs_by_id):
    """A returned notebook with one check cell per exercise id; None for a cell never run."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("### Exercise"), nbformat.v4.new_code_cell("answer = ...")]
    for exercise_id, output in outputs_by_id.items():
        cell = nbformat.v4.new_code_cell(f'check("{exercise_id}", answer)')
        cell.outputs = [] if output is None else [output]
        nb.cells.append(cell)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def test_the_first_words_it_looks_for_are_what_check_prints_in_both_editions():
    for messages in (exercises.messages.MESSAGES, utils.zh_tables()["messages"]):
        said = {key: messages[key].format(why="…", error="…", id="x")
                for key in ("core/right", "core/wrong", "core/raised", "core/not-answered")}
        assert said["core/right"].startswith(tally_checks.RIGHT)
        assert said["core/wrong"].startswith(tally_checks.NOT_YET)
        assert said["core/raised"].startswith(tally_checks.NOT_YET)
        assert said["core/not-answered"].startswith(tally_checks.NOT_ANSWERED)


def test_it_tabulates_right_not_yet_not_answered_and_not_run_per_lesson(tmp_path):
    right = printed_by_check(KAGGLE, "b")
    wrong = printed_by_check(KAGGLE, "a")
    unanswered = printed_by_check(...)
    zh_right = nbformat.v4.new_output("stream", name="stdout", text="✓ 答对了。……\n")
    returned(tmp_path / "in" / "03_copies_Li_Wei.ipynb", {"copies.a": right, "copies.b": wrong, "copies.c": None})
    returned(tmp_path / "in" / "sub" / "03_copies_Ana.ipynb", {"copies.a": unanswered, "copies.b": zh_right})
    returned(tmp_path / "in" / "05_timing_Ana.ipynb", {"timing.a": right})
    (tmp_path / "in" / "notes.ipynb").write_text("not json")
    found = tally_checks.tally(tmp_path / "in")
    assert found == {
        "03": {"03_copies_Li_Wei.ipynb": {"copies.a": "right", "copies.b": "not yet", "copies.c": "not run"},
               "sub/03_copies_Ana.ipynb": {"copies.a": "not answered", "copies.b": "right"}},
        "05": {"05_timing_Ana.ipynb": {"timing.a": "right"}}}
    lines = tally_checks.table(found["03"]).splitlines()
    assert lines[0].split() == ["notebook", "copies.a", "copies.b", "copies.c", "right"]
    assert lines[1].split() == ["03_copies_Li_Wei.ipynb", "✓", "✗", "·", "1/3"]
    assert lines[2].split() == ["sub/03_copies_Ana.ipynb", "–", "✓", "·", "1/3"]  # a check cell it lacks: not run


def test_the_command_writes_a_csv_says_what_it_skipped_and_refuses_a_missing_folder(tmp_path):
    returned(tmp_path / "in" / "01_devices_Li.ipynb", {"devices.a": printed_by_check(KAGGLE, "b")})
    (tmp_path / "in" / "broken.ipynb").write_text("{")
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "tally_checks.py"), str(tmp_path / "in"),
                          "--csv", str(tmp_path / "out.csv")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "Lesson 01" in run.stdout and "1/1" in run.stdout, run.stderr
    assert "skipped" in run.stderr and "broken.ipynb" in run.stderr
    with open(tmp_path / "out.csv", encoding="utf-8") as file:
        assert list(csv.reader(file)) == [["lesson", "notebook", "exercise", "verdict"],
                                          ["01", "01_devices_Li.ipynb", "devices.a", "right"]]
    missing = subprocess.run([sys.executable, str(ROOT / "tools" / "tally_checks.py"), str(tmp_path / "none")],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "is not a folder" in missing.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    assert tally_checks.main([str(empty)]) == 1


def test_it_reads_the_stored_check_cells_of_a_real_lesson_and_runs_none_of_them(tmp_path, monkeypatch):
    lesson = json.loads((ROOT / "notebooks" / "03_copies_between_devices.ipynb").read_text(encoding="utf-8"))
    (tmp_path / "03_copies_between_devices.ipynb").write_text(json.dumps(lesson), encoding="utf-8")
    monkeypatch.setattr(exercises.core, "check", lambda *a: pytest.fail("the tally ran a check"))
    found = tally_checks.tally(tmp_path)["03"]["03_copies_between_devices.ipynb"]
    assert found and set(found.values()) <= {"not answered", "not run"}  # the lesson as the series stores it
