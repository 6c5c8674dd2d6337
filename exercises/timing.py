"""The checks of lesson 05, asynchronous GPU work and honest timing.

Each timer is run twice: first against a simulated GPU (exercises/core.py), which catches a clock
read before the wait, a missing warm-up and a wrong value on any machine; then, once it passes, for
real on the reader's own device, and the "/right" message says what that device showed.
"""

import numbers
import statistics
import time

import torch

from utils import Timing, format_seconds, median_and_iqr_seconds, median_seconds, try_gpu

from .core import (
    _expect,
    _expect_callable,
    _register,
    _say,
    _SimulatedGPU,
    _time_with_a_simulated_gpu,
    _TimeitReads,
    _timer_verdict,
    _Wrong,
)


def _timing_works_without_a_wait_in_between(gpu):
    """Whether two calls were queued with no synchronise between them."""
    pending = False
    for event in gpu.events:
        if event == "work":
            if pending:
                return True
            pending = True
        elif event == "sync":
            pending = False
    return False


def _timing_pattern(statistic, gpu_type=_SimulatedGPU):
    """``statistic`` of the simulated GPU's per-call work, in seconds (its PATTERN of work_seconds)."""
    gpu = gpu_type()
    return statistic([gpu.work_seconds * p for p in gpu.PATTERN])


class _SpreadGPU(_SimulatedGPU):
    """The simulated GPU of the spread exercise: its quartiles lie on flat stretches of the sorted times,
    so every quartile method finds an IQR of 0.4 of work_seconds (0.35 to 0.45 with fewer than eight
    calls), half of it is 0.2, and one slow call puts the standard deviation near 0.5 and the mean at
    1.15: a half IQR, a standard deviation or a mean each fails."""

    PATTERN = (1.0, 0.8, 1.2, 0.7, 1.0, 1.2, 0.8, 2.5)


class _NaiveGPU(_SimulatedGPU):
    """The simulated GPU of the naive-clock exercise: its launches vary as _SpreadGPU's work does, so that
    the median of the reads (1.0 of launch_seconds) stands apart from their mean (1.15) and minimum (0.7)."""

    LAUNCH_PATTERN = _SpreadGPU.PATTERN


def _timing_seconds(value, what):
    """A timer's result as a float: a number (also NumPy's), or a tensor of one value; else _Wrong."""
    if isinstance(value, torch.Tensor) and value.numel() == 1 and value.is_floating_point():
        return float(value)
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    return float(_expect(value, (int, float), what))  # says what it is instead, unless a tensor of one value


def _timing_simulated(timer, gpu_type=_SimulatedGPU):
    """_time_with_a_simulated_gpu(timer), with timeit's timers (timeit.default_timer, timeit.timeit,
    timeit.repeat, timeit.Timer: time.perf_counter by another name, which the timeit module holds as its
    own) reading the simulated clock too."""
    with _TimeitReads(lambda: time.perf_counter()):
        return _time_with_a_simulated_gpu(timer, gpu_type=gpu_type)


_TIMING_RATIO = "b"  # what decides how far a naive read is off: the device's work against the launch


@_register("timing.naive-clock", hint="timing.naive-clock/hint")
def _timing_naive_clock(launch_seconds, ratio_decided_by):
    _expect_callable(launch_seconds, "launch_seconds")
    result, gpu = _timing_simulated(launch_seconds, gpu_type=_NaiveGPU)
    if "work" not in gpu.events:
        raise _Wrong("core/timer-never-called")
    if "clock" not in gpu.events:
        raise _Wrong("core/timer-no-clock")
    if gpu.events.index("clock") < gpu.events.index("work"):
        raise _Wrong("core/timer-no-warm-up")
    if _timing_works_without_a_wait_in_between(gpu):
        raise _Wrong("timing.naive-clock/busy")
    result = _timing_seconds(result, "launch_seconds(fn, device)")
    if not 0 < result < gpu.work_seconds / 10:
        raise _Wrong("timing.naive-clock/waited", got=format_seconds(result),
                     launch=format_seconds(gpu.launch_seconds), work=format_seconds(gpu.work_seconds))
    if not 0.9 * gpu.launch_seconds <= result <= 1.1 * gpu.launch_seconds:  # a mean, a minimum: not the median
        raise _Wrong("timing.naive-clock/not-median", got=format_seconds(result),
                     launch=format_seconds(gpu.launch_seconds))
    _expect(ratio_decided_by, str, "ratio_decided_by")
    if ratio_decided_by.strip().lower().rstrip(")").rstrip(".").strip() != _TIMING_RATIO:  # "B", "b)" are b
        raise _Wrong("timing.naive-clock/ratio", got=ratio_decided_by)
    return _timing_naive_on_this_machine(launch_seconds)


def _timing_naive_on_this_machine(launch_seconds):
    """The learner's naive read and median_seconds, for real on the reader's device: the "/right" fields."""
    device = try_gpu()

    def fn():
        return torch.randn(2048, 2048, device=device)

    naive = _timing_seconds(launch_seconds(fn, device), "launch_seconds(fn, device)")
    honest = median_seconds(fn, device, min_run_time=0.1)
    return {"device": device, "naive": format_seconds(naive), "honest": format_seconds(honest),
            "ratio": f"{honest / naive:.1f}" if naive > 0 else "?",
            "note": _say("timing.naive-clock/cpu-note") if device.type == "cpu" else ""}


