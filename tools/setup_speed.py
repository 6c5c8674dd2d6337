"""Benchmark: a fresh clone's set-up with uv (what `make` does) and with pip, and whether both install the same files.

    python -m tools.setup_speed            # make bench-setup; writes build/bench-setup.json

Each way builds a virtual environment in a scratch folder with `tools/venv.py` (torch, then the
`dev` group), from empty caches (a scratch UV_CACHE_DIR, PIP_NO_CACHE_DIR=1), as on a new
machine: the seconds are the set-up a fresh clone pays before `make test` runs anything. Then
every installed file is compared (each package's RECORD: path and hash, less bytecode, the
scripts each installer writes for the environment, and the installer's own marks): a file that
differs, or a package only one way installs, fails the benchmark. It also times `import torch`
in each environment, which shows whether bytecode was compiled.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools.lock import pyproject
from tools.venv import ROOT, executable

# Files each installer writes its own way, or that say who installed: not part of the packages.
OWN_MARKS = ("INSTALLER", "REQUESTED", "RECORD", "direct_url.json", "uv_cache.json", "uv_build.json")


def installed_files(site: Path) -> dict[str, dict[str, str]]:
    """{distribution: {path: hash}} from every RECORD under ``site``, less what the installer writes itself."""
    found: dict[str, dict[str, str]] = {}
    for record in sorted(site.glob("*.dist-info/RECORD")):
        files = {}
        for line in record.read_text(encoding="utf-8").splitlines():
            path, _, rest = line.partition(",")
            digest = rest.partition(",")[0]
            name = path.rsplit("/", 1)[-1]
            if (not path or "__pycache__/" in path or path.endswith(".pyc") or path.startswith("../")
                    or (".dist-info/" in path and name in OWN_MARKS)):
                continue
            files[path] = digest
        found[record.parent.name] = files
    return found


def compare(a: dict[str, dict[str, str]], b: dict[str, dict[str, str]]) -> list[str]:
    """What differs between two environments' installed files, one line each (empty: the same)."""
    problems = [f"only with {side}: {name}" for side, mine, theirs in (("uv", a, b), ("pip", b, a))
                for name in sorted(mine.keys() - theirs.keys())]
    for name in sorted(a.keys() & b.keys()):
        paths = a[name].keys() | b[name].keys()
        differ = sorted(p for p in paths if a[name].get(p) != b[name].get(p))
        if differ:
            problems.append(f"{name}: {len(differ)} file(s) differ, first {differ[0]}")
    return problems


def build(installer: str, folder: Path, torch: str) -> dict:
    venv = folder / f"venv-{installer}"
    env = {**os.environ, "SERIES_INSTALLER": installer, "UV_CACHE_DIR": str(folder / "uv-cache"),
           "PIP_NO_CACHE_DIR": "1"}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tools.venv", str(venv), "--torch", torch, "--group", "dev"], cwd=ROOT,
                   env=env, check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    python = executable(venv, "python")
    start = time.perf_counter()
    subprocess.run([str(python), "-c", "import torch"], check=True)
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    return {"seconds": round(seconds, 1), "import_torch_seconds": round(time.perf_counter() - start, 2),
            "files": installed_files(site)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch", default=pyproject()["tool"]["series"]["torch-default"],
                        help="torch release (default: pyproject.toml's torch-default)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "bench-setup.json")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="bench-setup-"))
    try:
        runs = {installer: build(installer, folder, args.torch) for installer in ("uv", "pip")}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    problems = compare(runs["uv"]["files"], runs["pip"]["files"])
    result = {"torch": args.torch, "python": sys.version.split()[0], "cores": os.cpu_count(),
              **{k: {"seconds": v["seconds"], "import_torch_seconds": v["import_torch_seconds"],
                     "packages": len(v["files"]), "files": sum(map(len, v["files"].values()))}
                 for k, v in runs.items()},
              "same_files": not problems, "differences": problems}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    for installer in ("uv", "pip"):
        r = result[installer]
        print(f"{installer:4} set-up {r['seconds']:6.1f} s   import torch {r['import_torch_seconds']:.2f} s   "
              f"{r['packages']} packages, {r['files']} files")
    print("same files: yes" if not problems else "same files: NO\n  " + "\n  ".join(problems))
    print(f"written to {args.out}")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
