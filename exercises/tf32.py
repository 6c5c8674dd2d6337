"""The checks of lesson 10, TF32, sums in another order, and determinism.

The learner's functions are run on cases the check builds itself, with PyTorch's switches watched
(was the precision set, and put back? was deterministic mode switched on, and off again?), first on
the CPU, then on the reader's own device, whose numbers the "/right" message shows.
"""

import contextlib
import os

import torch
from torch.overrides import TorchFunctionMode

from utils import try_gpu

from .core import _a, _as_float, _expect, _expect_callable, _letter, _register, _say, _Wrong


def _tf32_precision():
    """torch.get_float32_matmul_precision(), or _Wrong when it raises: PyTorch 2.9 and later refuse to
    read it once a new-API name (torch.backends.cuda.matmul.fp32_precision = "tf32") allows what it forbids."""
    try:
        return torch.get_float32_matmul_precision()
    except RuntimeError as err:
        if "mix of the legacy and new APIs" not in str(err):
            raise
        raise _Wrong("tf32.precision-settings/mixed-api") from None


@contextlib.contextmanager
def _tf32_watch(name, module=torch._C):
    """Record the first argument of every call of ``module.name`` while the block runs. The checks watch
    torch._C's setters, which torch.set_float32_matmul_precision and torch.use_deterministic_algorithms
    call (torch/__init__.py), so a setter imported by name (from torch import ...) is seen too."""
    real, calls = getattr(module, name), []

    def spy(*args, **kwargs):
        calls.append(args[0] if args else next(iter(kwargs.values()), None))
        return real(*args, **kwargs)

    setattr(module, name, spy)
    try:
        yield calls
    finally:
        setattr(module, name, real)


class _TF32Devices(TorchFunctionMode):
    """The types of the devices ("cuda", "cpu") of every tensor a torch function returns while the block
    runs: made there (torch.randn(..., device=where)), moved there (.to(where)) or computed there."""

    def __init__(self):
        super().__init__()
        self.types = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        for t in result if isinstance(result, (tuple, list)) else (result,):
            if isinstance(t, torch.Tensor):
                self.types.add(t.device.type)
        return result


@contextlib.contextmanager
def _tf32_on(device, key, /, **fields):
    """Run the block, and raise _Wrong(key, **fields) when ``device`` is a GPU on which it put no tensor."""
    if device.type == "cpu":
        yield
        return
    with _TF32Devices() as seen:
        yield
    if device.type not in seen.types:
        raise _Wrong(key, **fields)


_TF32_SETTINGS = ("highest", "high", "medium")
_TF32_WHERE = "a"  # only TF32 hardware (Ampere and later) changes, and a CPU's oneDNN for "medium"


@_register("tf32.precision-settings", hint="tf32.precision-settings/hint")
def _tf32_precision_settings(product_error, which_change):
    _expect_callable(product_error, "product_error")
    letter = _letter(which_change, "which_change", "tf32.precision-settings/choice")
    cpu, device = torch.device("cpu"), try_gpu()
    before = _tf32_precision()
    errors = {}
    try:
        for where in dict.fromkeys([cpu, device]):
            for precision in _TF32_SETTINGS:
                with _tf32_watch("_set_float32_matmul_precision") as calls, _tf32_on(
                        where, "tf32.precision-settings/not-on-device", where=where, precision=precision):
                    got = product_error(where, precision)
                after = _tf32_precision()
                if after != before:
                    raise _Wrong("tf32.precision-settings/not-restored", precision=precision, after=after,
                                 before=before)
                if precision not in calls:
                    raise _Wrong("tf32.precision-settings/never-set", precision=precision)
                errors[where, precision] = _as_float(got, f"product_error({where.type!r}, {precision!r})")
    finally:
        torch.set_float32_matmul_precision(before)
    for (where, precision), error in errors.items():
        if error == 0:
            raise _Wrong("tf32.precision-settings/zero", where=where, precision=precision)
        if error < 0:
            raise _Wrong("tf32.precision-settings/negative", where=where, precision=precision, got=error)
        if not 0 < error < 1.0:
            raise _Wrong("tf32.precision-settings/too-large", where=where, precision=precision, got=error)
    if errors[cpu, "highest"] >= 1e-2:
        raise _Wrong("tf32.precision-settings/too-large", where=cpu, precision="highest", got=errors[cpu, "highest"])
    if letter != _TF32_WHERE:
        raise _Wrong(f"tf32.precision-settings/where-{letter}")
    rows = [_say("tf32.precision-settings/row", where=str(w), precision=repr(p), error=e)
            for (w, p), e in errors.items()]
    return {"rows": "\n".join(rows)}


