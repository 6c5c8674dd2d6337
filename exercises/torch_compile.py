"""The checks of lesson 16, torch.compile: fewer, fused kernels.

The timer is judged on a stand-in whose first call sleeps, as a compile takes time, so it holds on any
machine; once right, it runs on a function the check compiles on the reader's device, and the
"/right" message says what that showed. The graph-break fix is judged by its values against
`normalise` on several tensors, and by `graph_breaks`. No check asserts a speed.
"""

import time

import torch

from utils import Timing, compile_here, format_seconds, graph_breaks, median_and_iqr_seconds, try_gpu

from .core import _as_float, _expect, _expect_callable, _register, _say, _Wrong

_STAND_IN_FIRST = 0.2  # seconds the stand-in's first call takes, as a compile would


class _CompilesOnFirstCall:
    """A stand-in for a function just compiled: its first call takes 0.2 s, the others microseconds."""

    def __init__(self):
        self.calls = 0

    def __call__(self, x):
        self.calls += 1
        if self.calls == 1:
            time.sleep(_STAND_IN_FIRST)
        return x * 2


def _first_and_steady_of(first_and_steady, f, x, device) -> tuple[float, Timing]:
    """What the learner's ``first_and_steady(f, x, device)`` returns, as (seconds, Timing): the steady
    time may be a Timing, a (median, iqr) pair or a median alone (then its IQR counts as 0)."""
    got = first_and_steady(f, x, device)
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        raise _Wrong("torch-compile.first-and-steady/not-a-pair", got=type(got).__name__)
    first = _as_float(got[0], "the first call's seconds")
    steady = got[1] if isinstance(got[1], (tuple, list)) and len(got[1]) == 2 else (got[1], 0.0)
    return first, Timing(_as_float(steady[0], "the steady Timing's median"),
                         _as_float(steady[1], "the steady Timing's IQR"))


@_register("torch-compile.first-and-steady", hint="torch-compile.first-and-steady/hint")
def _torch_compile_first_and_steady(first_and_steady):
    _expect_callable(first_and_steady, "first_and_steady")
    stand_in = _CompilesOnFirstCall()
    first, timing = _first_and_steady_of(first_and_steady, stand_in, torch.ones(4), torch.device("cpu"))
    steady = timing.median
    if stand_in.calls < 2:
        raise _Wrong("torch-compile.first-and-steady/once", calls=stand_in.calls)
    if first < 0.9 * _STAND_IN_FIRST:
        raise _Wrong("torch-compile.first-and-steady/not-first", first=first, compile=_STAND_IN_FIRST)
    if first > _STAND_IN_FIRST + 0.3:
        raise _Wrong("torch-compile.first-and-steady/too-long", first=first, compile=_STAND_IN_FIRST)
    if steady > _STAND_IN_FIRST / 10:
        raise _Wrong("torch-compile.first-and-steady/steady-has-first", steady=steady, compile=_STAND_IN_FIRST)

    device = try_gpu()
    torch._dynamo.reset()  # compiled again, as in a new process (Inductor's disk cache may still hold it)

    def silu_scaled(x):  # not the lesson's GELU, whose compile a run of the lesson left in the disk cache
        return 1.5 * x * torch.sigmoid(x) + 0.1 * x * x

    x = torch.randn(1_000_000, generator=torch.Generator().manual_seed(0)).to(device)
    first, steady = _first_and_steady_of(first_and_steady, compile_here(silu_scaled), x, device)
    eager = median_and_iqr_seconds(lambda: silu_scaled(x), device)
    fields = {"device": device, "first": format_seconds(first), "steady": steady, "eager": eager}
    saved = eager.median - steady.median
    if saved > eager.iqr + steady.iqr:
        return {"measured": _say("torch-compile.first-and-steady/paid", calls=max(1, round(first / saved)), **fields)}
    return {"measured": _say("torch-compile.first-and-steady/unpaid", **fields)}


def normalise(x):
    biggest = x.abs().max().item()
    if biggest > 1:
        x = x / biggest
    return x


def _normalise_inputs(device):
    made = [torch.tensor([0.5, -0.25, 0.125]), torch.tensor([3.0, -4.0, 1.0]), torch.tensor([1.0, -1.0]),
            torch.zeros(3), torch.tensor([-6.0, 2.0]),
            5 * torch.randn(4, 3, generator=torch.Generator().manual_seed(0))]
    return [t.to(device) for t in made]


@_register("torch-compile.one-graph", hint="torch-compile.one-graph/hint")
def _torch_compile_one_graph(normalise_in_one_graph):
    _expect_callable(normalise_in_one_graph, "normalise_in_one_graph")
    device = try_gpu()
    for x in _normalise_inputs(device):
        got = _expect(normalise_in_one_graph(x.clone()), torch.Tensor, "normalise_in_one_graph(x)")
        want = normalise(x.clone())
        if got.shape != want.shape or got.device != want.device or not torch.allclose(got, want):
            shown = [round(v, 4) for v in x.flatten().tolist()[:6]]
            raise _Wrong("torch-compile.one-graph/values", x=shown,
                         got=[round(v, 4) for v in got.detach().flatten().tolist()[:6]],
                         want=[round(v, 4) for v in want.flatten().tolist()[:6]])
    breaks = graph_breaks(normalise_in_one_graph, _normalise_inputs(device)[1])
    if breaks is None:
        return {"graphs": _say("torch-compile.one-graph/no-dynamo")}
    if breaks:
        raise _Wrong("torch-compile.one-graph/breaks", count=len(breaks), first=breaks[0])
    return {"graphs": _say("torch-compile.one-graph/one")}
