"""The checks of lesson 05's exercises (exercises/timing.py): the right timer passes, typical wrong ones
(no synchronise, no warm-up, a device left busy, a mean for a median, the total for a time per call)
get their own message.

Every timer runs against the simulated GPU of exercises/core.py, so no GPU is needed; machines with
GPUs are simulated with the `machine` fixture. After a right answer a check also times the learner's
function for real on the reader's device: on a simulated machine that device is not there, so that
run is replaced by fixed fields (`stub_real_runs`); one test per check does it for real, on this
machine's CPU.
"""

from __future__ import annotations

import statistics
import time
import timeit
from collections import namedtuple
from time import perf_counter

import numpy as np
import pytest
import torch

import exercises.timing
import utils
from exercises import check
from utils import Timing, synchronize

MACHINES = ["cpu-only", "one-cuda-gpu", "two-cuda-gpus", "apple-mps"]


@pytest.fixture
def stub_real_runs(monkeypatch):
    fields = {"device": "the simulated device", "naive": "10 µs", "honest": "1 ms", "ratio": "100.0", "note": "",
              "n": 4096, "mine": Timing(1e-3, 1e-4), "helper": Timing(1e-3, 1e-5), "rows": "(rows)"}
    for name in ("_timing_naive_on_this_machine", "_timing_spread_on_this_machine", "_timing_queued_on_this_machine"):
        monkeypatch.setattr(exercises.timing, name, lambda timer, uses_events=False: fields)


def said(capsys) -> str:
    return capsys.readouterr().out


# --- timing.naive-clock ----------------------------------------------------------------------

def launch_seconds(fn, device, repeats=10):
    fn()
    synchronize(device)
    reads = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        reads.append(time.perf_counter() - start)
        synchronize(device)
    return statistics.median(reads)


def reads_after_the_wait(fn, device, repeats=10):
    fn()
    synchronize(device)
    reads = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        synchronize(device)
        reads.append(time.perf_counter() - start)
    return statistics.median(reads)


def leaves_the_device_busy(fn, device, repeats=10):
    fn()
    synchronize(device)
    reads = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        reads.append(time.perf_counter() - start)
    return statistics.median(reads)


def no_warm_up(fn, device, repeats=10):
    reads = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        reads.append(time.perf_counter() - start)
        synchronize(device)
    return statistics.median(reads)


@pytest.mark.parametrize("name", MACHINES)
def test_naive_clock_accepts_a_fair_naive_read_and_the_answer_b_on_every_machine(machine, stub_real_runs, capsys,
                                                                                  name):
    machine(name)
    assert check("timing.naive-clock", launch_seconds, "b")
    assert "launch_seconds reads the clock straight after the call" in said(capsys)


