"""Facts about the series that generated cells, pages and tools share (each set here, once),
and the notebook reading and writing every tool uses."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SOLUTIONS = NOTEBOOKS / "solutions"

# The public repository the badges and the Colab/Kaggle bootstrap point at.
# A fork changes REPO and runs `make sync`.
REPO = "gpu-lessons/pytorch-gpu-series"
BRANCH = "main"
# The release a notebook opened alone (Colab, Kaggle, a download) takes its helpers from: the archive
# HELPERS_ARCHIVE as the tag v<VERSION> holds it, one download from GitHub's raw files (or from any mirror
# of the repository's files: tools/release.py). The badges open the tag's notebooks, so a lesson and its
# helpers always come from the same release. `make release VERSION=...` writes the archive and the
# version, regenerates the setup cells and badges, commits and tags; between releases nothing rewrites them.
VERSION = "1.2.0"
TAG = f"v{VERSION}"
HELPERS_ARCHIVE = "release/series-helpers.zip"

GITHUB_URL = f"https://github.com/{REPO}"
HELPERS_URL = f"https://raw.githubusercontent.com/{REPO}/{TAG}/{HELPERS_ARCHIVE}"
# The files of the archive: the lessons' helpers, the checks, the Chinese texts (data only the zh edition reads).
HELPERS_FILES = ("utils.py", "exercises/*.py", "i18n/zh/messages.json", "LICENSE")


LESSON_NAME = re.compile(r"^(\d\d)_[a-z0-9_]+\.ipynb$")
TITLE = re.compile(r"^# (?:\d\d · )?(.+)$", re.MULTILINE)
PURPOSE = re.compile(r"^\*([^*].*[^*])\*$", re.MULTILINE)
FACTS = re.compile(r"^\*\*Runs on:\*\* (.+?)\. \*\*Time:\*\* about (\d+) minutes"
                   r"(?: to read and run)?(?:, plus the exercises|, (\d+) with the exercises)?\.$", re.MULTILINE)


@dataclass(frozen=True)
class Lesson:
    path: Path
    number: str
    title: str
    purpose: str
    minutes: int
    runs_on: str
    with_exercises: int | None = None  # the minutes with the exercises' own minutes added (make sync)

    @property
    def total_minutes(self) -> int:
        """The minutes with the exercises, or the lesson's own while they are not known."""
        return self.minutes if self.with_exercises is None else self.with_exercises

    @property
    def solutions(self) -> Path:
        return SOLUTIONS / f"{self.path.stem}_solutions.ipynb"


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def dumps(nb: nbformat.NotebookNode) -> str:
    """The text of a notebook as the series stores it (nbformat's layout, newline at the end)."""
    return nbformat.writes(nb) + "\n"


def write(nb: nbformat.NotebookNode, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(nb), encoding="utf-8")


def header_source(nb: nbformat.NotebookNode) -> str:
    """The lesson's opening markdown: the generated header, or a new lesson's first markdown cell."""
    cell = next((c for c in nb.cells if c.get("id") == "header"), None)
    cell = cell or next((c for c in nb.cells if c.cell_type == "markdown"), None)
    return cell.source if cell else ""


def lesson_facts(path: Path) -> Lesson:
    """A lesson's title, purpose, minutes and hardware, read from its opening cell:

        # Title                       (the generated header adds the number: # 01 · Title)
        *One sentence: what the reader will be able to do.*
        **Runs on:** CPU · 1 GPU · several GPUs · Apple MPS. **Time:** about 25 minutes.
    """
    m = LESSON_NAME.match(path.name)
    if not m:
        raise ValueError(f"{path.name}: lesson names look like 01_topic.ipynb")
    text = header_source(read(path))
    title, purpose, facts = TITLE.search(text), PURPOSE.search(text), FACTS.search(text)
    missing = [name for name, found in (("a '# Title' heading", title), ("an '*italic purpose*' line", purpose),
                                        ("a '**Runs on:** ... **Time:** about N minutes.' line", facts))
               if not found]
    if missing:
        raise ValueError(f"{path.name}: its first markdown cell needs " + ", ".join(missing))
    return Lesson(path, m.group(1), title.group(1).strip(), purpose.group(1).strip(), int(facts.group(2)),
                  facts.group(1).strip(), int(facts.group(3)) if facts.group(3) else None)


def lessons() -> list[Lesson]:
    """The lessons in reading order."""
    return [lesson_facts(path) for path in sorted(NOTEBOOKS.glob("*.ipynb"))]


def all_notebooks() -> list[Path]:
    """Every notebook of the series: lessons, then their solutions."""
    return sorted(NOTEBOOKS.glob("*.ipynb")) + sorted(SOLUTIONS.glob("*.ipynb"))


