"""Diagrams: SVG pictures in diagrams/, shown inside the notebooks, their words translated.

A lesson shows a diagram with a markdown image whose target names the file:

    ![What the picture shows, said in a sentence or two](attachment:gpu_queue.svg)

`make sync` embeds the file diagrams/gpu_queue.svg in that cell, as an HTML image of a `data:`
URI (`<img alt="..." src="data:image/svg+xml;base64,...">`), so the picture shows wherever the
notebook is opened alone. Why not a real cell attachment: JupyterLab renders attachments of PNG,
JPEG, GIF, BMP and WebP only, not SVG; and why not markdown's `![](data:...)`: markdown-it, the
site's parser, refuses an SVG `data:` URI there. The cell's metadata `diagrams` keeps the names,
in order, so the next `make sync` embeds the file again when it changes. For the translation
tools a cell reads as written (`attachment:NAME.svg`): the alt text is translated with the
prose, each `<text>`/`<tspan>` of the SVG is an entry of its own, and the Chinese notebook
embeds the SVG with its words translated.

What a diagram must be (`problems`, run by `make lint` through tests/test_diagrams.py): well-formed
SVG with a `viewBox`, an opaque background rectangle first (it reads the same in a light and a
dark theme), no scripts, no `foreignObject`, no external references, text of at least 12 px.
"""

from __future__ import annotations

import base64
import html
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from xml.sax.saxutils import escape

from tools import series

# A diagram as written, by name, and as `make sync` embeds it: an HTML image, since the markdown
# parsers of the site (markdown-it) and others refuse an SVG `data:` URI in markdown's ![](...).
NAMED = re.compile(r"!\[([^\]\n]*)\]\(attachment:([A-Za-z0-9_-]+\.svg)\)")
EMBEDDED = re.compile(r'<img alt="([^"]*)" src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)" */?>')
# The words of an SVG: the text of each <text> or <tspan> element that holds any.
SVG_TEXT = re.compile(r"(<(?:text|tspan)\b[^>]*>)([^<]*[^<\s][^<]*)(?=<)")
SVG_NS = "{http://www.w3.org/2000/svg}"


def folder() -> Path:
    return series.ROOT / "diagrams"


def data_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def by_name(source: str, names: list[str]) -> tuple[str, list[str], list[str]]:
    """The markdown with every diagram named (`![alt](attachment:NAME.svg)`), the names in order,
    and the SVG text each embedded one holds ("" for one not embedded yet). ``names`` are the
    cell's `diagrams` metadata, which name the embedded ones in order."""
    found, svgs, embedded = [], [], iter(names)

    def name(m: re.Match) -> str:
        n = next(embedded, None)
        if n is None:
            raise ValueError("an embedded SVG image that no `diagrams` metadata names: write it as "
                             "![alt](attachment:NAME.svg) with the file in diagrams/")
        found.append(n)
        svgs.append(base64.b64decode(m.group(2)).decode("utf-8"))
        return f"![{html.unescape(m.group(1))}](attachment:{n})"

    named = EMBEDDED.sub(name, source)
    order = [m.group(2) for m in NAMED.finditer(named)]  # the embedded ones and any written since
    known = dict(zip(found, svgs, strict=True))
    return named, order, [known.get(n, "") for n in order]


def embed(named: str, svg_of: Callable[[str], str]) -> str:
    """The markdown with each `![alt](attachment:NAME.svg)` replaced by an image of ``svg_of(NAME)``."""
    def image(m: re.Match) -> str:
        return f'<img alt="{html.escape(m.group(1), quote=True)}" src="{data_uri(svg_of(m.group(2)))}">'

    return NAMED.sub(image, named)


def read(name: str) -> str:
    path = folder() / name
    if not path.is_file():
        raise ValueError(f"diagrams/{name} does not exist (a markdown image names it as attachment:{name})")
    return path.read_text(encoding="utf-8")


def texts(svg: str) -> list[str]:
    """The words of the diagram, each text element once, in order."""
    out = []
    for m in SVG_TEXT.finditer(svg):
        text = html.unescape(m.group(2)).strip()
        if text not in out:
            out.append(text)
    return out


def translated(svg: str, lookup: Callable[[str], str]) -> str:
    """The SVG with the words of each text element replaced by ``lookup(words)``."""
    def swap(m: re.Match) -> str:
        raw = m.group(2)
        lead, trail = raw[:len(raw) - len(raw.lstrip())], raw[len(raw.rstrip()):]
        return m.group(1) + lead + escape(lookup(html.unescape(raw).strip())) + trail

    return SVG_TEXT.sub(swap, svg)


def problems(svg: str, where: str) -> list[str]:
    """What keeps this SVG from showing the same everywhere, legibly, safely."""
    try:
        root = ET.fromstring(svg)
    except ET.ParseError as err:
        return [f"{where}: not well-formed XML ({err})"]
    out = []
    if root.tag != SVG_NS + "svg":
        out.append(f"{where}: the root element is not <svg> in the SVG namespace")
    if not root.get("viewBox"):
        out.append(f"{where}: no viewBox (it cannot scale to the page)")
    if not (root.get("width") and root.get("height")):
        out.append(f"{where}: no width and height (an image of it has no size of its own)")
    box = [float(v) for v in (root.get("viewBox") or "0 0 0 0").replace(",", " ").split()]
    shapes = [e for e in root if e.tag not in (SVG_NS + "title", SVG_NS + "desc", SVG_NS + "defs")]
    back = shapes[0] if shapes else None

    def near(value: str | None, target: float) -> bool:  # a stroke's half pixel of inset is fine
        return value == "100%" or abs(float(re.sub(r"px$", "", value or "0")) - target) <= 1

    covers = back is not None and back.tag == SVG_NS + "rect" and len(box) == 4 and near(back.get("x"), box[0]) \
        and near(back.get("y"), box[1]) and near(back.get("width"), box[2]) and near(back.get("height"), box[3])
    if not covers or (back.get("fill") or "").lower() in ("", "none", "transparent") or back.get("fill-opacity") \
            or back.get("opacity"):
        out.append(f"{where}: the first shape must be an opaque background <rect> over the whole picture "
                   "(the viewBox's, or 100%), so it reads the same in light and dark themes")
    for e in root.iter():
        tag = e.tag.removeprefix(SVG_NS)
        if tag in ("script", "foreignObject", "image"):
            out.append(f"{where}: <{tag}> is not allowed (scripts, HTML and external files do not show everywhere)")
        for key, value in e.attrib.items():
            if key.endswith("href") and not value.startswith("#"):
                out.append(f"{where}: an external reference ({value})")
            if key.startswith("on"):
                out.append(f"{where}: an event handler ({key})")
        size = e.get("font-size")
        if size and float(re.sub(r"px$", "", size)) < 12:
            out.append(f"{where}: font-size {size} is below 12 px")
    if not texts(svg):
        out.append(f"{where}: no words in <text> elements (a diagram's labels are text, so they can be translated)")
    return out

