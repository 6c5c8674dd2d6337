"""utils.py on simulated machines: no GPU, one CUDA GPU, two CUDA GPUs, Apple MPS."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import utils

cpu, meta, mps = torch.device("cpu"), torch.device("meta"), torch.device("mps:0")
cuda0, cuda1 = torch.device("cuda:0"), torch.device("cuda:1")


@pytest.mark.parametrize(
    ("name", "first", "second", "all_gpus", "pair"),
    [
        ("cpu-only", cpu, cpu, [cpu], (cpu, meta)),
        ("one-cuda-gpu", cuda0, cpu, [cuda0], (cuda0, cpu)),
        ("two-cuda-gpus", cuda0, cuda1, [cuda0, cuda1], (cuda0, cuda1)),
        ("apple-mps", mps, cpu, [mps], (mps, cpu)),
    ],
)
def test_helpers_pick_the_devices_each_machine_has(machine, name, first, second, all_gpus, pair):
    machine(name)
    assert utils.try_gpu() == first
    assert utils.try_gpu(1) == second
    assert utils.try_all_gpus() == all_gpus
    assert utils.two_different_devices() == pair


@pytest.mark.parametrize("name", ["cpu-only", "one-cuda-gpu", "two-cuda-gpus", "apple-mps"])
def test_try_gpu_falls_back_to_cpu_past_the_last_gpu(machine, name):
    machine(name)
    assert utils.try_gpu(10) == cpu


def test_try_all_gpus_never_returns_an_empty_list_without_a_gpu(machine):
    machine("cpu-only")
    assert utils.try_all_gpus() == [cpu]


def test_two_different_devices_are_always_different(machine):
    for name in ["cpu-only", "one-cuda-gpu", "two-cuda-gpus", "apple-mps"]:
        machine(name)
        a, b = utils.two_different_devices()
        assert a != b


def test_the_cpu_only_pair_really_refuses_to_mix():
    a, b = torch.device("cpu"), torch.device("meta")
    with pytest.raises(RuntimeError, match="device"):
        torch.ones(2, 3, device=a) + torch.ones(2, 3, device=b)


@pytest.mark.parametrize("bad", [-1, -100])
def test_try_gpu_rejects_a_negative_index(bad):
    with pytest.raises(ValueError, match="0 or more"):
        utils.try_gpu(bad)


@pytest.mark.parametrize("bad", ["1", 1.0, None, True, [0]])
def test_try_gpu_rejects_an_index_that_is_not_an_int(bad):
    with pytest.raises(TypeError, match="must be an int"):
        utils.try_gpu(bad)


def test_model_device_names_the_one_device_of_a_model():
    net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    assert utils.model_device(net) == cpu
    assert utils.model_device(net.to("meta")) == meta


def test_model_device_refuses_a_model_spread_over_devices():
    net = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1).to("meta"))
    with pytest.raises(ValueError, match="cpu, meta"):
        utils.model_device(net)


def test_model_device_counts_buffers_too():
    net = nn.BatchNorm1d(4, affine=False)  # buffers only, no parameters
    assert utils.model_device(net) == cpu


def test_model_device_refuses_a_model_without_tensors():
    with pytest.raises(ValueError, match="no parameters or buffers"):
        utils.model_device(nn.ReLU())


def test_model_device_refuses_what_is_not_a_module():
    with pytest.raises(TypeError, match=r"nn\.Module"):
        utils.model_device(torch.ones(3))


def test_hardware_summary_says_plainly_when_there_is_no_gpu(machine, monkeypatch):
    machine("cpu-only")
    monkeypatch.setattr(utils, "hosted_notebook", lambda: None)
    monkeypatch.setattr(utils, "driver_cuda_version", lambda: None)
    text = utils.hardware_summary()
    assert "No GPU found" in text and "Runtime" not in text


@pytest.mark.parametrize(("service", "hint"), [("Colab", "Change runtime type"), ("Kaggle", "Accelerator")])
def test_hardware_summary_tells_how_to_switch_a_gpu_on(machine, monkeypatch, service, hint):
    machine("cpu-only")
    monkeypatch.setattr(utils, "hosted_notebook", lambda: service)
    monkeypatch.setattr(utils, "driver_cuda_version", lambda: None)
    assert hint in utils.hardware_summary()


def test_hardware_summary_names_the_fix_for_a_cpu_only_build_on_a_gpu_machine(machine, monkeypatch):
    machine("cpu-only")
    monkeypatch.setattr(utils, "hosted_notebook", lambda: None)
    monkeypatch.setattr(utils, "driver_cuda_version", lambda: "12.4")
    monkeypatch.setattr(torch.version, "cuda", None)
    assert "whl/cu124" in utils.hardware_summary()


def test_hardware_summary_names_each_gpu(machine, monkeypatch):
    machine("two-cuda-gpus")
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d: f"Tesla T4 #{torch.device(d).index}")
    text = utils.hardware_summary()
    assert "GPU cuda:0: Tesla T4 #0" in text and "GPU cuda:1: Tesla T4 #1" in text
    assert "will use cuda:0" in text


def testhosted_notebook_is_recognised_from_the_environment(monkeypatch):
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab")
    assert utils.hosted_notebook() == "Colab"
    monkeypatch.delenv("COLAB_RELEASE_TAG")
    monkeypatch.setenv("KAGGLE_KERNEL_RUN_TYPE", "Interactive")
    assert utils.hosted_notebook() == "Kaggle"


def test_importing_utils_touches_no_hardware(monkeypatch):
    import importlib

    def fail(*args):
        raise AssertionError("utils queried the hardware at import time")

    monkeypatch.setattr(torch.cuda, "device_count", fail)
    monkeypatch.setattr(torch.backends.mps, "is_available", fail)
    importlib.reload(utils)


SMI_HEADER = """
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.90.07              Driver Version: 550.90.07      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
"""  # the header of a real nvidia-smi table (Kaggle, two T4s), from the series' source notes


def test_driver_cuda_version_reads_nvidia_smi(monkeypatch):
    import subprocess

    monkeypatch.setattr(utils.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(utils.subprocess, "run",
                        lambda *a, **k: subprocess.CompletedProcess(a, 0, stdout=SMI_HEADER, stderr=""))
    assert utils.driver_cuda_version() == "12.4"


def test_driver_cuda_version_is_none_without_a_driver(monkeypatch):
    monkeypatch.setattr(utils.shutil, "which", lambda name: None)
    assert utils.driver_cuda_version() is None


def test_driver_cuda_version_is_none_when_nvidia_smi_fails(monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("driver not loaded")

    monkeypatch.setattr(utils.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(utils.subprocess, "run", broken)
    assert utils.driver_cuda_version() is None


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        (dict(driver_cuda="12.4", torch_cuda=None, cuda_available=False), "whl/cu124"),
        (dict(driver_cuda="12.7", torch_cuda=None, cuda_available=False), "whl/cu126"),
        (dict(driver_cuda="11.4", torch_cuda=None, cuda_available=False), "update the NVIDIA driver"),
        (dict(driver_cuda="12.2", torch_cuda="12.8", cuda_available=False), "update the driver"),
        (dict(driver_cuda="12.8", torch_cuda="12.4", cuda_available=False), "CUDA_VISIBLE_DEVICES"),
        (dict(driver_cuda=None, torch_cuda="12.4", cuda_available=False, service="Colab"), "Change runtime type"),
        (dict(driver_cuda=None, torch_cuda="12.4", cuda_available=False, service="Kaggle"), "Accelerator"),
    ],
)
def test_setup_advice_names_the_fix_for_each_common_problem(facts, expected):
    advice = utils.setup_advice(**facts)
    assert len(advice) == 1 and expected in advice[0]


@pytest.mark.parametrize(
    "facts",
    [
        dict(driver_cuda=None, torch_cuda=None, cuda_available=False),  # laptop without a GPU
        dict(driver_cuda=None, torch_cuda=None, cuda_available=False, mps_available=True),  # Mac
        dict(driver_cuda="12.4", torch_cuda="12.4", cuda_available=True),  # working CUDA machine
    ],
)
def test_setup_advice_is_silent_when_nothing_needs_fixing(facts):
    assert utils.setup_advice(**facts) == []
