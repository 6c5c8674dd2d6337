"""Stored outputs agree with the text beside them (tools/quoted_figures.py): no timing on record is
noise (IQR over a third of the median), every measured figure the prose quotes was printed by
a cell of its section before it, and no sentence beside a cell that prints timings compares them
otherwise than their medians and IQRs do by the lesson's own rule, in either
edition."""

from __future__ import annotations

import nbformat
import pytest

import utils
from tools import quoted_figures as q
from tools.series import NOTEBOOKS as FOLDER
from tools.series import all_notebooks, read

NOTEBOOKS = all_notebooks()
BOTH_EDITIONS = NOTEBOOKS + sorted((FOLDER / "zh").rglob("*.ipynb"))


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


# --- Comparative claims ------------------------------------------------------------------------------

APART = "waited for: 17.1 µs (IQR 2.11 µs)\nqueued: 12.5 µs (IQR 0.370 µs)\n"  # 4.6 µs apart, beyond 2.48 µs
ALIKE = "waited for: 13.1 µs (IQR 2.11 µs)\nqueued: 12.5 µs (IQR 0.370 µs)\n"  # 0.6 µs apart: noise


def beside(printed: str, after: str, before: str = "**Predict:** will the two differ?") -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(cells=[cell("md", "## 3. Latency"), cell("md", before), cell("code", "t()", printed),
                                         nbformat.v4.new_code_cell("assert True"),  # a check: prints nothing
                                         cell("md", after), cell("md", "## 4. Later\n\nThe two come out close.")])
    for i, c in enumerate(nb.cells):
        c.id = f"c{i}"
    return nb


def flagged(nb: nbformat.NotebookNode) -> list[tuple[str, str, str]]:
    return [(c.cell, c.kind, c.words) for c, _ in q.contradicted_claims(nb)]


def test_the_rule_is_the_lessons_own_as_utils_timing_applies_it():
    pairs = [("10.0 ms (IQR 1.00 ms)", "12.5 ms (IQR 1.00 ms)"), ("10.0 ms (IQR 1.00 ms)", "11.5 ms (IQR 1.00 ms)"),
             ("900 µs (IQR 50.0 µs)", "1.20 ms (IQR 0.100 ms)"), ("900 µs (IQR 50.0 µs)", "1.00 ms (IQR 0.100 ms)")]
    for a, b in pairs:
        (ta,), (tb,) = q.timings(a), q.timings(b)
        noise = utils.Timing(ta.seconds, ta.iqr_seconds).against(utils.Timing(tb.seconds, tb.iqr_seconds))
        assert q.differ(ta, tb) == (noise != "no difference beyond the noise"), (a, b)


def test_a_claim_of_no_difference_fails_where_the_printed_timings_differ_and_passes_where_they_do_not():
    claim = "Without a GPU, no: the two come out close, and either may be the smaller."
    assert flagged(beside(APART, claim)) == [("c4", "same", "close")]
    assert flagged(beside(ALIKE, claim)) == []
    # the same claim made before the cell, in the part of its markdown cell after the last heading
    nb = beside(APART, "Fine.", before="## 3. Latency\n\nOn this machine the two come out about the same:")
    assert flagged(nb) == [("c1", "same", "about the same")]


def test_a_claim_of_a_difference_fails_where_the_printed_timings_are_within_the_noise():
    for claim, words in [("Yes: the queued calls are faster.", "faster"), ("Queued, a call takes 1.4× as long.",
                                                                          "1.4× as long")]:
        assert flagged(beside(ALIKE, claim)) == [("c4", "differ", words)]
        assert flagged(beside(APART, claim)) == []


def test_the_chinese_edition_is_read_with_its_own_wording():
    assert flagged(beside(APART, "没有 GPU 时，答案是不会。两者很接近。")) == [("c4", "same", "接近")]
    assert flagged(beside(APART, "在 CPU 上，两者差不多。")) == [("c4", "same", "差不多")]
    assert flagged(beside(ALIKE, "会，而且更快，最多快一倍。")) == [("c4", "differ", "更快"),
                                                                 ("c4", "differ", "快一倍")]
    assert flagged(beside(ALIKE, "排队时慢得多。")) == [("c4", "differ", "慢得多")]
    assert flagged(beside(ALIKE, "两者很接近。")) == flagged(beside(APART, "排队时更快。")) == []


def test_what_claims_nothing_about_the_run_on_record_is_not_read():
    for text in ["On a GPU the two agree, for a product this small.",  # another machine
                 "On a GPU, for a product this small, the queued time is the smaller; for large products the two "
                 "come out close (reasoned from the queue, not a recorded run).",
                 "在 GPU 上，对大的乘积，两者就很接近了。",
                 "Will the two come out close?",  # a question
                 "Either may come out faster.", "If the machine is busy, the two can come out close.",  # hedged
                 "两条损失应当一直很接近。", "两者应该接近。",  # hedged, in Chinese: should
                 "The queued calls are no faster.", "排队时并不更快。",  # negated
                 "At every step each waits for the slower one."]:  # names one of the two
        assert flagged(beside(APART, text)) == flagged(beside(ALIKE, text)) == [], text
    # A clause back on the run on record is read again, and an aside changes the context of nothing after it.
    assert flagged(beside(APART, "On a GPU the queued time is the smaller. Without a GPU, the two come out close.")) \
        == [("c4", "same", "close")]
    assert flagged(beside(APART, "On a GPU (not measured here) the two agree.")) == []


def test_a_sentence_between_two_timing_cells_fails_only_if_it_contradicts_both():
    nb = nbformat.v4.new_notebook(cells=[cell("code", "t()", APART), cell("md", "The two come out close."),
                                         cell("code", "t()", ALIKE)])
    for i, c in enumerate(nb.cells):
        c.id = f"c{i}"
    assert flagged(nb) == []
    nb.cells[2] = cell("code", "t()", APART)
    nb.cells[2].id = "c2"
    assert flagged(nb) == [("c1", "same", "close")]


def test_a_cell_with_more_timings_fails_a_claim_only_where_no_two_of_them_bear_it_out():
    three = APART + "third: 12.9 µs (IQR 0.300 µs)\n"  # queued and third agree
    assert flagged(beside(three, "Without a GPU, the two come out close.")) == []
    assert flagged(beside(APART + "third: 30.0 µs (IQR 0.300 µs)\n", "Here they come out close.")) == \
        [("c4", "same", "close")]


@pytest.mark.parametrize("path", BOTH_EDITIONS, ids=[p.relative_to(FOLDER).as_posix() for p in BOTH_EDITIONS])
def test_no_sentence_beside_stored_timings_compares_them_otherwise_than_they_do(path):
    found = q.contradicted_claims(read(path))
    assert not found, "comparisons the printed medians and IQRs contradict by the lesson's rule (lesson 05, " \
        "timing-43: medians further apart than their two IQRs differ; reword, or say what decides it): " + \
        "; ".join(f"{c.cell}: {c.words!r} in {c.sentence!r} beside " +
                  ", ".join(f"{cid} ({', '.join(t.text for t in ts)})" for cid, ts in cells) for c, cells in found)
