"""The records of GPU runs (tools/gpu_runs.py): every committed record in gpu-runs/ has the form
a test can rely on, a malformed one is refused with a message that says what is wrong, and a
record's file name says what machine it came from."""

from __future__ import annotations

import copy
import json

import pytest

from tools import gpu_runs


def machine(*gpus: str) -> dict:
    return {"gpus": list(gpus), "gpu_count": len(gpus), "driver": "570.86.15" if gpus else None,
            "torch": "2.14.1+cu128" if gpus else "2.14.1+cpu", "cuda": "12.8" if gpus else None,
            "python": "3.12.3", "cpus": 16}


def good(*gpus: str) -> dict:
    """A small valid record, made the way tools/gpu_report.py makes one."""
    settings = {"one GPU": {"CUDA_VISIBLE_DEVICES": "0", "gpus_seen": min(1, len(gpus))},
                "no GPU": {"CUDA_VISIBLE_DEVICES": "", "gpus_seen": 0}}
    if len(gpus) > 1:
        settings = {"all GPUs": {"CUDA_VISIBLE_DEVICES": None, "gpus_seen": len(gpus)}, **settings}

    def run(out: str) -> dict:
        return {"status": "ok", "seconds": 1.5, "cells": [{"id": "memory-10", "output": out},
                                                          {"id": "memory-11", "output": ""}]}

    runs = {"notebooks/07_gpu_memory.ipynb": {s: run("256.0 MiB\nsecond line\n" if v["gpus_seen"] else "0 B\n")
                                              for s, v in settings.items()}}
    return gpu_runs.build("2026-12-01", "0" * 40, machine(*gpus), settings, runs)


def test_a_record_built_from_runs_keeps_each_output_line_by_line():
    data = good("NVIDIA H200")
    assert data["gpu"] is True and list(data["settings"]) == ["one GPU", "no GPU"]
    cells = data["notebooks"]["notebooks/07_gpu_memory.ipynb"]["one GPU"]["cells"]
    assert cells == {"memory-10": ["256.0 MiB", "second line"]}  # a cell that printed nothing is left out
    assert gpu_runs.dumps(data).count("\n") > 30  # one key or one line per line: diffs read line by line
    assert list(good("NVIDIA H200", "NVIDIA H200")["settings"]) == ["all GPUs", "one GPU", "no GPU"]


BROKEN = [  # (what is changed, the message that says so)
    (lambda d: d.update(format=2), "format is 2, expected 1"),
    (lambda d: d.update(date="1 Dec 2026"), "date is '1 Dec 2026', expected YYYY-MM-DD"),
    (lambda d: d.pop("commit"), "commit must name the commit"),
    (lambda d: d.update(gpu="yes"), "gpu must be true or false"),
    (lambda d: d.update(gpu=False), "gpu is false but the machine has 1 GPU(s)"),
    (lambda d: d["machine"].pop("driver"), "machine must name gpus, gpu_count, driver, torch, cuda, python"),
    (lambda d: d["machine"].update(gpu_count="1"), "machine.gpu_count is '1', expected a number of GPUs"),
    (lambda d: d["machine"].update(gpus=[]), "machine.gpus must list one model name per GPU"),
    (lambda d: d.update(settings={}), "settings must be some of all GPUs, one GPU, no GPU"),
    (lambda d: d["settings"].update({"two GPUs": {}}), "settings must be some of"),
    (lambda d: d["settings"]["one GPU"].pop("gpus_seen"),
     "settings['one GPU'] must give CUDA_VISIBLE_DEVICES (a string or null) and gpus_seen"),
    (lambda d: d["settings"]["no GPU"].update(CUDA_VISIBLE_DEVICES=0), "settings['no GPU'] must give"),
    (lambda d: d.update(notebooks=[]), "notebooks must map a notebook's path to its runs"),
    (lambda d: d["notebooks"].update({"a.ipynb": ["one GPU"]}), "a.ipynb must map a setting to its run"),
    (lambda d: d["notebooks"]["notebooks/07_gpu_memory.ipynb"].update({"all GPUs": {"cells": {}}}),
     "notebooks/07_gpu_memory.ipynb has a run under 'all GPUs', which settings does not list"),
    (lambda d: d["notebooks"]["notebooks/07_gpu_memory.ipynb"].update({"no GPU": None}),
     "notebooks/07_gpu_memory.ipynb, no GPU: a run must be an object"),
    (lambda d: d["notebooks"]["notebooks/07_gpu_memory.ipynb"]["one GPU"]["cells"].update({"memory-10": "256.0 MiB"}),
     "notebooks/07_gpu_memory.ipynb, one GPU: cells must map a cell id to a list of output lines"),
]


