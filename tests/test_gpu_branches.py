"""The helpers' GPU-only branches, run on a simulated GPU before a real one ever runs them.

The other tests replace whole ``torch.cuda.*`` functions. These go one level lower where they can:
only what PyTorch's C++ side would answer on a CUDA machine or a Mac is faked (``torch._C._cuda_*``,
``torch._C._accelerator_*``, ``torch._C._mps_*``, the device properties, ``cudaMemGetInfo``), so that
PyTorch's own Python layer, with its argument checks (device indices, the type and range of a memory
fraction), runs as it will on a GPU. A GPU run should then find only problems of the environment.
Paths below ``torch/`` are those of the installed PyTorch 2.13 (.venv/lib/python3.11/site-packages).
"""

from __future__ import annotations

import types

import pytest
import torch

import utils

MiB, GiB = 2**20, 2**30
cpu, cuda, cuda0, cuda1, mps = (torch.device("cpu"), torch.device("cuda"), torch.device("cuda", 0),
                                torch.device("cuda", 1), torch.device("mps"))
OOM = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError


def nested_stats(allocated: int, reserved: int, peak_allocated: int, peak_reserved: int) -> dict:
    """A device's counters as the allocator's C++ side returns them: nested dicts, which torch.cuda.memory_stats
    and torch.accelerator.memory_stats flatten into "allocated_bytes.all.current" and so on
    (torch/cuda/memory.py, memory_stats; torch/accelerator/memory.py, memory_stats)."""
    return {"allocated_bytes": {"all": {"current": allocated, "peak": peak_allocated}},
            "reserved_bytes": {"all": {"current": reserved, "peak": peak_reserved}}}


class FakeCudaRuntime:
    """The answers of CUDA's C++ side for ``n`` GPUs, each GPU with counters and a cap of its own."""

    def __init__(self, gpus: list[tuple[str, tuple[int, int], int]]):
        self.properties = [types.SimpleNamespace(name=name, major=cc[0], minor=cc[1], total_memory=total)
                           for name, cc, total in gpus]
        self.stats = [nested_stats((10 + i) * MiB, (40 + i) * MiB, (30 + i) * MiB, (60 + i) * MiB)
                      for i in range(len(gpus))]
        self.fraction = [1.0] * len(gpus)
        self.fractions_set: list[tuple[float, int]] = []
        self.peaks_reset: list[tuple[str, int]] = []
        self.emptied = 0
        self.current = 0
        self.arch_flags = "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120"  # a CUDA 13.0 build (see test_utils.py)

    def set_fraction(self, fraction: float, index: int) -> None:
        self.fractions_set.append((fraction, index))
        self.fraction[index] = fraction

    def device_properties(self, index: int):
        return self.properties[index]

    def mem_get_info(self, index: int) -> tuple[int, int]:
        total = self.properties[index].total_memory
        return total - (40 + index) * MiB, total


@pytest.fixture
def fake_cuda_runtime(machine, monkeypatch):
    """Return a function that makes this machine a CUDA machine with the given GPUs: (name, capability, memory)."""

    def simulate(*gpus: tuple[str, tuple[int, int], int]) -> FakeCudaRuntime:
        rt = FakeCudaRuntime(list(gpus))
        machine({1: "one-cuda-gpu", 2: "two-cuda-gpus"}[len(gpus)])
        monkeypatch.setattr(torch.version, "cuda", "13.0")
        for module in (torch.cuda, torch.cuda.memory):  # torch/cuda/memory.py imports both names from torch.cuda
            monkeypatch.setattr(module, "_lazy_init", lambda: None)
            monkeypatch.setattr(module, "is_initialized", lambda: True)
        monkeypatch.setattr(torch.cuda, "_is_compiled", lambda: True)
        monkeypatch.setattr(torch.cuda, "current_device", lambda: rt.current)
        monkeypatch.setattr(torch.cuda, "_get_device_properties", rt.device_properties, raising=False)
        monkeypatch.setattr(torch.cuda, "cudart", lambda: types.SimpleNamespace(cudaMemGetInfo=rt.mem_get_info))
        fakes = {
            "_cuda_getArchFlags": lambda: rt.arch_flags,
            "_cuda_memoryStats": lambda i: rt.stats[i],
            "_cuda_resetPeakMemoryStats": lambda i: rt.peaks_reset.append(("cuda", i)),
            "_cuda_emptyCache": lambda: setattr(rt, "emptied", rt.emptied + 1),
            "_cuda_setMemoryFraction": rt.set_fraction,
            "_cuda_getMemoryFraction": lambda i: rt.fraction[i],
            "_accelerator_isAllocatorInitialized": lambda: True,
            "_accelerator_getDeviceStats": lambda i: rt.stats[i],
            "_accelerator_resetPeakStats": lambda i: rt.peaks_reset.append(("accelerator", i)),
        }
        for name, fake in fakes.items():
            monkeypatch.setattr(torch._C, name, fake, raising=False)
        if hasattr(torch, "accelerator"):  # PyTorch 2.6 and later
            monkeypatch.setattr(torch.accelerator, "current_accelerator", lambda check_available=False: cuda)
            monkeypatch.setattr(torch.accelerator, "current_device_index", lambda: rt.current)
        return rt

    return simulate


