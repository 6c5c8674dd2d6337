"""Lesson 06's helpers (GPU memory): real behaviour on the CPU, CUDA and MPS simulated.

The CUDA and MPS paths are exercised by monkeypatching the counters and settings they read,
since no GPU is present; the CPU path runs for real, including a real refusal by the CPU
allocator (an impossible size, which fails at once on every system: never a merely large one).
"""

from __future__ import annotations

import types

import pytest
import torch

import utils

MiB = 2**20
cpu, cuda0, mps = torch.device("cpu"), torch.device("cuda:0"), torch.device("mps")


def real_cpu_out_of_memory() -> RuntimeError:
    try:
        torch.empty(2**62, dtype=torch.uint8)  # 4 EiB: more than any address space
    except RuntimeError as err:
        return err
    raise AssertionError("the CPU allocator handed out 4 EiB")


@pytest.fixture
def fake_cuda(monkeypatch):
    """CUDA counters and the memory-fraction setting, recorded instead of reaching a GPU."""
    state = {"fraction": 1.0, "set": [], "emptied": 0, "reset": 0}
    counters = types.SimpleNamespace(
        memory_allocated=lambda d=None: 10 * MiB,
        memory_reserved=lambda d=None: 40 * MiB,
        max_memory_allocated=lambda d=None: 30 * MiB,
        max_memory_reserved=lambda d=None: 60 * MiB,
    )
    for name, fn in vars(counters).items():
        monkeypatch.setattr(torch.cuda, name, fn)
        if hasattr(torch, "accelerator"):
            monkeypatch.setattr(torch.accelerator, name, fn, raising=False)

    def reset(d=None):
        state["reset"] += 1

    def empty():
        state["emptied"] += 1

    def set_fraction(f, d=None):
        state["set"].append(f)
        state["fraction"] = f

    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", reset)
    if hasattr(torch, "accelerator"):
        monkeypatch.setattr(torch.accelerator, "reset_peak_memory_stats", reset, raising=False)
    monkeypatch.setattr(torch.cuda, "empty_cache", empty)
    properties = types.SimpleNamespace(total_memory=16 * 2**30)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda d=None: properties)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda d=None: (15 * 2**30, 16 * 2**30))
    monkeypatch.setattr(torch.cuda, "set_per_process_memory_fraction", set_fraction)
    monkeypatch.setattr(torch.cuda, "get_per_process_memory_fraction", lambda d=None: state["fraction"], raising=False)
    return state


@pytest.fixture
def fake_mps(monkeypatch):
    state = {"set": [], "emptied": 0}
    monkeypatch.setattr(torch.mps, "current_allocated_memory", lambda: 8 * MiB)
    monkeypatch.setattr(torch.mps, "driver_allocated_memory", lambda: 100 * MiB)
    monkeypatch.setattr(torch.mps, "recommended_max_memory", lambda: 1024 * MiB, raising=False)
    monkeypatch.setattr(torch.mps, "empty_cache", lambda: state.__setitem__("emptied", state["emptied"] + 1))
    monkeypatch.setattr(torch.mps, "set_per_process_memory_fraction", lambda f: state["set"].append(f))
    monkeypatch.delenv("PYTORCH_MPS_HIGH_WATERMARK_RATIO", raising=False)
    return state


# --- memory_stats, reset_peak_memory, release_cached_memory -------------------------------

def test_memory_stats_is_none_on_the_cpu_where_pytorch_counts_nothing():
    assert utils.memory_stats(cpu) is None
    assert utils.memory_stats("cpu") is None
    assert utils.memory_stats("meta") is None


def test_memory_stats_reads_the_cuda_counters(fake_cuda):
    stats = utils.memory_stats(cuda0)
    assert stats == {"allocated": 10 * MiB, "reserved": 40 * MiB, "peak_allocated": 30 * MiB,
                     "peak_reserved": 60 * MiB, "total": 16 * 2**30}


def test_memory_stats_on_mps_has_no_peaks(fake_mps):
    stats = utils.memory_stats(mps)
    assert stats == {"allocated": 8 * MiB, "reserved": 100 * MiB, "peak_allocated": None,
                     "peak_reserved": None, "total": 1024 * MiB}


@pytest.mark.parametrize("bad", [0, 1.5, None, ["cuda"]])
def test_memory_helpers_reject_what_is_not_a_device(bad):
    for helper in (utils.memory_stats, utils.reset_peak_memory, utils.release_cached_memory):
        with pytest.raises(TypeError, match="device must be"):
            helper(bad)


def test_memory_helpers_reject_a_name_that_is_no_device():
    with pytest.raises(ValueError, match="not a device name"):
        utils.memory_stats("banana")


def test_reset_peak_memory_resets_cuda_and_does_nothing_on_the_cpu(fake_cuda):
    utils.reset_peak_memory(cpu)
    assert fake_cuda["reset"] == 0
    utils.reset_peak_memory(cuda0)
    assert fake_cuda["reset"] == 1


