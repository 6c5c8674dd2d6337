"""The checks of lesson 02's exercises (exercises/tensors.py): the right answer passes, typical wrong
ones get their own message. Machines with GPUs are simulated (the `machine` fixture), and a tensor
"on a GPU" is a CPU tensor that behaves as one (`exercises.core._on_a_gpu`): no GPU is needed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import exercises.core
import exercises.tensors
from exercises import check

MACHINES = [("cpu-only", "cpu"), ("one-cuda-gpu", "cuda:0"), ("two-cuda-gpus", "cuda:0"), ("apple-mps", "mps:0")]


def said(capsys) -> str:
    return capsys.readouterr().out


def on(t: torch.Tensor, device: str) -> torch.Tensor:
    """``t`` on ``device``: really for the CPU, as a tensor that behaves so for a GPU."""
    return t if device == "cpu" else exercises.core._on_a_gpu(t, device)


# --- tensors.half-size -------------------------------------------------------------------------

def half(device: str = "cpu") -> torch.Tensor:
    return on(torch.zeros(1024, 1024, dtype=torch.float16), device)


@pytest.mark.parametrize(("name", "best"), MACHINES)
def test_half_size_accepts_a_float16_matrix_on_the_best_device_of_every_machine(machine, capsys, name, best):
    machine(name)
    assert check("tensors.half-size", half(best), 2 * 2**20)
    assert f"2,097,152 bytes, exactly 2 MiB, on {best}" in said(capsys)


@pytest.mark.parametrize(("name", "best"), MACHINES[1:])
def test_half_size_catches_a_matrix_left_on_the_cpu_of_a_machine_with_a_gpu(machine, capsys, name, best):
    machine(name)
    assert not check("tensors.half-size", half("cpu"), 2 * 2**20)
    assert f"h lives on cpu, but your best device is {best}" in said(capsys)


def test_half_size_catches_float32_another_shape_and_a_count_of_values_not_bytes(machine, capsys):
    machine("cpu-only")
    assert not check("tensors.half-size", torch.zeros(1024, 1024), 4 * 2**20)
    assert "h is float32: ask for half precision" in said(capsys)
    assert not check("tensors.half-size", torch.zeros(1000, 1000, dtype=torch.float16), 2 * 10**6)
    assert "h has shape (1000, 1000)" in said(capsys)
    assert not check("tensors.half-size", half(), 1024 * 1024)
    assert "n_bytes is 1,048,576, the number of values in h" in said(capsys)
    assert not check("tensors.half-size", half(), 4 * 2**20)  # float32's bytes
    assert "n_bytes is 4,194,304, which is not what h's values take" in said(capsys)
    assert not check("tensors.half-size", half(), 2.097152)  # megabytes, as a float
    assert "n_bytes should be" in (out := said(capsys)) and "but it is a float" in out


def test_half_size_accepts_the_bytes_as_nbytes_a_numpy_int_a_float_or_a_tensor(machine, capsys):
    """Right answers written another way: h.nbytes, np.prod(h.shape) * 2 (NumPy's int64), h.numel() * 16 / 8 (a
    float), a tensor of one value, for a matrix made with .half(); NumPy's count of values is still caught."""
    machine("cpu-only")
    h = torch.ones(1024, 1024).half()
    for n_bytes in (h.nbytes, np.prod(h.shape) * h.element_size(), h.numel() * 16 / 8, torch.tensor(h.numel()) * 2):
        assert check("tensors.half-size", h, n_bytes)
        assert "2,097,152 bytes, exactly 2 MiB, on cpu" in said(capsys)
    assert not check("tensors.half-size", h, np.prod(h.shape))
    assert "n_bytes is 1,048,576, the number of values in h" in said(capsys)


def test_half_size_template_is_not_answered_yet(capsys):
    assert not check("tensors.half-size", ..., ...)
    assert said(capsys).startswith("Not answered yet")


# --- tensors.missing-gpu -----------------------------------------------------------------------

def raised_here() -> BaseException | None:
    try:
        torch.ones(2, device="cuda:5")
    except Exception as err:
        return err
    return None


def test_missing_gpu_accepts_the_error_this_machine_raises_and_prints_it(capsys):
    """Runs on the real machine: whatever it raises for cuda:5 is the right answer there."""
    error = raised_here()
    assert check("tensors.missing-gpu", error)
    if error is not None:
        assert f"raises {type(error).__name__}: {str(error).splitlines()[0]}" in said(capsys)


def test_missing_gpu_accepts_the_error_of_a_copy_to_cuda5_too(capsys):
    """Another way to the same error on this machine: a CPU tensor copied to cuda:5 with .to()."""
    error = raised_here()
    if error is None:
        pytest.skip("this machine has six CUDA GPUs or more: cuda:5 exists")
    try:
        torch.zeros(2).to("cuda:5")
    except Exception as err:
        copied = err
    assert check("tensors.missing-gpu", copied)
    assert f"raises {type(error).__name__}: {str(error).splitlines()[0]}" in said(capsys)


