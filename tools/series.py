"""Facts about the series that generated cells, pages and tools share: set each one here, once."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SOLUTIONS = NOTEBOOKS / "solutions"

# The public repository the badges and the Colab/Kaggle bootstrap point at.
# A fork changes these two lines and runs `make sync`.
REPO = "gpu-lessons/pytorch-gpu-series"
BRANCH = "main"

GITHUB_URL = f"https://github.com/{REPO}"
RAW_URL = f"https://raw.githubusercontent.com/{REPO}/{BRANCH}"

LESSON_NAME = re.compile(r"^(\d\d)_[a-z0-9_]+\.ipynb$")


@dataclass(frozen=True)
class Lesson:
    path: Path
    number: str
    title: str
    purpose: str
    minutes: int
    runs_on: str

    @property
    def solutions(self) -> Path:
        return SOLUTIONS / f"{self.path.stem}_solutions.ipynb"


def lessons() -> list[Lesson]:
    """The lessons in reading order, with the facts kept in each notebook's metadata."""
    found = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        m = LESSON_NAME.match(path.name)
        if not m:
            raise ValueError(f"{path.name}: lesson names look like 01_topic.ipynb")
        meta = json.loads(path.read_text(encoding="utf-8"))["metadata"].get("lesson")
        if not meta:
            raise ValueError(f"{path.name}: metadata.lesson (title, purpose, minutes, runs_on) is missing")
        found.append(Lesson(path, m.group(1), meta["title"], meta["purpose"], int(meta["minutes"]), meta["runs_on"]))
    return found


def all_notebooks() -> list[Path]:
    """Every notebook of the series: lessons, then their solutions."""
    return sorted(NOTEBOOKS.glob("*.ipynb")) + sorted(SOLUTIONS.glob("*.ipynb"))


def table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """Rows as aligned plain-text columns, the way the tools print their reports."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
                     for row in [header, *rows])
