"""The checks of lesson 13, training on several GPUs with DistributedDataParallel.

No check launches processes: each runs the learner's function on cases it builds itself, in this
process and on the CPU (a DDP model in a process group of one process, Gloo), in about a second.
"""

import gc
import math

import torch

from utils import DDP_EXTRAS

from .core import _expect, _expect_callable, _letter, _register, _say, _table_answers, _Wrong


def _ddp_lesson():
    """Lesson 13's make_data and make_model, from the very module its script imports (DDP_EXTRAS)."""
    namespace = {"__name__": "_ddp_extras"}
    exec(compile(DDP_EXTRAS, "ddp_extras.py", "exec"), namespace)
    return namespace["make_data"], namespace["make_model"]


# --- ddp.no-sync: gradient accumulation --------------------------------------------------------

class _DDPOneProcess:
    """A process group of one process (Gloo, in this process) for the time of a ``with`` block.

    Uses the notebook's own group if one of one process is open already; otherwise opens one with
    an in-memory store (no port, no other process, nothing to wait for) and closes it afterwards.
    """

    def __enter__(self):
        import torch.distributed as dist

        self.opened = False
        if not dist.is_available():
            raise _Wrong("ddp.no-sync/no-group", error=_say("ddp.no-sync/no-distributed"))
        if dist.is_initialized():
            if dist.get_world_size() != 1:
                raise _Wrong("ddp.no-sync/group-open", size=dist.get_world_size())
            return self
        try:
            from datetime import timedelta

            dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1,
                                    timeout=timedelta(seconds=30))
        except (RuntimeError, ValueError) as err:
            raise _Wrong("ddp.no-sync/no-group", error=f"{type(err).__name__}: {err}") from None
        self.opened = True
        return self

    def __exit__(self, *exc):
        import torch.distributed as dist

        gc.collect()  # a DDP model holds on to the group: let it go first
        if self.opened and dist.is_initialized():
            dist.destroy_process_group()
        return False


def _ddp_weights(model):
    return {name: w.detach().clone() for name, w in model.state_dict().items()}


def _ddp_plain_step(make_model, grads):
    """The weights after one SGD step (lr 0.1) of a fresh lesson model with the given gradients."""
    model = make_model()
    for p, g in zip(model.parameters(), grads, strict=True):
        p.grad = g.clone()
    torch.optim.SGD(model.parameters(), lr=0.1).step()
    return _ddp_weights(model)


def _ddp_grads(make_model, inputs, labels):
    """The gradients of the mean loss of a fresh lesson model on inputs, labels."""
    model = make_model()
    torch.nn.functional.cross_entropy(model(inputs), labels).backward()
    return [p.grad.clone() for p in model.parameters()]


