"""Every GPU figure in the text carries its source (tools/quoted_figures.py says how).

A sentence with a GPU figure (a number with a unit, beside a GPU's name or a unit only GPUs have)
in a markdown cell of either edition cites either a record of gpu-runs/ and the cell whose
recorded GPU output prints the number, or the source of the reasoning it says it is (a PyTorch
file, PyTorch's documentation, a data sheet). Records here are built with tools.gpu_runs in a
test's own folder: a made-up record is never committed to gpu-runs/.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from tools import gpu_runs, i18n
from tools import quoted_figures as q
from tools.series import ROOT, all_notebooks, read

ENGLISH = all_notebooks()
NOTEBOOKS = ENGLISH + [i18n.zh_path(p) for p in ENGLISH]
LESSON = "notebooks/07_gpu_memory.ipynb"
GPU_LINES = "before                       allocated      0.0 MiB, reserved      0.0 MiB\n" \
            "with a 256 MiB tensor        allocated    256.0 MiB, reserved    256.0 MiB\n"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.relative_to(p.parents[1]).as_posix() for p in NOTEBOOKS])
def test_every_gpu_figure_of_both_editions_cites_a_record_or_its_reasoning_source(path):
    found = q.uncited_gpu_figures(read(path), path.name)
    assert not found, "GPU figures without a source that resolves (tools/quoted_figures.py says how to cite):\n" + \
        "\n".join(f"{s.cell}: {s.text!r}: {'; '.join(why)}" for s, why in found)


def record(folder: Path, *, gpu: bool = True, gpu_output: str = GPU_LINES, cpu_output: str = "",
           ran: str | None = None) -> str:
    """A record of one notebook in ``folder`` (tools.gpu_runs.build), as `make gpu-report` writes one; its name.
    Its cell memory-10 ran the lesson's code of today, or ``ran`` (other code: the record is stale there)."""
    code = gpu_runs.fingerprint(ran if ran is not None else q.cell_source(ROOT / LESSON, "memory-10"))
    machine = {"gpus": ["NVIDIA H200"] if gpu else [], "gpu_count": int(gpu), "driver": "570.00" if gpu else None,
               "torch": "2.13.0", "cuda": "12.8" if gpu else None, "python": "3.12.3", "cpus": 16}
    settings = {"no GPU": {"CUDA_VISIBLE_DEVICES": "", "gpus_seen": 0}}
    runs = {"no GPU": {"status": "ok", "seconds": 1.0,
                       "cells": [{"id": "memory-10", "output": cpu_output or "cpu: no counters\n", "code": code}]}}
    if gpu:
        settings = {"one GPU": {"CUDA_VISIBLE_DEVICES": "0", "gpus_seen": 1}, **settings}
        runs["one GPU"] = {"status": "ok", "seconds": 1.0,
                           "cells": [{"id": "memory-10", "output": gpu_output, "code": code}]}
    data = gpu_runs.build("2026-12-01", "0" * 40, machine, settings, {LESSON: runs})
    return gpu_runs.write(data, folder).stem


def problems(markdown: str, folder: Path, code: str = "") -> list[str]:
    """What the test finds wrong in one markdown cell of a made-up lesson 07 (a code cell before it)."""
    cells = ([nbformat.v4.new_code_cell(code, id="code")] if code else []) + \
        [nbformat.v4.new_markdown_cell(markdown, id="planted")]
    found = q.uncited_gpu_figures(nbformat.v4.new_notebook(cells=cells), Path(LESSON).name, folder)
    return [why for _, reasons in found for why in reasons]


def cite(name: str, cell: str = "memory-10") -> str:
    return f"([H200 run, cell {cell}]({q.RECORD_URL}{name}.json))"


def test_a_gpu_figure_with_no_citation_fails(tmp_path):
    assert problems("From the H200, the message ends with 118.00 MiB allowed.", tmp_path) == [
        "cites no record of gpu-runs/, and does not say it is reasoning or name its source (a PyTorch file, "
        "PyTorch's documentation or a data sheet)"]
    assert problems("On a CUDA GPU the cell prints these lines:\n\n```\n" + GPU_LINES + "```", tmp_path)


def test_a_recorded_figure_is_found_in_the_cited_cells_gpu_output(tmp_path):
    name = record(tmp_path)
    assert problems(f"On the H200 the second line shows 256.0 MiB reserved {cite(name)}.", tmp_path) == []
    assert problems(f"On the H200 the cap allowed 118.00 MiB {cite(name)}.", tmp_path) == [
        "118.00 MiB: not in the recorded GPU output of cell memory-10"]
    assert problems(f"On the H200 it reserved 256.0 MiB {cite(name, 'memory-99')}.", tmp_path) == [
        f"record {name} holds no output of cell memory-99 with a GPU visible"]