T4 = ("Tesla T4", (7, 5), 16 * GiB)
P100 = ("Tesla P100-PCIE-16GB", (6, 0), 16 * GiB)
A100 = ("NVIDIA A100-SXM4-80GB", (8, 0), 80 * GiB)


ACCELERATOR_MEMORY = hasattr(getattr(torch, "accelerator", None), "memory_allocated")
needs_accelerator_memory = pytest.mark.skipif(not ACCELERATOR_MEMORY, reason="torch.accelerator.memory_*: 2.9 on")


def counters(i: int, total: int) -> dict:
    return {"allocated": (10 + i) * MiB, "reserved": (40 + i) * MiB, "peak_allocated": (30 + i) * MiB,
            "peak_reserved": (60 + i) * MiB, "total": total}


# --- Lesson 07: memory_stats and reset_peak_memory on CUDA, through PyTorch's own readers -----------

def test_memory_stats_reads_the_counters_of_the_gpu_it_names_through_torch_accelerator(fake_cuda_runtime, monkeypatch):
    rt = fake_cuda_runtime(T4, A100)
    rt.current = 1
    if ACCELERATOR_MEMORY:  # PyTorch 2.9 and later: torch.accelerator's readers, not torch.cuda's
        monkeypatch.setattr(torch._C, "_cuda_memoryStats", lambda i: pytest.fail("read torch.cuda"), raising=False)
    assert utils.memory_stats("cuda:0") == counters(0, 16 * GiB)
    assert utils.memory_stats(cuda1) == counters(1, 80 * GiB)
    # "cuda" without an index: the current GPU, for the counters and the total alike (optional=True in
    # torch/accelerator/_utils.py, _get_device_index, and in torch.cuda.get_device_properties).
    assert utils.memory_stats("cuda") == counters(1, 80 * GiB)


@needs_accelerator_memory
@pytest.mark.parametrize("missing", ["memory_allocated", "the whole module"])
def test_memory_stats_falls_back_to_torch_cuda_on_releases_before_2_9(fake_cuda_runtime, monkeypatch, missing):
    fake_cuda_runtime(T4, A100)
    # PyTorch 2.6 to 2.8 have torch.accelerator without memory_*; 2.4 and 2.5 have no torch.accelerator.
    if missing == "memory_allocated":
        monkeypatch.delattr(torch.accelerator, "memory_allocated")
    else:
        monkeypatch.delattr(torch, "accelerator")
    monkeypatch.setattr(torch._C, "_accelerator_getDeviceStats", lambda i: pytest.fail("read torch.accelerator"),
                        raising=False)
    assert utils.memory_stats("cuda:1") == counters(1, 80 * GiB)


