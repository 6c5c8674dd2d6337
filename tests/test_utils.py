"""utils.py on simulated machines: no GPU, one CUDA GPU, two CUDA GPUs, Apple MPS."""

from __future__ import annotations

import warnings

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


def test_helpers_ignore_a_gpu_that_cuda_counts_but_cannot_use(monkeypatch):
    # A driver too old for the build: NVML counts the GPU, the CUDA runtime cannot use it.
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert utils.try_gpu() == cpu and utils.try_all_gpus() == [cpu]
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d: pytest.fail("asked a GPU CUDA cannot use"))
    monkeypatch.setattr(utils, "hosted_notebook", lambda: None)
    monkeypatch.setattr(utils, "driver_cuda_version", lambda: "12.4")
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    monkeypatch.setattr(torch, "__version__", "2.13.0+cu130")
    text = utils.hardware_summary()
    assert "No GPU found" in text and "update the NVIDIA driver" in text


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
    monkeypatch.setattr(utils.shutil, "which", lambda name: None)
    text = utils.hardware_summary()
    assert "No GPU found" in text and "Runtime" not in text
    assert "None" not in text  # no advice is no line, not the word None
    assert len(text.splitlines()) == 2


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
    monkeypatch.setattr(torch, "__version__", "2.13.0+cpu")
    assert "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cu126" in utils.hardware_summary()


def test_hardware_summary_points_an_amd_machine_without_a_rocm_build_to_one(machine, monkeypatch):
    machine("cpu-only")  # a CPU-only wheel on a machine with an AMD GPU
    monkeypatch.setattr(utils, "hosted_notebook", lambda: None)
    monkeypatch.setattr(utils, "driver_cuda_version", lambda: None)
    monkeypatch.setattr(utils.shutil, "which", lambda name: "/usr/bin/amd-smi" if name == "amd-smi" else None)
    monkeypatch.setattr(torch.version, "cuda", None)
    monkeypatch.setattr(torch.version, "hip", None)
    text = utils.hardware_summary()
    assert "No GPU found" in text and "ROCm build" in text


def test_hardware_summary_names_each_gpu(machine, monkeypatch):
    machine("two-cuda-gpus")
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d: f"Tesla T4 #{torch.device(d).index}")
    monkeypatch.setattr(torch.version, "cuda", None)
    text = utils.hardware_summary()
    assert "GPU cuda:0: Tesla T4 #0" in text and "GPU cuda:1: Tesla T4 #1" in text
    assert "will use cuda:0" in text


def test_hardware_summary_reports_a_rocm_build_as_rocm_not_as_cpu_only(machine, monkeypatch):
    machine("one-cuda-gpu")  # an AMD GPU: a ROCm build calls it cuda:0 too
    monkeypatch.setattr(torch.version, "cuda", None)
    monkeypatch.setattr(torch.version, "hip", "7.2.26015-fc0010cf6a")
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d: "AMD Instinct MI300X")
    text = utils.hardware_summary()
    assert "ROCm build: HIP 7.2" in text and "CUDA build: no" not in text
    assert "GPU cuda:0: AMD Instinct MI300X" in text and "no code for this GPU" not in text


# torch.cuda.get_arch_list() of PyTorch's builds for x86-64: the CUDA 13.0 build starts at Turing, cu126 at
# Maxwell (torch/cuda/__init__.py, PYTORCH_RELEASES_CODE_CC).
CU130_ARCHES = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]  # measured: PyPI torch 2.14.1
CU126_ARCHES = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]


@pytest.mark.parametrize(
    ("arches", "capability", "warned"),
    [
        (CU130_ARCHES, (6, 0), True),  # Kaggle's P100 (Pascal) with a CUDA 13 build
        (CU130_ARCHES, (7, 0), True),  # V100 (Volta)
        (CU130_ARCHES, (7, 5), False),  # T4 (Turing)
        (CU130_ARCHES, (8, 9), False),  # L4, RTX 40xx: sm_86 code runs on 8.9
        (CU126_ARCHES, (6, 0), False),
        (CU126_ARCHES, (12, 0), True),  # RTX 50xx (Blackwell) with cu126
        (["sm_80", "compute_80"], (12, 0), False),  # portable PTX code runs on any newer GPU
    ],
)
def test_hardware_summary_warns_when_the_build_has_no_code_for_a_gpu(machine, monkeypatch, arches, capability,
                                                                     warned):
    machine("one-cuda-gpu")
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d: "Tesla P100-PCIE-16GB")
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda d: capability)
    monkeypatch.setattr(torch.cuda, "get_arch_list", lambda: arches)
    text = utils.hardware_summary()
    assert ("no kernel image is available for execution on the device" in text) == warned
    assert "will use cuda:0" in text


