"""The checks of lesson 16's exercises (exercises/torch_compile.py): right answers pass, written
several ways; typical wrong ones fail with their message."""

import time

import pytest
import torch

import exercises.torch_compile as compile_checks
from exercises import check
from utils import median_and_iqr_seconds, synchronize


def said(capsys) -> str:
    return capsys.readouterr().out


@pytest.fixture
def not_compiled(monkeypatch):
    """The check's real run without a real compile (seconds each): the function as it is."""
    monkeypatch.setattr(compile_checks, "compile_here", lambda fn: fn)


def first_and_steady(f, x, device):
    start = time.perf_counter()
    f(x)
    synchronize(device)
    first = time.perf_counter() - start
    return first, median_and_iqr_seconds(lambda: f(x), device)


def test_first_and_steady_accepts_a_timing_or_a_median_and_iqr_pair_and_reports_the_real_compile(capsys):
    assert check("torch-compile.first-and-steady", first_and_steady)
    out = said(capsys)
    assert "a function the check compiled: first call" in out and "eager" in out


def test_first_and_steady_accepts_other_clocks_and_forms(capsys, not_compiled):
    def with_time_and_a_pair(f, x, device):
        t0 = time.time()
        f(x)
        synchronize(device)
        first = time.time() - t0
        median, iqr = median_and_iqr_seconds(lambda: f(x), device, min_run_time=0.05)
        return [first, (median, iqr)]

    def with_a_median_only(f, x, device):
        t0 = time.perf_counter_ns()
        f(x)
        synchronize(device)
        return (time.perf_counter_ns() - t0) / 1e9, median_and_iqr_seconds(lambda: f(x), device).median

    assert check("torch-compile.first-and-steady", with_time_and_a_pair)
    assert check("torch-compile.first-and-steady", with_a_median_only)
    assert "times the first call apart from the rest" in said(capsys)


def test_first_and_steady_rejects_a_first_call_timed_after_a_warm_up(capsys):
    def warmed_up(f, x, device):
        steady = median_and_iqr_seconds(lambda: f(x), device)   # warms up: the compile happens here
        start = time.perf_counter()
        f(x)
        return time.perf_counter() - start, steady

    assert not check("torch-compile.first-and-steady", warmed_up)
    assert "did the call you timed come after an earlier one?" in said(capsys)


def test_first_and_steady_rejects_a_steady_time_that_holds_the_first_call(capsys):
    def averaged(f, x, device):
        times = []
        for _ in range(5):
            start = time.perf_counter()
            f(x)
            times.append(time.perf_counter() - start)
        return times[0], sum(times) / len(times)   # the mean still holds the first call

    assert not check("torch-compile.first-and-steady", averaged)
    assert "still contains the 0.2 s of the first call" in said(capsys)


def test_first_and_steady_rejects_one_call_and_a_wrong_shape(capsys):
    def once(f, x, device):
        start = time.perf_counter()
        f(x)
        first = time.perf_counter() - start
        return first, first

    assert not check("torch-compile.first-and-steady", once)
    assert "the steady Timing needs the calls after the first one" in said(capsys)
    assert not check("torch-compile.first-and-steady", lambda f, x, device: 0.2)
    assert "should return a pair (first, steady)" in said(capsys)


def test_first_and_steady_rejects_several_calls_timed_as_the_first(capsys):
    def ten_calls(f, x, device):
        start = time.perf_counter()
        for _ in range(10):
            f(x)
            time.sleep(0.05)
        return time.perf_counter() - start, median_and_iqr_seconds(lambda: f(x), device)

    assert not check("torch-compile.first-and-steady", ten_calls)
    assert "time that one call, not several" in said(capsys)


@pytest.mark.parametrize("fix", [
    lambda x: x / torch.clamp(x.abs().max(), min=1),
    lambda x: x / torch.maximum(x.abs().max(), torch.ones((), device=x.device)),
    lambda x: torch.where(x.abs().max() > 1, x / x.abs().max(), x),
    lambda x: x / x.abs().max().clamp_min(1.0),
], ids=["clamp", "maximum", "where", "clamp_min"])
def test_one_graph_accepts_every_tensor_form_of_the_choice(capsys, fix):
    assert check("torch-compile.one-graph", fix)
    assert "It compiles to one graph." in said(capsys)


def test_one_graph_rejects_the_if_it_should_remove(capsys):
    assert not check("torch-compile.one-graph", compile_checks.normalise)
    out = said(capsys)
    assert "still has 1 graph break(s)" in out and "biggest = x.abs().max().item()" in out

    def if_on_a_tensor(x):
        biggest = x.abs().max()
        if biggest > 1:
            x = x / biggest
        return x

    assert not check("torch-compile.one-graph", if_on_a_tensor)
    assert "if biggest > 1:" in said(capsys)


def test_one_graph_rejects_wrong_values_first(capsys):
    assert not check("torch-compile.one-graph", lambda x: x / x.abs().max())   # divides when under 1 too
    assert "For x = [0.5, -0.25, 0.125], normalise gives [0.5, -0.25, 0.125]" in said(capsys)
    assert not check("torch-compile.one-graph", lambda x: torch.clamp(x, -1, 1))   # clips, does not scale
    assert "normalise gives [0.75, -1.0, 0.25]" in said(capsys)
    assert not check("torch-compile.one-graph", lambda x: x.abs().max())
    assert "normalise_in_one_graph gives" in said(capsys)


def test_one_graph_says_where_torch_compile_cannot_run(capsys, monkeypatch):
    monkeypatch.setattr(compile_checks, "graph_breaks", lambda fn, *args: None)
    assert check("torch-compile.one-graph", lambda x: x / torch.clamp(x.abs().max(), min=1))
    assert "its graphs were not looked at" in said(capsys)
