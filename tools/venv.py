"""Create or complete a virtual environment of the series: torch, then dependency groups, locked.

    python -m tools.venv .venv --torch 2.13.0 --group dev
    python -m tools.venv .venv --group site            # an existing .venv: only what the group adds

It runs on the Python that makes the environment, with nothing but the standard library. The
installer is uv (pinned in constraints.txt, installed into the environment by pip), given pip's
own settings (`pip config list`: index-url, extra-index-url, find-links, constraint, cert) and
pip's way of choosing among several indexes (`--index-strategy unsafe-best-match`), so that it
installs the very files pip would install on this machine, in seconds instead of a minute or
more (`make bench-setup` measures both ways and compares every installed file).

pip also compiles every module it installs to bytecode (thousands of files for the `dev` group,
most never imported). Here only what the lessons' kernels and the tests import is compiled, by
importing it once with bytecode writing on (WARM, two processes at once): a Python told not to
write `__pycache__` (PYTHONDONTWRITEBYTECODE) would otherwise compile torch again at every
import, seconds each time. SERIES_INSTALLER=pip, or a machine where uv
cannot be installed, takes pip for every step instead.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "constraints.txt"
WINDOWS = sys.platform == "win32"
# pip's settings that choose which files are installed, and the uv option for each.
PIP_TO_UV = {"index-url": "--index-url", "extra-index-url": "--extra-index-url",
             "find-links": "--find-links", "constraint": "--constraint"}
# `pip config list` names each setting's origin; later ones win, as they do in pip.
SCOPE_ORDER = ("global", "user", "site", ":env:")
# What the lessons' kernels, their worker processes and the tests import, in two halves imported
# side by side: torch's, and the notebook machinery's. A module the environment lacks is skipped.
WARM = (
    ("torch", "torch.distributed", "torch._dynamo", "torch.utils.data", "torch.multiprocessing"),
    ("numpy", "matplotlib.pyplot", "sklearn.datasets", "IPython", "ipykernel.kernelapp", "ipykernel.ipkernel",
     "jupyter_client", "nbformat", "nbclient", "pytest", "xdist", "nbval.plugin", "hypothesis", "polib",
     "markdown_it", "sphinx", "myst_nb", "jupyterlab"),
)
WARM_SCRIPT = """
import importlib, sys
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except ImportError:
        pass
"""


def executable(venv: Path, name: str) -> Path:
    return venv / ("Scripts" if WINDOWS else "bin") / (name + (".exe" if WINDOWS else ""))


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    print("+", shlex.join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], check=True, cwd=ROOT, **kwargs)


def pip_settings(listing: str) -> dict[str, list[str]]:
    """The settings of `pip config list` that choose files, each with its values, the last scope winning.

    A line reads `global.find-links='/opt/wheels'` or `:env:.extra-index-url='a b'`; a value
    with several entries separates them by whitespace, as pip does.
    """
    found: dict[str, tuple[int, list[str]]] = {}
    for line in listing.splitlines():
        name, sep, value = line.partition("=")
        scope, _, key = name.rpartition(".")
        if not sep or key not in (*PIP_TO_UV, "cert"):
            continue
        rank = SCOPE_ORDER.index(scope) if scope in SCOPE_ORDER else 0
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if key not in found or rank >= found[key][0]:
            found[key] = (rank, value.split())
    return {key: values for key, (_, values) in found.items()}


def uv_options(settings: dict[str, list[str]]) -> list[str]:
    """uv's options for pip's settings: the same sources, the same constraints, pip's choice among indexes."""
    options = ["--index-strategy", "unsafe-best-match"]
    for key, flag in PIP_TO_UV.items():
        for value in settings.get(key, []):
            options += [flag, value]
    return options


def uv_environment(settings: dict[str, list[str]]) -> dict[str, str]:
    env = dict(os.environ)
    if settings.get("cert") and "SSL_CERT_FILE" not in env:
        env["SSL_CERT_FILE"] = settings["cert"][0]
    return env


def read_pip_settings(python: str) -> dict[str, list[str]]:
    try:
        listing = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True,
                                 check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    return pip_settings(listing)


