"""The checks of lesson 12's exercises (exercises/loop.py): the right answer passes, typical wrong ones
get their own message. The checks train lesson 11's digits model on the CPU themselves; the pinning
check runs on a simulated CUDA machine (the `machine` fixture) with a copy "on the GPU" that is a CPU
tensor behaving as one (`exercises.core._on_a_gpu`), a pinned tensor that says so, and a synchronize that
waits for nothing. No GPU is needed."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

from exercises import check
from exercises.core import _on_a_gpu
from utils import digits_mlp, digits_split, train_one_epoch

CPU = torch.device("cpu")
TRAIN_SET = digits_split()[0]


def said(capsys) -> str:
    return capsys.readouterr().out


# --- loop.save-optimizer ------------------------------------------------------------------

def resume_one_epoch(checkpoint, keep_optimizer, *, load_model=True):
    model = digits_mlp()
    if load_model:
        model.load_state_dict(checkpoint["model"])
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    if keep_optimizer:
        optimizer.load_state_dict(checkpoint["optimizer"])
    torch.manual_seed(1)
    loader = DataLoader(TRAIN_SET, batch_size=64, shuffle=True, generator=torch.Generator().manual_seed(1))
    return train_one_epoch(model, loader, optimizer, CPU)


def test_save_optimizer_accepts_the_two_resumed_epochs_and_leaves_the_random_state(capsys):
    state = torch.get_rng_state()
    assert check("loop.save-optimizer", resume_one_epoch, "b")
    assert "with a fresh Adam" in said(capsys)
    assert torch.equal(torch.get_rng_state(), state)


def test_save_optimizer_catches_runs_that_are_not_seeded_inside_the_function(capsys):
    """The exercise asks for the same dropout and batch order in both runs: an answer that reuses one
    loader, whose generator moves on, or leaves dropout to the global random state, is not judged on
    the optimizer alone."""
    shared = DataLoader(TRAIN_SET, batch_size=64, shuffle=True, generator=torch.Generator().manual_seed(1))

    def one_loader_for_all(checkpoint, keep_optimizer):
        model = digits_mlp()
        model.load_state_dict(checkpoint["model"])
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        if keep_optimizer:
            optimizer.load_state_dict(checkpoint["optimizer"])
        return train_one_epoch(model, shared, optimizer, CPU)

    assert not check("loop.save-optimizer", one_loader_for_all, "b")
    assert "its runs differ in more than the optimizer. Seed inside the function" in said(capsys)

    def no_dropout_seed(checkpoint, keep_optimizer):
        model = digits_mlp()
        model.load_state_dict(checkpoint["model"])
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        if keep_optimizer:
            optimizer.load_state_dict(checkpoint["optimizer"])
        loader = DataLoader(TRAIN_SET, batch_size=64, shuffle=True, generator=torch.Generator().manual_seed(1))
        return train_one_epoch(model, loader, optimizer, CPU)

    assert not check("loop.save-optimizer", no_dropout_seed, "b")
    assert "Seed inside the function" in said(capsys)


def test_save_optimizer_catches_keep_optimizer_ignored_or_the_wrong_way_round(capsys):
    assert not check("loop.save-optimizer", lambda c, keep: resume_one_epoch(c, True), "b")
    assert "gives" in (out := said(capsys)) and "both ways: does it load the optimizer's state only when" in out
    assert not check("loop.save-optimizer", lambda c, keep: resume_one_epoch(c, not keep), "b")
    assert "is keep_optimizer used the right way round?" in said(capsys)


def test_save_optimizer_catches_a_function_that_ignores_the_checkpoint_it_is_given(capsys):
    """As a notebook function that reads section 5's `saved` instead of its argument would."""
    torch.manual_seed(0)
    model = digits_mlp()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    loader = DataLoader(TRAIN_SET, batch_size=64, shuffle=True, generator=torch.Generator().manual_seed(0))
    for _epoch in range(10):
        train_one_epoch(model, loader, optimizer, CPU)
    saved = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    assert not check("loop.save-optimizer", lambda c, keep: resume_one_epoch(saved, keep), "b")
    assert "handed a checkpoint of untrained weights, resume_one_epoch still ends its epoch" in said(capsys)


def test_save_optimizer_catches_a_model_not_loaded_and_a_wrong_why(capsys):
    assert not check("loop.save-optimizer", lambda c, keep: resume_one_epoch(c, keep, load_model=False), "b")
    assert "as from untrained weights: load the checkpoint's model state" in said(capsys)
    assert not check("loop.save-optimizer", resume_one_epoch, "c")
    assert "both runs load the trained weights" in said(capsys)


# --- loop.resume-exactly ------------------------------------------------------------------

def make_checkpoint(model, optimizer, generator):
    return {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
            "loader_generator": generator.get_state(), "torch_rng": torch.get_rng_state()}


def restore(checkpoint, model, optimizer, generator, *, skip=()):
    if "model" not in skip:
        model.load_state_dict(checkpoint["model"])
    if "optimizer" not in skip:
        optimizer.load_state_dict(checkpoint["optimizer"])
    if "generator" not in skip:
        generator.set_state(checkpoint["loader_generator"])
    if "rng" not in skip:
        torch.set_rng_state(checkpoint["torch_rng"])