@pytest.mark.parametrize(("change", "message"), BROKEN, ids=[m[:40] for _, m in BROKEN])
def test_a_malformed_record_is_refused_saying_why(change, message):
    data = copy.deepcopy(good("NVIDIA H200"))
    change(data)
    with pytest.raises(gpu_runs.RecordError) as err:
        gpu_runs.validate(data, "gpu-runs/x.json")
    assert str(err.value).startswith("gpu-runs/x.json: ") and message in str(err.value)


def test_a_record_is_a_json_object_and_a_fixture_says_so():
    with pytest.raises(gpu_runs.RecordError, match=r"^gpu-runs/x\.json: not a JSON object$"):
        gpu_runs.validate([], "gpu-runs/x.json")
    with pytest.raises(gpu_runs.RecordError, match="fixture, where present, must be true"):
        gpu_runs.validate(good("NVIDIA H200") | {"fixture": "no"})
    assert gpu_runs.validate(good("NVIDIA H200") | {"fixture": True})["fixture"] is True


def test_an_unreadable_file_is_refused_with_its_name(tmp_path):
    (tmp_path / "2026-12-01-no-gpu.json").write_text("{not json")
    with pytest.raises(gpu_runs.RecordError, match=r"2026-12-01-no-gpu\.json: Expecting property name"):
        gpu_runs.records(tmp_path)
    with pytest.raises(gpu_runs.RecordError, match=r"no record 'x' in .* \(records: none\)"):
        gpu_runs.by_name("x", tmp_path / "empty")


def test_the_file_name_says_the_date_and_the_gpus():
    assert gpu_runs.file_name("2026-12-01", machine("NVIDIA H200")) == "2026-12-01-1x-nvidia-h200.json"
    assert gpu_runs.file_name("2026-12-01", machine("NVIDIA A100-SXM4-80GB", "Tesla T4", "NVIDIA A100-SXM4-80GB")) == \
        "2026-12-01-2x-nvidia-a100-sxm4-80gb-1x-tesla-t4.json"
    assert gpu_runs.file_name("2026-12-01", machine()) == "2026-12-01-no-gpu.json"


def test_a_written_record_loads_back(tmp_path):
    for gpus in [("NVIDIA H200",), ("NVIDIA H200", "NVIDIA H200"), ()]:
        path = gpu_runs.write(good(*gpus), tmp_path)
        assert path.name == gpu_runs.file_name("2026-12-01", machine(*gpus))
        assert json.loads(path.read_text(encoding="utf-8")) == good(*gpus)
    one, two, none = (gpu_runs.by_name(n, tmp_path) for n in
                      ("2026-12-01-1x-nvidia-h200", "2026-12-01-2x-nvidia-h200", "2026-12-01-no-gpu"))
    assert [r.name for r in gpu_runs.records(tmp_path)] == sorted([one.name, two.name, none.name])
    assert one.label() == "1 × NVIDIA H200, driver 570.86.15, torch 2.14.1+cu128 (CUDA 12.8), Python 3.12.3, 2026-12-01"
    assert none.label() == "no GPU, torch 2.14.1+cpu, Python 3.12.3, 2026-12-01" and not none.gpu
    assert two.gpu_settings == ["all GPUs", "one GPU"] and none.gpu_settings == []
    assert one.output("07_gpu_memory.ipynb", "memory-10") == "256.0 MiB\nsecond line\n"  # its file name will do
    assert one.output("notebooks/07_gpu_memory.ipynb", "memory-10", "no GPU") == "0 B\n"
    assert none.output("notebooks/07_gpu_memory.ipynb", "memory-10") == "0 B\n"  # no GPU setting: the first
    assert one.output("notebooks/07_gpu_memory.ipynb", "memory-11") is None  # printed nothing
    assert two.find_cell("memory-10") == [("notebooks/07_gpu_memory.ipynb", s) for s in two.settings]


def test_every_committed_record_is_valid_and_named_for_its_machine():
    found = sorted(gpu_runs.RUNS.glob("*.json"))
    assert [r.path for r in gpu_runs.records()] == found  # each loads, hence validates
    for record in gpu_runs.records():
        assert record.path.name == gpu_runs.file_name(record.date, record.machine)
        assert not record.data.get("fixture"), f"{record.path.name}: a test's fixture record is never committed here"
    assert sorted(p.name for p in gpu_runs.RUNS.iterdir() if p.suffix != ".json") == ["README.md"]
