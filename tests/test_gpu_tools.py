"""The GPU tools: make test-gpu refuses to pass where no GPU path would be tested; make
gpu-packages/gpu-wheels compute what to carry to a GPU machine from its own package list; make
gpu-report writes each cell's output with a GPU and without, side by side and as a record.

The refusals and the report run for real, with a stand-in `nvidia-smi` first on PATH and this
machine's torch, which must see no GPU (as on every CPU runner). Nothing here uses the network."""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
import torch

from tools import gpu_report, gpu_runs, gpu_suite
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


@pytest.fixture
def refusing_suite(tmp_path, monkeypatch, capsys):
    """gpu_suite.main in this process, with a stand-in nvidia-smi on PATH and this process's own torch
    as the probe's answer (no GPU): the refusals' wiring, without three interpreters importing torch.
    The real probe, in fresh interpreters under every setting, runs in the test after these."""
    def run(lines: list[str], code: int, *args: str) -> tuple[int, str, str]:
        env = stand_in(tmp_path, lines, code)
        monkeypatch.setenv("PATH", env["PATH"])
        monkeypatch.delenv("ALLOW_NO_GPU", raising=False)
        seen = {"torch": torch.__version__, "cuda": torch.version.cuda, "count": torch.cuda.device_count()}
        monkeypatch.setattr(gpu_suite, "probe_settings", lambda base=None, timeout=120: {
            visible: dict(seen) for _, visible in gpu_suite.SETTINGS})

        def no_setting(*_args, **_kwargs):
            raise AssertionError("a refused suite ran a setting")

        monkeypatch.setattr(gpu_suite, "run_setting", no_setting)
        returned = gpu_suite.main(list(args))
        out, err = capsys.readouterr()
        return returned, out, err

    return run


@posix
@cpu_torch
def test_a_gpu_that_torch_cannot_see_fails_at_once(refusing_suite):
    returned, out, err = refusing_suite([H200], 0, "--nbval", "-n", "2")
    assert returned == 2
    assert "nvidia-smi lists 1 GPU(s) but torch sees none" in err
    assert "a CPU-only build" in err
    assert "===" not in out  # no setting was run


@posix
@cpu_torch
def test_a_machine_without_gpu_fails_unless_allowed(refusing_suite):
    returned, out, err = refusing_suite([NO_DRIVER], 9, "--nbval")
    assert returned == 2
    assert "This machine has no GPU" in err and "ALLOW_NO_GPU=1" in err
    assert "===" not in out


@pytest.mark.slow
@posix
@cpu_torch
def test_allowed_without_gpu_it_runs_all_three_settings_and_fails_with_a_failing_one(tmp_path):
    """One run of the real suite (each run probes torch three times, seconds on a small machine): allowed
    by --allow-no-gpu (what make test-gpu ALLOW_NO_GPU=1 passes), every setting runs, and the one whose
    test fails (no GPU visible) fails the suite."""
    (tmp_path / "test_stand_in.py").write_text(
        "import os\n\ndef test_fails_only_with_no_gpu_visible():\n"
        "    assert os.environ.get('CUDA_VISIBLE_DEVICES') != ''\n")
    env = stand_in(tmp_path, [NO_DRIVER], code=9)
    summary = tmp_path / "suite.json"
    run, _ = suite(env, "--allow-no-gpu", "--notebooks", str(tmp_path / "test_stand_in.py"), "--json", str(summary),
                   "-q", "-p", "no:nbval", "-p", "no:xdist", "-p", "no:hypothesispytest")
    assert run.returncode == 1, run.stdout + run.stderr
    rows = json.loads(summary.read_text())["rows"]
    assert [(r["setting"], r["gpus_seen"], r["result"]) for r in rows] == [
        ("all GPUs", "0", "passed"), ("one GPU", "0", "passed"), ("no GPU", "0", "FAILED (exit 1)")]
    row = [line for line in run.stdout.splitlines() if line.startswith("no GPU ")][-1].split()
    assert row[:4] == ["no", "GPU", "CUDA_VISIBLE_DEVICES=''", "0"] and row[5:] == ["FAILED", "(exit", "1)"]
    assert "No GPU path has been tested here." in run.stdout


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
    assert [gpu_suite.expected_count(label, 2) for label, _ in gpu_suite.SETTINGS] == [2, 1, 0]
    assert [gpu_suite.expected_count(label, 0) for label, _ in gpu_suite.SETTINGS] == [0, 0, 0]


