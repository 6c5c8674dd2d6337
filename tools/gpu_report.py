"""One report from a GPU machine: what the series does there, and what a reader there sees.

  python -m tools.gpu_report wheels [--dest .whl] [--python-version 3.12] [--platform TAG ...]
      (make gpu-wheels; needs the package index, so run it here, not on the GPU machine)
      Download the wheels the notebook suite needs on a GPU machine that has Python, a CUDA
      build of torch, pytest, numpy and matplotlib but no Jupyter: nbval, ipykernel,
      jupyter_client, nbclient, nbformat and what they need, less whatever that machine already
      has (ON_GPU_MACHINE below; never torch, triton or nvidia-*). Prints the total size.

  python -m tools.gpu_report run [--notebooks NB ...] [--out DIR] [--budget S] [--jobs N]
                                 [--quick-bench] PYTEST ARGS ...
      (make gpu-report; PYTEST ARGS are the Makefile's nbval options)
      On the GPU machine, with its own python and torch (the python running this): installs the
      wheels of .whl/ into build/gpu-site/ and puts that on PYTHONPATH, then
        preflight    what python, torch, the GPUs and the Jupyter packages are;
        nbval        strict nbval with all GPUs visible (tools/gpu_suite.py);
        side-by-side every notebook run twice (nbclient, fresh kernel, cwd = its folder): all
                     GPUs visible and CUDA_VISIBLE_DEVICES=, each cell's outputs side by side,
                     unsanitized (what a reader on that GPU sees);
        bench        tools/bench.py (build/bench.json);
        nbval        with one GPU visible, then with none.
      Each step has a timeout and the whole run a budget (default 450 s); a failing or late step
      does not stop the next, and the report is rewritten after every step. It goes to
      build/gpu-report/: report.md (every table and every cell), tables.txt, bench.json,
      notebooks/*.md (one per notebook), logs/. --out DIR also writes a compact copy there:
      report.md, bench.json and gpu-report.log (every log, concatenated).
      Exits 0 only if every step passed and torch saw a GPU (ALLOW_NO_GPU=1: a GPU is not required).

Only the standard library at import time: this runs before the wheels are installed.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tools import gpu_suite

ROOT = gpu_suite.ROOT
WHEELS = ROOT / ".whl"
SITE = ROOT / "build" / "gpu-site"
REPORT = ROOT / "build" / "gpu-report"

# What the notebook suite needs beyond python, torch, pytest (+ xdist), numpy and matplotlib.
NEEDED = ["nbval", "ipykernel", "jupyter_client", "nbclient", "nbformat"]
# Never carried: the GPU machine's own builds of these are the point of the exercise.
NEVER = re.compile(r"^(torch|torchvision|torchaudio|triton|nvidia-.*|cuda-.*|jax.*|cupy.*)$")
# The Python packages of the lent GPU machine's image (python3 3.12 at /opt/torch/.venv, its
# package list as of 2026-11): carried wheels never replace one of these, since build/gpu-site
# comes first on PYTHONPATH and would shadow the machine's own copy.
ON_GPU_MACHINE = """
absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs botorch build
certifi charset-normalizer chex click cloudpickle cmake colorama contourpy coverage cuda-bindings
cuda-core cuda-pathfinder cuda-toolkit cupy-cuda13x cycler cython diffrax e3nn einops equinox etils
execnet filelock flatbuffers flax fonttools formulaic frozenlist fsspec gpytorch grpcio h11 h5py hf-xet
httpcore httpx huggingface-hub humanize hypothesis idna imageio iniconfig interface-meta jax
jax-cuda13-pjrt jax-cuda13-plugin jaxlib jaxtyping jinja2 joblib kiwisolver lazy-loader lightning
lightning-utilities linear-operator lineax llvmlite lxml markdown markdown-it-py markupsafe matplotlib
mdurl meson ml-dtypes mpi4py mpmath msgpack multidict multipledispatch mypy-extensions nanobind
narwhals networkx ninja numba numba-cuda numpy numpyro nvidia-ml-py onnx onnx-ir onnxruntime
onnxscript opencv-python-headless optax opt-einsum opt-einsum-fx optimistix orbax-checkpoint packaging
pandas pathspec patsy peft pillow pip pluggy portalocker prometheus-client propcache protobuf psutil
pyarrow pybind11 py-cpuinfo pygments pyparsing pyproject-hooks pyre-extensions pytest pytest-benchmark
pytest-cov pytest-mock pytest-timeout pytest-xdist python-dateutil pytorch-lightning pyyaml regex
requests rich sacrebleu safetensors scikit-build-core scikit-image scikit-learn scipy seaborn
sentencepiece sentence-transformers setuptools shellingham simplejson six sortedcontainers statsmodels
sympy tabulate tensorboard tensorboard-data-server tensorstore threadpoolctl tifffile tiktoken timm
tokenizers toolz torch torchaudio torchdiffeq torch-geometric torchmetrics torchvision tqdm
transformers treescope triton typer typing-extensions typing-inspect urllib3 uvloop wadler-lindig
werkzeug wheel wrapt xarray xxhash yarl zipp
""".split()
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "any"]
WHEELS_LIMIT_MIB = 40  # the device tool carries 64 MiB in all, the repository included

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
OUTPUT_CHARS = 4000  # per output in the reports; the rest is cut (the logs have everything)
LOG_BYTES = 15 * 2**20  # the concatenated log for --out (the device tool returns 16 MiB a file)


# ----------------------------------------------------------------------------------- wheels


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def carried(install: list[dict], needed: list[str], present: set[str]) -> list[tuple[str, str]]:
    """The (name, version) pairs to carry, from pip's installation report for ``needed``: what is
    reachable from ``needed`` without passing through a package ``present`` on the GPU machine
    (whose own copy then brings its own needs) or one that is NEVER carried."""
    nodes = {normalize(i["metadata"]["name"]): i["metadata"] for i in install}
    keep, todo = {}, [normalize(n) for n in needed]
    while todo:
        name = todo.pop()
        if name in keep or name not in nodes or name in present or NEVER.match(name):
            continue
        meta = nodes[name]
        keep[name] = meta["version"]
        for req in meta.get("requires_dist", []):
            marker = req.partition(";")[2]
            if re.search(r"\bextra\s*==", marker):
                continue
            m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
            if m:
                todo.append(normalize(m.group(1)))  # pip dropped it if its marker is false there
    return sorted(keep.items())


def target_options(python_version: str, platforms: list[str]) -> list[str]:
    return ["--only-binary=:all:", "--python-version", python_version, "--implementation", "cp",
            *[arg for p in platforms for arg in ("--platform", p)]]


def wheels(dest: Path, python_version: str, platforms: list[str], exclude: list[str]) -> int:
    target = target_options(python_version, platforms)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        subprocess.run([*pip, "install", "--dry-run", "--ignore-installed", "--quiet", "--report", str(report),
                        "--target", str(Path(tmp) / "target"), *target, *NEEDED], check=True)
        install = json.loads(report.read_text(encoding="utf-8"))["install"]
    present = {normalize(n) for n in [*ON_GPU_MACHINE, *exclude]}
    keep = carried(install, NEEDED, present)
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
    print(f"{len(files)} wheels for Python {python_version} in {dest}: {total / 2**20:.1f} MiB in all")
    print("left to the GPU machine's own packages: " + ", ".join(left_out))
    if total > WHEELS_LIMIT_MIB * 2**20:
        print(f"More than {WHEELS_LIMIT_MIB} MiB: too much to carry to the device machine with the repository.")
        return 1
    return 0


# ------------------------------------------------------------- in the GPU machine's python


def preflight() -> dict:
    """Runs with build/gpu-site on PYTHONPATH: what this python has, and where it comes from."""
    import importlib

    found: dict = {"python": sys.executable, "python_version": platform.python_version(), "packages": {}}
    for module in ["torch", "numpy", "matplotlib", "pytest", "xdist", "nbval", "ipykernel", "jupyter_client",
                   "nbclient", "nbformat", "IPython", "zmq", "tornado"]:
        try:
            mod = importlib.import_module(module)
            where = str(Path(mod.__file__).parent.parent) if getattr(mod, "__file__", None) else "?"
            version = getattr(mod, "__version__", None) or getattr(mod, "version", "?")
            found["packages"][module] = {"version": str(version), "from": where}
        except Exception as err:  # report it, whatever it is
            found["packages"][module] = {"version": "MISSING", "from": f"{type(err).__name__}: {err}"}
    try:
        import torch

        found["torch_cuda"] = torch.version.cuda
        found["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    except Exception as err:
        found["gpus_error"] = f"{type(err).__name__}: {err}"
    try:  # nbval --nbval-current-env and `execute` below use this python; Jupyter's own 'python3' may not
        from jupyter_client.kernelspec import KernelSpecManager

        argv = KernelSpecManager().get_kernel_spec("python3").argv
        found["kernelspec_python3"] = argv
        found["kernelspec_is_this_python"] = bool(argv) and Path(shutil.which(argv[0]) or argv[0]).resolve() == \
            Path(sys.executable).resolve()
    except Exception as err:
        found["kernelspec_python3"] = f"{type(err).__name__}: {err}"
    return found


def nbval_mode(cell: dict) -> str:
    """What strict nbval does with a cell's output."""
    tags = set(cell.get("metadata", {}).get("tags", []))
    comment = " ".join(line for line in cell.get("source", "").splitlines() if line.lstrip().startswith("#"))
    if "nbval-skip" in tags or "NBVAL_SKIP" in comment:
        return "skipped"
    if "raises-exception" in tags or "NBVAL_RAISES_EXCEPTION" in comment:
        return "must raise"
    if "nbval-ignore-output" in tags or "NBVAL_IGNORE_OUTPUT" in comment:
        return "ignored"
    return "checked"


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
    """Run a notebook in a fresh kernel of this python (cwd: its folder), every cell even after
    an error, and return each code cell's rendered outputs. Stops at ``deadline`` (monotonic)
    with what it has."""
    import asyncio

    import ipykernel.kernelspec
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    class ThisPython(KernelSpecManager):  # what nbval's --nbval-current-env does
        def get_kernel_spec(self, kernel_name):
            return self.kernel_spec_class(resource_dir=ipykernel.kernelspec.RESOURCES,
                                          **ipykernel.kernelspec.get_kernel_dict())

    class Client(NotebookClient):
        def create_kernel_manager(self):
            self.km = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=ThisPython(), config=self.config)
            return self.km

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    client = Client(nb, allow_errors=True, resources={"metadata": {"path": str(path.parent)}})
    status = "ok"

    async def run() -> None:
        nonlocal status
        client.reset_execution_trackers()
        async with client.async_setup_kernel():
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
    cells = [{"index": i, "id": c.get("id", ""), "first_line": (c.source.strip().splitlines() or [""])[0],
              "nbval": nbval_mode(c), "output": render(c.get("outputs", [])),
              "error": any(o.get("output_type") == "error" for o in c.get("outputs", []))}
             for i, c in enumerate(c for c in nb.cells if c.cell_type == "code")]
    return {"notebook": str(path), "status": status, "seconds": round(time.perf_counter() - start, 1),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"), "cells": cells}


# ------------------------------------------------------------------- comparing and writing


def sanitizer(pytest_args: list[str]):
    """The string function nbval applies to both sides, read the way nbval reads the file given
    with --nbval-sanitize-with (identity without one)."""
    path = None
    for i, arg in enumerate(pytest_args):
        if arg in ("--nbval-sanitize-with", "--sanitize-with") and i + 1 < len(pytest_args):
            path = pytest_args[i + 1]
        elif arg.startswith(("--nbval-sanitize-with=", "--sanitize-with=")):
            path = arg.split("=", 1)[1]
    pairs = {}
    if path:
        text = (ROOT / path).read_text(encoding="utf-8")
        pairs = dict(re.findall("^regex: (.*)$\n^replace: (.*)$", text, flags=re.MULTILINE))

    def sanitize(text: str) -> str:
        text = "\n".join(line for line in text.splitlines() if not re.fullmatch(r"<image/\w+, \d+ bytes>", line))
        for regex, replace in pairs.items():
            text = re.sub(regex, replace, text)
        return text

    return sanitize


def fence(text: str) -> str:
    if len(text) > OUTPUT_CHARS:
        text = text[:OUTPUT_CHARS] + f"\n[... {len(text) - OUTPUT_CHARS} more characters]"
    return "````text\n" + (text.rstrip("\n") or "(no output)") + "\n````\n"


def side_by_side(name: str, gpu: dict | None, cpu: dict | None, sanitize) -> tuple[str, tuple[str, ...]]:
    """One notebook's cells, GPU output beside no-GPU output: (markdown, summary row)."""
    runs = {"GPU": gpu, "no GPU": cpu}
    status = {k: (f"{r['status']}, {r['seconds']:.0f} s" if r else "did not run") for k, r in runs.items()}
    cells = {k: {c["index"]: c for c in (r["cells"] if r else [])} for k, r in runs.items()}
    indices = sorted(set(cells["GPU"]) | set(cells["no GPU"]))
    lines = [f"### {name}", "", f"GPU visible: {status['GPU']} · CUDA_VISIBLE_DEVICES=: {status['no GPU']}", ""]
    differ = after = 0
    for i in indices:
        g, c = cells["GPU"].get(i), cells["no GPU"].get(i)
        any_cell = g or c
        head = f"#### Cell {i} `{any_cell['id']}` · `{any_cell['first_line'][:90]}` · nbval: {any_cell['nbval']}"
        if g is None or c is None:
            lines += [f"{head} · ran on one side only", "", "GPU:", fence(g["output"] if g else "(not run)"),
                      "no GPU:", fence(c["output"] if c else "(not run)")]
            differ += 1
            continue
        if g["output"] == c["output"]:
            lines += [f"{head} · same", "", fence(g["output"])] if g["output"] else [f"{head} · no output", ""]
            continue
        differ += 1
        same_after = sanitize(g["output"]) == sanitize(c["output"])
        after += not same_after
        verdict = "differs (same after nbval's sanitizer)" if same_after else "DIFFERS, also after nbval's sanitizer"
        lines += [f"{head} · {verdict}", "", "GPU:", fence(g["output"]), "no GPU:", fence(c["output"])]
    row = (name, status["GPU"], status["no GPU"], str(len(indices)), str(differ), str(after))
    return "\n".join(lines) + "\n", row


def md_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """A markdown table padded into aligned columns, so that it reads as plain text too."""
    cells = [tuple(str(c).replace("|", "\\|").replace("\n", " ") for c in row) for row in [header, *rows]]
    widths = [max(3, *(len(r[i]) for r in cells)) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |"  # noqa: E731
    return "\n".join([line(cells[0]), "| " + " | ".join("-" * w for w in widths) + " |", *map(line, cells[1:])])


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
    started: float = field(default_factory=time.perf_counter)
    steps: list[Step] = field(default_factory=list)
    verdict: str = "GPU: not probed yet"
    environment: list[str] = field(default_factory=list)
    preflight: dict = field(default_factory=dict)
    suite: list[dict] = field(default_factory=list)
    suite_failures: dict[str, list[str]] = field(default_factory=dict)
    bench: dict | None = None
    notebooks: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (markdown, row)

    def tables(self) -> str:
        parts = [self.verdict, "", *self.environment, "", f"total: {time.perf_counter() - self.started:.0f} s", "",
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
            parts += ["", "## Each cell with all GPUs visible and with none (unsanitized; notebooks/*.md)", "",
                      md_table(("notebook", "GPU run", "no-GPU run", "code cells", "outputs differ",
                                "differ after sanitizer"), [row for _, row in self.notebooks])]
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
            if (self.folder / "bench.json").is_file():
                shutil.copyfile(self.folder / "bench.json", self.out / "bench.json")
            self.write_log(self.out / "gpu-report.log")

    def write_log(self, target: Path) -> None:
        with open(target, "wb") as sink:
            for step in self.steps:
                for log in [step.log, *step.extra]:
                    if log and log.is_file():
                        data = log.read_bytes()
                        if len(data) > LOG_BYTES // 8:
                            data = data[:LOG_BYTES // 16] + b"\n[... cut ...]\n" + data[-LOG_BYTES // 16:]
                        sink.write(f"\n===== {step.name}: {log.relative_to(self.folder)} =====\n".encode())
                        sink.write(data)


class Runner:
    """Runs the steps within one time budget; each step's failure is recorded, never raised."""

    def __init__(self, report: Report, budget: float):
        self.report = report
        self.deadline = time.monotonic() + budget
        self.logs = report.folder / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def step(self, name: str, action, timeout: float, minimum: float = 20) -> Step:
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower())
        step = Step(name, log=self.logs / f"{len(self.report.steps) + 1:02d}-{slug}.log")
        self.report.steps.append(step)
        allowed = min(timeout, self.left() - 5)
        print(f"\n=== {name} (at most {max(allowed, 0):.0f} s) ===", flush=True)
        if allowed < minimum:
            step.result = "not run: out of time"
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


def base_environment() -> dict[str, str]:
    """The caller's environment (the Makefile's exports included), with build/gpu-site first on
    PYTHONPATH so that every python started from here, the kernels included, sees the wheels."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(SITE), env.get("PYTHONPATH", "")] if p)
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("IPYTHONDIR", str(ROOT / "tests" / "ipython"))  # short tracebacks, as `make` sets
    return env


def suite_failures(log: Path) -> list[str]:
    text = ANSI.sub("", log.read_text(encoding="utf-8", errors="replace")) if log.is_file() else ""
    return sorted({m.group(1) for m in re.finditer(r"^FAILED (.+?)(?: - .*)?$", text, flags=re.MULTILINE)})


def run(args: argparse.Namespace, pytest_args: list[str]) -> int:
    folder = args.report_dir
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    report = Report(folder, args.out)
    runner = Runner(report, args.budget)
    env = base_environment()
    allow_no_gpu = os.environ.get("ALLOW_NO_GPU", "").lower() in ("1", "true", "yes")
    report.environment = [f"python: {sys.executable} ({platform.python_version()})",
                          f"machine: {platform.node()}, {os.cpu_count()} CPUs",
                          f"pytest options: {' '.join(pytest_args)}",
                          *[f"{k}={env[k]}" for k in sorted(env) if k.startswith(("GPU_LESSONS", "CUDA_VISIBLE"))
                            or k in ("IPYTHONDIR", "PYTHONPATH")]]
    notebooks: list[str] = list(args.notebooks or [])
    seen = {"count": 0}

    def install(step: Step, timeout: float) -> str:
        found = sorted(WHEELS.glob("*.whl"))
        shutil.rmtree(SITE, ignore_errors=True)  # never last run's wheels
        if not found:
            return f"skipped: no wheels in {WHEELS.name}/ (make gpu-wheels): using what this python has"
        code, _ = gpu_suite.run_logged([sys.executable, "-m", "pip", "install", "--disable-pip-version-check",
                                        "--no-index", "--no-deps", "--target", str(SITE), *map(str, found)],
                                       env, timeout, step.log)
        return f"ok: {len(found)} wheels into {SITE.relative_to(ROOT)}" if code == 0 else f"FAILED (exit {code})"

    def check(step: Step, timeout: float) -> str:
        nonlocal notebooks
        listed = gpu_suite.listed_gpus()
        smi = (subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=30)
               if shutil.which("nvidia-smi") else None)
        seen.update(gpu_suite.probe_torch(gpu_suite.environment(None, env), timeout=timeout / 3))
        hidden = gpu_suite.probe_torch(gpu_suite.environment("", env), timeout=timeout / 3)
        probe = subprocess.run([sys.executable, "-m", "tools.gpu_report", "preflight"], cwd=ROOT, env=env,
                               capture_output=True, text=True, timeout=timeout / 3)
        step.log.write_text(f"nvidia-smi -L:\n{chr(10).join(listed)}\n\n{smi.stdout if smi else 'no nvidia-smi'}\n"
                            f"torch, all GPUs visible: {seen}\ntorch, CUDA_VISIBLE_DEVICES=: {hidden}\n\n"
                            f"preflight:\n{probe.stdout}\n{probe.stderr}", encoding="utf-8")
        report.preflight = json.loads(probe.stdout) if probe.returncode == 0 else {}
        names = report.preflight.get("gpus") or []
        refused = gpu_suite.refusal(listed, seen, allow_no_gpu=True)
        if refused:
            report.verdict = f"NOT A GPU RUN: {refused}"
        elif seen.get("count"):
            report.verdict = (f"GPU: torch {seen['torch']} (CUDA {seen['cuda']}) sees {seen['count']} GPU(s): "
                              + ", ".join(names))
        else:
            report.verdict = ("NO GPU: nvidia-smi lists none and torch sees none; every result below is the "
                              "CPU path, twice over.")
        report.environment.append("nvidia-smi -L: " + ("; ".join(listed) or "no GPU listed"))
        same = "this python" if report.preflight.get("kernelspec_is_this_python") else "NOT this python"
        report.environment.append(f"Jupyter's own 'python3' kernelspec: {report.preflight.get('kernelspec_python3')} "
                                  f"({same}; nbval --nbval-current-env and the side-by-side runs use this python)")
        if not notebooks:
            sys.path.insert(0, str(SITE))  # tools.series reads notebooks with nbformat, from the wheels
            notebooks = gpu_suite.default_notebooks()
        report.environment.append(f"notebooks: {len(notebooks)}")
        missing = [m for m, p in report.preflight.get("packages", {}).items() if p["version"] == "MISSING"]
        if probe.returncode != 0:
            return f"FAILED: the preflight probe exited {probe.returncode} (see the log)"
        if refused or missing:
            return "FAILED: " + (refused or "") + (f" missing: {', '.join(missing)}" if missing else "")
        return "ok" if seen.get("count") else "ok, but no GPU"

    def suite(setting: str):
        def action(step: Step, timeout: float) -> str:
            if not notebooks:
                return "not run: no notebook list (see preflight)"
            summary = step.log.with_suffix(".json")
            cmd = [sys.executable, "-m", "tools.gpu_suite", "--allow-no-gpu", "--settings", setting,
                   "--step-timeout", str(int(timeout - 15)), "--json", str(summary), "--notebooks", *notebooks,
                   *pytest_args]
            code, _ = gpu_suite.run_logged(cmd, env, timeout, step.log)
            result = json.loads(summary.read_text(encoding="utf-8")) if summary.is_file() else {}
            rows = result.get("rows", [])
            report.suite += rows
            failed = suite_failures(step.log)
            if failed:
                report.suite_failures[gpu_suite.SETTING_KEYS[setting]] = failed
            if code is None:
                return "FAILED: timed out"
            if result.get("refused"):
                return f"FAILED: {result['refused']}"
            return rows[0]["result"] if rows else f"FAILED (exit {code}; see the log)"
        return action

    def compare(step: Step, timeout: float) -> str:
        if not notebooks:
            return "not run: no notebook list (see preflight)"
        deadline = time.monotonic() + timeout - 20
        runs_dir = folder / "runs"
        runs_dir.mkdir(exist_ok=True)
        sides = {"gpu": None, "cpu": ""}
        jobs = [(nb, side) for nb in notebooks for side in sides]
        step.extra = [runs_dir / f"{Path(nb).stem}.{side}.log" for nb, side in jobs]

        def one(nb: str, side: str) -> tuple[int | None, Path]:
            out, log = runs_dir / f"{Path(nb).stem}.{side}.json", runs_dir / f"{Path(nb).stem}.{side}.log"
            cmd = [sys.executable, "-m", "tools.gpu_report", "execute", str(ROOT / nb), "--json", str(out),
                   "--seconds", str(max(1, int(deadline - time.monotonic())))]
            code, _ = gpu_suite.run_logged(cmd, gpu_suite.environment(sides[side], env),
                                           max(1, deadline - time.monotonic() + 15), log)
            return code, out

        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            done = list(pool.map(lambda job: one(*job), jobs))
        sanitize = sanitizer(pytest_args)
        bad = 0
        (folder / "notebooks").mkdir(exist_ok=True)
        for k, nb in enumerate(notebooks):
            loaded = []
            for _, path in done[2 * k: 2 * k + 2]:
                data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
                bad += data is None or data["status"] != "ok"
                loaded.append(data)
            md, row = side_by_side(nb, loaded[0], loaded[1], sanitize)
            (folder / "notebooks" / f"{Path(nb).stem}.md").write_text(md, encoding="utf-8")
            report.notebooks.append((md, row))
        return f"ok: {len(jobs)} runs" if not bad else f"FAILED: {bad} of {len(jobs)} runs incomplete"

    def bench(step: Step, timeout: float) -> str:
        cmd = [sys.executable, "-m", "tools.bench", *(["--quick"] if args.quick_bench else [])]
        code, _ = gpu_suite.run_logged(cmd, env, timeout, step.log)
        target = ROOT / "build" / "bench.json"
        if code == 0 and target.is_file():
            shutil.copyfile(target, folder / "bench.json")
            report.bench = json.loads(target.read_text(encoding="utf-8"))
            return "ok"
        return "FAILED: timed out" if code is None else f"FAILED (exit {code})"

    runner.step("install wheels", install, 120)
    runner.step("preflight", check, 120)
    runner.step("nbval, all GPUs", suite("all"), args.suite_timeout)
    runner.step("side by side", compare, args.compare_timeout, minimum=60)
    runner.step("bench", bench, 150)
    runner.step("nbval, one GPU", suite("one"), args.suite_timeout)
    runner.step("nbval, no GPU", suite("none"), args.suite_timeout)
    report.write()
    print("\n" + report.tables())
    print(f"written to {folder.relative_to(ROOT) if folder.is_relative_to(ROOT) else folder}/"
          + (f" and {args.out}/" if args.out else ""))
    passed = all(s.result.startswith(("ok", "passed", "skipped")) for s in report.steps)
    return 0 if passed and (seen.get("count") or allow_no_gpu) else 1


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("wheels", help="download the wheels a GPU machine without Jupyter needs (make gpu-wheels)")
    p.add_argument("--dest", type=Path, default=WHEELS)
    p.add_argument("--python-version", default="3.12")
    p.add_argument("--platform", action="append", dest="platforms", help=f"default: {' '.join(PLATFORMS)}")
    p.add_argument("--exclude", action="append", default=[], help="a package also there already")
    p = sub.add_parser("run", help="the report, on the GPU machine (make gpu-report)", allow_abbrev=False)
    p.add_argument("--notebooks", nargs="+", help="default: every notebook")
    p.add_argument("--out", type=Path, help="also write report.md, bench.json and gpu-report.log here")
    p.add_argument("--report-dir", type=Path, default=REPORT)
    p.add_argument("--budget", type=float, default=450, help="seconds for everything (default 450)")
    p.add_argument("--suite-timeout", type=float, default=150, help="seconds for each nbval run")
    p.add_argument("--compare-timeout", type=float, default=180, help="seconds for the side-by-side runs")
    p.add_argument("--jobs", type=int, default=max(1, min(8, (os.cpu_count() or 2) // 2)),
                   help="notebooks run at once in the side-by-side step")
    p.add_argument("--quick-bench", action="store_true", help="tools/bench.py --quick")
    p = sub.add_parser("preflight", help="(internal) what this python has, as JSON")
    p = sub.add_parser("execute", help="(internal) run one notebook, its outputs as JSON")
    p.add_argument("notebook", type=Path)
    p.add_argument("--json", type=Path, required=True)
    p.add_argument("--seconds", type=float, default=300)
    p.add_argument("--cell-timeout", type=float, default=300)
    args, rest = parser.parse_known_args(argv)
    if args.command == "run":
        args.report_dir = args.report_dir.resolve()
        args.out = args.out.resolve() if args.out else None
        return run(args, rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.command == "wheels":
        return wheels(args.dest, args.python_version, args.platforms or PLATFORMS, args.exclude)
    if args.command == "preflight":
        print(json.dumps(preflight(), indent=2))
        return 0
    result = execute(args.notebook.resolve(), time.monotonic() + args.seconds, args.cell_timeout)
    args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if result["status"] == "ok" else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
