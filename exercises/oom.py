"""The checks of lesson 08, out of memory and errors that arrive late.

Every out-of-memory error here is a real one that every machine raises at once (the impossible
torch.empty(2**62, dtype=torch.uint8) of the lesson), and the batch searches run on the CPU, where
a step's own count decides: so the checks give the same answer on every machine.
"""

import gc
import weakref

import torch

from utils import is_out_of_memory, largest_batch_that_fits

from .core import _expect, _expect_callable, _register, _Wrong


@_register("oom.kept-alive", hint="oom.kept-alive/hint")
def _oom_kept_alive(failing_step, alive_while_caught, alive_after_del):
    _expect_callable(failing_step, "failing_step")
    alive, caught = [], None
    try:
        failing_step(alive)
    except RuntimeError as err:
        if not is_out_of_memory(err):
            raise _Wrong("oom.kept-alive/not-oom", error=f"{type(err).__name__}: {str(err).splitlines()[0]}") from None
        caught = err
    if caught is None:
        raise _Wrong("oom.kept-alive/no-error")
    if not alive:
        raise _Wrong("oom.kept-alive/no-ref")
    if not isinstance(alive[0], weakref.ref):
        raise _Wrong("oom.kept-alive/not-weakref", got=type(alive[0]).__name__)
    if not isinstance(alive[0](), torch.Tensor):
        raise _Wrong("oom.kept-alive/gone-early")
    del caught
    gc.collect()
    if alive[0]() is not None:
        raise _Wrong("oom.kept-alive/held-elsewhere")
    alive_while_caught = _expect(alive_while_caught, bool, "alive_while_caught")
    alive_after_del = _expect(alive_after_del, bool, "alive_after_del")
    if not alive_while_caught:
        raise _Wrong("oom.kept-alive/while-caught")
    if alive_after_del:
        raise _Wrong("oom.kept-alive/after-del")


_OOM_SAMPLE = 5 * 1024  # bytes a sample needs, by the step's own count (as lesson 07 counts)
_OOM_BUDGET = 16 * 2**20


def _oom_search(largest_batch_bisect, step, start):
    """The learner's search on the CPU, where the step's count decides; an out-of-memory error it lets
    through is a wrong answer, not a crash."""
    try:
        got = largest_batch_bisect(step, start, torch.device("cpu"), _OOM_BUDGET)
    except RuntimeError as err:
        if is_out_of_memory(err):
            raise _Wrong("oom.bisect/oom-raised") from None
        raise
    got = _expect(got, int, f"largest_batch_bisect(step, {start}, device, budget_bytes)")
    return got


@_register("oom.bisect", hint="oom.bisect/hint")
def _oom_bisect(largest_batch_bisect):
    _expect_callable(largest_batch_bisect, "largest_batch_bisect")
    tries = []

    def counted(batch):  # what a step of this size needs, in bytes
        tries.append(batch)
        return batch * _OOM_SAMPLE

    got, want = _oom_search(largest_batch_bisect, counted, 4096), _OOM_BUDGET // _OOM_SAMPLE
    halved = largest_batch_that_fits(lambda b: b * _OOM_SAMPLE, 4096, torch.device("cpu"), _OOM_BUDGET)
    if abs(got - want) == 1:  # the search's end, not its idea
        raise _Wrong("oom.bisect/one-below" if got < want else "oom.bisect/one-above", got=got, want=want)
    if got > want:
        raise _Wrong("oom.bisect/too-large", got=got, want=want)
    if got < want:
        raise _Wrong("oom.bisect/halving-only" if got == halved else "oom.bisect/too-small", got=got, want=want,
                     halved=halved)
    enough = (4096).bit_length() + want.bit_length() + 2  # halving's tries, then bisection's
    if len(tries) > enough:
        raise _Wrong("oom.bisect/tries", tries=len(tries), enough=enough)
    found = _oom_search(largest_batch_bisect, counted, 1000)
    if found != 1000:
        raise _Wrong("oom.bisect/above-start" if found > 1000 else "oom.bisect/start-fits", got=found)
    # From 101, halving tries 101 (too large) and 50: the size that failed is 101, not twice 50, and 100 fits.
    found = _oom_search(largest_batch_bisect, lambda batch: _OOM_BUDGET * batch // 100, 101)
    if found != 100:
        raise _Wrong("oom.bisect/not-twice", got=found)

    def refusing(batch):  # runs out of memory for real above 1500 samples, whatever its count says
        if batch > 1500:
            torch.empty(2**62, dtype=torch.uint8)
        return batch

    found = _oom_search(largest_batch_bisect, refusing, 4096)
    if found != 1500:
        raise _Wrong("oom.bisect/oom", got=found)

    def buggy(batch):  # a bug that shows only at some sizes, which bisection tries
        if 2048 < batch < 4096:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({batch}x100 and 256x1024)")
        return batch * _OOM_SAMPLE

    try:
        found = largest_batch_bisect(buggy, 4096, torch.device("cpu"), _OOM_BUDGET)
    except RuntimeError as err:
        if "mat1 and mat2" not in str(err):
            raise
    else:
        raise _Wrong("oom.bisect/swallowed", got=found)
    return {"halved": halved, "got": got, "tries": len(tries)}


_OOM_LATE = {"without synchronize": "b", "with synchronize": "a", "cost": "b"}


@_register("oom.late-error", hint="oom.late-error/hint")
def _oom_late_error(answers):
    _expect(answers, dict, "answers")
    missing = [name for name in _OOM_LATE if name not in answers]
    if missing:
        raise _Wrong("oom.late-error/missing", names=", ".join(f'"{m}"' for m in missing))
    for name, want in _OOM_LATE.items():
        letter = answers[name]
        _expect(letter, str, f'answers["{name}"]')
        letter = letter.strip().lower()
        if letter not in ("a", "b", "c"):
            raise _Wrong("oom.late-error/letter", name=name, got=answers[name])
        if letter != want:
            raise _Wrong(f"oom.late-error/{name.split()[0]}-{letter}")
