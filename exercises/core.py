"""Exercise checks: `check(exercise_id, answer)` and `hint(exercise_id)` under every exercise.

The checks of each lesson are in exercises/<topic>.py; every text they print is in
exercises/messages.py. A lesson imports `check` and `hint` from the package (exercises/__init__.py),
which imports the helpers it judges from utils.py, never the other way round.
"""

import ast
import contextlib
import inspect
import textwrap
import time
import warnings
from collections.abc import Callable
from functools import partial

import torch

import utils
from utils import language, try_gpu, zh_tables

from .messages import MESSAGES


class _Exercise:
    """One exercise: its id, its check and its hint (a key of MESSAGES, or None)."""

    def __init__(self, exercise_id: str, test: Callable, hint: str | None):
        self.id, self.test, self.hint = exercise_id, test, hint


_EXERCISES: dict[str, _Exercise] = {}


def _register(exercise_id: str, hint: str | None = None) -> Callable:
    """Decorate the function that checks exercise ``exercise_id``'s answer (see ``check``)."""
    def decorate(test: Callable) -> Callable:
        _add(_Exercise(exercise_id, test, hint))
        return test
    return decorate


def _add(exercise: _Exercise) -> None:
    if exercise.id in _EXERCISES:
        raise ValueError(f"exercise {exercise.id!r} is defined twice")
    if exercise.hint is not None and exercise.hint not in MESSAGES:
        raise ValueError(f"exercise {exercise.id!r} names message {exercise.hint!r}, which MESSAGES lacks")
    _EXERCISES[exercise.id] = exercise


class _Wrong(Exception):
    """Raised inside a check: what is wrong with the answer, as the message ``key`` of MESSAGES."""

    def __init__(self, key: str, **fields: object):
        super().__init__(key)
        self.key, self.fields = key, fields


def _say(key: str, **fields: object) -> str:
    """Message ``key`` with its fields, in the edition's language (English where a translation is missing)."""
    text = zh_tables()["messages"].get(key) if language() == "zh" else None
    return (text or MESSAGES[key]).format(**fields)


def _find(exercise_id: object) -> _Exercise:
    if exercise_id not in _EXERCISES:
        known = ", ".join(sorted(_EXERCISES))
        raise ValueError(f"no exercise {exercise_id!r}; the exercises are: {known}")
    return _EXERCISES[exercise_id]


def _unanswered(answer: object) -> bool:
    """Whether ``answer`` is still the template: ``...``, a function whose body is only ``...``, or a class
    that defines no method."""
    if answer is Ellipsis:
        return True
    if isinstance(answer, (list, tuple, set)):
        return any(_unanswered(a) for a in answer)
    if isinstance(answer, dict):
        return any(_unanswered(a) for a in answer.values())
    if inspect.isclass(answer):  # the template's class: a docstring and `...`, no method of its own
        return not any(inspect.isfunction(v) or isinstance(v, (staticmethod, classmethod, property))
                       for v in vars(answer).values())
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


class Checked:
    """What ``check()`` returns: true when the answer is right, false when not.

    In a notebook the cell shows only the message ``check()`` printed, not a bare ``True`` or ``False``
    under it; ``assert check(...)`` (as the solutions do) and ``if check(...):`` work as with a bool.
    """

    __slots__ = ("right",)

    def __init__(self, right: bool):
        self.right = bool(right)

    def __bool__(self) -> bool:
        return self.right

    def __eq__(self, other: object) -> bool:
        return self.right == other if isinstance(other, (bool, Checked)) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.right)

    def __repr__(self) -> str:
        return repr(self.right)

    def _ipython_display_(self) -> None:
        """Jupyter shows nothing for it: the message above says all."""


