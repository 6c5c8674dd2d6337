"""`make handout`: the lessons for students, in a folder and a zip file, without the solutions.

    python -m tools.handout [--out DIR]     # default build/handout; the zip is DIR.zip beside it

The folder holds every lesson (notebooks/NN_*.ipynb) with its answer cells and checks, the Chinese
edition under zh/, and what they need to run there with no access to GitHub:

    README.md                 for students: the lessons, how to open them, answer and check
    NN_topic.ipynb            each lesson
    series_helpers/           the helpers these lessons were made with (utils.py, the checks in exercises/,
                              the Chinese texts), as the archive of a release holds them (tools/release.py)
    series-helpers.zip        the same as one file, to upload to Colab or Kaggle beside a lesson
    requirements.txt          what the lessons need on one's own machine
    LICENSE
    zh/                       the same in Chinese (zh/README.md, zh/NN_topic.ipynb, zh/series_helpers/,
                              zh/series-helpers.zip)

No solutions notebook goes in: they are kept out, not secret (the series is public). What changes
in a lesson, all generated (its setup cell, the lessons' own, takes the helpers from series_helpers/
beside the notebook, and only without them downloads them): its code cells have no outputs (a
student runs a cell to see what it prints), and its header does not say where the series' stored
outputs came from; the reveal after each predict moment (the prose after the predicted cell, up to
the next heading) is folded under a <details> line, so that the answer does not sit under the
question; its badges open the lesson at the hand-out's commit; and each link to a file the folder
lacks points to that file on GitHub (the worked solutions, the series' README), but the link to the
lesson list, which points to the folder's README.

Beside it go the teacher's pack, DIR-teacher/ and DIR-teacher.zip: the worked solutions of both
editions (with their stored outputs), tally_checks.py (tools/tally_checks.py: reads a folder of
returned notebooks and tabulates which checks passed, running none of their code) and a README.

The hand-out names the series' version in its README: the git commit of this checkout (`git rev-parse
HEAD`), or "unknown" outside git. Its links to GitHub point at that commit, or at the main branch
when it is unknown.
"""

from __future__ import annotations

import argparse
import functools
import re
import shutil
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

import nbformat

from tools import i18n, release, sync_notebooks
from tools.series import BRANCH, GITHUB_URL, HELPERS_ARCHIVE, REPO, ROOT, TAG, Lesson, dumps, lessons, read

HELPERS = sync_notebooks.HANDOUT_HELPERS
# The torch release the stored outputs were made with: the students' README pins it, as lesson 15 advises
TORCH = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["series"]["torch-default"]
PREDICT = {"en": re.compile(r"^\s*\*\*Predict\b", re.MULTILINE), "zh": re.compile(r"^\s*\*\*预测", re.MULTILINE)}
EXERCISE = re.compile(r"^#+ (?:Exercise|练习)\b", re.MULTILINE)
REVEAL = {"en": "Your prediction, checked (open it after running the cell)", "zh": "核对你的预测（运行单元格后再展开）"}


@dataclass(frozen=True)
class Edition:
    """Where one edition's lessons go in the folder, and what its README says."""

    code: str  # "en" or "zh"
    folder: str  # "" or "zh/"
    setup: sync_notebooks.Edition
    readme: str  # the repository's README of this edition (its lesson list is the folder's README's)
    lessons_heading: str  # the heading of the lesson list in the folder's README (its anchor is the links')


EDITIONS = (
    Edition("en", "", sync_notebooks.ENGLISH, "README.md", "Lessons"),
    Edition("zh", "zh/", sync_notebooks.CHINESE, "README.zh-CN.md", "课程"),
)


def repo_path(lesson: Lesson, ed: Edition) -> Path:
    return lesson.path if ed.code == "en" else i18n.zh_path(lesson.path)


@functools.cache
def version() -> str | None:
    """The git commit of this checkout (`git rev-parse HEAD`), or None outside git."""
    try:
        run = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = run.stdout.strip()
    return commit if run.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", commit) else None


def github_url(path: Path, anchor: str = "") -> str:
    """The file on GitHub, at this checkout's commit (the main branch when it is unknown)."""
    ref = version() or BRANCH
    return f"{GITHUB_URL}/blob/{ref}/{path.relative_to(ROOT).as_posix()}" + (f"#{anchor}" if anchor else "")