RIGHT_NEEDED = {"generator.get_state()": "a", "torch.get_rng_state()": "b"}


def test_resume_exactly_accepts_a_checkpoint_with_both_random_states(capsys):
    assert check("loop.resume-exactly", make_checkpoint, restore, dict(RIGHT_NEEDED))
    assert "bit for bit" in said(capsys)


@pytest.mark.parametrize(("left_out", "printed"), [
    ("rng", "PyTorch's global random state is not the one at the save, so dropout zeroes other units"),
    ("generator", "the resumed run shuffles as in epoch 1 again"),
    ("optimizer", "Adam's step count is not the saved one"),
    ("model", "the model's weights are not those saved"),
])
def test_resume_exactly_names_the_state_left_out(capsys, left_out, printed):
    def forgetful(checkpoint, model, optimizer, generator):
        restore(checkpoint, model, optimizer, generator, skip=(left_out,))

    assert not check("loop.resume-exactly", make_checkpoint, forgetful, dict(RIGHT_NEEDED))
    assert printed in said(capsys)


def test_resume_exactly_catches_a_checkpoint_that_weights_only_refuses(capsys):
    def with_the_generator(model, optimizer, generator):
        return make_checkpoint(model, optimizer, generator) | {"generator": generator}

    assert not check("loop.resume-exactly", with_the_generator, restore, dict(RIGHT_NEEDED))
    assert "torch.load(..., weights_only=True) cannot read your checkpoint back" in said(capsys)


def test_resume_exactly_explains_swapped_answers(capsys):
    swapped = {"generator.get_state()": "b", "torch.get_rng_state()": "a"}
    assert not check("loop.resume-exactly", make_checkpoint, restore, swapped)
    assert "dropout draws from PyTorch's global generator, not from the loader's" in said(capsys)
    weights = RIGHT_NEEDED | {"torch.get_rng_state()": "c"}
    assert not check("loop.resume-exactly", make_checkpoint, restore, weights)
    assert "what else draws random numbers while the model trains?" in said(capsys)


# --- loop.pin-price -----------------------------------------------------------------------

HOST = torch.ones(1024)


def test_pin_price_without_cuda_checks_the_copy_and_says_what_it_skipped(machine, capsys):
    machine("cpu-only")
    assert check("loop.pin-price", lambda: HOST.pin_memory(), lambda: HOST.to("cpu"), False, "a")
    assert "No CUDA GPU here (cpu): nothing to pin, so nothing was timed" in said(capsys)
    assert not check("loop.pin-price", lambda: HOST, lambda: HOST.to("meta"), False, "a")
    assert "copy_pageable() returns a tensor on meta, not on cpu" in said(capsys)


@pytest.fixture
def simulated_cuda(machine, monkeypatch):
    """A one-GPU machine on which a copy "on the GPU" is exercises.core._on_a_gpu and synchronize waits for nothing."""
    machine("one-cuda-gpu")
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: None)
    pinned = set()
    monkeypatch.setattr(torch.Tensor, "is_pinned", lambda self: self.data_ptr() in pinned)

    def pin():
        copy = HOST.clone()
        pinned.add(copy.data_ptr())
        return copy

    return pin


def test_pin_price_on_a_cuda_machine_times_the_pinning_and_the_copy(simulated_cuda, capsys):
    assert check("loop.pin-price", simulated_cuda, lambda: _on_a_gpu(HOST.clone()), False, "a")
    out = said(capsys)
    assert "On cuda:0: pinning 4 KiB took" in out and "one copy of it from pageable memory" in out


def test_pin_price_on_a_cuda_machine_catches_a_copy_left_on_the_cpu_and_no_pinning(simulated_cuda, capsys):
    assert not check("loop.pin-price", simulated_cuda, lambda: HOST.clone(), False, "a")
    assert "copy_pageable() returns a tensor on cpu, not on cuda:0" in said(capsys)
    gpu_copy = _on_a_gpu(HOST.clone())
    assert not check("loop.pin-price", lambda: HOST.clone(), lambda: gpu_copy, False, "a")
    assert "pin_host() should return a copy of host in pinned memory" in said(capsys)


@pytest.mark.parametrize(("pays", "why", "printed"), [
    (True, "a", "done once, for one copy, it saves nothing"),
    (False, "b", "any thread may pin memory"),
    (False, "c", "the thread decides when the pinning happens"),
    ("no", "a", "pays should be a bool, but it is a str"),
])
def test_pin_price_explains_the_wrong_answers_to_the_questions(machine, capsys, pays, why, printed):
    machine("cpu-only")
    assert not check("loop.pin-price", lambda: HOST, lambda: HOST.to("cpu"), pays, why)
    assert printed in said(capsys)


# --- misjudgements found by answering as a learner, and right answers written otherwise ------------

