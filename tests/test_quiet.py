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

from tools.series import ROOT


def run_quietly(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env)


def test_import_utils_writes_nothing():
    run = run_quietly("import utils")
    assert run.returncode == 0 and run.stderr == "" and run.stdout == ""


def test_timing_with_median_seconds_writes_nothing():
    run = run_quietly("import torch, utils; utils.median_seconds(lambda: torch.ones(3) + 1, 'cpu', 0.01)")
    assert run.returncode == 0, run.stderr
    assert run.stderr == "" and run.stdout == ""


def test_the_timing_helper_hides_nothing_but_that_one_message():
    """The filter is scoped: after the import, torch.utils.cpp_extension's warnings show again."""
    code = ("import logging, torch, utils; utils.median_seconds(lambda: None, 'cpu', 0.01); "
            "logging.getLogger('torch.utils.cpp_extension').warning('still heard')")
    run = run_quietly(code)
    assert "still heard" in run.stderr
