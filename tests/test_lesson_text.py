"""Lesson text speaks to the reader: no markdown cell or code comment of either edition talks about
the test machinery (which outputs nbval compares, the sanitizer, CI). That belongs in the tests and
CONTRIBUTING.md; a lesson says what differs on the reader's machine instead. `make lint` runs this file."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from tools import diagrams, i18n
from tools.series import HARNESS_WORDS, ROOT, all_notebooks, read, write

PATTERNS = [re.compile(p) for p in HARNESS_WORDS]


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