@needs_accelerator_memory
def test_memory_stats_on_a_gpu_before_its_first_allocation_reads_zeros_not_an_error(fake_cuda_runtime, monkeypatch):
    fake_cuda_runtime(T4)
    # No allocator yet: torch.accelerator.memory_stats returns an empty dict, so every counter reads 0
    # (torch/accelerator/memory.py: `if not torch._C._accelerator_isAllocatorInitialized(): return OrderedDict()`).
    monkeypatch.setattr(torch._C, "_accelerator_isAllocatorInitialized", lambda: False)
    assert utils.memory_stats(cuda0) == {"allocated": 0, "reserved": 0, "peak_allocated": 0, "peak_reserved": 0,
                                         "total": 16 * GiB}


@needs_accelerator_memory
@pytest.mark.parametrize(("device", "index"), [("cuda:1", 1), (cuda0, 0), ("cuda", 1)])
def test_reset_peak_memory_resets_the_gpu_it_names_through_torch_accelerator(fake_cuda_runtime, device, index):
    rt = fake_cuda_runtime(T4, A100)
    rt.current = 1
    utils.reset_peak_memory(device)
    assert rt.peaks_reset == [("accelerator", index)]


@needs_accelerator_memory
def test_reset_peak_memory_falls_back_to_torch_cuda_on_releases_before_2_9(fake_cuda_runtime, monkeypatch):
    rt = fake_cuda_runtime(T4, A100)
    monkeypatch.delattr(torch.accelerator, "reset_peak_memory_stats")
    utils.reset_peak_memory("cuda:1")
    assert rt.peaks_reset == [("cuda", 1)]


# --- Lesson 07: memory_stats on MPS with a PyTorch that has no recommended_max_memory ---------------

@pytest.fixture
def fake_metal(machine, monkeypatch):
    """What the MPS backend's C++ side answers on a Mac; torch.mps's own Python functions run on top."""
    machine("apple-mps")
    state = {"fractions": [], "emptied": 0}
    fakes = {
        "_mps_currentAllocatedMemory": lambda: 8 * MiB,
        "_mps_driverAllocatedMemory": lambda: 100 * MiB,
        "_mps_recommendedMaxMemory": lambda: 1024 * MiB,
        "_mps_setMemoryFraction": state["fractions"].append,
        "_mps_emptyCache": lambda: state.__setitem__("emptied", state["emptied"] + 1),
    }
    for name, fake in fakes.items():
        monkeypatch.setattr(torch._C, name, fake, raising=False)
    monkeypatch.delenv("PYTORCH_MPS_HIGH_WATERMARK_RATIO", raising=False)
    return state


def test_memory_stats_on_mps_without_recommended_max_memory_has_no_total(fake_metal, monkeypatch):
    monkeypatch.delattr(torch.mps, "recommended_max_memory")  # PyTorch before 2.5
    assert utils.memory_stats(mps) == {"allocated": 8 * MiB, "reserved": 100 * MiB, "peak_allocated": None,
                                       "peak_reserved": None, "total": None}


# --- Lesson 08: limited_memory on CUDA and MPS, through PyTorch's own setters ----------------------

def test_limited_memory_caps_cuda0_within_pytorchs_checks_and_restores_an_earlier_cap(fake_cuda_runtime):
    rt = fake_cuda_runtime(T4)
    rt.fraction[0] = 0.5  # someone capped this GPU before
    # torch.cuda.set_per_process_memory_fraction (torch/cuda/memory.py) raises TypeError for a fraction that
    # is not a float and ValueError outside 0~1: the real function runs here, only _cuda_setMemoryFraction is fake.
    with utils.limited_memory("cuda:0", 64 * MiB) as limit:
        assert limit == 40 * MiB + 64 * MiB  # what the allocator reserves now, plus the extra bytes
        assert rt.fractions_set == [(pytest.approx(limit / (16 * GiB)), 0)]
    assert rt.fractions_set[-1] == (0.5, 0) and rt.fraction == [0.5]
    assert rt.emptied == 1  # the cache's free segments went back first


def test_limited_memory_caps_only_the_gpu_it_names_with_that_gpus_own_memory(fake_cuda_runtime):
    rt = fake_cuda_runtime(T4, A100)
    with utils.limited_memory(cuda1, 64 * MiB) as limit:
        assert limit == 41 * MiB + 64 * MiB  # GPU 1's reserved memory
        assert rt.fraction == [1.0, pytest.approx(limit / (80 * GiB))]  # GPU 1's total, GPU 0 untouched
    assert rt.fraction == [1.0, 1.0] and {index for _, index in rt.fractions_set} == {1}