# How a reader's words are counted (tools/lesson_figures.py's docstring says what counts as one;
# `make sync` states a lesson's minutes from them).
FENCE_LANGUAGE = re.compile(r"^(\s*(?:`{3,}|~{3,}))[^\n`]*$", re.MULTILINE)
MD_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]*)[^)]*\)")
LINK_TARGET = re.compile(r"\]\([^)]*\)")
HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
HTML_TAG = re.compile(r"</?[A-Za-z][^>]*>")
WORD = re.compile(r"\w")


def prose(source: str) -> str:
    """A markdown cell's text as a reader reads it: no link targets, images, tags, fence languages
    or note marks."""
    text = FENCE_LANGUAGE.sub(r"\1", SOURCE_MARK.sub(" ", source))
    text = MD_IMAGE.sub(" ", text)
    text = HTML_COMMENT.sub(" ", text)
    text = HTML_TAG.sub(" ", text)
    return LINK_TARGET.sub("]", text)


def count_words(source: str) -> int:
    """The words of one markdown text (the module's docstring says what counts as one)."""
    return sum(1 for piece in prose(source).split() if WORD.search(piece))


# Where a figure comes from, when no cell of the lesson measured it (a GPU figure on a page made
# without a GPU, a rule read in PyTorch's source): the sentence carries a small numbered mark,
# `<sup><a href="#sources">1</a></sup>`, and the lesson's last cell before the footer, with the id
# `sources`, lists the notes under a heading (SOURCES_HEADING), one numbered item each, naming what
# the figure is reasoned from (a PyTorch file, PyTorch's documentation, a data sheet). A learner
# reads the idea; a sceptic finds the source in one click (tools/quoted_figures.py reads the notes,
# tests/test_lesson_text.py checks the marks against them and keeps the old inline labels out).
SOURCES_ID = "sources"
SOURCE_MARK = re.compile(r'<sup><a href="#sources">(\d+)</a></sup>')
SOURCES_HEADING = re.compile(r"^## (?:Where these figures come from|这些数字从哪里来)$", re.MULTILINE)
SOURCE_NOTE = re.compile(r"^(\d+)\. (.+?)(?=^\d+\. |\Z)", re.MULTILINE | re.DOTALL)


def source_notes(nb: nbformat.NotebookNode) -> dict[int, str]:
    """The numbered notes of a lesson's sources cell ({} where it has none)."""
    cell = next((c for c in nb.cells if c.get("id") == SOURCES_ID), None)
    if cell is None:
        return {}
    return {int(m.group(1)): m.group(2).strip() for m in SOURCE_NOTE.finditer(cell.source)}


def source_marks(text: str) -> list[int]:
    """The note numbers a markdown text marks, in order."""
    return [int(m.group(1)) for m in SOURCE_MARK.finditer(text)]


# How the test machinery gets named, as regular expressions: lesson text (markdown cells and code
# comments, both editions) never mentions it, it tells the reader what differs on their machine
# instead (tests/test_lesson_text.py, run by `make lint`). Phrases, not bare words: "slow
# compared with computing" and 比较 are prose.
HARNESS_WORDS = (
    r"(?i)\bnot\s+compared\b(?!\s+(?:with|to|against|across)\b)",
    r"(?i)\bcompared\s+(?:word\s+for\s+word|everywhere|exactly)",
    r"(?i)\bnbval",
    r"(?i)\bsanitiz|\bsanitis",
    r"(?i)\bpytest\b",
    r"(?i)\bunit\s+tests?\b|\btest\s+(?:suite|harness|machinery)\b",
    r"(?<![A-Za-z])CI(?![A-Za-z])",
    r"(?i)\bcontinuous\s+integration\b",
    r"比对|逐字比较",
    r"单元测试|测试(?:套件|框架)",
    r"持续集成",
    # the series' own checks and the machine that made the stored outputs are no lesson topic
    r"(?i)\bcollapsed\s+checks?\b|\bcheck\s+cells?\b|\bverif(?:y|ies)\s+itself\b",
    r"(?i)\bmachine\s+that\s+made\s+this\s+page\b|\bseries'\s+own\s+use\b",
    r"折叠的检查|自我验证|生成本页的机器|本系列内部使用",
)


# The three markers that collapse a code cell wherever a notebook is opened: JupyterLab's
# metadata.jupyter.source_hidden, Colab's cellView "form", the site's (myst-nb's) hide-input tag
# (tools/sync_notebooks.py sets them; tools/lesson_figures.py counts a cell with all three out of view).
COLLAPSE_TAG = "hide-input"
COLLAPSE_MARKS = ("jupyter.source_hidden", "cellView: form", "hide-input tag")


