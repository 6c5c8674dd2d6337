"""Records of GPU runs: what every cell of the series printed on one machine, with each
GPU visibility it was run under, kept in the repository so that a GPU figure in the text can cite it.

A record is one JSON file in gpu-runs/, named ``<date>-<machine>.json`` and written by
``make gpu-report`` (build/gpu-report/record/); a maintainer reads it, then commits it. It holds:

  format      1
  date        the day of the run, YYYY-MM-DD
  commit      the series' commit the run was made from ("unknown" outside a git checkout)
  gpu         true when torch saw a GPU. A record made on a machine without one (false) may serve
              tests, and never backs a sentence about a GPU (tests/test_gpu_figures.py).
  machine     gpus (model names, one per GPU), gpu_count, driver, torch, cuda, python, cpus
  settings    the visibilities run, in order: "all GPUs" (only where there are several), "one GPU",
              "no GPU", each {"CUDA_VISIBLE_DEVICES": value or null, "gpus_seen": n}
  notebooks   {"notebooks/07_gpu_memory.ipynb": {setting: {"status": "ok", "seconds": 12.3,
              "cells": {cell id: [output lines]}}}}
  code        {"notebooks/07_gpu_memory.ipynb": {cell id: fingerprint of the cell's source}}: every
              code cell as it was run, so that an output whose cell has changed since is known to be
              stale (Record.stale) and neither shown nor cited
  runs_at_once  how many notebooks ran at the same time (make gpu-report --jobs; 1 by default): a
              timing made beside other runs is not a quiet machine's
  fixture     (only in tests/fixtures/gpu-runs/) true: written by hand for a test, no machine's run;
              the published site refuses it (site/gpu_outputs.py)

A cell's output is what a reader sees (tools.gpu_report.render: streams, text, errors as
``Name: message``; an image as ``<image/png, N bytes>``), one line per list item so that a diff of
two records reads line by line. Cells that print nothing are left out; nothing else is trimmed
or edited.

Only the standard library: tools/gpu_report.py writes records before Jupyter's packages are installed.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "gpu-runs"
FORMAT = 1
SETTINGS = ("all GPUs", "one GPU", "no GPU")
MACHINE_KEYS = ("gpus", "gpu_count", "driver", "torch", "cuda", "python")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class RecordError(ValueError):
    """A record file that does not have the form above."""


@dataclass(frozen=True)
class Record:
    path: Path
    data: dict

    @property
    def name(self) -> str:
        """The file's name without .json: what a citation names."""
        return self.path.stem

    @property
    def gpu(self) -> bool:
        return bool(self.data["gpu"])

    @property
    def date(self) -> str:
        return self.data["date"]

    @property
    def machine(self) -> dict:
        return self.data["machine"]

    @property
    def settings(self) -> list[str]:
        return list(self.data["settings"])

    @property
    def gpu_settings(self) -> list[str]:
        """The settings with a GPU visible, most GPUs first."""
        return [s for s in self.settings if self.data["settings"][s]["gpus_seen"]]

    def label(self) -> str:
        """"1 × NVIDIA H200, driver 570.86, torch 2.14.1 (CUDA 12.8), Python 3.12.3, 2026-12-01"."""
        m = self.machine
        if not self.gpu:
            gpus = "no GPU"
        else:
            names = sorted(set(m["gpus"]))
            gpus = " + ".join(f"{m['gpus'].count(n)} × {n}" for n in names)
        cuda = f" (CUDA {m['cuda']})" if m.get("cuda") else ""
        driver = f", driver {m['driver']}" if m.get("driver") else ""
        return f"{gpus}{driver}, torch {m['torch']}{cuda}, Python {m['python']}, {self.date}"

    def notebooks(self) -> list[str]:
        return list(self.data["notebooks"])

    def cells(self, notebook: str, setting: str) -> dict[str, str]:
        """{cell id: output text} of one notebook (a path as in the record, or its file name) under one setting."""
        runs = self.data["notebooks"].get(self._key(notebook), {})
        cells = runs.get(setting, {}).get("cells", {})
        return {cid: "".join(line + "\n" for line in lines) for cid, lines in cells.items()}

    def output(self, notebook: str, cell_id: str, setting: str | None = None) -> str | None:
        """What a cell printed under ``setting`` (default: the first setting with a GPU), or None if not recorded."""
        setting = setting or (self.gpu_settings or self.settings)[0]
        return self.cells(notebook, setting).get(cell_id)

    def stale(self, notebook: str, cell_id: str, source: str) -> bool:
        """Whether the cell's source today differs from the one the record ran (a record without
        fingerprints, or a cell it does not list, counts as stale)."""
        recorded = self.data.get("code", {}).get(self._key(notebook), {}).get(cell_id)
        return recorded != fingerprint(source)

    def find_cell(self, cell_id: str) -> list[tuple[str, str]]:
        """(notebook, setting) of every recorded output of the cell with this id."""
        return [(nb, s) for nb, runs in self.data["notebooks"].items() for s, run in runs.items()
                if cell_id in run.get("cells", {})]

    def _key(self, notebook: str) -> str:
        if notebook in self.data["notebooks"]:
            return notebook
        matches = [k for k in self.data["notebooks"] if Path(k).name == Path(notebook).name]
        return matches[0] if len(matches) == 1 else notebook


