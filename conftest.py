"""pytest in a checkout runs the notebooks as `make test` does.

`pytest notebooks/03_copies_between_devices.ipynb` (or `pytest --lf`) runs strict nbval
(`--nbval --nbval-current-env`, in pyproject.toml) with the series' sanitizer, and the
notebooks' setup cell takes this checkout's utils.py instead of fetching the pinned one from
GitHub. Both are set here, where pytest reads them, so the Makefile adds nothing of its own.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent
SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"

# Kernels started by nbval inherit this process's environment.
# The setup cell of every notebook reads GPU_LESSONS_URL (see tools/sync_notebooks.py).
os.environ.setdefault("GPU_LESSONS_URL", (ROOT / "utils.py").as_uri())
# Test kernels print short tracebacks (tests/ipython/profile_default/ipython_config.py).
os.environ.setdefault("IPYTHONDIR", str(ROOT / "tests" / "ipython"))


def pytest_configure(config):
    option = config.option
    if getattr(option, "nbval", False) and not getattr(option, "nbval_sanitize_with", None):
        option.nbval_sanitize_with = str(SANITIZE)
