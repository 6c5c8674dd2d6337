"""The size of each lesson, against the limits of a 45-minute lab (CONTRIBUTING.md, "Adding a lesson").

    python -m tools.lesson_figures            # a table: every lesson, then every solutions notebook
    python -m tools.lesson_figures --check    # the table, then exit 1 naming each lesson over a limit

The limits, for each lesson `notebooks/NN_*.ipynb` (a solutions notebook is measured and shown,
never failed):

- **prose words** at most 1,300: the words of every markdown cell except the generated `header`
  and `footer` cells, without the exercises (from the line `## Exercises` to the footer, that line
  included). A word is what a reader reads as one: the text is split on whitespace after removing
  link targets (the `(...)` of `[text](...)`, so the link text counts), images (`![alt](...)`:
  a picture is not read as words), HTML comments and tags (`<img ...>`, `<br>`, `</sub>`) and the
  language tag after a code fence (```` ```python ````); a piece counts if it holds a letter or a
  digit, so bullets, `|` of tables, `**`, `---` and lone dashes do not. Inline code and the
  lines of a fenced code block in markdown count as words. A cell of optional reference material,
  folded under `<details><summary>More detail (optional)` (tools/series.py, OPTIONAL_DETAIL), is
  not counted.
- **code in view** at most 120 lines: the non-blank lines (comments included) of every code cell
  a reader sees, that is every code cell but the generated `setup` cell and the collapsed ones,
  up to the exercises (their answer and check cells are the learner's to write in and run; each
  exercise states its own minutes).
- **longest cell in view** at most 15 lines: the most non-blank lines of one such cell (the
  exercises' cells included), but for
  a script the learner reads as a file, a cell `%%writefile name.py`: at most 60 lines (the
  magic's line aside), reported as a problem past that.

A code cell is *collapsed* when it is collapsed wherever the notebook is opened: JupyterLab's
`metadata.jupyter.source_hidden` is true, Colab's `metadata.cellView` is "form" and the site's
(myst-nb's) `hide-input` is among its tags. A cell with only some of the three is counted in view
and reported as a problem, which fails `--check` in any notebook.

Also shown: the header's minutes, the **diagrams** (images in markdown cells, `![...](...)` or
`<img ...>`, but not the header's badges from img.shields.io, Colab and Kaggle) and the
**predict** moments (markdown cells with a line that starts with the bold word Predict, as
`**Predict:** what does the next cell print?`: the lesson asks the reader to predict the next
cell's output, and answers right after it; `**Prediction.**` is no such line).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from tools.i18n import WRITEFILE_PY
from tools.series import (
    COLLAPSE_MARKS,
    FACTS,
    LESSON_NAME,
    MD_IMAGE,
    OPTIONAL_DETAIL,
    ROOT,
    SOLUTIONS,
    all_notebooks,
    collapse_marks,
    count_words,
    read,
    table,
)

MAX_WORDS = 1300
MAX_CODE_LINES = 120
MAX_CELL_LINES = 15
MAX_SCRIPT_LINES = 60  # a script the learner reads as a file: `%%writefile name.py`

GENERATED_MARKDOWN = ("header", "footer")
EXERCISES = re.compile(r"^##\s+Exercises\b", re.MULTILINE)
HTML_IMAGE = re.compile(r"<img\b[^>]*>", re.IGNORECASE)
HTML_SRC = re.compile(r"""\bsrc\s*=\s*["']?([^"'\s>]*)""", re.IGNORECASE)
BADGE_HOSTS = ("img.shields.io", "colab.research.google.com", "kaggle.com")
PREDICT = re.compile(r"^\s*\*\*Predict\b", re.MULTILINE)


@dataclass(frozen=True)
class Figures:
    """What tools.lesson_figures measures in one notebook (the module's docstring defines each)."""

    path: Path
    words: int
    code_lines: int
    longest_cell: int
    longest_cell_id: str | None
    diagrams: int
    predicts: int
    minutes: int | None
    lesson_predicts: int = 0  # the predict moments before the exercises (an exercise may ask to predict too)
    problems: tuple[str, ...] = field(default=())

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def is_lesson(self) -> bool:
        return bool(LESSON_NAME.match(self.path.name)) and self.path.parent.name != SOLUTIONS.name

    def over(self) -> list[str]:
        """Each limit this notebook is past, in words ("2,312 words > 1,800")."""
        out = []
        if self.words > MAX_WORDS:
            out.append(f"{self.words:,} words > {MAX_WORDS:,}")
        if self.code_lines > MAX_CODE_LINES:
            out.append(f"{self.code_lines} lines of code in view > {MAX_CODE_LINES}")
        if self.longest_cell > MAX_CELL_LINES:
            out.append(f"cell {self.longest_cell_id} has {self.longest_cell} lines > {MAX_CELL_LINES}")
        return out


def images(source: str) -> list[str]:
    """The source (URL or path) of each image in a markdown text, in order."""
    found = [(m.start(), m.group(1)) for m in MD_IMAGE.finditer(source)]
    for m in HTML_IMAGE.finditer(source):
        src = HTML_SRC.search(m.group())
        found.append((m.start(), src.group(1) if src else ""))
    return [src for _, src in sorted(found)]


def is_badge(src: str) -> bool:
    return any(host in src for host in BADGE_HOSTS)


def non_blank(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip())


def measure(path: Path, nb: nbformat.NotebookNode | None = None) -> Figures:
    """The figures of the notebook at `path` (or of `nb`, named `path`)."""
    nb = nb if nb is not None else read(path)
    words = diagrams = predicts = lesson_predicts = code_lines = longest = 0
    longest_id = None
    minutes = None
    problems = []
    in_exercises = False
    for cell in nb.cells:
        cell_id = cell.get("id")
        if cell.cell_type == "markdown":
            if cell_id == "header":
                facts = FACTS.search(cell.source)
                minutes = int(facts.group(2)) if facts else None
                diagrams += sum(1 for src in images(cell.source) if not is_badge(src))
                continue
            if cell_id == "footer":
                continue
            diagrams += len(images(cell.source))
            predicts += bool(PREDICT.search(cell.source))
            text = cell.source
            if OPTIONAL_DETAIL.match(text):  # folded reference material, marked optional: not counted
                continue
            if not in_exercises:
                m = EXERCISES.search(text)
                before = text[:m.start()] if m else text
                words += count_words(before)
                lesson_predicts += bool(PREDICT.search(before))
                in_exercises = m is not None
        elif cell.cell_type == "code" and cell_id != "setup":
            marks = collapse_marks(cell)
            if len(marks) == len(COLLAPSE_MARKS):
                continue
            if marks:
                missing = [m for m in COLLAPSE_MARKS if m not in marks]
                problems.append(f"cell {cell_id} is collapsed only in part: it has {', '.join(marks)} "
                                f"but not {', '.join(missing)}")
            lines = non_blank(cell.source)
            code_lines += 0 if in_exercises else lines  # an exercise's cells are the learner's to write in
            if WRITEFILE_PY.match(cell.source):  # a file to read as a file: its own, longer limit
                if lines - 1 > MAX_SCRIPT_LINES:
                    problems.append(f"script cell {cell_id} has {lines - 1} lines > {MAX_SCRIPT_LINES}")
            elif lines > longest:
                longest, longest_id = lines, cell_id
    return Figures(path, words, code_lines, longest, longest_id, diagrams, predicts, minutes, lesson_predicts,
                   tuple(problems))


def status(f: Figures) -> str:
    over = f.over()
    if not f.is_lesson:
        return "over (not checked)" if over else "ok"
    return "OVER" if over else "ok"


def render(figures: list[Figures]) -> str:
    header = ("notebook", "minutes", "words", "code", "longest", "diagrams", "predict", "status")
    rows = [(display(f.path), "-" if f.minutes is None else str(f.minutes), f"{f.words:,}", str(f.code_lines),
             str(f.longest_cell), str(f.diagrams), str(f.predicts), status(f))
            for f in figures]
    limits = (f"limits for a lesson: words <= {MAX_WORDS:,} (prose, exercises excepted), code <= {MAX_CODE_LINES} "
              f"lines in view, longest <= {MAX_CELL_LINES} lines (python -m tools.lesson_figures --help)")
    return table(header, rows) + "\n" + limits


def display(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def check(figures: list[Figures]) -> list[str]:
    """What fails `--check`: a lesson over a limit, and a cell collapsed only in part (in any notebook)."""
    failures = []
    for f in figures:
        failures += [f"{display(f.path)}: {p}" for p in f.problems]
        over = f.over()
        if f.is_lesson and over:
            failures.append(f"{display(f.path)} is over the limits: {'; '.join(over)} "
                            "(split the lesson, or collapse helper and check cells)")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.lesson_figures", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="exit 1 naming each lesson over a limit")
    args = parser.parse_args(argv)
    figures = [measure(path) for path in all_notebooks()]
    print(render(figures))
    problems = [f"{display(f.path)}: {p}" for f in figures for p in f.problems]
    if problems:
        print("\nproblems:\n" + "\n".join(problems))
    failures = check(figures)
    if args.check and failures:
        print(f"\nlesson figures: {len(failures)} to fix\n" + "\n".join(failures), file=sys.stderr)
        return 1
    return 0

if __name__ == "__main__":
    sys.exit(main())
