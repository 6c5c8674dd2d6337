"""make bench writes the JSON that the issue tracker asks for (a quick run: small sizes), with lesson 05's helpers."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest
import torch

from tools import bench
from tools.series import ROOT


@pytest.mark.slow
def test_bench_writes_every_measurement_with_its_unit_and_the_precision_in_force(tmp_path):
    out = tmp_path / "bench.json"
    subprocess.run([sys.executable, "-m", "tools.bench", "--quick", "--precision", "high", "--out", str(out)],
                   cwd=ROOT, check=True, capture_output=True)
    report = json.loads(out.read_text())
    assert set(report) >= {"device", "measurements", "float32_matmul_precision", "allow_tf32"}
    assert report["float32_matmul_precision"] == "high" and report["allow_tf32"] is True
    rows = {r["name"]: r for r in report["measurements"]}
    for r in rows.values():
        assert set(r) >= {"name", "device", "value", "unit"}
        assert ("peak" in r) == ("fraction_of_peak" in r) == ("peak_kind" in r)
    matmuls = [r for r in rows.values() if r["name"].startswith("matmul_fp32_") and r["unit"] == "GFLOP/s"
               and r["device"] == report["device"]]
    assert len(matmuls) >= 2 and all(r["value"] > 0 for r in matmuls)
    cost = rows["per_step_sync_cost"]
    assert cost["unit"] == "us" and cost["noise"] >= 0 and cost["measurable"] == (abs(cost["value"]) > cost["noise"])
    if report["device"].startswith("cuda"):
        assert any(n.startswith("h2d_pageable") for n in rows) and any(n.startswith("h2d_pinned") for n in rows)
    else:
        assert any(n.startswith("host_memory_copy") and r["unit"] == "GB/s" for n, r in rows.items())


def test_bench_records_the_float32_matmul_precision_in_force():
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("highest")
        assert bench.settings() == {"float32_matmul_precision": "highest", "allow_tf32": False}
        torch.set_float32_matmul_precision("high")
        assert bench.settings() == {"float32_matmul_precision": "high", "allow_tf32": True}
    finally:
        torch.set_float32_matmul_precision(before)


def test_bench_sets_each_product_against_the_peak_that_applies(monkeypatch):
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d=None: "NVIDIA A100-SXM4-80GB")
    monkeypatch.setattr(bench.utils, "matmul_gflops", lambda n, device, dtype, t: 100_000.0)
    cuda0 = torch.device("cuda:0")
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("highest")
        assert (bench.matmul(cuda0, 8192, 0.1)["peak"], bench.matmul(cuda0, 8192, 0.1)["peak_kind"]) == (19_500.0,
                                                                                                         "float32")
        torch.set_float32_matmul_precision("high")
        row = bench.matmul(cuda0, 8192, 0.1)
        assert (row["peak"], row["peak_kind"], row["fraction_of_peak"]) == (156_000.0, "TF32", 0.641)
        assert bench.matmul(cuda0, 8192, 0.1, torch.float16)["peak_kind"] == "float16"
    finally:
        torch.set_float32_matmul_precision(before)


def test_bench_measures_only_with_lesson_05s_saved_helpers():
    """tools/bench.py reuses utils' helpers instead of timing or peak-finding its own way."""
    tree = ast.parse((ROOT / "tools" / "bench.py").read_text(encoding="utf-8"))
    called = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and isinstance(n.func.value, ast.Name) and n.func.value.id == "utils"}
    assert called >= {"matmul_gflops", "numpy_matmul_gflops", "matmul_peak_tflops", "median_and_iqr_seconds",
                      "log_every_step", "log_on_device", "copy_bandwidth_gbps", "gpu_peaks", "try_gpu"}
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert not names & {"perf_counter", "Timer", "benchmark", "synchronize", "get_device_capability"}