def test_hosted_notebook_is_recognised_from_the_environment(monkeypatch):
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab")
    assert utils.hosted_notebook() == "Colab"
    monkeypatch.delenv("COLAB_RELEASE_TAG")
    monkeypatch.setenv("KAGGLE_KERNEL_RUN_TYPE", "Interactive")
    assert utils.hosted_notebook() == "Kaggle"


def test_importing_utils_touches_no_hardware(monkeypatch):
    import importlib.util

    def fail(*args):
        raise AssertionError("utils queried the hardware at import time")

    monkeypatch.setattr(torch.cuda, "device_count", fail)
    monkeypatch.setattr(torch.backends.mps, "is_available", fail)
    # A fresh copy under another name: reloading `utils` itself would give every other test's
    # imported classes (StepTimes, Timing) a twin that isinstance does not recognise.
    spec = importlib.util.spec_from_file_location("utils_imported_afresh", utils.__file__)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


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
        (dict(driver_cuda="12.4", torch_cuda=None), "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cu126"),
        (dict(driver_cuda="13.0", torch_cuda=None), "(or cu130 for a Blackwell GPU, such as an RTX 50xx)"),
        (dict(driver_cuda="11.4", torch_cuda=None), 'pip install "torch==2.7.*" --index-url https://download.pytorch.org/whl/cu118'),
        (dict(driver_cuda="11.4", torch_cuda=None), "update the NVIDIA driver"),
        (dict(driver_cuda="12.4", torch_cuda="13.0"), "update the NVIDIA driver, or install the CUDA 12.6 build"),
        (dict(driver_cuda="12.2", torch_cuda="12.8"), "CUDA_VISIBLE_DEVICES"),  # minor-version compatibility
        (dict(driver_cuda=None, torch_cuda="12.6", service="Colab"), "Change runtime type"),
        (dict(driver_cuda=None, torch_cuda="12.6", service="Kaggle"), "Accelerator"),
    ],
)
def test_setup_advice_names_the_fix_for_each_common_problem(facts, expected):
    advice = utils.setup_advice(**facts, cuda_available=False, torch_version="2.13.0")
    assert isinstance(advice, str) and expected in advice


@pytest.mark.parametrize(
    "facts",
    [
        dict(driver_cuda=None, torch_cuda=None, cuda_available=False),  # laptop without a GPU
        dict(driver_cuda=None, torch_cuda=None, cuda_available=False, mps_available=True),  # Mac
        dict(driver_cuda="12.4", torch_cuda="12.4", cuda_available=True),  # working CUDA machine
    ],
)
def test_setup_advice_is_silent_when_nothing_needs_fixing(facts):
    assert utils.setup_advice(**facts) is None


def test_setup_advice_takes_keywords_only():
    with pytest.raises(TypeError):
        utils.setup_advice("12.4", None, False)


@pytest.mark.parametrize(("release", "driver", "tag"), [
    ("2.4.1", "12.2", "cu124"), ("2.6.0", "12.2", "cu126"), ("2.7.1", "11.4", "cu118"),
    ("2.8.0", "12.9", "cu126"), ("2.12.1+cpu", "13.0", "cu126"), ("2.14.1", "12.2", "cu126"),
])
def test_setup_advice_pins_the_release_and_names_only_a_build_it_publishes(release, driver, tag):
    advice = utils.setup_advice(driver_cuda=driver, torch_cuda=None, cuda_available=False, torch_version=release)
    pinned = release.split("+")[0]
    assert f"pip install torch=={pinned} --index-url https://download.pytorch.org/whl/{tag}" in advice


