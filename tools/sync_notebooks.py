"""Write the generated parts of the series, or check that they are up to date.

Generated, never edited by hand (`make sync` rewrites them; `make lint` and `make test` fail on drift):
- utils.py, collected from the `#@save` cells of the lessons in reading order;
- in each lesson: the header cell (navigation, title, purpose, badges, "runs on"), the setup
  cell and the footer cell (solutions pointer, navigation); a lesson's title, purpose, minutes
  and hardware are read from its own opening cell, so a new lesson starts as one notebook;
- each solutions notebook's header, setup and footer cells (a skeleton is created when missing);
- the notebook metadata (kernel, Colab GPU runtime) and the setup cell's metadata;
- the lesson table in README.md between the `lessons:start` and `lessons:end` markers, and the
  teacher's page's tables in TEACHING.md between theirs (tools/teaching.py);
- the Chinese edition (tools/i18n.py): the translation files i18n/zh/*.po (entries added, changed
  ones flagged stale), every zh notebook under notebooks/zh/, and each document's .zh-CN.md twin
  (README, RUNNING, TEACHING).

Usage: python -m tools.sync_notebooks [--check]
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import nbformat

from tools import diagrams, i18n, teaching
from tools.series import (
    COLLAPSE_TAG,
    GITHUB_URL,
    HELPERS_URL,
    REPO,
    ROOT,
    TAG,
    Lesson,
    dumps,
    exercises_of,
    lessons,
    read,
    set_metadata,
)

# The setup cell: collapsed on Colab (cellView: form), in JupyterLab (source_hidden) and on the site (hide-input).
# It makes the series' helpers importable: utils.py (the lessons' helpers), the package exercises/ (the checks)
# and i18n/zh/messages.json (the Chinese texts). Where they are already at hand it takes them: a hand-out's
# folder series_helpers/ beside the notebook (Jupyter starts the kernel in the notebook's folder), or the
# clone of the series the notebook sits in (up to three folders up: notebooks/zh/solutions/). Elsewhere
# (Colab, Kaggle, a download) it fetches the archive of the release the notebook names (tools/series.py:
# HELPERS_URL), or GPU_LESSONS_URL's archive when set, into a new folder of its own, first on sys.path: a
# reader's own utils.py is never overwritten nor imported instead, and DataLoader workers started by
# spawning inherit the path. When the fetch fails, its one-line error names the URL, the reason and what to
# do, telling apart a release the host does not hold (HTTP 404), a host it cannot reach (refused, reset, no
# answer within the timeout, a broken TLS handshake) and no network at all (the host's name does not
# resolve); tests/test_bootstrap.py provokes each.
SETUP = """\
import io, os, socket, ssl, sys, tempfile, urllib.error, urllib.request, zipfile
from pathlib import Path

url = os.getenv(
    "GPU_LESSONS_URL",  # if you set it: a mirror's or a downloaded copy of the series' helpers (a .zip file)
    "{url}",
)
# Helpers already at hand: a hand-out's series_helpers folder beside this notebook, or a clone of the series
here = [Path("series_helpers").resolve(), *Path.cwd().resolve().parents[:3]]
folder = next((str(p) for p in here if (p / "exercises" / "__init__.py").is_file()), None)
if folder is None or "GPU_LESSONS_URL" in os.environ:
    folder = tempfile.mkdtemp()  # a new folder for them: your files, even a utils.py, stay untouched
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            zipfile.ZipFile(io.BytesIO(answer.read())).extractall(folder)
    except (OSError, ValueError, zipfile.BadZipFile) as err:  # HTTPError: the host answered, URLError: the network
        why = err if isinstance(err, urllib.error.HTTPError) else getattr(err, "reason", err)
        if getattr(err, "code", None) == 404:  # the host answered: it holds no such release
            advice = (
                "This notebook names a release of the series that the repository does not hold: open the "
                "lesson again from the repository, or point GPU_LESSONS_URL at a series-helpers.zip you have."
            )
        elif isinstance(why, socket.gaierror):  # the host's name does not resolve
            advice = "You seem offline: switch the internet on (Kaggle: Settings > Internet on), run this cell again."
        elif isinstance(why, (ConnectionError, TimeoutError, ssl.SSLError)):  # refused, reset, silent, or TLS broken
            advice = (
                "Your network may block this host: point GPU_LESSONS_URL at a mirror or a downloaded "
                "series-helpers.zip, e.g. run os.environ['GPU_LESSONS_URL'] = 'file:///content/series-helpers.zip' "
                "in a cell before this one (in a shell: export GPU_LESSONS_URL=...)."
            )
        else:
            advice = "Check that URL, or point GPU_LESSONS_URL at a series-helpers.zip you have."
        raise RuntimeError(f"Could not fetch {{url}}: {{why}}. {{advice}}") from None
sys.path.insert(0, folder)  # first on the path, before your own folder, and inherited by workers started by spawning"""

