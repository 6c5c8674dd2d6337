"""The GPU tools: make test-gpu refuses to pass where no GPU path would be tested, and
make gpu-report writes each cell's GPU output beside its no-GPU output.

The refusals run tools/gpu_suite.py for real, with a stand-in `nvidia-smi` first on PATH and
this machine's torch, which must see no GPU (as on every CPU runner)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
import torch

from tools import gpu_report, gpu_suite
from tools.series import ROOT, all_notebooks

H200 = "GPU 0: NVIDIA H200 (UUID: GPU-3b2a1f7e-5c1d-4e8a-9f00-1a2b3c4d5e6f)"
NO_DRIVER = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."

posix = pytest.mark.skipif(sys.platform == "win32", reason="stand-in nvidia-smi is a shell script")
cpu_torch = pytest.mark.skipif(torch.cuda.is_available(), reason="needs a torch that sees no GPU")


def stand_in(tmp_path: Path, lines: list[str], code: int = 0) -> dict[str, str]:
    """An environment whose `nvidia-smi` prints ``lines`` and exits with ``code``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "nvidia-smi"
    script.write_text("#!/bin/sh\n" + "".join(f"echo '{line}'\n" for line in lines) + f"exit {code}\n")
    script.chmod(0o755)
    env = gpu_suite.environment(None)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env.pop("ALLOW_NO_GPU", None)
    return env


def suite(env: dict[str, str], *args: str) -> tuple[subprocess.CompletedProcess, float]:
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "tools.gpu_suite", *args], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    return run, time.perf_counter() - start


@posix
@cpu_torch
def test_a_gpu_that_torch_cannot_see_fails_at_once(tmp_path):
    run, seconds = suite(stand_in(tmp_path, [H200]), "--nbval", "-n", "2")
    assert run.returncode == 2
    assert "nvidia-smi lists 1 GPU(s) but torch sees none" in run.stderr
    assert "a CPU-only build" in run.stderr
    assert "===" not in run.stdout  # no setting was run
    assert seconds < 30


@posix
@cpu_torch
def test_a_machine_without_gpu_fails_unless_allowed(tmp_path):
    run, _ = suite(stand_in(tmp_path, [NO_DRIVER], code=9), "--nbval")
    assert run.returncode == 2
    assert "This machine has no GPU" in run.stderr and "ALLOW_NO_GPU=1" in run.stderr
    assert "===" not in run.stdout


@posix
@cpu_torch
def test_allowed_without_gpu_it_runs_all_three_settings(tmp_path):
    (tmp_path / "test_stand_in.py").write_text("def test_ok():\n    pass\n")
    env = stand_in(tmp_path, [NO_DRIVER], code=9) | {"ALLOW_NO_GPU": "1"}
    summary = tmp_path / "suite.json"
    run, _ = suite(env, "--notebooks", str(tmp_path / "test_stand_in.py"), "--json", str(summary), "-q",
                   "-p", "no:nbval", "-p", "no:xdist", "-p", "no:hypothesispytest")
    assert run.returncode == 0, run.stdout + run.stderr
    rows = json.loads(summary.read_text())["rows"]
    assert [(r["setting"], r["gpus_seen"], r["result"]) for r in rows] == [
        ("all GPUs", "0", "passed"), ("one GPU", "0", "passed"), ("no GPU", "0", "passed")]
    assert "No GPU path has been tested here." in run.stdout


@posix
@cpu_torch
def test_the_allow_flag_and_a_failing_setting(tmp_path):
    (tmp_path / "test_stand_in.py").write_text("def test_fails():\n    assert False\n")
    env = stand_in(tmp_path, [NO_DRIVER], code=9)
    run, _ = suite(env, "--allow-no-gpu", "--settings", "none", "--notebooks", str(tmp_path / "test_stand_in.py"),
                   "-q", "-p", "no:nbval", "-p", "no:xdist", "-p", "no:hypothesispytest")
    assert run.returncode == 1
    row = run.stdout.splitlines()[-2].split()  # setting, visibility, GPUs seen, seconds, result
    assert row[:4] == ["no", "GPU", "CUDA_VISIBLE_DEVICES=''", "0"] and row[5:] == ["FAILED", "(exit", "1)"]


def test_refusal_decides_from_nvidia_smi_and_torch():
    cpu_build = {"torch": "2.13.0+cpu", "cuda": None, "count": 0}
    cuda_build = {"torch": "2.11.0+cu130", "cuda": "13.0", "count": 0}
    assert "a CPU-only build" in gpu_suite.refusal([H200], cpu_build, allow_no_gpu=True)
    assert "a CUDA 13.0 build" in gpu_suite.refusal([H200], cuda_build, allow_no_gpu=False)
    assert "no GPU" in gpu_suite.refusal([], cpu_build, allow_no_gpu=False)
    assert gpu_suite.refusal([], cpu_build, allow_no_gpu=True) is None
    assert gpu_suite.refusal([H200], cuda_build | {"count": 1}, allow_no_gpu=False) is None
    assert gpu_suite.refusal([], cuda_build | {"count": 1}, allow_no_gpu=False) is None  # nvidia-smi not on PATH
    assert "cannot be imported" in gpu_suite.refusal([], {"error": "No module named 'torch'"}, allow_no_gpu=True)


