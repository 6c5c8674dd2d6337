"""The tools that write stored outputs and run the GPU suite, and how the tools import each other."""

from __future__ import annotations

import ast
from pathlib import Path

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
