"""The Chinese edition (tools/i18n.py): every notebook has a generated zh twin, complete and in
step with the English; its code is the English code; its terms follow the glossary; and a
change to the English fails the checks until it is translated again."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys

import nbformat
import polib
import pytest

from tools import i18n, sync_notebooks, translate
from tools.series import REPO, ROOT, TAG, all_notebooks, read

ZH_NOTEBOOKS = [i18n.zh_path(p) for p in all_notebooks()]


def test_every_english_notebook_has_a_zh_twin_and_a_translation_file():
    for path in all_notebooks():
        assert i18n.zh_path(path).exists(), f"{path.name}: no zh twin; run `make sync`"
        assert i18n.po_path(path).exists(), f"{path.name}: no translation file; run `make sync`"
    assert sorted(i18n.ZH.rglob("*.ipynb")) == sorted(ZH_NOTEBOOKS), "a zh notebook without an English one"
    assert sorted(i18n.I18N.rglob("*.po")) == sorted([i18n.po_path(p) for p in all_notebooks()]
                                                     + [d.po for d in i18n.documents()] + [i18n.MESSAGES_PO])


def test_nothing_in_the_chinese_edition_is_broken():
    """Glossary terms translated otherwise, code lost or changed, fields lost, markup that does not render,
    zh code that is not the English code: each named with its file and cell. Entries that only wait for a
    translator (not translated, or stale: the zh files show the English there) are reported, not failed;
    `python -m tools.translate check --complete` fails on them too."""
    problems = [p for p in sync_notebooks.translation_problems() if not i18n.is_pending(p)]
    assert not problems, f"{len(problems)} problem(s), e.g.:\n" + "\n".join(problems[:20])


def test_a_stale_entry_reports_only_that_it_is_stale_and_a_missing_one_that_it_is_missing():
    """A translation of English that has since changed cannot be judged against the new English (its code,
    its terms): it is only stale, which waits for a translator, and nothing of it is shown."""
    new = polib.POEntry(msgctxt="a", msgid="Run `x.to(device)` on the GPU.", msgstr="在 GPU 上运行 `y`。",
                        flags=["fuzzy"], previous_msgid="Run `y` on the GPU.")
    problems = i18n.entry_problems(new, i18n.glossary())
    assert len(problems) == 1 and problems[0].startswith("stale") and i18n.is_pending("x.po [a] (m): " + problems[0])
    assert i18n.is_pending("x.po [b] (markdown cell): not translated")
    assert not i18n.is_pending("x.po [c] (markdown cell): code missing or changed: `x`")
    po = polib.POFile()
    po.append(new)
    assert i18n.Catalog(po).get("a", new.msgid) == ""  # the zh file shows the English, marked


@pytest.mark.parametrize("zh", ZH_NOTEBOOKS, ids=[p.relative_to(i18n.ZH).as_posix() for p in ZH_NOTEBOOKS])
def test_zh_code_is_the_english_code_once_comments_are_removed(zh):
    """Same cells and the same code; the outputs are the zh notebook's own, made by running it (its helpers
    speak Chinese) and checked by strict nbval (`make test-zh`)."""
    english = read(i18n.english_path(zh))
    chinese = read(zh)
    assert [(c.id, c.cell_type) for c in english.cells] == [(c.id, c.cell_type) for c in chinese.cells]
    for en, cn in zip(english.cells, chinese.cells, strict=True):
        if cn.cell_type != "code":
            continue
        if cn.id != "setup":  # the setup cell speaks Chinese: tests/test_bootstrap.py
            assert i18n.code_without_comments(cn.source) == i18n.code_without_comments(en.source), cn.id


def test_badges_and_navigation_open_the_zh_notebooks_themselves():
    for zh in ZH_NOTEBOOKS:
        header = read(zh).cells[0].source
        rel = zh.relative_to(ROOT).as_posix()
        assert f"colab.research.google.com/github/{REPO}/blob/{TAG}/{rel})" in header, rel
        assert f"kaggle.com/kernels/welcome?src=https://github.com/{REPO}/blob/{TAG}/{rel})" in header, rel
        # the reader sees Chinese: the badges' alt texts and the GitHub badge's own label
        assert "[![在 GitHub 上查看](https://img.shields.io/badge/GitHub-%E5%9C%A8%E7%BA%BF%E6%9F%A5%E7%9C%8B" \
               in header and "[![在 Colab 中打开]" in header and "View on GitHub" not in header, rel
        assert "[English](" in header and "README.zh-CN.md#" in header, rel
        for cell in read(zh).cells:
            if cell.cell_type == "markdown":
                for target in i18n.re.findall(r"\]\(([^)#\s]+)", cell.source):
                    if "://" not in target:
                        assert (zh.parent / target).exists(), f"{rel} {cell.id}: broken link {target}"


def test_the_zh_readme_links_the_zh_lessons():
    text = i18n.README_ZH.read_text(encoding="utf-8")
    assert text.splitlines()[2] == i18n.SWITCH_ZH
    assert (ROOT / "README.md").read_text(encoding="utf-8").startswith(i18n.SWITCH_EN + "\n")
    for path in all_notebooks():
        assert f"({i18n.zh_path(path).relative_to(ROOT).as_posix()})" in text, path.name


def test_the_zh_readme_sends_its_readers_only_to_chinese_pages():
    """Every link of README.zh-CN.md into notebooks/ (a lesson, a solution or a folder of them) goes to
    the Chinese edition, and none goes back to README.zh-CN.md itself; code spans naming English paths
    are links' business, so the prose names no English folder either."""
    text = i18n.README_ZH.read_text(encoding="utf-8")
    prose = i18n.FENCE.sub(" ", text)
    links = re.findall(r"\]\(([^)\s]+)\)", prose)
    targets = [t for t in links if "://" not in t]
    into_notebooks = [t for t in targets if t.startswith("notebooks")]
    on_github = [t for t in links if t.startswith(f"https://github.com/{REPO}/") and "/notebooks" in t]
    assert on_github and all("/notebooks/zh" in t for t in on_github), on_github
    assert into_notebooks and all(t.startswith("notebooks/zh") for t in into_notebooks), into_notebooks
    assert not [t for t in targets if t.split("#")[0] == i18n.README_ZH.name]
    assert not re.findall(r"`notebooks/(?!zh)[^`]*`", prose)
    # the reader's advice is there: Colab's menu and warning in Chinese, and (in RUNNING.zh-CN.md, which the
    # README links) networks that block GitHub
    running = (i18n.ROOT / "RUNNING.zh-CN.md").read_text(encoding="utf-8")
    assert "](RUNNING.zh-CN.md)" in text
    for words in ("代码执行程序 → 更改运行时类型", "仍然运行"):
        assert words in text, words
    for words in ("GPU_LESSONS_URL", "镜像", "make handout", "jsdelivr"):
        assert words in running, words


