"""The checks of lesson 06, where a GPU pays off.

The crossover and the copy-every-k log are checked on cases the check builds itself (made-up
timings; a matrix that counts its copies to the CPU), so they hold on any machine; once right, they
are run for real on the reader's device where that says something, and the "/right" message says
what it showed. No check asserts a speed.
"""

import math
import numbers

import torch
from torch.overrides import TorchFunctionMode

from utils import Timing, matmul_gflops, matmul_peak_tflops, median_and_iqr_seconds, try_gpu

from .core import _expect, _expect_callable, _float32_matmul_precision, _numpy_refused, _register, _say, _Wrong

_PAYOFF_SIZES = (32, 64, 128, 256, 512, 1024)


def _payoff_times(pairs):
    return {n: Timing(*pair) for n, pair in zip(_PAYOFF_SIZES, pairs, strict=True)}


# Made-up medians and IQRs, in seconds, of a product of each size: the CPU's, then the GPU's in
# each case, with the crossover the case has (the smallest n from which the GPU's median plus its
# IQR is below the CPU's median less its IQR, at that size and every larger one).
_PAYOFF_CPU = _payoff_times([(2e-6, 1e-7), (1e-5, 5e-7), (6e-5, 1e-6), (4e-4, 2e-5), (3e-3, 1e-4), (2.4e-2, 5e-4)])
_PAYOFF_GPU = (1e-4, 2e-6)  # a GPU's spread, and its time at the large sizes
_PAYOFF_CASES = {  # name: (the CPU's timings, the GPU's, the crossover)
    "clear": (_PAYOFF_CPU, _payoff_times([(3e-5, 1e-6), (3e-5, 1e-6), (7e-5, 1e-6), _PAYOFF_GPU, (3e-4, 1e-5),
                                          (2e-3, 2e-5)]), 256),
    "gpu-spread": (_PAYOFF_CPU, _payoff_times([(3e-5, 1e-6), (3e-5, 1e-6), (5e-5, 1.5e-5), _PAYOFF_GPU,
                                               (3e-4, 1e-5), (2e-3, 2e-5)]), 256),
    "cpu-spread": (_payoff_times([(2e-6, 1e-7), (1e-5, 5e-7), (6e-5, 1.5e-5), (4e-4, 2e-5), (3e-3, 1e-4),
                                  (2.4e-2, 5e-4)]),
                   _payoff_times([(3e-5, 1e-6), (3e-5, 1e-6), (5e-5, 1e-6), _PAYOFF_GPU, (3e-4, 1e-5),
                                  (2e-3, 2e-5)]), 256),
    "dip": (_PAYOFF_CPU, _payoff_times([(3e-5, 1e-6), (4e-6, 1e-7), (7e-5, 1e-6), _PAYOFF_GPU, (3e-4, 1e-5),
                                        (2e-3, 2e-5)]), 256),
    "always": (_PAYOFF_CPU, _payoff_times([(1e-6, 1e-8)] * 6), 32),
    "never": (_PAYOFF_CPU, _payoff_times([(1.0, 1e-3)] * 6), None),
    # at 128 the GPU's median plus its IQR equals the CPU's median less its IQR, exactly (powers of two):
    # level is not below, so the crossover is 256
    "touching": (_payoff_times([(0.5, 0.125)] * 6),
                 _payoff_times([(1.0, 0.125), (1.0, 0.125), (0.25, 0.125), (0.125, 0.0625), (0.125, 0.0625),
                                (0.125, 0.0625)]), 256),
}


@_register("payoff.crossover", hint="payoff.crossover/hint")
def _payoff_crossover(crossover):
    _expect_callable(crossover, "crossover")
    for case, (on_cpu, on_gpu, want) in _PAYOFF_CASES.items():
        got = crossover(dict(on_cpu), dict(on_gpu))
        if isinstance(got, numbers.Integral) and not isinstance(got, bool):
            got = int(got)  # NumPy's integers too
        if got is not None:
            got = _expect(got, int, "crossover(on_cpu, on_gpu)")
        if got == want:
            continue
        if case in ("gpu-spread", "cpu-spread"):
            raise _Wrong("payoff.crossover/overlap", got=got, gpu=on_gpu[128], cpu=on_cpu[128], want=want)
        raise _Wrong(f"payoff.crossover/{case}", got=got, want=want)
    on_cpu, on_gpu, want = _PAYOFF_CASES["clear"]
    largest_first = crossover(dict(reversed(on_cpu.items())), dict(reversed(on_gpu.items())))
    if largest_first != want:  # the sizes walked in the dict's order, not from the smallest
        raise _Wrong("payoff.crossover/unsorted", got=largest_first, want=want)
    return {"measured": _payoff_crossover_on_this_machine(crossover)}


