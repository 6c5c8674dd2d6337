"""Start a new lesson from the series' template: `make new-lesson NAME=16_topic TITLE="A title"`.

    python -m tools.new_lesson 16_topic "A title" [--topic TOPIC]

Writes every file a lesson has, in the shape the checks expect, so that `make lint` and the new
lesson's own tests pass before a word of it is written (tests/test_new_lesson.py proves it in a
scratch copy):

- `notebooks/NN_topic.ipynb`: the opening cell (title, purpose, "runs on"), "What you will learn", one
  section with a code cell and a predict moment, the summary, one exercise with its answer cell and
  its one-line check, under the standard "Exercises" cell;
- `notebooks/solutions/NN_topic_solutions.ipynb`: the exercise solved, passing its check;
- `exercises/TOPIC.py`: the exercise's check (`TOPIC.first-look`), which judges the answer against
  what this machine does; `exercises/messages.py`: its messages (wrong, right, hint);
- `tests/test_checks_TOPIC.py`: the right answer passes, written two ways; wrong ones fail;
- then `make sync` (header, setup and footer cells, navigation, README and TEACHING tables,
  `utils.py`, the translation files and the Chinese twins, which show the English until translated)
  and `make outputs` for the two new notebooks and their twins, then `make sync` again (minutes).

What it leaves to you, as CONTRIBUTING.md's recipe says: the lesson's idea, its diagram, its exercises
and their checks (replace the template's), the Chinese translation (`python -m tools.translate todo`),
and TEACHING.md's week plans, if the lesson joins one. The number must be the next one: the
series is never renumbered by this tool.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

import nbformat

from tools import series

NAME = re.compile(r"^(\d\d)_([a-z][a-z0-9_]*)$")


def cells(topic: str, title: str) -> list[nbformat.NotebookNode]:
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    made = [
        md(f"# {title}\n\n*What a learner can do after this lesson, in one sentence.*\n\n"
           "**Runs on:** CPU · 1 GPU · several GPUs · Apple MPS. **Time:** about 20 minutes."),
        md("## What you will learn\n\n- where a new tensor lives, and how to ask it"),
        code("import torch\n\nfrom utils import try_gpu\n\ndevice = try_gpu()"),
        md("## 1. Where a tensor lives\n\nEvery tensor knows its device. A new one is made in main memory unless "
           "we ask for another device.\n\n**Predict:** on which device does `torch.ones(2)` live?"),
        code("torch.ones(2).device"),
        md("On every machine: the CPU, whatever GPU the machine has. `torch.ones(2, device=device)` "
           "would put it on the device `try_gpu()` picked."),
        md("## Summary\n\n- A new tensor lives on the CPU unless we name another device."),
        md("## Exercises\n\nUnder each exercise is a cell for your answer: write it where the `...` is and run "
           "the cell. Then run the check below it, which says whether your answer is right, or what is wrong, "
           "without giving the solution away; when it offers a hint, `hint(...)` gives one."),
        code("from exercises import check, hint"),
        md("### Exercise 1 · A first look\n*Needs: any machine · about 5 minutes.*\n\n"
           "Write `where_ones()`, which returns the device type of a new `torch.ones(2)` as a string, such as "
           "`\"cpu\"`."),
        code("def where_ones():\n    \"\"\"The device type of a new torch.ones(2), as a string.\"\"\"\n    ..."),
        code(f'check("{topic}.first-look", where_ones)'),
    ]
    ids = ["opening", "learn", "imports", "01", "02", "03", "summary", "ex", "ex-import", "ex-first-look",
           "ex-first-look-answer", "ex-first-look-check"]
    for cell, suffix in zip(made, ids, strict=True):
        cell.id = f"{topic}-{suffix}"
    return made


def solution_cells(topic: str) -> list[nbformat.NotebookNode]:
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    made = [
        code("import torch\n\nfrom exercises import check"),
        md("## Exercise 1: a first look\n\nA tensor's `.device` is a `torch.device`; its `.type` is the string."),
        code("def where_ones():\n    \"\"\"The device type of a new torch.ones(2), as a string.\"\"\"\n"
             "    return torch.ones(2).device.type\n\n\n"
             f'assert check("{topic}.first-look", where_ones)'),
    ]
    for k, cell in enumerate(made, start=1):
        cell.id = f"{topic}-sol-{k:02d}"
    return made


def check_module(topic: str, module: str, number: str, title: str) -> str:
    return f'''"""The checks of lesson {number}, {title.lower()}."""

import torch

from .core import _expect, _register, _Wrong


@_register("{topic}.first-look", hint="{topic}.first-look/hint")
def _{module}_first_look(where_ones):
    got = _expect(where_ones(), str, "where_ones()")
    want = torch.ones(2).device.type
    if got.strip().lower() != want:
        raise _Wrong("{topic}.first-look/wrong", got=got, want=want)
    return {{"where": want}}
'''


def messages(topic: str) -> str:
    return (f'    "{topic}.first-look/wrong": "where_ones() returns {{got!r}}, but a new torch.ones(2) lives "\n'
            f'                                 "on {{want!r}}: read its .device.type.",\n'
            f'    "{topic}.first-look/right": "A new torch.ones(2) lives on {{where}}.",\n'
            f'    "{topic}.first-look/hint": "A tensor\'s .device says where it lives; a device\'s .type is a '
            f'string.",\n')


def test_module(topic: str, module: str, number: str, title: str) -> str:
    return f'''"""The checks of lesson {number}'s exercises (exercises/{module}.py): the right answer passes, written
