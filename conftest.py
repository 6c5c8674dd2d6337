"""pytest in a checkout runs the notebooks as `make test` does.

`pytest notebooks/03_copies_between_devices.ipynb` (or `pytest --lf`) runs strict nbval
(`--nbval --nbval-current-env`, in pyproject.toml) with the series' sanitizer, set here, where
pytest reads it, so the Makefile adds nothing of its own. The notebooks' setup cell finds this
checkout's helpers itself (utils.py and exercises/ above the notebook's folder), so nothing is
fetched.

With several workers (`-n 2`), each worker and the kernels it starts get an equal share of the
cores as their number of threads (OMP_NUM_THREADS, unless already set): kernels that each start
a thread per core, side by side, take turns on busy-waiting threads, and a cell that times a loop
until its timings settle then runs many times longer.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent
SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"

# Kernels started by nbval inherit this process's environment. Test kernels print short tracebacks
# (tests/ipython/profile_default/ipython_config.py).
os.environ.setdefault("IPYTHONDIR", str(ROOT / "tests" / "ipython"))


def threads_per_worker(cores: int | None, workers) -> int | None:
    """Threads for each of ``workers`` parallel workers on ``cores`` cores (None: leave torch's default)."""
    if not isinstance(workers, int) or workers < 2 or not cores:
        return None
    return max(1, cores // workers)


def pytest_configure(config):
    option = config.option
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    threads = threads_per_worker(cores, getattr(option, "numprocesses", None))
    if threads is not None and "OMP_NUM_THREADS" not in os.environ:
        os.environ["OMP_NUM_THREADS"] = str(threads)
    if getattr(option, "nbval", False) and not getattr(option, "nbval_sanitize_with", None):
        option.nbval_sanitize_with = str(SANITIZE)


def pytest_collection_finish(session):
    """Freeze what collection created (torch, hypothesis, every test module's import) out of the
    garbage collector's reach: ``release_cached_memory`` (lesson 07) calls ``gc.collect()``, lesson
    08's batch search calls it on every try, and a full collection over those 300,000 objects took
    0.2 s in a test process (0.01 ms after ``gc.freeze()``). Objects the tests create are collected
    as before; frozen ones stay alive, as imported modules do anyway."""
    gc.collect()
    gc.freeze()


def retrying(start):
    """``start`` (nbval's kernel start), started again, up to twice, when the kernel dies before it
    first answers.

    Seen once in three runs of the suite (`make test-repeat`, two workers, while other notebooks'
    processes come and go): "Kernel died before replying to kernel_info", before any cell ran, so
    a retry hides nothing a notebook does. jupyter_client chooses the kernel's ports, frees them,
    and the kernel binds them a moment later, so another process can take one in between.
    nbval has no hook or option around its kernel start, so this wraps its start_new_kernel.
    """
    def start_new_kernel(*args, **kwargs):
        for _ in range(2):
            try:
                return start(*args, **kwargs)
            except RuntimeError as err:
                if "Kernel died before replying" not in str(err):
                    raise
        return start(*args, **kwargs)  # the third try: whatever it raises is raised

    start_new_kernel.retries = True
    return start_new_kernel


try:
    from nbval import kernel as _nbval_kernel
except ImportError:  # pytest without nbval: no kernels to start
    _nbval_kernel = None
if _nbval_kernel is not None and not getattr(_nbval_kernel.start_new_kernel, "retries", False):
    _nbval_kernel.start_new_kernel = retrying(_nbval_kernel.start_new_kernel)