def test_each_setting_expects_its_own_count():
    assert [gpu_suite.expected_count(v, 2) for _, v in gpu_suite.SETTINGS] == [2, 1, 0]
    assert [gpu_suite.expected_count(v, 0) for _, v in gpu_suite.SETTINGS] == [0, 0, 0]


def test_gpu_suite_sets_the_three_visibilities(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    assert "CUDA_VISIBLE_DEVICES" not in gpu_suite.environment(None)
    assert gpu_suite.environment("0")["CUDA_VISIBLE_DEVICES"] == "0"
    assert gpu_suite.environment("")["CUDA_VISIBLE_DEVICES"] == ""
    assert [v for _, v in gpu_suite.SETTINGS] == [None, "0", ""]


def test_the_suite_runs_every_notebook_in_reverse_reading_order():
    notebooks = gpu_suite.default_notebooks()
    assert notebooks == sorted(notebooks, reverse=True)
    assert sorted(notebooks) == sorted(str(p.relative_to(ROOT)) for p in all_notebooks())


@posix
def test_listed_gpus_reads_nvidia_smi(tmp_path, monkeypatch):
    env = stand_in(tmp_path, [H200, "  MIG 1g.18gb     Device  0: (UUID: MIG-1)", H200.replace("GPU 0", "GPU 1")])
    monkeypatch.setenv("PATH", env["PATH"])
    assert gpu_suite.listed_gpus() == [H200, H200.replace("GPU 0", "GPU 1")]
    stand_in(tmp_path, [NO_DRIVER], code=9)
    assert gpu_suite.listed_gpus() == []


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in "ZX"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists() or shutil.which("setsid") is None,
                    reason="needs /proc and setsid")
