"""The tools that write stored outputs and run the GPU suite."""

from __future__ import annotations

from tools import execute
from tools.series import ROOT


def test_tidy_traceback_folds_library_frames_and_strips_colour():
    frames = [
        "\x1b[31m---\x1b[39m",
        "Cell In[6], line 1\n----> 1 X + Y\n",
        f"File {ROOT}/.venv/lib/python3.11/site-packages/torch/_compile.py:54, in inner()\n",
        "File /usr/lib/python3.11/functools.py:10, in wrapper()\n",
        f"File {ROOT}/utils.py:99, in model_device(net)\n",
        "\x1b[31mRuntimeError\x1b[39m: Tensor on device meta is not on the expected device cpu!",
    ]
    tidy = execute.tidy_traceback(frames)
    assert tidy == [
        "---",
        "Cell In[6], line 1\n----> 1 X + Y\n",
        "File utils.py:99, in model_device(net)\n",
        "[2 frame(s) inside installed libraries folded by tools/execute.py]",
        "RuntimeError: Tensor on device meta is not on the expected device cpu!",
    ]