def test_missing_gpu_catches_no_error_kept_its_text_kept_or_another_error(capsys):
    error = raised_here()
    if error is None:
        pytest.skip("this machine has six CUDA GPUs or more: cuda:5 exists")
    assert not check("tensors.missing-gpu", None)
    assert 'error is None, but on this machine torch.ones(2, device="cuda:5") raises' in said(capsys)
    assert not check("tensors.missing-gpu", str(error))
    assert "error is a str: keep the exception itself" in said(capsys)
    assert not check("tensors.missing-gpu", ValueError("not this one"))
    assert "error is ValueError: not this one. That is not what" in said(capsys)
    assert not check("tensors.missing-gpu", 42)
    assert "error should be the exception you caught (or None), but it is an int" in said(capsys)


def test_missing_gpu_on_a_cuda_machine_wants_its_own_error_not_a_cpu_machines(machine, monkeypatch, capsys):
    """A simulated one-GPU machine: creating the tensor raises the CUDA runtime's invalid device ordinal."""
    machine("one-cuda-gpu")
    ordinal = RuntimeError("CUDA error: invalid device ordinal\nCUDA kernel errors might be asynchronously reported")
    monkeypatch.setattr(exercises.tensors, "_tensors_try_cuda5", lambda: ordinal)
    assert check("tensors.missing-gpu", RuntimeError("CUDA error: invalid device ordinal\nother details"))
    assert "raises RuntimeError: CUDA error: invalid device ordinal." in said(capsys)
    assert not check("tensors.missing-gpu", AssertionError("Torch not compiled with CUDA enabled"))
    assert "error is AssertionError: Torch not compiled with CUDA enabled. That is not what" in said(capsys)


def test_missing_gpu_on_a_machine_with_eight_gpus_wants_none(machine, monkeypatch, capsys):
    """A simulated machine with eight CUDA GPUs, where cuda:5 exists and nothing is raised."""
    machine("two-cuda-gpus")
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 8)
    monkeypatch.setattr(exercises.tensors, "_tensors_try_cuda5", lambda: None)
    assert check("tensors.missing-gpu", None)
    assert "creates the tensor: this machine has 8 CUDA GPUs" in said(capsys)
    assert not check("tensors.missing-gpu", AssertionError("Torch not compiled with CUDA enabled"))
    assert "raises nothing: it has 8 CUDA GPUs, so error should be None" in said(capsys)


def test_missing_gpu_names_an_unexpected_error_with_its_article(machine, monkeypatch, capsys):
    """"error is an AssertionError", not "a AssertionError"."""
    machine("two-cuda-gpus")
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 8)
    monkeypatch.setattr(exercises.tensors, "_tensors_try_cuda5", lambda: None)
    assert not check("tensors.missing-gpu", AssertionError("Torch not compiled with CUDA enabled"))
    assert "error is an AssertionError, but on this machine" in said(capsys)
    assert not check("tensors.missing-gpu", RuntimeError("CUDA error: invalid device ordinal"))
    assert "error is a RuntimeError, but on this machine" in said(capsys)


# --- tensors.retype ----------------------------------------------------------------------------

@pytest.mark.parametrize("device", ["cpu", "cuda:0", "mps:0"])
def test_retype_accepts_a_float16_copy_and_copies_true_on_every_device(capsys, device):
    t = on(torch.ones(3), device)
    retyped = t.to(torch.float16) if device == "cpu" else on(torch.ones(3, dtype=torch.float16), device)
    assert check("tensors.retype", t, retyped, True)
    assert "4 bytes per value in t, 2 in retyped" in said(capsys)


@pytest.mark.parametrize("retype", [lambda t: t.half(), lambda t: t.type(torch.float16),
                                    lambda t: t.to(dtype=torch.half, copy=True)])
def test_retype_accepts_half_type_and_dtype_and_copies_as_a_comparison_a_numpy_bool_or_a_tensor(capsys, retype):
    t = torch.ones(3)
    retyped = retype(t)
    for copies in (retyped.data_ptr() != t.data_ptr(), np.not_equal(retyped.data_ptr(), t.data_ptr()),
                   torch.tensor(retyped.data_ptr()) != torch.tensor(t.data_ptr())):
        assert check("tensors.retype", t, retyped, copies)
        assert "4 bytes per value in t, 2 in retyped" in said(capsys)
    assert not check("tensors.retype", t, retyped, np.False_)
    assert "copies is False, but retyped.data_ptr() and t.data_ptr() differ" in said(capsys)


def test_retype_catches_t_itself_turned_into_float16_without_saying_it_was_not_asked_for(capsys):
    t = torch.ones(3).to("cpu", torch.float16)  # t = t.to(device, torch.float16): t itself retyped
    for retyped in (t, t.to("cpu", torch.float16), t.float()):
        assert not check("tensors.retype", t, retyped, False)
        out = said(capsys)
        assert "t is float16, but the template makes it float32: run its first line again" in out
        assert "own type" not in out and "asks for torch.float16" not in out


