"""Pin the notebooks to a new release: `make release VERSION=vX.Y.Z` runs this, then tests, commits and tags.

Sets VERSION in tools/series.py (the one place it is named) and regenerates every part that
names it: the setup cells' URL and utils.py's header.

Usage: python -m tools.release vX.Y.Z
"""

from __future__ import annotations

import re
import subprocess
import sys

from tools import series

TAG = re.compile(r"v\d+\.\d+\.\d+")


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not TAG.fullmatch(argv[0]):
        print("usage: python -m tools.release vX.Y.Z (for example v0.3.0)")
        return 2
    path = series.ROOT / "tools" / "series.py"
    text = path.read_text(encoding="utf-8")
    new = re.sub(r'^VERSION = "[^"]*"$', f'VERSION = "{argv[0]}"', text, count=1, flags=re.MULTILINE)
    if new == text:
        print(f"tools/series.py already names {argv[0]}: nothing to rewrite")
    else:
        path.write_text(new, encoding="utf-8")
    # A new interpreter reads the new VERSION.
    return subprocess.run([sys.executable, "-m", "tools.sync_notebooks"], cwd=series.ROOT).returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
