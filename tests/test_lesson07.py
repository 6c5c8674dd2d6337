"""Lesson 07's helpers (autocast_dtype, training_step, kept_for_backward), simulated and on the CPU."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import utils

MIXED = [torch.float16, torch.bfloat16]


@pytest.mark.parametrize(
    ("name", "device", "expected"),
    [
        ("cpu-only", "cpu", torch.bfloat16),
        ("one-cuda-gpu", "cuda", torch.float16),
        ("one-cuda-gpu", "cuda:0", torch.float16),
        ("two-cuda-gpus", torch.device("cuda", 1), torch.float16),
        ("apple-mps", "mps", torch.float16),
        ("one-cuda-gpu", "cpu", torch.bfloat16),
    ],
)
def test_autocast_dtype_picks_float16_on_gpus_and_bfloat16_on_the_cpu(machine, monkeypatch, name, device, expected):
    machine(name)
    monkeypatch.setattr(torch, "__version__", "2.13.0")
    assert utils.autocast_dtype(device) == expected


def test_autocast_dtype_offers_nothing_on_mps_before_torch_2_8(machine, monkeypatch):
    machine("apple-mps")
    for version in ("2.4.1", "2.5.0", "2.7.1+cpu"):
        monkeypatch.setattr(torch, "__version__", version)
        assert utils.autocast_dtype("mps") is None
    monkeypatch.setattr(torch, "__version__", "2.10.0")
    assert utils.autocast_dtype("mps") == torch.float16


def test_autocast_dtype_offers_nothing_on_mps_without_mps_autocast(machine, monkeypatch):
    machine("apple-mps")
    monkeypatch.setattr(torch.amp.autocast_mode, "is_autocast_available", lambda device_type: False)
    assert utils.autocast_dtype("mps") is None


def test_autocast_dtype_is_none_for_device_types_without_mixed_precision():
    assert utils.autocast_dtype("meta") is None


@pytest.mark.parametrize(("name", "device"), [("cpu-only", "cuda"), ("one-cuda-gpu", "cuda:1"),
                                              ("two-cuda-gpus", "cuda:2"), ("cpu-only", "mps"),
                                              ("one-cuda-gpu", "mps")])
def test_autocast_dtype_rejects_devices_the_machine_lacks(machine, name, device):
    machine(name)
    with pytest.raises(ValueError, match="does not exist"):
        utils.autocast_dtype(device)


@pytest.mark.parametrize("bad", [0, None, 1.5, ["cuda"], torch.float16])
def test_autocast_dtype_rejects_what_is_not_a_device(bad):
    with pytest.raises(TypeError, match=r"torch\.device or a name"):
        utils.autocast_dtype(bad)


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", ""])
def test_autocast_dtype_rejects_strings_that_name_no_device(bad):
    with pytest.raises(ValueError, match="not a device name"):
        utils.autocast_dtype(bad)


def small_problem(seed: int = 0) -> tuple[nn.Module, torch.Tensor, torch.Tensor, torch.optim.Optimizer]:
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))
    g = torch.Generator().manual_seed(seed)
    inputs = torch.randn(32, 16, generator=g)
    targets = torch.randint(0, 4, (32,), generator=g)
    return model, inputs, targets, torch.optim.SGD(model.parameters(), lr=0.1)


def test_training_step_in_float32_returns_a_detached_float32_loss_and_changes_the_weights():
    model, inputs, targets, optimizer = small_problem()
    before = [p.detach().clone() for p in model.parameters()]
    loss = utils.training_step(model, inputs, targets, optimizer)
    assert loss.dtype == torch.float32 and loss.dim() == 0 and not loss.requires_grad
    assert torch.allclose(loss, nn.functional.cross_entropy(small_problem()[0](inputs), targets))
    assert any(not torch.equal(b, p) for b, p in zip(before, model.parameters(), strict=True))
    assert all(p.dtype == torch.float32 for p in model.parameters())


def test_training_step_with_bfloat16_autocast_on_the_cpu_stays_close_to_float32():
    full = [utils.training_step(*small_problem()) for _ in range(1)]
    model, inputs, targets, optimizer = small_problem()
    mixed = utils.training_step(model, inputs, targets, optimizer, torch.bfloat16)
    assert mixed.dtype == torch.float32 and abs(mixed.item() - full[0].item()) <= 0.01 * full[0].item()
    assert all(p.dtype == torch.float32 for p in model.parameters())


def test_training_step_with_float16_and_a_grad_scaler_on_the_cpu_learns():
    model, inputs, targets, optimizer = small_problem()
    scaler = torch.amp.GradScaler("cpu")
    losses = [utils.training_step(model, inputs, targets, optimizer, torch.float16, scaler).item()
              for _ in range(20)]
    assert losses[-1] < losses[0]
    assert scaler.get_scale() > 0


def test_training_step_takes_a_loss_function():
    model, inputs, _, optimizer = small_problem()
    loss = utils.training_step(model, inputs, torch.zeros(32, 4), optimizer, loss_fn=nn.functional.mse_loss)
    assert loss.dim() == 0


def test_training_step_rejects_a_model_without_parameters():
    with pytest.raises(ValueError, match="no parameters"):
        utils.training_step(nn.ReLU(), torch.ones(2, 2), torch.ones(2, 2), torch.optim.SGD([torch.ones(1)]))


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"model": "not a model"}, TypeError, "nn.Module"),
        ({"optimizer": "sgd"}, TypeError, "optimizer"),
        ({"dtype": "float16"}, TypeError, "dtype"),
        ({"dtype": torch.float32}, ValueError, "dtype"),
        ({"dtype": torch.int8}, ValueError, "dtype"),
        ({"scaler": 2.0**16}, TypeError, "GradScaler"),
    ],
)
def test_training_step_rejects_bad_arguments(change, error, message):
    model, inputs, targets, optimizer = small_problem()
    arguments = {"model": model, "inputs": inputs, "targets": targets, "optimizer": optimizer} | change
    with pytest.raises(error, match=message):
        utils.training_step(**arguments)


def test_training_step_says_when_this_torch_has_no_autocast_for_the_device(monkeypatch):
    monkeypatch.setattr(torch.amp.autocast_mode, "is_autocast_available", lambda device_type: False)
    with pytest.raises(ValueError, match="no autocast for cpu"):
        utils.training_step(*small_problem(), dtype=torch.bfloat16)


def test_kept_for_backward_counts_fewer_bytes_under_bfloat16_autocast_on_the_cpu():
    model, inputs, targets, _ = small_problem()
    full = utils.kept_for_backward(model, inputs, targets)
    mixed = utils.kept_for_backward(model, inputs, targets, torch.bfloat16)
    assert isinstance(full, int) and 0 < mixed < full


def test_kept_for_backward_counts_at_least_the_input_a_linear_layer_saves():
    model, inputs, targets, _ = small_problem()
    assert utils.kept_for_backward(model, inputs, targets) >= inputs.nbytes


def test_kept_for_backward_counts_a_block_of_memory_once_however_often_it_is_saved():
    class Square(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.ones(4))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.weight * self.weight        # the product saves self.weight twice, as both factors

    model = Square()
    kept = utils.kept_for_backward(model, torch.ones(4), torch.zeros(4), loss_fn=lambda out, _: out.sum())
    assert kept == model.weight.nbytes              # 16 bytes, not 32; the sum saves nothing


def test_kept_for_backward_changes_no_weights_and_leaves_no_gradients():
    model, inputs, targets, _ = small_problem()
    before = [p.detach().clone() for p in model.parameters()]
    utils.kept_for_backward(model, inputs, targets, torch.bfloat16)
    assert all(torch.equal(b, p) for b, p in zip(before, model.parameters(), strict=True))
    assert all(p.grad is None for p in model.parameters())


def test_kept_for_backward_is_zero_without_autograd():
    model, inputs, targets, _ = small_problem()
    with torch.no_grad():
        assert utils.kept_for_backward(model, inputs, targets) == 0


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"model": "not a model"}, TypeError, "nn.Module"),
        ({"dtype": "float16"}, TypeError, "dtype"),
        ({"dtype": torch.float32}, ValueError, "dtype"),
    ],
)
def test_kept_for_backward_rejects_bad_arguments(change, error, message):
    model, inputs, targets, _ = small_problem()
    arguments = {"model": model, "inputs": inputs, "targets": targets} | change
    with pytest.raises(error, match=message):
        utils.kept_for_backward(**arguments)


def test_kept_for_backward_says_when_this_torch_has_no_autocast_for_the_device(monkeypatch):
    monkeypatch.setattr(torch.amp.autocast_mode, "is_autocast_available", lambda device_type: False)
    model, inputs, targets, _ = small_problem()
    with pytest.raises(ValueError, match="no autocast for cpu"):
        utils.kept_for_backward(model, inputs, targets, torch.bfloat16)
    assert utils.kept_for_backward(model, inputs, targets) > 0     # float32 needs no autocast
