"""The root conftest.py starts a kernel again when it dies before it first answers, and only then."""

from __future__ import annotations

import importlib.util

import pytest
from nbval import kernel

from tools.series import ROOT

spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
root_conftest = importlib.util.module_from_spec(spec)
spec.loader.exec_module(root_conftest)

DIED = RuntimeError("Kernel died before replying to kernel_info")


def starts(*outcomes):
    """A stand-in for nbval's kernel start: each call raises or returns the next outcome."""
    calls = []

    def start(*args, **kwargs):
        calls.append(args)
        outcome = outcomes[len(calls) - 1]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    return start, calls


def test_nbval_starts_its_kernels_through_the_retry():
    assert getattr(kernel.start_new_kernel, "retries", False)


def test_a_kernel_that_dies_at_start_is_started_again():
    start, calls = starts(DIED, DIED, ("km", "kc"))
    assert root_conftest.retrying(start)() == ("km", "kc") and len(calls) == 3


def test_a_third_death_and_any_other_error_are_raised_not_hidden():
    start, calls = starts(DIED, DIED, DIED)
    with pytest.raises(RuntimeError, match="Kernel died"):
        root_conftest.retrying(start)()
    assert len(calls) == 3
    start, calls = starts(RuntimeError("No such kernel named python9"))
    with pytest.raises(RuntimeError, match="No such kernel"):
        root_conftest.retrying(start)()
    assert len(calls) == 1