def _tf32_reference(v, chunk):
    """Each chunk summed, then the chunk sums added one by one in float32: the exercise's sum."""
    import numpy as np

    return float(np.cumsum(v.view(-1, chunk).sum(dim=1).numpy(), dtype=np.float32)[-1])


_TF32_ONES = 1000  # chunks that each sum to 1, after one that sums to 2**24
_TF32_WHY = "a"  # each addition into a large total loses the new number's low bits, a million times


@_register("tf32.chunked-sum", hint="tf32.chunked-sum/hint")
def _tf32_chunked_sum(chunked_sum, most_accurate, why):
    _expect_callable(chunked_sum, "chunked_sum")
    big = 2.0**24  # float32 holds every integer up to here; past it, only every other one
    # chunks of 2: [0, 0], [0, 1], [1, 0], [2**24, 0] sum to 0, 1, 1 and 2**24, and 2**24 + 2 is a float32 (so
    # is a running total of the numbers, whose 1s come before 2**24). Chunks that are no runs of consecutive
    # values (the rows of v.view(chunk, -1), of n / chunk values each, or the columns of v.view(-1, chunk)) sum
    # a lone 1 with 2**24, where it rounds away (2**24 + 1 is a tie, rounded to the even 2**24): 2**24 at the end.
    got = _as_float(chunked_sum(torch.tensor([0, 0, 0, 1, 1, 0, big, 0]), 2), "chunked_sum(v, 2)")
    if got == big:
        raise _Wrong("tf32.chunked-sum/not-consecutive", got=got, want=big + 2)
    # chunks of 4: [2**24, 0, 0, 0] and [1, 1, 1, 1] each sum exactly, and 2**24 + 4 is a float32
    got = _as_float(chunked_sum(torch.tensor([big, 0, 0, 0, 1, 1, 1, 1]), 4), "chunked_sum(v, 4)")
    if got != big + 4:
        key = "tf32.chunked-sum/one-by-one" if got == big else "tf32.chunked-sum/chunks"
        raise _Wrong(key, got=got, want=big + 4)
    # chunks of 1: a float32 running total, in which each 1 added to 2**24 rounds away
    got = _as_float(chunked_sum(torch.tensor([big, 1, 1, 1, 1]), 1), "chunked_sum(v, 1)")
    if got != big:
        raise _Wrong("tf32.chunked-sum/not-float32", got=got, want=big)
    # chunks of 10: 2**24, then _TF32_ONES chunks that each sum to 1, exactly, however a chunk is summed. One
    # by one in float32 each 1 rounds away (2**24 + 1 is a tie, rounded to the even 2**24); a pairwise sum
    # (torch.sum, np.sum) keeps most of them, a float64 total all of them. Five numbers are too few for
    # this: torch.sum and np.sum add so few one by one.
    ones = torch.zeros(10 * (_TF32_ONES + 1))
    ones[0], ones[10::10] = big, 1
    got = _as_float(chunked_sum(ones, 10), "chunked_sum(v, 10)")
    if got != big:
        key = "tf32.chunked-sum/float64-total" if got == big + _TF32_ONES else "tf32.chunked-sum/pairwise"
        raise _Wrong(key, n=_TF32_ONES, got=got, want=big)
    v = torch.randn(1_000_000, generator=torch.Generator().manual_seed(0))  # section 3's numbers
    got = {c: _as_float(chunked_sum(v, c), f"chunked_sum(v, {c})") for c in (10, 1000, 100_000)}
    for c in got:
        # 1e-2: chunk sums made another way (NumPy's sum of each row, or one by one) round their last bits
        # otherwise and move the total by up to 4e-3; the errors themselves are 2e-4 to 4e-3
        want = _tf32_reference(v, c)
        if abs(got[c] - want) > 1e-2:
            raise _Wrong("tf32.chunked-sum/values", chunk=c, got=got[c], want=want)
    most_accurate = _expect(most_accurate, int, "most_accurate")
    if most_accurate not in (10, 1000, 100_000):
        raise _Wrong("tf32.chunked-sum/not-a-chunk", got=most_accurate)
    exact = v.double().sum().item()
    errors = {c: abs(got[c] - exact) for c in got}
    if most_accurate != min(errors, key=errors.get):  # by the learner's own numbers, which the rows show
        raise _Wrong("tf32.chunked-sum/most-accurate", got=most_accurate)
    letter = _letter(why, "why", "tf32.chunked-sum/choice")
    if letter != _TF32_WHY:
        raise _Wrong(f"tf32.chunked-sum/why-{letter}")
    rows = [_say("tf32.chunked-sum/row", label=_say("tf32.chunked-sum/chunks-of", size=c), error=errors[c])
            for c in got]
    rows.append(_say("tf32.chunked-sum/row", label=_say("tf32.chunked-sum/running-total"),
                     error=abs(_tf32_reference(v, 1) - exact)))
    return {"rows": "\n".join(rows)}


