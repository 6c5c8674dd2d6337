"""The GPU suite: strict nbval over every notebook three times on one machine, with all GPUs
visible, with one (CUDA_VISIBLE_DEVICES=0), and with none (CUDA_VISIBLE_DEVICES=), so one GPU
runner checks the several-GPU, one-GPU and CPU paths of every lesson.

  python -m tools.gpu_suite [--allow-no-gpu] [--settings all one none] [--notebooks NB ...]
                            [--step-timeout S] [--json PATH] PYTEST ARGS ...
  (make test-gpu passes the Makefile's nbval options; ALLOW_NO_GPU=1 is --allow-no-gpu)

Before running anything it compares `nvidia-smi -L` with what torch sees, and stops with an
error (exit 2) when the result would not be a GPU test:
  - nvidia-smi lists a GPU but torch sees none (a CPU-only torch build, a driver too old for it);
  - the machine has no GPU at all, unless --allow-no-gpu (then all three settings run the CPU path).
Then prints one row per setting with the GPUs torch saw, the seconds and the result; exits 1 if
any setting failed.

Only the standard library at import time: tools/gpu_report.py imports this before the packages
the suite needs are installed.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def settings_for(inherited: str | None) -> list[tuple[str, str | None]]:
    """The three visibilities, (label, CUDA_VISIBLE_DEVICES or None for unset). Where the caller's
    CUDA_VISIBLE_DEVICES already names GPUs (a scheduler such as Slurm gives each job its own), "all
    GPUs" keeps that list and "one GPU" is its first entry, so the suite never reaches another job's GPUs."""
    assigned = [d.strip() for d in (inherited or "").split(",") if d.strip()]
    if not assigned:  # unset (or hidden: then every setting is the CPU path)
        return [("all GPUs", None), ("one GPU", "0"), ("no GPU", "")]
    return [("all GPUs", ",".join(assigned)), ("one GPU", assigned[0]), ("no GPU", "")]


SETTINGS = settings_for(os.environ.get("CUDA_VISIBLE_DEVICES"))
ALL = SETTINGS[0][1]  # the visibility of "all GPUs": what probes are keyed by for it
SETTING_KEYS = {"all": "all GPUs", "one": "one GPU", "none": "no GPU"}
NO_GPU_HELP = "pass --allow-no-gpu (make test-gpu ALLOW_NO_GPU=1) to run it anyway"

PROBE = """
import json, torch
print(json.dumps({"torch": torch.__version__, "cuda": torch.version.cuda, "count": torch.cuda.device_count()}))
"""


def environment(visible: str | None, base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with CUDA_VISIBLE_DEVICES set to ``visible``,
    or removed when ``visible`` is None (all GPUs)."""
    env = dict(os.environ if base is None else base)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    if visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    return env


def describe(visible: str | None) -> str:
    return "CUDA_VISIBLE_DEVICES=" + ("(unset)" if visible is None else repr(visible))


def nvidia_smi(*args: str, timeout: float = 30) -> list[str]:
    """The lines `nvidia-smi ARGS` prints: none when there is no nvidia-smi, or it fails (no driver)."""
    try:
        out = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.strip() for line in out.stdout.splitlines() if line.strip()] if out.returncode == 0 else []


def listed_gpus(timeout: float = 30) -> list[str]:
    """The `GPU n: ...` lines of `nvidia-smi -L`: empty when there is no nvidia-smi, or no driver.

    nvidia-smi ignores CUDA_VISIBLE_DEVICES: it lists what the machine has, not what torch may see."""
    return [line for line in nvidia_smi("-L", timeout=timeout) if line.startswith("GPU ")]


def driver_version() -> str | None:
    """The NVIDIA driver's version (one per GPU, joined if they differ), or None without nvidia-smi."""
    versions = dict.fromkeys(nvidia_smi("--query-gpu=driver_version", "--format=csv,noheader"))
    return ", ".join(versions) or None


def probe_torch(env: dict[str, str], python: str = sys.executable, timeout: float = 120) -> dict:
    """What torch sees in a fresh interpreter with ``env``: {"torch", "cuda", "count"} or {"error"}."""
    try:
        run = subprocess.run([python, "-c", PROBE], env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"importing torch took over {timeout:.0f} s"}
    if run.returncode != 0:
        return {"error": (run.stderr.strip().splitlines() or [f"exit {run.returncode}"])[-1]}
    return json.loads(run.stdout.strip().splitlines()[-1])


def probe_settings(base: dict[str, str] | None = None, timeout: float = 120) -> dict[str | None, dict]:
    """probe_torch under every setting at once: {CUDA_VISIBLE_DEVICES value or None: answer}."""
    visible = [v for _, v in SETTINGS]
    with concurrent.futures.ThreadPoolExecutor() as pool:
        answers = pool.map(lambda v: probe_torch(environment(v, base), timeout=timeout), visible)
    return dict(zip(visible, answers, strict=True))


def refusal(listed: list[str], seen: dict, allow_no_gpu: bool) -> str | None:
    """Why the suite must not run on this machine (None: it may). ``seen`` is probe_torch's answer
    with all GPUs visible."""
    if "error" in seen:
        return f"torch cannot be imported by {sys.executable}: {seen['error']}"
    if listed and not seen["count"]:
        build = f"a CUDA {seen['cuda']} build" if seen["cuda"] else "a CPU-only build"
        return (f"nvidia-smi lists {len(listed)} GPU(s) but torch sees none (torch {seen['torch']}, {build}): "
                "the suite would test only the CPU path. Install a torch build for this driver "
                "(lesson 15 says which), or check that nothing hides the GPUs from it.")
    if not listed and not seen["count"] and not allow_no_gpu:
        return ("This machine has no GPU (nvidia-smi lists none and torch sees none): the GPU suite would "
                f"only repeat the CPU suite. Run it on a GPU machine, or {NO_GPU_HELP}.")
    return None


def expected_count(label: str, all_seen: int) -> int:
    """How many GPUs torch must see in a setting, given how many it sees with all visible."""
    return {"all GPUs": all_seen, "one GPU": min(1, all_seen), "no GPU": 0}[label]


def run_setting(label: str, visible: str | None, probes: dict[str | None, dict], notebooks: list[str],
                pytest_args: list[str], base: dict[str, str] | None = None, timeout: float | None = None,
                log: Path | None = None) -> dict:
    """Strict nbval (``pytest_args``) over ``notebooks`` with CUDA_VISIBLE_DEVICES=``visible``, unless torch
    sees another number of GPUs there than the setting should (``probes``: probe_settings' answers).
    Returns the setting's row: setting, visibility, gpus_seen, seconds, result."""
    seen, want = probes[visible].get("count", -1), expected_count(label, probes[ALL].get("count", 0))
    print(f"\n=== {label}: {describe(visible)}, torch sees {seen} CUDA GPU(s) ===", flush=True)
    if seen != want:
        result, seconds = f"FAILED (torch saw {seen} GPU(s), expected {want})", 0.0
    else:
        pytest = [sys.executable, "-m", "pytest", *notebooks, *pytest_args]
        code, seconds = run_logged(pytest, environment(visible, base), timeout, log)
        result = ("passed" if code == 0 else f"FAILED (exit {code})" if code is not None
                  else f"FAILED (timed out after {timeout:.0f} s)")
    return dict(zip(("setting", "visibility", "gpus_seen", "seconds", "result"),
                    (label, describe(visible), str(seen), f"{seconds:.0f}", result), strict=True))


def run_logged(cmd: list[str], env: dict[str, str], timeout: float | None, log: Path | None = None,
               cwd: Path = ROOT) -> tuple[int | None, float]:
    """Run ``cmd`` in a process group of its own, its output to ``log`` (or this one's); on timeout
    kill the whole group (pytest, its workers and their kernels). Returns (exit code or None if it
    timed out, seconds)."""
    start = time.perf_counter()
    sink = open(log, "ab") if log else None  # closed below
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=sink, stderr=subprocess.STDOUT if sink else None,
                                start_new_session=True)
        try:
            code: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
            kill_group(proc)
        except BaseException:
            kill_group(proc)
            raise
    finally:
        if sink:
            sink.close()
    return code, time.perf_counter() - start


