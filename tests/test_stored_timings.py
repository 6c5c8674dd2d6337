"""Stored outputs agree with the text beside them (tools/quoted_figures.py): no timing on record is
noise (IQR over a third of the median), and every measured figure the prose quotes was printed by
a cell of its section before it."""

from __future__ import annotations

import nbformat
import pytest

from tools import quoted_figures as q
from tools.series import all_notebooks, read

NOTEBOOKS = all_notebooks()


def test_a_timing_is_read_in_the_series_one_format_and_noise_is_named():
    found = q.timings("float32: 2.82 ms (IQR 0.0423 ms)\nmixed: 104 ms (IQR 80.5 ms)\nother: 3 ms (IQR 1 µs)\n"
                      "2 processes: 8.55 ms (IQR 3.90 ms, noisy)")
    assert [(t.median, t.iqr, t.unit, t.noisy, t.marked) for t in found] == [
        (2.82, 0.0423, "ms", False, False), (104, 80.5, "ms", True, False), (8.55, 3.9, "ms", True, True)]


def test_a_noisy_timing_must_say_so_and_no_sentence_may_quote_it():
    nb = nbformat.v4.new_notebook(cells=[
        cell("code", "t()", "a: 104 ms (IQR 80.5 ms)\nb: 8.55 ms (IQR 3.90 ms, noisy)\nc: 2.82 ms (IQR 0.0423 ms)\n"),
        cell("md", "It took 8.55 ms, against 2.82 ms."),
    ])
    for i, c in enumerate(nb.cells):
        c.id = f"c{i}"
    assert [(cid, t.text) for cid, t in q.noisy_timings(nb)] == [("c0", "104 ms (IQR 80.5 ms)")]
    assert [f for _, f, _ in q.unbacked_figures(nb)] == ["8.55 ms"]


def test_prose_figures_are_measured_ones_stated_exactly_not_shapes_approximations_or_reasoning():
    text = ("Two threads took 5.64 ms, 1.83× faster than one. A 64 × 64 product is small. "
            "It ran at 12.5 GB/s. That is about 4× less. The data sheet says 8.1 TFLOP/s.\n"
            "`t = 3 ms` in code is not prose, nor is a link target [here](https://x.org/3s).")
    assert [(n, u) for n, u, _ in q.quoted(text)] == [("5.64", "ms"), ("1.83", "×"), ("12.5", "GB/s")]
    assert q.figures("ratio 1.83x, 5.64 ms, 64 x 64, 1000 × major") == {("1.83", "×"), ("5.64", "ms")}


def cell(kind: str, source: str, printed: str = "") -> nbformat.NotebookNode:
    if kind == "md":
        return nbformat.v4.new_markdown_cell(source)
    return nbformat.v4.new_code_cell(source, outputs=[nbformat.v4.new_output("stream", name="stdout", text=printed)])


def test_a_quoted_figure_must_come_from_an_output_of_its_own_section_before_it():
    nb = nbformat.v4.new_notebook(cells=[
        cell("md", "## 1. Timing"), cell("code", "t()", "one: 10.3 ms (IQR 0.2 ms)\nspeed-up 1.91x\n"),
        cell("md", "One step took 10.3 ms, 1.91× faster. Then 9.9 ms."),  # 9.9 ms: printed by nothing
        cell("md", "## 2. Later"), cell("md", "Back in section 1 it was 10.3 ms."),  # another section
    ])
    for c, i in zip(nb.cells, range(9), strict=False):
        c.id = f"c{i}"
    assert [(cid, f) for cid, f, _ in q.unbacked_figures(nb)] == [("c2", "9.9 ms"), ("c4", "10.3 ms")]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_stored_timing_is_noise(path):
    noisy = q.noisy_timings(read(path))
    assert not noisy, "IQR over a third of the median (re-make the outputs on a quiet machine): " + \
        "; ".join(f"{cid}: {t.text}" for cid, t in noisy)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_figure_the_prose_quotes_is_printed_beside_it(path):
    unbacked = q.unbacked_figures(read(path))
    assert not unbacked, "figures no cell of the section printed (reword, or quote the output): " + \
        "; ".join(f"{cid}: {f} in {s!r}" for cid, f, s in unbacked)


def test_thousands_are_one_number_and_data_sheets_are_not_measurements():
    assert q.figures("it moved 3,350 GB/s") == {("3,350", "GB/s")}
    assert q.quoted("The data sheets give 3,350 GB/s. It took 1,204 ms.") == [("1,204", "ms", "It took 1,204 ms.")]
