"""make bench writes the JSON that the issue tracker asks for (a quick run: small sizes)."""

from __future__ import annotations

import json
import subprocess
import sys

from tools.series import ROOT


def test_bench_writes_every_measurement_with_its_unit(tmp_path):
    out = tmp_path / "bench.json"
    subprocess.run([sys.executable, "-m", "tools.bench", "--quick", "--out", str(out)], cwd=ROOT,
                   check=True, capture_output=True)
    report = json.loads(out.read_text())
    assert set(report) >= {"device", "measurements"}
    rows = {r["name"]: r for r in report["measurements"]}
    for r in rows.values():
        assert set(r) >= {"name", "device", "value", "unit"}
        assert ("peak" in r) == ("fraction_of_peak" in r)
    matmuls = [r for r in rows.values() if r["name"].startswith("matmul_fp32_") and r["unit"] == "GFLOP/s"
               and r["device"] == report["device"]]
    assert len(matmuls) >= 2 and all(r["unit"] == "GFLOP/s" and r["value"] > 0 for r in matmuls)
    assert rows["per_step_sync_cost"]["unit"] == "us"
    if report["device"].startswith("cuda"):
        assert any(n.startswith("h2d_pageable") for n in rows) and any(n.startswith("h2d_pinned") for n in rows)
    else:
        assert any(n.startswith("host_memory_copy") and r["unit"] == "GB/s" for n, r in rows.items())
