"""The exercises' checks: `from exercises import check, hint` in a lesson, then `check("topic.slug", answer)`.

exercises/core.py owns check() and hint(); each lesson's checks are in a module of their own, named by
the lesson's topic, and every text they print is in exercises/messages.py. The package imports the
helpers it judges from utils.py (generated from the lessons' `#@save` cells), which never imports it.
"""

import importlib
import pkgutil

from .core import check, hint

for _topic in pkgutil.iter_modules(__path__):  # importing a lesson's module registers its checks
    importlib.import_module(f"{__name__}.{_topic.name}")

__all__ = ["check", "hint"]