def test_save_optimizer_accepts_the_loss_as_a_numpy_float_or_a_tensor(capsys):
    """np.mean of a float32 array of losses gives np.float32, which is not a Python float."""
    assert check("loop.save-optimizer", lambda c, keep: np.float32(resume_one_epoch(c, keep)), " (B) ")
    assert check("loop.save-optimizer", lambda c, keep: torch.tensor(resume_one_epoch(c, keep)), "b.")


def test_save_optimizer_names_a_fresh_adam_made_with_another_learning_rate(capsys):
    """Adam(model.parameters()) without lr=0.01 takes Adam's default, 0.001: a fresh Adam ten times gentler,
    whose epoch ends lower than the resumed one's. keep_optimizer is used the right way round."""
    def default_lr(checkpoint, keep_optimizer):
        model = digits_mlp()
        model.load_state_dict(checkpoint["model"])
        optimizer = torch.optim.Adam(model.parameters())
        if keep_optimizer:
            optimizer.load_state_dict(checkpoint["optimizer"])
        torch.manual_seed(1)
        loader = DataLoader(TRAIN_SET, batch_size=64, shuffle=True, generator=torch.Generator().manual_seed(1))
        return train_one_epoch(model, loader, optimizer, CPU)

    assert not check("loop.save-optimizer", default_lr, "b")
    out = said(capsys)
    assert "but that fresh Adam has a learning rate of 0.001, not the checkpoint's 0.01" in out
    assert "right way round" not in out


def test_resume_exactly_accepts_nested_states_saved_as_lists_and_restored_in_another_order(capsys):
    def as_lists(model, optimizer, generator):
        return {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "rng": {"loader": generator.get_state().tolist(), "torch": torch.random.get_rng_state().tolist()}}

    def restore_backwards(checkpoint, model, optimizer, generator):
        torch.random.set_rng_state(torch.tensor(checkpoint["rng"]["torch"], dtype=torch.uint8))
        generator.set_state(torch.tensor(checkpoint["rng"]["loader"], dtype=torch.uint8))
        optimizer.load_state_dict(checkpoint["optimizer"])
        model.load_state_dict(checkpoint["model"])

    needed = {"torch.get_rng_state()": "B)", "generator.get_state()": " A"}
    assert check("loop.resume-exactly", as_lists, restore_backwards, needed)
    assert "bit for bit" in said(capsys)


def test_resume_exactly_says_a_seed_after_the_restored_state_undoes_it(capsys):
    def seeded_last(checkpoint, model, optimizer, generator):
        restore(checkpoint, model, optimizer, generator)
        torch.manual_seed(0)

    assert not check("loop.resume-exactly", make_checkpoint, seeded_last, dict(RIGHT_NEEDED))
    assert "save torch.get_rng_state() and set it back, with no seed after it" in said(capsys)


def test_pin_price_accepts_numpy_bools_and_other_spellings(machine, capsys):
    machine("cpu-only")
    assert check("loop.pin-price", HOST.pin_memory, lambda: HOST.to(torch.device("cpu")), np.False_, "(A)")
    assert "nothing was timed" in said(capsys)
    assert not check("loop.pin-price", HOST.pin_memory, lambda: HOST.to(torch.device("cpu")), np.True_, "a")
    assert "done once, for one copy, it saves nothing" in said(capsys)


def test_pin_price_on_a_mac_checks_the_copy_to_mps(machine, capsys):
    machine("apple-mps")
    assert check("loop.pin-price", HOST.pin_memory, lambda: _on_a_gpu(HOST.clone(), "mps:0"), False, "a")
    assert "No CUDA GPU here (mps:0)" in said(capsys)
    assert not check("loop.pin-price", HOST.pin_memory, lambda: HOST.clone(), False, "a")
    assert "copy_pageable() returns a tensor on cpu, not on mps:0" in said(capsys)


def test_pin_price_on_a_cuda_machine_catches_a_copy_that_pins_first(simulated_cuda, monkeypatch, capsys):
    """host.pin_memory().to(device) copies from pinned memory: timed, it is no pageable copy. Here pin_memory
    is the simulated machine's (a copy that says it is pinned), as a CPU without CUDA cannot pin."""
    def fake_pin(self):
        return simulated_cuda()

    monkeypatch.setattr(torch.Tensor, "pin_memory", fake_pin)
    assert not check("loop.pin-price", simulated_cuda, lambda: _on_a_gpu(HOST.pin_memory()), False, "a")
    assert "copy_pageable() pins memory before it copies (it calls pin_memory())" in said(capsys)
    pinned = simulated_cuda()  # pinned once, outside: the copy is from pinned memory all the same
    assert not check("loop.pin-price", simulated_cuda, lambda: pinned.to(_on_a_gpu(torch.zeros(1))), False, "a")
    assert "copy_pageable() copies a tensor that is in pinned memory" in said(capsys)
    assert check("loop.pin-price", simulated_cuda, lambda: HOST.to(_on_a_gpu(torch.zeros(1))), False, "a")
    assert torch.Tensor.pin_memory is fake_pin  # the check put pin_memory back as it was
