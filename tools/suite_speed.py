"""Benchmark: strict nbval over the series against its floor.

The floor is the same number of notebooks whose only cell is `import torch`, run with the
same pytest options and IPython settings (run it through `make bench-suite`). The ratio
(series / floor) is what the issue tracker asks about; it is a measurement, not a test,
so it never fails a build. Usage:

  python -m tools.suite_speed [--repeat 3] [--upto NN] PYTEST ARGS ...   (make bench-suite: nbval options)

--upto 05 measures lessons 00-05 and their solutions only: the lessons that must stay within
1.5x their floor (later lessons compute on purpose and are held to a time budget instead).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from tools.series import ROOT, all_notebooks


def pytest_seconds(target: list[str], pytest_args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "-q", *pytest_args, *target], cwd=ROOT, check=True,
                   capture_output=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--upto", help="only lessons numbered up to this one (and their solutions), e.g. 05")
    args, pytest_args = parser.parse_known_args()
    # pyproject.toml turns nbval on for the series; the floor's notebooks lie outside the
    # checkout, where pytest reads no configuration, so both runs name it.
    pytest_args = ["--nbval", "--nbval-current-env", *pytest_args]
    notebooks = [p for p in all_notebooks() if args.upto is None or p.name[:2] <= args.upto]
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(len(notebooks)):
            nb = nbformat.v4.new_notebook()
            cell = nbformat.v4.new_code_cell("import torch")
            cell.execution_count = 1
            nb.cells = [cell]
            nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
            nbformat.write(nb, Path(tmp) / f"floor_{k:02d}.ipynb")
        # the same notebooks, in the same (reverse reading) order as `make test`
        in_order = sorted((str(p.relative_to(ROOT)) for p in notebooks), reverse=True)
        series = [statistics.median(pytest_seconds(in_order, pytest_args) for _ in range(args.repeat))]
        floor = [statistics.median(pytest_seconds([tmp], pytest_args) for _ in range(args.repeat))]
    ratio = series[0] / floor[0]
    print(f"{len(notebooks)} notebooks, median of {args.repeat} runs, pytest {' '.join(pytest_args)}")
    print(f"series (strict nbval): {series[0]:6.1f} s")
    print(f"floor (import torch):  {floor[0]:6.1f} s")
    print(f"ratio:                 {ratio:6.2f}x (target: at most 1.5x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