# Collapsed cells (machinery out of the reader's way): the setup cell, every `#@save` helper and every check
# cell (its first line `# Checks...` or `# Check...`), each in place under the sentence above it that says what
# it does. Collapsed in JupyterLab (jupyter.source_hidden), in Colab (cellView "form": the code folds behind
# "Show code"; no `# @title` label, as a directive it would stay English in the Chinese edition) and on the site
# (myst-nb's hide-input tag: the source behind a toggle). All three hide the source only, never the outputs;
# still, a check cell that shows something (its last line an expression, or a print) stays open: its output is
# part of the lesson.
CHECK_LINE = re.compile(r"#\s*Checks?\b")
IPYTHON_LINE = re.compile(r"^(\s*)[%!].*$", re.MULTILINE)  # %magic and !shell lines: not Python


def call_name(node: ast.AST) -> str:
    """The name a call calls (`print`, `assert_close` for torch.testing.assert_close), or ""."""
    func = node.func if isinstance(node, ast.Call) else None
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def shows_output(source: str) -> bool:
    """Whether a cell displays something: it prints or displays, or IPython shows the value of its last
    statement, an expression (but a call of an assert_* function, which returns None)."""
    try:
        body = ast.parse(IPYTHON_LINE.sub(r"\1pass", source)).body
    except SyntaxError:
        return True
    if any(call_name(n) in {"print", "display"} for stmt in body for n in ast.walk(stmt)):
        return True
    return bool(body) and isinstance(body[-1], ast.Expr) and not call_name(body[-1].value).startswith("assert")


def collapsed(cell: nbformat.NotebookNode) -> bool:
    """Whether the series collapses this cell: the setup cell, a `#@save` helper, a check cell showing nothing."""
    if cell.cell_type != "code":
        return False
    source = cell.source.lstrip()
    first = source.splitlines()[0] if source else ""
    return (cell.get("id") == "setup" or first.startswith("#@save")
            or (bool(CHECK_LINE.match(first)) and not shows_output(cell.source)))


def set_collapsed(cell: nbformat.NotebookNode, collapse: bool) -> None:
    """Put the three collapse markers on the cell, or take them off; its other metadata and tags stay."""
    meta = cell.metadata
    tags = [t for t in meta.get("tags", []) if t != COLLAPSE_TAG] + ([COLLAPSE_TAG] if collapse else [])
    jupyter = {k: v for k, v in meta.get("jupyter", {}).items() if k != "source_hidden"}
    meta.pop("cellView", None)
    meta.pop("tags", None)
    meta.pop("jupyter", None)
    if collapse:
        meta["cellView"] = "form"
        jupyter["source_hidden"] = True
    if jupyter:
        meta["jupyter"] = jupyter
    if tags:
        meta["tags"] = tags


BADGES = (
    "[![View on GitHub](https://img.shields.io/badge/view%20on-GitHub-181717?logo=github)]({github})"
    " [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
    "(https://colab.research.google.com/github/{repo}/blob/{tag}/{rel})"
    " [![Open in Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)]"
    "(https://kaggle.com/kernels/welcome?src={github})"
)


# The Chinese edition's header speaks Chinese where the reader reads it: the alt texts, and the
# GitHub badge's own label ("GitHub | 在线查看"). Colab's and Kaggle's badges are their own images.
BADGES_ZH = (BADGES.replace("[![View on GitHub](https://img.shields.io/badge/view%20on-GitHub-181717?logo=github)]",
                            "[![在 GitHub 上查看](https://img.shields.io/badge/GitHub-%E5%9C%A8%E7%BA%BF%E6%9F%A5%E7%9C%8B"
                            "-181717?logo=github)]")
             .replace("[![Open in Colab]", "[![在 Colab 中打开]").replace("[![Open in Kaggle]", "[![在 Kaggle 中打开]"))


def badges(path) -> str:
    rel = path.relative_to(ROOT).as_posix()
    github = f"{GITHUB_URL}/blob/{TAG}/{rel}"
    chinese = path.resolve().is_relative_to(i18n.ZH)
    return (BADGES_ZH if chinese else BADGES).format(github=github, repo=REPO, tag=TAG, rel=rel)


def apply(nb: nbformat.NotebookNode, generated: dict[str, str]) -> str:
    """Return the notebook text with its generated cells and metadata in place."""
    nb.nbformat, nb.nbformat_minor = 4, 5
    by_id = {c.get("id"): c for c in nb.cells}
    if "header" not in by_id:  # a new lesson: its opening markdown cell becomes the header
        first = next((c for c in nb.cells if c.cell_type == "markdown"), None)
        if first is not None and first.source.lstrip().startswith("# "):
            first.id = "header"
            nb.cells.remove(first)
            nb.cells.insert(0, first)
            by_id["header"] = first
    for cell_id, position in (("header", 0), ("setup", 1), ("footer", None)):
        cell = by_id.get(cell_id)
        if cell is None:
            maker = nbformat.v4.new_code_cell if cell_id == "setup" else nbformat.v4.new_markdown_cell
            cell = maker("")
            cell.id = cell_id
            nb.cells.insert(len(nb.cells) if position is None else position, cell)
        cell.source = generated[cell_id]
        if cell_id == "setup":
            cell.metadata = {}  # the collapse markers below, and nothing else
    for cell in nb.cells:
        set_collapsed(cell, collapsed(cell))
        if cell.cell_type == "markdown":
            embed_diagrams(cell)
    set_metadata(nb)
    return dumps(nb)


