"""The rhythm of the Chinese edition's prose, against d2l-zh's.

    python -m tools.zh_rhythm            # a table: every zh lesson, then every zh solutions notebook
    python -m tools.zh_rhythm --check    # the table, then exit 1 naming each lesson over a target
    python -m tools.zh_rhythm FILE ...   # the same measures of any notebook or markdown file

Three measures of the prose of a notebook's markdown cells (fenced code, inline code and link
targets removed; a link's text stays), as the shared `zh_rhythm.py` measuring script counts them:
Chinese characters per sentence on average (sentences end at 。！？!? and at blank lines; only
pieces holding Chinese characters count), and full-width colons (：) and semicolons (；) per 100
Chinese characters. Headings, list items and table rows are prose too.

The targets, for each lesson `notebooks/zh/NN_*.ipynb` (solutions notebooks are measured and shown,
never failed); the generated header and footer cells and cells still waiting for a translator are not
measured:

- at most 25 characters per sentence (d2l-zh's GPU section: 19.6);
- at most 0.5 colons and 0.3 semicolons per 100 characters (d2l-zh's GPU section: none).

A measure, not a goal in itself: sentences chopped mechanically, or colons swapped for dashes,
read worse. The judges are readers who learned from d2l-zh.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from tools.i18n import UNTRANSLATED
from tools.series import ROOT

ZH = ROOT / "notebooks" / "zh"
CJK = re.compile(r"[\u4e00-\u9fff]")
PER_SENTENCE, COLONS, SEMICOLONS = 25.0, 0.5, 0.3


@dataclass(frozen=True)
class Rhythm:
    path: Path
    per_sentence: float
    colons: float
    semicolons: float

    def over(self) -> list[str]:
        return [f"{what} {value:.2f} > {limit}" for what, value, limit in (
            ("characters per sentence", self.per_sentence, PER_SENTENCE), ("colons per 100", self.colons, COLONS),
            ("semicolons per 100", self.semicolons, SEMICOLONS)) if value > limit]


# Not measured: the cells `make sync` writes (header and footer: navigation and badges, not prose), and a
# cell still waiting for its translator (it shows the English after tools/i18n.py's UNTRANSLATED line).
UNMEASURED_CELLS = ("header", "footer")


def prose(path: Path) -> str:
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown"
                           and c.get("id") not in UNMEASURED_CELLS
                           and not "".join(c["source"]).startswith(UNTRANSLATED))
    else:
        text = path.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.sub(r"`[^`]*`|\[([^\]]*)\]\([^)]*\)", r"\1", text)


def rhythm(text: str) -> tuple[float, float, float]:
    chars = len(CJK.findall(text))
    sentences = [s for s in re.split(r"[。！？!?]\s*|\n\s*\n", text) if CJK.search(s)]
    per_sentence = sum(len(CJK.findall(s)) for s in sentences) / max(1, len(sentences))
    return per_sentence, 100 * text.count("：") / max(1, chars), 100 * text.count("；") / max(1, chars)


def measure(path: Path) -> Rhythm:
    return Rhythm(path, *rhythm(prose(path)))


def lessons() -> list[Path]:
    return sorted(ZH.glob("[0-9][0-9]_*.ipynb"))


def solutions() -> list[Path]:
    return sorted((ZH / "solutions").glob("[0-9][0-9]_*.ipynb"))


def table(rows: list[Rhythm], checked: bool) -> str:
    out = [f"{'notebook':66} {'chars/sentence':>14} {'colons/100':>10} {'semicolons/100':>14}  verdict"]
    for r in rows:
        verdict = ("over: " + ", ".join(r.over()) if r.over() else "ok") if checked else "(not checked)"
        name = r.path.relative_to(ROOT).as_posix() if r.path.is_relative_to(ROOT) else str(r.path)
        out.append(f"{name:66} {r.per_sentence:14.1f} {r.colons:10.2f} {r.semicolons:14.2f}  {verdict}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.zh_rhythm", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="exit 1 naming each lesson over a target")
    parser.add_argument("files", nargs="*", type=Path, help="measure these instead")
    args = parser.parse_args(argv)
    if args.files:
        missing = [str(f) for f in args.files if not f.is_file()]
        if missing:
            parser.error("no such file: " + ", ".join(missing))
        print(table([measure(f) for f in args.files], checked=True))
        return 0
    measured = [measure(p) for p in lessons()]
    print(table(measured, checked=True))
    print(table([measure(p) for p in solutions()], checked=False).split("\n", 1)[1])
    print(f"targets for a lesson: <= {PER_SENTENCE:g} characters per sentence, <= {COLONS} colons and "
          f"<= {SEMICOLONS} semicolons per 100 characters (python -m tools.zh_rhythm --help)")
    failures = [f"{r.path.name}: {', '.join(r.over())}" for r in measured if r.over()]
    if args.check and failures:
        print(f"\nChinese rhythm: {len(failures)} lesson(s) over a target\n" + "\n".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