def test_setup_advice_offers_no_blackwell_build_to_a_driver_too_old_for_blackwell():
    # Blackwell GPUs need driver 570 (CUDA 12.8) or later: a 12.4 driver cannot be driving one.
    advice = utils.setup_advice(driver_cuda="12.4", torch_cuda=None, cuda_available=False, torch_version="2.11.0")
    assert "cu126" in advice and "Blackwell" not in advice
    advice = utils.setup_advice(driver_cuda="12.8", torch_cuda=None, cuda_available=False, torch_version="2.11.0")
    assert "(or cu128 for a Blackwell GPU" in advice


def test_setup_advice_sends_a_cuda_12_driver_back_to_the_last_release_with_a_cuda_12_build():
    advice = utils.setup_advice(driver_cuda="12.4", torch_cuda=None, cuda_available=False, torch_version="2.15.0")
    assert "update the NVIDIA driver" in advice
    assert advice.endswith('pip install "torch==2.14.*" --index-url https://download.pytorch.org/whl/cu126')


def test_setup_advice_names_a_known_release_for_a_release_it_does_not_know():
    advice = utils.setup_advice(driver_cuda="13.0", torch_cuda=None, cuda_available=False, torch_version="2.16.0")
    assert "does not know" in advice and "cuXYZ" not in advice and "torch==2.16" not in advice
    assert advice.endswith('pip install "torch==2.15.*" --index-url https://download.pytorch.org/whl/cu132')


@pytest.mark.parametrize("bad", [213, 2.13, ["2.13.0"]])
def test_setup_advice_rejects_a_torch_version_that_is_not_a_string(bad):
    with pytest.raises(TypeError, match="PyTorch version is a string"):
        utils.setup_advice(driver_cuda="12.4", torch_cuda=None, cuda_available=False, torch_version=bad)


@pytest.mark.parametrize("bad", ["", "latest", "v2.13"])
def test_setup_advice_rejects_a_malformed_torch_version(bad):
    with pytest.raises(ValueError, match="not a PyTorch version"):
        utils.setup_advice(driver_cuda="12.4", torch_cuda=None, cuda_available=False, torch_version=bad)


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_setup_advice_rejects_availability_that_is_not_a_bool(bad):
    with pytest.raises(TypeError, match="True or False"):
        utils.setup_advice(driver_cuda=None, torch_cuda=None, cuda_available=bad)


# --- Lesson 05: synchronize, median_seconds, median_and_iqr_seconds, gpu_peaks, matmul_peak_tflops,
# and the measuring helpers that `make bench` reuses ---------------------------------------------


@pytest.mark.parametrize(("device", "cuda_calls", "mps_calls"),
                         [(cuda1, [cuda1], 0), (mps, [], 1), (cpu, [], 0), (meta, [], 0)])
def test_synchronize_waits_for_the_named_device_and_only_for_a_gpu(monkeypatch, device, cuda_calls, mps_calls):
    waited_cuda, waited_mps = [], []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda d=None: waited_cuda.append(d))
    monkeypatch.setattr(torch.mps, "synchronize", lambda: waited_mps.append(1))
    utils.synchronize(device)
    assert waited_cuda == cuda_calls and len(waited_mps) == mps_calls


@pytest.mark.parametrize("measure", [utils.median_seconds, utils.median_and_iqr_seconds])
def test_timing_helpers_synchronise_the_named_device_after_every_call(monkeypatch, measure):
    calls, waits = [], []
    monkeypatch.setattr(utils, "synchronize", lambda d: waits.append(torch.device(d)))
    measure(lambda: calls.append(1), cuda1, min_run_time=0.001)
    assert len(calls) >= 2 and waits == [cuda1] * len(calls)  # the warm-up included


@pytest.mark.parametrize("measure", [utils.median_seconds, utils.median_and_iqr_seconds])
def test_timing_helpers_keep_the_current_cpu_threads_not_timers_default_of_one(measure):
    seen = []
    measure(lambda: seen.append(torch.get_num_threads()), cpu, min_run_time=0.001)
    assert set(seen) == {torch.get_num_threads()}


