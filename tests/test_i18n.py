"""The Chinese edition (tools/i18n.py): every notebook has a generated zh twin, complete and in
step with the English; its code is the English code; its terms follow the glossary; and a
change to the English fails the checks until it is translated again."""

from __future__ import annotations

import shutil
import subprocess
import sys

import nbformat
import polib
import pytest

from tools import i18n, sync_notebooks
from tools.series import REPO, ROOT, all_notebooks, read

ZH_NOTEBOOKS = [i18n.zh_path(p) for p in all_notebooks()]


def test_every_english_notebook_has_a_zh_twin_and_a_translation_file():
    for path in all_notebooks():
        assert i18n.zh_path(path).exists(), f"{path.name}: no zh twin; run `make sync`"
        assert i18n.po_path(path).exists(), f"{path.name}: no translation file; run `make sync`"
    assert sorted(i18n.ZH.rglob("*.ipynb")) == sorted(ZH_NOTEBOOKS), "a zh notebook without an English one"
    assert sorted(i18n.I18N.rglob("*.po")) == sorted([i18n.po_path(p) for p in all_notebooks()] + [i18n.README_PO])


def test_the_chinese_edition_is_complete_and_in_step():
    """Untranslated or stale entries, English left as it was, glossary terms translated otherwise,
    zh code that is not the English code: each named with its file and cell."""
    problems = sync_notebooks.translation_problems()
    assert not problems, f"{len(problems)} problem(s), e.g.:\n" + "\n".join(problems[:20])


@pytest.mark.parametrize("zh", ZH_NOTEBOOKS, ids=[p.relative_to(i18n.ZH).as_posix() for p in ZH_NOTEBOOKS])
def test_zh_code_is_the_english_code_once_comments_are_removed(zh):
    """The stand-in for running the zh notebooks under nbval: same cells, same code, same outputs."""
    english = read(i18n.english_path(zh))
    chinese = read(zh)
    assert [(c.id, c.cell_type) for c in english.cells] == [(c.id, c.cell_type) for c in chinese.cells]
    for en, cn in zip(english.cells, chinese.cells, strict=True):
        if cn.cell_type != "code":
            continue
        assert cn.outputs == en.outputs and cn.execution_count == en.execution_count, cn.id
        if cn.id != "setup":  # the setup cell speaks Chinese: tests/test_bootstrap.py
            assert i18n.code_without_comments(cn.source) == i18n.code_without_comments(en.source), cn.id


def test_badges_and_navigation_open_the_zh_notebooks_themselves():
    for zh in ZH_NOTEBOOKS:
        header = read(zh).cells[0].source
        rel = zh.relative_to(ROOT).as_posix()
        assert f"colab.research.google.com/github/{REPO}/blob/main/{rel})" in header, rel
        assert f"kaggle.com/kernels/welcome?src=https://github.com/{REPO}/blob/main/{rel})" in header, rel
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


def test_relink_points_at_the_zh_twins():
    en = i18n.NOTEBOOKS / "00_check_your_setup.ipynb"
    zh = i18n.zh_path(en)
    text = "[next](01_devices.ipynb), [home](../README.md#lessons), [py](https://x.org/a.py), [s](#top)"
    assert i18n.relink(text, en, zh) == ("[next](01_devices.ipynb), [home](../../README.zh-CN.md#lessons),"
                                         " [py](https://x.org/a.py), [s](#top)")
    assert i18n.relink("[u](utils.py) [l](notebooks/01_devices.ipynb)", i18n.README, i18n.README_ZH) == \
        "[u](utils.py) [l](notebooks/zh/01_devices.ipynb)"


# --- end to end: an English change fails the checks until it is translated ------------------

def test_changing_an_english_markdown_cell_fails_lint_and_names_the_cell_until_translated(tmp_path):
    # A repository of one lesson (the tools, its notebooks, their translations): quick to rebuild.
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "tools", repo / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("README.md", "README.zh-CN.md", "utils.py", "i18n/zh/README.po", "i18n/zh/glossary.md",
                 "notebooks/02_tensors_on_devices.ipynb", "notebooks/zh/02_tensors_on_devices.ipynb",
                 "i18n/zh/02_tensors_on_devices.po"):
        for rel in (name, name.replace("02_tensors_on_devices.", "solutions/02_tensors_on_devices_solutions.")):
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / rel, repo / rel)
    lesson = repo / "notebooks" / "02_tensors_on_devices.ipynb"
    nb = nbformat.read(lesson, as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "markdown" and c.id not in i18n.GENERATED_CELLS)
    cell.source += "\n\nOne more sentence about tensors."
    lesson.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")

    def run(*args, stdin=None):
        return subprocess.run([sys.executable, "-m", *args], cwd=repo, capture_output=True, text=True, input=stdin)

    check = run("tools.sync_notebooks", "--check")  # as `make lint`: the .po file is out of date
    assert check.returncode == 1 and "i18n/zh/02_tensors_on_devices.po" in check.stdout
    assert run("tools.sync_notebooks").returncode == 0  # `make sync` rewrites, and says what is stale
    check = run("tools.sync_notebooks", "--check")
    assert check.returncode == 1
    assert f"i18n/zh/02_tensors_on_devices.po [{cell.id}] (markdown cell): stale" in check.stdout
    po = polib.pofile(str(repo / "i18n/zh/02_tensors_on_devices.po"))
    stale = next(e for e in po if e.msgctxt == cell.id)
    assert "fuzzy" in stale.flags and stale.previous_msgid and stale.msgid == cell.source
    new = stale.msgstr + "\n\n再补充一句关于张量的话。"
    assert run("tools.i18n", "set", "i18n/zh/02_tensors_on_devices.po", cell.id, stdin=new).returncode == 0
    assert run("tools.sync_notebooks").returncode == 0
    check = run("tools.sync_notebooks", "--check")
    assert check.returncode == 0, check.stdout
    zh = nbformat.read(repo / "notebooks/zh/02_tensors_on_devices.ipynb", as_version=4)
    assert next(c for c in zh.cells if c.id == cell.id).source.endswith("再补充一句关于张量的话。")
