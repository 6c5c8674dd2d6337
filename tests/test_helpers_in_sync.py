"""A helper is written once: the `#@save` cell of the lesson that teaches it and utils.py hold the same code."""

from __future__ import annotations

import ast
import json

import pytest
from series import ROOT, all_notebooks

UTILS = (ROOT / "utils.py").read_text(encoding="utf-8")


def top_level_functions(source: str) -> dict[str, str]:
    tree = ast.parse(source)
    return {node.name: ast.get_source_segment(source, node) for node in tree.body
            if isinstance(node, ast.FunctionDef)}


def code_cells(path):
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code":
            yield "".join(cell["source"])


def saved_helpers():
    """(notebook, name, source) for every function defined in a #@save cell."""
    for path in all_notebooks():
        for source in code_cells(path):
            if source.lstrip().startswith("#@save"):
                for name, code in top_level_functions(source).items():
                    yield path.relative_to(ROOT).as_posix(), name, code


SAVED = list(saved_helpers())
UTILS_FUNCTIONS = top_level_functions(UTILS)


def test_the_lessons_save_helpers_at_all():
    assert {name for _, name, _ in SAVED} >= {"try_gpu", "try_all_gpus", "two_different_devices", "model_device"}


@pytest.mark.parametrize(("notebook", "name", "code"), SAVED, ids=[f"{n}:{f}" for n, f, _ in SAVED])
def test_saved_helper_is_identical_in_utils(notebook, name, code):
    assert name in UTILS_FUNCTIONS, f"{notebook} saves {name}(), but utils.py does not define it"
    assert UTILS_FUNCTIONS[name] == code, f"{name}() in {notebook} and in utils.py have drifted apart"


def test_each_helper_is_taught_in_one_lesson_only():
    names = [name for _, name, _ in SAVED]
    assert len(names) == len(set(names)), names


def test_no_notebook_pastes_a_copy_of_a_helper_without_saving_it():
    saved = {name for _, name, _ in SAVED}
    for path in all_notebooks():
        for source in code_cells(path):
            if source.lstrip().startswith("#@save"):
                continue
            pasted = set(top_level_functions(source)) & set(UTILS_FUNCTIONS)
            assert not pasted, f"{path.name} redefines {pasted}: import it from utils instead"
    public = {n for n in UTILS_FUNCTIONS if not n.startswith("_")} - {"hardware_summary"}
    assert public <= saved, f"utils.py helpers that no lesson teaches: {public - saved}"