def test_gpus_a_scheduler_assigned_are_all_the_suite_uses():
    """On a cluster node where Slurm gave the job GPUs 3 and 5, "all" is those two and "one" is GPU 3:
    never another job's GPU 0."""
    assert gpu_suite.settings_for("3,5") == [("all GPUs", "3,5"), ("one GPU", "3"), ("no GPU", "")]
    assert gpu_suite.settings_for("GPU-8f1c,GPU-77aa") == [("all GPUs", "GPU-8f1c,GPU-77aa"),
                                                          ("one GPU", "GPU-8f1c"), ("no GPU", "")]
    assert gpu_suite.settings_for(None) == gpu_suite.settings_for("") == [
        ("all GPUs", None), ("one GPU", "0"), ("no GPU", "")]


def test_gpu_suite_sets_the_three_visibilities(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    assert "CUDA_VISIBLE_DEVICES" not in gpu_suite.environment(None)
    assert gpu_suite.environment("0")["CUDA_VISIBLE_DEVICES"] == "0"
    assert gpu_suite.environment("")["CUDA_VISIBLE_DEVICES"] == ""
    assert [v for _, v in gpu_suite.settings_for(None)] == [None, "0", ""]
    assert [label for label, _ in gpu_suite.SETTINGS] == list(gpu_runs.SETTINGS)  # the record's names


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
    assert gpu_suite.driver_version() is None


@posix
def test_the_driver_version_comes_from_nvidia_smi(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", stand_in(tmp_path, ["570.86.15", "570.86.15"])["PATH"])
    assert gpu_suite.driver_version() == "570.86.15"
    monkeypatch.setenv("PATH", stand_in(tmp_path, ["570.86.15", "580.65.06"])["PATH"])
    assert gpu_suite.driver_version() == "570.86.15, 580.65.06"


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in "ZX"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists() or shutil.which("setsid") is None,
                    reason="needs /proc and setsid")
@pytest.mark.slow
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
    assert dry("gpu-packages", "PYTHON=/path/to/python").startswith(
        "/path/to/python -m tools.gpu_report packages > gpu-packages.txt.tmp && mv gpu-packages.txt.tmp "
        "gpu-packages.txt")
    assert dry("gpu-wheels", "PACKAGES=their.txt", "GPU_WHEELS_ARGS=--max-mib 40").strip().endswith(
        "-m tools.gpu_report wheels --packages their.txt --dest .whl --max-mib 40")
    report = dry("gpu-report", "PYTHON=/path/to/python", "NB=notebooks/01_devices.ipynb", "REPORT_OUT=/tmp/out")
    assert report.startswith("/path/to/python -m tools.gpu_report run --notebooks notebooks/01_devices")
    assert "--out /tmp/out" in report and "--nbval-sanitize-with tests/nbval_sanitize.cfg" in report
    assert report.rstrip().endswith("-n 4")
    elsewhere = dry("test-unit", "VENV=/elsewhere/venv")  # a venv on another disk
    assert "-m tools.venv /elsewhere/venv " in elsewhere and "\n/elsewhere/venv/bin/python -m pytest " in elsewhere


# ----------------------------------------------------------- the GPU machine's package list


def test_the_packages_file_of_this_python_reads_back(tmp_path):
    """The real command, run by this python, describes this python."""
    path = tmp_path / "gpu-packages.txt"
    with open(path, "w", encoding="utf-8") as out:
        subprocess.run([sys.executable, "-m", "tools.gpu_report", "packages"], cwd=ROOT, stdout=out, timeout=120,
                       check=True)
    header, found = gpu_report.read_packages(path)
    major, minor = sys.version_info[:2]
    assert header["python-version"] == f"{major}.{minor}" and header["executable"] == sys.executable
    assert header["implementation"] == "cp" and header["abi"].startswith(f"cp{major}{minor}")
    assert found["torch"] == torch.__version__ and found["nbval"] == importlib_version("nbval")
    assert found["pytest-xdist"] == importlib_version("pytest-xdist")  # names normalized
    if sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc":
        tags = header["platform"].split()
        glibc = platform.libc_ver()[1].split(".")
        arch = platform.machine()
        assert tags[0] == f"manylinux_2_{glibc[1]}_{arch}" and f"manylinux2014_{arch}" in tags
        assert tags == gpu_report.platform_tags()


def importlib_version(name: str) -> str:
    import importlib.metadata

    return importlib.metadata.version(name)


def test_manylinux_tags_come_from_the_glibc_version(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(gpu_report.sysconfig, "get_platform", lambda: "linux-aarch64")
    monkeypatch.setattr(gpu_report.os, "confstr", lambda name: "glibc 2.19", raising=False)
    assert gpu_report.platform_tags() == ["manylinux_2_19_aarch64", "manylinux_2_18_aarch64",
                                          "manylinux_2_17_aarch64", "manylinux2014_aarch64"]
    monkeypatch.setattr(gpu_report.sysconfig, "get_platform", lambda: "linux-x86_64")
    tags = gpu_report.platform_tags()
    assert tags[-3:] == ["manylinux_2_6_x86_64", "manylinux_2_5_x86_64", "manylinux1_x86_64"]
    assert "manylinux2010_x86_64" in tags and len(tags) == 15 + 3


def test_no_platform_tags_where_they_cannot_be_derived(monkeypatch):
    def musl(name):
        raise ValueError("unrecognized configuration name")

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(gpu_report.os, "confstr", musl, raising=False)
    monkeypatch.setattr(gpu_report.platform, "libc_ver", lambda: ("", ""))
    with pytest.raises(gpu_report.NoTags, match=r"no glibc 2\.x .*--platform TAG"):
        gpu_report.platform_tags()
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(gpu_report.sysconfig, "get_platform", lambda: "macosx-14.0-arm64")
    with pytest.raises(gpu_report.NoTags, match=r"macosx-14\.0-arm64.*--platform TAG"):
        gpu_report.platform_tags()
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(gpu_report.sysconfig, "get_platform", lambda: "win-amd64")
    assert gpu_report.platform_tags() == ["win_amd64"]


PACKAGES = """# The Python packages of a GPU machine, for `make gpu-wheels PACKAGES=this-file` (tools/gpu_report.py).
# python-version: 3.12
# implementation: cp
# abi: cp312
# platform: manylinux_2_28_x86_64 manylinux_2_17_x86_64
Jupyter_Core==5.7.2
packaging==24.1
pytest==8.3.2
torch==2.5.1+cu124
"""


def test_carried_wheels_stop_at_what_the_gpu_machine_has(tmp_path):
    def meta(name, *requires):
        return {"metadata": {"name": name, "version": "1.0", "requires_dist": list(requires)}}

    install = [meta("nbval", "ipykernel", "pytest>=7", "coverage"), meta("ipykernel", "pyzmq>=25", "packaging"),
               meta("pyzmq"), meta("pytest", "pluggy", "exceptiongroup; python_version < '3.11'"), meta("pluggy"),
               meta("packaging"), meta("coverage", "tomli; extra == 'toml'"), meta("tomli"),
               meta("traitlets"), meta("jupyter-core", "traitlets"), meta("matplotlib", "torch"),
               meta("torch", "nvidia-cublas"), meta("nvidia-cublas"), meta("nbformat", "jupyter_core")]
    (tmp_path / "gpu-packages.txt").write_text(PACKAGES)
    header, present = gpu_report.read_packages(tmp_path / "gpu-packages.txt")
    assert header["platform"].split() == ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64"]
    assert present == {"jupyter-core": "5.7.2", "packaging": "24.1", "pytest": "8.3.2", "torch": "2.5.1+cu124"}
    kept = gpu_report.carried(install, ["nbval>=0.11", "nbformat", "matplotlib"], set(present))
    assert kept == [("coverage", "1.0"), ("ipykernel", "1.0"), ("matplotlib", "1.0"), ("nbformat", "1.0"),
                    ("nbval", "1.0"), ("pyzmq", "1.0")]  # not torch, not what the machine has, nor their needs
    assert all(gpu_report.NEVER.match(n) for n in ["torch", "triton", "nvidia-cudnn-cu13", "cuda-bindings"])


def test_the_suite_needs_what_pyproject_names_but_torch():
    needed = {gpu_report.requirement_name(r): r for r in gpu_report.needed()}
    assert {"nbval", "pytest", "pytest-xdist", "ipykernel", "nbclient", "nbformat", "numpy", "matplotlib",
            "scikit-learn"} <= set(needed)
    assert "torch" not in needed and "ruff" not in needed and "hypothesis" not in needed
    assert needed["nbval"] == "nbval>=0.11"  # with pyproject.toml's bounds


def wheels(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tools.gpu_report", "wheels", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)


def test_wheels_refuse_to_guess_the_gpu_machine(tmp_path):
    run = wheels("--dest", str(tmp_path / "whl"))
    assert run.returncode == 2 and not (tmp_path / "whl").exists()
    assert "python -m tools.gpu_report packages > gpu-packages.txt" in run.stderr
    assert "make gpu-wheels PACKAGES=gpu-packages.txt" in run.stderr
    frozen = tmp_path / "frozen.txt"  # `pip freeze`: names and versions, no header
    frozen.write_text("numpy==2.1.0\n")
    run = wheels("--packages", str(frozen))
    assert run.returncode == 2 and "names no python-version" in run.stderr and "--python-version X.Y" in run.stderr
    run = wheels("--packages", str(frozen), "--python-version", "3.12")
    assert run.returncode == 2 and "names no platform" in run.stderr and "--platform TAG" in run.stderr


def test_the_options_are_neutral_unless_given():
    cli = gpu_report.parser()
    run = cli.parse_args(["run"])
    assert run.budget is None and run.output_chars is None and run.log_kib is None
    assert min(run.step_timeout, run.suite_timeout, run.compare_timeout) >= 1800
    assert run.steps == list(gpu_report.STEPS)
    assert run.jobs == 1  # one notebook at a time: a record's timings come from a quiet machine
    assert cli.parse_args(["wheels"]).max_mib is None
    assert gpu_report.fence("x" * 100_000) == "````text\n" + "x" * 100_000 + "\n````\n"
    assert gpu_report.fence("abcdef", 2) == "````text\nab\n[... 4 more characters]\n````\n"
    assert gpu_report.Runner(gpu_report.Report(ROOT / "build", None), None).deadline == float("inf")


def test_the_kernels_get_no_helpers_url_so_that_the_notebooks_take_this_checkouts_helpers(monkeypatch):
    """Run directly (no Makefile), the notebooks' setup cells find the checkout's helpers themselves: the report
    adds no GPU_LESSONS_URL (which would make them download), and keeps one the caller set (a mirror)."""
    monkeypatch.delenv("GPU_LESSONS_URL", raising=False)
    assert "GPU_LESSONS_URL" not in gpu_report.base_environment(site=False)
    monkeypatch.setenv("GPU_LESSONS_URL", "file:///elsewhere/series-helpers.zip")
    assert gpu_report.base_environment(site=False)["GPU_LESSONS_URL"] == "file:///elsewhere/series-helpers.zip"


def test_an_old_python_is_refused_before_anything_runs(monkeypatch, capsys):
    monkeypatch.setattr(sys, "version_info", (3, 10, 14, "final", 0))
    assert gpu_report.main(["run", "--steps", "bench"]) == 2
    assert "needs Python 3.11 or newer" in capsys.readouterr().err


def test_wheels_unpack_where_the_gpu_machines_python_has_no_pip(tmp_path, monkeypatch):
    """A wheel is a zip of what `pip install --target` puts in place: without pip, the install step unpacks it."""
    import zipfile

    wheels = tmp_path / "whl"
    wheels.mkdir()
    with zipfile.ZipFile(wheels / "tiny-1.0-py3-none-any.whl", "w") as archive:
        archive.writestr("tiny/__init__.py", "ANSWER = 42\n")
        archive.writestr("tiny-1.0.dist-info/METADATA", "Name: tiny\nVersion: 1.0\n")
    real_find_spec = gpu_report.importlib.util.find_spec
    monkeypatch.setattr(gpu_report.importlib.util, "find_spec",
                        lambda name, *a: None if name == "pip" else real_find_spec(name, *a))
    site, log = tmp_path / "site", tmp_path / "install.log"
    result = gpu_report.install_wheels(sorted(wheels.glob("*.whl")), site, dict(os.environ), 60, log)
    assert result == f"ok: 1 wheels into {site}" and "no pip in" in log.read_text()
    assert (site / "tiny" / "__init__.py").read_text() == "ANSWER = 42\n"
    assert (site / "tiny-1.0.dist-info" / "METADATA").is_file()


def test_no_fact_of_one_machine_in_the_gpu_tools():
    for name in ("gpu_report.py", "gpu_suite.py"):  # (gpu_runs.py names an H200 as an example)
        text = (ROOT / "tools" / name).read_text(encoding="utf-8")
        for fact in (r"/opt/", r"\b\d+ [MG]iB\b", r"device tool", r"\blent\b", r"\bH\d00\b", r"ON_GPU_MACHINE",
                     r"\bas of 20\d\d"):
            assert not re.search(fact, text), (name, fact)


# ------------------------------------------------------------------------------ gpu_report


def test_render_shows_what_a_reader_sees():
    outputs = [{"output_type": "stream", "name": "stdout", "text": "a\nb"},
               {"output_type": "stream", "name": "stdout", "text": "c\n"},
               {"output_type": "stream", "name": "stderr", "text": "warn\n"},
               {"output_type": "execute_result", "data": {"text/plain": "tensor([1.], device='cuda:0')"}},
               {"output_type": "display_data", "data": {"text/plain": "<Figure>", "image/png": "iVBORw0KGgo="}},
               {"output_type": "error", "ename": "RuntimeError", "evalue": "\x1b[31mboom\x1b[0m", "traceback": []}]
    assert gpu_report.render(outputs) == ("a\nbc\n[stderr] warn\ntensor([1.], device='cuda:0')\n<Figure>\n"
                                          "<image/png, 12 bytes>\nRuntimeError: boom\n")


def test_nbval_modes_are_nbvals_own():
    cell = nbformat.v4.new_code_cell
    assert gpu_report.nbval_mode(cell("x")) == "checked"
    assert gpu_report.nbval_mode(cell("import os\n# NBVAL_IGNORE_OUTPUT\nx")) == "ignored"
    assert gpu_report.nbval_mode(cell("x", metadata={"tags": ["nbval-ignore-output"]})) == "ignored"
    assert gpu_report.nbval_mode(cell("x", metadata={"tags": ["raises-exception"]})) == "must raise"
    assert gpu_report.nbval_mode(cell("x", metadata={"tags": ["raises-exception", "nbval-ignore-output"]})) == \
        "must raise"
    assert gpu_report.nbval_mode(cell("# NBVAL_SKIP\nx")) == "skipped"
    assert gpu_report.nbval_mode(cell("## NBVAL_SKIP\nx")) == "skipped"  # nbval strips every leading '#'
    # nbval reads a marker only as a whole comment, and a comment wins over a tag, as in its collect()
    assert gpu_report.nbval_mode(cell("x  # NBVAL_IGNORE_OUTPUT\n# NBVAL_IGNORE_OUTPUT please")) == "checked"
    assert gpu_report.nbval_mode(cell("# NBVAL_CHECK_OUTPUT\nx", metadata={"tags": ["nbval-ignore-output"]})) == \
        "checked"


def test_the_sanitizer_reads_the_file_as_nbval_does(tmp_path):
    from nbval.plugin import get_sanitize_patterns

    cfg = tmp_path / "sanitize.cfg"
    cfg.write_text("[a]\nregex: cuda:\\d+\nreplace: DEVICE\n# a comment\nregex: \\d+\\.\\d+ ms\nreplace: TIME\n"
                   "[b]\nregex: cuda:\\d+\nreplace: GPU\n")
    assert get_sanitize_patterns(cfg.read_text()) == [(r"cuda:\d+", "DEVICE"), (r"\d+\.\d+ ms", "TIME"),
                                                      (r"cuda:\d+", "GPU")]
    for args in (["--nbval", "--nbval-sanitize-with", str(cfg)], [f"--nbval-sanitize-with={cfg}", "-n", "4"],
                 ["--sanitize-with", str(cfg)]):
        sanitize = gpu_report.sanitizer(args)
        # one pattern per regex, the last replacement winning, in first-seen order: nbval's OrderedDict
        assert sanitize("cuda:1 took 3.25 ms\n<image/png, 12 bytes>\nend") == "GPU took TIME\nend"
    assert gpu_report.sanitizer(["--nbval", "-n", "4"])("cuda:1") == "cuda:1"


def test_side_by_side_shows_every_setting():
    def run(*outputs):
        return {"status": "ok", "seconds": 1.0, "cells": [
            {"index": i, "id": f"c{i}", "first_line": "x", "nbval": "checked", "output": o}
            for i, o in enumerate(outputs) if o is not None]}

    runs = {"all GPUs": run("2\n", "cuda:1\n", "a\n"), "one GPU": run("1\n", "cuda:0\n", "a\n"),
            "no GPU": run("0\n", "cpu\n", None)}
    md, row = gpu_report.side_by_side("nb.ipynb", runs, lambda t: t.replace("cuda:1", "cpu").replace("cuda:0", "cpu"))
    assert row == ("nb.ipynb", "ok, 1 s", "ok, 1 s", "ok, 1 s", "3", "3", "1")
    assert "all GPUs: ok, 1 s · one GPU: ok, 1 s · no GPU: ok, 1 s" in md
    assert "`c0` · `x` · nbval: checked · DIFFERS, also after nbval's sanitizer" in md
    assert "`c1` · `x` · nbval: checked · differs (same after nbval's sanitizer)" in md
    assert "`c2` · `x` · nbval: checked · ran under some settings only" in md
    assert "all GPUs:\n````text\n2\n````\n\none GPU:\n````text\n1\n````\n\nno GPU:\n````text\n0\n````" in md
    assert "no GPU:\n````text\n(not run)\n````" in md


SYNTHETIC = [
    'import os\nhidden = os.environ.get("CUDA_VISIBLE_DEVICES") == ""\nprint("no GPU" if hidden else "GPU")',
    "print(\"tensor([1.])\" if hidden else \"tensor([1.], device='cuda:0')\")",
    "1 + 1",
    'raise ValueError("on both sides")',
    'print("runs after an error")',
    "print(os.path.basename(os.getcwd()))",
    "pass",
]


@pytest.mark.slow
@posix
@cpu_torch
def test_the_side_by_side_step_writes_a_record(tmp_path):
    """`gpu_report run` for real on a tiny notebook, with both settings, on this machine without a GPU."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Tiny"), *map(nbformat.v4.new_code_cell, SYNTHETIC)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "nb" / "tiny.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    env = stand_in(tmp_path, [NO_DRIVER], code=9) | {"ALLOW_NO_GPU": "1"}
    run = subprocess.run([sys.executable, "-m", "tools.gpu_report", "run", "--notebooks", str(path), "--steps",
                          "side-by-side", "--report-dir", str(tmp_path / "report"), "--out", str(tmp_path / "out"),
                          "--nbval", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["gpu-report.log", "record", "report.md"]
    assert [p.name for p in (tmp_path / "out" / "record").iterdir()] == [f"{today}-no-gpu.json"]

    record = gpu_runs.load(tmp_path / "report" / "record" / f"{today}-no-gpu.json")  # validated as it loads
    assert record.gpu is False and record.date == today and record.settings == ["one GPU", "no GPU"]
    assert record.data["settings"] == {"one GPU": {"CUDA_VISIBLE_DEVICES": "0", "gpus_seen": 0},
                                       "no GPU": {"CUDA_VISIBLE_DEVICES": "", "gpus_seen": 0}}
    assert record.machine == {"gpus": [], "gpu_count": 0, "driver": None, "torch": torch.__version__,
                              "cuda": torch.version.cuda, "python": platform.python_version(),
                              "cpus": record.machine["cpus"]} and record.machine["cpus"] >= 1
    assert re.fullmatch(r"[0-9a-f]{40}|unknown", record.data["commit"])
    ids = [c.id for c in nb.cells[1:]]
    one, none = record.cells(str(path), "one GPU"), record.cells(str(path), "no GPU")
    assert [one.get(i) for i in ids] == ["GPU\n", "tensor([1.], device='cuda:0')\n", "2\n",
                                         "ValueError: on both sides\n", "runs after an error\n", "nb\n", None]
    assert [none.get(i) for i in ids] == ["no GPU\n", "tensor([1.])\n", *[one[i] for i in ids[2:6]], None]
    assert record.output("tiny.ipynb", ids[0]) == "GPU\n"  # no GPU setting saw one: the first setting
    assert record.data["notebooks"][str(path)]["no GPU"]["status"] == "ok"
    # every code cell's fingerprint, printed or not: a later change to a cell makes its output stale
    assert all(not record.stale(str(path), c.id, c.source) for c in nb.cells[1:])
    assert record.stale(str(path), ids[0], nb.cells[1].source + "\n# changed")

    report = (tmp_path / "out" / "report.md").read_text()
    assert f"Record: {tmp_path / 'report' / 'record' / today}-no-gpu.json (1 notebooks; one GPU, no GPU)" in report
    assert "copy it into gpu-runs/ and commit it" in report and "WITHOUT A GPU (gpu: false" in report
    assert report.startswith("# GPU report\n\nNO GPU:")
    assert re.search(re.escape(f"| {path}") + r" +\| ok, \d+ s +\| ok, \d+ s +\| 7 +\| 2 +\| 1 +\|", report)
    assert "#### Cell 0 `" in report and "DIFFERS, also after nbval's sanitizer" in report
    assert "#### Cell 1 `" in report and "differs (same after nbval's sanitizer)" in report
    assert "one GPU:\n````text\nGPU\n````\n\nno GPU:\n````text\nno GPU\n````" in report
    assert "#### Cell 6 `" in report and "· no output" in report
    assert "===== side by side: runs/" in (tmp_path / "out" / "gpu-report.log").read_text()


def test_the_compact_log_is_cut_only_when_asked(tmp_path):
    logs = tmp_path / "report" / "logs"
    logs.mkdir(parents=True)
    (logs / "01.log").write_bytes(b"x" * 3000 + b"y" * 3000)
    for kib, cut in ((None, False), (2, True)):
        report = gpu_report.Report(tmp_path / "report", tmp_path / "out", log_kib=kib)
        report.steps = [gpu_report.Step("nbval", "passed", 1.0, logs / "01.log")]
        report.write()
        text = (tmp_path / "out" / "gpu-report.log").read_text()
        assert ("[... cut (--log-kib) ...]" in text) is cut
        assert text.count("x") == (1024 if cut else 3000) and text.endswith("y" * 1024)


def test_failed_cells_are_read_from_the_pytest_log(tmp_path):
    log = tmp_path / "log"
    log.write_text("FAILED notebooks/01_devices.ipynb::Cell 5 - \x1b[91mNotebook cell execution failed\x1b[0m\n"
                   "FAILED notebooks/02_x.ipynb::Cell 12\nnot FAILED here\n")
    assert gpu_report.suite_failures(log) == ["notebooks/01_devices.ipynb::Cell 5", "notebooks/02_x.ipynb::Cell 12"]


def test_md_table_reads_as_text_too():
    assert gpu_report.md_table(("a", "long header"), [("x|y", "1")]) == (
        "| a    | long header |\n| ---- | ----------- |\n| x\\|y | 1           |")
