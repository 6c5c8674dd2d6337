"""tools/lesson_figures.py, on scratch notebooks: what counts as a word, as code in view, as a
diagram and as a predict moment, and when `--check` fails (`make lint` runs it on the lessons)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from tools import lesson_figures, sync_notebooks
from tools.lesson_figures import MAX_CELL_LINES, MAX_CODE_LINES, MAX_WORDS, check, count_words, measure
from tools.series import ROOT

BADGES = sync_notebooks.badges(ROOT / "notebooks" / "01_scratch.ipynb")  # the generated header's badges
HEADER = f"# 01 · Scratch\n\n*A purpose.*\n\n{BADGES}\n\n**Runs on:** CPU · 1 GPU. **Time:** about 25 minutes."
COLLAPSED = {"jupyter": {"source_hidden": True}, "cellView": "form", "tags": ["hide-input"]}


def md(source: str, cell_id: str | None = None) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_markdown_cell(source)
    if cell_id:
        cell.id = cell_id
    return cell


def code(source: str, cell_id: str | None = None, metadata: dict | None = None) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source, metadata=metadata or {})
    if cell_id:
        cell.id = cell_id
    return cell


def notebook(*cells: nbformat.NotebookNode) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[md(HEADER, "header"), code("import os\n" * 40, "setup"), *cells,
                                           md("**Worked solutions**: [solutions](s.ipynb). [< 00](a) | [Contents](b)",
                                              "footer")])


def lines(n: int) -> str:
    return "\n\n".join(f"x{i} = {i}" for i in range(n))  # n non-blank lines between blank ones


def test_words_are_split_on_whitespace_without_link_targets_tags_images_or_fence_languages():
    assert count_words('See [the docs](https://example.com/a "The reference pages") now.') == 4  # no title either
    assert count_words("A <sub>small</sub> word<br>here <!-- not read -->") == 4  # "word" and "here" split by <br>
    assert count_words("Before ![a diagram of the bus](bus.svg) after <img src='x.png' alt='five words of alt'>") == 2
    assert count_words("```python\nx = torch.ones(2)\n```") == 2  # "x" and "torch.ones(2)"; "=" holds no letter
    assert count_words("Call `torch.cuda.synchronize()` first") == 3  # inline code counts as a word
    assert count_words("- one\n- two\n\n| a | b |\n|---|---|\n\n**bold** — end") == 6  # bullets, pipes, dashes: none


def test_fenced_code_counts_its_lines_words_but_not_the_language_tag():
    assert count_words("```python\nprint(x)\n```") == 1
    assert count_words("```\nprint(x)\n```") == 1
    assert count_words("~~~text\nbefore after\n~~~") == 2


def test_prose_words_leave_out_header_footer_and_everything_from_the_exercises_heading():
    nb = notebook(md("## One\n\nfive words in this cell"),
                  md("## Summary\n\n- two words\n\n## Exercises\n\n1. Many words that a reader does later."),
                  md("More exercise text, still not counted."))
    assert measure(Path("01_scratch.ipynb"), nb).words == 6 + 3  # "One five words in this cell", "Summary two words"


def test_code_in_view_leaves_out_the_setup_cell_collapsed_cells_and_blank_lines():
    nb = notebook(code(lines(4), "a"), code("#@save\n" + lines(30), "helper", COLLAPSED),
                  md("text"), code(lines(7), "b"), code("\n\n   \n", "empty"))
    f = measure(Path("01_scratch.ipynb"), nb)
    assert (f.code_lines, f.longest_cell, f.longest_cell_id, f.problems) == (11, 7, "b", ())


def test_a_script_written_with_writefile_may_be_60_lines_and_still_counts_in_view():
    script = "%%writefile {workdir}/train.py\n"
    nb = notebook(code(script + lines(60), "script"), code(lines(7), "b"))
    f = measure(Path("01_scratch.ipynb"), nb)
    assert (f.code_lines, f.longest_cell, f.longest_cell_id, f.problems) == (68, 7, "b", ())
    f = measure(Path("01_scratch.ipynb"), notebook(code(script + lines(61), "script")))
    assert f.problems == ("script cell script has 61 lines > 60",)
    f = measure(Path("01_scratch.ipynb"), notebook(code("%%writefile notes.txt\n" + lines(20), "notes")))
    assert (f.longest_cell, f.problems) == (21, ())  # any other file is a cell like any other


def test_a_cell_collapsed_only_in_jupyter_is_in_view_and_reported_as_a_problem():
    nb = notebook(code(lines(20), "half", {"jupyter": {"source_hidden": True}, "cellView": "form"}))
    f = measure(Path("01_scratch.ipynb"), nb)
    assert (f.code_lines, f.longest_cell) == (20, 20)
    assert f.problems == ("cell half is collapsed only in part: it has jupyter.source_hidden, cellView: form "
                          "but not hide-input tag",)
    assert check([f]) == [
        f"01_scratch.ipynb: {f.problems[0]}",
        f"01_scratch.ipynb is over the limits: cell half has 20 lines > {MAX_CELL_LINES} "
        "(split the lesson, or collapse helper and check cells)"]


def test_diagrams_are_images_in_markdown_but_not_the_header_badges():
    nb = notebook(md("![The bus between main memory and the GPU](bus.svg)"),
                  md('Two: <img src="queue.png" alt="the queue"> and ![bits](attachment:bits.png)'),
                  md("A [link](https://img.shields.io) is no image."))
    assert measure(Path("01_scratch.ipynb"), nb).diagrams == 3
    assert measure(Path("01_scratch.ipynb"), notebook()).diagrams == 0  # three badges in the header only


def test_predict_moments_are_markdown_cells_with_a_line_starting_with_bold_predict():
    nb = notebook(md("**Predict:** what does the next cell print?"),
                  md("Some text.\n\n**Predict** the time, then run it.\n\n**Predict** again, same cell."),
                  md("We do not *predict*; **predicting** is not it either."),
                  md("**Prediction.** An answer's label is no question to the reader."),
                  code("# **Predict** in a comment is not a markdown cell"))
    assert measure(Path("01_scratch.ipynb"), nb).predicts == 2


def test_minutes_come_from_the_header_and_solutions_have_none():
    assert measure(Path("01_scratch.ipynb"), notebook()).minutes == 25
    solutions = nbformat.v4.new_notebook(cells=[md("# Solutions · 01 Scratch", "header"), md("text")])
    assert measure(Path("solutions/01_scratch_solutions.ipynb"), solutions).minutes is None


def write(folder: Path, name: str, nb: nbformat.NotebookNode) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


@pytest.fixture
def scratch(tmp_path):
    """A series of one lesson within the limits, one over every limit, and an over-long solutions notebook."""
    long_prose = md(" ".join(["word"] * (MAX_WORDS + 1)))
    big = notebook(long_prose, *(code(lines(MAX_CELL_LINES + 1)) for _ in range(MAX_CODE_LINES // MAX_CELL_LINES)))
    paths = [write(tmp_path, "01_fine.ipynb", notebook(md("Short."), code(lines(MAX_CELL_LINES)))),
             write(tmp_path, "02_big.ipynb", big),
             write(tmp_path, "solutions/02_big_solutions.ipynb", big)]
    return [measure(p) for p in paths]


def test_the_check_fails_on_a_new_lesson_over_the_limits_but_never_on_a_solutions_notebook(scratch):
    fine, big, solutions = scratch
    assert fine.over() == []
    assert big.over() == [f"{MAX_WORDS + 1:,} words > {MAX_WORDS:,}",
                          f"{(MAX_CELL_LINES + 1) * (MAX_CODE_LINES // MAX_CELL_LINES)} lines of code in view "
                          f"> {MAX_CODE_LINES}",
                          f"cell {big.longest_cell_id} has {MAX_CELL_LINES + 1} lines > {MAX_CELL_LINES}"]
    failures = check(scratch)
    assert len(failures) == 1 and failures[0].startswith(f"{big.path} is over the limits: {MAX_WORDS + 1:,} words")
    assert solutions.over() and not solutions.is_lesson


def test_the_table_marks_a_lesson_over_the_limits_and_a_solutions_notebook_over_them_apart(scratch):
    table = lesson_figures.render(scratch)
    row = next(line for line in table.splitlines() if line.startswith(str(scratch[1].path)))
    assert row.endswith("OVER")
    assert next(line for line in table.splitlines() if "02_big_solutions" in line).endswith("over (not checked)")


def test_the_command_exits_1_on_the_scratch_series_and_0_without_check(scratch, monkeypatch, capsys):
    monkeypatch.setattr(lesson_figures, "all_notebooks", lambda: [f.path for f in scratch])
    assert lesson_figures.main(["--check"]) == 1
    assert "02_big.ipynb is over the limits" in capsys.readouterr().err
    assert lesson_figures.main([]) == 0  # without --check it only reports


def test_optional_detail_folded_under_details_is_neither_words_nor_minutes():
    """Reference material a learner may skip: a cell opening with `<details><summary>More detail
    (optional)` (its Chinese twin 更多细节（选读）); a <details> fold of another kind still counts."""
    folded = "<details><summary>More detail (optional): the allocator's sizes</summary>\n\n" + "word " * 400 + \
             "\n\n</details>"
    folded_zh = "<details><summary>更多细节（选读）：分配器的尺寸</summary>\n\n" + "word " * 400 + "\n\n</details>"
    other = "<details><summary>Why?</summary>\n\nthree more words\n\n</details>"
    nb = notebook(md("## One\n\nfive words in this cell"), md(folded), md(folded_zh), md(other))
    assert measure(Path("01_scratch.ipynb"), nb).words == 6 + 4  # "Why?" and "three more words" count
    assert sync_notebooks.reading(nb)[0] == 6 + 4
