"""The checks of lesson 09's exercises (exercises/precision.py): the right answer passes, typical wrong
ones get their own message. The steps are a tiny model's, trained for real on the CPU; the machine
the check runs on is simulated (the `machine` fixture: a Mac, a CUDA GPU) where that matters, and a
tensor "on a GPU" is a CPU tensor that behaves as one (`exercises.core._on_a_gpu`). No GPU is needed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from torch import nn

import exercises.core
from exercises import check
from utils import training_step

WIDTH = 16
RIGHT_WHICH = {"Ampere GPU, bfloat16": "a", "T4, bfloat16": "b", "CPU, float16": "b"}


def said(capsys) -> str:
    return capsys.readouterr().out


def make_model(width: int = WIDTH) -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 10))


def make_data(width: int = WIDTH, batch: int = 32) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    inputs = torch.randn(batch, width, generator=g)
    return inputs, (inputs @ torch.randn(width, 10, generator=g)).argmax(dim=1)


def make_step(dtype, scaler_for=(torch.float16,), lr=1e-2):
    """The right answer, with knobs for the wrong ones: which dtypes get a scaler, the learning rate."""
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu") if dtype in scaler_for else None
    inputs, targets = make_data()
    return lambda: training_step(model, inputs, targets, optimizer, dtype, scaler)


# --- precision.bf16-vs-fp16 ---------------------------------------------------------------

def test_bf16_vs_fp16_accepts_a_scaler_for_float16_only_and_prints_the_three_timings(machine, capsys):
    machine("cpu-only")
    assert check("precision.bf16-vs-fp16", make_step, dict(RIGHT_WHICH))
    out = said(capsys)
    assert "Your steps on cpu:" in out
    assert all(label in out for label in ("float32", "float16 autocast", "bfloat16 autocast"))


def step_of_its_own(dtype):
    """Another right answer: its own loop with torch.autocast, and one GradScaler for every dtype,
    enabled only for float16 (a disabled scaler hands the loss back as it is)."""
    model, (inputs, targets) = make_model(), make_data()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    scaler = torch.amp.GradScaler("cpu", enabled=dtype == torch.float16)

    def step():
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=dtype or torch.float32, enabled=dtype is not None):
            loss = nn.functional.cross_entropy(model(inputs), targets)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        return loss.detach()

    return step


def test_bf16_vs_fp16_accepts_a_scaler_made_for_every_dtype_but_enabled_for_float16_only(machine, capsys):
    machine("cpu-only")
    assert check("precision.bf16-vs-fp16", step_of_its_own, dict(RIGHT_WHICH))
    assert "Your steps on cpu:" in said(capsys)


def test_bf16_vs_fp16_accepts_a_step_that_returns_the_loss_as_a_number_and_letters_in_upper_case(machine, capsys):
    def as_a_number(dtype):
        step = make_step(dtype)
        return lambda: step().item()

    machine("cpu-only")
    assert check("precision.bf16-vs-fp16", as_a_number, {k: f"{v.upper()})" for k, v in RIGHT_WHICH.items()})
    assert "Your steps on cpu:" in said(capsys)


def test_bf16_vs_fp16_counts_a_cuda_scaler_that_a_machine_without_cuda_disables(machine, capsys):
    def cuda_scaler(dtype):
        model, (inputs, targets) = make_model(), make_data()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "CUDA is not available. Disabling."
            scaler = torch.amp.GradScaler("cuda") if dtype == torch.float16 else None
        return lambda: training_step(model, inputs, targets, optimizer, dtype, scaler)

    machine("cpu-only")
    assert check("precision.bf16-vs-fp16", cuda_scaler, dict(RIGHT_WHICH))  # on a GPU it would scale
    assert "Your steps on cpu:" in said(capsys)


def test_bf16_vs_fp16_rejects_float16_with_a_disabled_scaler_only(capsys):
    def disabled_everywhere(dtype):
        model, (inputs, targets) = make_model(), make_data()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        scaler = torch.amp.GradScaler("cpu", enabled=False)
        return lambda: training_step(model, inputs, targets, optimizer, dtype, scaler)

    assert not check("precision.bf16-vs-fp16", disabled_everywhere, dict(RIGHT_WHICH))
    assert "the float16 step scales no loss" in said(capsys)


def test_bf16_vs_fp16_rejects_float16_without_a_scaler_and_bfloat16_with_one(capsys):
    assert not check("precision.bf16-vs-fp16", lambda d: make_step(d, scaler_for=()), dict(RIGHT_WHICH))
    assert "the float16 step scales no loss: without a GradScaler" in said(capsys)
    both = (torch.float16, torch.bfloat16)
    assert not check("precision.bf16-vs-fp16", lambda d: make_step(d, scaler_for=both), dict(RIGHT_WHICH))
    assert "the bfloat16 autocast step uses a GradScaler, but only float16" in said(capsys)


def test_bf16_vs_fp16_rejects_a_step_that_does_not_train_or_returns_no_loss(capsys):
    assert not check("precision.bf16-vs-fp16", lambda d: make_step(d, lr=0.0), dict(RIGHT_WHICH))
    assert "the float32 step does not train" in said(capsys)

    def no_loss(dtype):
        step = make_step(dtype)
        return lambda: step() and None

    assert not check("precision.bf16-vs-fp16", no_loss, dict(RIGHT_WHICH))
    assert "should return the step's loss, a tensor with one value" in said(capsys)
    assert not check("precision.bf16-vs-fp16", lambda d: 42, dict(RIGHT_WHICH))
    assert "make_step(None) should be a function you wrote" in said(capsys)


@pytest.mark.parametrize(("name", "letter", "printed"), [
    ("Ampere GPU, bfloat16", "b", "bfloat16 tensor cores arrived with Ampere"),
    ("T4, bfloat16", "a", "a T4 or a V100 has tensor cores for float16 but none for bfloat16"),
    ("CPU, float16", "a", "few CPUs compute float16"),
    ("CPU, float16", "c", "half the bytes halve the memory traffic"),
])
def test_bf16_vs_fp16_explains_each_wrong_choice(capsys, name, letter, printed):
    assert not check("precision.bf16-vs-fp16", make_step, RIGHT_WHICH | {name: letter})
    assert printed in said(capsys)


def test_bf16_vs_fp16_names_a_missing_or_malformed_choice(capsys):
    assert not check("precision.bf16-vs-fp16", make_step, {"Ampere GPU, bfloat16": "a"})
    assert 'which lacks an answer for "T4, bfloat16"' in said(capsys)
    assert not check("precision.bf16-vs-fp16", make_step, RIGHT_WHICH | {"T4, bfloat16": "yes"})
    assert 'which["T4, bfloat16"] should be "a", "b" or "c"' in said(capsys)


def test_bf16_vs_fp16_skips_what_a_mac_cannot_run_but_not_on_a_cuda_machine(machine, capsys):
    """A Mac without bfloat16 (older macOS) fails at the bfloat16 step: simulated as an Apple MPS
    machine whose bfloat16 step raises. There the row is skipped; on a CUDA machine it is an error."""

    def no_bfloat16(dtype):
        if dtype == torch.bfloat16:
            raise TypeError("BFloat16 is not supported on MPS")
        return make_step(dtype)

    machine("apple-mps")
    assert check("precision.bf16-vs-fp16", no_bfloat16, dict(RIGHT_WHICH))
    assert "bfloat16 autocast: not on this Mac (BFloat16 is not supported on MPS)" in said(capsys)
    machine("one-cuda-gpu")
    assert not check("precision.bf16-vs-fp16", no_bfloat16, dict(RIGHT_WHICH))
    assert "your code raised TypeError: BFloat16 is not supported on MPS" in said(capsys)


def test_bf16_vs_fp16_leaves_the_grad_scaler_as_it_was():
    real, real_init = torch.amp.GradScaler.scale, torch.amp.GradScaler.__init__
    check("precision.bf16-vs-fp16", lambda d: make_step(d, scaler_for=()), dict(RIGHT_WHICH))
    assert torch.amp.GradScaler.scale is real and torch.amp.GradScaler.__init__ is real_init


# --- precision.underflow ------------------------------------------------------------------

RIGHT_ZEROS = {"float16": 248, "float16, scaled by 2**16": 0, "bfloat16": 0}


def test_underflow_accepts_the_counts_and_the_scale_also_as_tensors(capsys):
    assert check("precision.underflow", dict(RIGHT_ZEROS), 2**15)
    assert "float16 turns 248 of the 1001 gradients into 0" in said(capsys)
    grads = torch.logspace(-10, 0, 1001)
    as_tensors = {"float16": (grads.half() == 0).sum(), "float16, scaled by 2**16": ((grads * 2**16).half() == 0).sum(),
                  "bfloat16": (grads.bfloat16() == 0).sum()}
    assert check("precision.underflow", as_tensors, 2.0**15)


def test_underflow_accepts_numpy_counts_float_sums_and_a_scale_of_numpy_or_torch(capsys):
    grads = torch.logspace(-10, 0, 1001)
    numpy_counts = {"float16": (grads.half().numpy() == 0).sum(),  # a NumPy int64
                    "float16, scaled by 2**16": np.count_nonzero((grads * 2**16).half().numpy() == 0),
                    "bfloat16": (grads.bfloat16() == 0).float().sum()}  # a float tensor, 0.
    assert check("precision.underflow", numpy_counts, np.int64(2) ** 15)
    assert check("precision.underflow", RIGHT_ZEROS | {"float16": 248.0}, torch.tensor(2**15))
    assert "float16 turns 248 of the 1001 gradients into 0" in said(capsys)


def test_underflow_tells_subnormals_and_rounding_from_zeros(capsys):
    assert not check("precision.underflow", RIGHT_ZEROS | {"float16": 579}, 2**15)
    assert "579 is how many gradients fall below float16's smallest normal number" in said(capsys)
    assert not check("precision.underflow", RIGHT_ZEROS | {"float16": 278}, 2**15)
    assert "those above half of it round up to it" in said(capsys)
    assert not check("precision.underflow", RIGHT_ZEROS | {"bfloat16": 3}, 2**15)
    assert 'zeros["bfloat16"] is 3, but that is not how many' in said(capsys)
    assert not check("precision.underflow", RIGHT_ZEROS | {"float16": 0.25}, 2**15)
    assert 'zeros["float16"] should be an int, but it is a float' in said(capsys)


@pytest.mark.parametrize(("scale", "printed"), [
    (2**16, "scaled by 2**16, the largest gradient, 1, becomes 65536, which float16 turns into inf"),
    (15, "give the scale itself, 2**15, not its exponent"),
    (2**10, "scaled by 2**10 nothing overflows, but a larger power of two is safe too"),
    (30000, "largest_scale is 30000, not a power of two"),
])
def test_underflow_explains_a_wrong_scale(capsys, scale, printed):
    assert not check("precision.underflow", dict(RIGHT_ZEROS), scale)
    assert printed in said(capsys)


def test_underflow_template_is_not_answered_yet(capsys):
    template = {"float16": ..., "float16, scaled by 2**16": ..., "bfloat16": ...}
    assert not check("precision.underflow", template, ...)
    assert said(capsys).startswith("Not answered yet")


# --- precision.small-model ----------------------------------------------------------------

def small_setup():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    return model, *make_data(64, 64)


def test_small_model_checks_the_sizes_and_prints_both_timings(machine, capsys):
    machine("cpu-only")
    assert check("precision.small-model", small_setup, "a")
    out = said(capsys)
    assert "The model is 64 wide and the batch 64, all on cpu, where float32 took" in out
    assert "bfloat16 autocast" in out  # the CPU's autocast dtype


def test_small_model_accepts_a_list_a_model_of_its_own_and_the_letter_as_written(machine, capsys):
    def as_a_list():
        model = nn.Sequential()  # a model built layer by layer, its data drawn with a generator
        for _ in range(2):
            model.append(nn.Linear(64, 64))
            model.append(nn.ReLU())
        model.append(nn.Linear(64, 10))
        g = torch.Generator().manual_seed(1)
        return [model, torch.randn(64, 64, generator=g), torch.randint(0, 10, (64,), generator=g)]

    machine("cpu-only")
    assert check("precision.small-model", as_a_list, " A) ")
    assert "The model is 64 wide and the batch 64, all on cpu" in said(capsys)


def test_small_model_catches_inputs_on_another_device_than_the_model(capsys):
    """Inputs "on a GPU" (exercises.core._on_a_gpu) next to a model on the CPU: the lesson's device error."""

    def inputs_on_gpu():
        model, inputs, targets = small_setup()
        return model, exercises.core._on_a_gpu(inputs, "cuda:1"), targets

    assert not check("precision.small-model", inputs_on_gpu, "a")
    assert "the model is on cpu, the inputs on cuda:1 and the targets on cpu" in said(capsys)