def test_the_documents_have_their_twins():
    assert [d.name for d in i18n.documents()] == list(i18n.DOCUMENTS)  # README and CONTRIBUTING both exist
    assert "[CONTRIBUTING.md](CONTRIBUTING.md)" in i18n.README.read_text(encoding="utf-8")


@pytest.mark.parametrize("doc", i18n.documents(), ids=lambda d: d.name)
def test_each_document_and_its_twin_switch_to_each_other_and_every_relative_link_resolves(doc):
    """Links, and heading anchors within the documents; the zh twin links the zh twins, not the English."""
    english, zh = doc.english.read_text(encoding="utf-8"), doc.zh.read_text(encoding="utf-8")
    assert english.startswith(doc.switch_en + "\n") and zh.splitlines()[2] == doc.switch_zh
    twinned = {d.english for d in i18n.documents()}
    for path, text in ((doc.english, english), (doc.zh, zh)):
        body = text.replace(doc.switch_zh, "") if path == doc.zh else text
        for target in i18n.re.findall(r"\]\(([^)\s]+)\)", i18n.NOT_LINKS.sub("", body)):
            if "://" in target:
                continue
            file, _, anchor = target.partition("#")
            resolved = (path.parent / file).resolve() if file else path
            where = f"{path.name}: link {target}"
            assert resolved.exists(), where
            assert path != doc.zh or resolved not in twinned, f"{where}: the English, not its zh twin"
            if anchor and resolved.suffix == ".md":
                lines = i18n.NOT_LINKS.sub("", resolved.read_text(encoding="utf-8")).splitlines()
                assert anchor in {i18n.slug(x.lstrip("#")) for x in lines if i18n.re.match(r"#{1,6} ", x)}, where


