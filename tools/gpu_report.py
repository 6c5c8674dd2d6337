"""One report from a GPU machine, and a record of what every cell printed there.

For a GPU machine with its own python and torch but no network, whoever owns it (an HPC compute
node, an air-gapped VM, a self-hosted runner). CONTRIBUTING.md, "A GPU machine without network",
goes through it step by step:

  python -m tools.gpu_report packages > gpu-packages.txt          (make gpu-packages, THERE)
      Only the standard library. The Python packages that python has (name==version), after a
      header with its Python version, implementation, ABI and wheel platform tags.

  python -m tools.gpu_report wheels --packages gpu-packages.txt [--dest .whl] [--max-mib N]
                                    [--python-version X.Y] [--platform TAG ...] [--abi TAG ...]
      (make gpu-wheels PACKAGES=gpu-packages.txt, HERE: it needs the package index)
      Download the wheels the suite needs there (pyproject.toml's `run` group, pytest,
      pytest-xdist and nbval) less what that machine already has, at versions that fit the
      versions it has; never torch, triton, nvidia-* or cuda-*, whose builds there are the point.
      The target comes from the file's header; the options override it.

  python -m tools.gpu_report run [--notebooks NB ...] [--steps ...] [--out DIR] [--budget S]
                                 PYTEST ARGS ...          (make gpu-report PYTHON=its-python, THERE)
      With that machine's python (the one running this): installs the wheels of .whl/ into
      build/gpu-site/ and puts that first on PYTHONPATH, then
        preflight    python, torch, the GPUs, the Jupyter packages, and which settings to run:
                     "one GPU" (CUDA_VISIBLE_DEVICES=0) and "no GPU" (CUDA_VISIBLE_DEVICES=),
                     and "all GPUs" first where torch sees several;
        nbval        strict nbval under the first setting (tools/gpu_suite.py's run_setting);
        side-by-side every notebook under every setting (fresh kernel, cwd = its folder), each
                     cell's outputs side by side, unsanitized (what a reader there sees), and
                     the record of the run: build/gpu-report/record/<name>.json (tools/gpu_runs.py);
        bench        tools/bench.py (build/bench.json);
        nbval        under the other settings.
      A failing step does not stop the next, and the report is rewritten after every step. It goes
      to build/gpu-report/: report.md (every table and every cell), tables.txt, bench.json,
      record/, notebooks/*.md (one per notebook), logs/. --out DIR also writes a compact copy
      there: report.md, bench.json, record/ and gpu-report.log (every log, concatenated).
      No time budget and no cut of any output or log unless asked for (--budget, --output-chars,
      --log-kib). Exits 0 only if every step passed and torch saw a GPU (ALLOW_NO_GPU=1: a GPU is
      not required; the record then says gpu: false and is named so).

Only the standard library at import time: this runs before the wheels are installed.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from tools import gpu_runs, gpu_suite

ROOT = gpu_suite.ROOT
WHEELS = ROOT / ".whl"
SITE = ROOT / "build" / "gpu-site"
REPORT = ROOT / "build" / "gpu-report"
STEPS = ("install", "nbval", "side-by-side", "bench")

# Never carried: the GPU machine's own builds of these are the point of the exercise.
NEVER = re.compile(r"^(torch|torchvision|torchaudio|triton|nvidia-.*|cuda-.*|jax.*|cupy.*)$")
# What runs the notebooks under strict nbval, beyond pyproject.toml's `run` group.
HARNESS = ("pytest", "pytest-xdist", "nbval")
NO_PACKAGES = ("wheels needs the GPU machine's package list. On that machine, in this checkout, run\n"
               "  python -m tools.gpu_report packages > gpu-packages.txt   (or: make gpu-packages PYTHON=its-python)\n"
               "with the python that will run the report, bring gpu-packages.txt here, then\n"
               "  make gpu-wheels PACKAGES=gpu-packages.txt")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


# ---------------------------------------------------------- the GPU machine's package list


class NoTags(RuntimeError):
    """This machine's wheel platform tags cannot be derived here."""


def interpreter() -> dict[str, str]:
    """This python, as pip's target options name it (--python-version, --implementation, --abi)."""
    major, minor = sys.version_info[:2]
    impl = {"cpython": "cp", "pypy": "pp"}.get(sys.implementation.name, sys.implementation.name)
    if impl == "cp":  # as packaging.tags names CPython's ABI: d for a debug build, t for free-threading
        debug = sysconfig.get_config_var("Py_DEBUG")
        debug = debug if debug is not None else hasattr(sys, "gettotalrefcount")
        abi = f"cp{major}{minor}{'d' if debug else ''}{'t' if sysconfig.get_config_var('Py_GIL_DISABLED') else ''}"
    else:
        abi = "_".join((sysconfig.get_config_var("SOABI") or "").split("-")[:2])
    return {"python-version": f"{major}.{minor}", "implementation": impl, "abi": abi}


