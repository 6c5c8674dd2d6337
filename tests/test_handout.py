"""`make handout` (tools/handout.py): the lessons for students, in a folder and a zip, without the
solutions.

The quick tests read the folder: every lesson of both editions and no solutions, the helpers bundled
(the lessons' own setup cells look for series_helpers/ first), no outputs, the predict moments'
answers folded, every link leading somewhere that exists, the zip holding the same files, and the
teacher's pack beside it. The slow one (`alone`: `make test-alone`) builds the hand-out in a scratch
folder and runs its lessons there under nbval (lax: the hand-out's cells have no outputs to
compare), as a student's Jupyter would (the kernel working in the notebook's folder), with
GPU_LESSONS_URL unset and no network: tests/handout_offline/sitecustomize.py, on the kernels'
PYTHONPATH, refuses every connection to another host, so a lesson that tried to download its helpers
would fail.
"""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from test_bootstrap import kernel_env, run_python, setup_cell_source

from tools import handout, i18n, release, sync_notebooks
from tools.series import GITHUB_URL, ROOT, lessons, read

OFFLINE = ROOT / "tests" / "handout_offline"
SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"
LESSONS = lessons()
SETUP = setup_cell_source()
EDITIONS = {"": sync_notebooks.ENGLISH, "zh/": sync_notebooks.CHINESE}


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("handout") / "handout"
    handout.write(out)
    return out


