"""Shared helpers of the GPU lesson series (gpu-lessons utils).

Every helper below is *taught* in one lesson, where a cell marked ``#@save``
defines it with exactly this code; ``tests/test_helpers_in_sync.py`` fails when
the lesson and this file drift apart. Later lessons ``import utils`` instead of
pasting device-selection code.

Importing this module has no side effects: it reads no hardware and allocates
nothing until a helper is called, so it is safe on a laptop without a GPU, on a
CUDA machine with any number of GPUs, and on a Mac with Apple's MPS backend.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Callable

import torch
from torch import nn
from torch.utils import benchmark

__all__ = [
    "driver_cuda_version",
    "gpu_peaks",
    "hardware_summary",
    "hosted_notebook",
    "median_seconds",
    "model_device",
    "setup_advice",
    "synchronize",
    "try_all_gpus",
    "try_gpu",
    "two_different_devices",
]


# --- Lesson 00: check your setup ------------------------------------------------


def hosted_notebook() -> str | None:
    """Return "Colab" or "Kaggle" when this kernel runs there, else ``None``.

    Read from the environment those services set; the same call on every machine.
    """
    if "COLAB_RELEASE_TAG" in os.environ or "google.colab" in sys.modules:
        return "Colab"
    if "KAGGLE_KERNEL_RUN_TYPE" in os.environ or os.path.isdir("/kaggle"):
        return "Kaggle"
    return None


def driver_cuda_version() -> str | None:
    """Return the newest CUDA version the NVIDIA driver supports, as ``nvidia-smi`` reports it.

    ``None`` on a machine without ``nvidia-smi`` (no NVIDIA driver: laptops, Macs,
    CPU-only cloud machines) or when it fails to run.
    """
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        report = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"CUDA Version:\s*(\d+\.\d+)", report)
    return found.group(1) if found else None


def setup_advice(driver_cuda: str | None, torch_cuda: str | None, cuda_available: bool,
                 mps_available: bool = False, service: str | None = None) -> list[str]:
    """Return what to fix for the lessons to use a GPU, one sentence each; ``[]`` if nothing.

    ``driver_cuda``: the driver's CUDA version (``driver_cuda_version()``), or None.
    ``torch_cuda``: ``torch.version.cuda``, None for a CPU-only PyTorch build.
    ``cuda_available``: ``torch.cuda.is_available()``. ``service``: "Colab", "Kaggle" or None.
    A machine with no GPU at all needs no fix: the lessons run on its CPU.
    """
    def version(text: str | None) -> tuple[int, ...] | None:
        if text is None:
            return None
        if not isinstance(text, str):
            raise TypeError(f"a CUDA version is a string such as '12.4' or None, got {type(text).__name__}")
        if not re.fullmatch(r"\d+\.\d+", text):
            raise ValueError(f"not a CUDA version: {text!r} (expected something like '12.4')")
        return tuple(int(part) for part in text.split("."))

    driver, built = version(driver_cuda), version(torch_cuda)
    if cuda_available or mps_available:
        return []
    if service is not None and driver_cuda is None:
        how = {"Colab": "Runtime > Change runtime type > T4 GPU",
               "Kaggle": "Settings > Accelerator > GPU T4 x2"}.get(service, "its settings")
        return [f"This {service} session has no GPU: switch one on ({how}) and run the lesson again."]
    if driver is None:
        return []
    if built is None:
        builds = [(11, 8), (12, 1), (12, 4), (12, 6), (12, 8), (12, 9), (13, 0)]  # PyTorch's CUDA builds
        fitting = [b for b in builds if b <= driver]
        if not fitting:
            return [f"This machine has an NVIDIA GPU, but its driver only serves CUDA {driver_cuda}, older than "
                    "any current PyTorch build: update the NVIDIA driver, then install a CUDA build of PyTorch."]
        tag = "cu{}{}".format(*fitting[-1])
        return [f"This machine has an NVIDIA GPU (its driver serves CUDA {driver_cuda}), but this PyTorch is a "
                f"CPU-only build. Install a CUDA build no newer than the driver, for example: pip install torch "
                f"--index-url https://download.pytorch.org/whl/{tag} (lesson 01 explains the choice)."]
    if built > driver:
        return [f"This PyTorch was built for CUDA {torch_cuda}, but the NVIDIA driver only serves CUDA "
                f"{driver_cuda}: update the driver, or install a PyTorch build for CUDA {driver_cuda} or older."]
    return ["PyTorch has a CUDA build and the driver fits it, yet sees no GPU: check that CUDA_VISIBLE_DEVICES "
            "is not empty, that no other process holds the GPU, and restart the kernel."]


# --- Lesson 01: computing devices --------------------------------------------


def try_gpu(i: int = 0) -> torch.device:
    """Return GPU number ``i`` if this machine has it, otherwise the CPU.

    - CUDA machine with n GPUs: ``cuda:i`` for ``0 <= i < n``, else ``cpu``.
    - Mac with Apple silicon (MPS): ``mps:0`` for ``i == 0`` (a Mac has one GPU), else ``cpu``.
    - No GPU: ``cpu``.

    Raises ``TypeError`` if ``i`` is not an ``int`` and ``ValueError`` if it is negative.
    """
    if isinstance(i, bool) or not isinstance(i, int):
        raise TypeError(f"GPU index must be an int, got {type(i).__name__}: {i!r}")
    if i < 0:
        raise ValueError(f"GPU index must be 0 or more, got {i}")
    if i < torch.cuda.device_count():
        return torch.device(f"cuda:{i}")
    if i == 0 and torch.backends.mps.is_available():
        return torch.device("mps:0")
    return torch.device("cpu")


def try_all_gpus() -> list[torch.device]:
    """Return every GPU of this machine, or ``[cpu]`` when it has none.

    - CUDA machine with n GPUs: ``[cuda:0, ..., cuda:n-1]``.
    - Mac with Apple silicon (MPS): ``[mps:0]``.
    - No GPU: ``[cpu]``, so a loop over the result always runs at least once.
    """
    devices = [torch.device(f"cuda:{i}") for i in range(torch.cuda.device_count())]
    if not devices and torch.backends.mps.is_available():
        devices = [torch.device("mps:0")]
    return devices or [torch.device("cpu")]


# --- Lesson 03: copies between devices -----------------------------------------


def two_different_devices() -> tuple[torch.device, torch.device]:
    """Return two different devices that tensors can live on, best first.

    - Two or more CUDA GPUs: ``(cuda:0, cuda:1)``.
    - One CUDA GPU: ``(cuda:0, cpu)``.
    - Apple silicon (MPS): ``(mps:0, cpu)``.
    - No GPU: ``(cpu, meta)``. A ``meta`` tensor has a shape and a dtype but no
      data; PyTorch still refuses to mix it with a CPU tensor, so the
      same-device rule can be shown on any machine.
    """
    gpus = [d for d in try_all_gpus() if d.type != "cpu"]
    if len(gpus) >= 2:
        return gpus[0], gpus[1]
    if len(gpus) == 1:
        return gpus[0], torch.device("cpu")
    return torch.device("cpu"), torch.device("meta")


# --- Lesson 04: models on devices ----------------------------------------------


def model_device(net: nn.Module) -> torch.device:
    """Return the one device that holds all parameters and buffers of ``net``.

    Works the same on every machine. Raises ``TypeError`` if ``net`` is not an
    ``nn.Module`` and ``ValueError`` if it has no parameters or buffers, or if
    they are spread over more than one device (then there is no single answer).
    """
    if not isinstance(net, nn.Module):
        raise TypeError(f"expected an nn.Module, got {type(net).__name__}")
    devices = {t.device for t in [*net.parameters(), *net.buffers()]}
    if not devices:
        raise ValueError(f"{type(net).__name__} has no parameters or buffers, so it has no device")
    if len(devices) > 1:
        names = ", ".join(sorted(str(d) for d in devices))
        raise ValueError(f"{type(net).__name__} is spread over several devices: {names}")
    return devices.pop()


# --- Lesson 05: measuring device speed -----------------------------------------


def synchronize(device: torch.device) -> None:
    """Wait until all work queued on ``device`` has finished.

    - CUDA: ``torch.cuda.synchronize(device)``. GPU work is asynchronous: an
      operation returns as soon as it is queued, so a clock read without this
      measures the launch, not the work.
    - Apple silicon (MPS): ``torch.mps.synchronize()``.
    - CPU (and ``meta``): nothing to wait for; CPU operations finish before they return.
    """
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def median_seconds(fn: Callable[[], object], device: torch.device, min_run_time: float = 0.2) -> float:
    """Return the median time in seconds of one call of ``fn()``, whose work runs on ``device``.

    Calls ``fn`` once to warm up, then lets ``torch.utils.benchmark`` repeat it in
    blocks for at least ``min_run_time`` seconds, synchronising ``device`` after each
    call so that the clock covers the device's work. The same on every machine.
    Raises ``TypeError`` if ``fn`` is not callable or ``min_run_time`` not a number,
    and ``ValueError`` if ``min_run_time`` is not positive.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    if isinstance(min_run_time, bool) or not isinstance(min_run_time, (int, float)):
        raise TypeError(f"min_run_time must be a number of seconds, got {type(min_run_time).__name__}")
    if not min_run_time > 0:
        raise ValueError(f"min_run_time must be positive, got {min_run_time}")

    def call() -> None:
        fn()
        synchronize(device)

    call()  # warm-up: the first call pays for memory allocation and kernel selection
    timer = benchmark.Timer(stmt="call()", globals={"call": call}, num_threads=torch.get_num_threads())
    return timer.blocked_autorange(min_run_time=min_run_time).median