def launch_seconds_with_torch_cuda(fn, device, repeats=10):
    """Another right answer: torch.cuda.synchronize(), perf_counter imported by name, a sorted middle."""
    fn()
    torch.cuda.synchronize()
    reads = []
    for _ in range(repeats):
        start = perf_counter()
        fn()
        reads.append(perf_counter() - start)
        torch.cuda.synchronize()
    return sorted(reads)[len(reads) // 2]


def launch_seconds_waiting_before_each_read(fn, device, repeats=10):
    """Another right answer: the wait before each read instead of after it, and time.monotonic."""
    fn()
    reads = []
    for _ in range(repeats):
        synchronize(device)
        start = time.monotonic()
        fn()
        reads.append(time.monotonic() - start)
    synchronize(device)
    return statistics.median(reads)


@pytest.mark.parametrize("letter", ["B", " b ", "b)", "b."])
def test_naive_clock_accepts_torch_cuda_synchronize_and_the_letter_as_a_learner_writes_it(machine, stub_real_runs,
                                                                                           capsys, letter):
    machine("one-cuda-gpu")
    assert check("timing.naive-clock", launch_seconds_with_torch_cuda, letter)
    assert check("timing.naive-clock", launch_seconds_waiting_before_each_read, letter)
    assert "launch_seconds reads the clock straight after the call" in said(capsys)


def launch_seconds_returning(median):
    """launch_seconds whose reads, in nanoseconds, are reduced by median(reads) to what it returns."""
    def timer(fn, device, repeats=10):
        fn()
        synchronize(device)
        reads = []
        for _ in range(repeats):
            start = time.perf_counter_ns()
            fn()
            reads.append(time.perf_counter_ns() - start)
            synchronize(device)
        return median(reads)
    return timer


@pytest.mark.parametrize("median", [lambda r: torch.tensor(r, dtype=torch.float64).median() / 1e9,
                                    lambda r: np.median(np.array(r, dtype=np.float32) / 1e9)],
                         ids=["a tensor", "a NumPy float32"])
def test_naive_clock_accepts_a_median_that_is_a_tensor_or_a_numpy_number(stub_real_runs, capsys, median):
    assert check("timing.naive-clock", launch_seconds_returning(median), "b")
    assert "launch_seconds reads the clock straight after the call" in said(capsys)


def test_naive_clock_accepts_a_timer_that_reads_timeit_default_timer(stub_real_runs, capsys):
    def with_timeit(fn, device, repeats=10):
        fn()
        synchronize(device)
        reads = []
        for _ in range(repeats):
            start = timeit.default_timer()
            fn()
            reads.append(timeit.default_timer() - start)
            synchronize(device)
        return statistics.median(reads)

    assert check("timing.naive-clock", with_timeit, "b")
    assert "launch_seconds reads the clock straight after the call" in said(capsys)
    assert timeit.default_timer is time.perf_counter  # given back afterwards


def test_naive_clock_rejects_a_read_taken_after_the_wait(stub_real_runs, capsys):
    assert not check("timing.naive-clock", reads_after_the_wait, "b")
    assert "launch_seconds returned 1.02 ms, about the simulated GPU's work per call (1.00 ms)" in said(capsys)


def test_naive_clock_rejects_the_mean_or_the_minimum_of_the_reads(stub_real_runs, capsys):
    """The simulated launches vary, so that the median the exercise asks for stands apart."""
    def naive_with(statistic):
        def launch_seconds(fn, device, repeats=10):
            fn()
            synchronize(device)
            reads = []
            for _ in range(repeats):
                start = time.perf_counter()
                fn()
                reads.append(time.perf_counter() - start)
                synchronize(device)
            return statistic(reads)
        return launch_seconds

    assert check("timing.naive-clock", naive_with(statistics.median), "b")
    for wrong in (statistics.mean, min):
        assert not check("timing.naive-clock", naive_with(wrong), "b")
        assert "return the median of the reads (statistics.median), not their mean or their minimum" in said(capsys)


def test_naive_clock_rejects_a_device_left_busy_and_a_missing_warm_up(stub_real_runs, capsys):
    assert not check("timing.naive-clock", leaves_the_device_busy, "b")
    assert "a call was launched while the one before it was still queued" in said(capsys)
    assert not check("timing.naive-clock", no_warm_up, "b")
    assert "the first call was timed: it is cold" in said(capsys)


def test_naive_clock_rejects_a_wrong_letter_and_a_letter_of_the_wrong_type(stub_real_runs, capsys):
    assert not check("timing.naive-clock", launch_seconds, "a")
    assert 'ratio_decided_by is "a": look again at what the naive read measures' in said(capsys)
    assert not check("timing.naive-clock", launch_seconds, 2)
    assert "ratio_decided_by should be a str, but it is an int" in said(capsys)
    assert not check("timing.naive-clock", launch_seconds, ...)
    assert said(capsys).startswith("Not answered yet")


def test_naive_clock_times_the_learners_function_for_real_on_this_machines_cpu(machine, capsys):
    machine("cpu-only")
    assert check("timing.naive-clock", launch_seconds, "b")
    out = said(capsys)
    assert "On this machine (cpu), torch.randn(2048, 2048): read straight after the call" in out
    assert "On a CPU the two agree up to noise" in out


# --- timing.spread ---------------------------------------------------------------------------

def spread_timer(fn, device, repeats=25):
    fn()
    synchronize(device)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        synchronize(device)
        times.append(time.perf_counter() - start)
    q1, median, q3 = statistics.quantiles(times, n=4)
    return Timing(median, q3 - q1)


def spread_timer_with(statistic):
    """spread_timer with another way to the result: statistic(times) -> what the timer returns."""
    def timer(fn, device, repeats=25):
        fn()
        synchronize(device)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            synchronize(device)
            times.append(time.perf_counter() - start)
        return statistic(times)
    return timer


def spread_without_sync(fn, device, repeats=25):
    fn()
    synchronize(device)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    q1, median, q3 = statistics.quantiles(times, n=4)
    return Timing(median, q3 - q1)


@pytest.mark.parametrize("name", MACHINES)
def test_spread_accepts_the_median_and_iqr_of_the_per_call_times_on_every_machine(machine, stub_real_runs, capsys,
                                                                                  name):
    machine(name)
    assert check("timing.spread", spread_timer)
    inclusive = spread_timer_with(lambda t: Timing(statistics.median(t), (q := statistics.quantiles(
        t, n=4, method="inclusive"))[2] - q[0]))
    assert check("timing.spread", inclusive)  # another quartile method is as good
    assert "The median and the IQR match the simulated GPU's calls" in said(capsys)


Spread = namedtuple("Spread", "median iqr")


@pytest.mark.parametrize("statistic", [
    lambda t: Timing((q := np.percentile(t, [25, 50, 75]))[1], q[2] - q[0]),
    lambda t: Timing((q := torch.quantile(torch.tensor(t, dtype=torch.float64),
                                          torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64)))[1], q[2] - q[0]),
    lambda t: Spread(statistics.median(t), (q := statistics.quantiles(t, n=4))[2] - q[0]),
], ids=["NumPy's percentiles", "torch.quantile's tensors", "a named tuple of its own"])
def test_spread_accepts_quartiles_of_numpy_or_torch_and_a_result_type_of_its_own(stub_real_runs, capsys, statistic):
    assert check("timing.spread", spread_timer_with(statistic))
    assert "The median and the IQR match the simulated GPU's calls" in said(capsys)