def embed_diagrams(cell: nbformat.NotebookNode) -> None:
    """Embed each diagram the markdown cell names (tools/diagrams.py), the current file's."""
    try:
        named, names, _ = diagrams.by_name(cell.source, cell.metadata.get("diagrams", []))
        cell.source = diagrams.embed(named, diagrams.read)
    except ValueError as err:
        raise ValueError(f"cell {cell.get('id')}: {err}") from None
    if names:
        cell.metadata["diagrams"] = names
    else:
        cell.metadata.pop("diagrams", None)


def solutions_skeleton(lesson: Lesson) -> nbformat.NotebookNode:
    """A new solutions notebook: one heading per exercise of the lesson (`### Exercise N · Title` cells,
    or a numbered list under `## Exercises` in a draft)."""
    nb = nbformat.v4.new_notebook()
    lesson_nb = read(lesson.path)
    titles = [f"## Exercise {e.number}: {e.title}" for e in exercises_of(lesson_nb)]
    numbered = [line for line in "\n".join(c.source for c in lesson_nb.cells if c.cell_type == "markdown")
                .partition("## Exercises")[2].splitlines() if line[:1].isdigit()]
    titles = titles or [f"## Exercise {i}" for i in range(1, len(numbered) + 1)] or ["## Exercise 1"]
    prefix = lesson.path.stem.split("_", 1)[1].replace("_", "-")
    for i, heading in enumerate(titles, start=1):
        cell = nbformat.v4.new_markdown_cell(f"{heading}\n\n*To be written.*")
        cell.id = f"{prefix}-sol-{2 * i - 1:02d}"
        nb.cells.append(cell)
    return nb


# --- utils.py, collected from the #@save cells ------------------------------------------

UTILS_HEADER = '''\
"""Shared helpers of the GPU lesson series (gpu-lessons utils).

Generated automatically by `make sync` (tools/sync_notebooks.py) from the cells marked
``#@save`` in the lessons, then i18n/language.py: do not edit this file. To change a helper,
edit its ``#@save`` cell in the lesson named above it, then run `make sync`; `make lint` and
`make test` fail while they differ. The exercises' checks are a package of their own,
exercises/, which imports this module.

Importing this module has no side effects and loads nothing heavy: it reads no hardware and
allocates nothing until a helper is called, so it is safe on a laptop without a GPU, on a CUDA
machine with any number of GPUs, and on a Mac with Apple's MPS backend.
"""
'''


def saved_cells(series: list[Lesson]) -> list[tuple[Lesson, str, str]]:
    """(lesson, cell id, source without the #@save line) for every #@save cell, in reading order."""
    found = []
    for lesson in series:
        for cell in read(lesson.path).cells:
            if cell.cell_type == "code" and cell.source.lstrip().startswith("#@save"):
                found.append((lesson, cell.id, cell.source.lstrip().partition("\n")[2]))
    return found


def printing_cells(notebooks: Iterable[nbformat.NotebookNode]) -> list[tuple[str, str]]:
    """(cell id, source) of every code cell of ``notebooks`` (lessons, solutions) but a #@save cell that calls
    localized(): a sentence it prints for the reader, in the edition's language."""
    return [(cell.id, cell.source) for nb in notebooks for cell in nb.cells
            if cell.cell_type == "code" and "localized(" in cell.source
            and not cell.source.lstrip().startswith("#@save")]


def import_lines(imports: list[ast.stmt]) -> str:
    """The imports, merged and ordered as isort (and ruff's I rules) order them."""
    plain: set[tuple[str, str | None]] = set()
    froms: dict[str, set[str]] = {}
    for node in imports:
        if isinstance(node, ast.Import):
            plain.update((a.name, a.asname) for a in node.names)
        else:
            names = {a.name if a.asname is None else f"{a.name} as {a.asname}" for a in node.names}
            froms.setdefault("." * node.level + (node.module or ""), set()).update(names)

    def section(module: str) -> int:
        return 0 if module.split(".")[0] in sys.stdlib_module_names else 1

    blocks = []
    for sec in (0, 1):
        lines = [f"import {m}" + (f" as {a}" if a else "") for m, a in sorted(plain) if section(m) == sec]
        lines += [f"from {m} import {', '.join(sorted(names))}" for m, names in sorted(froms.items())
                  if section(m) == sec]
        if lines:
            blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def segment(source: str, node: ast.stmt) -> str:
    """The statement's source, decorators included (ast's own segment starts at the `def`)."""
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return "\n".join(source.splitlines()[first - 1:node.end_lineno])


LANGUAGE_FILE = ROOT / "i18n" / "language.py"  # the series' own, in every checkout
ZH_TABLES = Path("i18n", "zh", "messages.json")  # the Chinese texts, data beside utils.py (i18n/language.py)


