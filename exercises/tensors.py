"""The checks of lesson 02, tensors on devices."""


import torch

from utils import try_gpu

from .core import _a, _expect, _expect_callable, _on_a_gpu, _register, _say, _Wrong


@_register("tensors.half-size", hint="tensors.half-size/hint")
def _tensors_half_size(h, n_bytes):
    _expect(h, torch.Tensor, "h")
    best = try_gpu()
    if tuple(h.shape) != (1024, 1024):
        raise _Wrong("tensors.half-size/shape", shape=tuple(h.shape))
    if h.dtype != torch.float16:
        raise _Wrong("tensors.half-size/dtype", dtype=str(h.dtype).removeprefix("torch."))
    if h.device != best:
        raise _Wrong("tensors.half-size/device", got=h.device, best=best)
    n_bytes = _expect(n_bytes, int, "n_bytes")  # also a whole number written as NumPy's, a float or a tensor
    if n_bytes != h.numel() * h.element_size():
        key = "tensors.half-size/numel" if n_bytes == h.numel() else "tensors.half-size/bytes"
        raise _Wrong(key, n_bytes=n_bytes)
    return {"n_bytes": n_bytes, "device": best}


def _tensors_try_cuda5() -> BaseException | None:
    """What ``torch.ones(2, device="cuda:5")`` raises on this machine (None if it makes the tensor)."""
    try:
        torch.ones(2, device="cuda:5")
    except Exception as err:  # whatever this machine raises: the learner's answer is compared with it
        return err
    return None


def _tensors_first_line(err: BaseException) -> str:
    return (str(err).splitlines() or [""])[0]


@_register("tensors.missing-gpu", hint="tensors.missing-gpu/hint")
def _tensors_missing_gpu(error):
    expected = _tensors_try_cuda5()
    if isinstance(error, str):
        raise _Wrong("tensors.missing-gpu/a-string")
    if error is not None and not isinstance(error, BaseException):
        raise _Wrong("tensors.missing-gpu/not-an-error", got=_a(type(error).__name__))
    if expected is None:
        if error is not None:
            raise _Wrong("tensors.missing-gpu/unexpected", got=_a(type(error).__name__),
                         count=torch.cuda.device_count())
        return {"outcome": _say("tensors.missing-gpu/creates", count=torch.cuda.device_count())}
    if error is None:
        raise _Wrong("tensors.missing-gpu/none")
    if type(error) is not type(expected) or _tensors_first_line(error) != _tensors_first_line(expected):
        raise _Wrong("tensors.missing-gpu/other", kind=type(error).__name__, message=_tensors_first_line(error))
    return {"outcome": _say("tensors.missing-gpu/raises", kind=type(error).__name__,
                            message=_tensors_first_line(error))}


@_register("tensors.retype", hint="tensors.retype/hint")
def _tensors_retype(t, retyped, copies):
    _expect(t, torch.Tensor, "t")
    _expect(retyped, torch.Tensor, "retyped")
    if retyped.device != t.device:
        raise _Wrong("tensors.retype/device", got=retyped.device, want=t.device)
    if t.dtype == torch.float16:  # t itself was changed: "retyped has t's own type" would mislead
        raise _Wrong("tensors.retype/t-changed")
    if retyped.dtype == t.dtype:
        raise _Wrong("tensors.retype/same-dtype", dtype=str(t.dtype).removeprefix("torch."))
    if retyped.dtype != torch.float16:
        raise _Wrong("tensors.retype/dtype", dtype=str(retyped.dtype).removeprefix("torch."))
    if retyped.shape != t.shape or not torch.equal(retyped.cpu(), t.cpu().to(torch.float16)):
        raise _Wrong("tensors.retype/values")
    copies = _expect(copies, bool, "copies")
    if copies != (retyped.data_ptr() != t.data_ptr()):  # a new type needs new memory: always True
        raise _Wrong("tensors.retype/answer", copies=copies)
    return {"old": t.element_size(), "new": retyped.element_size()}


_TENSORS_DESCRIBE_CASES = (  # (what the tensor is, a key of MESSAGES; how to make it; what describe should say)
    ("tensors.describe/cpu-matrix", lambda: torch.zeros(2, 3), "shape (2, 3), float32, on cpu"),
    ("tensors.describe/half-vector", lambda: _on_a_gpu(torch.ones(4, dtype=torch.float16), "cuda:0"),
     "shape (4,), float16, on cuda:0"),
    ("tensors.describe/int-number", lambda: _on_a_gpu(torch.tensor(7), "cuda:1"), "shape (), int64, on cuda:1"),
    ("tensors.describe/mps-matrix", lambda: _on_a_gpu(torch.zeros(1, 2, dtype=torch.bool), "mps"),
     "shape (1, 2), bool, on mps:0"),
)


@_register("tensors.describe", hint="tensors.describe/hint")
def _tensors_describe(describe):
    _expect_callable(describe, "describe")
    for label, make, want in _TENSORS_DESCRIBE_CASES:
        case = _say(label)
        t = make()
        got = describe(t)
        if got == want:
            continue
        if not isinstance(got, str):
            raise _Wrong("tensors.describe/not-a-string", case=case, got=type(got).__name__)
        if "torch.Size" in got:
            raise _Wrong("tensors.describe/shape", case=case, got=got)
        if "torch." in got:
            raise _Wrong("tensors.describe/dtype", case=case, got=got)
        if not got.endswith(f"on {t.device}"):
            raise _Wrong("tensors.describe/device", case=case, got=got, device=t.device)
        raise _Wrong("tensors.describe/different", case=case, got=got, want=want)