def relinked(text: str, notebook: Path, ed: Edition, in_folder: dict[Path, str]) -> str:
    """A markdown cell of ``notebook`` (its place in the repository) with its relative links pointed at
    the folder's files: a lesson to the lesson (``in_folder``: repository path -> folder path), the
    README's lesson list to the folder's README, anything else to the file on GitHub."""
    here = ed.folder

    def retarget(target: str) -> str:
        if re.match(r"^[a-z][a-z0-9+.-]*:|^/|^#", target):
            return target
        path, _, anchor = target.partition("#")
        resolved = (notebook.parent / path).resolve()
        readme = ROOT / ed.readme
        if resolved == readme and anchor == i18n.slug(ed.lessons_heading):
            return "README.md#" + anchor
        if resolved in in_folder:
            return relative(in_folder[resolved], here) + (f"#{anchor}" if anchor else "")
        return github_url(resolved, anchor) if resolved.is_relative_to(ROOT) else target

    def prose(part: str) -> str:
        for pattern in i18n.LINK_TARGETS:
            part = pattern.sub(lambda m: m.group(1) + retarget(m.group(2)) + m.group(3), part)
        return part

    pieces, last = [], 0
    for m in i18n.NOT_LINKS.finditer(text):
        pieces += [prose(text[last:m.start()]), m.group(0)]
        last = m.end()
    return "".join([*pieces, prose(text[last:])])


def relative(target: str, folder: str) -> str:
    """The folder path ``target`` as a link from a notebook in ``folder`` ("" or "zh/")."""
    if folder and target.startswith(folder):
        return target[len(folder):]
    return "../" * folder.count("/") + target


def handout_notebook(nb: nbformat.NotebookNode, notebook: Path, ed: Edition, in_folder: dict[Path, str]) -> str:
    commit = version()
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            if cell.get("id") == "header":  # its lessons come without outputs: no word of where those came from
                cell.source = cell.source.replace(sync_notebooks.SAVED_OUTPUTS[ed.code], "")
            cell.source = relinked(cell.source, notebook, ed, in_folder)
            if commit:  # the badges open the lesson as the hand-out has it, not as the last release has it
                cell.source = cell.source.replace(f"/{REPO}/blob/{TAG}/", f"/{REPO}/blob/{commit}/")
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    fold_reveals(nb.cells, ed)
    return dumps(nb)


def fold_reveals(cells: list, ed: Edition) -> None:
    """After each predict moment (a markdown cell with a **Predict** line, outside the exercises), put the
    answer (the next markdown cell after the predicted code, up to its first heading) under <details>."""
    for i, cell in enumerate(cells):
        if cell.cell_type != "markdown" or not PREDICT[ed.code].search(cell.source) or EXERCISE.search(cell.source):
            continue
        j = i + 1
        while j < len(cells) and cells[j].cell_type == "code":
            j += 1
        if j == i + 1 or j == len(cells):
            continue
        source = cells[j].source
        heading = re.search(r"^#", source, re.MULTILINE)  # the answer runs up to the next heading
        first, rest = (source[:heading.start()], source[heading.start():]) if heading else (source, "")
        if not first.strip() or first.lstrip().startswith("<details"):
            continue
        folded = f"<details><summary>{REVEAL[ed.code]}</summary>\n\n{first.strip()}\n\n</details>"
        cells[j].source = folded + (f"\n\n{rest}" if rest else "")


# --- the students' README, in each edition ---------------------------------------------------------