def check(exercise_id: str, *answers: object) -> Checked:
    """Check your answer to exercise ``exercise_id``: prints whether it is right, or what is wrong
    (without giving the solution away); returns a Checked, true when the answer is right (a notebook
    cell shows only the message).

    Never raises for an answer, whatever it is (not written yet, of the wrong type, raising when
    run): it says what is wrong instead. Raises ValueError only for an exercise id that does not exist.
    Runs on any machine: a CPU, CUDA GPUs, Apple's MPS; no check measures a speed.
    """
    exercise = _find(exercise_id)
    if not answers or any(_unanswered(a) for a in answers):
        print(_say("core/not-answered", id=exercise_id))
        return Checked(False)
    wanted = list(inspect.signature(exercise.test).parameters)
    try:
        inspect.signature(exercise.test).bind(*answers)
    except TypeError:
        print(_say("core/how-many", id=exercise_id, wanted=len(wanted), names=", ".join(wanted), got=len(answers)))
        return Checked(False)
    try:
        with _on_a_gpu_calls():
            fields = exercise.test(*answers) or {}
    except _Wrong as wrong:
        print(_say("core/wrong", why=_say(wrong.key, **wrong.fields)))
        if exercise.hint:
            print(_say("core/hint-offer", id=exercise_id))
        return Checked(False)
    except Exception as err:  # the learner's own code raised while the check ran it
        print(_say("core/raised", error=f"{type(err).__name__}: {err}"))
        if exercise.hint:
            print(_say("core/hint-offer", id=exercise_id))
        return Checked(False)
    right = f"{exercise_id}/right"
    print(_say("core/right", why=_say(right, **fields) if right in MESSAGES else "").rstrip())
    return Checked(True)


def hint(exercise_id: str) -> None:
    """Print a hint for exercise ``exercise_id`` (ValueError for an id that does not exist)."""
    exercise = _find(exercise_id)
    print(_say(exercise.hint) if exercise.hint else _say("core/no-hint", id=exercise_id))


