"""The checks of lesson 11, data loading.

Each measuring function is run twice. First against stand-ins whose cost is known, on any machine:
a DataLoader whose workers "start" when it is iterated and a clock that only they advance (was the
clock started before the workers, were the arguments passed on?), or a step_time_split that returns
known times (is the arithmetic per step right?). Then for real, and the "/right" message says what
the reader's machine showed. No check asserts a speed.
"""

import os
import sys
import time
import warnings
from typing import ClassVar

import torch

from utils import StepTimes, format_seconds

from .core import _expect, _expect_callable, _letter, _register, _say, _TimeitReads, _Wrong


def _loading_seconds(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        value = _expect(value, float, what)  # says what it should be, unless a NumPy number or a tensor
    return float(value)


class _LoadingClock:
    """A clock that only the stand-in DataLoader advances: its time is what the loader cost."""

    NAMES = ("perf_counter", "monotonic", "time")

    def __init__(self):
        self.now, self.reads = 100.0, 0

    def read(self):
        self.reads += 1
        return self.now

    def read_ns(self):
        return round(self.read() * 1e9)


class _LoadingFakeLoader:
    """Stands in for DataLoader: starting the workers (``iter``) costs START seconds, each batch BATCH;
    with ``persistent_workers=True`` the workers start at the first ``iter`` only, as DataLoader's do."""

    START, BATCH = 1.0, 0.01
    made: ClassVar[list] = []
    clock: ClassVar[_LoadingClock | None] = None

    def __init__(self, dataset, *args, **kwargs):
        self.kwargs = dict(kwargs)
        self.num_workers = self.kwargs.get("num_workers", 0)
        self.iterated = 0
        self.started = False
        _LoadingFakeLoader.made.append(self)

    def __iter__(self):
        if self.kwargs.get("num_workers", 0) and not (self.started and self.kwargs.get("persistent_workers")):
            self.clock.now += self.START
        self.started = True
        self.iterated = 0
        return self

    def __next__(self):
        if self.iterated == len(self):  # an epoch ends
            raise StopIteration
        self.clock.now += self.BATCH
        self.iterated += 1
        return torch.zeros(64, 1, 8, 8), torch.zeros(64, dtype=torch.long)

    def __len__(self):
        return 22


def _loading_globals_of(fn):
    """The module globals ``fn`` reads its names from: a function's own, or those of the function behind a
    callable object (its class's __call__), a bound method or a functools.partial."""
    for f in (fn, getattr(fn, "func", None), getattr(fn, "__func__", None), vars(type(fn)).get("__call__")):
        found = getattr(f, "__globals__", None)
        if isinstance(found, dict):
            return found
    return {}


def _loading_with_fakes(fn, *args, names=("DataLoader",), fakes=None):
    """Run ``fn(*args)`` with ``DataLoader`` (also as imported into ``fn``'s module) and the clocks
    of ``time`` and ``timeit`` replaced by stand-ins; return (its result, the clock)."""
    clock = _LoadingClock()
    _LoadingFakeLoader.made, _LoadingFakeLoader.clock = [], clock
    fakes = {"DataLoader": _LoadingFakeLoader, **(fakes or {})}
    data_module = sys.modules["torch.utils.data"]
    module_targets = [(data_module, "DataLoader"), (sys.modules["torch.utils.data.dataloader"], "DataLoader")]
    utils_module = sys.modules.get("utils")
    module_targets += [(utils_module, n) for n in names if n != "DataLoader" and utils_module is not None]
    clocks = {n: clock.read for n in _LoadingClock.NAMES} | {n + "_ns": clock.read_ns for n in _LoadingClock.NAMES}
    originals = {(m, n): getattr(m, n) for m, n in module_targets} | {(time, n): getattr(time, n) for n in clocks}
    names_of_fn = _loading_globals_of(fn)
    real_ids = {id(v): k[1] for k, v in originals.items()}
    swapped = {k: v for k, v in names_of_fn.items() if callable(v) and id(v) in real_ids}
    for name in names:  # a helper the notebook defined itself, in its #@save cell: another object
        own = names_of_fn.get(name)
        if callable(own) and getattr(own, "__name__", "") == name and name not in swapped:
            swapped[name], real_ids[id(own)] = own, name
    try:
        for module, name in module_targets:
            setattr(module, name, fakes[name])
        for name, fake in clocks.items():
            setattr(time, name, fake)
        for k, v in swapped.items():
            name = real_ids[id(v)]
            names_of_fn[k] = clocks.get(name) or fakes[name]
        with _TimeitReads(clock.read):  # timeit.default_timer and timeit's own timers read it too
            return fn(*args), clock
    finally:
        for (module, name), value in originals.items():
            setattr(module, name, value)
        names_of_fn.update(swapped)


_LOADING_WHY_SPAWN = "b"  # pickle names the class utils.DigitsDataset; the worker imports utils


def _loading_passed_on(given, context):
    """Whether a DataLoader's ``multiprocessing_context`` is the ``context`` it was to get ("spawn", or None
    for the default): as given, or as a context object (multiprocessing.get_context(context)), which a
    DataLoader takes as well; the second is named by its start method, "spawn"."""
    import multiprocessing

    if isinstance(given, multiprocessing.context.BaseContext):
        method = multiprocessing.get_start_method() if context is None else context
        return given.get_start_method() == method, given.get_start_method()
    return given == context, given


@_register("loading.spawn", hint="loading.spawn/hint")
def _loading_spawn(first_batch_seconds, why):
    _expect_callable(first_batch_seconds, "first_batch_seconds")
    letter = _letter(why, "why", "loading.spawn/choice")
    for context in ("spawn", None):
        got, clock = _loading_with_fakes(first_batch_seconds, context)
        made = _LoadingFakeLoader.made
        if not made or not any(loader.iterated for loader in made):
            raise _Wrong("loading.spawn/no-batch")
        loader = next(loader for loader in made if loader.iterated)
        if loader.num_workers != 1:
            raise _Wrong("loading.spawn/workers", got=loader.num_workers)
        passed_on, named = _loading_passed_on(loader.kwargs.get("multiprocessing_context"), context)
        if not passed_on:
            raise _Wrong("loading.spawn/context", given=repr(context), got=repr(named))
        if clock.reads == 0:
            raise _Wrong("core/timer-no-clock")
        got = _loading_seconds(got, f"first_batch_seconds({context!r})")
        cost = _LoadingFakeLoader.START + _LoadingFakeLoader.BATCH
        if abs(got - _LoadingFakeLoader.BATCH) < 1e-9:
            raise _Wrong("loading.spawn/clock-after-start")
        if abs(got - cost) > 1e-9:
            raise _Wrong("loading.spawn/not-first-batch", got=format_seconds(got), want=format_seconds(cost))
    if letter != _LOADING_WHY_SPAWN:
        raise _Wrong(f"loading.spawn/why-{letter}")
    import multiprocessing

    default = _loading_seconds(first_batch_seconds(None), "first_batch_seconds(None)")
    spawned = _loading_seconds(first_batch_seconds("spawn"), 'first_batch_seconds("spawn")')
    return {"method": multiprocessing.get_start_method(), "default": format_seconds(default),
            "spawn": format_seconds(spawned)}


_LOADING_WORKERS = (0, 1, 2, 4)


def _loading_fake_split(recorded):
    def step_time_split(model, loader, optimizer, device, max_batches=None):
        recorded.append((getattr(loader, "num_workers", None), max_batches))
        return StepTimes(first_batch=0.5, waiting=0.3, computing=0.16, batches=16)
    return step_time_split


@_register("loading.workers", hint="loading.workers/hint")
def _loading_workers(per_step, cores_limit_sleeping_workers):
    _expect_callable(per_step, "per_step")
    cores_limit_sleeping_workers = _expect(cores_limit_sleeping_workers, bool, "cores_limit_sleeping_workers")
    for workers in (2, 0):
        recorded = []
        got, _ = _loading_with_fakes(per_step, workers, names=("DataLoader", "step_time_split"),
                                     fakes={"step_time_split": _loading_fake_split(recorded)})
        if not recorded:
            raise _Wrong("loading.workers/no-helper")
        used, batches = recorded[-1]
        if used != workers:
            raise _Wrong("loading.workers/num-workers", asked=workers, got=used)
        if batches != 16:
            raise _Wrong("loading.workers/batches", got=batches)
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise _Wrong("loading.workers/not-a-pair", got=type(got).__name__)
        waiting, computing = (_loading_seconds(v, f"per_step({workers})[{i}]") for i, v in enumerate(got))
        if abs(computing - 0.16 / 16) > 1e-12:
            key = "loading.workers/computing-total" if abs(computing - 0.16) < 1e-12 else "loading.workers/computing"
            raise _Wrong(key)
        if abs(waiting - 0.3 / 15) > 1e-12:
            if abs(waiting - 0.3 / 16) < 1e-12:
                raise _Wrong("loading.workers/first-batch")
            key = "loading.workers/waiting-total" if abs(waiting - 0.3) < 1e-12 else "loading.workers/waiting"
            raise _Wrong(key)
    if cores_limit_sleeping_workers:
        raise _Wrong("loading.workers/cores")
    rows, measured = [], {}
    with warnings.catch_warnings():  # more workers than cores: fine for workers that only sleep
        warnings.filterwarnings("ignore", message="This DataLoader will create")
        for workers in _LOADING_WORKERS:
            waiting, computing = (_loading_seconds(v, f"per_step({workers})") for v in per_step(workers))
            measured[workers] = waiting, computing
            rows.append(_say("loading.workers/row", workers=workers, waiting=format_seconds(waiting),
                             computing=format_seconds(computing)))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"rows": "\n".join(rows), "cores": cores, "seen": _loading_seen(measured)}


def _loading_seen(measured):
    """What the reader's own table shows, in words: whether the waiting fell from 0 workers to the most,
    and whether the computing stayed within a quarter of itself (a busy machine's cores are shared)."""
    fewest, most = min(measured), max(measured)
    (wait_0, compute_0), (wait_n, compute_n) = measured[fewest], measured[most]
    fields = {"n": most, "wait_0": format_seconds(wait_0), "wait_n": format_seconds(wait_n),
              "compute_0": format_seconds(compute_0), "compute_n": format_seconds(compute_n)}
    waiting = _say("loading.workers/waiting-fell" if wait_n < 0.75 * wait_0 else "loading.workers/waiting-stayed",
                   **fields)
    if abs(compute_n - compute_0) <= 0.25 * compute_0:
        computing = _say("loading.workers/computing-stayed", **fields)
    elif compute_n > compute_0:
        computing = _say("loading.workers/computing-rose", **fields)
    else:
        computing = _say("loading.workers/computing-fell", **fields)
    return f"{waiting} {computing}"