# --- the pieces -------------------------------------------------------------------------------

CELL = '''\
#@save
def f(x):  # noqa: D103
    # Move the tensor first:
    # its device decides.
    y = x.to("cpu")  # a copy, "# not a comment"
    s = "# still a string"
    return y
%xmode Minimal
'''


def test_comments_found_by_the_tokenizer_directives_and_strings_left_alone():
    found = i18n.comments(CELL)
    assert [(c.text, c.inline) for c in found] == [
        ("Move the tensor first:\nits device decides.", False),
        ('a copy, "# not a comment"', True),
    ]
    zh = i18n.translate_comments(CELL, lambda c: "先移动张量：\n设备由它决定。\n（第三行）" if not c.inline else "复制")
    assert "#@save" in zh and "# noqa: D103" in zh and '"# still a string"' in zh and "%xmode Minimal" in zh
    assert '    # 先移动张量：\n    # 设备由它决定。\n    # （第三行）\n    y = x.to("cpu")  # 复制\n' in zh
    assert i18n.code_without_comments(zh) == i18n.code_without_comments(CELL)


def test_the_code_check_catches_a_changed_line_a_changed_directive_and_a_changed_magic():
    base = i18n.code_without_comments(CELL)
    assert i18n.code_without_comments(CELL.replace('"cpu"', '"cuda"')) != base
    assert i18n.code_without_comments(CELL.replace("# noqa: D103", "# noqa: E501")) != base
    assert i18n.code_without_comments(CELL.replace("%xmode Minimal", "%xmode Context")) != base


def test_glossary_terms_must_be_translated_as_listed():
    terms = i18n.glossary()
    assert len(terms) >= 40
    english = "Synchronise before reading the clock: the `tensor` lives in GPU memory, not host memory."
    assert i18n.glossary_misses(english, "读时钟之前先同步：张量位于显存，而不是主机内存。", terms) == []
    misses = i18n.glossary_misses(english, "读时钟之前先同步：张量位于 GPU 内存，而不是主机内存。", terms)
    assert misses == ["'gpu memory/device memory' should be '显存'"]
    # code spans and link targets are not prose; plurals count
    assert i18n.glossary_misses("Call `optimizer.step()` [here](t.ipynb).", "调用 `optimizer.step()`。", terms) == []
    assert i18n.glossary_misses("fix: save model.state_dict()", "修正：保存 model.state_dict()", terms) == []
    assert i18n.glossary_misses("Two tensors.", "两个数组。", terms) == ["'tensor' should be '张量'"]
    # an HTML tag is markup: the <summary> of a fold is not the word "summary", but its text is prose
    fold = "<details><summary>More detail (optional): the allocator</summary>\n\nA tensor."
    assert i18n.glossary_misses(fold, "<details><summary>更多细节（选读）：分配器</summary>\n\n一个张量。", terms) == []
    assert i18n.glossary_misses("<b>Summary</b>", "<b>概要</b>", terms) == ["'summary' should be '小结'"]


