"""Releases: what a notebook opened alone downloads, and `make release VERSION=X.Y.Z`.

A notebook opened alone (Colab, Kaggle, a download) names a release, tools/series.py's VERSION, and
its setup cell fetches that release's archive of helpers (HELPERS_URL): utils.py, the package
exercises/ (the checks) and i18n/zh/messages.json (the Chinese texts), in one download. The archive
is a file of the repository, release/series-helpers.zip, written by `make release` and so held by
the tag v<VERSION>: GitHub serves it as a raw file of the tag, and so does any mirror of the
repository's files (jsDelivr, a Gitee copy) without a release page of its own. Between releases it
stays as the last release made it; the checkout's notebooks use the checkout's helpers. The lessons'
badges open the tag's notebooks, so a lesson and its helpers come from one release.

    python -m tools.release archive [--out PATH]   # the archive of this checkout's helpers (build/release/)
    python -m tools.release check X.Y.Z            # could X.Y.Z be released from here?
    python -m tools.release tag X.Y.Z              # archive, version, setup cells: commit, tag vX.Y.Z
    python -m tools.release notes X.Y.Z            # CHANGELOG.md's section for X.Y.Z

`make release VERSION=X.Y.Z` runs `check`, then `make lint test`, then `tag`. A release needs a clean
tree, a version above the current one whose tag does not exist yet, a section `## X.Y.Z` in
CHANGELOG.md saying what changed for readers, and a complete Chinese edition (an English text
waiting for its translation shows in English in the zh notebooks between releases, never in one).
"""

from __future__ import annotations

import argparse
import fnmatch
import io
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from tools import series

ROOT = series.ROOT
ZIP_DATE = (2026, 1, 1, 0, 0, 0)  # every entry's date: the same files make the same archive
VERSION_TEXT = re.compile(r"\d+\.\d+\.\d+")
CHANGELOG = ROOT / "CHANGELOG.md"


def archive_files(root: Path = ROOT) -> dict[str, bytes]:
    """{path in the archive: content}: the files of HELPERS_FILES, as this checkout has them."""
    files = {}
    for pattern in series.HELPERS_FILES:
        found = sorted(root.glob(pattern))
        if not found:
            raise SystemExit(f"tools/release.py: no {pattern} in {root}: run `make sync`")
        files |= {path.relative_to(root).as_posix(): path.read_bytes() for path in found}
    return files


def files_at(ref: str, root: Path = ROOT) -> dict[str, bytes]:
    """The files of HELPERS_FILES as the commit or tag ``ref`` holds them."""
    listed = git("ls-tree", "-r", "--name-only", ref, root=root).stdout.split("\n")
    names = [n for n in listed if any(fnmatch.fnmatchcase(n, p) and n.count("/") == p.count("/")
                                      for p in series.HELPERS_FILES)]
    return {n: subprocess.run(["git", "show", f"{ref}:{n}"], cwd=root, capture_output=True, check=True).stdout
            for n in names}