def test_median_and_iqr_seconds_times_at_least_four_blocks_after_a_warm_up():
    import time

    calls = []

    def nap() -> None:
        calls.append(1)
        time.sleep(0.002)

    median, iqr = utils.median_and_iqr_seconds(nap, cpu, min_run_time=0.001)
    assert len(calls) >= 1 + 1 + 4  # warm-up, Timer's block-size estimate, four blocks of one call
    assert median >= 0.002 and 0 <= iqr < median


@pytest.mark.parametrize("measure", [utils.median_seconds, utils.median_and_iqr_seconds])
@pytest.mark.parametrize(("fn", "min_run_time", "error"),
                         [(42, 0.1, TypeError), (lambda: None, "0.1", TypeError), (lambda: None, True, TypeError),
                          (lambda: None, 0, ValueError), (lambda: None, -1.0, ValueError)])
def test_timing_helpers_reject_bad_arguments_with_a_clear_error(measure, fn, min_run_time, error):
    with pytest.raises(error, match=r"fn must be callable|min_run_time must be"):
        measure(fn, cpu, min_run_time=min_run_time)


# torch.cuda.get_device_name as NVIDIA's drivers report each model, and what the data sheets give:
# (fp32 TFLOP/s, TF32 TFLOP/s or None before Ampere, memory GB/s, host link GB/s in one direction).
KNOWN_GPUS = [
    ("Tesla T4", (8.1, None, 320.0, 15.75)),
    ("Tesla P100-PCIE-16GB", (9.3, None, 732.0, 15.75)),
    ("Tesla V100-SXM2-32GB", (15.7, None, 900.0, 15.75)),
    ("Tesla V100-PCIE-16GB", (14.0, None, 900.0, 15.75)),
    ("Tesla V100S-PCIE-32GB", (16.4, None, 1134.0, 15.75)),
    ("NVIDIA A100-SXM4-80GB", (19.5, 156.0, 2039.0, 31.5)),
    ("A100-SXM4-40GB", (19.5, 156.0, 1555.0, 31.5)),  # drivers before R460 had no "NVIDIA " prefix
    ("NVIDIA A100-PCIE-40GB", (19.5, 156.0, 1555.0, 31.5)),
    ("NVIDIA A100 80GB PCIe", (19.5, 156.0, 1935.0, 31.5)),
    ("NVIDIA A10", (31.2, 62.5, 600.0, 31.5)),
    ("NVIDIA L4", (30.3, 60.0, 300.0, 31.5)),
    ("NVIDIA L40S", (91.6, 183.0, 864.0, 31.5)),
    ("NVIDIA H100 80GB HBM3", (67.0, 494.5, 3350.0, 63.0)),
    ("NVIDIA H100 PCIe", (51.0, 378.0, 2000.0, 63.0)),
    ("NVIDIA H100 NVL", (60.0, 417.5, 3900.0, 63.0)),
    ("NVIDIA H200", (67.0, 494.5, 4800.0, 63.0)),
    ("NVIDIA H200 NVL", (60.0, 417.5, 4800.0, 63.0)),
    ("NVIDIA GH200 480GB", (67.0, 494.5, 4000.0, 450.0)),
]


@pytest.mark.parametrize(("name", "figures"), KNOWN_GPUS)
def test_gpu_peaks_gives_each_model_its_own_data_sheet_figures(monkeypatch, name, figures):
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d=None: name)
    peaks = utils.gpu_peaks(cuda0)
    assert (peaks["fp32_tflops"], peaks.get("tf32_tflops"), peaks["memory_gbps"], peaks["host_link_gbps"]) == figures
    assert peaks["fp16_tflops"] > peaks["fp32_tflops"]  # the tensor cores' peak is the higher one


@pytest.mark.parametrize("name", ["NVIDIA RTX A1000", "NVIDIA RTX A1000 6GB Laptop GPU", "NVIDIA T400",
                                  "NVIDIA T400 4GB", "NVIDIA GeForce RTX 4090", "NVIDIA A10G", "NVIDIA L40G",
                                  "NVIDIA H100", "AMD Instinct MI300X", "Quadro T4000", ""])
def test_gpu_peaks_gives_no_figures_to_a_model_it_does_not_know_even_with_a_similar_name(monkeypatch, name):
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d=None: name)
    assert utils.gpu_peaks(cuda0) is None