def test_the_kernels_compounds_and_the_words_the_edition_avoids():
    """The glossary's terms: a GPU kernel is 核函数 and only Jupyter's kernel 内核; the literal words that
    made the edition read translated are refused wherever a translation uses them in prose."""
    terms = i18n.glossary()
    assert i18n.glossary_misses("Each kernel launch costs microseconds.", "每次启动内核要几微秒。", terms) == [
        "'gpu kernel/cuda kernel/kernel launch/launch a kernel/launches a kernel/launching a kernel' "
        "should be '核函数'"]
    assert i18n.glossary_misses("Restart the kernel.", "重启内核。", terms) == []
    avoided = {a.word for a in i18n.avoided_words()}
    assert {"构建版本", "发行版", "簿记", "仪表", "训练步骤", "fork 服务器"} <= avoided
    assert i18n.avoided_in("装一个 CUDA 构建版本。", i18n.avoided_words()) == [
        "'构建版本' reads translated: write CUDA 版 / CPU 版 PyTorch, or 版本"]
    assert i18n.avoided_in("装 CUDA 版 PyTorch，即 `构建版本` 以外的写法。", i18n.avoided_words()) == []  # code aside
    assert i18n.avoided_in("每个发行版。", i18n.avoided_words(), skip={"发行版"}) == []
    problems = i18n.entry_problems(entry("A CUDA build.", "一个 CUDA 构建版本。"), terms)
    assert problems == ["'构建版本' reads translated: write CUDA 版 / CPU 版 PyTorch, or 版本"]


def entry(msgid, msgstr, kind="markdown cell", flags=()):
    return polib.POEntry(msgctxt="c", msgid=msgid, msgstr=msgstr, comment=kind, flags=list(flags))


def test_entry_checks_untranslated_unchanged_english_verbatim_and_one_line_comments():
    terms = i18n.glossary()
    assert i18n.entry_problems(entry("A cell.", ""), terms) == ["not translated"]
    assert "no Chinese" in i18n.entry_problems(entry("A cell.", "A cell."), terms)[0]
    assert i18n.entry_problems(entry("$x^2$", "$x^2$", flags=["verbatim"]), terms) == []
    assert i18n.entry_problems(entry("$x^2$", "$y$", flags=["verbatim"]), terms) != []
    assert "one line" in " ".join(i18n.entry_problems(entry("note", "注意\n一行", "end-of-line comment in a code cell"),
                                                      terms))


def test_code_in_markdown_must_survive_translation():
    english = "Call `x.to(device)` first:\n```bash\nmake run  # every lesson\n```"
    assert i18n.code_lost(english, "先调用 `x.to(device)`：\n```bash\nmake run  # 每一课\n```") == []
    assert i18n.code_lost(english, "先调用 `x.cuda()`：\n```bash\nmake test  # 每一课\n```") == [
        "code missing or changed: `x.to(device)`", "a fenced code block differs from the English (comments aside)"]


def test_a_quoted_message_the_chinese_edition_prints_in_chinese_is_exempt_only_where_the_entry_says_so():
    english = "It prints `The lessons will use cuda:0.` and `cuda:0`."
    chinese = "它会打印“各课将使用 cuda:0。”，也就是 `cuda:0`。"
    said = polib.POEntry(msgctxt="a", msgid=english, msgstr=chinese, comment="markdown cell",
                         tcomment="zh-prints: `The lessons will use cuda:0.` (the zh edition prints it in Chinese)")
    assert i18n.printed_in_chinese(said) == {"The lessons will use cuda:0."}
    assert i18n.entry_problems(said, []) == []
    assert i18n.code_lost(english, chinese) == ["code missing or changed: `The lessons will use cuda:0.`"]
    assert i18n.code_lost(english, "它会打印“各课将使用 cuda:0。”。", {"The lessons will use cuda:0."}) == [
        "code missing or changed: `cuda:0`"]  # any other code of the English must stay


def test_merge_keeps_translations_and_flags_changed_english_as_stale_with_the_old_text():
    old = polib.POFile()
    old.append(polib.POEntry(msgctxt="a", msgid="Old text.", msgstr="旧文本。"))
    old.append(polib.POEntry(msgctxt="b", msgid="Same.", msgstr="相同。"))
    new = i18n.merge(old, [i18n.Unit("a", "New text.", "markdown"), i18n.Unit("b", "Same.", "markdown"),
                           i18n.Unit("c", "Brand new.", "markdown")])
    a, b, c = new
    assert (a.msgstr, a.flags, a.previous_msgid) == ("旧文本。", ["fuzzy"], "Old text.")
    assert (b.msgstr, b.flags) == ("相同。", [])
    assert c.msgstr == ""
    problems = i18n.po_problems(new, "x.po", [])
    assert problems[0].startswith("x.po [a] (markdown cell): stale") and problems[1].endswith("not translated")


