"""The checks of lesson 17's exercises (exercises/fits.py): right answers pass, in the forms a learner
writes them; the typical wrong ones fail, each with the message that names what the learner's gradient,
or what their function keeps, shows."""

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

from exercises import check


def said(capsys) -> str:
    return capsys.readouterr().out


# Exercise 1: micro-batches of different sizes


def weighted(model, micro_batches):
    total = sum(len(x) for x, _ in micro_batches)
    for x, y in micro_batches:
        (nn.functional.cross_entropy(model(x), y) * len(x) / total).backward()


def summed(model, micro_batches):
    model.zero_grad()
    total = sum(len(y) for _, y in micro_batches)
    for x, y in micro_batches:
        (nn.functional.cross_entropy(model(x), y, reduction="sum") / total).backward()


def test_uneven_accepts_weighting_by_size_and_a_summed_loss(capsys):
    assert check("fits.uneven", weighted)
    assert check("fits.uneven", summed)
    assert "however they are split" in said(capsys)


def test_uneven_names_the_mean_of_means_the_sum_and_the_last_alone(capsys):
    def by_k(model, micro_batches):
        for x, y in micro_batches:
            (nn.functional.cross_entropy(model(x), y) / len(micro_batches)).backward()

    def no_division(model, micro_batches):
        for x, y in micro_batches:
            nn.functional.cross_entropy(model(x), y).backward()

    def emptied_each_time(model, micro_batches):
        total = sum(len(x) for x, _ in micro_batches)
        for x, y in micro_batches:
            model.zero_grad()
            (nn.functional.cross_entropy(model(x), y) * len(x) / total).backward()

    assert not check("fits.uneven", by_k)
    assert "each counted once" in said(capsys)
    assert not check("fits.uneven", no_division)
    assert "the sum of the micro-batches' gradients" in said(capsys)
    assert not check("fits.uneven", emptied_each_time)
    assert "the last micro-batch's alone" in said(capsys)


def test_uneven_catches_one_big_batch_a_step_and_no_backward(capsys):
    def one_batch(model, micro_batches):
        x = torch.cat([x for x, _ in micro_batches])
        y = torch.cat([y for _, y in micro_batches])
        nn.functional.cross_entropy(model(x), y).backward()

    def steps_too(model, micro_batches):
        weighted(model, micro_batches)
        torch.optim.SGD(model.parameters(), lr=0.1).step()

    def no_backward(model, micro_batches):
        for x, y in micro_batches:
            nn.functional.cross_entropy(model(x), y)

    def not_written(model, micro_batches):
        """The template."""
        ...

    assert not check("fits.uneven", one_batch)
    assert "one micro-batch at a time" in said(capsys)
    assert not check("fits.uneven", steps_too)
    assert "leave the step to the optimizer" in said(capsys)
    assert not check("fits.uneven", no_backward)
    assert "call backward()" in said(capsys)
    assert not check("fits.uneven", not_written)


def test_uneven_catches_every_forward_pass_before_the_backward_passes(capsys):
    def one_backward(model, micro_batches):
        total = sum(len(x) for x, _ in micro_batches)
        losses = [nn.functional.cross_entropy(model(x), y) * len(x) / total for x, y in micro_batches]
        sum(losses).backward()

    assert not check("fits.uneven", one_backward)
    assert "every micro-batch's activations are then kept at once" in said(capsys)


def test_uneven_names_a_right_direction_with_a_wrong_scale_and_reports_another_wrong_gradient(capsys):
    def summed_not_divided(model, micro_batches):
        for x, y in micro_batches:
            nn.functional.cross_entropy(model(x), y, reduction="sum").backward()

    def forgets_the_last(model, micro_batches):
        total = sum(len(x) for x, _ in micro_batches)
        for x, y in micro_batches[:-1]:
            (nn.functional.cross_entropy(model(x), y) * len(x) / total).backward()

    assert not check("fits.uneven", summed_not_divided)
    assert "points the right way but is 10 times" in said(capsys)
    assert not check("fits.uneven", forgets_the_last)
    assert "differs from one batch of all the examples by up to" in said(capsys)



