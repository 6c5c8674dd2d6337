"""The checks of lesson 03's exercises (exercises/copies.py): the right answer passes, typical wrong
ones get their own message. Machines with GPUs are simulated (the `machine` fixture), and a tensor
"on a GPU" is a CPU tensor that behaves as one (`exercises.core._on_a_gpu`): no GPU is needed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import exercises.core
from exercises import check


def values():
    return torch.ones(2, 3) + torch.rand(2, 3, generator=torch.Generator().manual_seed(0))


def said(capsys) -> str:
    return capsys.readouterr().out


@pytest.mark.parametrize(("name", "first", "second"), [
    ("cpu-only", "cpu", None), ("one-cuda-gpu", "cuda:0", "cpu"),
    ("two-cuda-gpus", "cuda:0", "cuda:1"), ("apple-mps", "mps:0", "cpu"),
])
def test_other_way_wants_the_sum_on_the_first_device_on_every_machine(machine, capsys, name, first, second):
    machine(name)
    on = (lambda t, d: t.to(d)) if first == "cpu" else exercises.core._on_a_gpu
    assert check("copies.other-way", on(values(), first))
    assert f"The sum lives on {first}, X's device" in said(capsys)
    if second is not None:  # the lesson's way round: the sum on the second device
        wrong = values() if second == "cpu" else exercises.core._on_a_gpu(values(), second)
        assert not check("copies.other-way", wrong)
        assert f"the sum lives on {second}, Y's device" in said(capsys)


def test_other_way_rejects_the_sum_left_on_meta_without_a_gpu(machine, capsys):
    machine("cpu-only")
    assert not check("copies.other-way", values().to("meta"))
    assert "the sum lives on meta, Y's device" in said(capsys)


def test_other_way_rejects_wrong_values_and_a_result_that_is_no_tensor(machine, capsys):
    machine("cpu-only")
    assert not check("copies.other-way", torch.ones(2, 3) * 2)
    assert "its values are not X + Y" in said(capsys)
    assert not check("copies.other-way", values().tolist())
    assert "result should be a tensor (torch.Tensor), but it is a list" in said(capsys)


def by_address(a, b):
    return a.data_ptr() == b.data_ptr()


def test_copy_true_needs_a_working_shares_memory_and_the_answer_false(capsys):
    assert check("copies.copy-true", by_address, False)
    assert not check("copies.copy-true", by_address, True)
    assert "your shares_memory works, but it answers False" in said(capsys)


def test_copy_true_catches_a_shares_memory_that_compares_values(capsys):
    assert not check("copies.copy-true", lambda a, b: bool(torch.equal(a.flatten(), b.flatten())), False)
    assert "shares_memory says True for t and t.clone()" in said(capsys)
    assert not check("copies.copy-true", lambda a, b: a is b, False)  # a view is another object
    assert "shares_memory says False for t and t.view(2, 2)" in said(capsys)
    assert not check("copies.copy-true", lambda a, b: "yes", False)
    assert "should be a bool, but it is a str" in said(capsys)


RIGHT = {"t.shape": False, "len(t)": False, "t.sum()": False, "t.item()": True,
         "print(t)": True, "t.tolist()": True, "t.device": False}


def test_which_copy_accepts_the_right_answers_and_counts_the_wrong_ones_without_naming_them(capsys):
    assert check("copies.which-copy", dict(RIGHT))
    assert check("copies.which-copy", {k: RIGHT[k] for k in reversed(RIGHT)})  # any order of keys
    assert not check("copies.which-copy", RIGHT | {"t.sum()": True, "t.shape": True})
    out = said(capsys)
    assert "Not right yet, 2 of the 7 answers: 2 where you said the call copies and 0 where" in out
    assert not any(name in out for name in RIGHT)  # naming a key of a true/false table gives its answer away
    assert not check("copies.which-copy", RIGHT | {"t.item()": False})
    assert "Not right yet, 1 of the 7 answers: 0 where you said the call copies and 1 where" in said(capsys)
    assert not check("copies.which-copy", {"t.item()": True})
    assert "lacks an answer for: len(t), print(t)" in said(capsys)
    assert not check("copies.which-copy", RIGHT | {"t.item()": "yes"})
    assert 'copies_to_cpu["t.item()"] should be a bool' in said(capsys)


def test_to_numpy_works_for_cpu_gpu_and_gradient_tensors(capsys):
    assert check("copies.to-numpy", lambda t: t.detach().cpu().numpy())
    assert check("copies.to-numpy", lambda t: t.cpu().detach().numpy())
    assert check("copies.to-numpy", lambda t: t.numpy(force=True))
    assert check("copies.to-numpy", lambda t: np.asarray(t.detach().to("cpu")))


def test_to_numpy_accepts_the_values_copied_out_by_tolist_as_on_a_cuda_gpu(capsys):
    # A CUDA tensor's tolist() copies its values to the host; it was refused once, for a false reason.
    assert check("copies.to-numpy", lambda t: np.array(t.tolist()))
    assert check("copies.to-numpy", lambda t: np.array([x.item() for x in t]))


def test_to_numpy_catches_a_tensor_left_on_the_gpu_and_a_kept_gradient(capsys):
    assert not check("copies.to-numpy", lambda t: t.detach().numpy())  # fine on a CPU only
    assert "fails for a tensor on a CUDA GPU" in said(capsys)
    assert not check("copies.to-numpy", lambda t: t.cpu().numpy())
    assert "fails for a tensor that requires gradients" in said(capsys)
    assert not check("copies.to-numpy", lambda t: t.detach().cpu().tolist())
    assert "returns a list for a CPU tensor, not a NumPy array" in said(capsys)
    assert not check("copies.to-numpy", lambda t: np.zeros(3, dtype=np.float32))
    assert "other values than the tensor's" in said(capsys)


def test_to_numpy_that_asks_is_cpu_or_get_device_is_right_as_on_a_cuda_gpu(capsys):
    # A CUDA tensor's is_cpu is False and its get_device() its GPU's index; a tensor that pretends to be on a
    # GPU once said True and -1, and the check refused these answers as failing on a GPU.
    def by_is_cpu(t):
        t = t.detach()
        return t.numpy() if t.is_cpu else t.cpu().numpy()

    def by_get_device(t):
        t = t.detach()
        return t.numpy() if t.get_device() < 0 else t.cpu().numpy()

    assert check("copies.to-numpy", by_is_cpu)
    assert check("copies.to-numpy", by_get_device)


def test_copy_true_and_which_copy_accept_numpy_and_tensor_bools(capsys):
    """np.equal(...) gives NumPy's bool (named "bool" too in NumPy 2), a comparison of tensors a tensor:
    _expect takes either as the bool it holds, where it said "should be a bool, but it is a bool"."""
    assert check("copies.copy-true", lambda a, b: np.equal(a.data_ptr(), b.data_ptr()), np.False_)
    assert check("copies.copy-true", lambda a, b: torch.tensor(a.data_ptr()) == b.data_ptr(), torch.tensor(False))
    assert "copy=True allocates new memory" in said(capsys)
    as_numpy = {name: np.bool_(answer) for name, answer in RIGHT.items()}
    assert check("copies.which-copy", as_numpy)
    assert not check("copies.which-copy", as_numpy | {"t.shape": np.True_})
    assert "should be a bool" not in said(capsys)