two ways; typical wrong ones fail with their message."""

import torch

from exercises import check


def said(capsys) -> str:
    return capsys.readouterr().out


def test_first_look_accepts_the_device_type_however_it_is_read(capsys):
    assert check("{topic}.first-look", lambda: torch.ones(2).device.type)
    assert check("{topic}.first-look", lambda: str(torch.zeros(3).device).split(":")[0])
    assert "A new torch.ones(2) lives on cpu." in said(capsys)


def test_first_look_rejects_another_device_and_a_device_object(capsys):
    assert not check("{topic}.first-look", lambda: "cuda")
    assert "read its .device.type" in said(capsys)
    assert not check("{topic}.first-look", lambda: torch.ones(2).device)
    assert "should be a str" in said(capsys)
'''


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="NN_topic: the next lesson number and the notebook's name")
    parser.add_argument("title", help="the lesson's title")
    parser.add_argument("--topic", help="the check ids' prefix (default: the name's words joined by -)")
    parser.add_argument("--no-outputs", action="store_true", help="skip `make outputs` (the notebooks stay unrun)")
    args = parser.parse_args(argv)
    m = NAME.match(args.name)
    if not m:
        parser.error(f"{args.name!r} is not NN_topic (two digits, an underscore, lowercase words joined by _)")
    number, slug = m.groups()
    existing = sorted(int(p.name[:2]) for p in series.NOTEBOOKS.glob("*.ipynb") if series.LESSON_NAME.match(p.name))
    if existing and int(number) != existing[-1] + 1:
        parser.error(f"the next lesson is {existing[-1] + 1:02d}, not {number}: this tool never renumbers lessons")
    topic = args.topic or slug.replace("_", "-")
    module = topic.replace("-", "_")
    lesson = series.NOTEBOOKS / f"{args.name}.ipynb"
    solutions = series.SOLUTIONS / f"{args.name}_solutions.ipynb"
    check_file = series.ROOT / "exercises" / f"{module}.py"
    test_file = series.ROOT / "tests" / f"test_checks_{module}.py"
    for path in (lesson, solutions, check_file, test_file):
        if path.exists():
            parser.error(f"{path.relative_to(series.ROOT)} exists already")
    messages_file = series.ROOT / "exercises" / "messages.py"
    text = messages_file.read_text(encoding="utf-8")
    if f'"{topic}.' in text:
        parser.error(f"exercises/messages.py already has messages for {topic!r}: pick another --topic")

    series.write(nbformat.v4.new_notebook(cells=cells(topic, args.title)), lesson)
    series.write(nbformat.v4.new_notebook(cells=solution_cells(topic)), solutions)
    check_file.write_text(check_module(topic, module, number, args.title), encoding="utf-8")
    end = text.rstrip().rindex("}")
    messages_file.write_text(text[:end] + messages(topic) + text[end:], encoding="utf-8")
    test_file.write_text(test_module(topic, module, number, args.title), encoding="utf-8")


    def run(*command: str) -> None:
        print("$", " ".join(command), flush=True)
        subprocess.run([sys.executable, *command], cwd=series.ROOT, check=True)

    run("-m", "tools.sync_notebooks")
    if not args.no_outputs:
        run("-m", "tools.execute", "outputs", str(lesson.relative_to(series.ROOT)),
            str(solutions.relative_to(series.ROOT)))
        run("-m", "tools.sync_notebooks")
    made = [lesson, solutions, check_file, test_file]
    print("\nwrote " + ", ".join(p.relative_to(series.ROOT).as_posix() for p in made)
          + " (and the generated files `make sync` names above). Next: CONTRIBUTING.md, \"Adding a lesson\".")
    print(json.dumps({"lesson": lesson.relative_to(series.ROOT).as_posix(), "topic": topic}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