def gpu_peaks(device: torch.device) -> dict[str, float] | None:
    """Return the published peak figures of ``device``'s GPU model, or ``None`` if unknown.

    Keys: ``fp32_tflops`` (float32 without tensor cores, which is what a float32
    matrix product uses unless TF32 is switched on), ``memory_gbps`` (GPU memory)
    and ``pcie_gbps`` (one direction of the host link, PCIe x16). Known models:
    T4, L4, A10G, V100, A100, H100, H200, from NVIDIA's data sheets. CPU, MPS and
    unlisted GPUs give ``None``.
    """
    device = torch.device(device)
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    table = [  # (part of the name, fp32 TFLOP/s, memory GB/s, PCIe GB/s); the first match wins
        ("H200", 67.0, 4800.0, 63.0),
        ("H100 PCIe", 51.0, 2000.0, 63.0),
        ("H100", 67.0, 3350.0, 63.0),
        ("A100-PCIE-40GB", 19.5, 1555.0, 31.5),
        ("A100-SXM4-40GB", 19.5, 1555.0, 31.5),
        ("A100", 19.5, 2039.0, 31.5),
        ("A10G", 31.2, 600.0, 31.5),
        ("L40S", 91.6, 864.0, 31.5),
        ("L40", 90.5, 864.0, 31.5),
        ("L4", 30.3, 300.0, 31.5),
        ("V100", 15.7, 900.0, 15.75),
        ("T4", 8.1, 320.0, 15.75),
    ]
    for model, fp32, memory, pcie in table:
        if model in name:
            return {"fp32_tflops": fp32, "memory_gbps": memory, "pcie_gbps": pcie}
    return None


# --- Used by every lesson's hardware cell (not a lesson topic itself) -----------



def hardware_summary() -> str:
    """Describe the PyTorch build and the devices that the lessons will use.

    On a machine without a GPU the text says so plainly and adds lesson 00's
    ``setup_advice``: on Colab or Kaggle, how to switch a GPU on; on a machine
    with an NVIDIA driver, how to fix the PyTorch build. The lessons then carry
    on on the CPU.
    """
    lines = [
        f"Python {platform.python_version()}, PyTorch {torch.__version__}"
        f" (CUDA build: {torch.version.cuda or 'no'})",
    ]
    gpus = [d for d in try_all_gpus() if d.type != "cpu"]
    for d in gpus:
        name = torch.cuda.get_device_name(d) if d.type == "cuda" else "Apple GPU (MPS)"
        lines.append(f"GPU {d}: {name}")
    if gpus:
        lines.append(f"The lessons will use {try_gpu()}.")
    else:
        lines.append("No GPU found: the lessons run on the CPU and say what a GPU would change.")
        # The same advice as lesson 00 (nvidia-smi runs only here, when no GPU was found).
        lines += setup_advice(driver_cuda_version(), torch.version.cuda, False, False, hosted_notebook())
    return "\n".join(lines)
