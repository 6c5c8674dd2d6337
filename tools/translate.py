"""The translators' commands for the Chinese edition (the translation files are tools/i18n.py's).

    python -m tools.translate todo i18n/zh/03_copies_between_devices.po   # what is left, with keys
    python -m tools.translate show i18n/zh/03_copies_between_devices.po KEY
    python -m tools.translate set  i18n/zh/03_copies_between_devices.po KEY [--verbatim] < text
    python -m tools.translate check                                      # every problem, every file

They work on a translation file as `make sync` would write it now (merged with the current
English), so they need the whole build (tools/sync_notebooks.py): a module of their own, as
tools/i18n.py is a part of that build and imports nothing of it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import polib

from tools import i18n, sync_notebooks


def find_entry(po: polib.POFile, key: str) -> polib.POEntry:
    for k, e in i18n.keyed(po):
        if k == key:
            return e
    raise SystemExit(f"no entry {key!r}; `python -m tools.translate todo FILE` lists the keys")


def show(entry: polib.POEntry, key: str) -> str:
    flags = f" [{', '.join(entry.flags)}]" if entry.flags else ""
    lines = [f"=== {key} ({entry.comment}){flags}"]
    if entry.previous_msgid:
        lines += ["--- English before the change:", entry.previous_msgid]
    lines += ["--- English:", entry.msgid]
    if entry.msgstr:
        lines += ["--- 中文:", entry.msgstr]
    return "\n".join(lines)


def current(path: Path) -> polib.POFile:
    """The translation file as `make sync` would write it now: merged with the current English, so
    `todo` shows what an English edit made stale and `set` never writes to an outdated entry."""
    text = sync_notebooks.build()[0].get(path.resolve())
    return polib.pofile(text, wrapwidth=0) if text is not None else i18n.load(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Translation files of the Chinese edition")
    sub = parser.add_subparsers(dest="command", required=True)
    todo = sub.add_parser("todo", help="entries still to translate (or stale), with their keys")
    todo.add_argument("po", type=Path)
    todo.add_argument("--all", action="store_true", help="every entry, translated or not")
    sh = sub.add_parser("show", help="one entry")
    sh.add_argument("po", type=Path)
    sh.add_argument("key")
    st = sub.add_parser("set", help="set an entry's translation from standard input (clears fuzzy)")
    st.add_argument("po", type=Path)
    st.add_argument("key")
    st.add_argument("--verbatim", action="store_true", help="pure code or formula: keep the English")
    st.add_argument("--skip-term", action="append", default=[],
                    help="a glossary term this entry uses in another sense (with the reason in parentheses)")
    st.add_argument("--zh-prints", action="append", default=[], metavar="SPAN",
                    help="an inline code span of the English quoting a message of the series that the Chinese"
                         " edition prints in Chinese: the translation quotes the Chinese instead")
    ck = sub.add_parser("check", help="every translation problem in every file (as make lint: fails only on broken "
                                      "ones; --complete: on entries waiting for a translator too)")
    ck.add_argument("--complete", action="store_true", help="fail on untranslated and stale entries too (a release)")
    args = parser.parse_args(argv)

    if args.command == "check":
        found = sync_notebooks.translation_problems()
        text, broken = sync_notebooks.report(found)
        print(text or "the Chinese edition is complete and in step")
        return 1 if broken or (args.complete and found) else 0
    po = current(args.po)
    terms = i18n.glossary()
    if args.command == "todo":
        for key, entry in i18n.keyed(po):
            problems = i18n.entry_problems(entry, terms)
            if args.all or problems:
                print(show(entry, key) + ("\n--- problems: " + "; ".join(problems) if problems else "") + "\n")
        return 0
    entry = find_entry(po, args.key)
    if args.command == "show":
        print(show(entry, args.key))
        return 0
    text = entry.msgid if args.verbatim else sys.stdin.read().strip("\n")
    entry.msgstr = text
    entry.flags = ["verbatim"] if args.verbatim else []
    entry.previous_msgid = None
    if args.skip_term or args.zh_prints:
        entry.tcomment = "\n".join([f"glossary-skip: {t}" for t in args.skip_term]
                                   + [f"zh-prints: `{span}` (the Chinese edition prints it in Chinese)"
                                      for span in args.zh_prints])
    args.po.write_text(i18n.po_text(po), encoding="utf-8")
    problems = i18n.entry_problems(entry, terms)
    english = entry.msgid.split("\n", 1)[0]
    print(f"{args.key} ({english[:60]}{'...' if len(english) > 60 else ''}): " + ("; ".join(problems) or "ok"))
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
