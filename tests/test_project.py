"""The project's own files: the supported range stated once, the lock installed, the readers'
requirements file, and the workflow that covers the torch range on GitHub's runners."""

from __future__ import annotations

import importlib.metadata
import re
import sys
import sysconfig
import tomllib

from tools.lock import normalise
from tools.series import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
GROUPS = PYPROJECT["dependency-groups"]
NAME = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)")


def group(name: str) -> list[str]:
    """A dependency group's requirements, included groups expanded (PEP 735)."""
    out = []
    for item in GROUPS[name]:
        out += group(item["include-group"]) if isinstance(item, dict) else [item]
    return out


def constraints() -> dict[str, str]:
    lines = (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
    pins = [line.split("==") for line in lines if line and not line.startswith("#")]
    return {normalise(name): version for name, version in pins}


def test_this_python_is_one_the_series_supports():
    low = re.fullmatch(r">=3\.(\d+)", PYPROJECT["project"]["requires-python"])
    assert low and sys.version_info >= (3, int(low[1])), PYPROJECT["project"]["requires-python"]


def test_the_lock_pins_every_requirement_of_every_group_but_torch():
    pinned = constraints()
    names = {normalise(NAME.match(r)[1]) for g in GROUPS for r in group(g)} - {"torch"}
    assert not names - pinned.keys(), f"not in constraints.txt (run make lock): {sorted(names - pinned.keys())}"
    assert "torch" not in pinned and not any(n.startswith("nvidia-") for n in pinned)  # each venv picks its torch


def test_the_environment_has_the_versions_the_lock_pins():
    """`make` installs from constraints.txt: what this environment has is what CI tested."""
    # Only what pip installed into this environment: a package may also vendor copies of others
    # (setuptools puts its own importlib-metadata on sys.path once imported).
    folders = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    installed = {normalise(d.metadata["Name"]): d.version for d in importlib.metadata.distributions(path=folders)}
    assert {"pytest", "nbval", "numpy"} <= installed.keys(), folders  # the environment is read
    wrong = {name: f"{installed[name]} installed, {version} locked" for name, version in constraints().items()
             if name in installed and installed[name] != version}  # not every group is installed (site, lab)
    assert not wrong, f"run `make venv` (or rm -rf .venv): {wrong}"


def test_requirements_txt_lists_the_lessons_and_lab_groups():
    lines = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    listed = sorted(line.split("#")[0].strip() for line in lines if line.split("#")[0].strip())
    assert listed == sorted(set(group("lessons") + group("lab")))


def test_the_compat_workflow_covers_every_minor_torch_release_from_the_oldest():
    text = (ROOT / ".github/workflows/compat.yml").read_text(encoding="utf-8")
    rows = re.findall(r'\{ python: "3\.(\d+)", torch: "2\.(\d+)\.(\d+)" \}', text)
    oldest = int(PYPROJECT["tool"]["series"]["torch-proven"][0].split(".")[1])
    low_python = int(PYPROJECT["project"]["requires-python"].rsplit(".", 1)[1])
    minors = sorted({int(m) for p, m, _ in rows if int(p) == low_python})
    assert minors and minors == list(range(oldest, minors[-1] + 1)), minors
    newest = max(int(m) for _, m, _ in rows)
    assert {int(p) for p, m, _ in rows if int(m) == newest} >= {low_python, 12, 13, 14}  # every Python on the newest
    proven = [tuple(map(int, v.split(".")[1:])) for v in PYPROJECT["tool"]["series"]["torch-proven"]]
    assert max(proven)[0] <= newest


def test_make_never_installs_system_packages():
    """A reader's `make` installs into .venv only: a browser or a font the site test needs is named in its
    message, and .ci/run (CI, on Debian as root) installs them itself."""
    recipes = [line for line in (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
               if line.startswith("\t")]
    commands = [re.sub(r'"[^"]*"', '""', line) for line in recipes]  # what a recipe prints is no command
    assert not [c for c in commands if re.search(r"\b(?:apt-get|apt|dnf|yum|brew)\s+install\b", c)], commands
    assert "apt-get install" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