def exercise_messages() -> dict[str, str]:
    """MESSAGES of exercises/messages.py, read without importing it ({} where there is none)."""
    path = ROOT / "exercises" / "messages.py"
    if not path.exists():
        return {}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = next((n for n in tree.body if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") == "MESSAGES"),
                 None)
    return ast.literal_eval(found.value) if found is not None else {}


def zh_tables(po) -> str:
    """i18n/zh/messages.json: the translated entries of i18n/zh/messages.po as data, "messages" (the exercise
    checks' MESSAGES by key) and "texts" (the localized() texts of the helpers and of the lessons' own
    cells, by their English template); a stale entry is left out, so its English shows until it is
    translated again. Only the Chinese edition reads it."""
    messages, texts = {}, {}
    for entry in po:
        if entry.obsolete or not entry.msgstr.strip() or "fuzzy" in entry.flags:
            continue
        if entry.msgctxt.startswith(i18n.LOCALIZED_CONTEXTS):
            texts[entry.msgid] = entry.msgstr
        else:
            messages[entry.msgctxt] = entry.msgstr
    tables = {"messages": dict(sorted(messages.items())), "texts": dict(sorted(texts.items()))}
    return json.dumps(tables, ensure_ascii=False, indent=1) + "\n"


def utils_source(series: list[Lesson]) -> str:
    """utils.py: the lessons' `#@save` cells in reading order, then i18n/language.py (the edition's language)."""
    imports: list[ast.stmt] = []
    parts, names = [], []
    current = None
    pieces = [(lesson, f"# From cell {cell_id}", source) for lesson, cell_id, source in saved_cells(series)]
    pieces.append(("i18n", "# From i18n/language.py", LANGUAGE_FILE.read_text(encoding="utf-8")))
    for lesson, origin, source in pieces:
        tree = ast.parse(source)
        if tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant):
            tree.body = tree.body[1:]  # a file's docstring: the file says it, utils.py names the file
        body = []
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module == "utils":
                continue  # a helper of an earlier lesson: in utils.py it is already in the same module
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                imports.append(node)
            else:
                body.append(segment(source, node))
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                    names.append(node.name)
        if lesson == "i18n":
            rule = "# --- The language of the series' own messages: English, or the Chinese edition's "
            parts.append(rule + "-" * max(3, 100 - len(rule)))
        elif lesson is not current:
            rule = f"# --- Lesson {lesson.number}: {lesson.title} ({lesson.path.relative_to(ROOT).as_posix()}) "
            if len(rule) > 116:  # a long title: the lesson's number and title are enough
                rule = f"# --- Lesson {lesson.number}: {lesson.title} "
            parts.append(rule + "-" * max(3, 100 - len(rule)))
        current = lesson
        parts.append(f"{origin}\n" + "\n\n\n".join(body))
    return "\n".join([
        UTILS_HEADER,
        "from __future__ import annotations\n",
        import_lines(imports) + "\n",
        "__all__ = [\n" + "".join(f'    "{n}",\n' for n in sorted(names)) + "]\n",
        "\n" + "\n\n\n".join(parts) + "\n",
    ])


# --- README ---------------------------------------------------------------------------

def apply_readme(text: str, series: list[Lesson]) -> str:
    start, end = "<!-- lessons:start (generated by tools/sync_notebooks.py) -->", "<!-- lessons:end -->"
    head, sep, rest = text.partition(start)
    if not sep or end not in rest:
        raise SystemExit(f"README.md lacks the markers {start!r} ... {end!r}")
    if not head.startswith(i18n.SWITCH_EN + "\n"):  # the link to the Chinese README, first
        head = i18n.SWITCH_EN + "\n\n" + head
    return head + start + "\n" + readme_table(english_facts(series), ENGLISH) + "\n" + end + rest.split(end, 1)[1]


def apply_blocks(text: str, fills: dict[tuple[str, str], str], where: str) -> str:
    """The document with the text between each pair of markers (start, end) made anew: TEACHING.md's tables."""
    for (start, end), body in fills.items():
        head, sep, rest = text.partition(start)
        if not sep or end not in rest:
            raise SystemExit(f"{where} lacks the markers {start!r} ... {end!r}")
        text = head + start + "\n" + body + "\n" + end + rest.split(end, 1)[1]
    return text


ZH_SETUP = """\
import io, os, socket, ssl, sys, tempfile, urllib.error, urllib.request, zipfile
from pathlib import Path

os.environ["GPU_LESSONS_LANGUAGE"] = "zh"  # 本系列辅助函数的提示、练习检查的反馈都用中文
url = os.getenv(
    "GPU_LESSONS_URL",  # 如果你设置了它，就从它给出的镜像或本地文件（一个 .zip 文件）获取辅助函数
    "{url}",
)
# 辅助函数可能已经在手边：笔记本旁边讲义包的 series_helpers 文件夹，或者笔记本所在的本系列克隆
here = [Path("series_helpers").resolve(), *Path.cwd().resolve().parents[:3]]
folder = next((str(p) for p in here if (p / "exercises" / "__init__.py").is_file()), None)
if folder is None or "GPU_LESSONS_URL" in os.environ:
    folder = tempfile.mkdtemp()  # 辅助函数放进一个新建的文件夹：你的文件（包括 utils.py）不会被改动
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            zipfile.ZipFile(io.BytesIO(answer.read())).extractall(folder)
    except (OSError, ValueError, zipfile.BadZipFile) as err:  # HTTPError 是主机的应答，URLError 包着网络的错误
        why = err if isinstance(err, urllib.error.HTTPError) else getattr(err, "reason", err)
        if getattr(err, "code", None) == 404:  # 主机有应答，但没有这个版本
            advice = (
                "这个笔记本指定的系列版本在仓库中不存在。"
                "请从仓库重新打开这一课，或者把 GPU_LESSONS_URL 指向你已有的 series-helpers.zip。"
            )
        elif isinstance(why, socket.gaierror):  # 主机名无法解析
            advice = "你似乎没有联网。请打开网络（Kaggle：Settings > Internet on），再运行一次这个单元格。"
        elif isinstance(why, (ConnectionError, TimeoutError, ssl.SSLError)):  # 连接被拒绝、重置、超时或握手失败
            advice = (
                "你的网络可能屏蔽了这个主机。请把 GPU_LESSONS_URL 指向镜像或下载好的 series-helpers.zip。"
                "例如在本单元格之前的单元格中运行 "
                "os.environ['GPU_LESSONS_URL'] = 'file:///content/series-helpers.zip'"
                "（在终端中则是 export GPU_LESSONS_URL=...）。"
            )
        else:
            advice = "请检查这个 URL，或者把 GPU_LESSONS_URL 指向你已有的 series-helpers.zip。"
        raise RuntimeError(f"无法下载 {{url}}：{{why}}。{{advice}}") from None
sys.path.insert(0, folder)  # 放在搜索路径的最前面（在你的文件夹之前），以 spawn 方式启动的工作进程也会继承"""