def test_a_step_past_its_time_is_killed_with_its_children(tmp_path):
    """Also a child in a session of its own, as Jupyter starts kernels."""
    log, pid_file = tmp_path / "log", tmp_path / "pid"
    script = f"echo started; setsid sleep 60 & echo $! > {pid_file}; sleep 60"
    code, seconds = gpu_suite.run_logged(["sh", "-c", script], dict(os.environ), 2, log)
    assert code is None and seconds < 10
    assert log.read_text() == "started\n"
    pid = int(pid_file.read_text())
    for _ in range(50):
        if not alive(pid):
            break
        time.sleep(0.1)
    assert not alive(pid)


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_passes_the_options():
    def dry(*args: str) -> str:
        return subprocess.run(["make", "--no-print-directory", "-n", *args], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout

    assert "-m tools.gpu_suite --allow-no-gpu -n " in dry("test-gpu", "ALLOW_NO_GPU=1")  # nbval: pyproject.toml
    assert "--allow-no-gpu" not in dry("test-gpu")
    assert "--python-version 3.11 --platform manylinux_2_28_x86_64" in dry("gpu-wheels", "PY_VERSION=3.11")
    report = dry("gpu-report", "PYTHON=/opt/torch/.venv/bin/python3", "NB=notebooks/01_devices.ipynb",
                 "REPORT_OUT=/tmp/out")
    assert report.startswith("/opt/torch/.venv/bin/python3 -m tools.gpu_report run --notebooks notebooks/01_devices")
    assert "--out /tmp/out" in report and "--nbval-sanitize-with tests/nbval_sanitize.cfg" in report
    assert report.rstrip().endswith("-n 4")


# ------------------------------------------------------------------------------ gpu_report


def test_carried_wheels_stop_at_what_the_gpu_machine_has():
    def meta(name, *requires):
        return {"metadata": {"name": name, "version": "1.0", "requires_dist": list(requires)}}

    install = [meta("nbval", "ipykernel", "pytest>=7", "coverage"), meta("ipykernel", "pyzmq>=25", "packaging"),
               meta("pyzmq"), meta("pytest", "pluggy", "exceptiongroup; python_version < '3.11'"), meta("pluggy"),
               meta("packaging"), meta("coverage", "tomli; extra == 'toml'"), meta("tomli"),
               meta("Jupyter_Core", "torch"), meta("torch", "nvidia-cublas"), meta("nvidia-cublas"),
               meta("nbformat", "jupyter-core")]
    kept = gpu_report.carried(install, ["nbval", "nbformat"], {"pytest", "packaging"})
    assert kept == [("coverage", "1.0"), ("ipykernel", "1.0"), ("jupyter-core", "1.0"), ("nbformat", "1.0"),
                    ("nbval", "1.0"), ("pyzmq", "1.0")]


def test_the_gpu_machine_list_keeps_its_own_torch_numpy_and_pytest():
    present = {gpu_report.normalize(n) for n in gpu_report.ON_GPU_MACHINE}
    assert {"torch", "numpy", "matplotlib", "pytest", "pytest-xdist", "hypothesis", "pyyaml", "psutil",
            "packaging"} <= present
    assert not present & {gpu_report.normalize(n) for n in gpu_report.NEEDED}
    assert all(gpu_report.NEVER.match(n) for n in ["torch", "triton", "nvidia-cudnn-cu13", "cuda-bindings"])


def test_render_shows_what_a_reader_sees():
    outputs = [{"output_type": "stream", "name": "stdout", "text": "a\nb"},
               {"output_type": "stream", "name": "stdout", "text": "c\n"},
               {"output_type": "stream", "name": "stderr", "text": "warn\n"},
               {"output_type": "execute_result", "data": {"text/plain": "tensor([1.], device='cuda:0')"}},
               {"output_type": "display_data", "data": {"text/plain": "<Figure>", "image/png": "iVBORw0KGgo="}},
               {"output_type": "error", "ename": "RuntimeError", "evalue": "\x1b[31mboom\x1b[0m", "traceback": []}]
    assert gpu_report.render(outputs) == ("a\nbc\n[stderr] warn\ntensor([1.], device='cuda:0')\n<Figure>\n"
                                          "<image/png, 12 bytes>\nRuntimeError: boom\n")


def test_nbval_modes():
    cell = nbformat.v4.new_code_cell
    assert gpu_report.nbval_mode(cell("x")) == "checked"
    assert gpu_report.nbval_mode(cell("import os\n# NBVAL_IGNORE_OUTPUT\nx")) == "ignored"
    assert gpu_report.nbval_mode(cell("x", metadata={"tags": ["raises-exception"]})) == "must raise"
    assert gpu_report.nbval_mode(cell("# NBVAL_SKIP\nx")) == "skipped"


SYNTHETIC = [
    'import os\nhidden = os.environ.get("CUDA_VISIBLE_DEVICES") == ""\nprint("no GPU" if hidden else "GPU")',
    "print(\"tensor([1.])\" if hidden else \"tensor([1.], device='cuda:0')\")",
    "1 + 1",
    'raise ValueError("on both sides")',
    'print("runs after an error")',
    "print(os.path.basename(os.getcwd()))",
]


@posix
def test_side_by_side_of_a_tiny_notebook(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Tiny"), *map(nbformat.v4.new_code_cell, SYNTHETIC)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "nb" / "tiny.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    env = gpu_report.base_environment() | {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    runs = {}
    for side, visible in [("gpu", None), ("cpu", "")]:  # both kernels start at once
        runs[side] = subprocess.Popen([sys.executable, "-m", "tools.gpu_report", "execute", str(path), "--json",
                                       str(tmp_path / f"{side}.json"), "--seconds", "60"],
                                      cwd=ROOT, env=gpu_suite.environment(visible, env))
    assert all(p.wait(timeout=120) == 0 for p in runs.values())
    gpu, cpu = (json.loads((tmp_path / f"{side}.json").read_text()) for side in ("gpu", "cpu"))
    assert gpu["status"] == cpu["status"] == "ok"
    assert [c["output"] for c in gpu["cells"]] == [
        "GPU\n", "tensor([1.], device='cuda:0')\n", "2\n", "ValueError: on both sides\n", "runs after an error\n",
        "nb\n"]  # the kernel works in the notebook's folder

    md, row = gpu_report.side_by_side("nb/tiny.ipynb", gpu, cpu, gpu_report.sanitizer(
        ["--nbval", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg"]))
    assert row[3:] == ("6", "2", "1")  # 6 code cells, 2 differ, 1 still after the sanitizer
    assert "#### Cell 0 `" in md and "DIFFERS, also after nbval's sanitizer" in md
    assert "#### Cell 1 `" in md and "differs (same after nbval's sanitizer)" in md
    assert "GPU:\n````text\nGPU\n````\n\nno GPU:\n````text\nno GPU\n````" in md
    assert "#### Cell 3 `" in md and "nbval: checked · same" in md

    report = gpu_report.Report(tmp_path / "report", tmp_path / "out")
    report.folder.mkdir()
    (report.folder / "logs").mkdir()
    report.steps = [gpu_report.Step("side by side", "ok: 2 runs", 3.0, report.folder / "logs" / "04.log")]
    report.steps[0].log.write_text("pytest said this\n")
    report.notebooks.append((md, row))
    report.write()
    assert sorted(p.name for p in report.out.iterdir()) == ["gpu-report.log", "report.md"]
    text = (report.out / "report.md").read_text()
    assert "| side by side | 3       | ok: 2 runs |" in text and "| nb/tiny.ipynb |" in text and md in text
    assert "pytest said this" in (report.out / "gpu-report.log").read_text()


def test_failed_cells_are_read_from_the_pytest_log(tmp_path):
    log = tmp_path / "log"
    log.write_text("FAILED notebooks/01_devices.ipynb::Cell 5 - \x1b[91mNotebook cell execution failed\x1b[0m\n"
                   "FAILED notebooks/02_x.ipynb::Cell 12\nnot FAILED here\n")
    assert gpu_report.suite_failures(log) == ["notebooks/01_devices.ipynb::Cell 5", "notebooks/02_x.ipynb::Cell 12"]


def test_md_table_reads_as_text_too():
    assert gpu_report.md_table(("a", "long header"), [("x|y", "1")]) == (
        "| a    | long header |\n| ---- | ----------- |\n| x\\|y | 1           |")
