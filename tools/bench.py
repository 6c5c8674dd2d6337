"""make bench: the measurements of lesson 05, outside the notebook, on the best device.

Every measurement is one of lesson 05's saved helpers from utils.py (matmul_gflops,
numpy_matmul_gflops, log_every_step/log_on_device with median_and_iqr_seconds,
copy_bandwidth_gbps), set against the data-sheet peak that applies (matmul_peak_tflops,
gpu_peaks): nothing is measured in a way of its own here. Writes build/bench.json:
  {"device", "device_name", "torch", "threads",
   "float32_matmul_precision", "allow_tf32",       # the float32 matmul precision in force
   "measurements": [{"name", "device", "value", "unit",
                     "peak"?, "peak_kind"?, "fraction_of_peak"?, ...}, ...]}
and prints the same as a table. Figures are this machine's; nothing here is a pass/fail test.
A float32 product is set against the TF32 peak when TF32 is on and the GPU has it (Ampere
and later), else against the float32 peak; --precision high runs the products with TF32.

  python -m tools.bench [--quick] [--precision highest|high|medium] [--out build/bench.json]
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

import torch

import utils
from tools.series import ROOT


def measurement(name: str, device: torch.device, value: float, unit: str,
                peak: tuple[float, str] | None = None, **extra: object) -> dict:
    """One row; ``peak`` is (figure in ``unit``, its kind: float32, TF32, float16, host link)."""
    row = {"name": name, "device": str(device), "value": round(value, 3), "unit": unit, **extra}
    if peak:
        row["peak"], row["peak_kind"] = peak
        row["fraction_of_peak"] = round(value / peak[0], 3)
    return row


def matmul(device: torch.device, n: int, min_run_time: float, dtype: torch.dtype = torch.float32) -> dict:
    label = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}[dtype]
    peak = utils.matmul_peak_tflops(device, dtype)
    return measurement(f"matmul_{label}_{n}", device, utils.matmul_gflops(n, device, dtype, min_run_time),
                       "GFLOP/s", (peak[0] * 1e3, peak[1]) if peak else None)


def matmul_numpy(n: int, min_run_time: float) -> dict:
    return measurement(f"matmul_fp32_{n}_numpy", torch.device("cpu"), utils.numpy_matmul_gflops(n, min_run_time),
                       "GFLOP/s")


def per_step_sync(device: torch.device, steps: int, min_run_time: float) -> list[dict]:
    """d2l's exercise 3 as lesson 05 section 4 runs it: the per-step cost of copying, and its noise."""
    torch.manual_seed(0)
    m = torch.randn(100, 100).to(device)
    t_each, iqr_each = utils.median_and_iqr_seconds(lambda: utils.log_every_step(m, steps), device, min_run_time)
    t_once, iqr_once = utils.median_and_iqr_seconds(lambda: utils.log_on_device(m, steps), device, min_run_time)
    cost, noise = (t_each - t_once) / steps * 1e6, (iqr_each + iqr_once) / steps * 1e6
    return [
        measurement(f"log_{steps}_steps_copy_each_step", device, t_each * 1e3, "ms", iqr=round(iqr_each * 1e3, 3)),
        measurement(f"log_{steps}_steps_copy_once", device, t_once * 1e3, "ms", iqr=round(iqr_once * 1e3, 3)),
        # noise: the two IQRs per step; a cost inside it is no measurable cost (lesson 05 says so too)
        measurement("per_step_sync_cost", device, cost, "us", noise=round(noise, 3), measurable=abs(cost) > noise),
    ]


def copies(device: torch.device, mib: int, min_run_time: float) -> list[dict]:
    host = torch.ones(mib * 2**20 // 4)
    if device.type != "cuda":
        cpu = torch.device("cpu")
        gbps = utils.copy_bandwidth_gbps(host, cpu, False, min_run_time)
        return [measurement(f"host_memory_copy_{mib}MiB", cpu, gbps, "GB/s")]
    peaks = utils.gpu_peaks(device)
    link = (peaks["host_link_gbps"], "host link") if peaks else None
    pinned = host.pin_memory()
    return [measurement(f"h2d_{label}_{mib}MiB", device, utils.copy_bandwidth_gbps(src, device, nb, min_run_time),
                        "GB/s", link)
            for label, src, nb in [("pageable", host, False), ("pinned", pinned, False),
                                   ("pinned_non_blocking", pinned, True)]]


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def settings() -> dict:
    """The float32 matmul precision in force: "highest" (plain float32), "high" or "medium" (TF32 on CUDA)."""
    return {"float32_matmul_precision": torch.get_float32_matmul_precision(),
            "allow_tf32": utils.tf32_allowed("matmul")}  # read as each torch release wants (lesson 05)


def run(quick: bool) -> dict:
    device = utils.try_gpu()
    cpu = torch.device("cpu")
    t = 0.05 if quick else 0.3
    # Sizes that can approach a GPU's peak only where a GPU is (8192); the CPU stops at 2048.
    small, large = (64, 256) if quick else (256, 2048 if device.type == "cpu" else 8192)
    rows = [matmul(device, small, t), matmul(device, large, t)]
    if device.type != "cpu":
        rows.append(matmul(device, large, t, torch.float16))
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
            "threads": torch.get_num_threads(), **settings(), "measurements": rows}


def table(report: dict) -> str:
    lines = [f"device {report['device']} ({report['device_name']}), torch {report['torch']}, "
             f"{report['threads']} CPU threads, float32 matmul precision {report['float32_matmul_precision']!r} "
             f"(TF32 {'on' if report['allow_tf32'] else 'off'})"]
    for r in report["measurements"]:
        share = f"  {r['fraction_of_peak']:.0%} of {r['peak_kind']} peak {r['peak']:g}" if "peak" in r else ""
        if "noise" in r:
            share = f"  noise {r['noise']:g} {r['unit']}" + ("" if r["measurable"] else ": none measurable")
        lines.append(f"  {r['name']:<36} {r['device']:<7} {r['value']:>12.3f} {r['unit']:<8}{share}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and short runs (seconds)")
    parser.add_argument("--precision", choices=["highest", "high", "medium"],
                        help="torch.set_float32_matmul_precision for the run (default: leave it as it is)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "bench.json")
    args = parser.parse_args()
    if args.precision:
        torch.set_float32_matmul_precision(args.precision)
    report = run(args.quick)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(table(report))
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