def test_retype_catches_no_change_of_type_and_the_answer_false(capsys):
    t = torch.ones(3)
    assert not check("tensors.retype", t, t.to(t.device), True)  # .to(device) alone: t itself
    assert "retyped has t's own type, float32" in said(capsys)
    assert not check("tensors.retype", t, t.to(t.device, torch.float16), False)
    assert "copies is False, but retyped.data_ptr() and t.data_ptr() differ" in said(capsys)
    assert not check("tensors.retype", t, t.to(t.device, torch.float64), True)
    assert "retyped is float64; the exercise asks for torch.float16" in said(capsys)


def test_retype_catches_a_copy_on_another_device_and_one_left_on_the_cpu(capsys):
    t = torch.ones(3)
    assert not check("tensors.retype", t, t.to("meta", torch.float16), True)
    assert "retyped lives on meta, but t is on cpu" in said(capsys)
    on_gpu = on(torch.ones(3), "cuda:0")
    assert not check("tensors.retype", on_gpu, torch.ones(3, dtype=torch.float16), True)
    assert "retyped lives on cpu, but t is on cuda:0" in said(capsys)


def test_retype_catches_a_tensor_not_made_from_t_and_an_answer_of_the_wrong_type(capsys):
    t = torch.ones(3)
    assert not check("tensors.retype", t, torch.zeros(3, dtype=torch.float16), True)
    assert "retyped does not hold t's values" in said(capsys)
    assert not check("tensors.retype", t, t.half(), "yes")
    assert "copies should be a bool, but it is a str" in said(capsys)
    assert not check("tensors.retype", t, ..., ...)
    assert said(capsys).startswith("Not answered yet")


# --- tensors.describe --------------------------------------------------------------------------

def describe(t):
    return f"shape {tuple(t.shape)}, {str(t.dtype).removeprefix('torch.')}, on {t.device}"


def test_describe_accepts_a_description_of_any_tensor_on_cpu_cuda_and_mps(capsys):
    assert check("tensors.describe", describe)
    assert "on the CPU, CUDA GPUs and Apple's GPU" in said(capsys)


@pytest.mark.parametrize("describe_it", [
    lambda t: f"shape {tuple(t.size())}, {str(t.dtype).split('.')[-1]}, on {t.device}",
    lambda t: "shape " + str(tuple(t.shape)) + ", " + str(t.dtype)[len("torch."):] + ", on " + str(t.device),
])
def test_describe_accepts_size_split_and_a_slice_joined_with_plus(capsys, describe_it):
    assert check("tensors.describe", describe_it)
    assert "on the CPU, CUDA GPUs and Apple's GPU" in said(capsys)


def test_describe_catches_the_device_type_alone_and_a_list_for_the_shape(capsys):
    assert not check("tensors.describe", lambda t: describe(t).removesuffix(str(t.device)) + t.device.type)
    assert ("gives 'shape (4,), float16, on cuda' for a float16 vector on cuda:0, which lives on cuda:0: end with "
            "the tensor's own device") in said(capsys)
    assert not check("tensors.describe", lambda t: describe(t).replace(str(tuple(t.shape)), str(list(t.shape))))
    assert ("gives 'shape [2, 3], float32, on cpu' for a 2 × 3 float32 matrix on the CPU; it should give "
            "'shape (2, 3), float32, on cpu'") in said(capsys)


def test_describe_catches_a_device_written_by_hand_as_cpu(capsys):
    def on_cpu(t):
        return f"shape {tuple(t.shape)}, {str(t.dtype).removeprefix('torch.')}, on cpu"

    assert not check("tensors.describe", on_cpu)
    assert "gives 'shape (4,), float16, on cpu' for a float16 vector on cuda:0, which lives on cuda:0" in said(capsys)


def test_describe_catches_torch_size_a_torch_prefix_and_other_wording(capsys):
    assert not check("tensors.describe", lambda t: f"shape {t.shape}, float32, on {t.device}")
    assert "write the shape as a tuple" in said(capsys)
    assert not check("tensors.describe", lambda t: f"shape {tuple(t.shape)}, {t.dtype}, on {t.device}")
    assert "'shape (2, 3), torch.float32, on cpu'" in (out := said(capsys)) and "without its torch. prefix" in out
    assert not check("tensors.describe", lambda t: f"{tuple(t.shape)} {str(t.dtype)[6:]} on {t.device}")
    assert "it should give 'shape (2, 3), float32, on cpu'" in said(capsys)


def test_describe_catches_printing_instead_of_returning_and_numpy_on_a_gpu_but_takes_tolist(capsys):
    assert not check("tensors.describe", lambda t: print(describe(t)))
    assert "describe returns a NoneType for a 2 × 3 float32 matrix on the CPU, not a str" in said(capsys)
    # Reading the values copies them off a GPU, as CUDA's tolist() does: slower, but right.
    assert check("tensors.describe", lambda t: t.tolist() is not None and describe(t))
    assert not check("tensors.describe", lambda t: t.numpy() is not None and describe(t))
    assert "your code raised TypeError: can't convert cuda:0 device type tensor to numpy" in said(capsys)

    def template(t):
        """A string like "shape (2, 3), float32, on cpu"."""
        ...

    assert not check("tensors.describe", template)
    assert said(capsys).startswith("Not answered yet")
