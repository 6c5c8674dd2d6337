"""Lesson text speaks to the reader: no markdown cell or code comment of either edition talks about
the test machinery (which outputs nbval compares, the sanitizer, CI). That belongs in the tests and
CONTRIBUTING.md; a lesson says what differs on the reader's machine instead. `make lint` runs this file."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from tools import diagrams, i18n
from tools.quoted_figures import note_source
from tools.series import (
    HARNESS_WORDS,
    LESSON_NAME,
    ROOT,
    SOURCE_MARK,
    SOURCES_HEADING,
    SOURCES_ID,
    all_notebooks,
    read,
    source_marks,
    source_notes,
    write,
)

PATTERNS = [re.compile(p) for p in HARNESS_WORDS]
# The label a figure carried inline before it took a note mark (tools/series.py, SOURCE_MARK): the
# lesson's prose no longer writes it, in either edition; an exercise may still ask the learner to
# reason from a section.
INLINE_LABEL = re.compile(r"(?i:\breasoned\b|\bnot (?:a |from a )?recorded run\b|\bnot measured here\b"
                          r"|\b(?:by|from) (?:its|their|each card's) data ?sheets?\b)"
                          r"|并非实际运行|不是实际运行|并非实测|不是实测|推算的|推算，|推算）|推算\)")


def harness_words(path: Path) -> list[str]:
    """'file cell-id: "word"' for each harness word in a markdown cell or a code comment."""
    found = []
    for cell in read(path).cells:
        if cell.cell_type == "markdown":  # an embedded diagram by its name, and its words
            named, _, svgs = diagrams.by_name(cell.source, cell.metadata.get("diagrams", []))
            texts = [named, *(words for svg in svgs for words in diagrams.texts(svg))]
        elif cell.cell_type == "code":
            texts = [c.text for c in i18n.comments(cell.source)]
        else:
            continue
        for text in texts:
            for pattern in PATTERNS:
                found += [f'{path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path} '
                          f'{cell.get("id")}: "{m.group()}"' for m in pattern.finditer(text)]
    return found


def test_no_lesson_or_solution_of_either_edition_mentions_the_test_machinery():
    notebooks = all_notebooks()
    notebooks += [i18n.zh_path(p) for p in notebooks]
    found = [hit for path in notebooks for hit in harness_words(path)]
    assert not found, ("lesson text about the test machinery; tell the reader what differs on their machine "
                       "instead (tools/series.py HARNESS_WORDS):\n" + "\n".join(found))


def test_the_scanner_finds_planted_words_in_markdown_and_comments_and_leaves_prose_alone(tmp_path):
    cells = [
        nbformat.v4.new_markdown_cell("The message depends on the device, so the output is not compared.",
                                      id="planted-md"),
        nbformat.v4.new_code_cell("x = 1  # the sanitizer maps this for CI\n"
                                  "# 所以不对这个单元格的输出做逐字比对\n"
                                  "y = 'nbval in a string is code, not a comment'", id="planted-code"),
        nbformat.v4.new_markdown_cell("So copies are slow compared with computing. Compared with lesson 08, "
                                      "the loop is not compared to anything; CIFAR-10 and CUDA are words. "
                                      "吞吐量可以在不同规模之间比较。", id="prose"),
        nbformat.v4.new_code_cell("# each compared with the float64 sum; test where it lives\nz = 2", id="prose-code"),
        nbformat.v4.new_markdown_cell("The collapsed check below confirms it, so the lesson verifies itself on "
                                      "the machine that made this page. 下面折叠的检查单元格会确认这一点。",
                                      id="planted-checks"),
        nbformat.v4.new_markdown_cell("Check your answer with the check below it; the cell checks the device.",
                                      id="prose-checks"),
    ]
    path = tmp_path / "scratch.ipynb"
    write(nbformat.v4.new_notebook(cells=cells), path)
    found = harness_words(path)
    assert sorted(found) == sorted([
        f'{path} planted-md: "not compared"',
        f'{path} planted-code: "sanitiz"',
        f'{path} planted-code: "CI"',
        f'{path} planted-code: "比对"',
        f'{path} planted-checks: "collapsed check"',
        f'{path} planted-checks: "verifies itself"',
        f'{path} planted-checks: "machine that made this page"',
        f'{path} planted-checks: "折叠的检查"',
    ]), found


def lessons_of_both_editions() -> list[Path]:
    lessons = [p for p in all_notebooks() if LESSON_NAME.match(p.name) and p.parent.name == "notebooks"]
    return lessons + [i18n.zh_path(p) for p in lessons]


def note_problems(path: Path) -> list[str]:
    """What is wrong with a lesson's note marks and its sources cell: [] if nothing."""
    nb, name = read(path), path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    problems, marked = [], []
    for cell in nb.cells:
        if cell.cell_type != "markdown" or cell.get("id") == SOURCES_ID:
            continue
        marked += [n for n in dict.fromkeys(source_marks(cell.source)) if n not in marked]
        text = SOURCE_MARK.sub(" ", cell.source)
        if cell.get("id") not in ("header", "footer") and not cell.source.lstrip().startswith("### Exercise"):
            problems += [f"{name} {cell.get('id')}: an inline label \"{m.group()}\": give the figure a note mark "
                         f"and its source a note in the sources cell" for m in INLINE_LABEL.finditer(text)]
    notes = source_notes(nb)
    sources = next((c for c in nb.cells if c.get("id") == SOURCES_ID), None)
    if marked and sources is None:
        problems.append(f"{name}: note marks {marked} but no cell with the id {SOURCES_ID!r}")
    if sources is not None:
        ids = [c.get("id") for c in nb.cells]
        if ids.index(SOURCES_ID) != ids.index("footer") - 1:
            problems.append(f"{name}: the sources cell is not the last cell before the footer")
        if not SOURCES_HEADING.search(sources.source) or '<a id="sources"></a>' not in sources.source:
            problems.append(f"{name}: the sources cell opens with neither its anchor nor its heading")
        if not marked:
            problems.append(f"{name}: a sources cell, but no sentence marks a note")
    if marked != list(range(1, len(marked) + 1)):
        problems.append(f"{name}: notes are marked in the order {marked}, not 1, 2, 3 ... as they first appear")
    if sorted(notes) != sorted(marked):
        problems.append(f"{name}: notes {sorted(notes)} but marks {sorted(marked)}")
    problems += [f"{name}: note {n} names no source (a PyTorch file, PyTorch's documentation or a data sheet)"
                 for n, note in notes.items() if not note_source(note)]
    return problems