def platform_tags() -> list[str]:
    """The wheel platform tags this machine runs, most specific first: on Linux every manylinux
    tag its glibc allows (PEP 600, with the older manylinux2014/2010/1 names), on Windows the
    interpreter's own tag. Elsewhere NoTags: pass --platform to gpu-wheels."""
    plat = sysconfig.get_platform()  # linux-x86_64, win-amd64, macosx-11.0-arm64
    if sys.platform == "win32":
        return [plat.replace("-", "_").replace(".", "_")]
    if not sys.platform.startswith("linux"):
        raise NoTags(f"no CUDA wheels are built for {plat}; pass --platform TAG to gpu-wheels if you need them")
    arch = plat.split("-", 1)[1]
    if arch == "x86_64" and sys.maxsize <= 2**32:  # a 32-bit python on a 64-bit kernel
        arch = "i686"
    try:
        libc, _, version = (os.confstr("CS_GNU_LIBC_VERSION") or "").partition(" ")
    except (ValueError, OSError):
        libc, version = platform.libc_ver()
    if libc != "glibc" or not re.match(r"2\.\d+", version):
        raise NoTags(f"this Linux has no glibc 2.x ({libc or 'unknown C library'}): pass --platform TAG to gpu-wheels")
    floor = 5 if arch in ("x86_64", "i686") else 17
    legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
    tags = []
    for minor in range(int(version.split(".")[1]), floor - 1, -1):
        tags.append(f"manylinux_2_{minor}_{arch}")
        if minor in legacy:
            tags.append(f"{legacy[minor]}_{arch}")
    return tags


def packages() -> str:
    """The text of gpu-packages.txt: a header, then this python's distributions, one name==version a line."""
    import importlib.metadata

    head = interpreter()
    try:
        head["platform"] = " ".join(platform_tags())
    except NoTags as err:
        print(f"gpu-packages: no platform line: {err}", file=sys.stderr)
    head["executable"] = sys.executable
    found: dict[str, str] = {}
    for dist in importlib.metadata.distributions():  # in sys.path order: the first is the one imported
        if dist.metadata["Name"]:
            found.setdefault(normalize(dist.metadata["Name"]), dist.version)
    return ("# The Python packages of a GPU machine, for `make gpu-wheels PACKAGES=this-file` (tools/gpu_report.py).\n"
            + "".join(f"# {key}: {value}\n" for key, value in head.items())
            + "".join(f"{name}=={version}\n" for name, version in sorted(found.items())))


