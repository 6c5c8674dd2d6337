"""The checks of lesson 07, GPU memory: allocated, reserved and the peak.

They count tensors, which gives the same bytes on every device, so they hold on any machine; once
right, the "/right" message says what the reader's device showed (its memory counters on a GPU).
"""

import weakref

import torch
from torch import nn

from utils import memory_stats, release_cached_memory, try_gpu

from .core import _expect, _expect_callable, _register, _say, _table_answers, _Wrong

_MEMORY_MIB = 2**20
_MEMORY_KEYS = ("weights", "gradients", "state")


def _memory_counts(state_bytes, model, optimizer, case):
    """What the learner's state_bytes says for ``model`` now, checked to be a dict of ints."""
    try:
        counts = state_bytes(model, optimizer)
    except (AttributeError, TypeError) as err:
        if "NoneType" in str(err):  # p.grad is None before the first backward pass
            raise _Wrong("memory.adam-step/no-grad", case=case) from None
        raise
    _expect(counts, dict, "state_bytes(model, optimizer)")
    missing = [k for k in _MEMORY_KEYS if k not in counts]
    if missing:
        raise _Wrong("memory.adam-step/keys", names=", ".join(f'"{k}"' for k in missing))
    # the three counts as ints; a key of its own, such as a "total", is not one of them
    return {k: _expect(counts[k], int, f'state_bytes(model, optimizer)["{k}"]') for k in _MEMORY_KEYS}


@_register("memory.adam-step", hint="memory.adam-step/hint")
def _memory_adam_step(state_bytes, predicted_mib):
    _expect_callable(state_bytes, "state_bytes")
    torch.manual_seed(0)
    cases = [("memory.adam-step/float32-network", nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8)), 16),
             ("memory.adam-step/float64-layer", nn.Linear(8, 4).double(), 8)]
    for label, model, width in cases:
        case = _say(label)
        optimizer = torch.optim.Adam(model.parameters())
        weights = sum(p.numel() * p.element_size() for p in model.parameters())
        elements = sum(p.numel() for p in model.parameters())
        counts = _memory_counts(state_bytes, model, optimizer, case)
        if counts["weights"] != weights:
            key = "memory.adam-step/elements" if counts["weights"] == elements else "memory.adam-step/weights"
            raise _Wrong(key, case=case, got=counts["weights"], want=weights)
        if counts["gradients"] != 0:
            raise _Wrong("memory.adam-step/gradients-early", case=case, got=counts["gradients"])
        if counts["state"] != 0:
            raise _Wrong("memory.adam-step/lazy", case=case, got=counts["state"])
        dtype = next(model.parameters()).dtype
        model(torch.randn(4, width, dtype=dtype)).square().mean().backward()
        optimizer.step()
        counts = _memory_counts(state_bytes, model, optimizer, case)
        if counts["gradients"] != weights:
            raise _Wrong("memory.adam-step/gradients", case=case, got=counts["gradients"], want=weights)
        steps = 8 * len(optimizer.state)  # each parameter's one-element step counter
        if not 2 * weights <= counts["state"] <= 2 * weights + steps:
            raise _Wrong("memory.adam-step/state", case=case, got=counts["state"], want=2 * weights)
    predicted_mib = _expect(predicted_mib, (int, float), "predicted_mib")
    layer_mib = (4096 * 4096 + 4096) * 4 / _MEMORY_MIB
    if not 0.94 * 4 * layer_mib <= predicted_mib <= 1.07 * 4 * layer_mib:  # in MiB, or in MB
        raise _Wrong("memory.adam-step/predicted", got=predicted_mib, weights=f"{layer_mib:.0f}")
    return _memory_adam_step_on_this_machine(state_bytes)


def _memory_adam_step_on_this_machine(state_bytes):
    """The learner's count of a step of nn.Linear(4096, 4096) on the reader's device, and its counters."""
    device = try_gpu()
    layer = nn.Linear(4096, 4096).to(device)
    optimizer = torch.optim.Adam(layer.parameters())
    before = memory_stats(device)
    layer(torch.randn(8, 4096, device=device)).square().mean().backward()
    optimizer.step()
    after = memory_stats(device)
    counted = sum(_memory_counts(state_bytes, layer, optimizer, "nn.Linear(4096, 4096)").values())
    if after is None:
        measured = _say("memory.adam-step/no-counters", device=device)
    else:
        measured = _say("memory.adam-step/counters", device=device,
                        grew=f"{(after['allocated'] - before['allocated']) / _MEMORY_MIB:.1f}")
    del layer, optimizer
    release_cached_memory(device)
    return {"counted": f"{counted / _MEMORY_MIB:.1f}", "measured": measured}


_MEMORY_ALIAS = {  # the exercise's statements, by letter (their words are the lesson's, in each edition)
    "a": True,   # after del big: the tensor is alive
    "b": True,   # after del big and release: allocated counts it
    "c": True,   # after del big and release: reserved counts it
    "d": False,  # after del alias: the tensor is alive
    "e": False,  # after del alias: allocated counts it
    "f": True,   # after del alias: reserved counts it
    "g": False,  # after a second release: reserved counts it
}


@_register("memory.alias", hint="memory.alias/hint")
def _memory_alias(still_held):
    wrong = _table_answers(still_held, _MEMORY_ALIAS, "still_held", "memory.alias/missing")
    if wrong:
        raise _Wrong("memory.alias/wrong", count=len(wrong), total=len(_MEMORY_ALIAS), names=", ".join(wrong))
    return _memory_alias_on_this_machine()


def _memory_alias_on_this_machine():
    """The exercise's sequence, run on the reader's device: whether the tensor lives, and the counters."""
    device = try_gpu()
    big = torch.empty(256 * _MEMORY_MIB, dtype=torch.uint8, device=device)
    alias = big
    ref = weakref.ref(big)
    rows = []

    def row(label):
        stats = memory_stats(device)
        counters = _say("memory.alias/no-counters") if stats is None else _say(
            "memory.alias/counters", allocated=f"{stats['allocated'] / _MEMORY_MIB:.1f}",
            reserved=f"{stats['reserved'] / _MEMORY_MIB:.1f}")
        alive = _say("memory.alias/alive" if ref() is not None else "memory.alias/gone")
        rows.append(_say("memory.alias/row", label=label, alive=alive, counters=counters))

    del big
    release_cached_memory(device)
    row(_say("memory.alias/after-del-big"))
    del alias
    row(_say("memory.alias/after-del-alias"))
    release_cached_memory(device)
    row(_say("memory.alias/release-again"))
    return {"device": device, "rows": "\n".join(rows)}