def test_limited_memory_never_asks_cuda_for_more_than_the_whole_gpu(fake_cuda_runtime):
    rt = fake_cuda_runtime(T4)
    with utils.limited_memory(cuda0, 32 * GiB) as limit:  # more than the 16 GiB GPU: the real setter refuses > 1
        assert limit == 40 * MiB + 32 * GiB
        assert rt.fraction == [1.0] and rt.fractions_set == [(1.0, 0)]


def test_limited_memory_restores_no_cap_where_pytorch_cannot_read_the_cap(fake_cuda_runtime, monkeypatch):
    rt = fake_cuda_runtime(T4)
    monkeypatch.delattr(torch.cuda, "get_per_process_memory_fraction")  # older releases lack the getter
    with utils.limited_memory(cuda0, 64 * MiB):
        assert rt.fraction[0] < 1.0
    assert rt.fractions_set[-1] == (1.0, 0)


@pytest.mark.parametrize("device", ["cuda", cuda])
def test_limited_memory_caps_the_current_gpu_for_a_cuda_device_without_an_index(fake_cuda_runtime, device):
    rt = fake_cuda_runtime(T4)
    with utils.limited_memory(device, 64 * MiB) as limit:
        assert limit == 40 * MiB + 64 * MiB and rt.fraction[0] < 1.0
    assert rt.fraction == [1.0]


def test_limited_memory_on_mps_sets_fractions_that_pytorchs_own_setter_accepts(fake_metal, monkeypatch):
    # torch.mps.set_per_process_memory_fraction (torch/mps/__init__.py) wants a float in 0~2; the
    # environment's ratio is a string, "1" here, which must come back as the float 1.0.
    monkeypatch.setenv("PYTORCH_MPS_HIGH_WATERMARK_RATIO", "1")
    with utils.limited_memory("mps", 64 * MiB) as limit:
        assert limit == 164 * MiB
    assert fake_metal["fractions"] == [pytest.approx(164 / 1024), 1.0]
    assert all(type(f) is float for f in fake_metal["fractions"]) and fake_metal["emptied"] == 1


def test_limited_memory_on_mps_without_recommended_max_memory_limits_nothing(fake_metal, monkeypatch):
    monkeypatch.delattr(torch.mps, "recommended_max_memory")  # PyTorch before 2.5: no base for a fraction
    with utils.limited_memory(mps, 64 * MiB) as limit:
        assert limit is None
    assert fake_metal["fractions"] == [] and fake_metal["emptied"] == 0


# --- Lesson 08: largest_batch_that_fits on a GPU, with PyTorch's own out-of-memory error ------------

def test_pytorchs_out_of_memory_error_is_a_runtime_error_as_the_batch_search_expects():
    # largest_batch_that_fits catches RuntimeError and asks is_out_of_memory: torch.OutOfMemoryError (the CUDA
    # caching allocator's refusal) and torch.AcceleratorError (a CUDA error) are RuntimeErrors
    # (torch/csrc/Exceptions.cpp creates both with PyExc_RuntimeError as their base).
    assert issubclass(OOM, RuntimeError) and OOM is torch.cuda.OutOfMemoryError
    if hasattr(torch, "AcceleratorError"):
        assert issubclass(torch.AcceleratorError, RuntimeError)


def test_largest_batch_on_a_gpu_halves_on_out_of_memory_and_lifts_the_cap_after_every_try(fake_cuda_runtime):
    rt = fake_cuda_runtime(T4, A100)
    tried = []

    def step(batch: int) -> None:
        tried.append((batch, rt.fraction[1]))
        if batch > 300:
            raise OOM("CUDA out of memory. Tried to allocate 1.00 GiB. GPU 1 has a total capacity of 79.14 GiB")

    assert utils.largest_batch_that_fits(step, 2048, "cuda:1", budget_bytes=64 * MiB) == 256
    cap = (41 * MiB + 64 * MiB) / (80 * GiB)
    assert tried == [(2048, pytest.approx(cap)), (1024, pytest.approx(cap)), (512, pytest.approx(cap)),
                     (256, pytest.approx(cap))]
    assert rt.fraction == [1.0, 1.0]  # every try restored GPU 1's cap; GPU 0 never capped
    assert rt.emptied >= 4 + 3  # the cache emptied before each try and after each failed one


