"""The checks of lesson 08's exercises (exercises/oom.py): the right answer passes, typical wrong ones
(a tensor kept in the list instead of a weak reference, a global name that keeps it, halving alone,
a search that swallows a bug or lets an out-of-memory error through, a linear search, the bug's own
line for a late error) get their own message.

Every out-of-memory error in these checks is a real one that every machine raises at once (the
impossible torch.empty(2**62, dtype=torch.uint8)), and the batch searches run on the CPU, where the
step's count decides: so the checks say the same on every machine, which the tests show on simulated
ones (the `machine` fixture). No GPU is needed.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
import torch

from exercises import check
from utils import is_out_of_memory, largest_batch_that_fits, limited_memory, release_cached_memory

MACHINES = ["cpu-only", "one-cuda-gpu", "two-cuda-gpus", "apple-mps"]


def said(capsys) -> str:
    return capsys.readouterr().out


# --- oom.kept-alive --------------------------------------------------------------------------

def failing_step(alive):
    activations = torch.ones(1000, 1000)
    alive.append(weakref.ref(activations))
    torch.empty(2**62, dtype=torch.uint8)


def keeps_the_tensor_itself(alive):
    activations = torch.ones(1000, 1000)
    alive.append(activations)
    torch.empty(2**62, dtype=torch.uint8)


KEPT = []


def keeps_a_global_name(alive):
    activations = torch.ones(1000, 1000)
    KEPT.append(activations)
    alive.append(weakref.ref(activations))
    torch.empty(2**62, dtype=torch.uint8)


def frees_it_first(alive):
    activations = torch.ones(1000, 1000)
    alive.append(weakref.ref(activations))
    del activations
    torch.empty(2**62, dtype=torch.uint8)


@pytest.mark.parametrize("name", MACHINES)
def test_kept_alive_accepts_a_weak_reference_and_alive_then_gone_on_every_machine(machine, capsys, name):
    machine(name)
    assert check("oom.kept-alive", failing_step, True, False)
    assert "A kept error keeps its traceback" in said(capsys)


def test_kept_alive_rejects_the_wrong_observations(capsys):
    assert not check("oom.kept-alive", failing_step, False, False)
    assert "failing_step works, but alive_while_caught is wrong" in said(capsys)
    assert not check("oom.kept-alive", failing_step, True, True)
    assert "failing_step works, but alive_after_del is wrong" in said(capsys)
    assert not check("oom.kept-alive", failing_step, "yes", False)
    assert "alive_while_caught should be a bool, but it is a str" in said(capsys)


def test_kept_alive_rejects_a_tensor_in_the_list_a_global_name_and_a_tensor_freed_first(capsys):
    assert not check("oom.kept-alive", keeps_the_tensor_itself, True, False)
    assert "failing_step put a Tensor in the list, not a weakref.ref" in said(capsys)
    assert not check("oom.kept-alive", keeps_a_global_name, True, False)
    assert "something besides the error holds it, a global name perhaps" in said(capsys)
    KEPT.clear()
    assert not check("oom.kept-alive", frees_it_first, True, False)
    assert "the tensor was already gone while the error was kept" in said(capsys)


def test_kept_alive_rejects_a_step_that_raises_nothing_or_another_error(capsys):
    assert not check("oom.kept-alive", lambda alive: alive.append(weakref.ref(torch.ones(1))), True, False)
    assert "failing_step returned without an error" in said(capsys)
    assert not check("oom.kept-alive", lambda alive: torch.empty(2**62), True, False)  # float32: no allocation
    assert "failing_step raised RuntimeError: Storage size calculation overflowed" in said(capsys)
    gc.collect()


# --- oom.bisect ------------------------------------------------------------------------------

def fits(step, batch, device, budget_bytes):
    try:
        with limited_memory(device, budget_bytes):
            needed = step(batch)
    except RuntimeError as err:
        if not is_out_of_memory(err):
            raise
        release_cached_memory(device)
        return False
    return device.type != "cpu" or needed <= budget_bytes


def failed_before(low, start):
    """The size halving tried just before ``low`` (start + 1 when start itself fitted)."""
    high = start + 1 if low == start else start
    while high // 2 > low:
        high //= 2
    return high


def bisect(step, start, device, budget_bytes):
    low = largest_batch_that_fits(step, start, device, budget_bytes)
    high = failed_before(low, start)
    while high - low > 1:
        mid = (low + high) // 2
        if fits(step, mid, device, budget_bytes):
            low = mid
        else:
            high = mid
    return low


def bisect_recursive(step, start, device, budget_bytes, low=None, high=None):
    """Another right form: remember the last failure while halving, then bisect by recursion."""
    if low is None:
        high, low = start + 1, start
        while low >= 1 and not fits(step, low, device, budget_bytes):
            high, low = low, low // 2
    if high - low <= 1:
        return low
    mid = (low + high) // 2
    if fits(step, mid, device, budget_bytes):
        return bisect_recursive(step, start, device, budget_bytes, mid, high)
    return bisect_recursive(step, start, device, budget_bytes, low, mid)


def bisect_twice_the_fit(step, start, device, budget_bytes):
    """The old hint's reading: twice what halving found failed. From 101 halving finds 50; 100 fits."""
    low = largest_batch_that_fits(step, start, device, budget_bytes)
    high = min(start + 1, 2 * low)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if fits(step, mid, device, budget_bytes) else (low, mid)
    return low


