"""`make handout`: the lessons for students, in a folder and a zip file, without the solutions.

    python -m tools.handout [--out DIR]     # default build/handout; the zip is DIR.zip beside it

The folder holds every lesson (notebooks/NN_*.ipynb) with its answer cells, checks and stored
outputs, the Chinese edition under zh/, and what they need to run there with no access to GitHub:

    README.md                 for students: the lessons, how to open them, answer and check
    NN_topic.ipynb            each lesson
    series_helpers/utils.py   the helpers: this checkout's utils.py, which these lessons were made with
    requirements.txt          what the lessons need on one's own machine
    LICENSE
    zh/                       the same in Chinese (zh/README.md, zh/NN_topic.ipynb, zh/series_helpers/)

No solutions notebook goes in: they are kept out, not secret (the series is public). Two things
change in a lesson, both generated: its setup cell is the hand-out's (sync_notebooks.handout_setup:
it takes the helpers from series_helpers/ beside the notebook, and only without them downloads
them), and each link to a file the folder lacks points to that file on GitHub (the worked
solutions, the series' README), but the link to the lesson list, which points to the folder's README.

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
import zipfile
from dataclasses import dataclass
from pathlib import Path

import nbformat

from tools import i18n, sync_notebooks
from tools.series import BRANCH, GITHUB_URL, ROOT, Lesson, dumps, lessons, read

HELPERS = sync_notebooks.HANDOUT_HELPERS
ZIP_DATE = (2026, 1, 1, 0, 0, 0)  # every entry's date: the same files make the same zip


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
    setup = sync_notebooks.handout_setup(ed.setup)
    for cell in nb.cells:
        if cell.get("id") == "setup":
            cell.source = setup
        elif cell.cell_type == "markdown":
            cell.source = relinked(cell.source, notebook, ed, in_folder)
    return dumps(nb)


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

On your own machine, with Python 3.11 or newer: if it has an NVIDIA GPU, first install the PyTorch
build that fits it (lesson 15 says which). Then install the rest and start JupyterLab in this folder:

```bash
pip install -r requirements.txt
jupyter lab
```

On a Linux laptop without an NVIDIA GPU, install PyTorch's CPU-only build first: it is much smaller
than the default one, which brings CUDA along.

```bash
pip install torch --index-url https://download.pytorch.org/whl/cpu
pip install -r requirements.txt
```

Open a lesson in JupyterLab's file browser and run its cells from the top, one by one with
Shift+Enter, or all of them with *Run → Run All Cells*. The first code cell makes the helpers
importable: run it first.

On Colab or Kaggle, upload the lesson's notebook from this folder, or open the lesson from the badges
in its first cell. A lesson opened from its badge downloads the helpers from GitHub, and so does an
uploaded one that finds no helpers beside it, so the session needs internet access (Kaggle:
*Settings → Internet → on*). To use this folder's helpers there instead, upload
`series_helpers/utils.py` too. On Colab, put it into a folder `/content/series_helpers/`, where the
first code cell of a lesson from this folder finds it. Or, for any lesson, upload it and point the
first code cell at it in a cell before that one (on Kaggle, with the path of the uploaded file):

```python
import os
os.environ["GPU_LESSONS_URL"] = "file:///content/utils.py"
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

The lessons import the series' helpers (functions such as `try_gpu`) from `series_helpers/utils.py`,
which comes with them. The first code cell of a lesson finds it beside the notebook and downloads
nothing, so the lessons need no internet. Keep that folder next to the lessons: a lesson opened
without it downloads the helpers from GitHub instead. The Chinese lessons in `zh/` have their own copy.
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

在你自己的机器上需要 Python 3.11 或更高版本。如果机器有 NVIDIA GPU，
先安装适合它的 PyTorch 构建版本（第 15 课会告诉你选哪个）。
然后安装其余的依赖，并在这个文件夹中启动 JupyterLab：

```bash
pip install -r ../requirements.txt
jupyter lab
```

在没有 NVIDIA GPU 的 Linux 笔记本电脑上，先安装 PyTorch 的纯 CPU 构建版本。
它比默认的版本小得多，默认的版本会带上 CUDA。

```bash
pip install torch --index-url https://download.pytorch.org/whl/cpu
pip install -r ../requirements.txt
```

在 JupyterLab 的文件浏览器中打开一课，从头运行它的单元格。
可以按 Shift+Enter 逐个运行，也可以用 *Run → Run All Cells* 一次全部运行。
第一个代码单元格让辅助函数可以导入，请先运行它。

在 Colab 或 Kaggle 上，上传这个文件夹里这一课的笔记本，或者用它第一个单元格中的徽章打开。
用徽章打开的课程会从 GitHub 下载辅助函数。上传的课程在旁边找不到辅助函数时也会下载。
所以需要联网（Kaggle：*Settings → Internet → on*）。
想在那里改用这个文件夹里的辅助函数，就把 `series_helpers/utils.py` 也上传上去。
在 Colab 上，把它放进文件夹 `/content/series_helpers/`，这个文件夹里的课程的第一个代码单元格会在那里找到它。
对任何一课，也可以上传这个文件，再在第一个代码单元格之前的一个单元格里让它指向这个文件
（在 Kaggle 上，用上传后文件的路径），例如：

```python
import os
os.environ["GPU_LESSONS_URL"] = "file:///content/utils.py"
```

## 做练习

每道练习下面有一个答题单元格。在 `...` 处写下你的答案，然后运行这个单元格。
再运行它下面的检查单元格。它会告诉你答案对不对，错在哪里，但不会给出解答。
还没作答时，它会告诉你尚未作答。如果它说有提示，就用练习的编号运行 `hint(...)`。
编号就是检查单元格里的名字（例如 `hint("copies.to-numpy")`）。
做完以后保存笔记本（*File → Save*），按老师的要求交上去。

完整的解答不在这个文件夹里。每一课的最后一个单元格链接到 GitHub 上的解答（就是本系列的这个版本）。请先自己做一遍。

## 辅助函数随课程附带

课程从 `series_helpers/utils.py` 导入本系列的辅助函数（例如 `try_gpu`）。这个文件随课程一起提供。
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
    text = README[ed.code].format(github=GITHUB_URL, table="\n".join(rows), version=version_text(ed))
    # Chinese prose is written in lines here, but a line break between two Chinese characters
    # would show as a space: each paragraph becomes one line
    return CJK_BREAK.sub("", text) if ed.code == "zh" else text


# --- the folder and the zip ---------------------------------------------------------------------

def contents() -> dict[str, str]:
    """{path in the folder: text} of every file of the hand-out."""
    series = lessons()
    in_folder = {repo_path(lesson, ed): ed.folder + lesson.path.name for ed in EDITIONS for lesson in series}
    helpers = (ROOT / "utils.py").read_text(encoding="utf-8")
    files = {"requirements.txt": (ROOT / "requirements.txt").read_text(encoding="utf-8"),
             "LICENSE": (ROOT / "LICENSE").read_text(encoding="utf-8")}
    for ed in EDITIONS:
        files[ed.folder + "README.md"] = readme(ed, series)
        files[f"{ed.folder}{HELPERS}/utils.py"] = helpers
        for lesson in series:
            path = repo_path(lesson, ed)
            files[ed.folder + lesson.path.name] = handout_notebook(read(path), path, ed, in_folder)
    return dict(sorted(files.items()))


def write(out: Path) -> Path:
    """Write the hand-out into ``out`` (made anew) and ``out``.zip beside it; return the zip's path."""
    if out.exists():
        if not (out / HELPERS / "utils.py").is_file() and any(out.iterdir()):
            raise SystemExit(f"{out} exists and is no hand-out (it has no {HELPERS}/utils.py): choose another --out")
        shutil.rmtree(out)
    files = contents()
    for name, text in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text, encoding="utf-8")
    archive = out.with_name(out.name + ".zip")
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in files.items():
            info = zipfile.ZipInfo(f"{out.name}/{name}", date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, text.encode("utf-8"))
    return archive


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0].strip("`"))
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "handout",
                        help="the folder to write (made anew); the zip goes beside it (default: build/handout)")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    archive = write(out)
    print(f"wrote {out} ({len(lessons())} lessons in {len(EDITIONS)} editions, the helpers, a README for"
          f" students) and {archive}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
