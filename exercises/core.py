"""Exercise checks: `check(exercise_id, answer)` and `hint(exercise_id)` under every exercise.

The checks of each lesson are in exercises/<topic>.py; every text they print is in
exercises/messages.py. `make sync` collects these files into utils.py after the lessons' helpers.
"""

import ast
import inspect
import sys
import textwrap
import time
from collections.abc import Callable

import torch

from utils import MESSAGES, MESSAGES_ZH, language, try_gpu


class _Exercise:
    """One exercise: its id, its check (None for an exercise answered in words) and its hint."""

    def __init__(self, exercise_id: str, test: Callable | None, hint: str | None, reason: str | None):
        self.id, self.test, self.hint, self.reason = exercise_id, test, hint, reason


_EXERCISES: dict[str, _Exercise] = {}


def _register(exercise_id: str, hint: str | None = None) -> Callable:
    """Decorate the function that checks exercise ``exercise_id``'s answer (see ``check``)."""
    def decorate(test: Callable) -> Callable:
        _add(_Exercise(exercise_id, test, hint, None))
        return test
    return decorate


def _explained(exercise_id: str, hint: str, reason: str) -> None:
    """An exercise answered in words: no check, a hint, and why (a key of MESSAGES each)."""
    _add(_Exercise(exercise_id, None, hint, reason))


def _add(exercise: _Exercise) -> None:
    if exercise.id in _EXERCISES:
        raise ValueError(f"exercise {exercise.id!r} is defined twice")
    for key in (exercise.hint, exercise.reason):
        if key is not None and key not in MESSAGES:
            raise ValueError(f"exercise {exercise.id!r} names message {key!r}, which MESSAGES lacks")
    _EXERCISES[exercise.id] = exercise


class _Wrong(Exception):
    """Raised inside a check: what is wrong with the answer, as the message ``key`` of MESSAGES."""

    def __init__(self, key: str, **fields: object):
        super().__init__(key)
        self.key, self.fields = key, fields


def _say(key: str, **fields: object) -> str:
    """Message ``key`` with its fields, in the edition's language (English where a translation is missing)."""
    text = MESSAGES_ZH.get(key) if language() == "zh" else None
    return (text or MESSAGES[key]).format(**fields)


def _find(exercise_id: object) -> _Exercise:
    if exercise_id not in _EXERCISES:
        known = ", ".join(sorted(_EXERCISES))
        raise ValueError(f"no exercise {exercise_id!r}; the exercises are: {known}")
    return _EXERCISES[exercise_id]


def _unanswered(answer: object) -> bool:
    """Whether ``answer`` is still the template: ``...``, or a function whose body is only ``...``."""
    if answer is Ellipsis:
        return True
    if isinstance(answer, (list, tuple, set)):
        return any(_unanswered(a) for a in answer)
    if isinstance(answer, dict):
        return any(_unanswered(a) for a in answer.values())
    if inspect.isfunction(answer):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(answer)))
        except (OSError, TypeError, SyntaxError):  # no source to read: judge it by what it does
            return False
        if not tree.body or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False  # a lambda, or a function made some other way: judged by what it does
        body = [s for s in tree.body[0].body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                                                     and isinstance(s.value.value, str))]  # the docstring
        return bool(body) and all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                                  and s.value.value is Ellipsis for s in body)
    return False