def test_gpu_peaks_tells_apart_the_names_that_share_a_part(monkeypatch):
    def peaks(name: str) -> dict | None:
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda d=None: name)
        return utils.gpu_peaks(cuda0)

    assert peaks("NVIDIA GH200 480GB")["host_link_gbps"] == 450.0 != peaks("NVIDIA H200")["host_link_gbps"]
    assert peaks("NVIDIA H200 NVL")["fp32_tflops"] == 60.0 != peaks("NVIDIA H200")["fp32_tflops"]
    assert peaks("NVIDIA H100 NVL")["memory_gbps"] == 3900.0 != peaks("NVIDIA H100 80GB HBM3")["memory_gbps"]
    assert peaks("Tesla V100S-PCIE-32GB")["fp32_tflops"] == 16.4 != peaks("Tesla V100-PCIE-32GB")["fp32_tflops"]
    assert peaks("NVIDIA L40S")["fp32_tflops"] == 91.6 != peaks("NVIDIA L40")["fp32_tflops"]
    assert peaks("NVIDIA L4")["memory_gbps"] == 300.0


@pytest.mark.parametrize("device", [cpu, mps, meta])
def test_gpu_peaks_and_matmul_peak_know_nothing_of_a_cpu_or_a_mac(device):
    assert utils.gpu_peaks(device) is None
    assert utils.matmul_peak_tflops(device) is None


@pytest.mark.parametrize(("name", "dtype", "tf32", "expected"), [
    ("Tesla T4", torch.float32, False, (8.1, "float32")),
    ("Tesla T4", torch.float32, True, (8.1, "float32")),  # no TF32 before Ampere: the switch changes nothing
    ("Tesla T4", torch.float16, False, (65.0, "float16")),
    ("Tesla T4", torch.bfloat16, False, None),  # no bfloat16 tensor cores on Turing
    ("NVIDIA A100-SXM4-80GB", torch.float32, False, (19.5, "float32")),
    ("NVIDIA A100-SXM4-80GB", torch.float32, True, (156.0, "TF32")),
    ("NVIDIA A100-SXM4-80GB", torch.bfloat16, False, (312.0, "bfloat16")),
    ("NVIDIA H200", torch.float32, True, (494.5, "TF32")),
    ("NVIDIA H200", torch.float64, False, None),
])
def test_matmul_peak_tflops_picks_the_peak_that_applies(monkeypatch, name, dtype, tf32, expected):
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d=None: name)
    assert utils.matmul_peak_tflops(cuda0, dtype, tf32=tf32) == expected


@pytest.mark.parametrize(("precision", "expected"), [("high", (156.0, "TF32")), ("highest", (19.5, "float32"))])
def test_matmul_peak_tflops_follows_the_tf32_setting_in_force(monkeypatch, precision, expected):
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d=None: "NVIDIA A100 80GB PCIe")
    before = torch.get_float32_matmul_precision()  # a setting of torch's, which monkeypatch cannot restore
    torch.set_float32_matmul_precision(precision)
    try:
        assert utils.matmul_peak_tflops(cuda0) == expected
    finally:
        torch.set_float32_matmul_precision(before)


class _SwitchesBefore29:
    """``torch.backends.cuda.matmul`` or ``torch.backends.cudnn`` of PyTorch 2.4 to 2.8: ``allow_tf32`` only."""

    def __init__(self, allow_tf32: bool):
        self.allow_tf32 = allow_tf32


class _SwitchesFrom29:
    """The same switches from PyTorch 2.9 on: ``fp32_precision`` (on cuDNN under ``conv``), and an
    old ``allow_tf32`` that must not be read (2.9.0 warns when it is)."""

    def __init__(self, precision: str):
        self.fp32_precision = precision
        self.conv = self  # torch.backends.cudnn.conv.fp32_precision; matmul has no conv, and it is not read there

    @property
    def allow_tf32(self) -> bool:
        raise AssertionError("read allow_tf32 although this release has fp32_precision")


def _release(monkeypatch, switches) -> None:
    monkeypatch.setattr(torch.backends.cuda, "matmul", switches)
    monkeypatch.setattr(torch.backends, "cudnn", switches)


