"""Execute the series' notebooks.

  python -m tools.execute outputs [NOTEBOOK ...]
      Re-create the stored outputs: run each notebook in place on the CPU reference
      (CUDA hidden), then clean it (kernel metadata, no per-cell metadata but tags,
      no ANSI colour codes). Without arguments: every lesson and solutions notebook. Each
      English notebook's zh twin runs after it (once `make sync` gave it the new code): the
      Chinese edition's helpers and checks print Chinese, so its outputs are its own.
      Each lesson's Run All seconds go to notebooks/run_seconds.json, from which `make sync`
      states the lesson's minutes (its prose, code and predict moments at the rates
      tools/sync_notebooks.py states, plus twice that time).

  python -m tools.execute run [--out DIR]
      Run every notebook on the best device of this machine, writing the executed
      copies under DIR (default build/run) and leaving the committed notebooks alone.
      Prints each notebook's line as it finishes, then a table (notebook, device, seconds,
      result); exits 1 if any failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from tools import i18n, sync_notebooks
from tools.series import NOTEBOOKS, ROOT, all_notebooks, read, set_metadata, table, write
from tools.sync_notebooks import RUN_SECONDS

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
KEPT_METADATA = ("tags", "cellView", "jupyter", "diagrams")
# What %%writefile prints, which names the (temporary) folder of the reader's machine: not kept.
WROTE = re.compile(r"(?:(?:Writing|Overwriting|Appending to) \S+\n)+")


def execute(nb: nbformat.NotebookNode, folder: Path, timeout: int = 600, env: dict[str, str] | None = None) -> None:
    """Run every cell in a fresh kernel working in ``folder`` (with ``env``, if given, as its environment)."""
    # The kernel's own stderr only carries start-up chatter; cell errors arrive as outputs.
    kernel = {"stderr": subprocess.DEVNULL} | ({"env": env} if env is not None else {})
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute(**kernel)


def clean(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Strip what differs between runs and machines but teaches nothing."""
    set_metadata(nb)
    for cell in nb.cells:
        # Keep what the series sets on purpose: nbval's tags, the collapsed display (setup, helper and
        # check cells), the names of the diagrams a markdown cell embeds (tools/diagrams.py).
        cell.metadata = {k: v for k, v in cell.metadata.items() if k in KEPT_METADATA and v}
        if cell.cell_type == "code" and cell.source.startswith("%%writefile"):  # "Writing /tmp/x/y.py": a path
            cell.outputs = [o for o in cell.outputs if not (o.output_type == "stream" and WROTE.fullmatch(o.text))]
        for out in cell.get("outputs", []):
            if out.output_type == "error":
                out.traceback = tidy_traceback(out.traceback)
            elif out.output_type == "stream":
                out.text = ANSI.sub("", out.text)
            if "metadata" in out and out.output_type != "stream":
                out.metadata = {}
    return nb


def tidy_traceback(frames: list[str]) -> list[str]:
    """Remove colour codes, show the series' own files by their path in the repository, and fold
    frames inside installed libraries (their paths are this machine's, and they teach nothing)."""
    kept, hidden = [], 0
    for frame in (ANSI.sub("", f) for f in frames):
        if frame.startswith("File "):
            if str(ROOT / ".venv") in frame or str(ROOT) not in frame:
                hidden += 1
                continue
            frame = frame.replace(str(ROOT) + os.sep, "")
        kept.append(frame)
    if hidden:
        kept.insert(-1, f"[{hidden} frame(s) inside installed libraries left out]")
    return kept


def outputs(paths: list[Path]) -> int:
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # the stored outputs are the CPU reference
    import torch

    if torch.backends.mps.is_available():
        print("Stored outputs are the CPU reference; run `make outputs` on a machine without MPS.")
        return 1
    english = [p for p in paths if not p.is_relative_to(i18n.ZH)]
    rows = run_in_place(english)
    if english:  # the zh twins get the new code (and their translated comments) before they run
        sync_notebooks.main([])
    zh = [i18n.zh_path(p) for p in english] + [p for p in paths if p.is_relative_to(i18n.ZH)]
    rows += run_in_place(list(dict.fromkeys(zh)))  # once each, in order: their helpers and checks print Chinese
    print(table(("notebook", "seconds"), rows))
    return 0


def run_in_place(paths: list[Path]) -> list[tuple[str, str]]:
    """Run each notebook in place, clean it and store it; (notebook, seconds) each."""
    rows = []
    for path in paths:
        start = time.perf_counter()
        nb = read(path)
        execute(nb, path.parent)
        write(clean(nb), path)
        seconds = time.perf_counter() - start
        rows.append((str(path.relative_to(ROOT)), f"{seconds:.1f}"))
        print(f"{rows[-1][0]}: {rows[-1][1]} s", flush=True)
        if path.parent == NOTEBOOKS:  # a lesson's Run All time, for the minutes its header states
            record(path.name, seconds)
    return rows


def record(name: str, seconds: float) -> None:
    """Keep one lesson's Run All seconds in notebooks/run_seconds.json (`make sync` reads it)."""
    path = NOTEBOOKS / RUN_SECONDS
    times = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    times[name] = round(seconds, 1)
    path.write_text(json.dumps(dict(sorted(times.items())), indent=1) + "\n", encoding="utf-8")


def run(out_dir: Path) -> int:
    import utils

    device = str(utils.try_gpu())
    rows, failed = [], 0
    print(f"Running {len(all_notebooks())} notebooks on {device}:", flush=True)
    for path in all_notebooks():
        rel = path.relative_to(ROOT)
        nb = read(path)
        start = time.perf_counter()
        try:
            execute(nb, path.parent)
            result = "ok"
        except CellExecutionError as err:
            result = "FAILED: " + (ANSI.sub("", str(err)).strip().splitlines() or ["error"])[-1][:70]
            failed += 1
        rows.append((str(rel), device, f"{time.perf_counter() - start:.1f}", result))
        print(f"  {rows[-1][0]}: {rows[-1][2]} s, {result}", flush=True)
        write(nb, out_dir / rel)
    print(table(("notebook", "device", "seconds", "result"), rows))
    print(f"{len(rows)} notebooks: {len(rows) - failed} ok, {failed} failed; "
          f"executed copies are in {out_dir.relative_to(ROOT)}/")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description="Execute the series' notebooks.")
    sub = parser.add_subparsers(dest="command", required=True)
    p_out = sub.add_parser("outputs", help="re-create the stored outputs (CPU reference)")
    p_out.add_argument("notebooks", nargs="*", type=Path)
    p_run = sub.add_parser("run", help="run every notebook on the best device into build/")
    p_run.add_argument("--out", type=Path, default=ROOT / "build" / "run")
    args = parser.parse_args()
    if args.command == "outputs":
        missing = [str(p) for p in args.notebooks if not p.is_file()]
        if missing:
            parser.error("no such notebook: " + ", ".join(missing))
        return outputs([p.resolve() for p in args.notebooks] or all_notebooks())
    return run(args.out.resolve())


if __name__ == "__main__":
    raise SystemExit(main())