README = {
    "en": """\
# GPU computing with PyTorch: the lessons

**[中文版](zh/README.md)**

The lessons of *GPU computing with PyTorch, lesson by lesson* ([on GitHub]({github})), for you to
work through. Each lesson is a Jupyter notebook that runs from top to bottom on a machine with or
without a GPU, and ends with exercises that check your answers. On Windows, lessons 13 and 14 need
WSL2 or Colab: they say why.

**Version:** {version}.

## Lessons

{table}

Start with lesson 00: it checks your setup and says how to fix what stands between you and your GPU.

## Opening the lessons

On your own machine, with Python 3.11 or newer: first install PyTorch {torch}, the release these
lessons were made with, in the build that fits your machine (lesson 15 says which). With an NVIDIA
GPU whose driver serves CUDA 12.6 or newer:

```bash
pip install "torch=={torch}" --index-url https://download.pytorch.org/whl/cu126
```

On a machine without an NVIDIA GPU, the CPU-only build is much smaller than the default one, which
brings CUDA along on Linux:

```bash
pip install "torch=={torch}" --index-url https://download.pytorch.org/whl/cpu
```

Then install the rest and start JupyterLab in this folder:

```bash
pip install -r requirements.txt
jupyter lab
```

Open a lesson in JupyterLab's file browser and run its cells from the top, one by one with
Shift+Enter, or all of them with *Run → Run All Cells*. The first code cell makes the helpers
importable: run it first. The code cells come without their outputs: run a cell to see what it
prints on your machine. Where a lesson asks you to predict what a cell prints, decide first, run
the cell, then open the folded line under it to compare.

On Colab or Kaggle, upload the lesson's notebook from this folder, or open the lesson from the badges
in its first cell. A lesson opened from its badge downloads the helpers from GitHub, and so does an
uploaded one that finds no helpers beside it, so the session needs internet access (Kaggle:
*Settings → Internet → on*). To use this folder's helpers there instead, upload `series-helpers.zip`
too and point the first code cell at it in a cell before that one (on Kaggle, with the path of the
uploaded file):

```python
import os
os.environ["GPU_LESSONS_URL"] = "file:///content/series-helpers.zip"
```

## Answering the exercises

Under each exercise is a cell for your answer: write it where the `...` is and run the cell. Then run
the check below it. It says whether your answer is right, or what is wrong, without giving the
solution away; until you answer, it says that you have not answered yet. Where it offers a hint,
run `hint(...)` with the exercise's id, the name in its check cell (for example
`hint("copies.to-numpy")`). When you are done, save the notebook (*File → Save*) and hand it in as
your teacher asks.

The worked solutions are not in this folder. The last cell of each lesson links to them on GitHub
(at this version of the series): try the exercise first.

## The helpers are bundled

The lessons import the series' helpers (functions such as `try_gpu`) and the exercises' checks from
the folder `series_helpers/`, which comes with them. The first code cell of a lesson finds it beside
the notebook and downloads nothing, so the lessons need no internet. Keep that folder next to the
lessons: a lesson opened without it downloads the helpers from GitHub instead. The Chinese lessons
in `zh/` have their own copy.
""",
    "zh": """\
# 用 PyTorch 做 GPU 计算：课程

**[English](../README.md)**

这里是《用 PyTorch 做 GPU 计算：逐课讲解》（[GitHub 上的仓库]({github})）的课程，供你逐课学习。
每一课是一个 Jupyter 笔记本。有没有 GPU 都能从头运行到尾。每课最后有练习，会检查你的答案。
在 Windows 上，第 13 课和第 14 课需要 WSL2 或 Colab，课程里说明了原因。

**版本：**{version}。

## 课程

{table}

从第 00 课开始。它会检查你的环境配置，并告诉你如何解决妨碍你用上 GPU 的问题。

## 打开课程

在你自己的机器上需要 Python 3.11 或更高版本。先安装 PyTorch {torch}，这些课程就是用这个版本做的。
要选适合你机器的构建版本（第 15 课会告诉你选哪个）。
机器有 NVIDIA GPU，而且驱动支持 CUDA 12.6 或更新版本时：

```bash
pip install "torch=={torch}" --index-url https://download.pytorch.org/whl/cu126
```

机器没有 NVIDIA GPU 时，用纯 CPU 构建版本。它比默认的版本小得多，在 Linux 上默认的版本会带上 CUDA。

```bash
pip install "torch=={torch}" --index-url https://download.pytorch.org/whl/cpu
```

然后安装其余的依赖，并在这个文件夹中启动 JupyterLab：

```bash
pip install -r ../requirements.txt
jupyter lab
```

在 JupyterLab 的文件浏览器中打开一课，从头运行它的单元格。
可以按 Shift+Enter 逐个运行，也可以用 *Run → Run All Cells* 一次全部运行。
第一个代码单元格让辅助函数可以导入，请先运行它。
代码单元格不带输出，运行一个单元格才能看到它在你的机器上打印什么。
课程让你预测一个单元格的输出时，先想好答案，再运行单元格，然后展开它下面折起来的一行对照。

在 Colab 或 Kaggle 上，上传这个文件夹里这一课的笔记本，或者用它第一个单元格中的徽章打开。
用徽章打开的课程会从 GitHub 下载辅助函数。上传的课程在旁边找不到辅助函数时也会下载。
所以需要联网（Kaggle：*Settings → Internet → on*）。
想在那里改用这个文件夹里的辅助函数，就把 `series-helpers.zip` 也上传上去，
再在第一个代码单元格之前的一个单元格里让它指向这个文件（在 Kaggle 上，用上传后文件的路径）：

```python
import os
os.environ["GPU_LESSONS_URL"] = "file:///content/series-helpers.zip"
```

## 做练习

每道练习下面有一个答题单元格。在 `...` 处写下你的答案，然后运行这个单元格。
再运行它下面的检查单元格。它会告诉你答案对不对，错在哪里，但不会给出解答。
还没作答时，它会告诉你尚未作答。如果它说有提示，就用练习的编号运行 `hint(...)`。
编号就是检查单元格里的名字（例如 `hint("copies.to-numpy")`）。
做完以后保存笔记本（*File → Save*），按老师的要求交上去。

完整的解答不在这个文件夹里。每一课的最后一个单元格链接到 GitHub 上的解答（就是本系列的这个版本）。请先自己做一遍。

## 辅助函数随课程附带

课程从文件夹 `series_helpers/` 导入本系列的辅助函数（例如 `try_gpu`）和练习的检查。这个文件夹随课程一起提供。
每一课的第一个代码单元格会在笔记本旁边找到它，不下载任何东西，所以课程不需要联网。
请把这个文件夹留在课程旁边。没有它时，课程会改从 GitHub 下载辅助函数。
""",
}
CJK_BREAK = re.compile(r"(?<=[^\x00-\x7f])\n(?=[^\x00-\x7f#|*`\n])")
TABLE_HEAD = {
    "en": "| # | Lesson | What it teaches | Minutes | Runs on |\n|---|---|---|---|---|",
    "zh": "| # | 课程 | 内容 | 分钟 | 运行环境 |\n|---|---|---|---|---|",
}