def _timing_as_timing(result, what):
    """``result`` as a Timing: anything with a numeric median and iqr (lesson 05 defines its own class),
    numbers of NumPy's or tensors of one value too (torch.quantile's)."""
    values = [getattr(result, "median", None), getattr(result, "iqr", None)]
    for i, v in enumerate(values):
        if isinstance(v, torch.Tensor) and v.numel() == 1 and v.is_floating_point():
            values[i] = float(v)
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values):
        raise _Wrong("timing.spread/not-a-timing", what=what, got=type(result).__name__)
    return Timing(float(values[0]), float(values[1]))


@_register("timing.spread", hint="timing.spread/hint")
def _timing_spread(simple_timer_with_spread):
    _expect_callable(simple_timer_with_spread, "simple_timer_with_spread")
    result, gpu = _timing_simulated(simple_timer_with_spread, gpu_type=_SpreadGPU)
    _timer_verdict(gpu)
    got = _timing_as_timing(result, "simple_timer_with_spread(fn, device)")
    median = _timing_pattern(statistics.median, _SpreadGPU) + gpu.launch_seconds
    if not 0.97 * median <= got.median <= 1.03 * median:
        raise _Wrong("timing.spread/median", got=format_seconds(got.median), want=format_seconds(median))
    if got.iqr < 0:
        raise _Wrong("timing.spread/iqr-negative", got=format_seconds(got.iqr))
    if got.iqr == 0:
        raise _Wrong("timing.spread/iqr-zero")
    if 0.15 * gpu.work_seconds <= got.iqr <= 0.25 * gpu.work_seconds:
        raise _Wrong("timing.spread/iqr-half", got=format_seconds(got.iqr, "ms"))
    if not 0.33 * gpu.work_seconds <= got.iqr <= 0.47 * gpu.work_seconds:
        raise _Wrong("timing.spread/iqr", got=format_seconds(got.iqr, "ms"))
    return _timing_spread_on_this_machine(simple_timer_with_spread, "record" in gpu.events)


def _timing_spread_on_this_machine(simple_timer_with_spread, uses_events=False):
    """The learner's timer and median_and_iqr_seconds, for real on the reader's device: the "/right" fields.
    A timer built on events is not run on a CPU, which has none: the field says so instead."""
    device = try_gpu()
    n = 256 if device.type == "cpu" else 4096  # on a GPU, large enough for its work to outlast a launch
    x = torch.randn(n, n, generator=torch.Generator().manual_seed(0)).to(device)
    if uses_events and device.type == "cpu":
        mine = _say("timing/events-need-a-gpu")
    else:
        mine = _timing_as_timing(simple_timer_with_spread(lambda: x @ x, device),
                                 "simple_timer_with_spread(fn, device)")
    return {"device": device, "n": n, "mine": mine, "helper": median_and_iqr_seconds(lambda: x @ x, device, 0.1)}


@_register("timing.queued-timer", hint="timing.queued-timer/hint")
def _timing_queued_timer(queued_timer):
    _expect_callable(queued_timer, "queued_timer")
    result, gpu = _timing_simulated(queued_timer)
    _timer_verdict(gpu)
    reads = [i for i, event in enumerate(gpu.events) if event in ("clock", "record")]  # a clock read or an event
    timed = gpu.events[reads[0]:reads[-1] + 1]
    if timed.count("sync") > 1:
        raise _Wrong("timing.queued-timer/waits-each", syncs=timed.count("sync"), calls=timed.count("work"))
    result = _timing_seconds(result, "queued_timer(fn, device)")
    per_call = _timing_pattern(statistics.mean)
    if 0.95 * per_call * timed.count("work") <= result <= 1.1 * per_call * timed.count("work"):
        raise _Wrong("timing.queued-timer/total", calls=timed.count("work"))
    if not 0.95 * per_call <= result <= 1.1 * per_call:
        raise _Wrong("timing.queued-timer/per-call", got=format_seconds(result), want=format_seconds(per_call))
    return _timing_queued_on_this_machine(queued_timer, "record" in gpu.events)


def _timing_queued_on_this_machine(queued_timer, uses_events=False):
    """The learner's queued timer and median_seconds, for real on the reader's device: the "/right" fields.
    A timer built on events is not run on a CPU, which has none: the rows say so instead."""
    device = try_gpu()
    if uses_events and device.type == "cpu":
        return {"device": device, "rows": _say("timing/events-need-a-gpu")}
    rows = []
    for k in (64, 256 if device.type == "cpu" else 4096):
        x = torch.randn(k, k, generator=torch.Generator().manual_seed(0)).to(device)

        def product(x=x):
            return x @ x

        waited = median_seconds(product, device, 0.05)
        queued = _timing_seconds(queued_timer(product, device), "queued_timer(fn, device)")
        rows.append(_say("timing.queued-timer/row", k=k, waited=format_seconds(waited), queued=format_seconds(queued)))
    return {"device": device, "rows": "\n".join(rows)}