def kill_group(proc: subprocess.Popen) -> None:
    """Kill ``proc``, its process group, and every process under it that left the group (Jupyter
    starts each kernel in a session of its own: one left behind would hold the GPU)."""
    stray = descendants(proc.pid)  # before the kill, which hands them to init
    for pid in [-proc.pid, *stray]:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    proc.wait()


def descendants(pid: int) -> list[int]:
    """Every process under ``pid``, read from /proc (none where there is no /proc)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def default_notebooks() -> list[str]:
    # Imported here, not above: tools.series needs nbformat, which gpu_report installs first.
    from tools.series import all_notebooks

    # the same notebooks, in the same (reverse reading) order as `make test`
    return sorted((str(p.relative_to(ROOT)) for p in all_notebooks()), reverse=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--allow-no-gpu", action="store_true",
                        default=os.environ.get("ALLOW_NO_GPU", "").lower() in ("1", "true", "yes"),
                        help="run on a machine without a GPU too (also: ALLOW_NO_GPU=1)")
    parser.add_argument("--settings", nargs="+", choices=list(SETTING_KEYS), default=list(SETTING_KEYS),
                        help="which visibilities to run (default: all three)")
    parser.add_argument("--notebooks", nargs="+", help="default: every notebook, in reverse reading order")
    parser.add_argument("--step-timeout", type=float, help="seconds for each setting's pytest run")
    parser.add_argument("--json", type=Path, help="also write the result rows here")
    args, pytest_args = parser.parse_known_args(argv)

    listed, probes = listed_gpus(), probe_settings()
    seen_all = probes[ALL]
    print(f"nvidia-smi -L: {len(listed)} GPU(s)" + "".join(f"\n  {line}" for line in listed), flush=True)
    print(f"torch with all GPUs visible: {seen_all}", flush=True)
    reason = refusal(listed, seen_all, args.allow_no_gpu)
    summary: dict = {"listed": listed, "torch": seen_all, "refused": reason, "rows": []}
    if reason:
        print(f"\nGPU suite not run: {reason}", file=sys.stderr)
        if args.json:
            args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        return 2

    notebooks = args.notebooks or default_notebooks()
    for label, visible in SETTINGS:
        if label in [SETTING_KEYS[k] for k in args.settings]:
            summary["rows"].append(run_setting(label, visible, probes, notebooks, pytest_args,
                                               timeout=args.step_timeout))
            if args.json:  # after every setting, so a run cut short still leaves its rows
                args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    rows = [tuple(row.values()) for row in summary["rows"]]
    from tools.series import table  # (needs nbformat, like default_notebooks)

    print()
    print(table(("setting", "visibility", "GPUs seen", "seconds", "result"), rows))
    if not seen_all["count"]:
        print("No CUDA GPU was visible: every setting ran the CPU path. No GPU path has been tested here.")
    return 0 if all(r[4] == "passed" for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