@pytest.mark.parametrize("op", ["matmul", "conv"])
@pytest.mark.parametrize(("precision", "expected"), [("tf32", True), ("ieee", False), ("none", False)])
def test_tf32_allowed_reads_fp32_precision_on_releases_that_have_it(monkeypatch, op, precision, expected):
    _release(monkeypatch, _SwitchesFrom29(precision))
    assert utils.tf32_allowed(op) is expected


@pytest.mark.parametrize("op", ["matmul", "conv"])
@pytest.mark.parametrize("allow_tf32", [True, False])
def test_tf32_allowed_reads_allow_tf32_on_releases_before_2_9(monkeypatch, op, allow_tf32):
    _release(monkeypatch, _SwitchesBefore29(allow_tf32))
    assert utils.tf32_allowed(op) is allow_tf32


def test_matmul_peak_tflops_reads_the_tf32_setting_through_fp32_precision_where_it_exists(monkeypatch):
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d=None: "NVIDIA A100 80GB PCIe")
    _release(monkeypatch, _SwitchesFrom29("tf32"))
    assert utils.matmul_peak_tflops(cuda0) == (156.0, "TF32")


def test_tf32_allowed_reads_the_installed_torch_without_a_warning():
    before = torch.get_float32_matmul_precision()
    try:
        for precision, matmul in (("highest", False), ("high", True)):
            torch.set_float32_matmul_precision(precision)
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # PyTorch 2.9.0 warns when the old names are read
                assert utils.tf32_allowed("matmul") is matmul
                assert utils.tf32_allowed("conv") is True  # cuDNN's default, on every release
    finally:
        torch.set_float32_matmul_precision(before)


@pytest.mark.skipif(not hasattr(torch.backends.cuda.matmul, "fp32_precision"), reason="PyTorch 2.9 and later only")
def test_tf32_allowed_follows_the_new_switch_even_where_the_old_name_cannot_be_read():
    before = torch.backends.cuda.matmul.fp32_precision
    # Set with the new name alone, the state has no old spelling: reading allow_tf32 now raises a RuntimeError.
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert utils.tf32_allowed("matmul") is True
    finally:
        torch.backends.cuda.matmul.fp32_precision = before


def test_tf32_allowed_rejects_another_kind_of_work():
    with pytest.raises(ValueError, match="matmul"):
        utils.tf32_allowed("rnn")


def test_matmul_peak_tflops_rejects_what_is_not_a_dtype():
    with pytest.raises(TypeError, match=r"torch\.dtype"):
        utils.matmul_peak_tflops(cpu, "float32")


def test_matmul_gflops_and_its_numpy_yardstick_measure_a_positive_rate():
    assert utils.matmul_gflops(16, cpu, min_run_time=0.001) > 0
    assert utils.matmul_gflops(16, cpu, torch.float64, min_run_time=0.001) > 0
    assert utils.numpy_matmul_gflops(16, min_run_time=0.001) > 0


@pytest.mark.parametrize(("n", "dtype", "error"), [(16.0, torch.float32, TypeError), (True, torch.float32, TypeError),
                                                    ("16", torch.float32, TypeError), (0, torch.float32, ValueError),
                                                    (16, torch.int32, TypeError), (16, "float32", TypeError)])
def test_matmul_gflops_rejects_bad_arguments_with_a_clear_error(n, dtype, error):
    with pytest.raises(error, match=r"n must be|dtype must be"):
        utils.matmul_gflops(n, cpu, dtype, min_run_time=0.001)
    if dtype == torch.float32:
        with pytest.raises(error, match="n must be"):
            utils.numpy_matmul_gflops(n, min_run_time=0.001)


def test_both_ways_of_logging_give_the_same_norms():
    m = torch.randn(8, 8, generator=torch.Generator().manual_seed(0))
    every, once = utils.log_every_step(m, 5), utils.log_on_device(m, 5)
    assert len(every) == 5 and every == pytest.approx(once)


@pytest.mark.parametrize(("m", "steps", "error"), [(torch.ones(3), 5, TypeError), (torch.ones(2, 3), 5, TypeError),
                                                    ([[1.0]], 5, TypeError), (torch.ones(2, 2), 0, ValueError),
                                                    (torch.ones(2, 2), 2.0, TypeError)])