def test_largest_batch_on_a_gpu_raises_a_cuda_error_that_is_not_out_of_memory_at_once(fake_cuda_runtime):
    rt = fake_cuda_runtime(T4)
    error = getattr(torch, "AcceleratorError", RuntimeError)
    tried = []

    def step(batch: int) -> None:
        tried.append(batch)
        raise error("CUDA error: device-side assert triggered")

    with pytest.raises(error, match="device-side assert"):
        utils.largest_batch_that_fits(step, 64, cuda0, budget_bytes=64 * MiB)
    assert tried == [64] and rt.fraction == [1.0]  # no halving, and the cap was lifted on the way out


def test_largest_batch_with_a_budget_runs_on_a_cuda_device_without_an_index(fake_cuda_runtime):
    fake_cuda_runtime(T4)
    assert utils.largest_batch_that_fits(lambda batch: None, 64, "cuda", budget_bytes=64 * MiB) == 64


# --- Lesson 09: the autocast that a CUDA or MPS model gets -----------------------------------------

@pytest.mark.parametrize(("name", "device"), [("one-cuda-gpu", cuda0), ("apple-mps", mps)])
def test_a_gpu_model_gets_an_enabled_float16_autocast_of_its_device_type(machine, name, device):
    machine(name)
    dtype = utils.autocast_dtype(device)
    assert dtype == torch.float16  # on MPS from PyTorch 2.8 on; this test's torch is newer
    context = utils._autocast_or_nothing(device, dtype)
    # torch.autocast disables itself, with a warning, for "cuda" when CUDA is not available, and for a dtype
    # the device type does not support (torch/amp/autocast_mode.py, autocast.__init__): neither happens here.
    assert isinstance(context, torch.autocast)
    assert (context.device, context.fast_dtype, context._enabled) == (device.type, torch.float16, True)


# --- Lesson 06 and lesson 15: a GPU's name and capability, through PyTorch's own readers ------------

def test_gpu_peaks_reads_the_name_of_the_gpu_it_is_given(fake_cuda_runtime):
    rt = fake_cuda_runtime(T4, A100)
    assert utils.gpu_peaks("cuda:1")["tf32_tflops"] == 156.0
    assert "tf32_tflops" not in utils.gpu_peaks(cuda0)  # a T4 has no TF32
    rt.current = 1
    assert utils.matmul_peak_tflops(cuda, torch.float32, tf32=True) == (156.0, "TF32")  # the current GPU


def test_hardware_summary_warns_only_under_the_gpu_that_the_build_has_no_code_for(fake_cuda_runtime):
    fake_cuda_runtime(T4, P100)  # a T4 and a P100 in one machine, and a CUDA 13.0 build (Turing and up)
    lines = utils.hardware_summary().splitlines()
    t4, p100 = lines.index("GPU cuda:0: Tesla T4"), lines.index("GPU cuda:1: Tesla P100-PCIE-16GB")
    warnings_at = [i for i, line in enumerate(lines) if "no kernel image is available" in line]
    assert warnings_at == [p100 + 1] and t4 < p100
    assert "compute capability 6.0" in lines[p100 + 1]
    assert lines[-1] == "The lessons will use cuda:0."


def test_hardware_summary_is_silent_for_a_gpu_that_portable_code_covers(fake_cuda_runtime):
    rt = fake_cuda_runtime(("NVIDIA GeForce RTX 5090", (12, 0), 32 * GiB))
    rt.arch_flags = "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90"  # cu126: no Blackwell machine code
    assert "no kernel image" in utils.hardware_summary()
    rt.arch_flags += " compute_90"  # PTX, which the driver compiles for any newer GPU
    assert "no kernel image" not in utils.hardware_summary()
