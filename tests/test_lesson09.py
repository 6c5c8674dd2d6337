"""Lesson 09's helpers: ddp_backend on simulated machines, free_port, and launch for real on the CPU.

The launches start `python -m torch.distributed.run` with scripts that do not import torch (the
launcher does), so each takes a few seconds: the environment torchrun sets, two launchers meeting
as two "nodes", a failing script, and the timeout path, which must leave no process and no file.
"""

from __future__ import annotations

import os
import re
import socket
import sys
import tempfile
from pathlib import Path

import pytest
import torch

import utils

ENV_SCRIPT = """\
import os
names = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT", "OMP_NUM_THREADS")
print(" ".join(f"{n}={os.environ.get(n)}" for n in names), flush=True)
"""
SLEEP_SCRIPT = """\
import os, time
print(f"pid {os.getpid()}", flush=True)
time.sleep(300)
"""
FAIL_SCRIPT = """\
import os, sys
print(f"rank {os.environ['RANK']} says: a marker-7f3a before failing", flush=True)
sys.exit(3)
"""


@pytest.fixture
def script(tmp_path):
    def write(text: str) -> Path:
        path = tmp_path / "script.py"
        path.write_text(text)
        return path

    return write


@pytest.fixture
def own_tempdir(tmp_path, monkeypatch):
    """Point tempfile at an empty folder of our own, to see what launch leaves there."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def lines_with(output: str, key: str) -> list[str]:
    return sorted(line for line in output.splitlines() if line.startswith(key))


# ddp_backend --------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("name", "device", "nproc", "expected"),
    [
        ("cpu-only", "cpu", 2, "gloo"),
        ("one-cuda-gpu", "cuda", 2, "gloo"),        # NCCL refuses two ranks on one GPU
        ("one-cuda-gpu", "cuda:0", 1, "nccl"),
        ("one-cuda-gpu", "cpu", 2, "gloo"),
        ("two-cuda-gpus", "cuda", 2, "nccl"),
        ("two-cuda-gpus", torch.device("cuda", 1), 2, "nccl"),
        ("two-cuda-gpus", "cuda", 3, "gloo"),
        ("apple-mps", "mps", 2, "gloo"),             # torch.distributed has no MPS backend
        ("apple-mps", "cpu", 2, "gloo"),
    ],
)
def test_ddp_backend_picks_nccl_only_with_a_cuda_gpu_for_every_process(machine, monkeypatch, name, device, nproc,
                                                                        expected):
    machine(name)
    monkeypatch.setattr(torch.distributed, "is_nccl_available", lambda: True)   # as PyTorch's Linux CUDA builds
    assert utils.ddp_backend(device, nproc) == expected


@pytest.mark.parametrize(("device", "nproc"), [("cuda", 2), ("cuda:0", 1), (torch.device("cuda", 1), 2)])
def test_ddp_backend_picks_gloo_where_pytorch_has_no_nccl(machine, monkeypatch, device, nproc):
    machine("two-cuda-gpus")
    monkeypatch.setattr(torch.distributed, "is_nccl_available", lambda: False)  # as PyTorch's Windows builds
    assert utils.ddp_backend(device, nproc) == "gloo"


@pytest.mark.parametrize(("name", "device"), [("cpu-only", "cuda"), ("one-cuda-gpu", "cuda:1"),
                                              ("two-cuda-gpus", "cuda:2")])
def test_ddp_backend_rejects_gpus_the_machine_lacks(machine, name, device):
    machine(name)
    with pytest.raises(ValueError, match="does not exist"):
        utils.ddp_backend(device)


@pytest.mark.parametrize(("device", "nproc", "error"), [
    (0, 2, TypeError), (None, 2, TypeError), ("cpu", 2.0, TypeError), ("cpu", True, TypeError),
    ("cpu", 0, ValueError), ("cpu", -1, ValueError), ("not-a-device", 2, ValueError),
])
def test_ddp_backend_rejects_bad_arguments_clearly(device, nproc, error):
    with pytest.raises(error):
        utils.ddp_backend(device, nproc)


# free_port ----------------------------------------------------------------------------------------

def test_free_port_returns_a_port_that_can_be_bound():
    port = utils.free_port()
    assert isinstance(port, int) and 0 < port < 65536
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", port))


# launch: bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"nproc": 0}, ValueError, "nproc must be at least 1"),
    ({"nproc": 1.5}, TypeError, "nproc must be an int"),
    ({"nproc": True}, TypeError, "nproc must be an int"),
    ({"nodes": 0}, ValueError, "nodes must be at least 1"),
    ({"timeout": 0}, ValueError, "timeout must be positive"),
    ({"timeout": "10"}, TypeError, "timeout must be a number"),
    ({"script_args": "--epochs 3"}, TypeError, "script_args must be a list of strings"),
    ({"extra_args": ["--standalone", 3]}, TypeError, "extra_args must be a list of strings"),
    ({"nodes": 2}, ValueError, "--standalone is for one node"),
])
def test_launch_rejects_bad_arguments_before_starting_anything(script, kwargs, error, message):
    path = script(ENV_SCRIPT)
    with pytest.raises(error, match=message):
        utils.launch(path, **kwargs)


def test_launch_rejects_a_missing_script_and_what_is_not_a_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="no script at"):
        utils.launch(tmp_path / "missing.py")
    with pytest.raises(TypeError, match="script must be a path"):
        utils.launch(42)


# launch: for real -------------------------------------------------------------------------------

@pytest.mark.slow
def test_launch_runs_two_processes_with_the_environment_torchrun_sets(script, own_tempdir):
    result = utils.launch(script(ENV_SCRIPT), 2, timeout=120)
    assert result.returncode == 0
    assert result.args[:4] == [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2"]
    lines = lines_with(result.stdout, "RANK=")
    assert len(lines) == 2, result.stdout
    for rank, line in enumerate(lines):
        assert f"RANK={rank} LOCAL_RANK={rank} WORLD_SIZE=2 GROUP_RANK=0" in line
        assert re.search(r"MASTER_ADDR=\S+ MASTER_PORT=\d+ OMP_NUM_THREADS=1$", line), line
    assert list(own_tempdir.iterdir()) == []          # the output's temporary files are gone


@pytest.mark.slow
def test_launch_plays_two_nodes_that_meet_at_one_rendezvous(script, own_tempdir):
    port = utils.free_port()
    result = utils.launch(script(ENV_SCRIPT), 1, nodes=2, timeout=120,
                          extra_args=["--rdzv-backend=c10d", f"--rdzv-endpoint=localhost:{port}", "--rdzv-id=test"])
    assert len(result.args) == 2 and "--node-rank=0" in result.args[0] and "--node-rank=1" in result.args[1]
    lines = lines_with(result.stdout, "RANK=")
    assert len(lines) == 2, result.stdout
    for rank, line in enumerate(lines):
        assert f"RANK={rank} LOCAL_RANK=0 WORLD_SIZE=2 GROUP_RANK={rank}" in line
    assert list(own_tempdir.iterdir()) == []


@pytest.mark.slow
def test_launch_raises_with_the_end_of_the_output_when_the_script_fails(script, own_tempdir):
    with pytest.raises(RuntimeError, match="failed") as info:
        utils.launch(script(FAIL_SCRIPT), 2, timeout=120)
    assert "a marker-7f3a before failing" in str(info.value)
    assert list(own_tempdir.iterdir()) == []


# What a rank prints when NCCL cannot start in a container with a small /dev/shm (the shape of NCCL's
# and torch's messages: ProcessGroupNCCL.cpp's DistBackendError, NCCL's result code and its last error).
NCCL_FAILURE = """\
torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, \
unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5
ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.
Last error:
Error while creating shared memory segment /dev/shm/nccl-vzIpS6 (size 9637888)
"""
NCCL_FAIL_SCRIPT = f"""\
import sys
sys.stderr.write({NCCL_FAILURE!r})
sys.exit(1)
"""


def test_nccl_advice_names_what_to_try_only_when_nccl_failed():
    advice = utils._nccl_advice(NCCL_FAILURE)
    assert "NCCL, the backend between GPUs, could not start" in advice
    assert all(s in advice for s in ('NCCL_P2P_DISABLE="1"', "/dev/shm", "--shm-size", '"gloo"', "NCCL_DEBUG"))
    assert utils._nccl_advice("rank 0 says: a marker-7f3a before failing\nexit code 3") == ""


@pytest.mark.slow
def test_launch_adds_what_to_try_when_nccl_cannot_start(script, own_tempdir):
    with pytest.raises(RuntimeError, match="failed") as info:
        utils.launch(script(NCCL_FAIL_SCRIPT), 2, timeout=120)
    message = str(info.value)
    assert "Error while creating shared memory segment" in message
    assert message.rstrip().endswith('makes NCCL say why.')


def test_head_and_tail_keeps_both_ends_of_a_long_output():
    short = "abc"
    assert utils._head_and_tail(short, 10) == short
    text = "HEAD" + "x" * 10_000 + "TAIL"
    kept = utils._head_and_tail(text, 300)
    assert kept.startswith("HEAD") and kept.endswith("TAIL") and "[...]" in kept and len(kept) < 320


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="os.kill(pid, 0) would stop the process on Windows")
def test_launch_stops_every_process_when_the_timeout_passes(script, own_tempdir):
    with pytest.raises(TimeoutError, match="did not finish within 10") as info:
        utils.launch(script(SLEEP_SCRIPT), 2, timeout=10)
    pids = [int(p) for p in re.findall(r"pid (\d+)", str(info.value))]
    assert len(pids) == 2, str(info.value)           # both processes had started
    assert not [pid for pid in pids if alive(pid)]
    assert list(own_tempdir.iterdir()) == []


# write_ddp_extras, read_reports, process_exists (lessons 13 and 14) ------------------------------

def test_ddp_extras_reports_what_each_process_saw_and_read_reports_sorts_them_by_rank(tmp_path, monkeypatch):
    path = utils.write_ddp_extras(tmp_path)
    assert path == tmp_path / "ddp_extras.py" and path.is_file()
    monkeypatch.syspath_prepend(str(tmp_path))
    import ddp_extras

    for rank in (1, 0):  # written out of order, read back by RANK
        monkeypatch.setenv("RANK", str(rank))
        ddp_extras.report(str(tmp_path), rank, losses=[1.0, 0.5])
    reports = utils.read_reports(tmp_path)
    assert [r["env"]["RANK"] for r in reports] == ["0", "1"]
    assert all(r["losses"] == [1.0, 0.5] and r["pid"] == os.getpid() for r in reports)
    assert len(ddp_extras.make_data()) == 256 and ddp_extras.make_model()[0].in_features == 16


def test_process_exists_sees_this_process_and_not_a_finished_one():
    import subprocess

    assert utils.process_exists(os.getpid())
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    assert not utils.process_exists(int(finished.stdout))