def test_a_record_of_other_code_in_the_cited_cell_is_stale(tmp_path):
    """The record ran memory-10 as it was; the lesson's cell has changed since: its output backs nothing."""
    name = record(tmp_path, ran="big = torch.empty(128 * MiB, dtype=torch.uint8)\n")
    assert problems(f"On the H200 the second line shows 256.0 MiB reserved {cite(name)}.", tmp_path) == [
        f"cell memory-10 is not the code record {name} ran (changed or gone): its output there is stale "
        "(make gpu-report again, or cite reasoning)"]


def test_only_a_gpu_settings_output_backs_a_gpu_figure(tmp_path):
    name = record(tmp_path, cpu_output="the cap allowed 118.00 MiB\n")
    assert problems(f"On the H200 the cap allowed 118.00 MiB {cite(name)}.", tmp_path) == [
        "118.00 MiB: not in the recorded GPU output of cell memory-10"]


def test_a_record_that_does_not_exist_fails(tmp_path):
    record(tmp_path)
    found = problems(f"On the H200 it reserved 256.0 MiB {cite('2026-12-01-1x-nvidia-h900')}.", tmp_path)
    assert len(found) == 1 and found[0].startswith("no record '2026-12-01-1x-nvidia-h900'")


def test_a_record_made_without_a_gpu_backs_no_gpu_sentence(tmp_path):
    name = record(tmp_path, gpu=False, cpu_output=GPU_LINES)
    assert name == "2026-12-01-no-gpu"
    assert problems(f"On the H200 it reserved 256.0 MiB {cite(name)}.", tmp_path) == [
        f"record {name} was made on a machine without a GPU: it backs no sentence about one"]


def test_a_citation_names_its_cell_and_this_repositorys_record(tmp_path):
    name = record(tmp_path)
    assert problems(f"On the H200 it reserved 256.0 MiB ([H200 run]({q.RECORD_URL}{name}.json)).", tmp_path) == [
        f'the link to {name} names no cell: write its text as "<GPU> run, cell <cell id>"']
    elsewhere = f"https://github.com/someone/fork/blob/main/gpu-runs/{name}.json"
    assert problems(f"On the H200 it reserved 256.0 MiB ([H200 run, cell memory-10]({elsewhere})).", tmp_path) == [
        f"cites {elsewhere}: a record is cited as {q.RECORD_URL}<record>.json"]


def test_reasoning_says_so_and_names_its_source_in_both_editions(tmp_path):
    source = "`c10/cuda/CUDACachingAllocator.cpp`"
    assert problems(f"A 4 MB tensor, the first on a GPU, reserves a 20 MiB segment (reasoned from {source}).",
                    tmp_path) == []
    assert problems("On a T4 it takes at least 0.27 ms (reasoned from its data sheet, not a recorded run).",
                    tmp_path) == []
    assert problems("A 4 MB tensor, the first on a GPU, reserves a 20 MiB segment (reasoned from the allocator's "
                    "rules, not a recorded run).", tmp_path) == [
        "cites no record of gpu-runs/, and does not name its source (a PyTorch file, PyTorch's documentation or a "
        "data sheet)"]
    assert problems(f"A 4 MB tensor, the first on a GPU, reserves a 20 MiB segment ({source}).", tmp_path) == [
        "cites no record of gpu-runs/, and does not say it is reasoning"]
    assert problems(f"在 GPU 上，它预留一个 20 MiB 的段（根据 {source} 推算）。", tmp_path) == []
    assert problems("在 GPU 上，它预留一个 20 MiB 的段（根据分配器的规则推算）。", tmp_path)
    assert problems("在 T4 上至少需要 52 µs（见其数据手册）。", tmp_path)



def test_a_sentence_that_only_labels_the_one_before_it_covers_it(tmp_path):
    """Chinese puts the source in a sentence of its own: "这是根据……推算的" covers the sentence before
    it, and only that one; a label further on, or a next sentence that is no label, covers nothing."""
    source = "`c10/cuda/CUDACachingAllocator.cpp`"
    assert problems(f"在 GPU 上，它预留一个 20 MiB 的段。这是根据 {source} 推算的，并非实测。", tmp_path) == []
    assert problems(f"On a GPU it reserves a 20 MiB segment. This is reasoned from {source}.", tmp_path) == []
    assert problems(f"在 GPU 上，它预留一个 20 MiB 的段。接着看下一步。这是根据 {source} 推算的。", tmp_path)
    assert problems(f"在 GPU 上，它预留一个 20 MiB 的段。根据 {source}，段按 2 MiB 取整。", tmp_path)
    assert problems("在 GPU 上，它预留一个 20 MiB 的段。这是推算的。", tmp_path)  # a label names its source