def test_relink_points_at_the_zh_twins_and_their_translated_headings():
    en = i18n.NOTEBOOKS / "00_check_your_setup.ipynb"
    zh = i18n.zh_path(en)
    anchors = {i18n.README_ZH: {"lessons": "课程"}}
    text = "[next](01_devices.ipynb), [home](../README.md#lessons), [py](https://x.org/a.py), [s](#top)"
    assert i18n.relink(text, en, zh, anchors) == ("[next](01_devices.ipynb), [home](../../README.zh-CN.md#课程),"
                                                  " [py](https://x.org/a.py), [s](#top)")
    assert i18n.relink("[u](utils.py) [l](notebooks/01_devices.ipynb)", i18n.README, i18n.README_ZH) == \
        "[u](utils.py) [l](notebooks/zh/01_devices.ipynb)"
    # titles, reference definitions and HTML are links too; code and formulas are not
    text = ('[t](../utils.py "helpers") `net[0](x)` $f[x](t)$\n```python\ny = m[0](inputs)\n```\n'
            '[ref]: 01_devices.ipynb\n<img src="../utils.py">')
    assert i18n.relink(text, en, zh) == ('[t](../../utils.py "helpers") `net[0](x)` $f[x](t)$\n```python\n'
                                         'y = m[0](inputs)\n```\n[ref]: 01_devices.ipynb\n<img src="../../utils.py">')
    assert i18n.heading_anchors("## Lessons\n\n## Two commands", "## 课程\n\n## 两条命令") == \
        {"lessons": "课程", "two-commands": "两条命令"}


def test_comments_are_found_in_their_own_rows_after_ipython_lines_and_directives_survive():
    cell = "!pip install -q \\\n    torchvision\n# check the version\nimport torchvision  # the models\n"
    assert [(c.rows, c.text) for c in i18n.comments(cell)] == [((2,), "check the version"), ((3,), "the models")]
    cell = "import json  # kept for the exercise  # noqa: F401\n# pragmatic choice\n#\n"
    found = i18n.comments(cell)
    assert [(c.text, c.suffix) for c in found] == [("kept for the exercise", "  # noqa: F401"),
                                                    ("pragmatic choice", "")]
    zh = i18n.translate_comments(cell, lambda c: "留给练习" if c.suffix else "务实的选择")
    assert zh == "import json  # 留给练习  # noqa: F401\n# 务实的选择\n#\n"
    assert i18n.code_without_comments(zh) == i18n.code_without_comments(cell)
    assert i18n.code_without_comments(zh.replace("F401", "E501")) != i18n.code_without_comments(cell)
    assert i18n.stranded_comments("%timeit f()  # time it\nx = 1  # fine\n") == [0]
    with pytest.raises(ValueError, match="cell broken: Python's tokenizer cannot read it"):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell("model = nn.Sequential(\n    # your layers here\n")]
        nb.cells[0].id = "broken"
        i18n.notebook_units(nb, None)


def test_merge_follows_moved_cells_undone_changes_and_drops_old_glossary_exemptions():
    old = polib.POFile()
    old.append(polib.POEntry(msgctxt="a", msgid="Text A.", msgstr="甲。"))
    old.append(polib.POEntry(msgctxt="b", msgid="Text B.", msgstr="乙。"))
    old.append(polib.POEntry(msgctxt="c", msgid="The GPU model.", msgstr="GPU 型号。",
                             tcomment="glossary-skip: model (a GPU's model)"))
    old.append(polib.POEntry(msgctxt="d", msgid="New.", msgstr="旧。", flags=["fuzzy"], previous_msgid="New."))
    new = i18n.merge(old, [i18n.Unit("a", "Text B.", "markdown"), i18n.Unit("b", "Text A.", "markdown"),
                           i18n.Unit("c", "Train the model.", "markdown"), i18n.Unit("d", "New.", "markdown")])
    a, b, c, d = new
    assert (a.msgstr, a.flags, b.msgstr, b.flags) == ("乙。", [], "甲。", [])  # swapped ids: nothing lost
    assert c.flags == ["fuzzy"] and not c.tcomment  # the exemption was for the old sentence
    assert d.flags == [] and d.previous_msgid is None  # the English change was undone


