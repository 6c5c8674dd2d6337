"""The tools that write stored outputs and run the GPU suite, and how the tools import each other."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tools import execute
from tools.series import ROOT


def test_tidy_traceback_folds_library_frames_and_strips_colour():
    frames = [
        "\x1b[31m---\x1b[39m",
        "Cell In[6], line 1\n----> 1 X + Y\n",
        f"File {ROOT}/.venv/lib/python3.11/site-packages/torch/_compile.py:54, in inner()\n",
        "File /usr/lib/python3.11/functools.py:10, in wrapper()\n",
        f"File {ROOT}/utils.py:99, in model_device(net)\n",
        "\x1b[31mRuntimeError\x1b[39m: Tensor on device meta is not on the expected device cpu!",
    ]
    tidy = execute.tidy_traceback(frames)
    assert tidy == [
        "---",
        "Cell In[6], line 1\n----> 1 X + Y\n",
        "File utils.py:99, in model_device(net)\n",
        "[2 frame(s) inside installed libraries left out]",
        "RuntimeError: Tensor on device meta is not on the expected device cpu!",
    ]


def tools_imports(folder: Path) -> dict[str, set[str]]:
    """Which modules of the folder (a package named after it) each one imports, at module level or
    inside a function alike: `import tools.x`, `from tools import x`, `from tools.x import y`, `from . import x`."""
    package = folder.name
    modules = {p.stem for p in folder.glob("*.py")} - {"__init__"}
    graph = {}
    for name in sorted(modules):
        found = set()
        for node in ast.walk(ast.parse((folder / f"{name}.py").read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[1] for a in node.names if a.name.startswith(package + ".")}
            elif isinstance(node, ast.ImportFrom):
                parts = [] if node.level else (node.module or "").split(".")
                if node.level:  # relative: from . import x, from .x import y
                    parts = [package] + (node.module.split(".") if node.module else [])
                if parts[:1] == [package]:
                    found |= {parts[1]} if len(parts) > 1 else {a.name for a in node.names}
        graph[name] = found & modules
    return graph


def import_circle(graph: dict[str, set[str]]) -> list[str]:
    """One circle of imports (its first module repeated at the end), or [] if there is none."""
    state: dict[str, str] = {}  # "open" while on the current path, "done" after

    def visit(module: str, path: list[str]) -> list[str]:
        state[module] = "open"
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                return [*path[path.index(imported):], imported]
            if imported not in state and (circle := visit(imported, [*path, imported])):
                return circle
        state[module] = "done"
        return []

    for module in sorted(graph):
        if module not in state and (circle := visit(module, [module])):
            return circle
    return []


def test_the_tools_import_each_other_without_a_circle():
    graph = tools_imports(ROOT / "tools")
    assert {"i18n", "series"} <= graph["sync_notebooks"] and "i18n" in graph["translate"]  # the graph is read
    circle = import_circle(graph)
    assert not circle, "tools/*.py import each other in a circle: " + " -> ".join(f"tools/{m}.py" for m in circle)


def test_an_import_circle_through_a_function_is_found(tmp_path):
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "a.py").write_text("from tools.b import f\n")
    (folder / "b.py").write_text("def f():\n    from tools import c\n")
    (folder / "c.py").write_text("import json\nimport tools.a\n")
    (folder / "d.py").write_text("from . import a\n")
    graph = tools_imports(folder)
    assert graph == {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_circle(graph) == ["a", "b", "c", "a"]
    assert import_circle({**graph, "c": set()}) == []


# tools/venv.py: uv given pip's own settings ------------------------------------------------------

def test_venv_reads_pip_settings_the_way_pip_ranks_them(monkeypatch):
    from tools import venv

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    listing = ("global.find-links='/opt/wheels'\n"
               "global.extra-index-url='file:///a/simple file:///b/simple'\n"
               "global.constraint='/etc/pip/constraints.txt'\n"
               "user.index-url='https://mirror.example/simple'\n"
               ":env:.index-url='https://env.example/simple'\n"
               ":env:.default-timeout='180'\n"
               "global.cert='/etc/ssl/certs/ca.crt'\n"
               "not a setting\n")
    settings = venv.pip_settings(listing)
    assert settings == {"find-links": ["/opt/wheels"], "extra-index-url": ["file:///a/simple", "file:///b/simple"],
                        "constraint": ["/etc/pip/constraints.txt"], "index-url": ["https://env.example/simple"],
                        "cert": ["/etc/ssl/certs/ca.crt"]}  # the environment wins; a timeout chooses no file
    assert venv.uv_options(settings) == [
        "--index-strategy", "unsafe-best-match", "--index-url", "https://env.example/simple",
        "--extra-index-url", "file:///a/simple", "--extra-index-url", "file:///b/simple",
        "--find-links", "/opt/wheels", "--constraint", "/etc/pip/constraints.txt"]
    assert venv.uv_environment(settings)["SSL_CERT_FILE"] == "/etc/ssl/certs/ca.crt"
    assert venv.pip_settings("") == {} and venv.uv_options({}) == ["--index-strategy", "unsafe-best-match"]


def test_venv_takes_uv_and_pip_at_the_locked_versions_and_refuses_an_unknown_installer(monkeypatch, tmp_path):
    from tools import venv

    pins = dict(line.split("==") for line in (ROOT / "constraints.txt").read_text().splitlines()
                if line and not line.startswith("#"))
    assert venv.locked("uv") == f"uv=={pins['uv']}" and venv.locked("pip") == f"pip=={pins['pip']}"
    monkeypatch.setenv("SERIES_INSTALLER", "conda")
    with pytest.raises(SystemExit, match="SERIES_INSTALLER must be uv or pip, not 'conda'"):
        venv.main([str(tmp_path / "env")])
    assert not (tmp_path / "env").exists()


def test_each_worker_gets_its_share_of_the_cores():
    import importlib.util

    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    root_conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(root_conftest)

    assert root_conftest.threads_per_worker(2, 2) == 1
    assert root_conftest.threads_per_worker(16, 4) == 4
    assert root_conftest.threads_per_worker(2, 4) == 1        # never none
    assert root_conftest.threads_per_worker(8, None) is None  # no workers: torch's own default
    assert root_conftest.threads_per_worker(8, 1) is None
    assert root_conftest.threads_per_worker(None, 2) is None


def test_venv_installs_torch_alone_then_the_groups_with_what_python_m_venv_would_have(monkeypatch, tmp_path):
    """uv's environment starts empty (`venv --without-pip`): pip and setuptools are installed, locked, as
    `python -m venv` has them on Python 3.11 (torch 2.4's torch.utils.benchmark imports setuptools)."""
    from tools import venv

    commands = []
    monkeypatch.delenv("SERIES_INSTALLER", raising=False)
    monkeypatch.setattr(venv, "run", lambda cmd, **kwargs: commands.append([str(c) for c in cmd]))
    monkeypatch.setattr(venv, "get_uv", lambda *_: tmp_path / "uv")
    monkeypatch.setattr(venv, "has_torch", lambda _: False)
    monkeypatch.setattr(venv, "read_pip_settings", lambda _: {"find-links": ["/wheels"]})
    monkeypatch.setattr(venv, "warm", lambda python: commands.append(["warm", str(python)]))
    assert venv.main([str(tmp_path / "env"), "--torch", "2.13.0", "--group", "dev"]) == 0
    create, torch_step, groups, warm = commands
    assert create[1:] == ["-m", "venv", "--without-pip", str(tmp_path / "env")]
    assert torch_step[:3] == [str(tmp_path / "uv"), "pip", "install"]
    assert torch_step[-2:] == ["--no-deps", "torch==2.13.0"]
    assert ["--find-links", "/wheels"] == torch_step[torch_step.index("--find-links"):][:2]
    assert groups[-3:] == [venv.locked("pip"), venv.locked("setuptools"), "--group=dev"]
    assert warm[0] == "warm"


def test_bench_fresh_keeps_a_steps_summary_line_and_stops_with_its_output_when_it_fails(tmp_path):
    from tools import fresh_speed

    seconds, summary = fresh_speed.timed(["sh", "-c", "echo collecting; echo '=== 3 passed in 1.0s ==='; echo done"],
                                         tmp_path)
    assert summary == "3 passed in 1.0s" and seconds >= 0
    with pytest.raises(SystemExit, match=r"(?s)exit 4\).*the reason"):
        fresh_speed.timed(["sh", "-c", "echo the reason; exit 4"], tmp_path)


def test_gc_is_frozen_after_collection_so_a_helpers_gc_collect_skips_the_imported_objects():
    import gc

    assert gc.get_freeze_count() > 10_000   # what collection imported (torch, every test module): conftest.py