def _tf32_losses(train, where):
    """``train(where)`` with deterministic mode watched: (the losses as a CPU tensor, whether it was
    switched on during the run)."""
    before = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    try:
        with _tf32_watch("_set_deterministic_algorithms") as calls, _tf32_on(
                where, "tf32.repeatable/not-on-device", device=where):
            try:
                losses = train(where)
            except RuntimeError as err:  # cuBLAS's determinism error (CUDA, PyTorch 2.9 and older)
                if "CUBLAS_WORKSPACE_CONFIG" not in str(err):
                    raise
                raise _Wrong("tf32.repeatable/cublas-late",
                             now=os.environ.get("CUBLAS_WORKSPACE_CONFIG", _say("tf32.repeatable/unset"))) from None
        if torch.are_deterministic_algorithms_enabled():  # on after train, whatever it was before
            raise _Wrong("tf32.repeatable/left-on" if any(calls) else "tf32.repeatable/not-deterministic")
    finally:
        torch.use_deterministic_algorithms(before[0], warn_only=before[1])
    if not isinstance(losses, torch.Tensor) or losses.numel() != 10:
        raise _Wrong("tf32.repeatable/shape", got=_a(type(losses).__name__) if not isinstance(losses, torch.Tensor)
                     else _say("tf32.repeatable/shape-of", shape=tuple(losses.shape)))
    return losses.detach().cpu().reshape(-1), any(calls)


@_register("tf32.repeatable", hint="tf32.repeatable/hint")
def _tf32_repeatable(train):
    _expect_callable(train, "train")
    device = try_gpu()
    first, switched_on = _tf32_losses(train, device)
    if not switched_on:
        raise _Wrong("tf32.repeatable/not-deterministic")
    if not bool(torch.isfinite(first).all()) or not first[-1] < first[0]:
        raise _Wrong("tf32.repeatable/not-learning", first=float(first[0]), last=float(first[-1]))
    second, _ = _tf32_losses(train, device)
    if not torch.equal(first, second):
        raise _Wrong("tf32.repeatable/differ", diff=float((first - second).abs().max()))
    if device.type == "cpu":
        return {"device": device, "across": _say("tf32.repeatable/cpu-only")}
    on_cpu, _ = _tf32_losses(train, torch.device("cpu"))
    relative = float(((first - on_cpu).abs() / on_cpu.abs()).max())
    accepted = next((rtol for rtol in (1e-6, 1e-5, 1e-4, 1e-3, 1e-2) if torch.allclose(first, on_cpu, rtol=rtol)),
                    None)
    across = _say("tf32.repeatable/across", device=device, relative=relative,
                  rtol=_say("tf32.repeatable/no-rtol") if accepted is None else f"rtol={accepted:g}")
    return {"device": device, "across": across}