def test_keys_name_one_english_text():
    po = polib.POFile()
    for text in ("load the data", "free the cache"):
        po.append(polib.POEntry(msgctxt="c", msgid=text, msgstr=""))
    po.append(polib.POEntry(msgctxt="m", msgid="A cell.", msgstr=""))
    keys = [k for k, _ in i18n.keyed(po)]
    assert keys[2] == "m" and keys[0].startswith("c/") and len(set(keys)) == 3
    po.insert(1, polib.POEntry(msgctxt="c", msgid="time one step", msgstr=""))
    assert dict(i18n.keyed(po))[keys[1]].msgid == "free the cache"  # an old key still means its text


# --- end to end: an English change is reported, shown in English, and never blocks a fix -------

def test_changing_english_text_is_reported_and_shown_in_english_until_translated_without_failing_lint(
        tmp_path, series_at, capsys, monkeypatch):
    """`make lint`'s check, `make sync` and the translators' commands, run (in this process) on a scratch copy:
    an English edit passes the checks at once, the zh notebook shows the new English (marked) where its
    translation is stale, and only `check --complete`, a release's, waits for the translator."""
    # A repository of one lesson (the tools, its notebooks, their translations): quick to rebuild.
    repo = tmp_path / "repo"
    for name in ("README.md", "README.zh-CN.md", "utils.py", "i18n/zh/README.po", "i18n/zh/glossary.md",
                 "notebooks/02_tensors_on_devices.ipynb", "notebooks/zh/02_tensors_on_devices.ipynb",
                 "i18n/zh/02_tensors_on_devices.po"):
        for rel in (name, name.replace("02_tensors_on_devices.", "solutions/02_tensors_on_devices_solutions.")):
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / rel, repo / rel)
    shutil.copytree(ROOT / "diagrams", repo / "diagrams")
    lesson = repo / "notebooks" / "02_tensors_on_devices.ipynb"
    nb = nbformat.read(lesson, as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "markdown" and c.id not in i18n.GENERATED_CELLS)
    cell.source += "\n\nOne more sentence about tensors."
    code = next(c for c in nb.cells if c.cell_type == "code" and i18n.comments(c.source) and c.id != "setup")
    comment = i18n.comments(code.source)[0]
    code.source = code.source.replace(comment.text.split("\n")[0], "Where does the tensor live now?", 1)
    lesson.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    (repo / "notebooks/zh/99_gone.ipynb").write_text("{}")  # left behind by a removed lesson
    series_at(repo)
    monkeypatch.chdir(repo)  # the commands take paths relative to the repository, as from `make`

    def run(tool, *args, stdin=""):
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        module = {"tools.sync_notebooks": sync_notebooks, "tools.translate": translate}[tool]
        returncode = module.main(list(args))
        return subprocess.CompletedProcess(tool, returncode, capsys.readouterr().out)

    check = run("tools.sync_notebooks", "--check")  # as `make lint` and `make test`
    assert check.returncode == 1  # the zh files are out of date, and an orphan is left: not the translation
    assert "2 entries wait for a translator" in check.stdout
    assert f"i18n/zh/02_tensors_on_devices.po [{cell.id}] (markdown cell): stale" in check.stdout
    assert f"i18n/zh/02_tensors_on_devices.po [{code.id}" in check.stdout
    assert "notebooks/zh/99_gone.ipynb: no English notebook has it" in check.stdout
    assert run("tools.sync_notebooks").returncode == 0  # make sync: the zh notebook shows the new English
    zh = {c.id: c for c in nbformat.read(repo / "notebooks/zh/02_tensors_on_devices.ipynb", as_version=4).cells}
    assert zh[cell.id].source.startswith(i18n.UNTRANSLATED) and zh[cell.id].source.endswith("about tensors.")
    assert "# Where does the tensor live now?" in zh[code.id].source  # a comment simply stays English
    check = run("tools.sync_notebooks", "--check")
    assert check.returncode == 0 and "2 entries wait for a translator" in check.stdout, check.stdout
    assert run("tools.translate", "check").returncode == 0
    assert run("tools.translate", "check", "--complete").returncode == 1  # a release waits for the translator
    todo = run("tools.translate", "todo", "i18n/zh/02_tensors_on_devices.po").stdout  # merged with the new English
    keys = [line.split()[1] for line in todo.splitlines() if line.startswith("=== ")]
    assert keys[0] == cell.id and keys[1].startswith(code.id) and len(keys) == 2, todo
    assert "--- English before the change:" in todo and "Where does the tensor live now?" in todo
    po = polib.pofile(str(repo / "i18n/zh/02_tensors_on_devices.po"))
    old = next(e for e in po if e.msgctxt == cell.id).msgstr
    po_file = "i18n/zh/02_tensors_on_devices.po"
    assert run("tools.translate", "set", po_file, cell.id, stdin=old + "\n\n再补充一句关于张量的话。").returncode == 0
    unchanged = run("tools.translate", "set", po_file, keys[1], stdin="Where does the tensor live now?")
    assert unchanged.returncode == 1 and "no Chinese" in unchanged.stdout  # English is not a translation
    assert run("tools.translate", "set", po_file, keys[1], stdin="张量现在在哪里？").returncode == 0
    sync = run("tools.sync_notebooks")
    assert sync.returncode == 0 and "wait for a translator" not in sync.stdout
    check = run("tools.sync_notebooks", "--check")
    assert check.returncode == 0, check.stdout
    assert run("tools.translate", "check", "--complete").returncode == 0
    zh = {c.id: c for c in nbformat.read(repo / "notebooks/zh/02_tensors_on_devices.ipynb", as_version=4).cells}
    assert zh[cell.id].source.endswith("再补充一句关于张量的话。") and "# 张量现在在哪里？" in zh[code.id].source