@dataclass(frozen=True)
class Facts:
    """A lesson's title, purpose and hardware line in one edition's language."""

    lesson: Lesson
    title: str
    purpose: str
    runs_on: str


def english_facts(series: list[Lesson]) -> list[Facts]:
    return [Facts(lesson, lesson.title, lesson.purpose, lesson.runs_on) for lesson in series]


@dataclass(frozen=True)
class Edition:
    """What the generated cells, navigation and README table say in one language, and where its
    notebooks live: the English edition in notebooks/, the Chinese one in notebooks/zh/."""

    place: Callable[[Path], Path]  # where this edition keeps a notebook of the series
    up: str  # from a lesson's folder to the repository's root
    readme: str
    contents: str
    other: str  # from a lesson's folder to the other edition's, and the link's text
    other_label: str
    runs_on: str
    worked: str
    back: str
    solutions_title: str
    solutions_purpose: str
    setup_note: str
    setup: str
    table_head: str
    solutions_label: str


# Where the stored outputs come from, said once in every header instead of in each lesson's prose
# (the hand-out, whose lessons come without outputs, leaves it out: tools/handout.py).
SAVED_OUTPUTS = {
    "en": " The outputs saved with the lesson come from a CPU without a GPU: run the cells to see your machine's.",
    "zh": "课程里保存的输出来自一台没有 GPU 的机器，运行单元格就能看到你自己机器上的结果。",
}

ENGLISH = Edition(
    place=lambda path: path, up="../", readme="README.md", contents="Contents", other="zh/", other_label="中文",
    runs_on="**Runs on:** {runs_on}. **Time:** about {minutes} minutes, {total} with the exercises.",
    worked="**Worked solutions** to the exercises: [solutions/{name}](solutions/{name}).",
    back="[< back to the lesson: {number} {title}](../{name})",
    solutions_title="# Solutions · {number} {title}",
    solutions_purpose="*Worked solutions to the lesson's exercises. Try them yourself first.*",
    setup_note="*The first code cell makes the series' helpers importable; run it, no need to read it."
               + SAVED_OUTPUTS["en"] + "*",
    setup=SETUP, table_head="| # | Lesson | What it teaches | Minutes (with exercises) | Runs on | Solutions |",
    solutions_label="solutions",
)
CHINESE = Edition(
    place=i18n.zh_path, up="../../", readme="README.zh-CN.md", contents="目录", other="../", other_label="English",
    runs_on="**运行环境：** {runs_on}。**用时：** 约 {minutes} 分钟，加上练习约 {total} 分钟。",
    worked="本课练习的解答见 [solutions/{name}](solutions/{name})。",
    back="[< 返回课程 {number} {title}](../{name})",
    solutions_title="# 练习解答 · {number} {title}",
    solutions_purpose="*本课练习的完整解答。请先自己动手做一遍。*",
    setup_note="*第一个代码单元格用来导入本系列的辅助函数，运行即可，不必细读。" + SAVED_OUTPUTS["zh"] + "*",
    setup=ZH_SETUP, table_head="| # | 课程 | 内容 | 分钟（含练习） | 运行环境 | 解答 |",
    solutions_label="解答",
)


def nav(series: list[Facts], k: int, ed: Edition, anchor: str) -> str:
    parts = []
    if k > 0:
        prev = series[k - 1]
        parts.append(f"[< {prev.lesson.number} {prev.title}]({prev.lesson.path.name})")
    parts.append(f"[{ed.contents}]({ed.up}{ed.readme}#{anchor})")
    if k + 1 < len(series):
        nxt = series[k + 1]
        parts.append(f"[{nxt.lesson.number} {nxt.title} >]({nxt.lesson.path.name})")
    parts.append(f"[{ed.other_label}]({ed.other}{series[k].lesson.path.name})")
    return " | ".join(parts)