def check(exercise_id: str, *answers: object) -> bool:
    """Check your answer to exercise ``exercise_id``: prints whether it is right, or what is wrong
    (without giving the solution away), and returns True or False.

    Never raises for an answer, whatever it is (not written yet, of the wrong type, raising when
    run): it says what is wrong instead. Raises ValueError only for an exercise id that does not exist.
    Runs on any machine: a CPU, CUDA GPUs, Apple's MPS; no check measures a speed.
    """
    exercise = _find(exercise_id)
    if exercise.test is None:
        print(_say("core/answered-in-words", id=exercise_id))
        return False
    if not answers or any(_unanswered(a) for a in answers):
        print(_say("core/not-answered", id=exercise_id))
        return False
    wanted = list(inspect.signature(exercise.test).parameters)
    try:
        inspect.signature(exercise.test).bind(*answers)
    except TypeError:
        print(_say("core/how-many", id=exercise_id, wanted=len(wanted), names=", ".join(wanted), got=len(answers)))
        return False
    try:
        fields = exercise.test(*answers) or {}
    except _Wrong as wrong:
        print(_say("core/wrong", why=_say(wrong.key, **wrong.fields)))
        if exercise.hint:
            print(_say("core/hint-offer", id=exercise_id))
        return False
    except Exception as err:  # the learner's own code raised while the check ran it
        print(_say("core/raised", error=f"{type(err).__name__}: {err}"))
        if exercise.hint:
            print(_say("core/hint-offer", id=exercise_id))
        return False
    right = f"{exercise_id}/right"
    print(_say("core/right", why=_say(right, **fields) if right in MESSAGES else "").rstrip())
    return True


def hint(exercise_id: str) -> None:
    """Print a hint for exercise ``exercise_id`` (ValueError for an id that does not exist)."""
    exercise = _find(exercise_id)
    print(_say(exercise.hint) if exercise.hint else _say("core/no-hint", id=exercise_id))


def _expect(value: object, kind: type | tuple[type, ...], what: str) -> None:
    """Raise _Wrong when ``value`` (the learner's ``what``) is not of ``kind``."""
    if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, float, (int, float))):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        want = _say("core/or").join(_say("core/a-tensor") if k is torch.Tensor else _a(k.__name__) for k in kinds)
        raise _Wrong("core/wrong-type", what=what, want=want, got=_a(type(value).__name__))


def _a(name: str) -> str:
    """A type's name with its article, "an int", "a str" (in Chinese the name alone)."""
    return _say("core/an-kind" if name[:1].lower() in "aeiou" else "core/a-kind", name=name)


def _letter(answer: object, what: str, key: str, letters: str | tuple[str, ...] = ("a", "b", "c")) -> str:
    """A choice question's answer as a lower-case letter of ``letters`` ("b", "B", "b)" all are "b"), or
    _Wrong(key, what=..., got=..., letters=...) when it is none of them."""
    _expect(answer, str, what)
    letter = answer.strip().lower().rstrip(")").rstrip(".")
    if letter not in tuple(letters):
        raise _Wrong(key, what=what, got=repr(answer), letters=", ".join(f'"{x}"' for x in letters))
    return letter


def _table_answers(answers: object, table: dict, what: str, missing_key: str, joiner: str = ", ") -> list:
    """A question answered by a dict of bools, one per key of ``table`` (its right answers): _Wrong
    (missing_key, names=...) naming the keys left out, or a value that is no bool; else the keys whose
    answer is wrong, in ``table``'s order."""
    _expect(answers, dict, what)
    missing = [name for name in table if name not in answers]
    if missing:
        raise _Wrong(missing_key, names=joiner.join(missing))
    for name in table:
        _expect(answers[name], bool, f'{what}["{name}"]')
    return [name for name, right in table.items() if answers[name] != right]


def _first_wrong_letter(answers: object, table: dict, what: str, missing_key: str,
                        choice_key: str) -> tuple[str, str] | None:
    """A question answered by a dict of letters, one per key of ``table`` (its right letters): _Wrong
    (missing_key, name=...) for the first key left out, _letter's for an answer that is no letter;
    else the first (key, letter) that is wrong, or None."""
    _expect(answers, dict, what)
    for name, right in table.items():
        if name not in answers:
            raise _Wrong(missing_key, name=name)
        letter = _letter(answers[name], f'{what}["{name}"]', choice_key)
        if letter != right:
            return name, letter
    return None


def _expect_callable(value: object, what: str) -> None:
    if not callable(value):
        raise _Wrong("core/not-callable", what=what, got=_a(type(value).__name__))