def test_splitting_and_renaming_a_lesson_keeps_every_translation(tmp_path, series_at, capsys):
    """A lesson split in two and renamed, in a scratch copy: `make sync` gives every moved cell the
    translation it had (none stale, none lost), the new lesson's own header alone is new, and the
    old lesson's translation files are removed."""
    repo = tmp_path / "repo"
    for name in ("README.md", "README.zh-CN.md", "utils.py", "i18n/zh/README.po", "i18n/zh/glossary.md",
                 "notebooks/02_tensors_on_devices.ipynb", "i18n/zh/02_tensors_on_devices.po"):
        for rel in (name, name.replace("02_tensors_on_devices.", "solutions/02_tensors_on_devices_solutions.")):
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / rel, repo / rel)
    books = repo / "notebooks"
    shutil.copytree(ROOT / "diagrams", repo / "diagrams")
    before = polib.pofile(str(repo / "i18n/zh/02_tensors_on_devices.po"))
    translated = {(e.msgctxt, e.msgid): e.msgstr for e in before if e.msgstr and "fuzzy" not in e.flags}
    nb = nbformat.read(books / "02_tensors_on_devices.ipynb", as_version=4)
    half = len(nb.cells) // 2
    first, second = nbformat.v4.new_notebook(cells=nb.cells[:half]), nbformat.v4.new_notebook(cells=nb.cells[half:])
    opening = nbformat.v4.new_markdown_cell("# More tensors\n\n*The second half.*\n\n"
                                            "**Runs on:** CPU. **Time:** about 10 minutes.")
    second.cells.insert(0, opening)
    (books / "02_tensors_on_devices.ipynb").unlink()
    solutions = books / "solutions"
    (solutions / "02_tensors_on_devices_solutions.ipynb").rename(solutions / "02_tensors_first_solutions.ipynb")
    nbformat.write(first, books / "02_tensors_first.ipynb")
    nbformat.write(second, books / "03_tensors_second.ipynb")
    series_at(repo)

    assert sync_notebooks.main([]) == 0
    out = capsys.readouterr().out
    assert "i18n/zh/02_tensors_on_devices.po (removed)" in out
    assert "i18n/zh/solutions/02_tensors_on_devices_solutions.po (removed)" in out
    after = {}
    for name in ("02_tensors_first", "03_tensors_second", "solutions/02_tensors_first_solutions"):
        after |= {(e.msgctxt, e.msgid): e for e in polib.pofile(str(repo / f"i18n/zh/{name}.po"))}
    kept = {key: msgstr for key, msgstr in translated.items() if key in after}
    assert len(kept) >= len(translated) - 3  # all but the facts of the old header (title, purpose, runs-on)
    assert all(after[key].msgstr == msgstr and "fuzzy" not in after[key].flags for key, msgstr in kept.items())
    problems = [p for p in sync_notebooks.translation_problems() if p.startswith("i18n/zh/03_tensors_second.po")]
    assert problems and all("[title]" in p or "[purpose]" in p or "[runs-on]" in p for p in problems), problems
    zh = nbformat.read(repo / "notebooks/zh/03_tensors_second.ipynb", as_version=4)
    assert not any(i18n.UNTRANSLATED in c.source for c in zh.cells if c.get("id") not in i18n.GENERATED_CELLS)