VERSION = {
    "en": ("the series at commit [`{commit}`]({url})", "unknown (not made from a git checkout)"),
    "zh": ("本系列的提交 [`{commit}`]({url})", "未知（不是从 git 检出生成的）"),
}


def version_text(ed: Edition) -> str:
    """The README's words for the series' version: its commit, linked to it on GitHub, or unknown."""
    known, unknown = VERSION[ed.code]
    commit = version()
    return known.format(commit=commit, url=f"{GITHUB_URL}/tree/{commit}") if commit else unknown


def readme(ed: Edition, series: list[Lesson]) -> str:
    rows = [TABLE_HEAD[ed.code]]
    for lesson in series:
        title, purpose, runs_on = lesson.title, lesson.purpose, lesson.runs_on
        if ed.code == "zh":  # the lesson's words as its translation file has them (the English where it lacks them)
            catalog = i18n.Catalog(i18n.load(i18n.po_path(lesson.path)))
            title, purpose, runs_on = (catalog.get(ctx, text) or text
                                       for ctx, text in zip(i18n.FACTS, (title, purpose, runs_on), strict=True))
        rows.append(f"| {lesson.number} | [{title}]({lesson.path.name}) | {purpose} | {lesson.minutes} | {runs_on} |")
    text = README[ed.code].format(github=GITHUB_URL, table="\n".join(rows), version=version_text(ed), torch=TORCH)
    # Chinese prose is written in lines here, but a line break between two Chinese characters
    # would show as a space: each paragraph becomes one line
    return CJK_BREAK.sub("", text) if ed.code == "zh" else text


# --- the teacher's pack ----------------------------------------------------------------------------

TEACHER_README = {
    "en": """\
# GPU computing with PyTorch: the teacher's pack

**[中文版](zh/README.md)**

What goes with the students' hand-out ({version}), for you and not for them:

- `solutions/`: the worked solutions of every lesson, with the outputs they printed when the series
  made them; `zh/solutions/` holds the Chinese edition's.
- `tally_checks.py`: reads a folder of returned notebooks and tabulates which exercise checks passed.

## Tallying the returned notebooks

Put the notebooks your students return into one folder (subfolders are fine), then run, with any
Python 3.11 or newer (nothing to install):

```bash
python tally_checks.py returned/
python tally_checks.py returned/ --csv results.csv
```

It prints a table per lesson: a row per notebook, a column per exercise, and in each cell what the
check printed when the student last ran it: ✓ right, ✗ not yet, – not answered, · not run. It reads
the notebooks' stored outputs only and runs none of the students' code, so it shows what each
notebook says and no more: a check run before the answer changed, or an output edited by hand, is not
caught. Ask students to run *Restart & Run All* before they save; to verify one, run it again yourself
in a safe place, with the hand-out's `series_helpers/` beside it.
""",
    "zh": """\
# 用 PyTorch 做 GPU 计算：教师资料包

**[English](../README.md)**

这些资料配合学生的课程包（{version}），供你使用，不发给学生：

- `solutions/`：每一课的完整解答，带着本系列生成它们时打印的输出；中文版的解答在 `zh/solutions/`。
- `tally_checks.py`：读取一个文件夹里交回的笔记本，列表统计哪些练习检查通过了。

## 统计交回的笔记本

把学生交回的笔记本放进一个文件夹（可以有子文件夹），然后用 Python 3.11 或更高版本运行（不需要安装任何东西）：

```bash
python tally_checks.py returned/
python tally_checks.py returned/ --csv results.csv
```

它为每一课打印一张表：每个笔记本一行，每道练习一列。
每格是学生最后一次运行检查时检查打印的结果：✓ 答对了，✗ 还不对，– 还没有作答，· 没有运行。
它只读取笔记本里保存的输出，不运行学生的任何代码。所以它只显示笔记本里写着什么：
答案改了之后没有重新运行检查，或者有人手动改了输出，它都发现不了。
请学生在保存前运行 *Restart & Run All*。要核实某个笔记本，就在安全的地方自己再运行一遍，
旁边放上课程包里的 `series_helpers/`。
""",
}