def test_spread_accepts_a_timer_that_calls_a_synchronize_of_its_own_as_lesson_05_defines_it(machine, stub_real_runs):
    # Lesson 05 defines synchronize in its own cell: another function than utils.synchronize, which on a
    # CPU waits for nothing; the check still has it wait for the simulated GPU.
    machine("cpu-only")
    namespace = {"__name__": "lesson"}
    source = ("import statistics, time, torch\n"
              "def synchronize(device):\n    if torch.device(device).type == 'cuda':\n"
              "        torch.cuda.synchronize(device)\n"
              "def timer(fn, device, repeats=25):\n    fn(); synchronize(device)\n    times = []\n"
              "    for _ in range(repeats):\n        s = time.perf_counter(); fn(); synchronize(device)\n"
              "        times.append(time.perf_counter() - s)\n"
              "    q1, m, q3 = statistics.quantiles(times, n=4)\n    return utils.Timing(m, q3 - q1)\n")
    namespace["utils"] = utils
    exec(compile(source, "lesson", "exec"), namespace)
    own = namespace["synchronize"]
    assert check("timing.spread", namespace["timer"])
    assert namespace["synchronize"] is own  # given back afterwards


def test_spread_rejects_a_timer_without_a_synchronise(stub_real_runs, capsys):
    assert not check("timing.spread", spread_without_sync)
    assert "the clock was read while the work was still queued on the GPU" in said(capsys)


def test_spread_rejects_a_mean_a_reversed_iqr_and_a_plain_tuple(stub_real_runs, capsys):
    mean = spread_timer_with(lambda t: Timing(statistics.mean(t), 1e-4))
    assert not check("timing.spread", mean)
    assert "the simulated GPU's calls take a median of 1.01 ms" in said(capsys)
    reversed_iqr = spread_timer_with(
        lambda t: Timing(statistics.median(t), (q := statistics.quantiles(t, n=4))[0] - q[2]))
    assert not check("timing.spread", reversed_iqr)
    assert "below zero: it is the third quartile less the first" in said(capsys)
    no_spread = spread_timer_with(lambda t: Timing(statistics.median(t), 0.0))
    assert not check("timing.spread", no_spread)
    assert "the IQR is 0, but the simulated GPU's calls vary" in said(capsys)
    plain = spread_timer_with(lambda t: (statistics.median(t), 1e-4))
    assert not check("timing.spread", plain)
    assert "should return a Timing(median, iqr), but it returns a tuple" in said(capsys)


def test_spread_times_the_learners_timer_for_real_on_this_machines_cpu(machine, capsys):
    machine("cpu-only")
    assert check("timing.spread", spread_timer)
    assert "On this machine (cpu), a 256 x 256 product: yours" in said(capsys)


# --- timing.queued-timer ---------------------------------------------------------------------

def queued_timer(fn, device, calls=100):
    fn()
    synchronize(device)
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    synchronize(device)
    return (time.perf_counter() - start) / calls