def test_a_python_file_written_by_writefile_is_python_to_the_i18n_tools():
    """`%%writefile train.py`: the script's comments are translated, its code must stay equal."""
    en = "%%writefile {workdir}/train.py\nimport torch  # the library\n# set up the group\nx = '# data'\n"
    assert [c.text for c in i18n.comments(en)] == ["the library", "set up the group"]
    zh = i18n.translate_comments(en, lambda c: {"the library": "库", "set up the group": "建立进程组"}[c.text])
    assert "# 库" in zh and "# 建立进程组" in zh and "'# data'" in zh
    assert i18n.code_without_comments(en) == i18n.code_without_comments(zh)
    assert i18n.code_without_comments(en) != i18n.code_without_comments(en.replace("x = ", "y = "))
    assert i18n.code_without_comments(en) != i18n.code_without_comments(en.replace("train.py", "other.py"))
    assert i18n.comments("%%writefile notes.txt\n# not Python\n") == ()  # another file: text as written


def test_the_rhythm_measure_counts_sentences_colons_and_semicolons_of_prose_only(tmp_path):
    """tools/zh_rhythm.py, which `make lint` runs against the targets: code and link targets are not prose."""
    from tools import zh_rhythm

    page = tmp_path / "page.md"
    page.write_text("我们先看一个例子：张量在哪里。\n\n`代码：不算` [链接](https://x.org/a：b) 也一样；这样。\n\n"
                    "```\n代码块：不算\n```\n", encoding="utf-8")
    r = zh_rhythm.measure(page)
    # 20 characters of prose in 2 sentences, one colon and one semicolon
    assert (round(r.per_sentence, 1), round(r.colons, 2), round(r.semicolons, 2)) == (10.0, 5.0, 5.0)
    assert r.over() == ["colons per 100 5.00 > 0.5", "semicolons per 100 5.00 > 0.3"]
    assert all(not zh_rhythm.measure(p).over() for p in zh_rhythm.lessons())  # the targets hold today


def test_bold_that_commonmark_cannot_close_is_a_problem_and_the_fix_is_not():
    """Full-width punctuation inside the closing ** before a character: CommonMark prints the asterisks."""
    assert i18n.literal_stars("**预测：**这台机器有几块 GPU？") == 2  # the opening ** and the closing one
    assert i18n.literal_stars("这是**（注意）**的地方") == 2
    assert i18n.literal_stars("**预测**：这台机器有几块 GPU？") == 0
    assert i18n.literal_stars("**Predict:** how many GPUs? `a**b` in code") == 0
    entry = polib.POEntry(msgctxt="c-1", msgid="**Predict:** how many?", msgstr="**预测：**有几块？",
                          comment=i18n.KIND_NOTE["markdown"])
    assert any("shows as asterisks" in p for p in i18n.entry_problems(entry, []))
    entry.msgstr = "**预测**：有几块？"
    assert not any("shows as asterisks" in p for p in i18n.entry_problems(entry, []))
