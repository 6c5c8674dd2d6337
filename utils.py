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
import sys

import torch
from torch import nn

__all__ = [
    "hardware_summary",
    "model_device",
    "try_all_gpus",
    "try_gpu",
    "two_different_devices",
]


# --- Lesson 01: computing devices --------------------------------------------


def try_gpu(i: int = 0) -> torch.device:
    """Return GPU number ``i`` if this machine has it, otherwise the CPU.

    - CUDA machine with n GPUs: ``cuda:i`` for ``0 <= i < n``, else ``cpu``.
    - Mac with Apple silicon (MPS): ``mps`` for ``i == 0`` (a Mac has one GPU), else ``cpu``.
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
        return torch.device("mps")
    return torch.device("cpu")


def try_all_gpus() -> list[torch.device]:
    """Return every GPU of this machine, or ``[cpu]`` when it has none.

    - CUDA machine with n GPUs: ``[cuda:0, ..., cuda:n-1]``.
    - Mac with Apple silicon (MPS): ``[mps]``.
    - No GPU: ``[cpu]``, so a loop over the result always runs at least once.
    """
    devices = [torch.device(f"cuda:{i}") for i in range(torch.cuda.device_count())]
    if not devices and torch.backends.mps.is_available():
        devices = [torch.device("mps")]
    return devices or [torch.device("cpu")]


# --- Lesson 03: copies between devices -----------------------------------------


def two_different_devices() -> tuple[torch.device, torch.device]:
    """Return two different devices that tensors can live on, best first.

    - Two or more CUDA GPUs: ``(cuda:0, cuda:1)``.
    - One CUDA GPU: ``(cuda:0, cpu)``.
    - Apple silicon (MPS): ``(mps, cpu)``.
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


# --- Used by every lesson's hardware cell (not a lesson topic itself) -----------


def _hosted_notebook() -> str | None:
    """Name the hosted notebook service this kernel runs on, if any."""
    if "COLAB_RELEASE_TAG" in os.environ or "google.colab" in sys.modules:
        return "Colab"
    if "KAGGLE_KERNEL_RUN_TYPE" in os.environ or os.path.isdir("/kaggle"):
        return "Kaggle"
    return None


_SWITCH_ON_A_GPU = {
    "Colab": "Runtime > Change runtime type > Hardware accelerator: T4 GPU, then run the lesson again.",
    "Kaggle": "Settings > Accelerator > GPU T4 x2 (needs a phone-verified account), then run the lesson again.",
}


def hardware_summary() -> str:
    """Describe the PyTorch build and the devices that the lessons will use.

    On a machine without a GPU the text says so plainly and, on Colab or
    Kaggle, says how to switch a GPU on; the lessons then carry on on the CPU.
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
        service = _hosted_notebook()
        if service:
            lines.append(f"To use a GPU on {service}: {_SWITCH_ON_A_GPU[service]}")
    return "\n".join(lines)
