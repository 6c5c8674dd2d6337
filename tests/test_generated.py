"""Generated parts (navigation, badges, setup cells, the README lesson table) are up to date."""

from __future__ import annotations

import sync_notebooks
from series import ROOT, lessons


def test_generated_parts_match_what_the_script_writes():
    stale = [p.relative_to(ROOT).as_posix() for p, text in sync_notebooks.planned().items()
             if p.read_text(encoding="utf-8") != text]
    assert not stale, f"edited by hand or not regenerated; run `make sync`: {stale}"


def test_lessons_are_numbered_in_reading_order_without_gaps():
    numbers = [int(lesson.number) for lesson in lessons()]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))


def test_every_lesson_has_its_solutions_notebook():
    for lesson in lessons():
        assert lesson.solutions.exists(), lesson.solutions


def test_every_lesson_ends_with_a_summary_and_exercises():
    import json

    for lesson in lessons():
        text = "\n".join("".join(c["source"]) for c in json.loads(lesson.path.read_text())["cells"]
                         if c["cell_type"] == "markdown")
        assert "## Summary" in text and "## Exercises" in text, lesson.path.name


def test_badges_open_that_very_notebook():
    import json

    from series import REPO, all_notebooks

    for path in all_notebooks():
        header = "".join(json.loads(path.read_text())["cells"][0]["source"])
        rel = path.relative_to(ROOT).as_posix()
        assert f"colab.research.google.com/github/{REPO}/blob/main/{rel})" in header, rel
        assert f"kaggle.com/kernels/welcome?src=https://github.com/{REPO}/blob/main/{rel})" in header, rel


def test_notebooks_ask_colab_for_a_gpu_runtime():
    import json

    from series import all_notebooks

    for path in all_notebooks():
        assert json.loads(path.read_text())["metadata"]["accelerator"] == "GPU", path.name