def zip_bytes(files: dict[str, bytes], prefix: str = "") -> bytes:
    """A zip of ``files``, each named ``prefix`` + its name: the same bytes for the same files (fixed
    dates and modes, sorted names). The archive of helpers and the hand-out's zips are made so."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in sorted(files.items()):
            info = zipfile.ZipInfo(prefix + name, date_time=ZIP_DATE)
            info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, 0o644 << 16
            zf.writestr(info, data)
    return buffer.getvalue()


def archive_bytes(files: dict[str, bytes] | None = None) -> bytes:
    """The archive of ``files`` (this checkout's helpers by default)."""
    return zip_bytes(archive_files() if files is None else files)


def write_archive(out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(archive_bytes())
    return out


def git(*args: str, root: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)


def as_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def notes(version: str, changelog: Path = CHANGELOG) -> str:
    """CHANGELOG.md's section `## version` (up to the next `## `), without its heading; "" when it has none."""
    text = changelog.read_text(encoding="utf-8")
    found = re.search(rf"^## {re.escape(version)}\b[^\n]*\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    return found.group(1).strip() if found else ""


def problems(version: str, root: Path = ROOT) -> list[str]:
    """What stands between this checkout and the release ``version``; [] when nothing does."""
    if not VERSION_TEXT.fullmatch(version):
        return [f"{version!r} is not a version: write three numbers, such as 1.2.0"]
    found = []
    if git("status", "--porcelain", root=root).stdout.strip():
        found.append("the work tree has changes: commit them (a release names a commit)")
    if as_tuple(version) <= as_tuple(series.VERSION):
        found.append(f"{version} is not above the current release {series.VERSION}")
    if git("rev-parse", "--verify", "--quiet", f"refs/tags/v{version}", root=root).returncode == 0:
        found.append(f"the tag v{version} exists already")
    if not notes(version, root / "CHANGELOG.md"):
        found.append(f"CHANGELOG.md has no section '## {version}': say what changed for readers")
    pending = subprocess.run([sys.executable, "-m", "tools.translate", "check", "--complete"], cwd=root,
                             capture_output=True, text=True)
    if pending.returncode:
        found.append("the Chinese edition waits for translations (python -m tools.translate check --complete):\n"
                      + pending.stdout.strip()[-2000:])
    return found


def set_version(version: str, root: Path = ROOT) -> None:
    path = root / "tools" / "series.py"
    text = path.read_text(encoding="utf-8")
    new = re.sub(r'^VERSION = "[^"]*"$', f'VERSION = "{version}"', text, count=1, flags=re.MULTILINE)
    if new == text:
        raise SystemExit("tools/series.py has no line VERSION = \"...\"")
    path.write_text(new, encoding="utf-8")


def tag(version: str, root: Path = ROOT) -> int:
    found = problems(version, root)
    if found:
        print("tools/release.py: not released:\n- " + "\n- ".join(found))
        return 1
    set_version(version, root)
    # A new interpreter reads the new VERSION: the setup cells, badges and the Chinese edition follow.
    if subprocess.run([sys.executable, "-m", "tools.sync_notebooks"], cwd=root).returncode:
        return 1
    archive = root / series.HELPERS_ARCHIVE
    archive.parent.mkdir(parents=True, exist_ok=True)
    archive.write_bytes(archive_bytes(archive_files(root)))
    for args in (("add", str(archive)), ("commit", "-qam", f"Release {version}"),
                 ("tag", "-a", f"v{version}", "-m", f"Release {version}\n\n{notes(version, root / 'CHANGELOG.md')}")):
        done = git(*args, root=root)
        if done.returncode:
            print(f"tools/release.py: git {args[0]} failed: {done.stderr.strip()}")
            return 1
    print(f"released {version}: push main and the tag (git push origin main v{version}); the notebooks opened "
          f"alone then fetch {series.HELPERS_ARCHIVE} of v{version}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("archive", help="write the archive of helpers from this checkout")
    build.add_argument("--out", type=Path, default=ROOT / "build" / "release" / Path(series.HELPERS_ARCHIVE).name)
    for name, what in (("check", "say what stands between this checkout and the release"),
                       ("tag", "write the version into the notebooks, commit and tag"),
                       ("notes", "print CHANGELOG.md's section of the version")):
        sub.add_parser(name, help=what).add_argument("version")
    args = parser.parse_args(argv)
    if args.command == "archive":
        out = write_archive(args.out.resolve())
        print(f"wrote {out} ({out.stat().st_size / 1024:.0f} KiB)")
        return 0
    if args.command == "notes":
        text = notes(args.version)
        print(text or f"CHANGELOG.md has no section '## {args.version}'")
        return 0 if text else 1
    if args.command == "check":
        found = problems(args.version)
        print("\n".join(f"- {p}" for p in found) if found else f"{args.version} can be released from here")
        return 1 if found else 0
    return tag(args.version)


if __name__ == "__main__":
    raise SystemExit(main())