def test_small_model_catches_the_old_sizes_and_a_wrong_return(capsys):
    def wide():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)), *make_data(256, 64)

    assert not check("precision.small-model", wide, "a")
    assert "the model's first linear layer is 256 x 256: 64 wide, it is 64 x 64" in said(capsys)

    def big_batch():
        model, _, _ = small_setup()
        return model, *make_data(64, 512)

    assert not check("precision.small-model", big_batch, "a")
    assert "the inputs have the shape (512, 64)" in said(capsys)
    assert not check("precision.small-model", lambda: small_setup()[:2], "a")
    assert "small_setup should return three things" in said(capsys)


@pytest.mark.parametrize(("letter", "printed"), [
    ("b", "float16 overflows above 65504 whatever the size"), ("c", "the scaler skips a step only when"),
    ("d", 'why should be "a", "b" or "c", but it is \'d\''),
])
def test_small_model_explains_a_wrong_why(capsys, letter, printed):
    assert not check("precision.small-model", small_setup, letter)
    assert printed in said(capsys)


def test_bf16_vs_fp16_says_a_cuda_scaler_made_before_make_step_was_disabled_for_want_of_cuda(machine, capsys):
    """PyTorch disables torch.amp.GradScaler("cuda") made where CUDA is not available (GradScaler.__init__);
    made outside make_step, the check cannot see it asked for, and says why it scales nothing."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "CUDA is not available. Disabling."
        scaler = torch.amp.GradScaler("cuda")

    def outside_scaler(dtype):
        model, (inputs, targets) = make_model(), make_data()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        return lambda: training_step(model, inputs, targets, optimizer, dtype,
                                     scaler if dtype == torch.float16 else None)

    machine("cpu-only")
    assert not check("precision.bf16-vs-fp16", outside_scaler, dict(RIGHT_WHICH))
    out = said(capsys)
    assert "it is a CUDA scaler made before the check ran, and this machine has no CUDA, so PyTorch disabled" in out
    assert "without a GradScaler" not in out


def test_bf16_vs_fp16_rejects_a_step_that_ignores_the_dtype_or_autocasts_the_float32_variant(machine, capsys):
    """A learner's make_step that builds the scaler right but never passes dtype on trains all three
    variants in float32; one that always autocasts computes the float32 reference in bfloat16."""
    machine("cpu-only")

    def ignores_dtype(dtype):
        model, (inputs, targets) = make_model(), make_data()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        scaler = torch.amp.GradScaler("cpu") if dtype == torch.float16 else None
        return lambda: training_step(model, inputs, targets, optimizer, None, scaler)

    assert not check("precision.bf16-vs-fp16", ignores_dtype, dict(RIGHT_WHICH))
    assert "computes its matrix products in float32, but this variant computes them in float16" in said(capsys)

    def always_bfloat16(dtype):
        return make_step(torch.bfloat16 if dtype is None else dtype)

    assert not check("precision.bf16-vs-fp16", always_bfloat16, dict(RIGHT_WHICH))
    assert "make_step(None) computes its matrix products in bfloat16, but this variant computes them in float32" \
        in said(capsys)

    def pure_matmul(dtype):  # no nn.Linear: a product written with @ is seen too
        w = torch.randn(WIDTH, 10, requires_grad=True, generator=torch.Generator().manual_seed(0))
        inputs, targets = make_data()
        optimizer = torch.optim.SGD([w], lr=0.1)
        scaler = torch.amp.GradScaler("cpu", enabled=dtype == torch.float16)

        def step():
            optimizer.zero_grad()
            with torch.autocast("cpu", dtype=dtype or torch.float32, enabled=dtype is not None):
                loss = nn.functional.cross_entropy((inputs @ w).float(), targets)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            return loss.detach()
        return step

    assert check("precision.bf16-vs-fp16", pure_matmul, dict(RIGHT_WHICH)), said(capsys)
