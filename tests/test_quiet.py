"""The helpers print nothing a lesson did not ask for, on every build of torch.

On PyPI's CUDA build with no GPU visible (Colab's CPU runtime; `make test-cuda-build` runs this
file with that build), torch.utils.benchmark's import chain logs "No CUDA runtime is found" to
stderr. Strict nbval would fail any cell that shows it, and a reader would be puzzled by it.
With the CPU wheel these tests pass trivially; their point is the CUDA-build run.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tools.series import ROOT

MARK = "--- the helpers are done; the next line is the test's own warning ---"
# One process for every test here (importing torch is most of its time): it imports utils, times a
# tensor operation with median_seconds, writes MARK to stderr, then logs a warning through
# torch.utils.cpp_extension's logger, whose "No CUDA runtime is found" the helpers filter.
CODE = ("import logging, sys, torch, utils; utils.median_seconds(lambda: torch.ones(3) + 1, 'cpu', 0.01); "
        f"sys.stderr.write({MARK!r} + '\\n'); "
        "logging.getLogger('torch.utils.cpp_extension').warning('still heard')")


@pytest.fixture(scope="module")
def quiet_run() -> tuple[subprocess.CompletedProcess, str, str]:
    """The run, with its stderr before and after MARK."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    run = subprocess.run([sys.executable, "-c", CODE], cwd=ROOT, capture_output=True, text=True, env=env)
    before, _, after = run.stderr.partition(MARK + "\n")
    return run, before, after


def test_importing_utils_and_timing_with_median_seconds_write_nothing(quiet_run):
    run, before, _ = quiet_run
    assert run.returncode == 0, run.stderr
    assert MARK in run.stderr, run.stderr
    assert before == "" and run.stdout == ""


def test_the_timing_helper_hides_nothing_but_that_one_message(quiet_run):
    """The filter is scoped: after the import, torch.utils.cpp_extension's warnings show again."""
    _, _, after = quiet_run
    assert "still heard" in after
