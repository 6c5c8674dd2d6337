"""The checks of lesson 03, copies between devices."""

import torch

from utils import two_different_devices

from .core import _expect, _expect_callable, _on_a_gpu, _register, _say, _Wrong


@_register("copies.other-way", hint="copies.other-way/hint")
def _copies_other_way(result):
    _expect(result, torch.Tensor, "result")
    first, second = two_different_devices()
    if result.device != first:
        key = "copies.other-way/on-second" if result.device == second else "copies.other-way/elsewhere"
        raise _Wrong(key, got=result.device, first=first, second=second)
    expected = torch.ones(2, 3) + torch.rand(2, 3, generator=torch.Generator().manual_seed(0))
    if result.dtype != expected.dtype:
        raise _Wrong("copies.other-way/dtype", got=result.dtype)
    if result.shape != expected.shape or not torch.allclose(result.cpu(), expected):
        raise _Wrong("copies.other-way/values")
    return {"device": first}


@_register("copies.copy-true", hint="copies.copy-true/hint")
def _copies_copy_true(shares_memory, answer):
    _expect_callable(shares_memory, "shares_memory")
    t = torch.arange(4.0)
    cases = [("t and t.view(2, 2)", t.view(2, 2), True), ("t and t.clone()", t.clone(), False),
             ("t and t itself", t, True), ("t and torch.zeros(4)", torch.zeros(4), False)]
    for name, other, same_start in cases:
        said = shares_memory(t, other)
        said = _expect(said, bool, f"shares_memory({name.replace(' and ', ', ')})")
        if said != same_start:
            if said is False and shares_memory(t, t) is False:  # `is` between two ints, new objects each call
                raise _Wrong("copies.copy-true/is")
            raise _Wrong("copies.copy-true/function", pair=name.replace(" and ", _say("core/and")), said=said)
    answer = _expect(answer, bool, "answer")
    if answer:
        raise _Wrong("copies.copy-true/answer")


_COPIES_CALLS = {"t.shape": False, "len(t)": False, "t.sum()": False, "t.item()": True,
                 "print(t)": True, "t.tolist()": True, "t.device": False}


@_register("copies.which-copy", hint="copies.which-copy/hint")
def _copies_which_copy(copies_to_cpu):
    _expect(copies_to_cpu, dict, "copies_to_cpu")
    missing = sorted(set(_COPIES_CALLS) - set(copies_to_cpu))
    if missing:
        raise _Wrong("copies.which-copy/missing", names=", ".join(missing))
    copies_to_cpu = {name: _expect(value, bool, f'copies_to_cpu["{name}"]') for name, value in copies_to_cpu.items()}
    wrong = [name for name in _COPIES_CALLS if copies_to_cpu[name] != _COPIES_CALLS[name]]
    if wrong:  # how many, and which way, never which: a named key of a true/false table is its answer
        said_copy = sum(copies_to_cpu[name] for name in wrong)
        raise _Wrong("copies.which-copy/wrong", count=len(wrong), said_copy=said_copy,
                     said_none=len(wrong) - said_copy)


@_register("copies.to-numpy", hint="copies.to-numpy/hint")
def _copies_to_numpy(to_numpy):
    import numpy as np

    _expect_callable(to_numpy, "to_numpy")
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    cases = [("copies.to-numpy/cpu", torch.arange(3.0)), ("copies.to-numpy/grad", w * 2),
             ("copies.to-numpy/gpu", _on_a_gpu(torch.arange(3.0))), ("copies.to-numpy/gpu-grad", _on_a_gpu(w) * 2)]
    for label, t in cases:
        name = _say(label)
        try:
            array = to_numpy(t)
        except (RuntimeError, TypeError) as err:
            if "requires grad" in str(err):
                raise _Wrong("copies.to-numpy/requires-grad", case=name) from None
            if "cuda" in str(err):
                raise _Wrong("copies.to-numpy/on-gpu", case=name) from None
            raise
        if not isinstance(array, np.ndarray):
            raise _Wrong("copies.to-numpy/not-an-array", case=name, got=type(array).__name__)
        if not np.array_equal(array, t.detach().as_subclass(torch.Tensor).numpy()):
            raise _Wrong("copies.to-numpy/values", case=name)