class _SimulatedGPU:
    """A GPU that runs queued work later, for checking a timer on any machine.

    ``work()`` queues ``work_seconds`` of device work and returns after ``launch_seconds`` of
    Python time; a synchronise waits until the queue is empty; a clock read returns the simulated
    time. So a timer that reads the clock before waiting measures about ``launch_seconds``, and an
    honest one about ``work_seconds`` per call. Nothing is measured for real.
    """

    # The device time of successive calls, in multiples of work_seconds, over and over: a spread
    # whose median is 1 and whose quartiles a timer can find.
    PATTERN = (1.0, 0.9, 1.1, 1.0, 1.3, 0.95, 1.05, 1.0)

    def __init__(self, work_seconds: float = 1e-3, launch_seconds: float = 1e-5, first_extra: float = 0.05):
        self.work_seconds, self.launch_seconds, self.first_extra = work_seconds, launch_seconds, first_extra
        self.now = 0.0  # the CPU's clock
        self.done_at = 0.0  # when the device finishes what is queued
        self.events: list[str] = []  # "work", "sync", "clock", in the order the timer did them
        self.calls = 0

    def work(self) -> None:
        cost = self.work_seconds * self.PATTERN[self.calls % len(self.PATTERN)]
        cost += self.first_extra if self.calls == 0 else 0.0  # the first call is cold
        self.calls += 1
        self.events.append("work")
        self.now += self.launch_seconds
        self.done_at = max(self.done_at, self.now) + cost

    def synchronize(self, *args: object, **kwargs: object) -> None:
        self.events.append("sync")
        self.now = max(self.now, self.done_at)

    def clock(self) -> float:
        self.events.append("clock")
        self.now += 1e-7
        return self.now

    def clock_ns(self) -> int:
        return round(self.clock() * 1e9)

    def read_before_wait(self) -> bool:
        """Whether a clock was read after work was queued and before it was waited for."""
        pending = False
        for event in self.events:
            if event == "work":
                pending = True
            elif event == "sync":
                pending = False
            elif event == "clock" and pending:
                return True
        return False


_CLOCKS = ("perf_counter", "monotonic", "time")


def _time_with_a_simulated_gpu(timer: Callable, *args: object, **kwargs: object) -> tuple[object, _SimulatedGPU]:
    """Run ``timer(work, device, *args, **kwargs)`` against a _SimulatedGPU: (what it returned, the GPU).

    ``device`` is the reader's own device. While the timer runs, every way it may wait for a device
    (``synchronize`` of the series, ``torch.cuda.synchronize``, ``torch.mps.synchronize``,
    ``torch.accelerator.synchronize``, a function named ``synchronize`` in the timer's module) waits
    for the simulated GPU, and every clock of ``time`` (also when imported by name into the timer's
    module) reads its simulated time.
    """
    gpu = _SimulatedGPU()
    real = {}
    targets = [(time, name) for name in _CLOCKS] + [(time, name + "_ns") for name in _CLOCKS]
    targets += [(torch.cuda, "synchronize"), (torch.mps, "synchronize")]
    if hasattr(torch, "accelerator") and hasattr(torch.accelerator, "synchronize"):
        targets.append((torch.accelerator, "synchronize"))
    fakes = {name: gpu.clock for name in _CLOCKS} | {name + "_ns": gpu.clock_ns for name in _CLOCKS}
    fakes["synchronize"] = gpu.synchronize
    targets.append((sys.modules[__name__], "synchronize"))  # the series' own, as utils.synchronize
    names = getattr(timer, "__globals__", {})
    originals = {id(getattr(module, name)): fakes[name] for module, name in targets}
    # The clocks and synchronizes the timer's module holds by name, and a `synchronize` of its own (lesson
    # 05 defines the series' one in a cell of its own: another function object than utils' one).
    swapped = {k: v for k, v in names.items() if callable(v) and (id(v) in originals or (
        k == "synchronize" and getattr(v, "__name__", "") == "synchronize"))}
    try:
        for module, name in targets:
            real[(module, name)] = getattr(module, name)
            setattr(module, name, fakes[name])
        for k, v in swapped.items():
            names[k] = originals.get(id(v), gpu.synchronize)
        result = timer(gpu.work, try_gpu(), *args, **kwargs)
    finally:
        for (module, name), value in real.items():
            setattr(module, name, value)
        names.update(swapped)
    return result, gpu



