"""The project's own files: the supported range stated once, the lock installed, the readers'
requirements file, and the workflow that covers the torch range on GitHub's runners."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
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


def test_the_lint_and_site_groups_hold_no_torch_and_make_asks_for_nothing_more():
    for name in ("lint", "site"):
        assert not any(normalise(NAME.match(r)[1]) == "torch" for r in group(name)), (name, group(name))
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    lint = re.search(r"^lint: (.*?) ##", makefile, re.MULTILINE)
    assert lint and lint[1].split() == ["$(LINT_STAMP)", "node_modules/.installed"], lint and lint[1]
    site = re.search(r"^\$\(SITE_STAMP\): ([^#\n]*)", makefile, re.MULTILINE)
    assert site and site[1].split() == ["$(LINT_STAMP)"], site and site[1]
    assert "-m pytest -m site tests/test_site.py" in makefile  # collecting the other test modules imports torch


def test_the_lint_tools_the_sites_extension_and_the_lesson_text_test_run_without_torch():
    """What `make lint` runs, and the site's extension, with `import torch` made to fail: the lint and
    site jobs install no torch (the whole site build was checked so once; it takes half a minute)."""
    blocked = "import sys; sys.modules['torch'] = None; "  # `import torch` now raises ImportError
    for module in ("tools.sync_notebooks", "tools.lesson_figures", "tools.zh_rhythm"):
        done = subprocess.run([sys.executable, "-c", blocked + f"import runpy; sys.argv = ['x', '--check']; "
                               f"runpy.run_module('{module}', run_name='__main__')"],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (module, done.stdout[-2000:], done.stderr[-2000:])
    # The site's own code (docutils and sphinx are in the site group only, so its modules are read, and
    # the series' modules they import are imported with torch blocked).
    for path in (ROOT / "site").glob("*.py"):
        nodes = list(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))
        imported = {alias.name.split(".")[0] for node in nodes if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module.split(".")[0] for node in nodes if isinstance(node, ast.ImportFrom) and node.module}
        assert "torch" not in imported and "utils" not in imported, (path.name, sorted(imported))
    done = subprocess.run([sys.executable, "-c", blocked + "import tools.gpu_runs, tools.gpu_report"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    done = subprocess.run([sys.executable, "-c", blocked + "import pytest; sys.exit(pytest.main(['-q', '-p', "
                           "'no:cacheprovider', 'tests/test_lesson_text.py']))"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]


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


def test_the_gpu_workflow_runs_only_in_this_repository_and_keeps_nothing_between_jobs():
    """Its runner's setup is what keeps other code off the machine (CONTRIBUTING.md, "A self-hosted GPU
    runner"); the workflow adds what a file can: no job in a fork's copy, no pull-request trigger, no
    virtual environment outside the workspace that the checkout removes."""
    from tools.series import REPO

    text = (ROOT / ".github/workflows/gpu.yml").read_text(encoding="utf-8")
    assert f"if: github.repository == '{REPO}'" in text
    triggers = text[text.index("\non:"):text.index("\npermissions:")]
    assert "pull_request" not in triggers and "VENV" not in text and "RUNNER_TOOL_CACHE" not in text


def test_make_never_installs_system_packages():
    """A reader's `make` installs into .venv only: a browser or a font the site test needs is named in its
    message, and .ci/run (CI, on Debian as root) installs them itself."""
    recipes = [line for line in (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
               if line.startswith("\t")]
    commands = [re.sub(r'"[^"]*"', '""', line) for line in recipes]  # what a recipe prints is no command
    assert not [c for c in commands if re.search(r"\b(?:apt-get|apt|dnf|yum|brew)\s+install\b", c)], commands
    assert "apt-get install" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


# Project files speak of the series and of its users' machines: no file outside the repository, no
# bare number of an issue tracker nobody outside can read (say the rule and why instead), and no
# figure measured on the one machine a file was written on ("2.5 s here", "on two cores, 6 min 30 s"):
# timings come from the benchmarks (`make bench`, `make bench-setup`, `make bench-suite`) on the
# reader's own machine. Lessons and their translations are not scanned here: their figures are the
# stored outputs', checked by tests/test_stored_timings.py.
OUTSIDE_OR_MACHINE = re.compile(
    r"\.\./shared\b|\bSTYLE(?:\.md|:| \d)"
    r"|(?<![#\w])[Ii]ssues? \d+\b(?! ?%)"
    r"|\b\d+(?:[.,]\d+)? ?(?:s|ms|min|seconds|minutes) here\b|\(here: \d"
    r"|\bon (?:two|2) cores\b|\b(?:a|this) (?:two|2)-core machine\b|\bthe CI machine\b"
    r"|在两个核心上|这里每次|在这里：\S*\d"
)
SCANNED = (".py", ".md", ".toml", ".cfg", ".ini", ".txt", ".yml", ".yaml", ".cff")


def project_files() -> list:
    import subprocess

    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    paths = [ROOT / line for line in listed.splitlines()]
    return [p for p in paths if p.is_file() and (p.suffix in SCANNED or p.name == "Makefile")
            and not p.is_relative_to(ROOT / "notebooks") and not p.is_relative_to(ROOT / "i18n")
            and p.name != "test_project.py"]  # this file plants such phrases to test the scan


def test_no_project_file_names_a_file_outside_the_repository_a_bare_issue_or_a_timing_of_one_machine():
    found = [f"{p.relative_to(ROOT)}:{n}: {m.group()!r}" for p in project_files()
             for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             for m in OUTSIDE_OR_MACHINE.finditer(line)]
    assert not found, "\n".join(found)


def test_the_scan_finds_planted_machine_facts_and_leaves_the_users_machine_alone():
    planted = ["see ../shared/STYLE.md, 13", "(issue 18, item 3)", "each import takes 2.5 s here",
               "(here: 34 s with uv)", "on two cores, the suite took 6 min", "on a 2-core machine", "在两个核心上",
               "STYLE 14-15: helpers fold"]
    assert all(OUTSIDE_OR_MACHINE.search(text) for text in planted)
    fine = ["PyTorch issue #139990", "this machine has 1 CUDA GPU(s)", "Run every lesson on this machine's best device",
            "CUDA 12.6", "two GPUs on one machine"]
    assert not any(OUTSIDE_OR_MACHINE.search(text) for text in fine)


def test_the_readme_is_for_learners_first_and_short():
    """Open a lesson on Colab or Kaggle and the lesson table come first, then the two commands for a clone;
    running elsewhere, the changelog and the maintainers' pages are links."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[:3] == ["## Running on Colab or Kaggle", "## Lessons", "## Two commands"], headings
    for page in ("RUNNING.md", "CHANGELOG.md", "CONTRIBUTING.md", "ARCHITECTURE.md", "TEACHING.md"):
        assert f"]({page})" in text and (ROOT / page).exists(), page