def lesson_cells(series: list[Facts], k: int, ed: Edition = ENGLISH, anchor: str = "lessons") -> dict[str, str]:
    f = series[k]
    lesson = f.lesson
    header = "\n".join([
        nav(series, k, ed, anchor),
        "",
        f"# {lesson.number} · {f.title}",
        "",
        f"*{f.purpose}*",
        "",
        badges(ed.place(lesson.path)),
        "",
        ed.runs_on.format(runs_on=f.runs_on, minutes=lesson.minutes, total=lesson.total_minutes),
        "",
        ed.setup_note,
    ])
    footer = "\n".join([ed.worked.format(name=lesson.solutions.name), "", nav(series, k, ed, anchor)])
    return {"header": header, "setup": ed.setup.format(url=HELPERS_URL), "footer": footer}


def solution_cells(series: list[Facts], k: int, ed: Edition = ENGLISH, anchor: str = "lessons") -> dict[str, str]:
    f = series[k]
    lesson = f.lesson
    back = (ed.back.format(number=lesson.number, title=f.title, name=lesson.path.name)
            + f" | [{ed.contents}](../{ed.up}{ed.readme}#{anchor})"
            + f" | [{ed.other_label}](../{ed.other}solutions/{lesson.solutions.name})")
    header = "\n".join([
        back,
        "",
        ed.solutions_title.format(number=lesson.number, title=f.title),
        "",
        ed.solutions_purpose,
        "",
        badges(ed.place(lesson.solutions)),
        "",
        ed.setup_note,
    ])
    return {"header": header, "setup": ed.setup.format(url=HELPERS_URL), "footer": back}


# The folder of helpers a hand-out brings beside its lessons (tools/handout.py): the setup cell takes them
# from there before it downloads anything.
HANDOUT_HELPERS = "series_helpers"


def readme_table(series: list[Facts], ed: Edition) -> str:
    rows = [ed.table_head, "|---|---|---|---|---|---|"]
    for f in series:
        rel = ed.place(f.lesson.path).relative_to(ROOT).as_posix()
        sol = ed.place(f.lesson.solutions).relative_to(ROOT).as_posix()
        minutes = f"{f.lesson.minutes} ({f.lesson.total_minutes})"
        rows.append(f"| {f.lesson.number} | [{f.title}]({rel}) | {f.purpose} | {minutes}"
                    f" | {f.runs_on} | [{ed.solutions_label}]({sol}) |")
    return "\n".join(rows)


def zh_note(doc: i18n.Document) -> str:
    return (f"<!-- Generated by `make sync` from {doc.english.name} and i18n/zh/{doc.po.name} (tools/i18n.py):"
            " do not edit; translate in the .po file. -->")


def zh_sections(doc: i18n.Document, english: str, po) -> tuple[list[tuple[str, str, str]], dict[str, str]]:
    """A document's sections (context, English, Chinese), and the zh twin's heading anchors for the
    English document's (README's lesson table: 'lessons' -> '课程')."""
    catalog = i18n.Catalog(po)
    sections = [(ctx, text, catalog.get(ctx, text) or i18n.UNTRANSLATED + text)
                for ctx, text in i18n.document_sections(english, doc)]
    anchors: dict[str, str] = {}
    for _, text, zh_text in sections:
        anchors.update(i18n.heading_anchors(text, zh_text))
    return sections, anchors


def zh_document(doc: i18n.Document, sections: list[tuple[str, str, str]], fills: dict[tuple[str, str], str],
                anchors: dict, problems: list[str]) -> str:
    """NAME.zh-CN.md: its sections relinked to the zh twins (``anchors``: every zh file's headings), and
    the generated blocks in Chinese (``fills``: README's lesson table, TEACHING's tables, by their markers)."""
    parts = [zh_note(doc), "", doc.switch_zh, ""]
    for ctx, text, zh_text in sections:
        zh_text = i18n.relink(zh_text, doc.english, doc.zh, anchors)
        for (start, end), body in fills.items():
            if (start in text) != (start + "\n" + end in zh_text):
                what = "lesson-table" if start == i18n.LESSONS_START else "generated-table"
                problems.append(f"i18n/zh/{doc.po.name} [{ctx}]: keep the two {what} marker lines as they are")
            zh_text = zh_text.replace(start + "\n" + end, start + "\n" + body + "\n" + end)
        parts += [zh_text, ""]
    return "\n".join(parts).rstrip("\n") + "\n"


# How long each lesson's Run All took when `make outputs` last executed it (tools/execute.py
# writes it), for the minutes its header states.
RUN_SECONDS = "run_seconds.json"
# A lesson's minutes as a teacher plans a lab, from what a learner meets before the exercises:
# - its prose at 130 words a minute. Reading to learn and remember is slower than reading: Carver's
#   studies of reading rates (Reading Rate: A Review of Research and Theory, 1990) put "learning" at
#   about 200 and "memorizing" at about 138 words a minute, and Brysbaert's meta-analysis (Journal of
#   Memory and Language, 2019) puts ordinary silent reading of non-fiction at about 238. A lesson's
#   prose is new technical material for its reader, nearer the memorizing rate;
# - its code in view (collapsed cells aside) at 8 lines a minute: each line is read and its output
#   compared with the text. No study gives a rate for reading code while running it; this figure is
#   the series' own assumption, to be checked against readers timed with a stopwatch;
# - a minute for each predict moment (reading the question, deciding, running the cell, comparing);
# - twice its Run All: the cells are run one by one, and the first run of a session waits on imports.
# An exercise's minutes are its own (`*Needs: ... · about N minutes.*`), added for "with the exercises"
# (not those under "More practice (optional)").
WORDS_A_MINUTE = 130
CODE_LINES_A_MINUTE = 8
PREDICT_MINUTES = 1
RUN_ALL_FACTOR = 2


