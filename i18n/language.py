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


# The Chinese texts, beside utils.py (this file is part of utils.py): in a checkout, in a release's archive
# and in a hand-out's series_helpers/ folder alike.
ZH_TABLES = Path("i18n", "zh", "messages.json")


@cache
def zh_tables() -> dict[str, dict[str, str]]:
    """The Chinese edition's texts, read once, at their first use: "messages", the exercise checks'
    ``MESSAGES`` by key, and "texts", the ``localized`` texts (the helpers' and the lessons' own cells')
    by their English template.
    Without the file (a utils.py copied alone) the series' messages stay English, with a warning."""
    path = Path(__file__).resolve().parent / ZH_TABLES
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        warnings.warn(f"{path} is missing, so the series' messages stay English: copy the folder "
                      "i18n/ of the series beside utils.py", stacklevel=2)
        return {"messages": {}, "texts": {}}


def localized(template: str) -> str:
    """``template``, a message a helper prints or raises for a reader, in the language of the edition.

    gettext's pattern: the English template is written in place and its values are filled in after,
    ``localized("GPU index must be 0 or more, got {i}").format(i=i)``, so that a translation may put
    the fields in the order its language wants. In English it is ``template`` itself; in the Chinese
    edition its translation from ``zh_tables()``. A template with no translation stays English.
    """
    if language() == "en" or not isinstance(template, str):
        return template
    return zh_tables()["texts"].get(template, template)
