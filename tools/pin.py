"""Pin the notebooks opened alone to the utils.py of a commit: `make pin` runs this and commits.

A notebook opened alone (Colab, Kaggle, a download) fetches utils.py from the published
repository at the commit named in tools/series.py (PIN). The commit must hold the very utils.py
the notebooks were written with, so the pin names the last commit, after utils.py is committed:
`make pin` checks that the work tree is clean, writes HEAD's id into tools/series.py, regenerates
the setup cells (`make sync`), and commits that as a commit of its own (a commit cannot name itself).

Usage: python -m tools.pin [COMMIT]   (default: HEAD)
"""

from __future__ import annotations

import re
import subprocess
import sys

from tools import series

SHA = re.compile(r"[0-9a-f]{40}")


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=series.ROOT, check=True, capture_output=True, text=True).stdout.strip()


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        print(__doc__.strip().splitlines()[-1])
        return 2
    if git("status", "--porcelain", "--untracked-files=no"):
        print("tools/pin.py: commit your changes first: the pin names a commit, so utils.py must be committed")
        return 1
    commit = git("rev-parse", "--verify", f"{argv[0] if argv else 'HEAD'}^{{commit}}")
    committed = git("show", f"{commit}:utils.py")
    if committed != (series.ROOT / "utils.py").read_text(encoding="utf-8").strip():
        print(f"tools/pin.py: utils.py of {commit[:12]} is not this checkout's utils.py: pin the commit that holds it")
        return 1
    path = series.ROOT / "tools" / "series.py"
    text = path.read_text(encoding="utf-8")
    new = re.sub(r'^PIN = "[0-9a-f]*"$', f'PIN = "{commit}"', text, count=1, flags=re.MULTILINE)
    if new == text:
        print(f"tools/series.py already pins {commit[:12]}: nothing to do")
        return 0
    path.write_text(new, encoding="utf-8")
    # A new interpreter reads the new PIN.
    code = subprocess.run([sys.executable, "-m", "tools.sync_notebooks"], cwd=series.ROOT).returncode
    if code:
        return code
    git("commit", "-qam", f"Pin: notebooks opened alone fetch utils.py of {commit[:12]}")
    print(f"pinned {commit[:12]}: now push main (the pinned commit is part of it)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