def run_seconds() -> dict[str, float]:
    path = ROOT / "notebooks" / RUN_SECONDS
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def reading(nb: nbformat.NotebookNode) -> tuple[int, int, int]:
    """What a learner reads before a lesson's exercises, as tools.lesson_figures measures it: (words of
    prose, lines of code in view, predict moments); the header, the footer, the setup cell, collapsed
    cells and optional detail do not count."""
    from tools import lesson_figures  # it imports this module's collapse marks

    figures = lesson_figures.measure(Path(), nb)
    return figures.words, figures.code_lines, figures.lesson_predicts


def minutes(lesson: Lesson, nb: nbformat.NotebookNode | None = None, seconds: dict[str, float] | None = None) -> int:
    """The lesson's minutes without its exercises: its prose, its code in view and its predict moments
    read at the rates above, plus twice its recorded Run All, rounded up to a whole minute; the
    header's own figure while no run is recorded. ``nb`` and ``seconds`` are the lesson and
    `run_seconds()` where the caller has read them."""
    recorded = (run_seconds() if seconds is None else seconds).get(lesson.path.name)
    if recorded is None:
        return lesson.minutes
    words, code, predicts = reading(read(lesson.path) if nb is None else nb)
    total = (words / WORDS_A_MINUTE + code / CODE_LINES_A_MINUTE + predicts * PREDICT_MINUTES
             + RUN_ALL_FACTOR * recorded / 60)
    return max(1, math.ceil(total))


def with_exercises(lesson: Lesson, nb: nbformat.NotebookNode, alone: int) -> int:
    """``alone`` (the lesson's minutes) plus the minutes its exercises state, those under "More
    practice (optional)" aside."""
    return alone + sum(e.minutes or 0 for e in exercises_of(nb) if not e.optional)


def build() -> tuple[dict, list[str]]:
    """Every generated file's intended text, and what the Chinese edition still lacks."""
    found, seconds = lessons(), run_seconds()
    books = {lesson.path: read(lesson.path) for lesson in found}  # each lesson read once here
    series = []
    for lesson in found:
        alone = minutes(lesson, books[lesson.path], seconds)
        series.append(replace(lesson, minutes=alone, with_exercises=with_exercises(lesson, books[lesson.path], alone)))
    out, problems = {}, []
    terms = i18n.glossary()
    english, parsed, units = {}, {}, {}
    facts = english_facts(series)
    for k, lesson in enumerate(series):
        solutions = read(lesson.solutions) if lesson.solutions.exists() else solutions_skeleton(lesson)
        for path, nb, cells in ((lesson.path, books[lesson.path], lesson_cells(facts, k)),
                                (lesson.solutions, solutions, solution_cells(facts, k))):
            try:
                english[path] = apply(nb, cells)
            except ValueError as err:
                raise SystemExit(f"{path.relative_to(ROOT).as_posix()}, {err}") from None
        for path, header in ((lesson.path, lesson), (lesson.solutions, None)):
            parsed[path] = nbformat.reads(english[path], as_version=4)
            units[i18n.po_path(path)] = i18n.notebook_units(parsed[path], header)
    # Every translation file as it is, the ones a renamed or split notebook left behind included:
    # a cell that moved between notebooks takes its translation along.
    old = {po: i18n.load(po) for po in sorted(set(units) | set(i18n.I18N.glob("*.po"))
                                              | set(i18n.I18N.glob("solutions/*.po")))
           if po not in {d.po for d in i18n.documents()} | {i18n.MESSAGES_PO}}
    moved = i18n.released(old, units)
    known = [e for po in old.values() for e in po if not e.obsolete]
    pos = {path: i18n.merge(old[i18n.po_path(path)], units[i18n.po_path(path)], moved, known) for path in parsed}
    out.update(english)
    readme = ROOT / "README.md"
    out[readme] = apply_readme(readme.read_text(encoding="utf-8"), series)
    # What the series' own code says to a reader: the checks' messages, and the localized() texts of the
    # helpers and of the lessons' and solutions' own cells (the notebooks as parsed above).
    helpers = [(cell_id, source) for _, cell_id, source in saved_cells(series)]
    messages_po = i18n.merge(i18n.load(i18n.MESSAGES_PO),
                             i18n.message_units(exercise_messages(), helpers, printing_cells(parsed.values())))
    out[i18n.MESSAGES_PO] = i18n.po_text(messages_po)
    problems += i18n.po_problems(messages_po, "i18n/zh/messages.po", terms)
    out[ROOT / "utils.py"] = utils_source(series)
    out[ROOT / ZH_TABLES] = zh_tables(messages_po)

    zh = []  # the lessons' facts in Chinese (the English where a translation is missing: reported)
    for f in facts:
        catalog = i18n.Catalog(pos[f.lesson.path])
        english_words = (f.title, f.purpose, f.runs_on)
        zh.append(Facts(f.lesson, *(catalog.get(ctx, text) or text for ctx, text in zip(i18n.FACTS, english_words,
                                                                                     strict=True))))
    # The teacher's page (tools/teaching.py): its tables, from the lessons, in each language.
    shown = {lesson.path: parsed[lesson.path] for lesson in series}
    fills = {i18n.block_markers(name): text for name, text in teaching.blocks(facts, shown, ENGLISH.place).items()}
    zh_fills = {(i18n.LESSONS_START, i18n.LESSONS_END): readme_table(zh, CHINESE)} | {
        i18n.block_markers(name): text for name, text in teaching.blocks(
            zh, shown, CHINESE.place, teaching.CHINESE,
            lambda path, cell_id, english: i18n.Catalog(pos[path]).get(cell_id, english)).items()}
    for doc in i18n.documents():
        if doc.name == "TEACHING":
            out[doc.english] = apply_blocks(doc.english.read_text(encoding="utf-8"), fills, doc.english.name)
    docs, anchors = [], {}  # the documents with a Chinese twin; each zh file's headings for the English ones
    for doc in i18n.documents():
        text = out[doc.english] if doc.english in out else doc.english.read_text(encoding="utf-8")
        if not text.startswith(doc.switch_en + "\n"):  # the link to its Chinese twin, first
            out[doc.english] = text = doc.switch_en + "\n\n" + text
        po = i18n.merge(i18n.load(doc.po), i18n.document_units(text, doc))
        out[doc.po] = i18n.po_text(po)
        problems += i18n.po_problems(po, f"i18n/zh/{doc.po.name}", terms)
        sections, anchors[doc.zh] = zh_sections(doc, text, po)
        docs.append((doc, sections))
    for doc, sections in docs:
        out[doc.zh] = zh_document(doc, sections, zh_fills, anchors, problems)
    anchor = anchors[i18n.README_ZH].get("lessons", "lessons")
    if "lessons" not in anchors[i18n.README_ZH]:
        problems.append("README.md: the generated navigation links its '## Lessons' heading; keep that heading")
    for k, lesson in enumerate(series):
        for path, cells in ((lesson.path, lesson_cells(zh, k, CHINESE, anchor)),
                            (lesson.solutions, solution_cells(zh, k, CHINESE, anchor))):
            po = pos[path]
            where = i18n.po_path(path).relative_to(ROOT).as_posix()
            out[i18n.po_path(path)] = i18n.po_text(po)
            problems += i18n.po_problems(po, where, terms)
            en_nb = parsed[path]
            zh_nb = i18n.translated_notebook(en_nb, path, i18n.Catalog(po), cells, anchors)
            out[i18n.zh_path(path)] = dumps(zh_nb)
            problems += i18n.code_mismatches(en_nb, zh_nb, i18n.zh_path(path).relative_to(ROOT).as_posix())
    for orphan in orphans(out):
        problems.append(f"{orphan.relative_to(ROOT).as_posix()}: no English notebook has it; `make sync` removes it")
    return out, problems


