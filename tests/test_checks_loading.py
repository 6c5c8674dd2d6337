"""The checks of lesson 11's exercises (exercises/loading.py): the right answer passes, typical wrong
ones get their own message. The wrong answers are caught against the check's stand-ins (a DataLoader
whose workers take a known time to start, a step_time_split with known times), on any machine; the
right ones then also run for real on the CPU, one spawned worker included. No GPU is needed."""

from __future__ import annotations

import multiprocessing
import time
import timeit

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import exercises.loading
import utils
from exercises import check
from utils import step_time_split

DATA = TensorDataset(torch.randn(256, 1, 8, 8), torch.randint(0, 10, (256,)))


def said(capsys) -> str:
    return capsys.readouterr().out


# --- loading.spawn ------------------------------------------------------------------------

def first_batch_seconds(context):
    loader = DataLoader(DATA, batch_size=64, num_workers=1, multiprocessing_context=context)
    start = time.perf_counter()
    next(iter(loader))
    return time.perf_counter() - start


@pytest.mark.slow
def test_spawn_accepts_a_clock_around_the_workers_start_and_runs_it_for_real(capsys):
    """The real run starts one worker by spawning: a new Python that imports torch (seconds)."""
    assert check("loading.spawn", first_batch_seconds, "b")
    out = said(capsys)
    assert "Your clock covers the worker's start" in out and "with a spawned worker" in out


def test_spawn_catches_a_clock_started_after_the_workers(capsys):
    def late(context):
        batches = iter(DataLoader(DATA, batch_size=64, num_workers=1, multiprocessing_context=context))
        start = time.perf_counter()
        next(batches)
        return time.perf_counter() - start

    assert not check("loading.spawn", late, "b")
    assert "the clock starts after iter(loader), which is where the worker starts" in said(capsys)


def test_spawn_catches_a_context_not_passed_on_and_no_worker(capsys):
    def default_only(context):
        return first_batch_seconds(None)

    assert not check("loading.spawn", default_only, "b")
    assert "first_batch_seconds('spawn') makes a DataLoader with multiprocessing_context=None" in said(capsys)

    def no_worker(context):
        loader = DataLoader(DATA, batch_size=64)
        start = time.perf_counter()
        next(iter(loader))
        return time.perf_counter() - start

    assert not check("loading.spawn", no_worker, "b")
    assert "the DataLoader has num_workers=0: the exercise starts one worker" in said(capsys)


def test_spawn_catches_a_whole_epoch_timed_and_no_batch_taken(capsys):
    def whole_epoch(context):
        start = time.perf_counter()
        for _ in DataLoader(DATA, batch_size=64, num_workers=1, multiprocessing_context=context):
            pass
        return time.perf_counter() - start

    assert not check("loading.spawn", whole_epoch, "b")
    assert "returns 1.22 s, not 1.01 s" in said(capsys)

    def never_iterates(context):
        DataLoader(DATA, batch_size=64, num_workers=1, multiprocessing_context=context)
        return 0.5

    assert not check("loading.spawn", never_iterates, "b")
    assert "never takes a batch from a DataLoader" in said(capsys)


def test_spawn_puts_the_real_data_loader_and_clock_back(capsys):
    real = (torch.utils.data.DataLoader, time.perf_counter)
    check("loading.spawn", lambda context: 1 / 0, "b")
    assert (torch.utils.data.DataLoader, time.perf_counter) == real
    assert "your code raised ZeroDivisionError" in said(capsys)


@pytest.mark.parametrize(("letter", "printed"), [
    ("a", "pickle stores a class by its module and name only"), ("c", "that is fork. spawn starts a new Python"),
])
def test_spawn_explains_a_wrong_why(capsys, letter, printed):
    assert not check("loading.spawn", first_batch_seconds, letter)
    assert printed in said(capsys)


# --- loading.workers ----------------------------------------------------------------------

torch.manual_seed(0)
MODEL = nn.Sequential(nn.Flatten(), nn.Linear(64, 10))
OPTIMIZER = torch.optim.SGD(MODEL.parameters(), lr=0.1)


def loader_with(workers):
    return DataLoader(DATA, batch_size=16, shuffle=True, generator=torch.Generator().manual_seed(0),
                      num_workers=workers)


def per_step(workers):
    t = step_time_split(MODEL, loader_with(workers), OPTIMIZER, "cpu", max_batches=16)
    return t.waiting / (t.batches - 1), t.computing / t.batches


def test_workers_accepts_times_per_step_and_prints_the_real_table(capsys):
    assert check("loading.workers", per_step, False)
    out = said(capsys)
    assert all(f"num_workers={n}:" in out for n in (0, 1, 2, 4)) and "CPU cores" in out


def test_workers_catches_the_first_batch_counted_and_totals(capsys):
    def first_batch_counted(workers):
        t = step_time_split(MODEL, loader_with(workers), OPTIMIZER, "cpu", max_batches=16)
        return t.waiting / t.batches, t.computing / t.batches

    assert not check("loading.workers", first_batch_counted, False)
    assert "step_time_split keeps the first batch, which starts the workers, apart" in said(capsys)

    def totals(workers):
        t = step_time_split(MODEL, loader_with(workers), OPTIMIZER, "cpu", max_batches=16)
        return t.waiting, t.computing

    assert not check("loading.workers", totals, False)
    assert "the computing time is that of all the steps together" in said(capsys)