def one_past(step, start, device, budget_bytes):
    return bisect(step, start, device, budget_bytes) + 1


def one_short(step, start, device, budget_bytes):
    found = bisect(step, start, device, budget_bytes)
    return found - 1 if found > start // 2 else found


def bisect_past_start(step, start, device, budget_bytes):
    low = largest_batch_that_fits(step, start, device, budget_bytes)
    high = 2 * low  # when start itself fits, 2 * start never failed
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if fits(step, mid, device, budget_bytes) else (low, mid)
    return low


def linear_search(step, start, device, budget_bytes):
    batch = largest_batch_that_fits(step, start, device, budget_bytes)
    while batch < start and fits(step, batch + 1, device, budget_bytes):
        batch += 1
    return batch


def swallows_every_error(step, start, device, budget_bytes):
    def fits_anyway(batch):
        try:
            return fits(step, batch, device, budget_bytes)
        except RuntimeError:
            return False

    low = largest_batch_that_fits(step, start, device, budget_bytes)
    high = failed_before(low, start)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if fits_anyway(mid) else (low, mid)
    return low


def ignores_the_count(step, start, device, budget_bytes):
    def fits_if_no_error(batch):  # right on a GPU, where the allocator decides; on a CPU nothing refuses
        try:
            step(batch)
        except RuntimeError as err:
            if not is_out_of_memory(err):
                raise
            return False
        return True

    low = largest_batch_that_fits(step, start, device, budget_bytes)
    high = failed_before(low, start)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if fits_if_no_error(mid) else (low, mid)
    return low


def lets_out_of_memory_through(step, start, device, budget_bytes):
    low = largest_batch_that_fits(step, start, device, budget_bytes)
    high = failed_before(low, start)
    while high - low > 1:
        mid = (low + high) // 2
        needed = step(mid)
        low, high = (mid, high) if needed <= budget_bytes else (low, mid)
    return low


@pytest.mark.parametrize("name", MACHINES)
def test_bisect_accepts_halving_then_bisection_on_every_machine(machine, capsys, name):
    machine(name)
    assert check("oom.bisect", bisect)
    assert "halving finds 2048; your bisection finds 3276, the most that fit" in said(capsys)


def test_bisect_accepts_a_recursive_search_that_remembers_the_last_failure(capsys):
    assert check("oom.bisect", bisect_recursive)


def test_bisect_rejects_twice_the_fit_taken_for_the_failure(capsys):
    assert not check("oom.bisect", bisect_twice_the_fit)
    assert "started at 101, largest_batch_bisect returned 99, not 100" in said(capsys)