@contextlib.contextmanager
def _float32_matmul_precision(precision: str):
    """``torch.set_float32_matmul_precision(precision)`` while the block runs, then the setting as it was.
    Quiet about PyTorch 2.9's warning that these older names will change: not the learner's concern."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision(precision)
    try:
        yield
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.set_float32_matmul_precision(before)


def _expect(value: object, kind: type | tuple[type, ...], what: str) -> object:
    """``value`` (the learner's ``what``) when it is of ``kind``, else _Wrong saying what it is.

    Where ``kind`` asks for a bool, an int or a float, that number written another way is taken, and
    returned as Python's: a NumPy scalar (np.True_, np.int64(3), np.float32(0.5)), a tensor of one value
    (t.sum(), a comparison of tensors), an int written as a whole float (2.0**15) (see _python_number).
    A bool is no int or float here: True for a count is a slip, not a number.
    """
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, kind) and not (isinstance(value, bool) and bool not in kinds
                                        and (int in kinds or float in kinds)):
        return value
    for k in kinds:
        if k in (bool, int, float):
            number = _python_number(value, k)
            if number is not None:
                return number
    want = _say("core/or").join(_say("core/a-tensor") if k is torch.Tensor else _a(k.__name__) for k in kinds)
    raise _Wrong("core/wrong-type", what=what, want=want, got=_a(type(value).__name__))


def _python_number(value: object, kind: type) -> bool | int | float | None:
    """``value`` as Python's ``kind`` (bool, int or float) where it is that number written another way, else None.

    A NumPy scalar or a tensor of one value gives its value (a NumPy bool, or a tensor of dtype bool,
    for a bool only); for an int, a whole number of any of these, or a float that is whole (3.0); for a
    float, any real number of NumPy or in a tensor (a Python int stays no float: 64 for a rate is a slip).
    """
    converted = False
    if isinstance(value, torch.Tensor):
        if value.numel() != 1 or value.is_complex() or (value.dtype == torch.bool) != (kind is bool):
            return None
        try:
            value, converted = value.item(), True
        except Exception:  # a tensor with no values to read (meta): no number
            return None
    elif type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
        value, converted = value.item(), True  # a NumPy scalar, or an array of no dimension
    if kind is bool:
        return value if converted and isinstance(value, bool) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if kind is int:
        if isinstance(value, int):
            return value
        return int(value) if value.is_integer() else None
    if kind is float:
        return float(value) if converted or isinstance(value, float) else None
    return None


# Type names whose first letter's sound is not what the letter suggests: "a uint8", "an ndarray".
_A_BEFORE = ("uint", "uni", "use", "usi", "usu", "uti", "eu", "one")
_AN_BEFORE = ("nd", "np.", "nn.", "mps", "fp", "hdf", "xla")


def _a(name: str) -> str:
    """A type's name with its article, "an int", "a str", "an ndarray", "a uint8" (in Chinese the name alone)."""
    low = name.lower()
    vowel = (low[:1] in "aeiou" and not low.startswith(_A_BEFORE)) or low.startswith(_AN_BEFORE)
    return _say("core/an-kind" if vowel else "core/a-kind", name=name)


def _letter(answer: object, what: str, key: str, letters: str | tuple[str, ...] = ("a", "b", "c")) -> str:
    """A choice question's answer as a lower-case letter of ``letters`` ("b", "B", "b)", "(b)" all are "b"), or
    _Wrong(key, what=..., got=..., letters=...) when it is none of them."""
    _expect(answer, str, what)
    letter = answer.strip().lower().lstrip("(").rstrip(")").rstrip(".")
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
    given = {name: _expect(answers[name], bool, f'{what}["{name}"]') for name in table}
    return [name for name, right in table.items() if given[name] != right]


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


def _as_float(value: object, what: str) -> float:
    """``value`` (the learner's ``what``: a loss, an error, a sum) as a float: any Python or NumPy number but a
    bool, or a tensor with one value; else _expect's _Wrong, which says what it is."""
    import numpy as np

    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return float(value.detach().cpu())
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        value = _expect(value, float, what)  # raises, unless a number in another form (a NumPy array of none)
    return float(value)


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
    # The Python time of successive launches, in multiples of launch_seconds: the same every call, unless
    # a check needs launches that vary.
    LAUNCH_PATTERN = (1.0,)

    def __init__(self, work_seconds: float = 1e-3, launch_seconds: float = 1e-5, first_extra: float = 0.05):
        self.work_seconds, self.launch_seconds, self.first_extra = work_seconds, launch_seconds, first_extra
        self.now = 0.0  # the CPU's clock
        self.done_at = 0.0  # when the device finishes what is queued
        # "work", "sync", "clock", and for events "record", "event-sync", "elapsed", in the order the timer did them
        self.events: list[str] = []
        self.calls = 0

    def work(self) -> None:
        cost = self.work_seconds * self.PATTERN[self.calls % len(self.PATTERN)]
        cost += self.first_extra if self.calls == 0 else 0.0  # the first call is cold
        launch = self.launch_seconds * self.LAUNCH_PATTERN[self.calls % len(self.LAUNCH_PATTERN)]
        self.calls += 1
        self.events.append("work")
        self.now += launch
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


class _SimulatedEvent:
    """An event of a _SimulatedGPU's queue, as ``torch.cuda.Event``, ``torch.mps.Event`` and ``torch.Event``
    behave: ``record()`` puts a timestamp in the queue, which the GPU reaches when the work queued before it
    is done; ``synchronize()`` waits for that; ``elapsed_time(end)`` gives the milliseconds between two
    reached timestamps and refuses, in PyTorch's words (ATen/cuda/CUDAEvent.h), events made without
    ``enable_timing=True``, never recorded, or not yet reached."""

    def __init__(self, gpu: _SimulatedGPU, enable_timing: bool = False, **kwargs: object):
        self.gpu, self.enable_timing, self.at = gpu, enable_timing, None

    def record(self, stream: object = None) -> None:
        self.gpu.events.append("record")
        self.at = max(self.gpu.now, self.gpu.done_at)

    def query(self) -> bool:
        return self.at is None or self.gpu.now >= self.at

    def wait(self, stream: object = None) -> None:
        pass  # another queue waits for this one: there is only one queue here

    def synchronize(self) -> None:
        if self.at is not None:
            self.gpu.events.append("sync" if self.at >= self.gpu.done_at else "event-sync")
            self.gpu.now = max(self.gpu.now, self.at)

    def elapsed_time(self, end: object) -> float:
        if not (self.enable_timing and getattr(end, "enable_timing", False)):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if self.at is None or getattr(end, "at", None) is None:
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        if not (self.query() and end.query()):
            raise RuntimeError("Both events must be completed before calculating elapsed time.")
        self.gpu.events.append("elapsed")
        return (end.at - self.at) * 1e3


class _SimulatedStream:
    """The queue of a _SimulatedGPU, as ``torch.cuda.current_stream()`` and ``torch.cuda.default_stream()``
    return it: ``synchronize()`` waits for the work queued on it (``cudaStreamSynchronize``), ``query()``
    says whether it is done, ``record_event()`` records an event of its queue."""

    def __init__(self, gpu: _SimulatedGPU):
        self.gpu = gpu

    def synchronize(self) -> None:
        self.gpu.synchronize()

    def query(self) -> bool:
        return self.gpu.now >= self.gpu.done_at

    def record_event(self, event: _SimulatedEvent | None = None) -> _SimulatedEvent:
        event = event if event is not None else _SimulatedEvent(self.gpu)
        event.record(self)
        return event

    def wait_event(self, event: object) -> None:
        pass  # another queue waits for this one: there is only one queue here

    def wait_stream(self, stream: object) -> None:
        pass


class _TimeitReads:
    """``with _TimeitReads(clock):`` makes timeit's timers read ``clock()``: ``timeit.default_timer``, and the
    timer that ``timeit.timeit``, ``timeit.repeat`` and ``timeit.Timer`` take by default, which they hold as a
    default argument (time.perf_counter as it was when timeit was imported), so that swapping
    ``time.perf_counter`` alone does not reach them."""

    def __init__(self, clock: Callable[[], float]):
        import timeit

        self.timeit, self.clock = timeit, clock
        self.functions = (timeit.Timer.__init__, timeit.timeit, timeit.repeat)

    def __enter__(self):
        self.real, self.defaults = self.timeit.default_timer, [f.__defaults__ for f in self.functions]
        self.timeit.default_timer = self.clock
        for f, defaults in zip(self.functions, self.defaults, strict=True):
            f.__defaults__ = tuple(self.clock if d is self.real else d for d in defaults)
        return self

    def __exit__(self, *exc):
        self.timeit.default_timer = self.real
        for f, defaults in zip(self.functions, self.defaults, strict=True):
            f.__defaults__ = defaults
        return False


def _time_with_a_simulated_gpu(timer: Callable, *args: object, gpu_type: type = _SimulatedGPU,
                               **kwargs: object) -> tuple[object, _SimulatedGPU]:
    """Run ``timer(work, device, *args, **kwargs)`` against a _SimulatedGPU (or ``gpu_type``, one with
    another PATTERN): (what it returned, the GPU).

    ``device`` is the reader's own GPU, or on a machine without one ``cuda:0``, the simulated GPU,
    for which ``torch.cuda.is_available()`` then says True: a timer that waits only on a GPU (``if
    device.type == "cuda": torch.cuda.synchronize()``) waits here too, as it would on a GPU. While the
    timer runs, every way it may wait for a device (``synchronize`` of the series, ``torch.cuda.synchronize``,
    ``torch.mps.synchronize``, ``torch.accelerator.synchronize``, ``synchronize()`` of
    ``torch.cuda.current_stream()`` or ``default_stream()``, a function named ``synchronize`` in the
    timer's module) waits for the simulated GPU, every clock of ``time`` (also when imported by name
    into the timer's module) reads its simulated time, and ``torch.cuda.Event``, ``torch.mps.Event`` and
    ``torch.Event`` make events of its queue (_SimulatedEvent).
    """
    gpu = gpu_type()
    device = try_gpu()

    def device_event(device: object = None, **options: object) -> _SimulatedEvent:  # torch.Event(device, ...)
        return _SimulatedEvent(gpu, **options)

    fakes = {(time, name): gpu.clock for name in _CLOCKS} | {(time, name + "_ns"): gpu.clock_ns for name in _CLOCKS}
    fakes |= {(torch.cuda, "synchronize"): gpu.synchronize, (torch.mps, "synchronize"): gpu.synchronize,
              (utils, "synchronize"): gpu.synchronize}  # the series' own
    fakes |= {(torch.cuda, "Event"): partial(_SimulatedEvent, gpu), (torch.mps, "Event"): partial(_SimulatedEvent, gpu)}
    stream = _SimulatedStream(gpu)
    fakes |= {(torch.cuda, "current_stream"): lambda device=None: stream,
              (torch.cuda, "default_stream"): lambda device=None: stream}
    if device.type == "cpu":  # no GPU here: the simulated one is cuda:0
        device = torch.device("cuda", 0)
        fakes[(torch.cuda, "is_available")] = lambda: True
    if hasattr(torch, "accelerator") and hasattr(torch.accelerator, "synchronize"):
        fakes[(torch.accelerator, "synchronize")] = gpu.synchronize
    if hasattr(torch, "Event"):
        fakes[(torch, "Event")] = device_event
    names = getattr(timer, "__globals__", {})
    originals = {id(getattr(module, name)): fake for (module, name), fake in fakes.items()}
    # The clocks, synchronizes and events the timer's module holds by name, and a `synchronize` of its own
    # (lesson 05 defines the series' one in a cell of its own: another function object than utils' one).
    swapped = {k: v for k, v in names.items() if callable(v) and (id(v) in originals or (
        k == "synchronize" and getattr(v, "__name__", "") == "synchronize"))}
    real = {}
    try:
        for (module, name), fake in fakes.items():
            real[(module, name)] = getattr(module, name)
            setattr(module, name, fake)
        for k, v in swapped.items():
            names[k] = originals.get(id(v), gpu.synchronize)
        result = timer(gpu.work, device, *args, **kwargs)
    finally:
        for (module, name), value in real.items():
            setattr(module, name, value)
        names.update(swapped)
    return result, gpu



class _OnAGPU(torch.Tensor):
    """A CPU tensor that answers as one on a GPU would, for checking code on any machine.

    Its ``device`` is the subclass's ``pretend`` (``cuda:0`` unless made by ``_on_a_gpu(t, device)``).
    Every operation computes on the CPU; what a real CUDA or MPS tensor does with it decides what
    this one does (tests/test_exercises.py tests each against a table that cites PyTorch's source):

    - ``device``, ``is_cuda``, ``is_mps``, ``is_cpu``, ``get_device()`` say the pretended device; a result
      keeps it.
    - copies out to Python or the CPU work, as on a GPU: ``.cpu()``, ``.to("cpu")``,
      ``.to(cpu_tensor)``, ``.numpy(force=True)`` give plain CPU tensors or arrays, ``tolist()``,
      ``item()``, ``float()``, ``int()``, ``bool()`` and ``print()`` give Python values or text.
    - ``numpy()`` and ``np.array(t)`` refuse with PyTorch's ``TypeError``.
    - ``.to()`` another GPU, or ``.cuda()``, gives a pretend tensor there; ``.to()`` its own device
      returns the tensor itself; ``.to(other)`` takes other's dtype and device, also a CPU tensor's
      ``.to(pretend)``.
    - in a check, ``torch.as_tensor(t, device=..., dtype=...)``, ``torch.asarray`` and ``torch.tensor(t)``
      move it as they move a GPU tensor (``_OnAGPUCalls``: they take it as data, which reaches no
      ``__torch_function__``).
    - an operation on tensors of two devices refuses with the ``RuntimeError`` CUDA raises
      ("Expected all tensors to be on the same device ..."), except a CPU tensor of one value (no
      dimension), which CUDA takes as a number; ``copy_`` and ``to`` copy between devices.

    Nothing runs on a GPU: no speed, memory or numerical difference of a GPU is simulated.
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
        if owner is torch.Tensor.is_cpu:
            return False
        if func is torch.Tensor.get_device:  # the GPU's index (-1 only for a CPU tensor)
            return cls.pretend.index
        if func is torch.Tensor.numpy and kwargs.get("force"):  # documented: detach().cpu()...numpy()
            return _plain(args[0]).detach().resolve_conj().resolve_neg().numpy()
        if func in (torch.Tensor.numpy, torch.Tensor.__array__):  # torch/csrc/utils/tensor_numpy.cpp
            raise _numpy_refused(cls.pretend)
        if func in (torch.Tensor.__repr__, torch.Tensor.__str__) or (
                func is torch.Tensor.__format__ and args[0].dim() != 0):
            return _on_a_gpu_repr(args[0], cls.pretend)
        if func in _ON_A_GPU_TO_PYTHON:  # a copy to the host, then Python's values
            return func(_plain(args[0]), *args[1:], **kwargs)
        moved = _on_a_gpu_moved(cls, func, args, kwargs)
        if moved is not None:
            return moved
        if func not in _ON_A_GPU_ACROSS:
            _on_a_gpu_same_device(func, args, kwargs)
        return super().__torch_function__(func, types, args, kwargs)


_PRETENDING: dict[str, type] = {}
# What copies a tensor to the host and hands Python its values: fine on a GPU (a copy, and a wait).
_ON_A_GPU_TO_PYTHON = (torch.Tensor.tolist, torch.Tensor.item, torch.Tensor.__float__, torch.Tensor.__int__,
                       torch.Tensor.__bool__, torch.Tensor.__index__, torch.Tensor.__format__)
# What takes tensors of two devices on purpose: copies, and reading a GPU tensor with CPU indices.
_ON_A_GPU_ACROSS = (torch.Tensor.copy_, torch.Tensor.__getitem__, torch.Tensor.__setitem__,
                    torch.Tensor.new_tensor, torch.Tensor.new_zeros, torch.Tensor.new_ones, torch.Tensor.new_empty,
                    torch.Tensor.new_full, torch.Tensor.size, torch.Tensor.dim)


def _numpy_refused(device: torch.device | str) -> TypeError:
    """PyTorch's error for numpy() of a tensor on ``device``, a GPU (torch/csrc/utils/tensor_numpy.cpp)."""
    return TypeError(f"can't convert {device} device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                     "to host memory first.")


def _plain(t: torch.Tensor) -> torch.Tensor:
    """The CPU tensor under a pretend one (a plain tensor as it is)."""
    with torch._C.DisableTorchFunctionSubclass():
        return t.as_subclass(torch.Tensor) if isinstance(t, _OnAGPU) else t


def _on_a_gpu_device(t: torch.Tensor) -> torch.device:
    return type(t).pretend if isinstance(t, _OnAGPU) else t.device


def _on_a_gpu_tensors(value: object):
    """Every tensor in ``value`` (an argument: a tensor, or a list, tuple or dict of them)."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _on_a_gpu_tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _on_a_gpu_tensors(v)


def _on_a_gpu_checked(func: Callable, args: tuple, kwargs: dict) -> tuple[str, list] | None:
    """For a matrix product, the CUDA kernel that checks its arguments' devices one by one, and those
    arguments as (name, tensor) in the order it checks them; None for any other operation.

    As at::linear and at::matmul (aten/src/ATen/native/Linear.cpp, LinearAlgebra.cpp) pick the kernel:
    linear with a bias and a 2-D (or contiguous 3-D) input is addmm(bias, input, weight.t()), else
    matmul(input, weight.t()); matmul of a 1-D or 2-D tensor by a 2-D one is mm, of a 2-D by a 1-D mv.
    """
    a = args[0] if args else None
    if func in (torch.nn.functional.linear,):
        weight = args[1] if len(args) > 1 else kwargs.get("weight")
        bias = args[2] if len(args) > 2 else kwargs.get("bias")
        if bias is not None and (a.dim() == 2 or (a.dim() == 3 and a.is_contiguous())):
            return "addmm", [("self", bias), ("mat1", a), ("mat2", weight)]
        func, args = torch.matmul, (a, weight.t() if weight.dim() == 2 else weight)
    if func in (torch.mm, torch.Tensor.mm):
        return "mm", [("self", a), ("mat2", args[1])]
    if func in (torch.addmm, torch.Tensor.addmm):
        return "addmm", [("self", a), ("mat1", args[1]), ("mat2", args[2])]
    if func in (torch.matmul, torch.Tensor.matmul, torch.Tensor.__matmul__) and len(args) > 1:
        b = args[1]
        if a.dim() in (1, 2) and b.dim() == 2:
            return "mm", [("self", a), ("mat2", b)]
        if a.dim() == 2 and b.dim() == 1:
            return "mv", [("self", a), ("vec", b)]
    return None


def _on_a_gpu_same_device(func: Callable, args: tuple, kwargs: dict) -> None:
    """Raise CUDA's RuntimeError when the tensors of an operation live on two devices, in CUDA's words.

    A matrix product's kernel checks its arguments in order (common_device_check_failure in
    aten/src/ATen/core/adaption.cpp: "but got mat2 is on cpu, different from other tensors on cuda:0 ...",
    in this release's words; older ones said "but found at least two devices, cuda:0 and cpu! (when
    checking argument for argument mat2 ..."); every other operation is TensorIterator's (compute_types in
    aten/src/ATen/TensorIterator.cpp: "but found at least two devices, cuda:0 and cpu!"), which takes a CPU
    tensor of one value and no dimension as a number. Other kernels that check their arguments one by
    one word it as products do, with their own names: their message starts the same.
    """
    checked = _on_a_gpu_checked(func, args, kwargs)
    if checked is not None:
        kernel, named = checked
        first = None
        for name, t in named:
            if not isinstance(t, torch.Tensor):
                continue
            device = _on_a_gpu_device(t)
            if first is None:
                first = device
            elif device != first:
                raise RuntimeError(f"Expected all tensors to be on the same device, but got {name} is on {device}, "
                                   f"different from other tensors on {first} (when checking argument in method "
                                   f"wrapper_CUDA_{kernel})")
        return
    first = None
    for t in _on_a_gpu_tensors([args, kwargs]):
        device = _on_a_gpu_device(t)
        if device.type == "cpu" and t.dim() == 0:
            continue
        if first is None:
            first = device
        elif device != first:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                               f"{first} and {device}!")


def _on_a_gpu_target(cls: type, func: Callable, args: tuple, kwargs: dict) -> torch.device | None:
    """The device a ``.to(...)`` or ``.cuda()`` call moves to, or None for any other call."""
    if func is torch.Tensor.cuda:
        device = args[1] if len(args) > 1 else kwargs.get("device")
        device = torch.device("cuda", device) if isinstance(device, int) else torch.device(device or "cuda")
    elif func is torch.Tensor.to:
        device = next((a for a in [*args[1:], kwargs.get("device"), kwargs.get("tensor")]
                       if isinstance(a, (str, torch.device, torch.Tensor))), None)
        if isinstance(device, torch.Tensor):
            return _on_a_gpu_device(device)
        if device is None:
            return None
        device = torch.device(device)
    else:
        return None
    # A device without an index is the current one, GPU 0 unless the program changed it (ensure_has_index
    # in aten/src/ATen/native/TensorConversions.cpp): cuda:1's tensor .to("cuda") is copied to cuda:0.
    return torch.device(device.type, 0) if device.type in ("cuda", "mps") and device.index is None else device


def _on_a_gpu_moved(cls: type, func: Callable, args: tuple, kwargs: dict) -> torch.Tensor | None:
    """``t.cpu()``, ``t.to(device)``, ``t.cuda()`` as a GPU tensor answers them: a plain CPU tensor, a
    pretend tensor on another GPU, or ``t`` itself for its own device; None for any other call."""
    target = torch.device("cpu") if func is torch.Tensor.cpu else _on_a_gpu_target(cls, func, args, kwargs)
    if target is None:
        return None
    t = args[0]
    other = next((a for a in [*args[1:], kwargs.get("tensor")] if isinstance(a, torch.Tensor)), None)
    if func is torch.Tensor.to and other is not None:  # to(other): other's dtype and device (Tensor.to's docs)
        dtype = other.dtype
    else:
        dtype = kwargs.get("dtype") or next((a for a in args[1:] if isinstance(a, torch.dtype)), t.dtype)
    if target == _on_a_gpu_device(t) and not kwargs.get("copy") and dtype == t.dtype:
        return t
    with torch._C.DisableTorchFunctionSubclass():
        copied = _plain(t).to(dtype=dtype, copy=True)
    if target.type == "cpu":
        return copied
    if target.type not in ("cuda", "mps"):
        raise RuntimeError(f"a tensor that pretends to live on {cls.pretend} cannot move to {target}")
    return _on_a_gpu(copied, target)


def _on_a_gpu_as_tensor(data: torch.Tensor, dtype: torch.dtype | None = None,
                        device: object = None) -> torch.Tensor:
    """``torch.as_tensor(data, dtype=..., device=...)`` of a pretend tensor, as of a GPU tensor: ``data`` itself
    where it has that dtype and device, else ``data.to(device, dtype)``, a copy (as_tensor's documentation;
    internal_new_from_data in torch/csrc/utils/tensor_new.cpp moves a tensor with ``var.to(device, dtype)``,
    its own device where none is given)."""
    if dtype is None and device is None:
        return data
    return data.to(device=_on_a_gpu_device(data) if device is None else device, dtype=dtype or data.dtype)


def _on_a_gpu_tensor(data: torch.Tensor, dtype: torch.dtype | None = None, device: object = None,
                     requires_grad: bool = False, pin_memory: bool = False) -> torch.Tensor:
    """``torch.tensor(data, ...)`` of a pretend tensor, as of a GPU tensor: a copy, detached, on ``device`` or
    else on data's own device (internal_new_from_data in torch/csrc/utils/tensor_new.cpp), with PyTorch's
    warning about copying a tensor this way."""
    copied = torch.tensor(_plain(data), dtype=dtype, requires_grad=requires_grad, pin_memory=pin_memory)
    target = _on_a_gpu_device(data) if device is None else torch.device(device)
    if target.type in ("cuda", "mps") and target.index is None:
        target = torch.device(target.type, 0)
    return copied if target.type == "cpu" else _on_a_gpu(copied, target)


class _OnAGPUCalls(torch.overrides.TorchFunctionMode):
    """What a pretend tensor's own ``__torch_function__`` never sees: functions that take it as data, not
    as a tensor argument (``torch.as_tensor(t, device="cpu")``, ``torch.tensor(t)``, ``torch.asarray(t)``),
    which PyTorch's argument parser does not dispatch. On for the rest of a check once the check made a
    pretend tensor (see ``_on_a_gpu``), so no other check pays for it; anything else passes through."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (torch.as_tensor, torch.tensor, torch.asarray):
            data = args[0] if args else kwargs.get("data", kwargs.get("obj"))
            rest = {k: v for k, v in kwargs.items() if k not in ("data", "obj")}
            if isinstance(data, _OnAGPU) and len(args) <= 1:
                if func is torch.tensor:
                    return _on_a_gpu_tensor(data, **rest)
                if func is torch.as_tensor or (rest.get("copy") is None and not rest.get("requires_grad")):
                    rest.pop("copy", None)
                    rest.pop("requires_grad", None)
                    return _on_a_gpu_as_tensor(data, **rest)  # asarray without copy= is as_tensor
        return func(*args, **kwargs)


# One entry per check running (check() adds it): None, or the _OnAGPUCalls it turned on.
_ON_A_GPU_CALLS: list = []


@contextlib.contextmanager
def _on_a_gpu_calls():
    """While a check runs: its first pretend tensor turns _OnAGPUCalls on, until the check ends."""
    _ON_A_GPU_CALLS.append(None)
    try:
        yield
    finally:
        mode = _ON_A_GPU_CALLS.pop()
        if mode is not None:
            mode.__exit__(None, None, None)


def _on_a_gpu_repr(t: torch.Tensor, device: torch.device) -> str:
    """How print() shows a tensor on ``device``: its values, then device='cuda:0'."""
    text = repr(_plain(t))
    # torch/_tensor_str.py puts the device first among the suffixes, before dtype and grad_fn
    ends = [i for i in (text.find(m) for m in (", dtype=", ", grad_fn=", ", requires_grad=", ", size=")) if i > 0]
    at = min(ends) if ends else text.rindex(")")
    return f"{text[:at]}, device='{device}'{text[at:]}"


def _on_a_gpu(t: torch.Tensor, device: str | torch.device = "cuda:0") -> torch.Tensor:
    """``t`` as a tensor that behaves as if it lived on ``device``, a GPU (see _OnAGPU)."""
    device = torch.device(device)
    if device.type not in ("cuda", "mps"):
        raise ValueError(f"device must be a GPU (cuda:N or mps:0), got {device}")
    device = torch.device(device.type, device.index or 0)
    if str(device) not in _PRETENDING:
        _PRETENDING[str(device)] = type(f"_On_{device.type}_{device.index}", (_OnAGPU,), {"pretend": device})
    if _ON_A_GPU_CALLS and _ON_A_GPU_CALLS[-1] is None:  # a check is running: catch what takes it as data
        _ON_A_GPU_CALLS[-1] = _OnAGPUCalls()
        _ON_A_GPU_CALLS[-1].__enter__()
    return t.as_subclass(_PRETENDING[str(device)])


def _timer_verdict(gpu: _SimulatedGPU) -> None:
    """Raise _Wrong for a timer that never ran the work, read no clock (nor the time between two events),
    or read it before the wait, or started timing before the first, cold call."""
    if "work" not in gpu.events:
        raise _Wrong("core/timer-never-called")
    if "clock" not in gpu.events and "elapsed" not in gpu.events:
        raise _Wrong("core/timer-no-clock")
    if gpu.read_before_wait():
        raise _Wrong("core/timer-read-before-wait")
    first_read = min(gpu.events.index(e) for e in ("clock", "record") if e in gpu.events)
    if first_read < gpu.events.index("work"):  # the clock started, or an event was recorded, before the first call
        raise _Wrong("core/timer-no-warm-up")
