"""The checks of lesson 17, training that fits: accumulation and checkpointing.

Both judge the learner's function by what it leaves in the weights' ``.grad``, against the gradient
of one plain batch, on the learner's device. Accumulation is also judged by the batch sizes the model
sees (one micro-batch at a time), and a wrong gradient is named by what it equals (the mean of the
micro-batches' means, their sum, the last one alone). Checkpointing is also judged by what autograd
keeps for the backward pass, counted as lesson 09's ``kept_for_backward`` counts, without the weights.
"""

import itertools
import math
import warnings

import torch
from torch import nn

from utils import try_gpu

from .core import _expect, _expect_callable, _float32_matmul_precision, _register, _Wrong

_TOLERANCE = 1e-5


def _small_model(device: torch.device) -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).to(device)


def _gradient(model: nn.Module) -> torch.Tensor | None:
    """Every weight's .grad, flattened into one vector; None where a weight has none."""
    grads = [p.grad for p in model.parameters()]
    if any(g is None for g in grads):
        return None
    return torch.cat([g.detach().flatten() for g in grads])


def _plain_gradient(device: torch.device, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    model = _small_model(device)
    nn.functional.cross_entropy(model(inputs), targets).backward()
    return _gradient(model)


def _near(a: torch.Tensor, b: torch.Tensor) -> bool:
    return torch.allclose(a, b, atol=_TOLERANCE, rtol=1e-4)


def _a_multiple_of(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether ``a`` is ``b`` times a positive number (however the loss was scaled)."""
    scale = (a @ b) / (b @ b).clamp_min(1e-30)
    return bool(scale > 0) and _near(a, scale * b)


@_register("fits.uneven", hint="fits.uneven/hint")
def _fits_uneven(accumulate_any):
    _expect_callable(accumulate_any, "accumulate_any")
    with _float32_matmul_precision("highest"):  # even where the learner allowed TF32 (lesson 10)
        return _uneven(accumulate_any)


def _uneven(accumulate_any):
    device = try_gpu()
    g = torch.Generator().manual_seed(0)
    inputs = torch.randn(10, 4, generator=g).to(device)
    targets = torch.randint(0, 3, (10,), generator=g).to(device)
    for sizes in ((3, 3, 3, 1), (6, 4), (1, 2, 3, 4)):
        micro = list(zip(inputs.split(sizes), targets.split(sizes), strict=True))
        model = _small_model(device)
        before = [p.detach().clone() for p in model.parameters()]
        seen: list[int] = []  # the batch size of each forward pass, and 0 for each backward pass
        model.register_forward_pre_hook(  # a forward pass under torch.no_grad() keeps nothing: not counted
            lambda _module, args, seen=seen: seen.append(len(args[0])) if torch.is_grad_enabled() else None)
        next(model.parameters()).register_hook(lambda grad, seen=seen: seen.append(0))
        accumulate_any(model, [(x.clone(), y.clone()) for x, y in micro])
        if any(not torch.equal(p.detach(), b) for p, b in zip(model.parameters(), before, strict=True)):
            raise _Wrong("fits.uneven/stepped")
        if seen and max(seen) > max(sizes):
            raise _Wrong("fits.uneven/whole", biggest=max(seen), sizes=list(sizes))
        got = _gradient(model)
        if got is None:
            raise _Wrong("fits.uneven/no-grad")
        if any(a and b for a, b in itertools.pairwise(seen)):  # two forward passes with no backward pass between
            raise _Wrong("fits.uneven/all-at-once")
        want = _plain_gradient(device, inputs, targets)
        if _near(got, want):
            continue
        each = [_plain_gradient(device, x, y) for x, y in micro]
        if _near(got, sum(each) / len(each)):
            raise _Wrong("fits.uneven/by-k", sizes=list(sizes))
        if _near(got, sum(each)):
            raise _Wrong("fits.uneven/sum", sizes=list(sizes))
        if _a_multiple_of(got, each[-1]):
            raise _Wrong("fits.uneven/last", sizes=list(sizes))
        if _a_multiple_of(got, want):
            raise _Wrong("fits.uneven/scale", sizes=list(sizes), ratio=((got @ want) / (want @ want)).item())
        raise _Wrong("fits.uneven/values", sizes=list(sizes), difference=(got - want).abs().max().item())
    return {}


class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Linear(8, 32), nn.Linear(32, 8)

    def forward(self, x):
        return x + self.down(torch.relu(self.up(x)))


def _blocks(device: torch.device) -> list[nn.Module]:
    torch.manual_seed(0)
    return [_Block().to(device) for _ in range(5)]


def _kept_without_weights(run, blocks: list[nn.Module]) -> tuple[object, int]:
    """``run()``'s result, and the bytes of the tensors autograd kept for the backward pass while it ran,
    each block of memory once, the weights' own memory left out (it is there anyway)."""
    weights = {p.untyped_storage().data_ptr() for b in blocks for p in b.parameters()}
    sizes: dict[int, int] = {}

    def note(t: torch.Tensor) -> torch.Tensor:
        start = t.untyped_storage().data_ptr()
        if start not in weights:
            sizes[start] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(note, lambda t: t):
        result = run()
    return result, sum(sizes.values())


@_register("fits.segments", hint="fits.segments/hint")
def _fits_segments(run_in_segments):
    _expect_callable(run_in_segments, "run_in_segments")
    with _float32_matmul_precision("highest"):  # even where the learner allowed TF32 (lesson 10)
        return _segments(run_in_segments)


def _segments(run_in_segments):
    device = try_gpu()
    x = torch.randn(64, 8, generator=torch.Generator().manual_seed(0)).to(device)
    plain = _blocks(device)

    def plain_run():
        y = x
        for block in plain:
            y = block(y)
        return y

    want, plain_kept = _kept_without_weights(plain_run, plain)
    want.sum().backward()
    kept_by_size = {}
    for size in (1, 2, 3, len(plain)):
        mine = _blocks(device)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got, kept = _kept_without_weights(lambda mine=mine, size=size: run_in_segments(mine, x.clone(), size), mine)
            got = _expect(got, torch.Tensor, "run_in_segments(blocks, x, size)")
            if got.shape != want.shape or not torch.allclose(got.detach(), want.detach(), atol=_TOLERANCE):
                raise _Wrong("fits.segments/values", size=size)
            if got.requires_grad:
                got.sum().backward()
        if any(p.grad is None for b in mine for p in b.parameters()):
            if any("Gradients will be None" in str(w.message) or "use_reentrant" in str(w.message) for w in caught):
                raise _Wrong("fits.segments/reentrant")
            raise _Wrong("fits.segments/no-grad")
        for b_mine, b_plain in zip(mine, plain, strict=True):
            for p, q in zip(b_mine.parameters(), b_plain.parameters(), strict=True):
                if not torch.allclose(p.grad, q.grad, atol=_TOLERANCE):
                    raise _Wrong("fits.segments/grads", size=size)
        segments = math.ceil(len(plain) / size)
        inputs = segments * x.untyped_storage().nbytes()  # each segment's input: 64 x 8 numbers
        kib = {"size": size, "kept": _kib(kept), "plain": _kib(plain_kept), "inputs": _kib(inputs),
               "segments": segments}
        if kept == 0:
            raise _Wrong("fits.segments/hidden", **kib)
        if kept >= plain_kept:
            raise _Wrong("fits.segments/keeps-all", **kib)
        if kept > inputs:
            raise _Wrong("fits.segments/keeps-some", **kib)
        if kept < inputs:
            raise _Wrong("fits.segments/too-few", **kib)
        kept_by_size[size] = _kib(kept)
    return {"size1": kept_by_size[1], "size2": kept_by_size[2], "size3": kept_by_size[3],
            "size5": kept_by_size[len(plain)], "plain": _kib(plain_kept)}


def _kib(n: int) -> str:
    return f"{n / 1024:.0f} KiB"