def teacher_contents() -> dict[str, str]:
    """{path in the teacher's pack: text}: its README in each edition, the solutions, tally_checks.py."""
    files = {"tally_checks.py": (ROOT / "tools" / "tally_checks.py").read_text(encoding="utf-8")}
    for ed in EDITIONS:
        text = TEACHER_README[ed.code].format(version=version_text(ed))
        files[ed.folder + "README.md"] = CJK_BREAK.sub("", text) if ed.code == "zh" else text
        for lesson in lessons():
            path = repo_path(lesson, ed).parent / "solutions" / lesson.solutions.name
            if path.is_file():  # a solution's links go to GitHub, at the hand-out's commit
                nb = read(path)
                for cell in nb.cells:
                    if cell.cell_type == "markdown":
                        cell.source = relinked(cell.source, path, ed, {})
                files[f"{ed.folder}solutions/{path.name}"] = dumps(nb)
    return dict(sorted(files.items()))


# --- the folder and the zip ---------------------------------------------------------------------

def contents() -> dict[str, str | bytes]:
    """{path in the folder: text or bytes} of every file of the hand-out."""
    series = lessons()
    in_folder = {repo_path(lesson, ed): ed.folder + lesson.path.name for ed in EDITIONS for lesson in series}
    helpers = release.archive_files()  # read once: both editions bring the same helpers, unpacked and zipped
    archive = release.archive_bytes(helpers)
    files = {"requirements.txt": (ROOT / "requirements.txt").read_text(encoding="utf-8"),
             "LICENSE": (ROOT / "LICENSE").read_text(encoding="utf-8")}
    for ed in EDITIONS:
        files[ed.folder + "README.md"] = readme(ed, series)
        files[ed.folder + Path(HELPERS_ARCHIVE).name] = archive
        files |= {f"{ed.folder}{HELPERS}/{name}": data for name, data in helpers.items()}
        for lesson in series:
            path = repo_path(lesson, ed)
            files[ed.folder + lesson.path.name] = handout_notebook(read(path), path, ed, in_folder)
    return dict(sorted(files.items()))


def write(out: Path) -> Path:
    """Write the hand-out into ``out`` (made anew) and ``out``.zip beside it, and the teacher's pack into
    ``out``-teacher and ``out``-teacher.zip; return the hand-out zip's path."""
    teacher = out.with_name(out.name + "-teacher")
    for folder, marker in ((out, f"{HELPERS}/utils.py"), (teacher, "tally_checks.py")):
        if folder.exists():
            if not (folder / marker).is_file() and any(folder.iterdir()):
                raise SystemExit(f"{folder} exists and is no hand-out (it has no {marker}): choose another --out")
            shutil.rmtree(folder)
    archive = write_folder(out, contents())
    write_folder(teacher, teacher_contents())
    return archive


def write_folder(out: Path, files: dict[str, str | bytes]) -> Path:
    """Write ``files`` into the folder ``out`` and into ``out``.zip beside it; return the zip's path."""
    data = {name: text if isinstance(text, bytes) else text.encode("utf-8") for name, text in files.items()}
    for name, content in data.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(content)
    archive = out.with_name(out.name + ".zip")
    archive.write_bytes(release.zip_bytes(data, prefix=f"{out.name}/"))
    return archive


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0].strip("`"))
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "handout",
                        help="the folder to write (made anew); the zip goes beside it (default: build/handout)")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    archive = write(out)
    print(f"wrote {out} ({len(lessons())} lessons in {len(EDITIONS)} editions, the helpers, a README for"
          f" students) and {archive}; the teacher's pack (solutions, tally_checks.py) in {out}-teacher and"
          f" {out}-teacher.zip")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
