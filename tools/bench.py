"""make bench: the measurements of lesson 05, outside the notebook, on the best device.

Writes build/bench.json:
  {"device": ..., "device_name": ..., "torch": ..., "threads": ...,
   "measurements": [{"name", "device", "value", "unit", "peak"?, "fraction_of_peak"?}, ...]}
and prints the same as a table. Figures are this machine's; nothing here is a pass/fail test.

  python -m tools.bench [--quick] [--out build/bench.json]
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

import numpy as np
import torch

import utils
from tools.series import ROOT


def measurement(name: str, device: torch.device, value: float, unit: str, peak: float | None = None) -> dict:
    row = {"name": name, "device": str(device), "value": round(value, 3), "unit": unit}
    if peak:
        row["peak"] = peak
        row["fraction_of_peak"] = round(value / peak, 3)
    return row


def matmul(device: torch.device, n: int, min_run_time: float) -> dict:
    torch.manual_seed(0)
    a = torch.randn(n, n).to(device)
    seconds = utils.median_seconds(lambda: a @ a, device, min_run_time)
    peaks = utils.gpu_peaks(device)
    return measurement(f"matmul_fp32_{n}", device, 2 * n**3 / seconds / 1e9, "GFLOP/s",
                       peaks["fp32_tflops"] * 1e3 if peaks else None)


def matmul_numpy(n: int, min_run_time: float) -> dict:
    a = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    seconds = utils.median_seconds(lambda: a @ a, torch.device("cpu"), min_run_time)
    return measurement(f"matmul_fp32_{n}_numpy", torch.device("cpu"), 2 * n**3 / seconds / 1e9, "GFLOP/s")


def per_step_sync(device: torch.device, steps: int, min_run_time: float) -> list[dict]:
    """d2l's exercise: `steps` products of 100 x 100 matrices, logging a norm each step."""
    torch.manual_seed(0)
    m = torch.randn(100, 100).to(device)

    def every_step() -> list[float]:
        return [float(torch.linalg.matrix_norm(m @ m)) for _ in range(steps)]

    def once() -> list[float]:
        return torch.stack([torch.linalg.matrix_norm(m @ m) for _ in range(steps)]).tolist()

    t_each = utils.median_seconds(every_step, device, min_run_time)
    t_once = utils.median_seconds(once, device, min_run_time)
    return [
        measurement(f"log_{steps}_steps_copy_each_step", device, t_each * 1e3, "ms"),
        measurement(f"log_{steps}_steps_copy_once", device, t_once * 1e3, "ms"),
        measurement("per_step_sync_cost", device, (t_each - t_once) / steps * 1e6, "us"),
    ]


def copies(device: torch.device, mib: int, min_run_time: float) -> list[dict]:
    host = torch.ones(mib * 2**20 // 4)
    size = host.numel() * host.element_size()

    def gbps(source: torch.Tensor, target: torch.device, non_blocking: bool = False) -> float:
        seconds = utils.median_seconds(lambda: source.to(target, non_blocking=non_blocking, copy=True),
                                       target, min_run_time)
        return size / seconds / 1e9

    if device.type != "cuda":
        cpu = torch.device("cpu")
        return [measurement(f"host_memory_copy_{mib}MiB", cpu, gbps(host, cpu), "GB/s")]
    peaks = utils.gpu_peaks(device)
    pcie = peaks["pcie_gbps"] if peaks else None
    pinned = host.pin_memory()
    return [
        measurement(f"h2d_pageable_{mib}MiB", device, gbps(host, device), "GB/s", pcie),
        measurement(f"h2d_pinned_{mib}MiB", device, gbps(pinned, device), "GB/s", pcie),
        measurement(f"h2d_pinned_non_blocking_{mib}MiB", device, gbps(pinned, device, True), "GB/s", pcie),
    ]


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def run(quick: bool) -> dict:
    device = utils.try_gpu()
    cpu = torch.device("cpu")
    t = 0.05 if quick else 0.3
    small, large = (64, 256) if quick else (256, 2048 if device.type == "cpu" else 8192)
    rows = [matmul(device, small, t), matmul(device, large, t)]
    if device != cpu:
        rows += [matmul(cpu, small, t), matmul(cpu, min(large, 2048), t)]
    numpy_rows = [matmul_numpy(small, t), matmul_numpy(min(large, 2048), t)]
    torch_cpu = {r["name"]: r["value"] for r in rows if r["device"] == "cpu"}
    rows += numpy_rows
    for r in numpy_rows:  # the CPU has no published peak: NumPy's product on the same machine is the yardstick
        name = r["name"].removesuffix("_numpy")
        if name in torch_cpu:
            rows.append(measurement(f"{name}_torch_vs_numpy", cpu, torch_cpu[name] / r["value"], "ratio"))
    rows += per_step_sync(device, 100 if quick else 1000, t)
    rows += copies(device, 8 if quick else 64, t)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else cpu_name()
    return {"device": str(device), "device_name": name, "torch": torch.__version__,
            "threads": torch.get_num_threads(), "measurements": rows}


def table(report: dict) -> str:
    lines = [f"device {report['device']} ({report['device_name']}), torch {report['torch']}, "
             f"{report['threads']} CPU threads"]
    for r in report["measurements"]:
        share = f"  {r['fraction_of_peak']:.0%} of peak {r['peak']:g}" if "peak" in r else ""
        lines.append(f"  {r['name']:<36} {r['device']:<7} {r['value']:>12.3f} {r['unit']:<8}{share}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and short runs (seconds)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "bench.json")
    args = parser.parse_args()
    report = run(args.quick)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(table(report))
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
