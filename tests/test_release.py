"""`make release` (tools/release.py): what it refuses, and a release made end to end in a scratch copy of
this working tree (its own git repository): the archive, the version in the setup cells and badges, one
commit and the tag."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import zipfile

import pytest
from test_new_lesson import scratch_copy

from tools import release, series


def git(repo, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path):
    """A scratch copy of this working tree, committed in a repository of its own that already holds the
    current release's tag (as the published repository does)."""
    repo = scratch_copy(tmp_path / "repo")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "scratch")
    git(repo, "tag", series.TAG)
    return repo


def next_version() -> str:
    major, minor, patch = release.as_tuple(series.VERSION)
    return f"{major}.{minor}.{patch + 1}"


def test_a_version_must_be_three_numbers():
    assert release.problems("1.2") == ["'1.2' is not a version: write three numbers, such as 1.2.0"]
    assert release.problems("v1.2.0")[0].startswith("'v1.2.0' is not a version")


def test_a_release_is_refused_with_changes_an_old_version_an_existing_tag_or_no_changelog(repo):
    (repo / "README.md").write_text("changed\n", encoding="utf-8")
    found = release.problems(series.VERSION, repo)
    assert any("the work tree has changes" in p for p in found)
    assert any(f"is not above the current release {series.VERSION}" in p for p in found)
    assert any(f"the tag {series.TAG} exists already" in p for p in found)
    version = next_version()  # above the current one, but the changelog says nothing of it yet
    assert any(f"CHANGELOG.md has no section '## {version}'" in p for p in release.problems(version, repo))


def test_the_notes_are_the_changelogs_section_of_the_version(tmp_path):
    changelog = tmp_path / "CHANGELOG.md"
    changelog.write_text("# Changelog\n\n## 2.1.0\n\nNew lesson 16.\n\n## 2.0.0\n\nRenumbered.\n", encoding="utf-8")
    assert release.notes("2.1.0", changelog) == "New lesson 16."
    assert release.notes("2.0.0", changelog) == "Renumbered."
    assert release.notes("2.2.0", changelog) == ""


@pytest.mark.slow
def test_a_release_writes_the_archive_and_the_version_commits_once_and_tags(repo):
    version = next_version()
    changelog = repo / "CHANGELOG.md"
    text = changelog.read_text(encoding="utf-8")
    changelog.write_text(text.replace("\n## ", f"\n## {version}\n\nA typo fixed.\n\n## ", 1), encoding="utf-8")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qam", "changelog")
    done = subprocess.run([sys.executable, "-m", "tools.release", "tag", version], cwd=repo, capture_output=True,
                          text=True, env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                                          "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
                                          "PATH": "/usr/bin:/bin", "HOME": str(repo)})
    assert done.returncode == 0, done.stdout + done.stderr
    tag = f"v{version}"
    assert git(repo, "status", "--porcelain") == ""  # everything it wrote is in the release commit
    assert git(repo, "log", "-1", "--format=%s") == f"Release {version}"
    assert git(repo, "rev-parse", f"{tag}^{{commit}}") == git(repo, "rev-parse", "HEAD")
    assert git(repo, "tag", "-l", "--format=%(contents:body)", tag) == "A typo fixed."
    assert f'VERSION = "{version}"' in (repo / "tools" / "series.py").read_text(encoding="utf-8")
    setup = (repo / "notebooks" / "zh" / "solutions" / "01_devices_solutions.ipynb").read_text(encoding="utf-8")
    assert f"raw.githubusercontent.com/{series.REPO}/{tag}/{series.HELPERS_ARCHIVE}" in setup
    assert f"/blob/{tag}/notebooks/zh/solutions/01_devices_solutions.ipynb" in setup
    assert not re.search(rf"/blob/{re.escape(series.TAG)}/", setup)
    archive = (repo / series.HELPERS_ARCHIVE).read_bytes()
    assert archive == release.archive_bytes(release.files_at(tag, repo))
    with zipfile.ZipFile(io.BytesIO(archive)) as zf:
        assert zf.read("utils.py") == (repo / "utils.py").read_bytes()
