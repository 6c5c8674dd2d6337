"""Diagrams (tools/diagrams.py): embedded by `make sync` so that a notebook opened alone shows them,
their words translated for the Chinese edition, each one safe and legible everywhere."""

from __future__ import annotations

import base64
import html
import re
import shutil

import nbformat
import polib
import pytest

from tools import diagrams, i18n, sync_notebooks
from tools.series import ROOT, all_notebooks, read

SVG = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 120" width="400" height="120"
     font-family="sans-serif" font-size="14">
  <rect x="0" y="0" width="400" height="120" fill="#ffffff" stroke="#888888"/>
  <text x="20" y="40">Host memory &amp; the CPU</text>
  <text x="220" y="40"><tspan x="220">Device</tspan><tspan x="220" dy="18">memory</tspan></text>
</svg>
"""


def embedded(source: str) -> list[str]:
    return [base64.b64decode(m.group(2)).decode() for m in diagrams.EMBEDDED.finditer(source)]


def test_a_named_diagram_is_embedded_and_reads_back_as_its_name():
    md = "Look:\n\n![Host and device memory](attachment:memory.svg)\n\nThen more."
    out = diagrams.embed(md, {"memory.svg": SVG}.__getitem__)
    assert "attachment:" not in out
    assert out.count('<img alt="Host and device memory" src="data:image/svg+xml;base64,') == 1
    assert embedded(out) == [SVG]
    assert diagrams.by_name(out, ["memory.svg"]) == (md, ["memory.svg"], [SVG])
    with pytest.raises(ValueError, match="no `diagrams` metadata names"):
        diagrams.by_name(out, [])


def test_the_words_of_a_diagram_are_its_text_elements_and_translate_in_place():
    assert diagrams.texts(SVG) == ["Host memory & the CPU", "Device", "memory"]
    zh = diagrams.translated(SVG, {"Host memory & the CPU": "主机内存与 CPU", "Device": "设备",
                                   "memory": "显存 <显存>"}.__getitem__)
    assert "<text x=\"20\" y=\"40\">主机内存与 CPU</text>" in zh and "显存 &lt;显存&gt;" in zh
    assert diagrams.problems(zh, "zh") == []


@pytest.mark.parametrize(("change", "complaint"), [
    (lambda s: s.replace(' viewBox="0 0 400 120"', ""), "no viewBox"),
    (lambda s: s.replace('fill="#ffffff"', 'fill="none"'), "opaque background"),
    (lambda s: s.replace('width="400" height="120" fill', 'width="200" height="120" fill'), "opaque background"),
    (lambda s: s.replace("</svg>", "<script>alert(1)</script></svg>"), "<script> is not allowed"),
    (lambda s: s.replace("</svg>", '<image href="https://example.org/x.png"/></svg>'), "<image> is not allowed"),
    (lambda s: s.replace('font-size="14"', 'font-size="9"'), "below 12 px"),
    (lambda s: s.replace("</svg>", ""), "not well-formed"),
    (lambda s: re.sub(r"<text.*</text>\n", "", s), "no words"),
])
def test_a_diagram_that_would_not_show_the_same_everywhere_is_refused(change, complaint):
    assert diagrams.problems(SVG, "x.svg") == []
    assert any(complaint in p for p in diagrams.problems(change(SVG), "x.svg"))


def shown() -> dict[str, list[tuple[str, str, str]]]:
    """{diagram name: [(notebook, cell id, alt text)]} over every English notebook."""
    out: dict[str, list] = {}
    for path in all_notebooks():
        for cell in read(path).cells:
            if cell.cell_type == "markdown":
                for m, name in zip(diagrams.EMBEDDED.finditer(cell.source), cell.metadata.get("diagrams", []),
                                   strict=False):
                    alt = html.unescape(m.group(1))
                    out.setdefault(name, []).append((path.name, cell.id, alt))
    return out


def test_every_diagram_is_well_made_shown_in_a_lesson_with_alt_text_and_embedded_as_its_file():
    files = sorted(p.name for p in (ROOT / "diagrams").glob("*.svg"))
    uses = shown()
    assert sorted(uses) == files, "a diagram no lesson shows, or an image whose file is missing"
    for name in files:
        svg = (ROOT / "diagrams" / name).read_text(encoding="utf-8")
        assert diagrams.problems(svg, f"diagrams/{name}") == []
        for notebook, cell_id, alt in uses[name]:
            assert len(alt.split()) >= 6, f"{notebook} {cell_id}: say what {name} shows in its alt text"
    for path in all_notebooks():
        for cell in read(path).cells:
            for svg, name in zip(embedded(cell.source), cell.metadata.get("diagrams", []), strict=False):
                assert svg == (ROOT / "diagrams" / name).read_text(encoding="utf-8"), f"{path.name}: run make sync"


def test_the_chinese_edition_embeds_each_diagram_with_its_words_translated():
    for path in all_notebooks():
        zh = {c.get("id"): c for c in read(i18n.zh_path(path)).cells}
        po = {(e.msgctxt, e.msgid): e for e in polib.pofile(str(i18n.po_path(path)))}
        for cell in read(path).cells:
            pictures = embedded(cell.source), embedded(zh[cell.get("id")].source)
            assert len(pictures[0]) == len(pictures[1]), f"zh/{path.name} {cell.id}: translate the cell again"
            for en_svg, zh_svg in zip(*pictures, strict=True):
                words = [html.unescape(w).strip() for _, w in diagrams.SVG_TEXT.findall(en_svg)]
                shown = [html.unescape(w).strip() for _, w in diagrams.SVG_TEXT.findall(zh_svg)]
                assert len(shown) == len(words), f"zh/{path.name} {cell.id}: a text element lost its words"
                for text, chinese in zip(words, shown, strict=True):
                    entry = po[(cell.id, text)]
                    if entry.msgstr and "fuzzy" not in entry.flags:
                        assert chinese == entry.msgstr, f"zh/{path.name} {cell.id}: {text!r} shows {chinese!r}"


def test_make_sync_embeds_a_new_diagram_and_the_chinese_edition_translates_its_words(tmp_path, series_at, capsys):
    """A lesson in a scratch copy gets a diagram: embedded, its words to translate, then translated."""
    repo = tmp_path / "repo"
    for rel in ("README.md", "README.zh-CN.md", "utils.py", "i18n/zh/README.po", "i18n/zh/glossary.md",
                "notebooks/02_tensors_on_devices.ipynb", "i18n/zh/02_tensors_on_devices.po",
                "notebooks/solutions/02_tensors_on_devices_solutions.ipynb",
                "i18n/zh/solutions/02_tensors_on_devices_solutions.po"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, repo / rel)
    shutil.copytree(ROOT / "diagrams", repo / "diagrams")  # those lesson 02 shows already
    (repo / "diagrams/memory.svg").write_text(SVG, encoding="utf-8")
    lesson = repo / "notebooks/02_tensors_on_devices.ipynb"
    nb = nbformat.read(lesson, as_version=4)
    alt = "Host memory beside the CPU, device memory on the GPU"
    picture = nbformat.v4.new_markdown_cell(f"![{alt}](attachment:memory.svg)")
    picture.id = "tensors-picture"
    nb.cells.insert(3, picture)
    nbformat.write(nb, lesson)
    series_at(repo)

    assert sync_notebooks.main([]) == 0
    cell = next(c for c in read(lesson).cells if c.id == "tensors-picture")
    assert embedded(cell.source) == [SVG] and cell.metadata["diagrams"] == ["memory.svg"]
    problems = [p for p in sync_notebooks.translation_problems() if "[tensors-picture" in p]
    assert len(problems) == 4, problems  # the alt text's cell and the three words of the picture
    po_path = repo / "i18n/zh/02_tensors_on_devices.po"
    po = polib.pofile(str(po_path))
    for entry in po:
        if entry.msgctxt == "tensors-picture":
            entry.msgstr = {"Host memory & the CPU": "主机内存与 CPU", "Device": "设备", "memory": "显存"}.get(
                entry.msgid, "![左边是 CPU 旁的主机内存，右边是 GPU 上的显存](attachment:memory.svg)")
    po.save(str(po_path))
    assert sync_notebooks.main([]) == 0
    capsys.readouterr()
    assert not [p for p in sync_notebooks.translation_problems() if "[tensors-picture" in p]
    zh = next(c for c in read(repo / "notebooks/zh/02_tensors_on_devices.ipynb").cells if c.id == "tensors-picture")
    assert zh.source.startswith('<img alt="左边是 CPU 旁的主机内存')
    assert diagrams.texts(embedded(zh.source)[0]) == ["主机内存与 CPU", "设备", "显存"]
    (repo / "diagrams/memory.svg").write_text(SVG.replace("Device", "GPU device"), encoding="utf-8")
    assert sync_notebooks.main(["--check"]) == 1  # a changed file is embedded again
    assert "02_tensors_on_devices.ipynb" in capsys.readouterr().out