def read_packages(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(header, {normalized name: version}) of a file `packages` wrote (or `pip freeze`, headerless)."""
    header, found = {}, {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if m := re.match(r"#\s*([a-z-]+):\s*(.*)$", line):
            header[m[1]] = m[2].strip()
        elif m := re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:==\s*(\S+))?", line):
            found[normalize(m[1])] = m[2] or ""
    return header, found


# ----------------------------------------------------------------- wheels (here, with network)


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(req: str) -> str:
    return normalize(re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)[1])


def needed() -> list[str]:
    """The requirements the suite needs on the GPU machine (pyproject.toml), torch left out."""
    import tomllib

    groups = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["dependency-groups"]

    def expand(group: str) -> list[str]:
        return [r for item in groups[group]
                for r in (expand(item["include-group"]) if isinstance(item, dict) else [item])]

    wanted = [*expand("run"), *(r for r in expand("dev") if requirement_name(r) in HARNESS)]
    return [r for r in wanted if not NEVER.match(requirement_name(r))]


def carried(install: list[dict], needed: list[str], present: set[str]) -> list[tuple[str, str]]:
    """The (name, version) pairs to carry, from pip's installation report for ``needed``: what is
    reachable from ``needed`` without passing through a package ``present`` on the GPU machine
    (whose own copy then brings its own needs) or one that is NEVER carried."""
    nodes = {normalize(i["metadata"]["name"]): i["metadata"] for i in install}
    keep, todo = {}, [requirement_name(n) for n in needed]
    while todo:
        name = todo.pop()
        if name in keep or name not in nodes or name in present or NEVER.match(name):
            continue
        meta = nodes[name]
        keep[name] = meta["version"]
        for req in meta.get("requires_dist", []):
            if not re.search(r"\bextra\s*==", req.partition(";")[2]):
                todo.append(requirement_name(req))  # pip dropped it if its marker is false there
    return sorted(keep.items())


def wheels(dest: Path, target: list[str], present: dict[str, str], max_mib: float | None) -> int:
    """Fetch into ``dest`` what the suite needs for ``target`` (pip's target options) and ``present``
    lacks, resolved with ``present``'s own versions pinned (those from an index: no local +tag)."""
    target = ["--only-binary=:all:", *target]
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    with tempfile.TemporaryDirectory() as tmp:
        report, pins = Path(tmp) / "report.json", Path(tmp) / "pins.txt"
        pins.write_text("".join(f"{n}=={v}\n" for n, v in present.items() if v and "+" not in v and not NEVER.match(n)))
        resolve = subprocess.run([*pip, "install", "--dry-run", "--ignore-installed", "--quiet", "--report",
                                  str(report), "--target", str(Path(tmp) / "target"), "-c", str(pins), *target,
                                  *needed()])
        if resolve.returncode != 0:
            print("pip found no wheels that fit the versions the GPU machine has (pinned from its package list; "
                  "see pip's message above). To carry a newer copy of one of its packages, delete that line "
                  "from the list.", file=sys.stderr)
            return 1
        install = json.loads(report.read_text(encoding="utf-8"))["install"]
    keep = carried(install, needed(), set(present))
    left_out = sorted({normalize(i["metadata"]["name"]) for i in install} - {n for n, _ in keep})
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.glob("*.whl"):  # one version of each: two would stop the install
        old.unlink()
    subprocess.run([*pip, "download", "--quiet", "--no-deps", "-d", str(dest), *target,
                    *[f"{n}=={v}" for n, v in keep]], check=True)
    files = sorted(dest.glob("*.whl"))
    total = sum(f.stat().st_size for f in files)
    for f in files:
        print(f"  {f.stat().st_size / 2**20:6.2f} MiB  {f.name}")
    print(f"{len(files)} wheels in {dest}: {total / 2**20:.1f} MiB in all")
    print("left to the GPU machine's own packages: " + ", ".join(left_out))
    if max_mib is not None and total > max_mib * 2**20:
        print(f"More than --max-mib {max_mib:g}.", file=sys.stderr)
        return 1
    return 0


# ------------------------------------------------------------- in the GPU machine's python


def preflight() -> dict:
    """Runs with build/gpu-site on PYTHONPATH: what this python has, and where it comes from."""
    import importlib

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    found: dict = {"python": sys.executable, "python_version": platform.python_version(), "cpus": cpus,
                   "packages": {}}
    for module in ["torch", "numpy", "matplotlib", "sklearn", "pytest", "xdist", "nbval", "ipykernel",
                   "jupyter_client", "nbclient", "nbformat", "IPython", "zmq", "tornado"]:
        try:
            mod = importlib.import_module(module)
            where = str(Path(mod.__file__).parent.parent) if getattr(mod, "__file__", None) else "?"
            version = getattr(mod, "__version__", None) or getattr(mod, "version", "?")
            found["packages"][module] = {"version": str(version), "from": where}
        except Exception as err:  # report it, whatever it is
            found["packages"][module] = {"version": "MISSING", "from": f"{type(err).__name__}: {err}"}
    try:
        import torch

        found["torch"], found["cuda"] = torch.__version__, torch.version.cuda
        found["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    except Exception as err:
        found["gpus_error"] = f"{type(err).__name__}: {err}"
    return found


def nbval_mode(cell: dict) -> str:
    """What strict nbval does with a cell's output, decided by nbval's own reading of its tags and
    comment markers (the comments win, as in nbval's collect)."""
    import warnings

    from nbval.plugin import find_comment_markers, find_metadata_tags

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbval's warnings on conflicting markers: pytest shows them
        options = dict(find_metadata_tags(cell.get("metadata", {})))
        options.update(find_comment_markers(cell.get("source", "")))
    if options.get("skip"):
        return "skipped"
    if options.get("check_exception"):
        return "must raise"
    return "ignored" if options.get("check") is False else "checked"


def render(outputs: list[dict]) -> str:
    """A cell's outputs as a reader sees them, as text: streams, text/plain (or a note of what else
    was shown, images included), errors as `Name: message`. No colour codes."""
    parts = []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            text = "".join(out.get("text", ""))
            parts.append(text if out.get("name") != "stderr" else "".join(f"[stderr] {line}" for line in
                                                                          text.splitlines(keepends=True)))
        elif kind in ("execute_result", "display_data"):
            data = out.get("data", {})
            shown = ["".join(data["text/plain"])] if "text/plain" in data else []
            shown += [f"<{mime}, {len(''.join(v))} bytes>" for mime, v in data.items() if mime.startswith("image/")]
            if not shown:
                shown = ["<" + ", ".join(data) + ">"]
            parts.append("\n".join(shown) + "\n")
        elif kind == "error":
            parts.append(f"{out.get('ename')}: {out.get('evalue')}\n")
    return ANSI.sub("", "".join(parts))


def execute(path: Path, deadline: float, cell_timeout: float) -> dict:
    """Run a notebook in a fresh kernel of this python (nbval's --nbval-current-env kernel; cwd: its
    folder), every cell even after an error, and return each code cell's rendered outputs. Stops at
    ``deadline`` (monotonic) with what it has."""
    import asyncio

    import nbformat
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    km = AsyncKernelManager(kernel_name=CURRENT_ENV_KERNEL_NAME, kernel_spec_manager=NbvalKernelspecManager())
    client = NotebookClient(nb, km=km, allow_errors=True, resources={"metadata": {"path": str(path.parent)}})
    status = "ok"

    async def run() -> None:
        nonlocal status
        async with client.async_setup_kernel(cleanup_kc=True):
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                left = deadline - time.monotonic()
                if left < 1:
                    status = f"stopped: out of time after {client.code_cells_executed} code cells"
                    return
                client.timeout = int(min(cell_timeout, left)) + 1
                await client.async_execute_cell(cell, index, execution_count=client.code_cells_executed + 1)

    start = time.perf_counter()
    try:
        asyncio.run(run())
    except Exception as err:  # a cell past its time, a dead kernel: keep what ran
        status = f"{type(err).__name__}: {ANSI.sub('', str(err)).strip().splitlines()[-1][:200] if str(err) else ''}"
    # numbered as nbval names them (its "Cell N" counts code cells only)
    cells = [{"index": i, "id": c.get("id") or f"Cell {i}", "first_line": (c.source.strip().splitlines() or [""])[0],
              "code": gpu_runs.fingerprint(c.source),
              "nbval": nbval_mode(c), "output": render(c.get("outputs", [])),
              "error": any(o.get("output_type") == "error" for o in c.get("outputs", []))}
             for i, c in enumerate(c for c in nb.cells if c.cell_type == "code")]
    return {"notebook": str(path), "status": status, "seconds": round(time.perf_counter() - start, 1),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"), "cells": cells}


# ------------------------------------------------------------------- comparing and writing


def sanitizer(pytest_args: list[str]):
    """The string function nbval applies to both sides: the patterns of the file given with
    --nbval-sanitize-with, read by nbval's own parser (identity without one). Image lines go, as
    nbval does not compare images."""
    from nbval.plugin import get_sanitize_patterns

    options = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    options.add_argument("--nbval-sanitize-with", "--sanitize-with", dest="path")
    path = options.parse_known_args(pytest_args)[0].path
    pairs: dict[str, str] = {}
    if path:  # an OrderedDict updated from the file's pairs, as nbval's setup_sanitize_files keeps them
        pairs.update(get_sanitize_patterns((ROOT / path).read_text(encoding="utf-8")))

    def sanitize(text: str) -> str:
        text = "\n".join(line for line in text.splitlines() if not re.fullmatch(r"<image/[\w+.-]+, \d+ bytes>", line))
        for regex, replace in pairs.items():
            text = re.sub(regex, replace, text)
        return text

    return sanitize


def fence(text: str, cut: int | None = None) -> str:
    if cut is not None and len(text) > cut:
        text = text[:cut] + f"\n[... {len(text) - cut} more characters]"
    return "````text\n" + (text.rstrip("\n") or "(no output)") + "\n````\n"


def side_by_side(name: str, runs: dict[str, dict | None], sanitize, cut: int | None = None) -> tuple[str, tuple]:
    """One notebook's cells, each setting's output beside the others (the first setting with a GPU,
    the last with none): (markdown, summary row)."""
    status = {s: (f"{r['status']}, {r['seconds']:.0f} s" if r else "did not run") for s, r in runs.items()}
    cells = {s: {c["index"]: c for c in (r["cells"] if r else [])} for s, r in runs.items()}
    indices = sorted({i for by_index in cells.values() for i in by_index})
    lines = [f"### {name}", "", " · ".join(f"{s}: {v}" for s, v in status.items()), ""]
    differ = after = 0
    for i in indices:
        got = {s: cells[s].get(i) for s in runs}
        some = next(c for c in got.values() if c)
        head = f"#### Cell {i} `{some['id']}` · `{some['first_line'][:90]}` · nbval: {some['nbval']}"
        outputs = {s: c["output"] if c else None for s, c in got.items()}
        if len(set(outputs.values())) == 1:
            lines += [f"{head} · same", "", fence(some["output"], cut)] if some["output"] else [f"{head} · no output",
                                                                                                ""]
            continue
        differ += 1
        if None in outputs.values():
            verdict = "ran under some settings only"
        elif len({sanitize(o) for o in outputs.values()}) == 1:
            verdict = "differs (same after nbval's sanitizer)"
        else:
            verdict, after = "DIFFERS, also after nbval's sanitizer", after + 1
        lines += [f"{head} · {verdict}", ""]
        for s, out in outputs.items():
            lines += [f"{s}:", fence("(not run)" if out is None else out, cut)]
    return "\n".join(lines) + "\n", (name, *status.values(), str(len(indices)), str(differ), str(after))


def md_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """A markdown table padded into aligned columns, so that it reads as plain text too."""
    cells = [tuple(str(c).replace("|", "\\|").replace("\n", " ") for c in row) for row in [header, *rows]]
    widths = [max(3, *(len(r[i]) for r in cells)) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |"  # noqa: E731
    return "\n".join([line(cells[0]), "| " + " | ".join("-" * w for w in widths) + " |", *map(line, cells[1:])])


def record_note(path: Path, data: dict) -> str:
    """The report's paragraph on the record: where it is, and how it gets into the repository."""
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    note = (f"Record: {shown} ({len(data['notebooks'])} notebooks; {', '.join(data['settings'])}). "
            f"Read it; if it is right, copy it into gpu-runs/ and commit it (gpu-runs/README.md).")
    if not data["gpu"]:
        note += (" It was made WITHOUT A GPU (gpu: false, hence its name): it may serve tests, and never "
                 "backs a sentence about a GPU.")
    return note


@dataclass
class Step:
    name: str
    result: str = "not run"
    seconds: float = 0.0
    log: Path | None = None
    extra: list[Path] = field(default_factory=list)  # further logs (one per notebook run)


@dataclass
class Report:
    folder: Path
    out: Path | None
    log_kib: int | None = None  # each log in --out's gpu-report.log: its first and last half of this
    started: float = field(default_factory=time.perf_counter)
    steps: list[Step] = field(default_factory=list)
    verdict: str = "GPU: not probed yet"
    record: str = "Record: none (the side-by-side step has not run)."
    environment: list[str] = field(default_factory=list)
    preflight: dict = field(default_factory=dict)
    settings: dict[str, dict] = field(default_factory=dict)
    suite: list[dict] = field(default_factory=list)
    suite_failures: dict[str, list[str]] = field(default_factory=dict)
    bench: dict | None = None
    notebooks: list[tuple[str, tuple]] = field(default_factory=list)  # (markdown, row)

    def tables(self) -> str:
        parts = [self.verdict, "", self.record, "", *self.environment, "",
                 f"total: {time.perf_counter() - self.started:.0f} s", "",
                 "## Steps", "", md_table(("step", "seconds", "result"),
                                          [(s.name, f"{s.seconds:.0f}", s.result) for s in self.steps])]
        if self.preflight.get("packages"):
            parts += ["", "## Python packages (build/gpu-site first on PYTHONPATH)", "",
                      md_table(("module", "version", "from"), [(m, p["version"], p["from"])
                                                               for m, p in self.preflight["packages"].items()])]
        if self.suite:
            parts += ["", "## Strict nbval (tools/gpu_suite.py)", "",
                      md_table(("setting", "visibility", "GPUs seen", "seconds", "result"),
                               [tuple(r.values()) for r in self.suite])]
            for setting, failed in self.suite_failures.items():
                parts += ["", f"Failed with {setting}:", "", *[f"- `{f}`" for f in failed]]
        if self.bench:
            parts += ["", f"## Bench (tools/bench.py): {self.bench.get('device')} ({self.bench.get('device_name')}), "
                      f"torch {self.bench.get('torch')}, {self.bench.get('threads')} CPU threads", "",
                      md_table(("measurement", "device", "value", "unit", "of peak"),
                               [(m["name"], m["device"], f"{m['value']:g}", m["unit"],
                                 f"{m['fraction_of_peak']:.0%} of {m['peak']:g}" if "peak" in m else "")
                                for m in self.bench.get("measurements", [])])]
        if self.notebooks:
            parts += ["", f"## Each cell under {', '.join(self.settings)} (unsanitized; notebooks/*.md)", "",
                      md_table(("notebook", *self.settings, "code cells", "outputs differ", "differ after sanitizer"),
                               [row for _, row in self.notebooks])]
        return "\n".join(parts) + "\n"

    def write(self) -> None:
        """Everything so far, in build/gpu-report/ and (compact) in --out: called after every step."""
        tables = self.tables()
        body = "# GPU report\n\n" + tables + "".join("\n" + md for md, _ in self.notebooks)
        (self.folder / "tables.txt").write_text(tables, encoding="utf-8")
        (self.folder / "report.md").write_text(body, encoding="utf-8")
        if self.out:
            self.out.mkdir(parents=True, exist_ok=True)
            (self.out / "report.md").write_text(body, encoding="utf-8")
            for name in ("bench.json", "record"):
                source = self.folder / name
                if source.is_file():
                    shutil.copyfile(source, self.out / name)
                elif source.is_dir():
                    shutil.copytree(source, self.out / name, dirs_exist_ok=True)
            self.write_log(self.out / "gpu-report.log")

    def write_log(self, target: Path) -> None:
        half = self.log_kib * 512 if self.log_kib else None
        with open(target, "wb") as sink:
            for step in self.steps:
                for log in [step.log, *step.extra]:
                    if log and log.is_file():
                        data = log.read_bytes()
                        if half is not None and len(data) > 2 * half:
                            data = data[:half] + b"\n[... cut (--log-kib) ...]\n" + data[-half:]
                        sink.write(f"\n===== {step.name}: {log.relative_to(self.folder)} =====\n".encode())
                        sink.write(data)


class Runner:
    """Runs the steps (within a budget, if one is given); each step's failure is recorded, never raised."""

    def __init__(self, report: Report, budget: float | None):
        self.report = report
        self.deadline = time.monotonic() + budget if budget is not None else float("inf")
        self.logs = report.folder / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)

    def step(self, name: str, action, timeout: float, minimum: float = 20) -> Step:
        step = Step(name, log=self.logs / f"{len(self.report.steps) + 1:02d}-{gpu_runs.slug(name)}.log")
        self.report.steps.append(step)
        allowed = min(timeout, self.deadline - time.monotonic() - 5)
        print(f"\n=== {name} (at most {max(allowed, 0):.0f} s) ===", flush=True)
        if allowed < minimum:
            step.result = "not run: out of time (--budget)"
        else:
            start = time.perf_counter()
            try:
                step.result = action(step, allowed)
            except Exception as err:  # the next step runs all the same
                step.result = f"FAILED: {type(err).__name__}: {err}"
            step.seconds = time.perf_counter() - start
        print(f"{name}: {step.result} ({step.seconds:.0f} s)", flush=True)
        try:
            self.report.write()
        except OSError as err:
            print(f"could not write the report: {err}", flush=True)
        return step


def base_environment(site: bool) -> dict[str, str]:
    """The caller's environment (the Makefile's exports included), with build/gpu-site first on
    PYTHONPATH when ``site`` (the wheels were installed there), so that every python started from
    here, the kernels included, sees them."""
    env = dict(os.environ)
    if site:
        env["PYTHONPATH"] = os.pathsep.join(p for p in [str(SITE), env.get("PYTHONPATH", "")] if p)
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("IPYTHONDIR", str(ROOT / "tests" / "ipython"))  # short tracebacks, as `make` sets
    return env


def suite_failures(log: Path) -> list[str]:
    text = ANSI.sub("", log.read_text(encoding="utf-8", errors="replace")) if log.is_file() else ""
    return sorted({m.group(1) for m in re.finditer(r"^FAILED (.+?)(?: - .*)?$", text, flags=re.MULTILINE)})


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown"


def install_wheels(found: list[Path], site: Path, env: dict[str, str], timeout: float, log: Path) -> str:
    """Install ``found`` into ``site`` (emptied first) as `pip install --no-deps --target` does; where this
    python has no pip, unpack them (a wheel is a zip of exactly what --target puts in place)."""
    shutil.rmtree(site, ignore_errors=True)  # never last run's wheels
    if importlib.util.find_spec("pip") is None:
        for wheel in found:
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(site)
        log.write_text(f"no pip in {sys.executable}: unpacked {len(found)} wheels into {site}\n", encoding="utf-8")
    else:
        code, _ = gpu_suite.run_logged([sys.executable, "-m", "pip", "install", "--disable-pip-version-check",
                                        "--no-index", "--no-deps", "--target", str(site), *map(str, found)],
                                       env, timeout, log)
        if code != 0:
            return f"FAILED (exit {code})"
    return f"ok: {len(found)} wheels into {site.relative_to(ROOT) if site.is_relative_to(ROOT) else site}"


def run(args: argparse.Namespace, pytest_args: list[str]) -> int:
    folder = args.report_dir
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    report = Report(folder, args.out, args.log_kib)
    runner = Runner(report, args.budget)
    allow_no_gpu = os.environ.get("ALLOW_NO_GPU", "").lower() in ("1", "true", "yes")
    notebooks: list[str] = list(args.notebooks or [])
    state: dict = {"env": base_environment(site=False), "seen": {}}

    def install(step: Step, timeout: float) -> str:
        found = sorted(args.wheels.glob("*.whl"))
        if not found:
            shutil.rmtree(SITE, ignore_errors=True)  # never last run's wheels
            return f"skipped: no wheels in {args.wheels} (make gpu-wheels): using what this python has"
        result = install_wheels(found, SITE, state["env"], timeout, step.log)
        if result.startswith("ok"):
            state["env"] = base_environment(site=True)
        return result

    def check(step: Step, timeout: float) -> str:
        nonlocal notebooks
        env = state["env"]
        listed = gpu_suite.listed_gpus()
        probes = state["probes"] = gpu_suite.probe_settings(env, timeout=timeout / 3)
        seen = state["seen"] = probes[gpu_suite.ALL]
        probe = subprocess.run([sys.executable, "-m", "tools.gpu_report", "preflight"], cwd=ROOT, text=True,
                               env=gpu_suite.environment(gpu_suite.ALL, env), capture_output=True, timeout=timeout / 3)
        step.log.write_text(f"nvidia-smi -L:\n{chr(10).join(listed)}\n\n" + "".join(
            f"torch, {gpu_suite.describe(v)}: {p}\n" for v, p in probes.items()) +
            f"\npreflight:\n{probe.stdout}\n{probe.stderr}", encoding="utf-8")
        found = report.preflight = json.loads(probe.stdout) if probe.returncode == 0 else {}
        several = seen.get("count", 0) > 1
        report.settings = {label: {"CUDA_VISIBLE_DEVICES": visible, "gpus_seen": probes[visible].get("count", 0)}
                           for label, visible in gpu_suite.SETTINGS if label != "all GPUs" or several}
        refused = gpu_suite.refusal(listed, seen, allow_no_gpu=True)
        if refused:
            report.verdict = f"NOT A GPU RUN: {refused}"
        elif seen.get("count"):
            report.verdict = (f"GPU: torch {seen['torch']} (CUDA {seen['cuda']}) sees {seen['count']} GPU(s): "
                              + ", ".join(found.get("gpus", [])))
        else:
            report.verdict = ("NO GPU: nvidia-smi lists none and torch sees none; every result below is the "
                              "CPU path, under every setting.")
        if "gpus" in found:
            state["machine"] = {"gpus": found["gpus"], "gpu_count": len(found["gpus"]),
                                "driver": gpu_suite.driver_version(), "torch": found["torch"], "cuda": found["cuda"],
                                "python": found["python_version"], "cpus": found["cpus"]}
        report.environment = [f"python: {sys.executable} ({platform.python_version()}), {found.get('cpus')} CPUs",
                              f"pytest options: {' '.join(pytest_args)}",
                              "nvidia-smi -L: " + ("; ".join(listed) or "no GPU listed"),
                              f"driver: {state.get('machine', {}).get('driver')}",
                              "settings: " + ", ".join(f"{s} ({gpu_suite.describe(v['CUDA_VISIBLE_DEVICES'])}, torch "
                                                       f"sees {v['gpus_seen']})" for s, v in report.settings.items()),
                              *[f"{k}={env[k]}" for k in sorted(env) if k.startswith(("GPU_LESSONS", "CUDA_VISIBLE"))
                                or k in ("IPYTHONDIR", "PYTHONPATH")]]
        if not notebooks:
            sys.path.insert(0, str(SITE))  # tools.series reads notebooks with nbformat, from the wheels
            notebooks = gpu_suite.default_notebooks()
        report.environment.append(f"notebooks: {len(notebooks)}")
        missing = [m for m, p in found.get("packages", {}).items() if p["version"] == "MISSING"]
        if probe.returncode != 0:
            return f"FAILED: the preflight probe exited {probe.returncode} (see the log)"
        if refused or missing or "gpus_error" in found:
            return "FAILED: " + " ".join(filter(None, [refused, found.get("gpus_error"),
                                                       missing and f"missing: {', '.join(missing)}"]))
        return "ok" if seen.get("count") else "ok, but no GPU"

    def suite(setting: str):
        def action(step: Step, timeout: float) -> str:
            row = gpu_suite.run_setting(setting, report.settings[setting]["CUDA_VISIBLE_DEVICES"], state["probes"],
                                        notebooks, pytest_args, state["env"], timeout, step.log)
            report.suite.append(row)
            if failed := suite_failures(step.log):
                report.suite_failures[setting] = failed
            return row["result"]
        return action

    def compare(step: Step, timeout: float) -> str:
        deadline = time.monotonic() + timeout - 20
        runs_dir = folder / "runs"
        runs_dir.mkdir(exist_ok=True)
        jobs = [(nb, s) for nb in notebooks for s in report.settings]
        paths = {job: runs_dir / f"{gpu_runs.slug(job[0])}--{gpu_runs.slug(job[1])}" for job in jobs}  # no dot
        step.extra = [p.with_suffix(".log") for p in paths.values()]

        def one(job: tuple[str, str]) -> None:
            cmd = [sys.executable, "-m", "tools.gpu_report", "execute", str(ROOT / job[0]), "--json",
                   str(paths[job].with_suffix(".json")), "--seconds", str(max(1, int(deadline - time.monotonic())))]
            env = gpu_suite.environment(report.settings[job[1]]["CUDA_VISIBLE_DEVICES"], state["env"])
            gpu_suite.run_logged(cmd, env, max(1, deadline - time.monotonic() + 15), paths[job].with_suffix(".log"))

        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            list(pool.map(one, jobs))
        runs: dict[str, dict[str, dict | None]] = {}
        for (nb, s), path in paths.items():
            done = path.with_suffix(".json")
            runs.setdefault(nb, {})[s] = json.loads(done.read_text(encoding="utf-8")) if done.is_file() else None
        bad = sum(r is None or r["status"] != "ok" for by_setting in runs.values() for r in by_setting.values())
        sanitize = sanitizer(pytest_args)
        (folder / "notebooks").mkdir(exist_ok=True)
        for nb, by_setting in runs.items():
            md, row = side_by_side(nb, by_setting, sanitize, args.output_chars)
            (folder / "notebooks" / f"{Path(nb).stem}.md").write_text(md, encoding="utf-8")
            report.notebooks.append((md, row))
        if "machine" not in state:
            report.record = "Record: none (the preflight could not say what torch sees)."
            return "FAILED: no record without the preflight's machine"
        data = gpu_runs.build(datetime.datetime.now(datetime.UTC).date().isoformat(), git_commit(),
                              state["machine"], report.settings, runs)
        data["runs_at_once"] = args.jobs  # notebooks run side by side: 1 is a quiet machine
        report.record = record_note(gpu_runs.write(data, folder / "record"), data)
        return f"ok: {len(jobs)} runs" if not bad else f"FAILED: {bad} of {len(jobs)} runs incomplete"

    def bench(step: Step, timeout: float) -> str:
        cmd = [sys.executable, "-m", "tools.bench", *(["--quick"] if args.quick_bench else [])]
        code, _ = gpu_suite.run_logged(cmd, state["env"], timeout, step.log)
        target = ROOT / "build" / "bench.json"
        if code == 0 and target.is_file():
            shutil.copyfile(target, folder / "bench.json")
            report.bench = json.loads(target.read_text(encoding="utf-8"))
            return "ok"
        return "FAILED: timed out" if code is None else f"FAILED (exit {code})"

    if "install" in args.steps:
        runner.step("install wheels", install, args.step_timeout)
    runner.step("preflight", check, args.step_timeout)
    if notebooks and report.settings:
        first, *others = report.settings
        if "nbval" in args.steps:
            runner.step(f"nbval, {first}", suite(first), args.suite_timeout)
        if "side-by-side" in args.steps:
            runner.step("side by side", compare, args.compare_timeout, minimum=60)
        if "bench" in args.steps:
            runner.step("bench", bench, args.step_timeout)
        for setting in others if "nbval" in args.steps else []:
            runner.step(f"nbval, {setting}", suite(setting), args.suite_timeout)
    report.write()
    print("\n" + report.tables())
    print(f"written to {folder.relative_to(ROOT) if folder.is_relative_to(ROOT) else folder}/"
          + (f" and {args.out}/" if args.out else ""))
    passed = all(s.result.startswith(("ok", "passed", "skipped")) for s in report.steps)
    return 0 if passed and (state["seen"].get("count") or allow_no_gpu) else 1


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("packages", help="on the GPU machine: its Python packages, for wheels (make gpu-packages)")
    p = sub.add_parser("wheels", help="fetch the wheels the GPU machine lacks (make gpu-wheels)", allow_abbrev=False)
    p.add_argument("--packages", type=Path, help="what `packages` wrote on the GPU machine (required)")
    p.add_argument("--dest", type=Path, default=WHEELS)
    p.add_argument("--python-version", help="default: the package list's header")
    p.add_argument("--implementation", help="default: the package list's header")
    p.add_argument("--abi", action="append", dest="abis", help="default: the package list's header")
    p.add_argument("--platform", action="append", dest="platforms", help="default: the package list's header")
    p.add_argument("--exclude", action="append", default=[], help="a package also there already")
    p.add_argument("--max-mib", type=float, help="fail if the wheels come to more (default: no limit)")
    p = sub.add_parser("run", help="the report and the record, on the GPU machine (make gpu-report)",
                       allow_abbrev=False)
    p.add_argument("--notebooks", nargs="+", help="default: every notebook")
    p.add_argument("--steps", nargs="+", choices=STEPS, default=list(STEPS),
                   help="default: all (the preflight always runs)")
    p.add_argument("--wheels", type=Path, default=WHEELS, help="the wheels to install (default: .whl/)")
    p.add_argument("--out", type=Path, help="also write report.md, bench.json, record/ and gpu-report.log here")
    p.add_argument("--report-dir", type=Path, default=REPORT)
    p.add_argument("--budget", type=float, help="seconds for everything (default: no budget)")
    p.add_argument("--step-timeout", type=float, default=1800, help="seconds for install, preflight, bench")
    p.add_argument("--suite-timeout", type=float, default=7200, help="seconds for each nbval run")
    p.add_argument("--compare-timeout", type=float, default=7200, help="seconds for the side-by-side runs")
    p.add_argument("--output-chars", type=int, help="cut each output in the reports to this (default: no cut)")
    p.add_argument("--log-kib", type=int, help="cut each log in --out's gpu-report.log to this (default: no cut)")
    p.add_argument("--jobs", type=int, default=1,
                   help="notebook runs at once in the side-by-side step (default 1: the timings and memory "
                        "readings a record keeps come from a quiet machine; the record says how many ran at once)")
    p.add_argument("--quick-bench", action="store_true", help="tools/bench.py --quick")
    sub.add_parser("preflight", help="(internal) what this python has, as JSON")
    p = sub.add_parser("execute", help="(internal) run one notebook, its outputs as JSON")
    p.add_argument("notebook", type=Path)
    p.add_argument("--json", type=Path, required=True)
    p.add_argument("--seconds", type=float, default=3600)
    p.add_argument("--cell-timeout", type=float, default=1800)
    return parser


def main(argv: list[str]) -> int:
    cli = parser()
    args, rest = cli.parse_known_args(argv)
    if args.command == "run" and sys.version_info < (3, 11):  # say so before running anything
        print(f"gpu_report run needs Python 3.11 or newer (pyproject.toml's requires-python); {sys.executable} "
              f"is {platform.python_version()}: pass make gpu-report PYTHON=<a newer python with torch>",
              file=sys.stderr)
        return 2
    if args.command == "run":
        args.report_dir = args.report_dir.resolve()
        args.out = args.out.resolve() if args.out else None
        return run(args, rest)
    if rest:
        cli.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.command == "packages":
        sys.stdout.write(packages())
        return 0
    if args.command == "wheels":
        if args.packages is None:
            cli.error(NO_PACKAGES)
        header, present = read_packages(args.packages)
        version, platforms = args.python_version or header.get("python-version"), args.platforms or \
            header.get("platform", "").split()
        if not version or not platforms:
            cli.error(f"{args.packages} names no {'python-version' if not version else 'platform'} in its header "
                      f"(`python -m tools.gpu_report packages` writes one): pass "
                      f"{'--python-version X.Y' if not version else '--platform TAG'}")
        target = ["--python-version", version,
                  "--implementation", args.implementation or header.get("implementation", "cp"),
                  *[a for abi in args.abis or header.get("abi", "").split() for a in ("--abi", abi)],
                  *[a for p in platforms for a in ("--platform", p)]]
        present |= {normalize(n): "" for n in args.exclude}
        return wheels(args.dest, target, present, args.max_mib)
    if args.command == "preflight":
        print(json.dumps(preflight(), indent=2))
        return 0
    result = execute(args.notebook.resolve(), time.monotonic() + args.seconds, args.cell_timeout)
    args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if result["status"] == "ok" else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