def _payoff_crossover_on_this_machine(crossover):
    """The crossover the learner's function finds on the reader's machine, measured, or why nothing was."""
    device = try_gpu()
    cpu, threads = torch.device("cpu"), torch.get_num_threads()
    if device.type == "cpu" and threads < 2:
        return _say("payoff.crossover/no-gpu")

    def timed(n, d):
        a = torch.randn(n, n, generator=torch.Generator().manual_seed(0)).to(d)
        return median_and_iqr_seconds(lambda: a @ a, d, min_run_time=0.05)

    if device.type == "cpu":  # no GPU: the CPU against itself, one thread against all of them
        def one_thread(n):
            torch.set_num_threads(1)
            try:
                return timed(n, cpu)
            finally:
                torch.set_num_threads(threads)

        baseline, contender = {n: one_thread(n) for n in _PAYOFF_SIZES}, {n: timed(n, cpu) for n in _PAYOFF_SIZES}
        key = "payoff.crossover/threads"
    else:
        baseline, contender = {n: timed(n, cpu) for n in _PAYOFF_SIZES}, {n: timed(n, device) for n in _PAYOFF_SIZES}
        key = "payoff.crossover/measured"
    found = crossover(baseline, contender)
    return _say(key if found is not None else f"{key}-none", device=device, threads=threads, n=found)


_PAYOFF_PEAKS = {"float32 on an A100, TF32 off": "float32", "float32 on an A100, TF32 on": "tf32",
                 "float32 on a T4, TF32 on": "float32", "float16 on a T4": "float16", "float16 on a CPU": None}
# Other names of the same peaks: dtypes as torch writes them, the short names, None as text.
_PAYOFF_ALIASES = {"float32": "float32", "fp32": "float32", "torch.float32": "float32", "tf32": "tf32",
                   "float16": "float16", "fp16": "float16", "half": "float16", "torch.float16": "float16",
                   "none": None}


def _payoff_peak(value):
    """The peak ``value`` names ("float32", "tf32", "float16" or None), or ... where it names none."""
    if value is None:
        return None
    if isinstance(value, torch.dtype):
        value = str(value)
    if isinstance(value, str):
        return _PAYOFF_ALIASES.get("".join(value.split()).lower(), ...)
    return ...


@_register("payoff.peaks", hint="payoff.peaks/hint")
def _payoff_peaks(peak_for):
    _expect(peak_for, dict, "peak_for")
    missing = [name for name in _PAYOFF_PEAKS if name not in peak_for]
    if missing:
        raise _Wrong("payoff.peaks/missing", names=", ".join(f'"{m}"' for m in missing))
    for name in _PAYOFF_PEAKS:
        if _payoff_peak(peak_for[name]) is ...:
            raise _Wrong("payoff.peaks/value", name=name, got=repr(peak_for[name]))
    wrong = [name for name, want in _PAYOFF_PEAKS.items() if _payoff_peak(peak_for[name]) != want]
    if wrong:
        raise _Wrong("payoff.peaks/wrong", count=len(wrong), total=len(_PAYOFF_PEAKS),
                     names=", ".join(f'"{w}"' for w in wrong))
    return _payoff_peaks_on_this_machine()


def _payoff_peaks_on_this_machine():
    """A large product's rate on the reader's device in each precision, with its share of the peak."""
    device = try_gpu()
    n = 256 if device.type == "cpu" else 4096
    settings = [("float32", torch.float32, "highest"), ("float16", torch.float16, "highest")]
    if device.type == "cuda" and torch.cuda.get_device_capability(device) >= (8, 0):
        settings.append((_say("payoff.peaks/tf32"), torch.float32, "high"))
    rows = []
    for label, dtype, precision in settings:
        with _float32_matmul_precision(precision):
            rate, peak = matmul_gflops(n, device, dtype, min_run_time=0.05), matmul_peak_tflops(device, dtype)
        share = _say("payoff.peaks/share", share=f"{rate / (peak[0] * 1e3):.0%}", kind=peak[1],
                     peak=f"{peak[0]:g}") if peak else ""
        rows.append(_say("payoff.peaks/row", label=label, rate=f"{rate:.1f}", share=share))
    return {"device": device, "n": n, "rows": "\n".join(rows)}


_PAYOFF_DEVICE = torch.device("cpu")  # what m.device gives: the device m stands for, told apart by identity


