"""Shared fixtures: simulate the hardware of the machines the series promises to run on.

No GPU is needed: `torch.cuda.device_count` and `torch.backends.mps.is_available` are
monkeypatched, which is all the device-selection helpers consult. Tensors are never
allocated on the simulated devices, since the hardware is not really there.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # utils and tools, as `make` runs them from the root

MACHINES = {
    # name: (number of CUDA GPUs, Apple MPS available)
    "cpu-only": (0, False),
    "one-cuda-gpu": (1, False),
    "two-cuda-gpus": (2, False),
    "apple-mps": (0, True),
}


@pytest.fixture
def machine(monkeypatch):
    """Return a function that makes torch report the given machine's hardware."""
    import torch  # here, not at the top: `make lint` runs tests/test_lesson_text.py without torch

    def simulate(name: str) -> None:
        n_cuda, mps = MACHINES[name]
        monkeypatch.setattr(torch.cuda, "device_count", lambda: n_cuda)
        monkeypatch.setattr(torch.cuda, "is_available", lambda: n_cuda > 0)
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)

    return simulate


@pytest.fixture
def series_at(monkeypatch):
    """Return a function that points the tools (tools/series.py, sync_notebooks, i18n) at another
    repository root, as if they had been copied there: `make sync` run in a scratch repository."""

    def point(root: Path) -> None:
        from tools import i18n, series, sync_notebooks

        notebooks = root / "notebooks"
        for module in (series, sync_notebooks):
            monkeypatch.setattr(module, "ROOT", root)
        monkeypatch.setattr(series, "NOTEBOOKS", notebooks)
        monkeypatch.setattr(series, "SOLUTIONS", notebooks / "solutions")
        for name, value in (("ROOT", root), ("NOTEBOOKS", notebooks), ("I18N", root / "i18n/zh"),
                            ("ZH", notebooks / "zh"), ("README", root / "README.md"),
                            ("README_ZH", root / "README.zh-CN.md"), ("README_PO", root / "i18n/zh/README.po"),
                            ("MESSAGES_PO", root / "i18n/zh/messages.po"),
                            ("GLOSSARY", root / "i18n/zh/glossary.md")):
            monkeypatch.setattr(i18n, name, value)

    return point
