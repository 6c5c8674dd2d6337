"""The checks of lesson 13's exercises (exercises/ddp.py): the right answer passes, typical wrong
ones get their own message. No process is launched: the no_sync check runs the learner's step on a
DDP model in a process group of one process (Gloo, on the CPU, in the test's own process), and it
holds on every machine, which the `machine` fixture simulates (no GPU is needed)."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler

import exercises.ddp
from exercises import check

make_data, make_model = exercises.ddp._ddp_lesson()


def said(capsys) -> str:
    return capsys.readouterr().out


# --- ddp.no-sync ------------------------------------------------------------------------------

def loss(model, x, y, scale=0.5):
    return nn.functional.cross_entropy(model(x), y) * scale


def accumulate_step(model, optimizer, inputs, labels):
    optimizer.zero_grad()
    xs, ys = inputs.chunk(2), labels.chunk(2)
    with model.no_sync():
        loss(model, xs[0], ys[0]).backward()
    loss(model, xs[1], ys[1]).backward()
    optimizer.step()


def without_no_sync(model, optimizer, inputs, labels):
    optimizer.zero_grad()
    xs, ys = inputs.chunk(2), labels.chunk(2)
    loss(model, xs[0], ys[0]).backward()
    loss(model, xs[1], ys[1]).backward()
    optimizer.step()


def forward_outside(model, optimizer, inputs, labels):
    optimizer.zero_grad()
    xs, ys = inputs.chunk(2), labels.chunk(2)
    first = loss(model, xs[0], ys[0])  # the forward pass before the block: DDP has already decided
    with model.no_sync():
        first.backward()
    loss(model, xs[1], ys[1]).backward()
    optimizer.step()


def not_halved(model, optimizer, inputs, labels):
    optimizer.zero_grad()
    xs, ys = inputs.chunk(2), labels.chunk(2)
    with model.no_sync():
        loss(model, xs[0], ys[0], scale=1).backward()
    loss(model, xs[1], ys[1], scale=1).backward()
    optimizer.step()


def no_zero_grad(model, optimizer, inputs, labels):
    xs, ys = inputs.chunk(2), labels.chunk(2)
    with model.no_sync():
        loss(model, xs[0], ys[0]).backward()
    loss(model, xs[1], ys[1]).backward()
    optimizer.step()


def both_inside(model, optimizer, inputs, labels):
    optimizer.zero_grad()
    xs, ys = inputs.chunk(2), labels.chunk(2)
    with model.no_sync():
        loss(model, xs[0], ys[0]).backward()
        loss(model, xs[1], ys[1]).backward()
    optimizer.step()


def first_under_no_grad(model, optimizer, inputs, labels):
    optimizer.zero_grad()
    xs, ys = inputs.chunk(2), labels.chunk(2)
    with torch.no_grad():  # no_grad for no_sync: the first micro-batch's gradient is lost
        loss(model, xs[0], ys[0])
    loss(model, xs[1], ys[1]).backward()
    optimizer.step()


def steps_twice(model, optimizer, inputs, labels):
    optimizer.zero_grad()
    xs, ys = inputs.chunk(2), labels.chunk(2)
    with model.no_sync():
        loss(model, xs[0], ys[0]).backward()
    optimizer.step()
    loss(model, xs[1], ys[1]).backward()
    optimizer.step()


def reversed_order(model, optimizer, inputs, labels):
    optimizer.zero_grad()
    xs, ys = inputs.chunk(2), labels.chunk(2)
    loss(model, xs[0], ys[0]).backward()  # the all-reduce carries only this half
    with model.no_sync():
        loss(model, xs[1], ys[1]).backward()
    optimizer.step()


def any_number_of_micro_batches(model, optimizer, inputs, labels, k=2):
    """Another right form: a loop over k micro-batches, all but the last inside no_sync()."""
    import contextlib

    optimizer.zero_grad(set_to_none=False)
    for i, (x, y) in enumerate(zip(inputs.split(len(inputs) // k), labels.split(len(labels) // k), strict=True)):
        with model.no_sync() if i < k - 1 else contextlib.nullcontext():
            (nn.functional.cross_entropy(model(x), y) / k).backward()
    optimizer.step()


COUNTS = {"with no_sync": 1, "without": 2}


@pytest.mark.parametrize("name", ["cpu-only", "one-cuda-gpu", "two-cuda-gpus", "apple-mps"])
def test_no_sync_accepts_the_accumulated_step_on_every_machine(machine, capsys, name):
    machine(name)  # the check's one process trains on the CPU with Gloo, whatever the machine has
    assert check("ddp.no-sync", accumulate_step, dict(COUNTS))
    assert "One all-reduce in your step instead of two" in said(capsys)
    assert not torch.distributed.is_initialized()  # the check closed the group it opened


def test_no_sync_leaves_the_learners_random_generator_as_it_was():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    check("ddp.no-sync", accumulate_step, dict(COUNTS))
    assert torch.equal(torch.rand(3), expected)


def test_no_sync_catches_a_step_that_all_reduces_every_micro_batch(capsys):
    assert not check("ddp.no-sync", without_no_sync, dict(COUNTS))
    assert "the weights are right, but your step made 2 all-reduces" in said(capsys)
    assert not check("ddp.no-sync", forward_outside, dict(COUNTS))
    assert "run the first micro-batch's forward AND backward inside the block" in said(capsys)


def test_no_sync_accepts_a_loop_over_micro_batches_with_a_null_context(capsys):
    assert check("ddp.no-sync", any_number_of_micro_batches, dict(COUNTS))


def test_no_sync_catches_the_reversed_order_whose_all_reduce_carries_half_the_gradient(capsys):
    # One process cannot tell it apart by the weights: the all-reduce of one process changes nothing.
    assert not check("ddp.no-sync", reversed_order, dict(COUNTS))
    assert "it carried only the first micro-batch's gradient" in said(capsys)


def test_no_sync_catches_a_step_that_never_all_reduces(capsys):
    assert not check("ddp.no-sync", both_inside, dict(COUNTS))
    assert "your step made no all-reduce" in said(capsys)


def test_no_sync_catches_wrong_weights_by_their_cause(capsys):
    assert not check("ddp.no-sync", not_halved, dict(COUNTS))
    assert "moved the weights twice as far" in said(capsys)
    assert not check("ddp.no-sync", no_zero_grad, dict(COUNTS))
    assert "the gradients of an earlier step were still in .grad" in said(capsys)
    assert not check("ddp.no-sync", first_under_no_grad, dict(COUNTS))
    assert "only one micro-batch's gradient reached the step" in said(capsys)
    assert not check("ddp.no-sync", steps_twice, dict(COUNTS))
    assert "called optimizer.step() 2 times" in said(capsys)


def test_no_sync_wants_the_counts_of_all_reduces(capsys):
    assert not check("ddp.no-sync", accumulate_step, {"with no_sync": 2, "without": 2})
    assert 'all_reduces is not, for: "with no_sync"' in said(capsys)
    assert not check("ddp.no-sync", accumulate_step, {"with no_sync": 1})
    assert 'all_reduces lacks an answer for: "without"' in said(capsys)


def test_no_sync_template_and_wrong_types(capsys):
    def template(model, optimizer, inputs, labels):
        """A docstring."""
        ...

    assert not check("ddp.no-sync", template, {"with no_sync": ..., "without": ...})
    assert said(capsys).startswith("Not answered yet")
    assert not check("ddp.no-sync", "accumulate_step", dict(COUNTS))
    assert "accumulate_step should be a function you wrote" in said(capsys)
    assert not check("ddp.no-sync", accumulate_step, [1, 2])
    assert "all_reduces should be a dict, but it is a list" in said(capsys)


# --- ddp.scaling-rule -------------------------------------------------------------------------

def train(batch, lr, epochs=3, last_batch=False, batch_size=None):
    data, model = make_data(), make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loader = DataLoader(data, batch_size=batch_size or batch, shuffle=True)
    losses = []
    for _ in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            step_loss = nn.functional.cross_entropy(model(x), y)
            step_loss.backward()
            optimizer.step()
        with torch.no_grad():
            whole = nn.functional.cross_entropy(model(data.tensors[0]), data.tensors[1])
        losses.append((step_loss if last_batch else whole).item())
    return losses


def test_scaling_rule_accepts_a_train_with_any_shuffle_and_the_doubled_rate(capsys):
    assert check("ddp.scaling-rule", train, 0.2, "a")  # an unseeded shuffle: the check allows for it
    assert "learning rate 0.2 stays within" in said(capsys)


def test_scaling_rule_catches_the_wrong_rate_and_the_wrong_reasons(capsys):
    assert not check("ddp.scaling-rule", train, 0.1, "a")
    assert "your own losses say otherwise" in said(capsys)
    assert not check("ddp.scaling-rule", train, 0.2, "b")
    assert "(b) is not it: the loss is a mean" in said(capsys)
    assert not check("ddp.scaling-rule", train, 0.2, "c")
    assert "(c) is not it" in said(capsys)
    assert not check("ddp.scaling-rule", train, 0.2, "linear")
    assert "why should be \"a\", \"b\" or \"c\", but it is 'linear'" in said(capsys)
    assert not check("ddp.scaling-rule", train, 64, "a")
    assert "closer should be a float, but it is an int" in said(capsys)


def test_scaling_rule_catches_a_train_that_measures_the_wrong_thing(capsys):
    assert not check("ddp.scaling-rule", lambda b, lr: train(b, lr, last_batch=True), 0.2, "a")
    assert "measure the loss on all 256 examples after each epoch" in said(capsys)
    assert not check("ddp.scaling-rule", lambda b, lr: train(b, lr, batch_size=32), 0.2, "a")
    assert "train(64, 0.1) gives the very losses of train(32, 0.1)" in said(capsys)
    assert not check("ddp.scaling-rule", lambda b, lr: train(b, 0.1), 0.2, "a")
    assert "train(64, 0.2) gives the very losses of train(64, 0.1)" in said(capsys)
    assert not check("ddp.scaling-rule", lambda b, lr: train(b, lr)[-1], 0.2, "a")
    assert "train(32, 0.1) returns float: it should return a list of 3 losses" in said(capsys)


# --- ddp.uneven-data --------------------------------------------------------------------------

def rank_shares(examples, drop_last, shuffle=True):
    shares = []
    for rank in (0, 1):
        sampler = DistributedSampler(examples, num_replicas=2, rank=rank, shuffle=shuffle, seed=0, drop_last=drop_last)
        sampler.set_epoch(0)
        shares.append(list(sampler))
    return shares


def test_uneven_data_accepts_the_samplers_shares_and_says_what_they_hold(capsys):
    assert check("ddp.uneven-data", rank_shares, "a")
    assert "Without drop_last each rank reads 51 indices" in said(capsys)


def test_uneven_data_catches_a_missing_drop_last_a_missing_shuffle_and_swapped_ranks(capsys):
    assert not check("ddp.uneven-data", lambda e, d: rank_shares(e, False), "a")
    assert "drop_last=True) returns what the sampler gives with the other drop_last" in said(capsys)
    assert not check("ddp.uneven-data", lambda e, d: rank_shares(e, d, shuffle=False), "a")
    assert "returns the indices in order, without the shuffle" in said(capsys)
    assert not check("ddp.uneven-data", lambda e, d: rank_shares(e, d)[::-1], "a")
    assert "returns rank 1's indices first" in said(capsys)
    assert not check("ddp.uneven-data", lambda e, d: [e[0::2], e[1::2]], "a")
    assert "returns shares of 51 and 50 indices that are not what a DistributedSampler" in said(capsys)


def test_uneven_data_catches_wrong_types_and_reasons(capsys):
    assert not check("ddp.uneven-data", lambda e, d: len(rank_shares(e, d)[0]), "a")
    assert "returns int: it should return two lists" in said(capsys)
    assert not check("ddp.uneven-data", rank_shares, "b")
    assert "(b) is not it: the sampler never sees" in said(capsys)
    assert not check("ddp.uneven-data", rank_shares, "c")
    assert "(c) is not it: a smaller last batch happens in one process too" in said(capsys)
    assert not check("ddp.uneven-data", rank_shares, ...)
    assert said(capsys).startswith("Not answered yet")


def test_scaling_rule_catches_a_train_that_ignores_its_epochs(capsys):
    assert not check("ddp.scaling-rule", lambda batch, lr, epochs=3: train(batch, lr, 3), 0.2, "a")
    assert "train(32, 0.1, 2) returns 3 losses, not 2" in said(capsys)


def test_cuda_before_workers_accepts_only_fork_failing(capsys):
    assert check("ddp.cuda-before-workers", {"fork": False, "spawn": True, "forkserver": True, "torchrun": True})
    assert "Cannot re-initialize CUDA in forked subprocess" in said(capsys)


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver", "torchrun"])
def test_cuda_before_workers_explains_each_wrong_answer(capsys, method):
    answers = {"fork": False, "spawn": True, "forkserver": True, "torchrun": True}
    answers[method] = not answers[method]
    assert not check("ddp.cuda-before-workers", answers)
    assert f'Not for "{method}"' in said(capsys)


def test_cuda_before_workers_names_a_missing_answer_and_refuses_a_string(capsys):
    assert not check("ddp.cuda-before-workers", {"fork": False, "spawn": True})
    assert "lacks an answer for: forkserver, torchrun" in said(capsys)
    assert not check("ddp.cuda-before-workers", {"fork": "no", "spawn": True, "forkserver": True, "torchrun": True})
    assert 'can_use_cuda["fork"]' in said(capsys)