def waits_after_each_call(fn, device, calls=100):
    fn()
    synchronize(device)
    start = time.perf_counter()
    for _ in range(calls):
        fn()
        synchronize(device)
    return (time.perf_counter() - start) / calls


def returns_the_total(fn, device, calls=100):
    fn()
    synchronize(device)
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    synchronize(device)
    return time.perf_counter() - start


def never_waits(fn, device, calls=100):
    fn()
    synchronize(device)
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def warm_up_left_queued(fn, device, calls=100):
    fn()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    synchronize(device)
    return (time.perf_counter() - start) / calls


@pytest.mark.parametrize("name", MACHINES)
def test_queued_timer_accepts_calls_queued_back_to_back_and_one_wait_on_every_machine(machine, stub_real_runs,
                                                                                      capsys, name):
    machine(name)
    assert check("timing.queued-timer", queued_timer)
    assert "queued_timer warms up, queues the calls and waits once" in said(capsys)


def queued_timer_with_torch_cuda(fn, device, calls=100):
    """Another right answer: three warm-up calls, torch.cuda.synchronize(), the calls in a comprehension."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start = perf_counter()
    [fn() for _ in range(calls)]
    torch.cuda.synchronize()
    return (perf_counter() - start) / calls


def queued_timer_with_torch_accelerator(fn, device, calls=100):
    """Another right answer: torch.accelerator.synchronize(), a while loop, nanoseconds."""
    fn()
    torch.accelerator.synchronize()
    start, i = time.perf_counter_ns(), 0
    while i < calls:
        fn()
        i += 1
    torch.accelerator.synchronize()
    return (time.perf_counter_ns() - start) / 1e9 / calls


@pytest.mark.parametrize("timer", [queued_timer_with_torch_cuda, queued_timer_with_torch_accelerator])
def test_queued_timer_accepts_torch_cuda_and_torch_accelerator_synchronize(machine, stub_real_runs, capsys, timer):
    machine("one-cuda-gpu")
    assert check("timing.queued-timer", timer)
    assert "queued_timer warms up, queues the calls and waits once" in said(capsys)


def test_queued_timer_accepts_a_time_per_call_that_is_a_tensor(stub_real_runs, capsys):
    def as_a_tensor(fn, device, calls=100):
        return torch.tensor(queued_timer(fn, device, calls))

    assert check("timing.queued-timer", as_a_tensor)
    assert "queued_timer warms up, queues the calls and waits once" in said(capsys)


def test_queued_timer_rejects_a_wait_after_each_call_and_the_total(stub_real_runs, capsys):
    assert not check("timing.queued-timer", waits_after_each_call)
    assert "your timer synchronised 100 times while it timed 100 calls" in said(capsys)
    assert not check("timing.queued-timer", returns_the_total)
    assert "returned the time of all 100 calls together" in said(capsys)


def test_queued_timer_rejects_no_wait_at_all_and_a_warm_up_left_in_the_queue(stub_real_runs, capsys):
    assert not check("timing.queued-timer", never_waits)
    assert "the clock was read while the work was still queued" in said(capsys)
    assert not check("timing.queued-timer", warm_up_left_queued)  # its clock starts with the warm-up queued
    assert "the clock was read while the work was still queued" in said(capsys)
    assert not check("timing.queued-timer", lambda fn, device: 1e-3)
    assert "your timer never called the function it was given" in said(capsys)


def test_queued_timer_times_the_learners_timer_for_real_on_this_machines_cpu(machine, capsys):
    machine("cpu-only")
    assert check("timing.queued-timer", queued_timer)
    out = said(capsys)
    assert "64 x 64 product: waited for after each call" in out and "256 x 256 product" in out


# --- timers built on events (lesson 05 shows CUDA events) -------------------------------------

def queued_timer_with_cuda_events(fn, device, calls=100):
    """A right answer on an NVIDIA GPU: two CUDA events around the queued calls, one wait for the last."""
    fn()
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    for _ in range(calls):
        fn()
    end.record()
    end.synchronize()
    return begin.elapsed_time(end) / 1e3 / calls


def queued_timer_with_torch_event(fn, device, calls=100):
    """Another right answer: the device-generic torch.Event, with torch.accelerator.synchronize()."""
    fn()
    torch.accelerator.synchronize()
    begin, end = torch.Event(device, enable_timing=True), torch.Event(device, enable_timing=True)
    begin.record()
    for _ in range(calls):
        fn()
    end.record()
    torch.accelerator.synchronize()
    return begin.elapsed_time(end) / 1000 / calls


def spread_timer_with_mps_events(fn, device, repeats=25):
    """A right answer on a Mac: an MPS event pair around each call."""
    fn()
    torch.mps.synchronize()
    times = []
    for _ in range(repeats):
        begin, end = torch.mps.Event(enable_timing=True), torch.mps.Event(enable_timing=True)
        begin.record()
        fn()
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end) / 1e3)
    q1, median, q3 = statistics.quantiles(times, n=4)
    return Timing(median, q3 - q1)


@pytest.mark.parametrize("name", MACHINES)
@pytest.mark.parametrize("timer", [queued_timer_with_cuda_events, queued_timer_with_torch_event])
def test_queued_timer_accepts_a_timer_built_on_events_on_every_machine(machine, stub_real_runs, capsys, name, timer):
    # Before the simulated GPU made events of its own queue, a real CUDA event around simulated work timed
    # nothing and the check said "never read time.perf_counter()"; with no CUDA it raised.
    machine(name)
    assert check("timing.queued-timer", timer)
    assert "queued_timer warms up, queues the calls and waits once" in said(capsys)


def test_spread_accepts_a_timer_built_on_mps_events(machine, stub_real_runs, capsys):
    machine("apple-mps")
    assert check("timing.spread", spread_timer_with_mps_events)
    assert "The median and the IQR match the simulated GPU's calls" in said(capsys)


def test_an_event_timer_that_reads_before_the_end_event_is_reached_raises_as_cuda_does(stub_real_runs, capsys):
    def no_wait(fn, device, calls=100):
        fn()
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(calls):
            fn()
        end.record()
        return begin.elapsed_time(end) / 1e3 / calls

    assert not check("timing.queued-timer", no_wait)
    assert "Both events must be completed before calculating elapsed time." in said(capsys)


def test_an_event_timer_without_enable_timing_or_a_warm_up_is_wrong(stub_real_runs, capsys):
    def no_timing(fn, device, calls=100):
        fn()
        begin, end = torch.cuda.Event(), torch.cuda.Event()
        begin.record()
        [fn() for _ in range(calls)]
        end.record()
        end.synchronize()
        return begin.elapsed_time(end) / 1e3 / calls

    def no_warm_up(fn, device, calls=100):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        [fn() for _ in range(calls)]
        end.record()
        end.synchronize()
        return begin.elapsed_time(end) / 1e3 / calls

    assert not check("timing.queued-timer", no_timing)
    assert "Both events must be created with argument 'enable_timing=True'." in said(capsys)
    assert not check("timing.queued-timer", no_warm_up)
    assert "the first call was timed" in said(capsys)


def test_an_event_timer_that_never_reads_the_time_between_its_events_measured_nothing(stub_real_runs, capsys):
    def never_reads(fn, device, calls=100):
        fn()
        begin = torch.cuda.Event(enable_timing=True)
        begin.record()
        [fn() for _ in range(calls)]
        torch.cuda.synchronize()
        return 1e-3

    assert not check("timing.queued-timer", never_reads)
    assert "your timer never read a clock" in said(capsys)


def test_an_event_timer_is_right_on_a_cpu_too_and_is_not_run_there_for_real(machine, capsys):
    machine("cpu-only")
    assert check("timing.queued-timer", queued_timer_with_cuda_events)
    assert "not run here: your timer is built on events" in said(capsys)
    assert check("timing.spread", spread_timer_with_mps_events)
    assert "yours (not run here: your timer is built on events" in said(capsys)


# --- timers written other ways: timeit, a wait only on a GPU, the stream's own wait -------------

def spread_timer_by_timeit_repeat(fn, device, repeats=25):
    """A right answer: timeit.repeat times each call and its wait, one call per repeat."""
    fn()
    synchronize(device)
    times = timeit.repeat(lambda: (fn(), synchronize(device)), repeat=repeats, number=1)
    q1, median, q3 = statistics.quantiles(times, n=4)
    return Timing(median, q3 - q1)


def queued_timer_by_timeit(fn, device, calls=100):
    """A right answer: timeit.timeit around the queued calls and their one wait."""
    fn()
    synchronize(device)
    return timeit.timeit(lambda: ([fn() for _ in range(calls)], synchronize(device)), number=1) / calls


def waits_only_on_a_gpu(device):
    """How a learner waits without the series' helper: on a GPU, and on a CPU not at all."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def spread_timer_waiting_only_on_a_gpu(fn, device, repeats=25):
    fn()
    waits_only_on_a_gpu(device)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        waits_only_on_a_gpu(device)
        times.append(time.perf_counter() - start)
    q1, median, q3 = statistics.quantiles(times, n=4)
    return Timing(median, q3 - q1)