def collapse_marks(cell: nbformat.NotebookNode) -> list[str]:
    """Which of the three collapse markers (JupyterLab, Colab, myst-nb) a code cell carries."""
    meta = cell.get("metadata", {})
    have = [meta.get("jupyter", {}).get("source_hidden") is True, meta.get("cellView") == "form",
            COLLAPSE_TAG in meta.get("tags", [])]
    return [mark for mark, yes in zip(COLLAPSE_MARKS, have, strict=True) if yes]


# What Jupyter itself fills in for a Python 3 kernel: stored in full, so that opening a notebook
# does not mark it modified (only the Python version can differ from the reader's).
LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
}


def set_metadata(nb: nbformat.NotebookNode) -> None:
    """The notebook-level metadata every notebook of the series carries, and nothing else."""
    version = nb.metadata.get("language_info", {}).get("version")
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": LANGUAGE_INFO | ({"version": version} if version else {}),
        "accelerator": "GPU",  # Colab: open on a GPU runtime
        "colab": {"provenance": [], "gpuType": "T4"},
    }


def table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """Rows as aligned plain-text columns, the way the tools print their reports."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
                     for row in [header, *rows])


# A lesson's exercises (CONTRIBUTING.md, "Exercises"): after the cell with
# `## Exercises`, each exercise is a markdown cell `### Exercise N · Title` with the line
# `*Needs: <hardware> · about <N> minutes.*`, then the learner's answer cell, then one code line
# `check("<id>", ...)` (or `hint("<id>")` for an exercise answered in words).
EXERCISE_HEADING = re.compile(r"^### Exercise (\d+) · (.+)$", re.MULTILINE)
EXERCISE_NEEDS = re.compile(r"^\*Needs: (.+?) · about (\d+) minutes\.\*$", re.MULTILINE)
EXERCISE_CALL = re.compile(r"""^(check|hint)\(\s*["']([a-z0-9-]+\.[a-z0-9-]+)["']""")
# After a lesson's (at most three) exercises, a cell `## More practice (optional)` may open more of
# them, checked as the others: a lab plans with the first ones, the rest are for who wants more.
# A markdown cell that opens with `<details><summary>More detail (optional)` (更多细节（选读）) holds
# reference material a learner may skip: it is folded where the notebook is opened, and neither the
# lesson's words nor its minutes count it. Nothing an exercise needs may sit in one.
OPTIONAL_DETAIL = re.compile(r"^\s*<details>\s*<summary>\s*(?:More detail \(optional\)|更多细节（选读）)")
MORE_PRACTICE = re.compile(r"^##\s+(?:More practice\b|更多练习)", re.MULTILINE)


@dataclass(frozen=True)
class Exercise:
    number: int
    title: str
    needs: str | None  # the hardware, as the needs line says it; None where the line is missing
    minutes: int | None
    exercise_id: str | None  # the id its check (or hint) names; None where there is no such cell
    kind: str | None  # "check", or "hint" for an exercise answered in words
    cells: tuple[str, ...]  # the ids of its cells, heading first
    optional: bool = False  # under "More practice (optional)": not counted in the lesson's minutes


def exercises_of(nb: nbformat.NotebookNode) -> list[Exercise]:
    """The exercises of a lesson, in order (an empty list for a notebook without them)."""
    found: list[Exercise] = []
    current: list[nbformat.NotebookNode] = []
    optional = False

    def close() -> None:
        if not current:
            return
        head = current[0].source
        heading, needs = EXERCISE_HEADING.search(head), EXERCISE_NEEDS.search(head)
        calls = [EXERCISE_CALL.match(c.source.strip()) for c in current[1:] if c.cell_type == "code"]
        call = next((m for m in calls if m), None)
        found.append(Exercise(int(heading.group(1)), heading.group(2).strip(),
                              needs.group(1) if needs else None, int(needs.group(2)) if needs else None,
                              call.group(2) if call else None, call.group(1) if call else None,
                              tuple(c.get("id") for c in current), optional))
        current.clear()

    started = False
    for cell in nb.cells:
        if cell.get("id") in ("footer", SOURCES_ID):
            break
        if cell.cell_type == "markdown" and re.search(r"^##\s+Exercises\b", cell.source, re.MULTILINE):
            started = True
            continue
        if not started:
            continue
        if cell.cell_type == "markdown" and MORE_PRACTICE.search(cell.source):
            close()
            optional = True
            continue
        if cell.cell_type == "markdown" and EXERCISE_HEADING.search(cell.source):
            close()
        if current or (cell.cell_type == "markdown" and EXERCISE_HEADING.search(cell.source)):
            current.append(cell)
    close()
    return found
