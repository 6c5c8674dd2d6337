"""Benchmark: what a fresh clone costs before `make test` is green, set-up and tests apart.

    python -m tools.fresh_speed [--ref HEAD] [--json build/bench-fresh.json]   # make bench-fresh

It clones this checkout's commit (``--ref``) into a scratch folder, as a new contributor would,
then times `make venv` (the set-up: the virtual environment, torch, the `dev` group, the bytecode
of what the kernels import) and `make test` (every notebook under strict nbval, then the unit
tests), each on its own. It also times `make test-slow`, which `make test` leaves to CI, so the
whole of what the two used to cost together is still on record. Installer caches are kept (a
machine that has set up once before, as CI's has): `make bench-setup` measures set-up from
empty caches. A measurement, not a test: it fails only when a step fails. Run it on a quiet
machine, since both workers share the cores with whatever else runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

from tools.venv import ROOT

STEPS = (("set-up", ["make", "venv"]), ("make test", ["make", "test"]), ("make test-slow", ["make", "test-slow"]))


def timed(cmd: list[str], cwd: Path) -> tuple[float, str]:
    """Run ``cmd`` in ``cwd`` as a make of its own; its seconds and pytest's summary line (else the last line)."""
    # Started from `make bench-fresh`, the clone's make would otherwise act as a sub-make of it.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    start = time.perf_counter()
    run = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed (exit {run.returncode}) in {cwd}:\n"
                         f"{run.stdout[-3000:]}{run.stderr[-2000:]}")
    lines = [line.strip("= ") for line in run.stdout.splitlines() if line.strip()]
    summaries = [line for line in lines if re.search(r"\d+ passed", line)]
    return seconds, (summaries or lines or [""])[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="HEAD", help="the commit to clone (default: HEAD; commit your changes first)")
    parser.add_argument("--json", type=Path, default=ROOT / "build" / "bench-fresh.json")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", args.ref], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    results = {"commit": commit, "steps": {}}
    with tempfile.TemporaryDirectory(prefix="bench-fresh-") as tmp:
        clone = Path(tmp, "clone")
        subprocess.run(["git", "clone", "-q", "--no-checkout", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "checkout", "-q", commit], cwd=clone, check=True)
        for name, cmd in STEPS:
            seconds, summary = timed(cmd, clone)
            results["steps"][name] = {"seconds": round(seconds, 1), "summary": summary}
            print(f"{name:15} {seconds:7.1f} s   {summary}", flush=True)
    steps = results["steps"]
    first_green = steps["set-up"]["seconds"] + steps["make test"]["seconds"]
    results["fresh clone to green make test"] = round(first_green, 1)
    print(f"{'fresh clone to green make test':32} {first_green:7.1f} s (set-up + make test; commit {commit[:12]})")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
