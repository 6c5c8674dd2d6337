"""The nbval sanitize file turns real GPU outputs into the CPU reference.

The GPU strings below are real outputs: the first group is copied from the source notes the
series was written from (run on Kaggle with two Tesla T4s), the rest are PyTorch's own
messages for the one-GPU and Apple cases. The CPU strings are what this series stores.
"""

from __future__ import annotations

import re

import pytest
from nbval.plugin import get_sanitize_patterns
from series import ROOT

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


@pytest.mark.parametrize(
    "message",
    [
        "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:1!",
        "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
        "Expected all tensors to be on the same device, but found at least two devices, mps:0 and cpu!",
    ],
)
def test_every_same_device_error_matches_the_cpu_stand_in(message):
    cpu_stand_in = "Tensor on device meta is not on the expected device cpu!"
    assert sanitize(message) == sanitize(cpu_stand_in) == "<tensors on two devices>"


def test_an_unrelated_error_is_not_hidden():
    other = "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x1)"
    assert sanitize(other) == other
    assert sanitize(other) != sanitize("Tensor on device meta is not on the expected device cpu!")


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
