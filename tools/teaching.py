"""The teacher's page, TEACHING.md (and its Chinese twin): the parts `make sync` writes from the lessons.

Two blocks between markers, in each language (tools/sync_notebooks.py puts them in place):
- `teaching-lessons`: one row per lesson: its minutes (reading the prose and running the cells), its
  minutes with its exercises (those plus the sum of its exercises' minutes), what it runs on, its
  prerequisites and how many exercises it has, with their minutes and how many show their result
  only on a GPU (each of those has a variant for a machine without one);
- `teaching-exercises`: one row per exercise: its title, what it needs and its minutes, read from the
  lesson's exercise cells (`### Exercise N · Title`, then `*Needs: <hardware> · about <N> minutes.*`);
  a lesson whose exercises are not in that form yet is named under the table, not guessed at.

A lesson's prerequisites are the earlier lessons whose helpers it uses: the names a lesson's code
imports from utils.py (`from utils import try_gpu`, or `utils.NAME`, in any code cell, `#@save` cells
and the scripts it writes included), each traced to the lesson whose `#@save` cell defines it. They
are what a lesson cannot be taught without; the lessons are written to be read in order all the
same. The page says so, in both languages.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import nbformat

from tools import diagrams
from tools import series as _series
from tools.series import Lesson

BLOCKS = ("teaching-lessons", "teaching-exercises")
GPU_NEEDS = ("a CUDA GPU", "a GPU")  # where <hardware> starts so, the exercise shows its result only on a GPU
MAGIC_LINE = re.compile(r"^(\s*)[%!].*$", re.MULTILINE)  # IPython's %magic and !shell lines: not Python


class Facts(Protocol):  # tools/sync_notebooks.py's Facts: a lesson's words in one language
    lesson: Lesson
    title: str
    runs_on: str


@dataclass(frozen=True)
class Exercise:
    cell_id: str
    number: int
    title: str
    hardware: str | None  # None: the cell has no needs line
    minutes: int | None
    optional: bool = False  # under "More practice (optional)"

    @property
    def needs_gpu(self) -> bool:
        return self.hardware is not None and self.hardware.startswith(GPU_NEEDS)


def exercises(nb: nbformat.NotebookNode) -> list[Exercise]:
    """A lesson's exercises in order ([] for a lesson whose exercises are not in the exercise form yet),
    as tools.series.exercises_of reads them."""
    return [Exercise(e.cells[0], e.number, e.title, e.needs, e.minutes, e.optional)
            for e in _series.exercises_of(nb)]


# --- prerequisites ----------------------------------------------------------------------------

def python_of(source: str) -> ast.Module | None:
    """A code cell as Python (IPython lines blanked; the body of %%writefile is the file's Python)."""
    try:
        return ast.parse(MAGIC_LINE.sub(r"\1pass", source))
    except SyntaxError:
        return None


def defined_names(nb: nbformat.NotebookNode) -> set[str]:
    """The top-level names the lesson's `#@save` cells define (utils.py's, once collected)."""
    names = set()
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.lstrip().startswith("#@save"):
            for node in (tree.body if (tree := python_of(cell.source)) else []):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(node.name)
                elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def used_names(nb: nbformat.NotebookNode) -> set[str]:
    """The names the lesson's code takes from utils.py: `from utils import a, b` and `utils.a`."""
    used = set()
    for cell in nb.cells:
        if cell.cell_type != "code" or cell.get("id") == "setup":
            continue
        for node in ast.walk(python_of(cell.source) or ast.Module(body=[], type_ignores=[])):
            if isinstance(node, ast.ImportFrom) and node.module == "utils":
                used |= {a.name for a in node.names}
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "utils":
                used.add(node.attr)
    return used


def prerequisites(series: list[Lesson], books: dict[Path, nbformat.NotebookNode]) -> dict[str, list[str]]:
    """{lesson number: the numbers of its prerequisites, in reading order} (the module's docstring says how)."""
    owner: dict[str, str] = {}
    for lesson in series:
        for name in defined_names(books[lesson.path]):
            owner.setdefault(name, lesson.number)
    found = {}
    for lesson in series:
        helpers = {owner[n] for n in used_names(books[lesson.path]) if n in owner}
        found[lesson.number] = sorted(n for n in helpers if n < lesson.number)
    return found


# --- the two blocks, in each language ---------------------------------------------------------

@dataclass(frozen=True)
class Words:
    lessons_head: str
    exercises_head: str
    none: str  # no prerequisites
    count: Callable[[int, int, int], str]  # exercises, their minutes, how many show their result only on a GPU
    more: str  # after the count: {n} more exercises under "More practice (optional)"
    optional: str  # after an optional exercise's title
    not_stated: str
    not_yet: str  # the lessons whose exercises are not in the exercise form yet: {lessons}
    separator: str


ENGLISH = Words(
    lessons_head="| # | Lesson | Minutes | With its exercises | Runs on | Prerequisites | Exercises |\n"
                 "|---|---|---|---|---|---|---|",
    exercises_head="| Lesson | Exercise | Needs | Minutes |\n|---|---|---|---|",
    none="none",
    count=lambda n, minutes, gpu: f"{n}, about {minutes} minutes" + (
        (" (one of them shows its result only on a GPU)" if gpu == 1
         else f" ({gpu} of them show their result only on a GPU)")
        if gpu else ""),
    more="; {n} more for practice",
    optional=" *(more practice)*",
    not_stated="*not stated*",
    not_yet="Lessons whose exercises have no answer cells and checks yet (their exercises are listed in the"
            " lesson): {lessons}.",
    separator=", ",
)
CHINESE = Words(
    lessons_head="| # | 课程 | 分钟 | 连同练习 | 运行环境 | 先修课程 | 练习 |\n|---|---|---|---|---|---|---|",
    exercises_head="| 课程 | 练习 | 需要 | 分钟 |\n|---|---|---|---|",
    none="无",
    count=lambda n, minutes, gpu: f"{n} 道，约 {minutes} 分钟" + (f"（其中 {gpu} 道只在 GPU 上显示结果）"
                                                                 if gpu else ""),
    more="；另有 {n} 道选做",
    optional=" *（选做）*",
    not_stated="*未注明*",
    not_yet="下面这些课的练习还没有答题单元格和自检（练习列在课程里）：{lessons}。",
    separator="、",
)
ZH_NEEDS_LABEL = re.compile(r"^[^：:·]{1,8}[：:]\s*")  # 需要：...
ZH_NEEDS_MINUTES = re.compile(r"\s*·[^·]*\d+\s*分钟[。.]?\s*$")  # · 约 10 分钟。


def translated(exercise: Exercise, source: str) -> tuple[str, str | None]:
    """The exercise's title and hardware as ``source``, its cell's translation, words them: the heading
    after its number, and the needs line without its label and minutes; the English where there is no
    translation, or where it reads otherwise."""
    if not source.strip():
        return exercise.title, exercise.hardware
    lines = [line.strip() for line in source.strip().splitlines() if line.strip()]
    title = lines[0].lstrip("#").strip().partition(" · ")[2] if lines else ""
    needs = lines[1] if len(lines) > 1 and lines[1].startswith("*") and lines[1].endswith("*") else ""
    hardware = ZH_NEEDS_MINUTES.sub("", ZH_NEEDS_LABEL.sub("", needs.strip("*").strip())) if needs else ""
    return title or exercise.title, (hardware or exercise.hardware) if exercise.hardware else None


def cell_text(text: str) -> str:
    """Text for a cell of a markdown table: one line, its pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def link(f: Facts, place: Callable[[Path], Path], text: str | None = None) -> str:
    root = _series.ROOT  # read when called: a test may point the tools at a scratch repository
    return f"[{text or f.title}]({place(f.lesson.path).relative_to(root).as_posix()})"


def blocks(facts: list[Facts], books: dict[Path, nbformat.NotebookNode], place: Callable[[Path], Path],
           words: Words = ENGLISH, translate: Callable[[Path, str, str], str] | None = None) -> dict[str, str]:
    """{block name: its text} for the page in one language. ``facts`` hold the lessons' words in it,
    ``place`` says where its notebooks live, ``translate(lesson's path, cell id, English markdown)`` gives a
    cell's translation ("" where there is none)."""
    series = [f.lesson for f in facts]
    by_number = {f.lesson.number: f for f in facts}
    needs = prerequisites(series, books)
    lesson_rows, exercise_rows, not_yet = [words.lessons_head], [words.exercises_head], []
    for f in facts:
        nb = books[f.lesson.path]
        found = exercises(nb)
        cells = {c.get("id"): c for c in nb.cells}
        before = words.separator.join(link(by_number[n], place, n) for n in needs[f.lesson.number]) or words.none
        required = [e for e in found if not e.optional]
        minutes = sum(e.minutes or 0 for e in required)
        count = words.count(len(required), minutes, sum(e.needs_gpu for e in required)) if found else "—"
        if len(required) < len(found):
            count += words.more.format(n=len(found) - len(required))
        lesson_rows.append(f"| {f.lesson.number} | {link(f, place)} | {f.lesson.minutes} | {f.lesson.minutes + minutes}"
                           f" | {f.runs_on} | {before} | {count} |")
        if not found:
            not_yet.append(f.lesson.number)
        for e in found:
            source = cells[e.cell_id].source
            named = diagrams.by_name(source, cells[e.cell_id].metadata.get("diagrams", []))[0]
            title, hardware = translated(e, translate(f.lesson.path, e.cell_id, named) if translate else "")
            title += words.optional if e.optional else ""
            exercise_rows.append(f"| {link(f, place, f.lesson.number)} | {e.number} · {cell_text(title)}"
                                 f" | {cell_text(hardware or words.not_stated)} | {e.minutes or '?'} |")
    exercise_text = "\n".join(exercise_rows) if len(exercise_rows) > 1 else ""
    if not_yet:
        lessons = words.separator.join(link(by_number[n], place, n) for n in not_yet)
        exercise_text = (exercise_text + "\n\n" if exercise_text else "") + words.not_yet.format(lessons=lessons)
    return {"teaching-lessons": "\n".join(lesson_rows), "teaching-exercises": exercise_text}