def test_logging_helpers_reject_bad_arguments_with_a_clear_error(m, steps, error):
    for log in (utils.log_every_step, utils.log_on_device):
        with pytest.raises(error, match=r"m must be|steps must be"):
            log(m, steps)


def test_copy_bandwidth_waits_for_both_ends_of_the_copy(monkeypatch):
    waits = []
    monkeypatch.setattr(utils, "synchronize", lambda d: waits.append(torch.device(d)))
    assert utils.copy_bandwidth_gbps(torch.ones(1024), meta, min_run_time=0.001) > 0
    assert set(waits) == {cpu, meta}  # the source's device after each copy, the target's by median_seconds


def test_copy_bandwidth_times_copies_into_one_tensor_allocated_beforehand(monkeypatch):
    """The figure is the copy's, not that of allocating a new tensor (and touching its fresh pages) at every call."""
    into, copy_ = [], torch.Tensor.copy_
    monkeypatch.setattr(torch.Tensor, "copy_", lambda self, src, non_blocking=False: into.append(self.data_ptr())
                        or copy_(self, src, non_blocking))
    source = torch.arange(1024.0)
    assert utils.copy_bandwidth_gbps(source, cpu, min_run_time=0.001) > 0
    assert len(into) > 1 and len(set(into)) == 1 and into[0] != source.data_ptr()


def test_copy_bandwidth_rejects_what_is_not_a_tensor():
    with pytest.raises(TypeError, match="source must be a tensor"):
        utils.copy_bandwidth_gbps([1.0, 2.0], cpu)


@pytest.mark.parametrize("driver", ["12.8", "12.9"])
def test_setup_advice_warns_a_blackwell_gpu_that_no_build_of_the_release_fits_this_driver(driver):
    # 2.12-2.14 publish cu126 (no Blackwell code) and CUDA 13 builds (driver 580+), so a 570/575 driver
    # with an RTX 50xx has no build of 2.13: the advice says so, and names 2.11's CUDA 12.8 build.
    advice = utils.setup_advice(driver_cuda=driver, torch_cuda=None, cuda_available=False, torch_version="2.13.0")
    assert "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cu126" in advice
    assert "a Blackwell GPU such as an RTX 50xx has no PyTorch 2.13.0 build this driver runs" in advice
    assert "update to driver 580+, or use PyTorch 2.11's CUDA 12.8 build" in advice
    # A release with its own cu128 build needs no such note, nor does a driver that runs CUDA 13 builds.
    for release, drv in (("2.11.0", driver), ("2.13.0", "13.0"), ("2.13.0", "12.4")):
        advice = utils.setup_advice(driver_cuda=drv, torch_cuda=None, cuda_available=False, torch_version=release)
        assert "has no PyTorch" not in advice


def test_has_kernels_for_runs_arch_specific_code_only_on_its_own_capability():
    assert utils._has_kernels_for((9, 0), ["sm_90a"]) and not utils._has_kernels_for((9, 1), ["sm_90a"])
    assert utils._has_kernels_for((10, 3), ["sm_100f"]) and utils._has_kernels_for((8, 9), ["sm_86"])


def test_timing_against_says_a_ratio_noise_or_that_a_noisy_timing_cannot_be_compared():
    """Lesson 05's rule: two medians differ only beyond their two IQRs together, and a timing whose IQR is
    over a third of its median is too noisy to compare at all, however far apart the medians are."""
    from utils import Timing

    assert Timing(20e-3, 1e-3).against(Timing(10e-3, 1e-3)) == "2.00× as long"
    assert Timing(10.5e-3, 1e-3).against(Timing(10e-3, 1e-3)) == "no difference beyond the noise"
    too_noisy = "too noisy to compare: time both again with nothing else running"
    assert Timing(360e-3, 200e-3).against(Timing(17.9e-3, 1e-3)) == too_noisy  # 20× apart, and still noise
    assert Timing(17.9e-3, 1e-3).against(Timing(360e-3, 200e-3)) == too_noisy
    assert Timing(17.9e-3, 1e-3).against((360e-3, 200e-3)) == too_noisy  # a plain (median, iqr) too