def test_release_cached_memory_empties_the_cache_of_the_device_named(fake_cuda, fake_mps):
    utils.release_cached_memory(cpu)
    assert (fake_cuda["emptied"], fake_mps["emptied"]) == (0, 0)
    utils.release_cached_memory(cuda0)
    utils.release_cached_memory(mps)
    assert (fake_cuda["emptied"], fake_mps["emptied"]) == (1, 1)


# --- is_out_of_memory ----------------------------------------------------------------------

def test_is_out_of_memory_recognises_a_real_refusal_of_the_cpu_allocator():
    err = real_cpu_out_of_memory()
    assert type(err) is RuntimeError
    assert utils.is_out_of_memory(err)


def test_is_out_of_memory_recognises_the_cuda_and_mps_errors():
    oom = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError
    assert utils.is_out_of_memory(oom("CUDA out of memory. Tried to allocate 2.00 GiB."))
    assert utils.is_out_of_memory(torch.cuda.OutOfMemoryError("any text"))
    assert utils.is_out_of_memory(RuntimeError("MPS backend out of memory (MPS allocated: 1.00 GiB, ...)"))
    assert utils.is_out_of_memory(RuntimeError("DefaultCPUAllocator: not enough memory: you tried to allocate 8"))


@pytest.mark.parametrize("err", [
    RuntimeError("mat1 and mat2 shapes cannot be multiplied (8x100 and 1024x4096)"),
    RuntimeError("CUDA error: device-side assert triggered"),
    ValueError("out of memory"),
    MemoryError(),
    IndexError("index 12 is out of bounds for dimension 0 with size 10"),
])
def test_is_out_of_memory_refuses_every_other_error(err):
    assert not utils.is_out_of_memory(err)


def test_is_out_of_memory_wants_an_exception():
    with pytest.raises(TypeError, match="must be an exception"):
        utils.is_out_of_memory("CUDA out of memory")


# --- limited_memory ------------------------------------------------------------------------

def test_limited_memory_limits_nothing_on_the_cpu():
    with utils.limited_memory(cpu, 64 * MiB) as limit:
        assert limit is None


@pytest.mark.parametrize(("bad", "error"), [(0, ValueError), (-1, ValueError), (1.5, TypeError),
                                            (True, TypeError), ("64", TypeError)])
def test_limited_memory_rejects_a_bad_number_of_bytes(bad, error):
    with pytest.raises(error, match="extra_bytes"):
        utils.limited_memory(cpu, bad)


def test_limited_memory_caps_cuda_and_restores_the_fraction_even_after_an_error(fake_cuda):
    with pytest.raises(RuntimeError, match="inside"), utils.limited_memory(cuda0, 64 * MiB) as limit:
        assert limit == 40 * MiB + 64 * MiB                       # reserved now + the extra bytes
        assert fake_cuda["fraction"] == pytest.approx(limit / (16 * 2**30))
        raise RuntimeError("inside")
    assert fake_cuda["fraction"] == 1.0
    assert fake_cuda["emptied"] == 1                             # the cache went first


def test_limited_memory_caps_mps_on_what_metal_holds_and_restores_the_default_ratio(fake_mps):
    # The MPS allocator compares Metal's count for the process (driver_allocated_memory: whole
    # heaps, cache and MPSGraph's own buffers) with the cap, not the bytes tensors hold (8 MiB here).
    with utils.limited_memory(mps, 64 * MiB) as limit:
        assert limit == 100 * MiB + 64 * MiB
    assert fake_mps["set"] == [pytest.approx(164 / 1024), 1.7]
    assert fake_mps["emptied"] == 1                              # the cache went first


def test_limited_memory_on_mps_never_asks_for_more_than_twice_the_recommended_memory(fake_mps):
    with utils.limited_memory(mps, 4096 * MiB):
        pass
    assert fake_mps["set"] == [2.0, 1.7]


def test_limited_memory_restores_the_mps_ratio_set_in_the_environment(fake_mps, monkeypatch):
    monkeypatch.setenv("PYTORCH_MPS_HIGH_WATERMARK_RATIO", "0.0")
    with utils.limited_memory(mps, MiB):
        pass
    assert fake_mps["set"][-1] == 0.0


# --- largest_batch_that_fits ---------------------------------------------------------------

def per_sample(nbytes: int):
    return lambda batch: batch * nbytes


def test_largest_batch_halves_until_the_step_fits_the_cpu_budget():
    assert utils.largest_batch_that_fits(per_sample(1000), 1024, cpu, budget_bytes=100_000) == 64
    assert utils.largest_batch_that_fits(per_sample(1000), 64, cpu, budget_bytes=100_000) == 64
    assert utils.largest_batch_that_fits(per_sample(1), 7, "cpu", budget_bytes=3) == 3


def test_largest_batch_halves_on_a_real_refusal_of_the_cpu_allocator():
    tried = []

    def step(batch):
        tried.append(batch)
        if batch > 100:
            torch.empty(2**62, dtype=torch.uint8)              # refused at once, for real
        return batch

    assert utils.largest_batch_that_fits(step, 512, cpu, budget_bytes=10**9) == 64
    assert tried == [512, 256, 128, 64]


