"""Figures in stored outputs and in the prose beside them (issue 16, item 6; tests/test_stored_timings.py).

Every timing a lesson prints has one form, `utils.Timing`'s: ``2.82 ms (IQR 0.0423 ms)``. A
timing whose IQR is more than a third of its median is noise: it prints marked as such
(``(IQR 3.90 ms, noisy)``), a stored output holds no unmarked one, and no sentence quotes one
(a comparison the cell prints goes through `Timing.against`, which says when a difference is
inside the noise). And a measured figure that the prose quotes (a time, a speed-up,
a rate: ``10.3 ms``, ``1.91×``, ``12.5 GB/s``) must be printed, as quoted, by a code cell of the
same section before that sentence: else the prose was written around another run. Approximate
wording ("about four times faster", "roughly 10 ms") and figures labelled as reasoning or as a
data sheet's are not checked. The parsing is here, apart from the test, so that GPU records
(issue 18) can be checked the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import nbformat

from tools import gpu_report

NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"  # 3,350 is one number
TIME_UNITS = ("s", "ms", "µs", "ns")
TIMING = re.compile(rf"({NUMBER}) (s|ms|µs|ns) \(IQR ({NUMBER}) \2(, noisy)?\)")
# A measured figure: a time, a rate, or a ratio written onto its number (1.91×; but 64 × 64 is a
# shape and 1000 × major a formula).
FIGURE = re.compile(rf"(?<![\w.])({NUMBER})(?:\s?(ms|µs|ns|s|GB/s|GiB/s|MB/s|MiB/s|GFLOP/s|TFLOP/s)|([×x]))"
                    r"(?![\w/])(?!\s*\d)")
CODE_OR_LINK = re.compile(r"```.*?```|`[^`\n]*`|\]\([^)]*\)|<[^>]+>", re.DOTALL)
SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])|\n+")
# Sentences that state no measurement of this page: approximate, reasoned, or from a data sheet.
NOT_MEASURED = re.compile(r"(?i)\b(about|around|roughly|approximately|nearly|almost|over|under|up to|at least|"
                          r"at most|more than|less than|reason\w*|data ?sheets?|spec\w*|peaks?|e\.g\.|"
                          r"for example|such as|say)\b"
                          r"|约|大约|左右|上下|推算|推理")
HEADING = re.compile(r"^#{2,3} ", re.MULTILINE)


@dataclass(frozen=True)
class Timing:
    median: float
    iqr: float
    unit: str
    text: str
    marked: bool = False  # printed as noisy, as utils.Timing marks it
    median_text: str = ""  # the median as printed (3,350 or 2.82)

    @property
    def noisy(self) -> bool:
        return self.iqr > self.median / 3


def timings(text: str) -> list[Timing]:
    return [Timing(float(m.group(1).replace(",", "")), float(m.group(3).replace(",", "")), m.group(2), m.group(0),
                   bool(m.group(4)), m.group(1)) for m in TIMING.finditer(text)]


def unit(u: str) -> str:
    return "×" if u in ("x", "×") else u


def figures(text: str) -> set[tuple[str, str]]:
    """(number, unit) of every figure in printed text, the unit normalised (x and × alike)."""
    return {(m.group(1), unit(m.group(2) or m.group(3))) for m in FIGURE.finditer(text)}


def quoted(markdown: str) -> list[tuple[str, str, str]]:
    """(number, unit, sentence) of every measured figure the prose states exactly."""
    out = []
    for sentence in SENTENCE_END.split(CODE_OR_LINK.sub(" ", markdown)):
        if NOT_MEASURED.search(sentence):
            continue
        out += [(m.group(1), unit(m.group(2) or m.group(3)), sentence.strip()) for m in FIGURE.finditer(sentence)]
    return out


def output_text(cell: nbformat.NotebookNode) -> str:
    """A cell's outputs as a reader sees them, as text (the GPU report renders its records the same way)."""
    return gpu_report.render(cell.get("outputs", []))


def noisy_timings(nb: nbformat.NotebookNode) -> list[tuple[str, Timing]]:
    """Timings too noisy to compare that do not say so (utils.Timing marks them `noisy`)."""
    return [(cell.get("id"), t) for cell in nb.cells if cell.cell_type == "code"
            for t in timings(output_text(cell)) if t.noisy and not t.marked]


def noisy_medians(nb: nbformat.NotebookNode) -> set[tuple[str, str]]:
    """(number, unit) of every noisy timing's median, as printed: no sentence may quote one."""
    return {(t.median_text, t.unit) for cell in nb.cells if cell.cell_type == "code"
            for t in timings(output_text(cell)) if t.noisy}


def unbacked_figures(nb: nbformat.NotebookNode) -> list[tuple[str, str, str]]:
    """(cell id, figure, sentence) for each figure the prose quotes that no code cell of its section
    printed before it."""
    out, printed, noise = [], set(), noisy_medians(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            printed |= figures(output_text(cell))
        elif cell.cell_type == "markdown" and cell.get("id") not in ("header", "footer"):
            if HEADING.search(cell.source):
                printed = set()  # a new section: its figures come from its own cells
            out += [(cell.get("id"), f"{n} {u}", s) for n, u, s in quoted(cell.source)
                    if (n, u) not in printed or (n, u) in noise]
    return out