MARK = '<sup><a href="#sources">{}</a></sup>'


def sourced(markdown: str, notes: str, tmp_path: Path) -> list[str]:
    """What the test finds wrong in one markdown cell of a made-up lesson whose sources cell holds ``notes``."""
    cells = [nbformat.v4.new_markdown_cell(markdown, id="planted"),
             nbformat.v4.new_markdown_cell('<a id="sources"></a>\n\n## Where these figures come from\n\n' + notes,
                                           id="sources")]
    found = q.uncited_gpu_figures(nbformat.v4.new_notebook(cells=cells), Path(LESSON).name, tmp_path)
    return [why for _, reasons in found for why in reasons]


def test_a_note_mark_cites_the_source_its_note_names_in_both_editions(tmp_path):
    notes = ("1. The T4's data sheet: 8.1 TFLOP/s in float32.\n"
             "2. How the allocator rounds: `c10/cuda/CUDACachingAllocator.cpp`.\n3. What we think.\n")
    assert sourced(f"On a T4 it takes at least 0.27 ms{MARK.format(1)}. Then more.", notes, tmp_path) == []
    assert sourced(f"A GPU reserves a 20 MiB segment.{MARK.format(2)} Then more.", notes, tmp_path) == []
    assert sourced(f"在 GPU 上，它预留一个 20 MiB 的段{MARK.format(2)}。接着看下一步。", notes, tmp_path) == []
    assert sourced(f"在 GPU 上，它预留一个 20 MiB 的段。{MARK.format(2)}接着看下一步。", notes, tmp_path) == []
    no_source = ["cites no record of gpu-runs/, and does not name its source (a PyTorch file, PyTorch's "
                 "documentation or a data sheet)"]
    assert sourced(f"A GPU reserves a 20 MiB segment{MARK.format(3)}.", notes, tmp_path) == no_source
    assert sourced(f"A GPU reserves a 20 MiB segment{MARK.format(4)}.", notes, tmp_path) == no_source  # no note 4
    # a mark covers its own sentence only, and the notes themselves are sources, not claims
    assert sourced(f"On a T4 it takes 0.27 ms{MARK.format(1)}. On a T4 it takes 52 µs.", notes, tmp_path)
    assert sourced("Nothing here.", "1. An A100 holds 40 GiB (reasoned).\n", tmp_path) == []


def test_what_a_figure_would_be_elsewhere_is_a_gpu_figure_too(tmp_path):
    assert problems("What you see elsewhere: each a Tesla T4 with 15360 MiB (not a run of this page).", tmp_path)
    assert problems("The second line shows 256.0 MiB reserved (reasoned, not a recorded run).", tmp_path)


def test_shapes_asks_cpu_figures_and_asides_without_figures_are_no_gpu_figures(tmp_path):
    text = ("A 1000 × 1000 product on a GPU takes longer to launch than to run. "
            "On the CPU it took 3.2 ms. "
            "Half precision takes exactly 2 MiB (on a GPU the printout names `cuda:0`). "
            "On a GPU, 256 MiB requested with only 64 MiB to spare.")
    assert problems(text, tmp_path, code="big = torch.empty(256 * MiB)\nbudget = 64 * 2**20") == []
    assert problems("On a GPU, 256 MiB requested with only 64 MiB to spare.", tmp_path)  # no code asks for them


def test_a_fenced_output_belongs_to_the_sentence_that_introduces_it():
    (sentence,) = q.gpu_sentences("On a CUDA GPU the cell prints (reasoned from `CUDACachingAllocator.cpp`):\n\n"
                                  "```\n" + GPU_LINES + "```\n\nOn the CPU nothing.")
    assert sentence.figures == ("0.0 MiB", "256 MiB", "256.0 MiB") and sentence.reasoned
    assert sentence.source == "CUDACachingAllocator.cpp"


def test_a_figure_is_printed_as_written_whatever_the_spacing():
    assert q.printed("256.0 MiB", "allocated    256.0 MiB, reserved 512.0 MiB")
    assert not q.printed("256.0 MiB", "allocated 1256.0 MiB")
    assert not q.printed("256 MiB", "256.0 MiB")
    assert q.printed("1.91×", "speed-up 1.91x") and q.printed("7%", "7 % of the peak")