def queued_timer_waiting_if_cuda_is_available(fn, device, calls=100):
    fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return (time.perf_counter() - start) / calls


def queued_timer_by_the_streams_wait(fn, device, calls=100):
    fn()
    torch.cuda.current_stream().synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.default_stream(device).synchronize()
    return (time.perf_counter() - start) / calls


@pytest.mark.parametrize("name", MACHINES)
@pytest.mark.parametrize(("exercise", "timer"), [
    ("timing.spread", spread_timer_by_timeit_repeat), ("timing.queued-timer", queued_timer_by_timeit),
    ("timing.spread", spread_timer_waiting_only_on_a_gpu),
    ("timing.queued-timer", queued_timer_waiting_if_cuda_is_available),
    ("timing.queued-timer", queued_timer_by_the_streams_wait),
], ids=["timeit.repeat", "timeit.timeit", "a wait if device.type is cuda", "a wait if CUDA is available",
        "the stream's synchronize"])
def test_timers_that_wait_as_they_would_on_a_gpu_are_right_on_every_machine(machine, stub_real_runs, capsys, name,
                                                                           exercise, timer):
    # timeit's timers hold time.perf_counter as a default argument, which swapping time.perf_counter does not
    # reach ("never read a clock"); a timer handed the CPU on a machine without a GPU waited for nothing ("read
    # while the work was still queued"); torch.cuda.current_stream() raised there, and waited for nothing on
    # a GPU. On a GPU each of these waits for the work, and so they do for the simulated one now.
    machine(name)
    before = (timeit.default_timer, timeit.Timer.__init__.__defaults__, torch.cuda.is_available,
              torch.cuda.current_stream)
    if name == "apple-mps" and timer is queued_timer_waiting_if_cuda_is_available:  # a Mac's GPU: no wait
        assert not check(exercise, timer)
        assert "the clock was read while the work was still queued" in said(capsys)
    else:
        assert check(exercise, timer)
        assert "✓ Right" in said(capsys)
    assert before == (timeit.default_timer, timeit.Timer.__init__.__defaults__, torch.cuda.is_available,
                      torch.cuda.current_stream)  # given back afterwards