def fingerprint(source: str) -> str:
    """A short hash of a cell's source: equal sources, equal fingerprints."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def validate(data: object, where: str = "record") -> dict:
    """``data`` if it has the form in this module's docstring; else RecordError saying what is wrong."""
    def fail(why: str) -> RecordError:
        return RecordError(f"{where}: {why}")

    if not isinstance(data, dict):
        raise fail("not a JSON object")
    if data.get("format") != FORMAT:
        raise fail(f"format is {data.get('format')!r}, expected {FORMAT}")
    if not isinstance(data.get("date"), str) or not DATE.match(data["date"]):
        raise fail(f"date is {data.get('date')!r}, expected YYYY-MM-DD")
    if not isinstance(data.get("commit"), str) or not data["commit"]:
        raise fail('commit must name the commit the run was made from (or "unknown")')
    if not isinstance(data.get("gpu"), bool):
        raise fail("gpu must be true or false")
    if data.get("fixture", True) is not True:
        raise fail("fixture, where present, must be true (a record written for a test)")
    machine = data.get("machine")
    if not isinstance(machine, dict) or any(k not in machine for k in MACHINE_KEYS):
        raise fail(f"machine must name {', '.join(MACHINE_KEYS)}")
    if not isinstance(machine["gpu_count"], int) or isinstance(machine["gpu_count"], bool) or machine["gpu_count"] < 0:
        raise fail(f"machine.gpu_count is {machine['gpu_count']!r}, expected a number of GPUs")
    if not isinstance(machine["gpus"], list) or len(machine["gpus"]) != machine["gpu_count"]:
        raise fail("machine.gpus must list one model name per GPU (gpu_count of them)")
    if data["gpu"] != bool(machine["gpu_count"]):
        raise fail(f"gpu is {str(data['gpu']).lower()} but the machine has {machine['gpu_count']} GPU(s)")
    settings = data.get("settings")
    if not isinstance(settings, dict) or not settings or any(s not in SETTINGS for s in settings):
        raise fail(f"settings must be some of {', '.join(SETTINGS)}")
    for setting, how in settings.items():
        if not isinstance(how, dict) or not isinstance(how.get("gpus_seen"), int) or \
                "CUDA_VISIBLE_DEVICES" not in how or not isinstance(how["CUDA_VISIBLE_DEVICES"], (str, type(None))):
            raise fail(f"settings[{setting!r}] must give CUDA_VISIBLE_DEVICES (a string or null) and gpus_seen")
    notebooks = data.get("notebooks")
    if not isinstance(notebooks, dict):
        raise fail("notebooks must map a notebook's path to its runs")
    for nb, runs in notebooks.items():
        if not isinstance(runs, dict):
            raise fail(f"{nb} must map a setting to its run")
        for setting, run in runs.items():
            if setting not in settings:
                raise fail(f"{nb} has a run under {setting!r}, which settings does not list")
            if not isinstance(run, dict):
                raise fail(f"{nb}, {setting}: a run must be an object with status, seconds and cells")
            cells = run.get("cells")
            if not isinstance(cells, dict) or not all(isinstance(v, list) and all(isinstance(x, str) for x in v)
                                                      for v in cells.values()):
                raise fail(f"{nb}, {setting}: cells must map a cell id to a list of output lines")
    if not isinstance(data.get("runs_at_once", 1), int) or data.get("runs_at_once", 1) < 1:
        raise fail("runs_at_once, where present, must be a whole number of at least 1")
    code = data.get("code", {})
    if not isinstance(code, dict) or not all(isinstance(v, dict) and all(isinstance(x, str) for x in v.values())
                                             for v in code.values()):
        raise fail("code must map a notebook's path to {cell id: fingerprint}")
    return data