def orphans(planned_files: dict) -> list:
    """zh notebooks and translation files left behind by a renamed or removed English notebook."""
    found = list(i18n.ZH.rglob("*.ipynb")) + list(i18n.I18N.rglob("*.po"))
    return sorted(p for p in found if p not in planned_files and ".ipynb_checkpoints" not in p.parts)


def planned() -> dict:
    """Every generated file's intended text."""
    return build()[0]


def translation_problems() -> list[str]:
    """What the Chinese edition lacks: untranslated or stale entries (each naming its cell), glossary
    terms translated otherwise, zh code that is not the English code."""
    return build()[1]


def report(problems: list[str]) -> tuple[str, bool]:
    """The problems as `make sync`, `make lint` and `python -m tools.translate check` print them, and
    whether any is broken: what waits for a translator (i18n.is_pending) is listed apart, and the zh
    files show the English there meanwhile."""
    broken = [p for p in problems if not i18n.is_pending(p)]
    waiting = [p for p in problems if i18n.is_pending(p)]
    out = []
    if broken:
        out.append(f"The Chinese edition needs {len(broken)} fix(es) (python -m tools.translate todo FILE.po;"
                   " see i18n/zh/glossary.md):\n" + "\n".join(broken))
    if waiting:
        out.append(f"{len(waiting)} entr{'y waits' if len(waiting) == 1 else 'ies wait'} for a translator; the zh "
                   "files show the English there meanwhile (python -m tools.translate todo FILE.po):\n"
                   + "\n".join(waiting))
    return "\n\n".join(out), bool(broken)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if any generated part is out of date")
    args = parser.parse_args(argv)
    stale = []
    files, problems = build()
    if not args.check:
        for orphan in orphans(files):
            orphan.unlink()
            stale.append(orphan.relative_to(ROOT).as_posix() + " (removed)")
        problems = [p for p in problems if "`make sync` removes it" not in p]
    for path, text in files.items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(path.relative_to(ROOT).as_posix())
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    if args.check and stale:
        print("Out of date: " + ", ".join(stale) + "\nThese are generated: edit the lesson's cells"
              " (#@save cells for utils.py, the opening cell for titles), then run `make sync`.")
    else:
        print(("rewrote: " + ", ".join(stale)) if stale else "generated parts are up to date")
    text, broken = report(problems)
    if text:
        print("\n" + text)
    return 1 if args.check and (stale or broken) else 0


if __name__ == "__main__":
    raise SystemExit(main())
