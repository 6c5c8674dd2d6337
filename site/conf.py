"""Sphinx configuration of the series' website: `make site` builds it into build/site/.

Pages are made from README.md and the notebooks *with their stored outputs*: nothing is
executed, so the site shows exactly what the CPU reference run stored (plots, errors and all).
The lesson list of the sidebar is written here from the notebook files, never by hand.
"""

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

project = "GPU computing with PyTorch"
html_title = "GPU computing with PyTorch"
author = "the series' authors"
copyright = "the series' authors"

extensions = ["myst_nb"]
root_doc = "README"
include_patterns = ["README.md", "notebooks/*.ipynb", "notebooks/solutions/*.ipynb"]
exclude_patterns = ["build", ".venv", "node_modules", "**/.ipynb_checkpoints"]

nb_execution_mode = "off"  # stored outputs only
nb_merge_streams = True
myst_heading_anchors = 3  # README.md#lessons and other heading links resolve
suppress_warnings = [
    "myst.header",  # notebooks open with a navigation line, then their title
    "misc.highlighting_failure",  # IPython tracebacks quote docstrings with backticks
]

html_theme = "furo"
html_show_sourcelink = False
html_copy_source = False


def toctrees() -> str:
    """Hidden tables of contents (the sidebar) for the lessons and their solutions."""
    blocks = []
    for caption, folder in (("Lessons", "notebooks"), ("Solutions", "notebooks/solutions")):
        docs = "\n".join(f"{folder}/{p.stem}" for p in sorted((ROOT / folder).glob("*.ipynb")))
        blocks.append(f"\n\n```{{toctree}}\n:hidden:\n:caption: {caption}\n\n{docs}\n```\n")
    return "".join(blocks)


def add_toctrees(app, docname, source):
    if docname == root_doc:
        source[0] += toctrees()


def add_index_page(app, exception):
    """Servers look for index.html; the front page is README.html."""
    if exception is None and app.builder.format == "html":
        out = Path(app.outdir)
        shutil.copyfile(out / "README.html", out / "index.html")


def setup(app):
    app.connect("source-read", add_toctrees)
    app.connect("build-finished", add_index_page)