def locked(name: str) -> str:
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        if line.split("==")[0].strip().lower() == name:
            return line.strip()
    raise SystemExit(f"tools/venv.py: constraints.txt pins no {name} (run make lock)")


def get_uv(venv: Path, python: Path) -> Path | None:
    """The environment's uv, installed by the base Python's pip (or the environment's own): None if neither can."""
    uv = executable(venv, "uv")
    if uv.exists():
        return uv
    pin = locked("uv")
    quiet = ["-q", "--disable-pip-version-check"]
    try:  # the base Python's pip, into the environment (pip 22.3 and newer)
        run([sys.executable, "-m", "pip", "--python", python, "install", *quiet, pin])
        return uv
    except (OSError, subprocess.CalledProcessError):
        pass
    try:  # the environment's own pip
        ensure_pip(python)
        run([python, "-m", "pip", "install", *quiet, pin])
        return uv
    except (OSError, subprocess.CalledProcessError):
        return None


def ensure_pip(python: Path) -> None:
    if subprocess.run([python, "-m", "pip", "--version"], capture_output=True).returncode:
        run([python, "-m", "ensurepip"], stdout=subprocess.DEVNULL)


def warm(python: Path) -> None:
    """Compile what WARM names to bytecode, by importing it with bytecode writing on."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    print("+ compiling what the lessons and tests import (tools/venv.py WARM)", flush=True)
    procs = [subprocess.Popen([str(python), "-c", WARM_SCRIPT, *names], env=env, cwd=python.parent,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for names in WARM]
    for proc in procs:
        if proc.wait():
            print("tools/venv.py: compiling failed; imports will compile as they go", flush=True)


def has_torch(python: Path) -> bool:
    return subprocess.run([python, "-c", "import torch"], capture_output=True).returncode == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("venv", type=Path, help="the environment's folder (made if missing)")
    parser.add_argument("--torch", help="the torch release to install when the environment has none")
    parser.add_argument("--torch-index-url", default="", help="take torch from this index (PyTorch's CPU index, say)")
    parser.add_argument("--group", action="append", default=[], help="a dependency group of pyproject.toml")
    args = parser.parse_args(argv)

    venv = args.venv if args.venv.is_absolute() else ROOT / args.venv
    python = executable(venv, "python")
    installer = os.environ.get("SERIES_INSTALLER", "uv")
    if installer not in ("uv", "pip"):
        raise SystemExit(f"tools/venv.py: SERIES_INSTALLER must be uv or pip, not {installer!r}")
    if not python.exists():  # uv installs pip itself, locked, in a fraction of ensurepip's seconds
        run([sys.executable, "-m", "venv", *(["--without-pip"] if installer == "uv" else []), venv])
    uv = get_uv(venv, python) if installer == "uv" else None
    torch_index = ["--index-url", args.torch_index_url] if args.torch_index_url else []
    groups = [f"--group={g}" for g in args.group]
    if uv is not None:
        settings = read_pip_settings(sys.executable)
        base = [uv, "pip", "install", "-q", "--python", python, *uv_options(settings)]
        env = uv_environment(settings)
        if args.torch and not has_torch(python):
            run([*base, "--no-deps", f"torch=={args.torch}", *torch_index], env=env)
        # pip and setuptools, locked: what `python -m venv` puts in an environment on Python 3.11 (torch
        # 2.4's torch.utils.benchmark imports setuptools without requiring it).
        run([*base, "-c", CONSTRAINTS, locked("pip"), locked("setuptools"), *groups], env=env)
        warm(python)
        return 0
    print("tools/venv.py: installing with pip (slower)", flush=True)
    ensure_pip(python)
    pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    run([*pip, "-c", CONSTRAINTS, "pip", "setuptools"])  # --group needs pip 25.1 or newer
    if args.torch and not has_torch(python):
        run([*pip, "--no-deps", f"torch=={args.torch}", *torch_index])
    if groups:
        run([*pip, "-c", CONSTRAINTS, *groups])
    return 0


if __name__ == "__main__":
    sys.exit(main())