def _ddp_run_accumulate_step(accumulate_step):
    """Run the learner's step on a one-process DDP model; what it did, and what it should have done."""
    from torch.nn.parallel import DistributedDataParallel

    make_data, make_model = _ddp_lesson()
    inputs, labels = make_data().tensors
    inputs, labels = inputs[:32], labels[:32]  # one process's 32 examples
    stale = [torch.full_like(p, 0.5) for p in make_model().parameters()]  # an earlier step's gradients
    seen = {"all-reduces": 0, "no_sync": 0, "steps": 0, "carried": {}}
    with _DDPOneProcess():
        model = DistributedDataParallel(make_model())
        names = {id(p): i for i, p in enumerate(model.module.parameters())}

        def counting_hook(state, bucket):
            # What this all-reduce carries: with several processes, only these gradients are averaged.
            seen["all-reduces"] += 1
            for p, g in zip(bucket.parameters(), bucket.gradients(), strict=True):
                seen["carried"][names[id(p)]] = g.detach().clone()
            # One process: the average is the bucket itself. A finished future, made here, leaves Gloo's
            # threads nothing of Python's to let go of (before PyTorch 2.8, allreduce_hook's could hang
            # destroy_process_group at the end).
            done = torch.futures.Future()
            done.set_result(bucket.buffer())
            return done

        model.register_comm_hook(None, counting_hook)
        original_no_sync = model.no_sync

        def no_sync():
            seen["no_sync"] += 1
            return original_no_sync()

        model.no_sync = no_sync
        for p, g in zip(model.parameters(), stale, strict=True):
            p.grad = g.clone()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        step = optimizer.step

        def counted_step(*args, **kwargs):
            seen["steps"] += 1
            return step(*args, **kwargs)

        optimizer.step = counted_step
        try:
            accumulate_step(model, optimizer, inputs, labels)
            got = _ddp_weights(model.module)
        finally:
            del model, optimizer
    whole = _ddp_grads(make_model, inputs, labels)
    halves = [_ddp_grads(make_model, inputs[rows], labels[rows]) for rows in (slice(0, 16), slice(16, 32))]
    mistakes = [("ddp.no-sync/not-halved", [2 * g for g in whole]),
                ("ddp.no-sync/stale", [g + s for g, s in zip(whole, stale, strict=True)])]
    for half in halves:  # one micro-batch's gradient only, halved or not
        mistakes += [("ddp.no-sync/one-half", half), ("ddp.no-sync/one-half", [g / 2 for g in half])]
    expected = _ddp_plain_step(make_model, whole)
    mistakes = [(key, _ddp_plain_step(make_model, grads)) for key, grads in mistakes]
    seen["carried-whole"] = len(seen["carried"]) == len(whole) and all(
        torch.allclose(seen["carried"][i], g, atol=1e-6) for i, g in enumerate(whole))
    return got, expected, mistakes, seen


def _ddp_differs(a, b):
    return max((a[k] - b[k]).abs().max().item() for k in a)


_DDP_COUNTS = {"with no_sync": 1, "without": 2}


@_register("ddp.no-sync", hint="ddp.no-sync/hint")
def _ddp_no_sync(accumulate_step, all_reduces):
    _expect_callable(accumulate_step, "accumulate_step")
    with torch.random.fork_rng(devices=[]):  # the lesson's make_model seeds: keep the learner's generator
        got, expected, mistakes, seen = _ddp_run_accumulate_step(accumulate_step)
    if seen["steps"] != 1:
        raise _Wrong("ddp.no-sync/steps", n=seen["steps"])
    if _ddp_differs(got, expected) > 1e-6:
        for key, weights in mistakes:
            if _ddp_differs(got, weights) <= 1e-6:
                raise _Wrong(key)
        raise _Wrong("ddp.no-sync/weights", diff=_ddp_differs(got, expected))
    if seen["all-reduces"] == 0:
        raise _Wrong("ddp.no-sync/none")
    if seen["all-reduces"] > 1:
        raise _Wrong("ddp.no-sync/forward-outside" if seen["no_sync"] else "ddp.no-sync/no-no-sync",
                     n=seen["all-reduces"])
    if not seen["carried-whole"]:  # one all-reduce, but before the last micro-batch's gradient was in .grad
        raise _Wrong("ddp.no-sync/reversed")
    _expect(all_reduces, dict, "all_reduces")
    missing = sorted(set(_DDP_COUNTS) - set(all_reduces))
    if missing:
        raise _Wrong("ddp.no-sync/counts-missing", names=", ".join(f'"{m}"' for m in missing))
    all_reduces = {name: _expect(all_reduces[name], int, f'all_reduces["{name}"]') for name in _DDP_COUNTS}
    wrong = [f'"{name}"' for name, n in _DDP_COUNTS.items() if all_reduces[name] != n]
    if wrong:
        raise _Wrong("ddp.no-sync/counts", names=", ".join(wrong))


# --- ddp.scaling-rule: the learning rate when the global batch doubles -------------------------

_DDP_RUNS = ((32, 0.1), (64, 0.1), (64, 0.2))
_DDP_REFERENCE: dict = {}