def load(path: Path) -> Record:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise RecordError(f"{path}: {err}") from err
    return Record(Path(path), validate(data, str(path)))


def records(folder: Path = RUNS) -> list[Record]:
    """Every record in ``folder`` (gpu-runs/ by default), oldest first."""
    return [load(p) for p in sorted(Path(folder).glob("*.json"))]


def by_name(name: str, folder: Path = RUNS) -> Record:
    path = Path(folder) / f"{name}.json"
    if not path.is_file():
        known = ", ".join(r.name for r in records(folder)) or "none"
        raise RecordError(f"no record {name!r} in {folder} (records: {known})")
    return load(path)


def lines(text: str) -> list[str]:
    """An output as the list of lines a record stores (a last newline is implied)."""
    return text[:-1].split("\n") if text.endswith("\n") else text.split("\n")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def file_name(date: str, machine: dict) -> str:
    """``2026-12-01-1x-nvidia-h200.json``; ``2026-12-01-no-gpu.json`` on a machine without one."""
    if not machine["gpu_count"]:
        return f"{date}-no-gpu.json"
    names = sorted(set(machine["gpus"]))
    return f"{date}-" + "-".join(f"{machine['gpus'].count(n)}x-{slug(n)}" for n in names) + ".json"


def build(date: str, commit: str, machine: dict, settings: dict[str, dict], runs: dict[str, dict[str, dict]]) -> dict:
    """A record from tools.gpu_report's runs: ``runs[notebook][setting]`` is one `execute` result
    ({"status", "seconds", "cells": [{"id", "output", ...}]}). Cells that printed nothing are left out."""
    notebooks = {}
    for nb, by_setting in runs.items():
        notebooks[nb] = {}
        for setting in settings:
            run = by_setting.get(setting)
            if run is None:
                continue
            notebooks[nb][setting] = {"status": run["status"], "seconds": run["seconds"],
                                      "cells": {c["id"]: lines(c["output"]) for c in run["cells"] if c["output"]}}
    code = {nb: {c["id"]: c["code"] for run in by_setting.values() for c in run["cells"] if "code" in c}
            for nb, by_setting in runs.items()}
    data = {"format": FORMAT, "date": date, "commit": commit, "gpu": bool(machine["gpu_count"]),
            "machine": machine, "settings": settings, "notebooks": notebooks, "code": code}
    return validate(data)


def dumps(data: dict) -> str:
    """The file's text: one key or one output line per line, so that records diff well."""
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def write(data: dict, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / file_name(data["date"], data["machine"])
    path.write_text(dumps(validate(data)), encoding="utf-8")
    return path