class _PayoffCounted(torch.Tensor):
    """A CPU tensor that counts the copies of its values to the CPU (as Python numbers, text or NumPy,
    or written into a plain tensor, one on the CPU): the calls that on a GPU copy across the bus and
    wait. What it computes stays of this class, so that copies of results count too; a copy is a
    plain tensor. Its ``device`` is _PAYOFF_DEVICE, so that a tensor made or moved there is one on
    the device it stands for (_PayoffOnTheDevice)."""

    copies = 0
    COPIES = (torch.Tensor.tolist, torch.Tensor.item, torch.Tensor.__float__, torch.Tensor.__int__,
              torch.Tensor.numpy, torch.Tensor.__array__, torch.Tensor.cpu, torch.Tensor.__repr__)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(func, "__self__", None) is torch.Tensor.device:
            return _PAYOFF_DEVICE
        to_cpu = func is torch.Tensor.to and any(str(a) == "cpu" for a in [*args[1:], *kwargs.values()]
                                                  if isinstance(a, (str, torch.device)) and a is not _PAYOFF_DEVICE)
        into_the_cpu = (  # plain[i] = counted, plain.copy_(counted)
            (func is torch.Tensor.__setitem__ and not isinstance(args[0], cls) and isinstance(args[2], cls))
            or (func is torch.Tensor.copy_ and not isinstance(args[0], cls) and isinstance(args[1], cls)))
        if func in (torch.Tensor.numpy, torch.Tensor.__array__) and not kwargs.get("force"):
            raise _numpy_refused("cuda:0")  # as on a GPU, which this tensor stands for
        if func in cls.COPIES or to_cpu or into_the_cpu:
            _PayoffCounted.copies += 1
            with torch._C.DisableTorchFunctionSubclass():
                result = func(*args, **kwargs)
            return result.as_subclass(torch.Tensor) if isinstance(result, torch.Tensor) else result
        return super().__torch_function__(func, types, args, kwargs)


class _PayoffOnTheDevice(TorchFunctionMode):
    """While log_every runs: a tensor it makes on m's device (torch.empty(n, device=m.device)), or moves
    there (torch.zeros(n).to(m.device)), is one on that device, so its copies count too; one it makes
    on the CPU by name (device="cpu") stays in main memory, as on a GPU machine."""

    FACTORIES = (torch.empty, torch.zeros, torch.ones, torch.full, torch.tensor, torch.as_tensor, torch.stack)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        to_the_device = (func in self.FACTORIES and kwargs.get("device") is _PAYOFF_DEVICE) or (
            func is torch.Tensor.to and any(a is _PAYOFF_DEVICE for a in [*args[1:], *kwargs.values()]))
        if to_the_device and type(result) is torch.Tensor:
            result = result.as_subclass(_PayoffCounted)
        return result


@_register("payoff.copy-every", hint="payoff.copy-every/hint")
def _payoff_copy_every(log_every):
    _expect_callable(log_every, "log_every")
    m = torch.randn(16, 16, generator=torch.Generator().manual_seed(0)) / 4
    norm = float(torch.linalg.matrix_norm(m @ m))
    steps = 250
    for k in (100, 7, 1, steps):
        _PayoffCounted.copies = 0
        with _PayoffOnTheDevice():
            log = log_every(m.as_subclass(_PayoffCounted), k, steps)
        copies, want = _PayoffCounted.copies, math.ceil(steps / k)
        _expect(log, list, f"log_every(m, {k}, steps={steps})")
        if len(log) != steps:
            key = "payoff.copy-every/remainder" if len(log) == steps - steps % k else "payoff.copy-every/length"
            raise _Wrong(key, k=k, steps=steps, got=len(log))
        odd = next((v for v in log if not isinstance(v, float)), None)
        if odd is not None:
            got = "Tensor" if isinstance(odd, torch.Tensor) else type(odd).__name__
            raise _Wrong("payoff.copy-every/not-floats", got=got)
        if not all(math.isclose(v, norm, rel_tol=1e-5) for v in log):
            raise _Wrong("payoff.copy-every/values")
        if copies > want:
            raise _Wrong("payoff.copy-every/copies", k=k, steps=steps, got=copies, want=want)
        if copies < want:  # k ignored: the log copied at the end only, not a group at a time
            raise _Wrong("payoff.copy-every/too-few", k=k, steps=steps, got=copies, want=want)
    return _payoff_copy_every_on_this_machine(log_every)


def _payoff_copy_every_on_this_machine(log_every):
    """The learner's log_every timed for real on the reader's device: copying every step, every 100 steps
    and once. A CPU, which has nothing to copy or wait for, gets 250 steps instead of 1000, to be quick."""
    device = try_gpu()
    steps = 250 if device.type == "cpu" else 1000
    m = torch.randn(100, 100, generator=torch.Generator().manual_seed(0)).to(device)
    times = {k: median_and_iqr_seconds(lambda k=k: log_every(m, k, steps), device, min_run_time=0.05)
             for k in (1, 100, steps)}
    rows = "\n".join(_say("payoff.copy-every/row", k=k, time=t) for k, t in times.items())
    return {"device": device, "steps": steps, "rows": rows, "against": times[100].against(times[steps])}