def files_in(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_the_handout_holds_every_lesson_of_both_editions_the_helpers_and_no_solutions(folder):
    names = [lesson.path.name for lesson in LESSONS]
    helpers = release.archive_files()  # this checkout's, as the lessons are: what its release would attach
    expected = {"README.md", "requirements.txt", "LICENSE"} | set(names)
    for ed in EDITIONS:
        expected |= {f"{ed}README.md", f"{ed}series-helpers.zip"} | {f"{ed}series_helpers/{n}" for n in helpers}
        expected |= {f"{ed}{n}" for n in names}
        assert all((folder / f"{ed}series_helpers/{n}").read_bytes() == data for n, data in helpers.items())
        assert (folder / f"{ed}series-helpers.zip").read_bytes() == release.archive_bytes()
    assert files_in(folder) == expected
    assert not [name for name in files_in(folder) if "solution" in name.lower()]


def test_each_lesson_is_the_repositorys_with_the_handouts_links(folder):
    """The links and folded answers of markdown cells change, and the code cells' outputs go: the setup cell
    (it finds series_helpers/ beside the notebook), the answer cells and checks stay."""
    for ed in EDITIONS:
        for lesson in LESSONS:
            original = read(lesson.path if not ed else i18n.zh_path(lesson.path))
            given = read(folder / ed / lesson.path.name)
            assert [(c.get("id"), c.cell_type) for c in given.cells] == [(c.get("id"), c.cell_type)
                                                                         for c in original.cells]
            for before, after in zip(original.cells, given.cells, strict=True):
                if after.cell_type == "code":
                    assert after.source == before.source and after.outputs == [], (ed, after.id)
                    assert after.execution_count is None, (ed, after.id)
            header = next(c for c in given.cells if c.get("id") == "header").source
            saved = sync_notebooks.SAVED_OUTPUTS["zh" if ed else "en"]
            assert saved in next(c for c in original.cells if c.get("id") == "header").source
            assert saved not in header  # the lessons come without outputs: the header says nothing of them
            footer = next(c for c in given.cells if c.get("id") == "footer").source
            ref = handout.version() or "main"  # the checkout's commit, as the README names it
            solutions = f"{GITHUB_URL}/blob/{ref}/notebooks/{ed}solutions/{lesson.solutions.name}"
            assert f"({solutions})" in footer, footer


def test_every_predict_moments_answer_is_folded_and_the_badges_open_the_handouts_commit(folder):
    commit = handout.version()
    for ed in EDITIONS:
        code = "zh" if ed else "en"
        for lesson in LESSONS:
            cells = read(folder / ed / lesson.path.name).cells
            for i, cell in enumerate(cells):
                if cell.cell_type != "markdown" or not handout.PREDICT[code].search(cell.source):
                    continue
                if handout.EXERCISE.search(cell.source):  # a prediction asked by an exercise: its check answers it
                    continue
                answer = next(c for c in cells[i + 1:] if c.cell_type == "markdown")
                assert answer.source.startswith(f"<details><summary>{handout.REVEAL[code]}</summary>"), (ed, cell.id)
                hidden = answer.source[:answer.source.index("</details>")]
                assert "\n#" not in hidden, (ed, answer.id)  # folded up to the next heading, never beyond it
            header = cells[0].source
            if commit:
                assert f"/blob/{commit}/" in header and "/blob/main/" not in header, (ed, lesson.path.name)


def test_fold_reveals_leaves_what_follows_the_answer_in_view_and_skips_exercises():
    cells = [nbformat.v4.new_markdown_cell("Look.\n\n**Predict:** what prints?"), nbformat.v4.new_code_cell("1"),
             nbformat.v4.new_markdown_cell("It prints 1.\n\nWhy: ...\n\n## 2. Next\n\nMore."),
             nbformat.v4.new_markdown_cell("### Exercise 1\n\n**Predict:** and now?"), nbformat.v4.new_code_cell("2"),
             nbformat.v4.new_markdown_cell("### Exercise 2")]
    handout.fold_reveals(cells, handout.EDITIONS[0])
    summary = f"<details><summary>{handout.REVEAL['en']}</summary>"
    assert cells[2].source == f"{summary}\n\nIt prints 1.\n\nWhy: ...\n\n</details>\n\n## 2. Next\n\nMore."
    assert cells[5].source == "### Exercise 2"
    handout.fold_reveals(cells, handout.EDITIONS[0])  # folding again changes nothing
    assert cells[2].source.count("<details>") == 1


# --- the teacher's pack -----------------------------------------------------------------------------

def test_the_teachers_pack_holds_the_solutions_of_both_editions_and_the_tally_script(folder):
    pack = folder.with_name("handout-teacher")
    names = {f"{ed}solutions/{lesson.solutions.name}" for ed in EDITIONS for lesson in LESSONS}
    assert files_in(pack) == names | {"README.md", "zh/README.md", "tally_checks.py"}
    solution = read(pack / "solutions" / LESSONS[3].solutions.name)
    assert any(c.get("outputs") for c in solution.cells if c.cell_type == "code")  # the worked outputs stay
    with zipfile.ZipFile(folder.with_name("handout-teacher.zip")) as zf:
        assert {n.removeprefix("handout-teacher/") for n in zf.namelist()} == files_in(pack)
    for ed in EDITIONS:
        text = (pack / ed / "README.md").read_text(encoding="utf-8")
        assert "tally_checks.py returned/" in text
        assert handout.version_text(handout.EDITIONS[0 if not ed else 1]) in text
        for link in LINK.findall(text):
            assert link.startswith("http") or (pack / ed / link).resolve().is_file(), (ed, link)


LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_every_link_in_the_handout_leads_to_one_of_its_files_or_to_the_web(folder):
    readmes = {ed: (folder / ed / "README.md").read_text(encoding="utf-8") for ed in EDITIONS}
    anchors = {ed: {i18n.slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}
               for ed, text in readmes.items()}
    contents_links = 0
    for path in sorted(folder.rglob("*.ipynb")):
        ed = "zh/" if path.parent.name == "zh" else ""
        for cell in read(path).cells:
            if cell.cell_type != "markdown":
                continue
            for target in LINK.findall(cell.source):
                if re.match(r"^(https?|data):", target):
                    continue
                file, _, anchor = target.partition("#")
                resolved = (path.parent / file).resolve()
                assert resolved.is_file() and resolved.is_relative_to(folder), f"{path.name}: broken link {target}"
                if resolved.name == "README.md":
                    assert anchor in anchors[ed], f"{path.name}: {target} names no heading of {ed}README.md"
                    contents_links += 1
    assert contents_links == 2 * 2 * len(LESSONS)  # the navigation at the top and the bottom, both editions
    for ed, text in readmes.items():  # the README lists every lesson and says how to answer and check
        for lesson in LESSONS:
            assert f"]({lesson.path.name})" in text, (ed, lesson.path.name)
        assert "series_helpers/" in text and "hint(" in text and "jupyter lab" in text
        # Colab and Kaggle can use the bundled helpers too; the CPU-only wheel for Linux laptops; the version
        assert 'os.environ["GPU_LESSONS_URL"] = "file:///content/series-helpers.zip"' in text, ed
        # the torch release the outputs were made with, pinned as lesson 15 advises, for a CPU and a GPU
        for index in ("cpu", "cu126"):
            assert f'pip install "torch=={handout.TORCH}" --index-url https://download.pytorch.org/whl/{index}' in text
        assert text.index("--index-url") < text.rindex("pip install -r"), ed
        assert handout.version_text(handout.EDITIONS[list(EDITIONS).index(ed)]) in text, ed


def test_the_handout_names_the_checkouts_commit_and_links_to_it(monkeypatch):
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    assert handout.version() == (commit or None)
    if commit:
        assert f"[`{commit}`]({GITHUB_URL}/tree/{commit})" in handout.version_text(handout.EDITIONS[0])
        assert handout.github_url(ROOT / "README.md").startswith(f"{GITHUB_URL}/blob/{commit}/")
    monkeypatch.setattr(handout, "version", lambda: None)  # outside git: unknown, and the main branch
    assert [handout.version_text(ed) for ed in handout.EDITIONS] == [handout.VERSION[ed.code][1]
                                                                     for ed in handout.EDITIONS]
    assert "unknown" in handout.version_text(handout.EDITIONS[0])
    assert handout.github_url(ROOT / "README.md", "lessons") == f"{GITHUB_URL}/blob/main/README.md#lessons"


def test_the_zip_holds_the_same_files(folder):
    archive = folder.with_name("handout.zip")
    with zipfile.ZipFile(archive) as zf:
        names = {n.removeprefix("handout/"): zf.read(n) for n in zf.namelist()}
    assert set(names) == files_in(folder)
    assert all(names[n] == (folder / n).read_bytes() for n in names)


def test_the_handout_is_written_anew_and_never_over_a_folder_of_other_files(tmp_path, folder):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(SystemExit, match="no hand-out"):
        handout.write(mine)
    assert (mine / "notes.txt").read_text() == "keep me"


# --- the hand-out's setup cell -----------------------------------------------------------------

def test_the_lessons_setup_cell_takes_the_bundled_helpers_without_any_network(tmp_path):
    for name in ("utils.py", "exercises/__init__.py"):
        (tmp_path / "series_helpers" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "series_helpers" / name).write_text("BUNDLED = True\n")
    code = SETUP + "\nimport exercises, utils; print(utils.BUNDLED, exercises.BUNDLED, utils.__file__)"
    run = run_python(code, tmp_path, None)  # no GPU_LESSONS_URL; the release's URL is unreachable here anyway
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", "True", str(tmp_path / "series_helpers" / "utils.py")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["series_helpers"]  # nothing written beside


def test_without_the_bundled_helpers_the_setup_cell_fetches_them(tmp_path):
    url = release.write_archive(tmp_path / "release" / "series-helpers.zip").as_uri()
    run = run_python(SETUP + "\nimport utils; print(utils.try_gpu())", tmp_path / "release", url)
    assert run.returncode == 0 and run.stdout.strip() in ("cpu", "cuda:0", "mps:0"), run.stderr


def test_the_offline_guard_refuses_other_hosts_and_lets_this_machine_through():
    code = ("import socket\nserver = socket.create_server(('127.0.0.1', 0))\n"
            "socket.create_connection(server.getsockname()).close()\n"
            "try:\n    socket.create_connection(('192.0.2.1', 80), timeout=5)\nexcept OSError as err:\n"
            "    print(type(err).__name__)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env=kernel_env(None) | {"PYTHONPATH": str(OFFLINE)})
    assert run.returncode == 0 and run.stdout.strip() == "NetworkBlocked", run.stdout + run.stderr


# --- every lesson of the hand-out, run in it without network ------------------------------------

@pytest.mark.alone
def test_the_handouts_lessons_run_top_to_bottom_in_its_folder_without_network(tmp_path):
    out = tmp_path / "handout"
    handout.write(out)
    notebooks = [lesson.path.name for lesson in LESSONS] + ["zh/03_copies_between_devices.ipynb"]
    env = kernel_env(None) | {"PYTHONPATH": str(OFFLINE)}  # no GPU_LESSONS_URL, no network
    # The hand-out's cells have no stored outputs to compare (strict nbval compares the repository's own
    # outputs): every cell must run, without an error and without network.
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax",
                          "--nbval-current-env", "--nbval-sanitize-with", str(SANITIZE), *notebooks],
                         cwd=out, env=env, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and " failed" not in run.stdout, run.stdout[-2000:]