# Exercise 2: checkpoint in segments


def segments(blocks, x, size):
    for start in range(0, len(blocks), size):
        x = checkpoint(nn.Sequential(*blocks[start:start + size]), x, use_reentrant=False)
    return x


def test_segments_accepts_sequential_segments_a_closure_bound_now_and_reentrant_where_x_needs_a_gradient(capsys):
    def bound_now(blocks, x, size):
        for start in range(0, len(blocks), size):
            def run(x, part=blocks[start:start + size]):
                for block in part:
                    x = block(x)
                return x
            x = checkpoint(run, x, use_reentrant=False)
        return x

    def reentrant_with_an_input_that_needs_a_gradient(blocks, x, size):
        x = x.requires_grad_()
        for start in range(0, len(blocks), size):
            x = checkpoint(nn.Sequential(*blocks[start:start + size]), x, use_reentrant=True)
        return x

    assert check("fits.segments", segments)
    assert "Kept for the backward pass: 10 KiB with size=1, 6 KiB with size=2, 4 KiB with size=3, 2 KiB with size=5" \
        in said(capsys)
    assert check("fits.segments", bound_now)
    assert check("fits.segments", reentrant_with_an_input_that_needs_a_gradient)


def test_segments_catches_no_checkpoint_a_last_segment_left_out_one_segment_and_a_wrong_order(capsys):
    def plain(blocks, x, size):
        for block in blocks:
            x = block(x)
        return x

    def sequential(blocks, x, size):  # runs its last segment without checkpointing it
        return checkpoint_sequential(blocks, -(-len(blocks) // size), x, use_reentrant=False)

    def one_segment(blocks, x, size):
        return checkpoint(nn.Sequential(*blocks), x, use_reentrant=False)

    def backwards(blocks, x, size):
        return segments(blocks[::-1], x, size)

    assert not check("fits.segments", plain)
    assert "nothing is recomputed" in said(capsys)
    assert not check("fits.segments", sequential)
    assert "outside a checkpointed segment" in said(capsys)
    assert not check("fits.segments", one_segment)
    assert "are the segments longer than size blocks?" in said(capsys)
    assert not check("fits.segments", backwards)
    assert "x = block(x) for each block, in order" in said(capsys)


def test_segments_names_the_late_binding_lambda_the_reentrant_trap_no_grad_and_hidden_hooks(capsys):
    def late_binding(blocks, x, size):
        starts = range(0, len(blocks), size)
        for start in starts:
            x = checkpoint(lambda t: nn.Sequential(*blocks[start:start + size])(t), x, use_reentrant=False)  # noqa: B023
        return x

    def left_out(blocks, x, size):
        for start in range(0, len(blocks), size):
            x = checkpoint(nn.Sequential(*blocks[start:start + size]), x)
        return x

    def reentrant(blocks, x, size):
        for start in range(0, len(blocks), size):
            x = checkpoint(nn.Sequential(*blocks[start:start + size]), x, use_reentrant=True)
        return x

    def without_gradients(blocks, x, size):
        with torch.no_grad():
            return nn.Sequential(*blocks)(x)

    def own_hooks(blocks, x, size):
        with torch.autograd.graph.save_on_cpu():
            return nn.Sequential(*blocks)(x)

    assert not check("fits.segments", late_binding)
    assert "may then run another segment's blocks" in said(capsys)
    assert not check("fits.segments", left_out)
    assert "the reentrant variant of checkpoint" in said(capsys)
    assert not check("fits.segments", reentrant)
    assert "the reentrant variant of checkpoint" in said(capsys)
    assert not check("fits.segments", without_gradients)
    assert "torch.no_grad()" in said(capsys)
    assert not check("fits.segments", own_hooks)
    assert "saved-tensor hooks of its own" in said(capsys)