def test_bisect_says_off_by_one_instead_of_the_generic_messages(capsys):
    assert not check("oom.bisect", one_past)
    assert "returned 3277, one too many: 3277 samples of 5 KiB do not fit in 16 MiB, 3276 do" in said(capsys)
    assert not check("oom.bisect", one_short)
    assert "returned 3275, one too few: 3276 samples of 5 KiB fit in 16 MiB too" in said(capsys)


def test_bisect_rejects_halving_alone_and_a_search_past_start(capsys):
    assert not check("oom.bisect", largest_batch_that_fits)
    assert "largest_batch_bisect returned 2048, what halving finds" in said(capsys)
    assert not check("oom.bisect", bisect_past_start)
    assert "for a start of 1000 whose step fits, largest_batch_bisect returned 1999: never try above start" in said(
        capsys)


def test_bisect_rejects_a_linear_search_and_a_search_that_ignores_the_cpus_count(capsys):
    assert not check("oom.bisect", linear_search)
    assert "the answer is right, but it took 1231 tries of the step" in said(capsys)
    assert not check("oom.bisect", ignores_the_count)
    assert "4095 samples of 5 KiB do not fit in 16 MiB, only 3276" in said(capsys)


def test_bisect_rejects_a_swallowed_bug_and_an_out_of_memory_error_let_through(capsys):
    assert not check("oom.bisect", swallows_every_error)
    assert "a step with a bug (a shape error at some sizes) went unnoticed" in said(capsys)
    assert not check("oom.bisect", lets_out_of_memory_through)
    assert "largest_batch_bisect let an out-of-memory error through" in said(capsys)


# --- oom.late-error --------------------------------------------------------------------------

RIGHT = {"without synchronize": "b", "with synchronize": "a", "cost": "b"}


@pytest.mark.parametrize("name", MACHINES)
def test_late_error_accepts_a_later_call_the_synchronize_and_one_wait(machine, capsys, name):
    machine(name)
    assert check("oom.late-error", dict(RIGHT))
    assert check("oom.late-error", {k: f" {v.upper()} " for k, v in RIGHT.items()})
    assert "surfaces at the first call that meets the GPU after it" in said(capsys)


def test_late_error_explains_the_bugs_own_line_and_a_free_synchronize(capsys):
    assert not check("oom.late-error", RIGHT | {"without synchronize": "a"})
    assert "the error is not reported at the bug's line: there Python only queues the kernel" in said(capsys)
    assert not check("oom.late-error", RIGHT | {"cost": "c"})
    assert "a synchronize() is not free" in said(capsys)
    assert not check("oom.late-error", RIGHT | {"with synchronize": "c"})
    assert "the bug's line only queued the kernel" in said(capsys)


def test_late_error_rejects_a_missing_answer_and_a_letter_that_is_no_choice(capsys):
    assert not check("oom.late-error", {"cost": "b"})
    assert 'answers lacks "without synchronize", "with synchronize"' in said(capsys)
    assert not check("oom.late-error", RIGHT | {"cost": "d"})
    assert "answers[\"cost\"] is 'd': answer with a letter" in said(capsys)
    assert not check("oom.late-error", RIGHT | {"cost": 2})
    assert 'answers["cost"] should be a str, but it is an int' in said(capsys)


def test_kept_alive_and_bisect_accept_numpy_and_tensor_forms_of_the_right_answers(capsys):
    """NumPy's bool and int, a tensor of one value: _expect takes them as the bool or int they hold,
    where it said "should be a bool, but it is a bool" and "should be an int, but it is an int64"."""
    assert check("oom.kept-alive", failing_step, np.True_, torch.tensor(False))
    assert "A kept error keeps its traceback" in said(capsys)
    assert check("oom.bisect", lambda *args: np.int64(bisect(*args)))
    assert check("oom.bisect", lambda *args: torch.tensor(bisect(*args)))
    assert check("oom.bisect", lambda *args: float(bisect(*args)))  # a whole float: a count all the same
    assert "your bisection finds 3276, the most that fit" in said(capsys)
    assert not check("oom.kept-alive", failing_step, np.int64(1), False)  # a number is no bool
    assert "alive_while_caught should be a bool, but it is an int64" in said(capsys)
