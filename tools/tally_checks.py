"""Tabulate which exercise checks passed in a folder of returned student notebooks.

    python tally_checks.py FOLDER [--csv FILE]

Reads every ``*.ipynb`` under FOLDER (each one a student's returned lesson) and, for every check cell
(a code cell ``check("<exercise id>", ...)``), the output that cell stored when the student last ran
it: ``✓`` right, ``✗`` not yet, ``–`` not answered, ``·`` not run (no output stored). It prints one
table per lesson, a row per notebook, and with ``--csv`` writes the same as one CSV file.

It runs nothing of the students' code: it only reads the notebooks' JSON, with Python's standard
library. So it shows what each notebook says, no more: a student who edited an output by hand, or ran
the check before changing the answer, is not caught. Rerun a notebook (in a safe place) to verify it.
Both editions are read: the English checks' words and the Chinese ones.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

CHECK_CELL = re.compile(r'^\s*check\(\s*"([\w.-]+)"')
# The first words of what check() prints, in each edition (exercises/messages.py, i18n/zh/messages.po)
RIGHT = ("✓ Right", "✓ 答对了")
NOT_YET = ("✗ Not yet", "✗ 还不对")
NOT_ANSWERED = ("Not answered yet", "还没有作答")
MARKS = {"right": "✓", "not yet": "✗", "not answered": "–", "not run": "·", "other": "?"}


def verdict(cell: dict) -> str:
    """What a check cell's stored output says: "right", "not yet", "not answered", "not run" or "other"."""
    printed = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []) if o.get("output_type") == "stream")
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    if not printed and not errors:
        return "not run"
    printed = printed.lstrip()
    for words, name in ((RIGHT, "right"), (NOT_YET, "not yet"), (NOT_ANSWERED, "not answered")):
        if printed.startswith(words):
            return name
    return "other"  # an error in the cell, or a check called with the wrong number of answers


def checks_of(notebook: dict) -> dict[str, str]:
    """{exercise id: verdict} of a notebook's check cells, in their order."""
    found = {}
    for cell in notebook.get("cells", []):
        source = "".join(cell.get("source", ""))
        match = CHECK_CELL.match(source)
        if cell.get("cell_type") == "code" and match:
            found[match.group(1)] = verdict(cell)
    return found


def lesson_of(path: Path) -> str:
    """The lesson a returned notebook belongs to: its leading number ("03"), or its name without one."""
    match = re.match(r"(\d\d)", path.name)
    return match.group(1) if match else path.stem


def tally(folder: Path) -> dict[str, dict[str, dict[str, str]]]:
    """{lesson: {notebook path relative to folder: {exercise id: verdict}}}; a file that is no notebook
    is reported on stderr and left out."""
    lessons: dict[str, dict[str, dict[str, str]]] = {}
    for path in sorted(folder.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            print(f"skipped {path}: not a readable notebook ({err})", file=sys.stderr)
            continue
        checks = checks_of(notebook) if isinstance(notebook, dict) else {}
        if checks:
            lessons.setdefault(lesson_of(path), {})[path.relative_to(folder).as_posix()] = checks
    return lessons


def table(rows: dict[str, dict[str, str]]) -> str:
    """One lesson's notebooks as a text table: a column per exercise, a mark per check, a count of right."""
    ids = list(dict.fromkeys(i for checks in rows.values() for i in checks))
    width = max(len(name) for name in rows)
    lines = ["  ".join(["notebook".ljust(width), *ids, "right"])]
    for name, checks in rows.items():
        marks = [MARKS[checks.get(i, "not run")].center(len(i)) for i in ids]
        right = sum(v == "right" for v in checks.values())
        lines.append("  ".join([name.ljust(width), *marks, f"{right}/{len(ids)}"]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the folder of returned notebooks (searched with its subfolders)")
    parser.add_argument("--csv", type=Path, help="also write lesson, notebook, exercise, verdict rows to this file")
    args = parser.parse_args(argv)
    if not args.folder.is_dir():
        parser.error(f"{args.folder} is not a folder")
    lessons = tally(args.folder)
    if not lessons:
        print(f"no notebook with check cells under {args.folder}")
        return 1
    for lesson, rows in sorted(lessons.items()):
        print(f"\nLesson {lesson}\n{table(rows)}")
    print("\n" + "   ".join(f"{mark} {name}" for name, mark in MARKS.items()))
    if args.csv:
        with args.csv.open("w", newline="", encoding="utf-8") as file:
            out = csv.writer(file)
            out.writerow(["lesson", "notebook", "exercise", "verdict"])
            for lesson, rows in sorted(lessons.items()):
                for name, checks in rows.items():
                    out.writerows([lesson, name, i, v] for i, v in checks.items())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
