"""Lesson 16's helpers, `compile_here` and `graph_breaks`, on every path a machine may take: Inductor
builds kernels (this machine), it cannot (a C++ compiler that does not exist stands in for a laptop without
one, or a GPU too old for Triton), torch.compile does not run at all (a Python too new for this PyTorch),
and an error of the function itself."""

import re

import pytest
import torch
import torch._dynamo
import torch._inductor.config

import utils
from utils import compile_here, graph_breaks


def test_compile_here_returns_a_compiled_function_with_the_same_values():
    def twice_plus_one(x):
        return torch.tanh(x) * 2 + 1

    fast = compile_here(twice_plus_one)
    x = torch.randn(100, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(fast(x), twice_plus_one(x), atol=1e-6)
    assert fast.__name__ == "twice_plus_one"


def test_compile_here_falls_back_to_the_eager_backend_and_says_why_when_inductor_cannot_build(
        monkeypatch, capsys):
    monkeypatch.setattr(torch._inductor.config.cpp, "cxx", ("/nonexistent/g++",))
    monkeypatch.setattr(torch._inductor.config, "fx_graph_cache", False)
    torch._dynamo.reset()

    def cube_minus_x(x):  # a function compiled nowhere else, so no cache holds its kernel
        return x**3 - x + 0.25

    slow = compile_here(cube_minus_x)
    x = torch.randn(64, generator=torch.Generator().manual_seed(1))
    assert torch.equal(slow(x), cube_minus_x(x))
    out = capsys.readouterr().out
    assert "torch.compile cannot build kernels here (" in out and "backend=\"eager\"" in out
    assert "compiler" in out.lower()   # the cause itself (no working C++ compiler), not only its wrapper
    slow(x)
    assert capsys.readouterr().out == ""   # said once


def test_compile_here_raises_the_functions_own_error_unchanged(capsys):
    def wrong_shapes(x):
        return x @ torch.ones(5, 5)

    with pytest.raises(RuntimeError, match=r"cannot be multiplied|size mismatch|shape"):
        compile_here(wrong_shapes)(torch.ones(3, 3))
    assert "cannot build kernels" not in capsys.readouterr().out


def test_compile_here_returns_the_function_itself_where_torch_compile_does_not_run(monkeypatch, capsys):
    def refuse(*args, **kwargs):
        raise RuntimeError("Python 3.15+ not yet supported for torch.compile")

    monkeypatch.setattr(utils.torch, "compile", refuse)

    def f(x):
        return x + 1

    assert compile_here(f) is f
    assert "torch.compile does not run here (RuntimeError: Python 3.15+ not yet supported" in capsys.readouterr().out


def test_compile_here_and_graph_breaks_refuse_what_is_not_callable():
    with pytest.raises(TypeError, match="fn must be callable, got int"):
        compile_here(3)
    with pytest.raises(TypeError, match="fn must be callable, got str"):
        graph_breaks("f", torch.ones(2))


def test_graph_breaks_names_the_line_of_a_branch_on_values_but_not_one_on_the_shape():
    def scaled(x):
        if x.shape[0] > 1:
            x = x / 2
        y = torch.sin(x)
        if y.sum() > 0:
            y = y * 2
        return torch.cos(y)

    breaks = graph_breaks(scaled, torch.ones(4))
    assert len(breaks) == 1 and re.match(r"line \d+ of scaled: if y\.sum\(\) > 0:  \(\S", breaks[0]), breaks
    assert graph_breaks(lambda x: torch.where(x.sum() > 0, x * 2, x), torch.ones(4)) == []


def test_graph_breaks_says_why_where_torch_compile_does_not_run(monkeypatch, capsys):
    def unsupported():
        raise RuntimeError("Python 3.15+ not yet supported for torch.compile")

    monkeypatch.setattr(torch._dynamo.eval_frame, "check_if_dynamo_supported", unsupported)
    assert graph_breaks(lambda x: x + 1, torch.ones(2)) is None
    assert "no graphs to look at" in capsys.readouterr().out