def _ddp_reference(batch, lr, epochs=3):
    """The losses of the worked solution's train(batch, lr): the lesson's model and data, SGD."""
    if (batch, lr) not in _DDP_REFERENCE:
        from torch.utils.data import DataLoader

        make_data, make_model = _ddp_lesson()
        with torch.random.fork_rng(devices=[]):
            data, model = make_data(), make_model()
            optimizer = torch.optim.SGD(model.parameters(), lr=lr)
            loader = DataLoader(data, batch_size=batch, shuffle=True, generator=torch.Generator().manual_seed(0))
            losses = []
            for _ in range(epochs):
                for x, y in loader:
                    optimizer.zero_grad()
                    torch.nn.functional.cross_entropy(model(x), y).backward()
                    optimizer.step()
                with torch.no_grad():
                    losses.append(torch.nn.functional.cross_entropy(model(data.tensors[0]), data.tensors[1]).item())
        _DDP_REFERENCE[(batch, lr)] = losses
    return _DDP_REFERENCE[(batch, lr)]


def _ddp_losses(train, batch, lr):
    losses = train(batch, lr)
    shown = f"train({batch}, {lr})"
    if isinstance(losses, torch.Tensor):
        losses = losses.tolist()
    if not isinstance(losses, (list, tuple)) or len(losses) != 3:
        raise _Wrong("ddp.scaling-rule/not-three", call=shown, got=type(losses).__name__
                     if not isinstance(losses, (list, tuple)) else _say("ddp.scaling-rule/n-values", n=len(losses)))
    try:
        losses = [float(x) for x in losses]
    except (TypeError, ValueError):
        raise _Wrong("ddp.scaling-rule/not-three", call=shown, got=_say("ddp.scaling-rule/not-numbers")) from None
    if not all(math.isfinite(x) for x in losses):
        raise _Wrong("ddp.scaling-rule/not-finite", call=shown)
    return losses


def _ddp_gap(a, b):
    return max(abs(x - y) for x, y in zip(a, b, strict=True))


@_register("ddp.scaling-rule", hint="ddp.scaling-rule/hint")
def _ddp_scaling_rule(train, closer, why):
    _expect_callable(train, "train")
    with torch.random.fork_rng(devices=[]):
        runs = {run: _ddp_losses(train, *run) for run in _DDP_RUNS}
    reference = {run: _ddp_reference(*run) for run in _DDP_RUNS}
    tolerance = 0.01  # the shuffle's order moves these losses by about 0.002
    if _ddp_gap(runs[(64, 0.1)], runs[(32, 0.1)]) < 1e-6:
        raise _Wrong("ddp.scaling-rule/batch-ignored")
    if _ddp_gap(runs[(64, 0.2)], runs[(64, 0.1)]) < 1e-6:
        raise _Wrong("ddp.scaling-rule/lr-ignored")
    for (batch, lr), losses in runs.items():
        if _ddp_gap(losses, reference[(batch, lr)]) > tolerance:
            raise _Wrong("ddp.scaling-rule/losses", call=f"train({batch}, {lr})",
                         got=", ".join(f"{x:.3f}" for x in losses),
                         want=", ".join(f"{x:.2f}" for x in reference[(batch, lr)]))
    with torch.random.fork_rng(devices=[]):
        two = train(32, 0.1, 2)
    if isinstance(two, torch.Tensor):
        two = two.tolist()
    if not isinstance(two, (list, tuple)) or len(two) != 2:
        raise _Wrong("ddp.scaling-rule/epochs-ignored", got=len(two) if isinstance(two, (list, tuple)) else "?")
    closer = _expect(closer, float, "closer")
    if closer not in (0.1, 0.2):
        raise _Wrong("ddp.scaling-rule/closer-not-a-rate", got=repr(closer))
    gaps = {lr: _ddp_gap(runs[(64, lr)], runs[(32, 0.1)]) for lr in (0.1, 0.2)}
    if closer != min(gaps, key=gaps.get):
        raise _Wrong("ddp.scaling-rule/closer", got=closer)
    letter = _letter(why, "why", "ddp.scaling-rule/choice")
    if letter != "a":
        raise _Wrong({"b": "ddp.scaling-rule/why-b", "c": "ddp.scaling-rule/why-c"}[letter])
    return {"gap_same": gaps[0.1], "gap_double": gaps[0.2]}


