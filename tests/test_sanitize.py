"""The nbval sanitize file turns real GPU outputs into the CPU reference.

The GPU strings below are real outputs: the first group is copied from the source notes the
series was written from (run on Kaggle with two Tesla T4s), the rest are PyTorch's own
messages for the one-GPU and Apple cases, each same-device wording with the PyTorch source
it was found in. The CPU strings are what this series stores.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from nbval.plugin import get_sanitize_patterns

ROOT = Path(__file__).resolve().parent.parent  # independent of where the tools package lives

PATTERNS = get_sanitize_patterns((ROOT / "tests" / "nbval_sanitize.cfg").read_text(encoding="utf-8"))


def sanitize(text: str) -> str:
    for regex, replace in PATTERNS:
        text = re.sub(regex, replace, text)
    return text


@pytest.mark.parametrize(
    ("gpu", "cpu"),
    [
        # Kaggle, two T4s (from the source notes)
        ("tensor([[1., 1., 1.],\n        [1., 1., 1.]], device='cuda:0')",
         "tensor([[1., 1., 1.],\n        [1., 1., 1.]])"),
        ("tensor([[0.0620],\n        [0.0620]], device='cuda:0', grad_fn=<AddmmBackward0>)",
         "tensor([[0.0620],\n        [0.0620]], grad_fn=<AddmmBackward0>)"),
        ("device(type='cuda', index=0)", "device(type='cpu')"),
        ("(device(type='cuda', index=0),\n device(type='cpu'),\n [device(type='cuda', index=0)])",
         "(device(type='cpu'),\n device(type='cpu'),\n [device(type='cpu')])"),
        # Apple silicon
        ("tensor([1, 2, 3], device='mps:0')", "tensor([1, 2, 3])"),
        ("device(type='mps', index=0)", "device(type='cpu')"),
        # printed device names
        ("cuda:0 -> cuda:1", "cpu -> cpu"),
    ],
)
def test_gpu_reprs_become_the_cpu_reference(gpu, cpu):
    assert sanitize(gpu) == sanitize(cpu)
    assert sanitize(cpu) == cpu  # the CPU reference itself is left as it is


# What the CPU run stores (its `meta` stand-in meets torch/_prims_common's check_same_device):
# lesson 03, cell copies-09 (X + Y) and lesson 04, cell models-18 (net(stray)).
STORED_SAME_DEVICE = (
    "Tensor on device meta is not on the expected device cpu!",
    "Tensor on device cpu is not on the expected device meta!",
)
PLACEHOLDER = "<tensors on two devices>"

# Real wordings of the same-device error, each with where it was found.
SAME_DEVICE_MESSAGES = [
    # TensorIterator's check (elementwise ops: lesson 03's X + Y on a GPU or a Mac).
    # aten/src/ATen/TensorIterator.cpp, TensorIteratorBase::compute_types, unchanged in
    # pytorch/pytorch main (read at commit 004f63d3); the string is in torch 2.13's
    # libtorch_cpu.so.
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:1!",
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
    "Expected all tensors to be on the same device, but found at least two devices, mps:0 and cpu!",
    # The dispatcher's check in current releases (nn.Linear -> addmm on CUDA: lesson 04).
    # c10::impl::common_device_check_failure, aten/src/ATen/core/adaption.cpp (the path torch
    # 2.13's libtorch_cpu.so names next to this string); earlier at
    # aten/src/ATen/core/op_registration/adaption.cpp.
    "Expected all tensors to be on the same device, but got mat1 is on cpu, different from other tensors "
    "on cuda:0 (when checking argument in method wrapper_CUDA_addmm)",
    "Expected all tensors to be on the same device, but got mat1 is on cuda:1, different from other tensors "
    "on cuda:0 (when checking argument in method wrapper_CUDA_addmm)",
    # The same function in older releases (the replaced side of that change, as kept in a
    # ROCm fork's merge conflict; reported e.g. in haotian-liu/LLaVA#1081, 2024).
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
    "(when checking argument for argument mat1 in method wrapper_CUDA_addmm)",
    "Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0! "
    "(when checking argument for argument mat1 in method wrapper_CUDA_addmm)",
    # Its first versions said "arugment": the first string is verbatim in saved outputs of
    # 2021-22 (GitHub notebooks and logs); the source at pytorch/pytorch commit 53cc3766
    # (aten/src/ATen/core/op_registration/adaption.cpp) also says "same common device".
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
    "(when checking arugment for argument mat1 in method wrapper_addmm)",
    "Expected all tensors to be on the same common device, but found at least two devices, cuda:0 and cpu! "
    "(when checking arugment for argument mat1 in method wrapper_addmm)",
    # addmm's sparse kernels check devices themselves:
    # aten/src/ATen/native/sparse/cuda/SparseCUDATensorMath.cu, s_addmm_out_sparse_dense_cuda ...
    "Expected all tensors to be on the same device. addmm: expected 'mat1' to be CUDA, but got CPU",
    # ... and aten/src/ATen/native/sparse/SparseCsrTensorMath.h, _check_is_cuda (device() printed).
    "Expected all tensors to be on the same device. addmm expected 'mat1' to be CUDA tensor, but got cpu tensor",
    # On a Mac, linear has its own MPS kernel with its own check:
    # aten/src/ATen/native/mps/operations/Linear.mm, _mps_linear (input, then weight, then bias).
    "Tensor for argument input is on cpu but expected on mps",
    "Tensor for argument weight is on cpu but expected on mps",
]

# Other errors from the same calls, which must stay visible: the wording of torch 2.13 (CPU)
# for nn.Linear / torch.mm with a dtype or shape mismatch, and the MPS kernel's own shape error
# (Linear.mm, _mps_linear).
OTHER_ERRORS = [
    "mat1 and mat2 must have the same dtype, but got Double and Float",
    "expected m1 and m2 to have the same dtype, but got: float != double",
    "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)",
    "linear(): input and weight.T shapes cannot be multiplied (2x4 and 3x1)",
    "MPS device does not support linear for non-float inputs",
]


@pytest.mark.parametrize("message", SAME_DEVICE_MESSAGES)
def test_every_same_device_error_matches_the_stored_cpu_output(message):
    for stored in STORED_SAME_DEVICE:
        assert sanitize(message) == sanitize(stored) == PLACEHOLDER


@pytest.mark.parametrize("message", SAME_DEVICE_MESSAGES)
def test_same_device_error_is_absorbed_whole_inside_a_traceback_line(message):
    # nbval compares evalue; the traceback's last line carries the same text after "RuntimeError: ".
    assert sanitize(f"RuntimeError: {message}") == f"RuntimeError: {PLACEHOLDER}"


@pytest.mark.parametrize("other", OTHER_ERRORS)
def test_an_unrelated_error_is_not_hidden(other):
    assert sanitize(other) == other
    for stored in STORED_SAME_DEVICE:
        assert sanitize(other) != sanitize(stored)


SAME_DEVICE_RULES = [regex for regex, replace in PATTERNS if replace == PLACEHOLDER]


@pytest.mark.parametrize("regex", SAME_DEVICE_RULES)
def test_each_same_device_rule_is_needed_and_hides_nothing_else(regex):
    real = [*SAME_DEVICE_MESSAGES, *STORED_SAME_DEVICE]
    assert any(re.search(regex, m) for m in real), "a rule with no real wording to show it is needed"
    for other in OTHER_ERRORS:
        assert not re.search(regex, other)


def test_numpy_refusal_matches_whatever_the_device():
    gpu = "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first."
    cpu = "can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first."
    assert sanitize(gpu) == sanitize(cpu)


def test_gpu_names_memory_and_durations_are_masked():
    a = "cuda:0 is a Tesla T4 with 14.7 GiB, took 3.2 ms"
    b = "cuda:0 is a NVIDIA H200 with 139.8 GiB, took 0.4 ms"
    assert sanitize(a) == sanitize(b) == "cpu is a <gpu model> with <memory>, took <duration>"


def test_values_are_still_compared():
    assert sanitize("tensor([0.4963, 0.7682], device='cuda:0')") != sanitize("tensor([0.4963, 0.7683])")
    assert sanitize("4.0 MB of torch.float32") == "4.0 MB of torch.float32"


def test_every_pattern_in_the_file_is_read_by_nbval():
    sections = (ROOT / "tests" / "nbval_sanitize.cfg").read_text(encoding="utf-8").count("\n[")
    assert len(PATTERNS) == sections, "a pattern nbval cannot parse is silently ignored (is 'replace: ' empty?)"