class _OnAGPU(torch.Tensor):
    """A CPU tensor that answers as one on a GPU would, for checking code on any machine.

    Its ``device`` is the subclass's ``pretend`` (``cuda:0`` unless made by ``_on_a_gpu(t, device)``)
    and ``is_cuda`` / ``is_mps`` say so; ``numpy()``, ``tolist()`` and ``item()`` refuse with
    PyTorch's own words for such a tensor (torch/csrc/utils/tensor_numpy.cpp) until it is copied to
    the CPU (``.cpu()``, ``.to("cpu")``), which gives a plain tensor. Every other operation computes
    on the CPU and keeps the pretence. Nothing runs on a GPU.
    """

    pretend = torch.device("cuda:0")

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        owner = getattr(func, "__self__", None)
        if owner is torch.Tensor.device:
            return cls.pretend
        if owner is torch.Tensor.is_cuda:
            return cls.pretend.type == "cuda"
        if owner is torch.Tensor.is_mps:
            return cls.pretend.type == "mps"
        if func is torch.Tensor.numpy and kwargs.get("force"):  # documented: detach().cpu()...numpy()
            with torch._C.DisableTorchFunctionSubclass():
                return args[0].detach().cpu().resolve_conj().resolve_neg().numpy()
        if func in (torch.Tensor.numpy, torch.Tensor.tolist, torch.Tensor.item, torch.Tensor.__array__):
            raise TypeError(f"can't convert {cls.pretend} device type tensor to numpy. Use Tensor.cpu() to "
                            "copy the tensor to host memory first.")
        to_cpu = func is torch.Tensor.cpu or (func is torch.Tensor.to and any(
            str(a) == "cpu" for a in [*args[1:], *kwargs.values()] if isinstance(a, (str, torch.device))))
        if to_cpu:
            with torch._C.DisableTorchFunctionSubclass():
                copied = func(*args, **kwargs)
            return copied.as_subclass(torch.Tensor)
        return super().__torch_function__(func, types, args, kwargs)


_PRETENDING: dict[str, type] = {}


def _on_a_gpu(t: torch.Tensor, device: str | torch.device = "cuda:0") -> torch.Tensor:
    """``t`` as a tensor that behaves as if it lived on ``device``, a GPU (see _OnAGPU)."""
    device = torch.device(device)
    if device.type not in ("cuda", "mps"):
        raise ValueError(f"device must be a GPU (cuda:N or mps:0), got {device}")
    device = torch.device(device.type, device.index or 0)
    if str(device) not in _PRETENDING:
        _PRETENDING[str(device)] = type(f"_On_{device.type}_{device.index}", (_OnAGPU,), {"pretend": device})
    return t.as_subclass(_PRETENDING[str(device)])


def _timer_verdict(gpu: _SimulatedGPU) -> None:
    """Raise _Wrong for a timer that never ran the work, read no clock, or read it before the wait."""
    if "work" not in gpu.events:
        raise _Wrong("core/timer-never-called")
    if "clock" not in gpu.events:
        raise _Wrong("core/timer-no-clock")
    if gpu.read_before_wait():
        raise _Wrong("core/timer-read-before-wait")
    first_clock, first_work = gpu.events.index("clock"), gpu.events.index("work")
    if first_clock < first_work:  # the clock started before the first, cold call
        raise _Wrong("core/timer-no-warm-up")
