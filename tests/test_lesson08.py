"""Lesson 08's helpers: the digits Dataset and split, the small model, and the training-loop helpers.

Bad input gets a clear error; on simulated GPU machines the device checks name the right
devices without allocating anything there; on the CPU the loop really trains, workers started
by spawning find the Dataset, and a checkpoint survives `weights_only=True`.
"""

from __future__ import annotations

import time

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader

import utils
from utils import (
    DigitsDataset,
    StepTimes,
    digits_mlp,
    digits_split,
    evaluate,
    step_time_split,
    train_one_epoch,
)

CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def split():
    return digits_split()


@pytest.fixture
def one_thread():
    """Small models train fastest on one thread, and a busy machine makes two much slower."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def small_setup(split):
    torch.manual_seed(0)
    model = digits_mlp()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    loader = DataLoader(split[0], batch_size=64, shuffle=True, generator=torch.Generator().manual_seed(0))
    return model, optimizer, loader


# --- DigitsDataset -------------------------------------------------------------------------

def test_digits_dataset_serves_scaled_8x8_images_and_int64_labels():
    images = torch.full((3, 64), 16.0)
    ds = DigitsDataset(images, torch.tensor([0, 5, 9]))
    x, y = ds[1]
    assert len(ds) == 3 and x.shape == (1, 8, 8) and x.dtype == torch.float32 and torch.all(x == 1)
    assert y.dtype == torch.int64 and int(y) == 5


def test_digits_dataset_takes_8x8_images_and_numpy_arrays():
    import numpy as np

    ds = DigitsDataset(np.zeros((2, 8, 8)), np.array([1, 2]))
    assert ds[0][0].shape == (1, 8, 8)


@pytest.mark.parametrize("images, labels", [
    (torch.zeros(3, 63), torch.zeros(3, dtype=torch.long)),      # not 64 pixels
    (torch.zeros(3, 2, 8, 8), torch.zeros(3, dtype=torch.long)),  # too many dimensions
    (torch.zeros(0, 64), torch.zeros(0, dtype=torch.long)),      # empty
    (torch.zeros(3, 64), torch.zeros(2, dtype=torch.long)),      # one label short
    (torch.zeros(3, 64), torch.zeros(3)),                         # float labels
    (torch.zeros(3, 64), torch.tensor([0, 1, 10])),               # not a digit
    (torch.zeros(3, 64), torch.tensor([-1, 1, 2])),
])
def test_digits_dataset_rejects_images_and_labels_that_do_not_fit(images, labels):
    with pytest.raises(ValueError):
        DigitsDataset(images, labels)


@pytest.mark.parametrize("bad, error", [(True, TypeError), ("0.1", TypeError), (None, TypeError),
                                        (-0.001, ValueError), (float("nan"), ValueError)])
def test_digits_dataset_rejects_a_wait_that_is_not_a_non_negative_number(bad, error):
    with pytest.raises(error, match="seconds_per_item"):
        DigitsDataset(torch.zeros(1, 64), torch.zeros(1, dtype=torch.long), seconds_per_item=bad)


def test_a_slow_digits_dataset_waits_at_least_as_long_as_asked():
    ds = DigitsDataset(torch.zeros(4, 64), torch.zeros(4, dtype=torch.long), seconds_per_item=0.005)
    start = time.perf_counter()
    for i in range(4):
        ds[i]
    assert time.perf_counter() - start >= 4 * 0.005


# --- digits_split --------------------------------------------------------------------------

def test_digits_split_is_stratified_fixed_and_covers_all_1797_images(split):
    train, test = split
    assert (len(train), len(test)) == (1347, 450)
    share_train = torch.bincount(train.labels, minlength=10) / len(train)
    share_test = torch.bincount(test.labels, minlength=10) / len(test)
    assert torch.allclose(share_train, share_test, atol=0.01)
    again = digits_split()
    assert torch.equal(again[1].images, test.images) and torch.equal(again[1].labels, test.labels)
    other = digits_split(seed=1)
    assert not torch.equal(other[1].labels, test.labels)


def test_digits_split_slows_only_the_training_set():
    train, test = digits_split(seconds_per_item=0.001)
    assert train.seconds_per_item == 0.001 and test.seconds_per_item == 0.0


@pytest.mark.parametrize("fraction", [0, 1, 1.5, -0.1, True, "0.25", None])
def test_digits_split_rejects_a_fraction_outside_0_1(fraction):
    with pytest.raises(ValueError, match="test_fraction"):
        digits_split(test_fraction=fraction)


@pytest.mark.parametrize("seed, error", [(1.0, TypeError), (True, TypeError), ("0", TypeError), (-1, ValueError)])
def test_digits_split_rejects_a_seed_that_is_not_a_non_negative_int(seed, error):
    with pytest.raises(error, match="seed"):
        digits_split(seed=seed)


# --- digits_mlp ----------------------------------------------------------------------------

def test_digits_mlp_maps_a_batch_of_images_to_ten_scores():
    model = digits_mlp(hidden=16, dropout=0.0)
    assert model(torch.zeros(5, 1, 8, 8)).shape == (5, 10)
    assert utils.model_device(model) == CPU


@pytest.mark.parametrize("kwargs, error", [({"hidden": 0}, ValueError), ({"hidden": 2.0}, TypeError),
                                           ({"hidden": True}, TypeError), ({"dropout": 1.0}, ValueError),
                                           ({"dropout": -0.1}, ValueError), ({"dropout": "0.1"}, ValueError)])
def test_digits_mlp_rejects_bad_sizes_and_probabilities(kwargs, error):
    with pytest.raises(error):
        digits_mlp(**kwargs)


# --- train_one_epoch, evaluate, step_time_split: bad input -----------------------------------

def each_helper(model, loader, optimizer, device):
    """Call every training helper with the same arguments; yield the calls."""
    yield lambda: train_one_epoch(model, loader, optimizer, device)
    yield lambda: evaluate(model, loader, device)
    yield lambda: step_time_split(model, loader, optimizer, device, max_batches=1)


def test_every_helper_refuses_a_model_without_parameters(split):
    _, optimizer, loader = small_setup(split)
    for call in each_helper(nn.ReLU(), loader, optimizer, CPU):
        with pytest.raises(ValueError, match="ReLU has no parameters"):
            call()


def test_every_helper_refuses_something_that_is_not_a_model(split):
    _, optimizer, loader = small_setup(split)
    for call in each_helper(lambda x: x, loader, optimizer, CPU):
        with pytest.raises(TypeError, match=r"nn\.Module"):
            call()


@pytest.mark.parametrize("device, error", [(0, TypeError), (None, TypeError), (1.5, TypeError),
                                           ("gpu", ValueError), ("cpux", ValueError)])
def test_every_helper_refuses_a_non_device(split, device, error):
    model, optimizer, loader = small_setup(split)
    for call in each_helper(model, loader, optimizer, device):
        with pytest.raises(error, match="device"):
            call()


def test_every_helper_accepts_a_device_name(split):
    model, optimizer, _ = small_setup(split)
    loader = DataLoader(split[1], batch_size=256)
    for call in each_helper(model, loader, optimizer, "cpu"):
        call()


def test_every_helper_says_to_move_a_model_that_is_elsewhere(split):
    model, optimizer, loader = small_setup(split)
    model.to("meta")
    for call in each_helper(model, loader, optimizer, CPU):
        with pytest.raises(ValueError, match="the model is on meta, not on cpu: move it first"):
            call()


@pytest.mark.parametrize("name, device", [("one-cuda-gpu", "cuda:0"), ("two-cuda-gpus", "cuda:1"),
                                          ("apple-mps", "mps:0"), ("one-cuda-gpu", "cuda")])
def test_on_gpu_machines_a_model_left_on_the_cpu_is_named_before_anything_runs(machine, split, name, device):
    machine(name)
    model, optimizer, loader = small_setup(split)
    for call in each_helper(model, loader, optimizer, device):
        with pytest.raises(ValueError, match=f"the model is on cpu, not on {device}"):
            call()


def test_training_helpers_refuse_an_optimizer_that_is_not_one_or_holds_other_parameters(split):
    model, _, loader = small_setup(split)
    with pytest.raises(TypeError, match="optimizer"):
        train_one_epoch(model, loader, "adam", CPU)
    stranger = torch.optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1)
    for call in (lambda: train_one_epoch(model, loader, stranger, CPU),
                 lambda: step_time_split(model, loader, stranger, CPU)):
        with pytest.raises(ValueError, match="none of the model's parameters"):
            call()


@pytest.mark.parametrize("loader", [None, 3, torch.ones(2), "batches"])
def test_every_helper_refuses_a_loader_that_gives_no_batches_of_pairs(split, loader):
    model, optimizer, _ = small_setup(split)
    for call in each_helper(model, loader, optimizer, CPU):
        with pytest.raises(TypeError, match="loader"):
            call()


def test_train_and_evaluate_refuse_an_empty_loader(split):
    model, optimizer, _ = small_setup(split)
    with pytest.raises(ValueError, match="no batches"):
        train_one_epoch(model, [], optimizer, CPU)
    with pytest.raises(ValueError, match="no batches"):
        evaluate(model, [], CPU)


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-3, ValueError), (True, TypeError), (2.0, TypeError)])
def test_step_time_split_rejects_a_max_batches_below_one_or_not_an_int(split, bad, error):
    model, optimizer, loader = small_setup(split)
    with pytest.raises(error, match="max_batches"):
        step_time_split(model, loader, optimizer, CPU, max_batches=bad)


# --- real behaviour on the CPU ------------------------------------------------------------

def test_ten_epochs_on_the_cpu_reach_95_percent_on_the_held_out_set(split, one_thread):
    model, optimizer, loader = small_setup(split)
    test_loader = DataLoader(split[1], batch_size=256)
    losses = [train_one_epoch(model, loader, optimizer, CPU) for _ in range(10)]
    loss, accuracy = evaluate(model, test_loader, CPU)
    assert isinstance(losses[0], float) and losses[-1] < losses[0]
    assert accuracy >= 0.95 and 0 < loss < 0.5
    assert not model.training  # evaluate leaves the model in evaluation mode
    train_one_epoch(model, loader, optimizer, CPU)
    assert model.training      # and train_one_epoch switches it back


def test_evaluate_changes_no_weight_and_records_no_graph(split):
    model, _, _ = small_setup(split)
    before = [p.detach().clone() for p in model.parameters()]
    evaluate(model, DataLoader(split[1], batch_size=256), CPU)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    assert all(p.grad is None for p in model.parameters())


def test_step_time_split_counts_batches_and_the_slow_reading_as_waiting(one_thread):
    slow = DigitsDataset(torch.zeros(64, 64), torch.zeros(64, dtype=torch.long), seconds_per_item=0.001)
    torch.manual_seed(0)
    model = digits_mlp(hidden=8)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    times = step_time_split(model, DataLoader(slow, batch_size=16), optimizer, CPU)
    assert isinstance(times, StepTimes) and times.batches == 4
    assert times.first_batch >= 16 * 0.001 and times.waiting >= 3 * 16 * 0.001 and times.computing > 0
    assert step_time_split(model, DataLoader(slow, batch_size=16), optimizer, CPU, max_batches=2).batches == 2


@pytest.mark.slow
def test_workers_started_by_spawning_find_the_dataset_in_utils(split):
    """The lesson's reason for keeping the Dataset in utils.py, on any operating system."""
    loader = DataLoader(split[1], batch_size=8, num_workers=1, multiprocessing_context="spawn")
    x, y = next(iter(loader))
    assert x.shape == (8, 1, 8, 8) and torch.equal(y, split[1].labels[:8])


def test_a_checkpoint_with_optimizer_and_generator_state_loads_with_weights_only(split, tmp_path, one_thread):
    model, optimizer, loader = small_setup(split)
    train_one_epoch(model, loader, optimizer, CPU)
    path = tmp_path / "ckpt.pt"
    torch.save({"epoch": 1, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "loader_generator": loader.generator.get_state(), "torch_rng": torch.get_rng_state(),
                "history": {"test_accuracy": [0.9]}}, path)
    saved = torch.load(path, map_location="cpu", weights_only=True)
    resumed = digits_mlp()
    resumed.load_state_dict(saved["model"])
    resumed_optimizer = torch.optim.Adam(resumed.parameters(), lr=0.01)
    resumed_optimizer.load_state_dict(saved["optimizer"])
    state = resumed_optimizer.state[resumed[1].weight]
    assert int(state["step"]) == len(loader) and state["exp_avg"].device == CPU
    probe = torch.ones(2, 1, 8, 8)
    model.eval()
    resumed.eval()
    assert torch.equal(model(probe), resumed(probe))