def test_largest_batch_needs_a_budget_on_the_cpu():
    with pytest.raises(ValueError, match="budget_bytes"):
        utils.largest_batch_that_fits(per_sample(1), 8, cpu)


def test_largest_batch_wants_the_cpu_step_to_return_its_bytes():
    with pytest.raises(TypeError, match="must return the bytes"):
        utils.largest_batch_that_fits(lambda b: None, 8, cpu, budget_bytes=MiB)


def test_largest_batch_raises_every_other_error_at_once():
    tried = []

    def buggy(batch):
        tried.append(batch)
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (8x100 and 1024x4096)")

    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        utils.largest_batch_that_fits(buggy, 64, cpu, budget_bytes=MiB)
    assert tried == [64]                                        # no halving: a bug is not a size


def test_largest_batch_on_mps_caps_each_try_at_metals_count_plus_the_budget(machine, fake_mps):
    machine("apple-mps")
    tried = []

    def step(batch):
        tried.append(batch)
        if batch > 100:
            raise RuntimeError("MPS backend out of memory (MPS allocated: 1.00 GiB, other allocations: 0 bytes, ...)")
        return None                                             # ignored on a GPU: the allocator decides

    assert utils.largest_batch_that_fits(step, 512, mps, budget_bytes=1536 * MiB) == 64
    assert tried == [512, 256, 128, 64]
    limits = fake_mps["set"][::2]                               # each try sets the cap, then restores 1.7
    assert limits == [pytest.approx((100 + 1536) / 1024)] * 4 and fake_mps["set"][1::2] == [1.7] * 4


def test_largest_batch_says_when_not_even_one_fits():
    with pytest.raises(RuntimeError, match="not even a batch of 1"):
        utils.largest_batch_that_fits(per_sample(MiB), 8, cpu, budget_bytes=MiB - 1)


@pytest.mark.parametrize(("start", "error"), [(0, ValueError), (-8, ValueError), (2.0, TypeError),
                                              (True, TypeError), ("64", TypeError)])
def test_largest_batch_rejects_a_start_that_is_no_batch_size(start, error):
    with pytest.raises(error, match="start"):
        utils.largest_batch_that_fits(per_sample(1), start, cpu, budget_bytes=MiB)


@pytest.mark.parametrize(("budget", "error"), [(0, ValueError), (-1, ValueError), (1.5, TypeError)])
def test_largest_batch_rejects_a_bad_budget(budget, error):
    with pytest.raises(error, match="budget_bytes"):
        utils.largest_batch_that_fits(per_sample(1), 8, cpu, budget_bytes=budget)


def test_largest_batch_rejects_a_step_that_cannot_be_called_and_a_bad_device():
    with pytest.raises(TypeError, match="step must be callable"):
        utils.largest_batch_that_fits(64, 8, cpu, budget_bytes=MiB)
    with pytest.raises(TypeError, match="device must be"):
        utils.largest_batch_that_fits(per_sample(1), 8, 0, budget_bytes=MiB)
    with pytest.raises(ValueError, match="not a device name"):
        utils.largest_batch_that_fits(per_sample(1), 8, "gpu please", budget_bytes=MiB)


@pytest.mark.parametrize("name", ["one-cuda-gpu", "two-cuda-gpus"])
def test_largest_batch_on_cuda_lets_the_allocator_decide_under_the_budget(machine, name, fake_cuda):
    machine(name)
    oom = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError
    limits = []

    def step(batch):
        limits.append(fake_cuda["fraction"])
        if batch > 300:
            raise oom("CUDA out of memory. Tried to allocate 1.00 GiB.")  # as the allocator words it
        return 10**12                                           # ignored on a GPU: the allocator decides

    assert utils.largest_batch_that_fits(step, 4096, cuda0, budget_bytes=64 * MiB) == 256
    assert all(f < 1.0 for f in limits) and fake_cuda["fraction"] == 1.0   # capped, then restored
    assert utils.largest_batch_that_fits(step, 4096, cuda0) == 256           # no budget: the whole GPU


def test_checked_device_parses_names_and_with_exists_refuses_devices_the_machine_lacks(machine):
    """The one device check of the series' helpers (lessons 06-09 use it)."""
    machine("one-cuda-gpu")
    assert utils.checked_device("cuda:0", exists=True) == torch.device("cuda", 0)
    assert utils.checked_device(torch.device("cpu")) == torch.device("cpu")
    assert utils.checked_device("cuda:3") == torch.device("cuda", 3)  # no existence check unless asked
    with pytest.raises(ValueError, match=r"cuda:3 does not exist: this machine has 1 CUDA GPU\(s\)"):
        utils.checked_device("cuda:3", exists=True)
    with pytest.raises(ValueError, match="mps does not exist"):
        utils.checked_device("mps", exists=True)
    machine("apple-mps")
    assert utils.checked_device("mps", exists=True) == torch.device("mps")
    with pytest.raises(ValueError, match="not a device name: 'gpu'"):
        utils.checked_device("gpu")
    with pytest.raises(TypeError, match="got int"):
        utils.checked_device(0)
