"""The checks of lesson 14, DDP in practice.

No check launches processes: the launch of exercise 1 runs in the learner's own cells, and its
check judges what it brought back (an error, seconds, process ids); exercise 2's check loads state
dicts it builds itself.
"""

import collections
import datetime
import numbers
import re

import torch

from utils import process_exists

from .core import _a, _expect, _expect_callable, _register, _say, _Wrong

# --- ddp-practice.hang: a mistake that would hang ----------------------------------------------

def _ddp_practice_number(value, what):
    """Seconds as a float: a number (NumPy's too) or a timedelta (datetime.now() read twice); else _Wrong."""
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    return float(_expect(value, (int, float), what))  # says what it is instead, unless a tensor of one value


@_register("ddp-practice.hang", hint="ddp-practice.hang/hint")
def _ddp_practice_hang(error, seconds, pids):
    if error is None:
        raise _Wrong("ddp-practice.hang/no-error")
    if not isinstance(error, BaseException):
        kind = type(error).__name__
        raise _Wrong("ddp-practice.hang/not-an-exception", got=_a(kind))
    if isinstance(error, TimeoutError):
        raise _Wrong("ddp-practice.hang/launch-timeout")
    if not isinstance(error, RuntimeError):
        raise _Wrong("ddp-practice.hang/other-error", kind=type(error).__name__)
    seconds = _ddp_practice_number(seconds, "seconds")
    text = str(error)
    if seconds <= 5:  # the group's timeout alone, a figure from the text rather than the clock
        raise _Wrong("ddp-practice.hang/too-soon", seconds=seconds)
    if seconds >= 3600:  # another unit: milliseconds or nanoseconds
        raise _Wrong("ddp-practice.hang/not-seconds", seconds=seconds)
    if seconds >= 60:
        raise _Wrong("ddp-practice.hang/too-late", seconds=seconds)

    def a_pid(p):
        if isinstance(p, str):
            return p.strip().isdigit()
        return isinstance(p, numbers.Integral) and not isinstance(p, bool)

    if not isinstance(pids, (list, tuple, set, frozenset)) or len(pids) != 2 or not all(a_pid(p) for p in pids):
        raise _Wrong("ddp-practice.hang/pids", got=repr(pids))
    pids = [int(p) for p in pids]  # the ids as read from the text are fine too, and a set of them
    printed = {int(p) for p in re.findall(r"\bpid (\d+)", text)}
    strangers = [p for p in pids if p not in printed]
    if strangers:
        raise _Wrong("ddp-practice.hang/pids-not-printed", pids=", ".join(map(str, strangers)))
    alive = [p for p in pids if process_exists(p)]
    if alive:
        raise _Wrong("ddp-practice.hang/still-running", pids=", ".join(map(str, alive)))
    said = next((line.strip() for line in text.splitlines() if re.search(r"[Tt]imed out", line)), None)
    return {"seconds": seconds, "said": said[:200] if said else _say("ddp-practice.hang/no-timeout-line"),
            "pids": _say("core/and").join(map(str, pids))}


# --- ddp-practice.load-anywhere: load any checkpoint -------------------------------------------

class _DdpPracticeHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.submodule = torch.nn.Linear(8, 2)

    def forward(self, x):
        return self.submodule(x)


def _ddp_practice_model(seed):
    """A small model with a buffer and a BatchNorm, whose state dict carries _metadata (versions). Its
    names trip the usual slips in removing the prefix: `k.lstrip("module.")` strips characters, and turns
    embed.weight into bed.weight; `k.replace("module.", "")` removes it anywhere, and turns
    head.submodule.weight into head.subweight. Only the front "module." goes."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = torch.nn.Sequential(collections.OrderedDict(
            embed=torch.nn.Linear(4, 8), norm=torch.nn.BatchNorm1d(8), head=_DdpPracticeHead()))
        model.norm.running_mean += torch.arange(8.0)  # a buffer that differs from a new model's
    return model


def _ddp_practice_checkpoints():
    """(name, state dict): a plain one, its names with module. in front, and a wrapped model's."""
    plain = _ddp_practice_model(1).state_dict()
    prefixed = {"module." + name: w for name, w in plain.items()}
    wrapper = torch.nn.Module()
    wrapper.module = _ddp_practice_model(1)  # what DDP does: the model as its attribute `module`
    return [(_say("ddp-practice.load-anywhere/plain"), plain), (_say("ddp-practice.load-anywhere/prefixed"), prefixed),
            (_say("ddp-practice.load-anywhere/wrapped"), wrapper.state_dict())]


def _ddp_practice_snapshot(state):
    meta = getattr(state, "_metadata", None)
    return list(state), {k: w.clone() for k, w in state.items()}, None if meta is None else dict(meta)


@_register("ddp-practice.load-anywhere", hint="ddp-practice.load-anywhere/hint")
def _ddp_practice_load_anywhere(load_anywhere):
    _expect_callable(load_anywhere, "load_anywhere")
    want = _ddp_practice_model(1).state_dict()
    for case, state in _ddp_practice_checkpoints():
        before = _ddp_practice_snapshot(state)
        model = _ddp_practice_model(2)
        try:
            load_anywhere(model, state)
        except RuntimeError as err:
            if "Missing key" in str(err) or "Unexpected key" in str(err):
                raise _Wrong("ddp-practice.load-anywhere/refused", case=case) from None
            raise
        names, values, meta = _ddp_practice_snapshot(state)
        if names != before[0]:
            raise _Wrong("ddp-practice.load-anywhere/renamed", case=case)
        if meta != before[2]:
            raise _Wrong("ddp-practice.load-anywhere/metadata", case=case)
        if any(not torch.equal(values[k], before[1][k]) for k in names):
            raise _Wrong("ddp-practice.load-anywhere/values-changed", case=case)
        loaded = model.state_dict()
        differ = [k for k in want if k not in loaded or not torch.equal(loaded[k], want[k])]
        if differ:
            raise _Wrong("ddp-practice.load-anywhere/not-loaded", case=case, names=", ".join(differ))