def test_a_timer_that_waits_only_on_a_gpu_still_must_wait(stub_real_runs, capsys):
    def never_on_cuda(fn, device, calls=100):
        fn()
        if device.type == "mps":
            torch.mps.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if device.type == "mps":
            torch.mps.synchronize()
        return (time.perf_counter() - start) / calls

    assert not check("timing.queued-timer", never_on_cuda)
    assert "the clock was read while the work was still queued" in said(capsys)


@pytest.mark.parametrize("repeats", [8, 10, 25, 100])
def test_spread_rejects_half_the_iqr_a_standard_deviation_and_a_range_whatever_the_number_of_calls(
        stub_real_runs, capsys, repeats):
    """The spread exercise's simulated GPU puts its quartiles on flat stretches of the sorted times: every
    quartile method gives the same IQR, and half of it, a standard deviation or max - min are each far off."""
    def timer_of(statistic):
        timer = spread_timer_with(statistic)
        return lambda fn, device: timer(fn, device, repeats=repeats)

    for method in ("exclusive", "inclusive"):
        right = timer_of(lambda t, m=method: Timing(statistics.median(t),
                                                    (q := statistics.quantiles(t, n=4, method=m))[2] - q[0]))
        assert check("timing.spread", right), (method, said(capsys))
    half = timer_of(lambda t: Timing(statistics.median(t), (q := statistics.quantiles(t, n=4))[2] - q[1]))
    assert not check("timing.spread", half)
    assert "the IQR is q[2] - q[0], the third quartile less the first, not less the median" in said(capsys)
    for wrong in (statistics.stdev, lambda t: max(t) - min(t)):
        assert not check("timing.spread", timer_of(lambda t, w=wrong: Timing(statistics.median(t), w(t))))
        assert "spread by about 0.4 ms between their first and third quartiles" in said(capsys)
    assert not check("timing.spread", timer_of(lambda t: Timing(statistics.mean(t), 4e-4)))
    assert "the median of the per-call times after the warm-up (not their mean)" in said(capsys)
