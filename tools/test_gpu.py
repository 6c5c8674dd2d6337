"""The GPU suite: strict nbval over every notebook three times on one machine, with all GPUs
visible, with one (CUDA_VISIBLE_DEVICES=0), and with none (CUDA_VISIBLE_DEVICES=), so one GPU
runner checks the several-GPU, one-GPU and CPU paths of every lesson.

  python tools/test_gpu.py [PYTEST ARGS ...]     (make test-gpu passes the nbval options)

Prints one row per setting with the GPUs torch saw and the result; exits 1 if any failed.
On a machine without a CUDA GPU it still runs, and says that no GPU path was tested.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from series import ROOT, table

SETTINGS = [("all GPUs", None), ("one GPU", "0"), ("no GPU", "")]


def environment(visible: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    if visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    return env


def gpus_seen(env: dict[str, str]) -> int:
    probe = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.device_count())"],
                           env=env, capture_output=True, text=True, check=True)
    return int(probe.stdout.strip())


def main(pytest_args: list[str]) -> int:
    rows = []
    for label, visible in SETTINGS:
        env = environment(visible)
        shown = "(unset)" if visible is None else repr(visible)
        seen = gpus_seen(env)
        print(f"\n=== {label}: CUDA_VISIBLE_DEVICES={shown}, torch sees {seen} CUDA GPU(s) ===", flush=True)
        start = time.perf_counter()
        code = subprocess.run([sys.executable, "-m", "pytest", "notebooks", *pytest_args], cwd=ROOT, env=env).returncode
        rows.append((label, f"CUDA_VISIBLE_DEVICES={shown}", str(seen), f"{time.perf_counter() - start:.0f}",
                     "passed" if code == 0 else f"FAILED (exit {code})"))
    header = ("setting", "visibility", "GPUs seen", "seconds", "result")
    print()
    print(table(header, rows))
    if rows[0][2] == "0":
        print("No CUDA GPU was visible: all three settings ran the CPU path. No GPU path has been tested here.")
    return 0 if all(r[4] == "passed" for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