def test_workers_catches_workers_and_batches_not_passed_on(capsys):
    def always_two(workers):
        return per_step(2)

    assert not check("loading.workers", always_two, False)
    assert "per_step(0) gives step_time_split a loader with num_workers=2" in said(capsys)

    def ten_batches(workers):
        t = step_time_split(MODEL, loader_with(workers), OPTIMIZER, "cpu", max_batches=10)
        return t.waiting / (t.batches - 1), t.computing / t.batches

    assert not check("loading.workers", ten_batches, False)
    assert "max_batches=10, not 16" in said(capsys)


def test_workers_catches_a_timing_of_its_own_and_a_wrong_answer_about_cores(capsys):
    def own_clock(workers):
        start = time.perf_counter()
        for _ in loader_with(workers):
            pass
        return time.perf_counter() - start, 0.0

    assert not check("loading.workers", own_clock, False)
    assert "per_step never calls step_time_split" in said(capsys)
    assert not check("loading.workers", per_step, True)
    assert "a worker that sleeps, as one waiting for a disk does, needs no CPU core" in said(capsys)


def test_workers_replaces_a_step_time_split_the_notebook_defined_itself(capsys):
    """Lesson 11 defines step_time_split in its own #@save cell, another object than utils' one."""
    namespace = {"__name__": "lesson", "utils": utils, "MODEL": MODEL, "OPTIMIZER": OPTIMIZER,
                 "loader_with": loader_with}
    exec(compile("def step_time_split(*args, **kwargs):\n    return utils.step_time_split(*args, **kwargs)\n"
                 "def per_step(workers):\n"
                 "    t = step_time_split(MODEL, loader_with(workers), OPTIMIZER, 'cpu', max_batches=16)\n"
                 "    return t.waiting / t.batches, t.computing / t.batches\n", "lesson", "exec"), namespace)
    assert not check("loading.workers", namespace["per_step"], False)
    assert "Divide by batches - 1" in said(capsys)  # caught against the stand-in, not run for real
    assert namespace["step_time_split"].__module__ == "lesson"


@pytest.mark.parametrize(("measured", "says", "never"), [
    # The learner's table from a busy CPU: the waiting fell, the computing doubled.
    ({0: (0.0201, 2.98e-3), 4: (0.0052, 6.61e-3)},
     ["The waiting fell from 20.1 ms to 5.20 ms", "The computing rose from 2.98 ms to 6.61 ms"], "stayed"),
    ({0: (0.0201, 3.0e-3), 4: (0.0050, 3.1e-3)},
     ["The waiting fell", "The computing stayed about the same (3.00 ms, then 3.10 ms)"], "rose"),
    ({0: (0.0201, 3.0e-3), 4: (0.0190, 2.0e-3)},
     ["The waiting did not fall much", "The computing fell"], "The waiting fell"),
])
def test_workers_right_message_says_only_what_the_learners_numbers_show(measured, says, never):
    seen = exercises.loading._loading_seen(measured)
    assert all(s in seen for s in says), seen
    assert never not in seen



def spawn_by_context_object(context):
    context = multiprocessing.get_context(context)  # a context object, which a DataLoader takes as well
    loader = DataLoader(DATA, batch_size=64, num_workers=1, multiprocessing_context=context)
    start = time.perf_counter()
    next(iter(loader))
    return time.perf_counter() - start


def spawn_timed_by_timeit(context):
    loader = DataLoader(DATA, batch_size=64, num_workers=1, multiprocessing_context=context)
    start = timeit.default_timer()
    next(iter(loader))
    return timeit.default_timer() - start


@pytest.mark.parametrize("answer", [spawn_by_context_object, spawn_timed_by_timeit])
def test_spawn_takes_a_context_object_and_a_clock_read_through_timeit(capsys, answer):
    # A DataLoader takes multiprocessing.get_context("spawn") as well as "spawn", and timeit.default_timer is
    # time.perf_counter: both were refused once ("multiprocessing_context=<SpawnContext ...>", "never read a
    # clock"). The wrong letter ends the check before its real run, which spawns a Python (seconds).
    assert not check("loading.spawn", answer, "a")
    assert "pickle stores a class by its module and name only" in said(capsys)
    assert timeit.default_timer is time.perf_counter  # given back afterwards


def test_spawn_names_a_context_object_that_is_not_the_one_given_by_its_start_method(capsys):
    def always_fork(context):
        return spawn_by_context_object("fork")

    assert not check("loading.spawn", always_fork, "b")
    assert "first_batch_seconds('spawn') makes a DataLoader with multiprocessing_context='fork'" in said(capsys)


def test_spawn_catches_persistent_workers_warmed_up_before_the_clock(capsys):
    """Lesson 05's habit, a warm-up first, with persistent workers: the timed batch comes from workers that
    started before the clock did, so the start is not measured."""
    def warmed_up(context):
        loader = DataLoader(DATA, batch_size=64, num_workers=1, multiprocessing_context=context,
                            persistent_workers=True)
        next(iter(loader))  # warm-up
        start = time.perf_counter()
        next(iter(loader))
        return time.perf_counter() - start

    assert not check("loading.spawn", warmed_up, "b")
    assert "Not yet" in said(capsys)


@pytest.mark.slow
def test_spawn_and_workers_accept_a_callable_object_as_the_answer(capsys):
    """A class with __call__ reads its names from its module as a function does: the check's stand-ins reach it."""
    class FirstBatch:
        def __call__(self, context):
            return first_batch_seconds(context)

    assert check("loading.spawn", FirstBatch(), "b"), said(capsys)