def test_every_note_mark_has_its_note_with_a_source_and_no_lesson_labels_a_figure_inline():
    found = [p for path in lessons_of_both_editions() for p in note_problems(path)]
    assert not found, "\n".join(found)


def test_the_solutions_mark_their_reasoned_figures_as_the_lessons_do():
    """A solution page, in either edition, gives a reasoned figure the same note mark and sources cell as a
    lesson, never an inline "reasoned, not a recorded run"."""
    solutions = [p for p in all_notebooks() if p.parent.name == "solutions"]
    assert len(solutions) >= 10
    found = [p for path in solutions + [i18n.zh_path(p) for p in solutions] for p in note_problems(path)]
    assert not found, "\n".join(found)


def test_the_note_checker_finds_a_missing_note_a_sourceless_one_an_inline_label_and_the_order(tmp_path):
    mark = '<sup><a href="#sources">{}</a></sup>'.format
    sources = '<a id="sources"></a>\n\n## Where these figures come from\n\n'

    def notebook(*cells: tuple[str, str]) -> Path:
        path = tmp_path / "07_scratch.ipynb"
        made = [nbformat.v4.new_markdown_cell(text, id=cid) for cid, text in cells]
        write(nbformat.v4.new_notebook(cells=[*made, nbformat.v4.new_markdown_cell("nav", id="footer")]), path)
        return path

    good = notebook(("a", f"A T4 does 8 TFLOP/s{mark(1)}. An H100 more{mark(2)}, a T4 less{mark(1)}."),
                    ("sources", sources + "1. The T4's data sheet.\n2. `torch/cuda/__init__.py`.\n"))
    assert note_problems(good) == []
    bad = notebook(("a", f"A T4 does 8 TFLOP/s{mark(2)}. An H100 more{mark(1)} (reasoned from its data sheet)."),
                   ("b", "在 GPU 上更快（根据数据手册推算，并非实测）。"),
                   ("sources", sources + "1. What we think.\n2. The T4's data sheet.\n3. `adam.py`.\n"))
    found = note_problems(bad)
    assert [p.split(": ", 1)[1] for p in found] == [
        'an inline label "reasoned": give the figure a note mark and its source a note in the sources cell',
        'an inline label "from its data sheet": give the figure a note mark and its source a note in the sources cell',
        'an inline label "推算，": give the figure a note mark and its source a note in the sources cell',
        'an inline label "并非实测": give the figure a note mark and its source a note in the sources cell',
        "notes are marked in the order [2, 1], not 1, 2, 3 ... as they first appear",
        "notes [1, 2, 3] but marks [1, 2]",
        "note 1 names no source (a PyTorch file, PyTorch's documentation or a data sheet)",
    ], found
    unanchored = notebook(("a", f"A T4 does 8 TFLOP/s{mark(1)}."), ("sources", "1. The T4's data sheet.\n"))
    assert [p.split(": ", 1)[1] for p in note_problems(unanchored)] == [
        "the sources cell opens with neither its anchor nor its heading"]
