"""The language the series' own messages speak: English, or Chinese in the Chinese edition.

The Chinese edition's setup cell sets ``GPU_LESSONS_LANGUAGE=zh``; from then on what the helpers
print or raise for a reader (``localized``) and what the exercise checks say (``_say`` in
exercises/core.py) come from the translations in i18n/zh/messages.po, which `make sync` writes as
data into i18n/zh/messages.json beside utils.py: only the Chinese edition reads it (``zh_tables``).
The variable is read at each call, so it reaches DataLoader workers and processes started by
``torchrun``, which inherit the environment.
PyTorch's own messages are never translated: the lessons' text explains them.
"""

import json
import os
import re
import warnings
from functools import cache
from pathlib import Path

LANGUAGES = ("en", "zh")


def language() -> str:
    """The language of the series' messages: ``GPU_LESSONS_LANGUAGE``, "en" when it is not set."""
    chosen = os.environ.get("GPU_LESSONS_LANGUAGE", "").strip().lower() or "en"
    if chosen not in LANGUAGES:
        raise ValueError(f"GPU_LESSONS_LANGUAGE is {chosen!r}: the series speaks {' or '.join(map(repr, LANGUAGES))}")
    return chosen


def _template_parts(template: str) -> list[tuple[str, bool]]:
    """A template's pieces in order: (literal text, False) and (field, True), where a field is what an
    f-string has between braces (``{driver_cuda}``, ``{flag!r}``) and ``{{``/``}}`` are literal braces."""
    parts, text, i = [], "", 0
    while i < len(template):
        if template.startswith(("{{", "}}"), i):
            text, i = text + template[i], i + 2
        elif template[i] == "{":
            depth, j = 1, i + 1
            while depth:
                depth += {"{": 1, "}": -1}.get(template[j], 0)
                j += 1
            parts.append((text, False))
            parts.append((template[i:j], True))
            text, i = "", j
        else:
            text, i = text + template[i], i + 1
    parts.append((text, False))
    return [p for p in parts if p[0] or p[1]]


def _compiled(table: dict[str, str]) -> list[tuple[re.Pattern, list[str], list[tuple[str, bool]]]]:
    """Each template of ``table`` with fields as a regular expression that matches its English text,
    the fields in order, and the pieces of its translation; longest template first."""
    out = []
    for english, chinese in sorted(table.items(), key=lambda item: -len(item[0])):
        fields, pattern = [], ""
        for piece, is_field in _template_parts(english):
            if not is_field:
                pattern += re.escape(piece)
            elif piece in fields:
                pattern += f"(?P=f{fields.index(piece)})"
            else:
                pattern += f"(?P<f{len(fields)}>.*?)"
                fields.append(piece)
        if fields:
            out.append((re.compile(pattern, re.DOTALL), fields, _template_parts(chinese)))
    return out


# The Chinese texts, beside utils.py (this file is part of utils.py): in a checkout, in a release's archive
# and in a hand-out's series_helpers/ folder alike.
ZH_TABLES = Path("i18n", "zh", "messages.json")


@cache
def zh_tables() -> dict[str, dict[str, str]]:
    """The Chinese edition's texts, read once, at their first use: "messages", the exercise checks'
    ``MESSAGES`` by key, and "texts", the helpers' ``localized`` texts by their English f-string.
    Without the file (a utils.py copied alone) the series' messages stay English, with a warning."""
    path = Path(__file__).resolve().parent / ZH_TABLES
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        warnings.warn(f"{path} is missing, so the series' messages stay English: copy the folder "
                      "i18n/ of the series beside utils.py", stacklevel=2)
        return {"messages": {}, "texts": {}}


_COMPILED: dict[int, list] = {}


def localized(text: str) -> str:
    """``text``, a message a helper prints or raises for a reader, in the language of the edition.

    In English it is ``text`` itself. In the Chinese edition its translation from ``zh_tables()``,
    where the English is written as the helper's f-string (``"no GPU {name}"``): the values the
    fields took are put in their places, each of them translated too when it is such a message
    itself. A text with no translation stays English.
    """
    if language() == "en" or not isinstance(text, str):
        return text
    table = zh_tables()["texts"]
    if text in table:  # a text without fields
        return table[text]
    compiled = _COMPILED.get(id(table))
    if compiled is None:
        compiled = _COMPILED[id(table)] = _compiled(table)
    for pattern, fields, chinese in compiled:
        found = pattern.fullmatch(text)
        if found is not None:
            values = {field: localized(found[f"f{k}"]) for k, field in enumerate(fields)}
            return "".join(values.get(piece, piece) if is_field else piece for piece, is_field in chinese)
    return text