# --- ddp.uneven-data: 101 examples on two ranks ------------------------------------------------

def _ddp_shares(examples, drop_last, shuffle=True):
    from torch.utils.data import DistributedSampler

    shares = []
    for rank in (0, 1):
        sampler = DistributedSampler(examples, num_replicas=2, rank=rank, shuffle=shuffle, seed=0,
                                     drop_last=drop_last)
        sampler.set_epoch(0)
        shares.append([int(i) for i in sampler])
    return shares


def _ddp_learner_shares(rank_shares, examples, drop_last):
    shown = f"rank_shares(list(range({len(examples)})), drop_last={drop_last})"
    got = rank_shares(list(examples), drop_last)
    if not isinstance(got, (list, tuple)) or len(got) != 2:
        raise _Wrong("ddp.uneven-data/not-two", call=shown, got=type(got).__name__
                     if not isinstance(got, (list, tuple)) else _say("ddp.uneven-data/n-items", n=len(got)))
    try:
        return [[int(i) for i in share] for share in got]
    except (TypeError, ValueError):
        raise _Wrong("ddp.uneven-data/not-two", call=shown, got=_say("ddp.uneven-data/not-indices")) from None


@_register("ddp.uneven-data", hint="ddp.uneven-data/hint")
def _ddp_uneven_data(rank_shares, why):
    _expect_callable(rank_shares, "rank_shares")
    for n in (101, 7, 10):
        examples = list(range(n))
        for drop_last in (False, True):
            got = _ddp_learner_shares(rank_shares, examples, drop_last)
            if got == _ddp_shares(examples, drop_last):
                continue
            shown = f"rank_shares(list(range({n})), drop_last={drop_last})"
            if got == _ddp_shares(examples, not drop_last):
                raise _Wrong("ddp.uneven-data/drop-last-ignored", call=shown)
            if got == _ddp_shares(examples, drop_last, shuffle=False):
                raise _Wrong("ddp.uneven-data/no-shuffle", call=shown)
            if got == _ddp_shares(examples, drop_last)[::-1]:
                raise _Wrong("ddp.uneven-data/swapped", call=shown)
            raise _Wrong("ddp.uneven-data/other", call=shown, sizes=_say("core/and").join(str(len(s)) for s in got))
    letter = _letter(why, "why", "ddp.uneven-data/choice")
    if letter != "a":
        raise _Wrong({"b": "ddp.uneven-data/why-b", "c": "ddp.uneven-data/why-c"}[letter])
    padded, dropped = _ddp_shares(list(range(101)), False), _ddp_shares(list(range(101)), True)
    seen = padded[0] + padded[1]
    return {"padded": len(padded[0]), "twice": sorted({i for i in seen if seen.count(i) > 1})[0],
            "dropped": len(dropped[0]), "never": sorted(set(range(101)) - set(dropped[0] + dropped[1]))[0]}


_DDP_CAN_USE_CUDA = {"fork": False, "spawn": True, "forkserver": True, "torchrun": True}


@_register("ddp.cuda-before-workers", hint="ddp.cuda-before-workers/hint")
def _ddp_cuda_before_workers(can_use_cuda):
    wrong = _table_answers(can_use_cuda, _DDP_CAN_USE_CUDA, "can_use_cuda", "ddp.cuda-before-workers/missing")
    if wrong:
        raise _Wrong(f"ddp.cuda-before-workers/{wrong[0]}")
