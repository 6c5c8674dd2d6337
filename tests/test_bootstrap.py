"""A lesson opened alone (Colab, Kaggle, a download) fetches the series' helpers and runs.

The setup cell downloads the archive of helpers of the release it names (tools/release.py). The
network is not reachable here, so GPU_LESSONS_URL points the very same code at that archive built
from this checkout, as a file:// URL; everything else is the real thing: an empty folder holding
only the notebook, a fresh kernel, every cell executed. In a checkout the cell finds the helpers
above the notebook's folder and downloads nothing. Running every
lesson a second time takes as long as the nbval suite itself, so those tests carry the `alone`
mark: `make test` runs the quick checks, `make test-alone` (and CI) the full runs.

When the fetch fails, the cell's error says which failure it was and what to do. The tests
provoke each on this machine, without the internet: a local server that answers 404, a closed
local port, a local server that never answers, and a host name in the reserved `.invalid` domain,
which no resolver may resolve.
"""

from __future__ import annotations

import ast
import http.server
import io
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import threading
import tokenize
import unicodedata
import zipfile
from pathlib import Path

import nbformat
import pytest

from tools import execute, release
from tools.i18n import ZH
from tools.series import HELPERS_ARCHIVE, HELPERS_URL, ROOT, TAG, VERSION, all_notebooks, lessons, read

LESSONS = lessons()


@pytest.fixture(scope="session")
def archive(tmp_path_factory):
    """The archive of helpers a release of this checkout would attach, as a file:// URL."""
    return release.write_archive(tmp_path_factory.mktemp("release") / "series-helpers.zip").as_uri()


def kernel_env(url: str | None) -> dict[str, str]:
    """The environment a reader's kernel would have, GPU_LESSONS_URL set to url (None: unset, as on a
    reader's machine; tests/test_handout.py); no proxy, so that the cell reaches this machine's test
    servers itself."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "GPU_LESSONS_URL") and not k.lower().endswith("_proxy")}
    if url is not None:
        env["GPU_LESSONS_URL"] = url
    return env


def setup_cell_source(path=LESSONS[0].path) -> str:
    return next(c.source for c in read(path).cells if c.get("id") == "setup")


def run_python(code: str, cwd, url: str | None) -> subprocess.CompletedProcess:
    env = kernel_env(url) | {"PYTHONIOENCODING": "utf-8"}  # the Chinese messages, on Windows too
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, encoding="utf-8",
                          env=env, timeout=120)


@pytest.mark.alone
@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.path.name for lesson in LESSONS])
def test_a_lesson_opened_alone_in_an_empty_folder_fetches_its_helpers_and_runs(tmp_path, lesson, archive):
    alone = tmp_path / lesson.path.name
    shutil.copy(lesson.path, alone)
    nb = nbformat.read(alone, as_version=4)
    execute.execute(nb, tmp_path, timeout=300, env=kernel_env(archive))
    assert sorted(p.name for p in tmp_path.iterdir()) == [lesson.path.name], "the setup cell wrote beside the notebook"


def test_the_setup_cell_in_an_empty_folder_makes_the_helpers_and_the_checks_importable(tmp_path, archive):
    code = "\nimport exercises, utils; print(utils.__file__, exercises.__file__, utils.try_gpu())"
    run = run_python(setup_cell_source() + code, tmp_path, archive)
    assert run.returncode == 0, run.stderr
    fetched, checks, device = run.stdout.split()
    assert open(fetched).read() == (ROOT / "utils.py").read_text()
    assert Path(checks).parent == Path(fetched).parent / "exercises"
    assert device in ("cpu", "cuda:0", "mps:0")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("folder", ["notebooks", "notebooks/solutions", "notebooks/zh/solutions"])
def test_in_a_checkout_the_setup_cell_takes_its_helpers_and_downloads_nothing(folder):
    """No GPU_LESSONS_URL: the notebooks of a clone (jupyter lab, plain pytest) use the clone's helpers."""
    run = run_python(setup_cell_source() + "\nimport exercises, utils; print(utils.__file__, exercises.__file__)",
                     ROOT / folder, None)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [str(ROOT / "utils.py"), str(ROOT / "exercises" / "__init__.py")]


def test_gpu_lessons_url_wins_over_the_checkouts_helpers(archive):
    run = run_python(setup_cell_source() + "\nimport utils; print(utils.__file__)", ROOT / "notebooks", archive)
    assert run.returncode == 0, run.stderr
    assert Path(run.stdout.strip()).parent != ROOT


def test_the_archive_holds_the_helpers_the_checks_and_the_chinese_texts_and_nothing_else(tmp_path):
    with zipfile.ZipFile(io.BytesIO(release.archive_bytes())) as zf:
        names = zf.namelist()
        zf.extractall(tmp_path)
    assert names == sorted(names) and "utils.py" in names and "i18n/zh/messages.json" in names
    assert {n for n in names if n.startswith("exercises/")} == {
        f"exercises/{p.name}" for p in (ROOT / "exercises").glob("*.py")}
    assert set(names) - {n for n in names if n.startswith("exercises/")} == {"utils.py", "i18n/zh/messages.json",
                                                                             "LICENSE"}
    assert release.archive_bytes() == release.archive_bytes()  # the same files make the same bytes
    # On its own, in the Chinese edition: the checks import the helpers, and speak Chinese.
    code = "import exercises; exercises.hint('copies.to-numpy')"
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, encoding="utf-8",
                         env=kernel_env(None) | {"GPU_LESSONS_LANGUAGE": "zh", "PYTHONIOENCODING": "utf-8"},
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert not run.stdout.isascii() and run.stderr == "", run.stdout + run.stderr


def test_a_readers_own_utils_py_survives_and_is_not_the_one_imported(tmp_path, archive):
    mine = "# the reader's own helpers\ndef mine():\n    return 42\n"
    (tmp_path / "utils.py").write_text(mine)
    run = run_python(setup_cell_source() + "\nimport utils; print(utils.__file__); print(hasattr(utils, 'try_gpu'))",
                     tmp_path, archive)
    assert run.returncode == 0, run.stderr
    imported, has_series_helpers = run.stdout.split()
    assert (tmp_path / "utils.py").read_text() == mine
    assert imported != str(tmp_path / "utils.py") and has_series_helpers == "True"


@pytest.mark.slow
def test_worker_processes_started_by_spawning_import_the_fetched_utils(tmp_path, archive):
    """DataLoader workers on macOS and Windows are spawned: they must find utils.py too."""
    code = setup_cell_source() + (
        "\nimport multiprocessing as mp, utils"
        "\nif __name__ == '__main__':"
        "\n    with mp.get_context('spawn').Pool(1) as pool:"
        "\n        print(pool.apply(utils.try_gpu))"
    )
    (tmp_path / "main.py").write_text(code)
    run = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, capture_output=True, text=True,
                         env=kernel_env(archive), timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() in ("cpu", "cuda:0", "mps:0")


# --- when the fetch fails: which failure, and what to do ----------------------------------------

ZH_SETUP_CELL = ZH / "00_check_your_setup.ipynb"
ERROR = {  # per edition: how the error starts, and the advice for each failure
    "en": {
        "start": "RuntimeError: Could not fetch",
        "missing": "names a release of the series that the repository does not hold",
        "unreachable": "Your network may block this host: point GPU_LESSONS_URL at a mirror",
        "offline": "switch the internet on (Kaggle: Settings > Internet on), run this cell again",
        "other": "Check that URL, or point GPU_LESSONS_URL at a series-helpers.zip you have.",
    },
    "zh": {
        "start": "RuntimeError: 无法下载",
        "missing": "这个笔记本指定的系列版本在仓库中不存在",
        "unreachable": "你的网络可能屏蔽了这个主机。请把 GPU_LESSONS_URL 指向镜像",
        "offline": "请打开网络（Kaggle：Settings > Internet on），再运行一次这个单元格",
        "other": "请检查这个 URL，或者把 GPU_LESSONS_URL 指向你已有的 series-helpers.zip。",
    },
}


def failed_fetch(edition: str, url: str, tmp_path, source: str | None = None) -> str:
    """Run the edition's setup cell against url; return the last line of its error, checked to be one line that
    names the URL and to be the cell's own RuntimeError (from None: no traceback of urllib's error above it)."""
    source = source or setup_cell_source(ZH_SETUP_CELL if edition == "zh" else LESSONS[0].path)
    run = run_python(source, tmp_path, url)
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(f"{ERROR[edition]['start']} {url}"), run.stderr
    assert run.stderr.count('File "') == 1 and "During handling" not in run.stderr, run.stderr  # one frame: the cell's
    assert list(tmp_path.iterdir()) == []
    return last


def advice_in(last: str, edition: str) -> list[str]:
    return [kind for kind in ("missing", "unreachable", "offline", "other") if ERROR[edition][kind] in last]


@pytest.fixture
def answers_404():
    """A local web server that holds no file: every request gets 404 Not Found, as a release that does not exist."""
    class NotFound(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_error(404)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v0.0.0/series-helpers.zip"
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture
def closed_port():
    """A port on 127.0.0.1 that nothing listens on: the connection is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/series-helpers.zip"


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_a_release_the_host_does_not_hold_says_to_open_the_lesson_again_from_the_repository(
        tmp_path, answers_404, edition):
    last = failed_fetch(edition, answers_404, tmp_path)
    assert "HTTP Error 404: Not Found" in last and advice_in(last, edition) == ["missing"], last


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_a_name_that_does_not_resolve_says_to_switch_the_internet_on(tmp_path, edition):
    last = failed_fetch(edition, "http://helpers.invalid/series-helpers.zip", tmp_path)
    assert advice_in(last, edition) == ["offline"], last


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_a_refused_connection_says_the_network_may_block_the_host_and_how_to_point_at_a_mirror(
        tmp_path, closed_port, edition):
    last = failed_fetch(edition, closed_port, tmp_path)
    assert advice_in(last, edition) == ["unreachable"], last
    assert "os.environ['GPU_LESSONS_URL'] = 'file:///content/series-helpers.zip'" in last
    assert "export GPU_LESSONS_URL" in last


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_a_host_that_never_answers_times_out_and_says_the_network_may_block_it(tmp_path, edition):
    """A local server that takes the connection and never answers. To keep the test fast, the cell's timeout of
    30 seconds is replaced by half a second in this test only; everything else is the cell as readers get it."""
    source = setup_cell_source(ZH_SETUP_CELL if edition == "zh" else LESSONS[0].path)
    assert source.count("timeout=30)") == 1
    with socket.create_server(("127.0.0.1", 0)) as silent:  # listens; the system accepts, nobody answers
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/series-helpers.zip"
        last = failed_fetch(edition, url, tmp_path, source.replace("timeout=30)", "timeout=0.5)"))
    assert "timed out" in last and advice_in(last, edition) == ["unreachable"], last


@pytest.fixture
def hangs_up():
    """A local server that takes each connection and drops it at once without a word (a reset where the
    system sends one): what a filtered network does to a blocked host."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:  # the server was closed: the test is over
                return
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    server.close()
    thread.join(timeout=5)


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_a_connection_reset_by_the_network_says_it_may_block_the_host(tmp_path, hangs_up, edition):
    last = failed_fetch(edition, f"http://127.0.0.1:{hangs_up}/series-helpers.zip", tmp_path)
    assert advice_in(last, edition) == ["unreachable"], last


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_a_broken_tls_handshake_says_the_network_may_block_the_host(tmp_path, answers_404, edition):
    """https:// to a server that speaks plain HTTP: the TLS handshake fails with an SSLError, as where a
    network intercepts or cuts the connection to a blocked host."""
    last = failed_fetch(edition, answers_404.replace("http://", "https://"), tmp_path)
    assert "SSL" in last and advice_in(last, edition) == ["unreachable"], last


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_any_other_failure_names_the_url_and_the_reason(tmp_path, edition):
    url = (tmp_path / "nowhere" / "series-helpers.zip").as_uri()
    last = failed_fetch(edition, url, tmp_path)
    assert advice_in(last, edition) == ["other"], last
    assert re.search(r"\[(Errno|WinError) \d+\]", last), last  # the system's reason, as it words it


def columns(line: str) -> int:
    """The width of a line in an editor's columns: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def too_wide(source: str) -> list[str]:
    """The lines wider than 120 columns, but the release URL's own line: a URL cannot be split (ruff's E501 lets it
    pass too)."""
    return [line for line in source.splitlines() if columns(line) > 120 and line.strip() != f'"{HELPERS_URL}",']


def test_the_setup_cell_is_short_formatted_and_leaves_only_modules_its_url_and_its_folder(tmp_path, archive):
    source = setup_cell_source()
    assert len(source.splitlines()) <= 36 and ";" not in source and "exec(" not in source and "eval(" not in source
    assert too_wide(source) == []
    ruff = subprocess.run([sys.executable, "-m", "ruff", "format", "--diff", "--stdin-filename", "setup.py", "-"],
                          input=source + "\n", capture_output=True, text=True)
    assert ruff.returncode == 0, ruff.stdout
    run = run_python(f"before = set(dir())\n{source}\nprint(sorted(set(dir()) - before - {{'before'}}))",
                     tmp_path, archive)
    assert run.returncode == 0, run.stderr
    names = ["Path", "answer", "folder", "here", "io", "os", "socket", "ssl", "sys", "tempfile", "url", "urllib",
             "zipfile"]
    assert ast.literal_eval(run.stdout.strip()) == names


def test_every_notebook_has_the_same_collapsed_setup_cell_pinned_to_the_commit():
    for path in all_notebooks():
        cell = next(c for c in read(path).cells if c.get("id") == "setup")
        assert cell.source == setup_cell_source(), path.name
        assert cell.metadata.get("cellView") == "form" and cell.metadata["jupyter"]["source_hidden"], path.name
    assert f'"{HELPERS_URL}"' in setup_cell_source() and HELPERS_URL.endswith(f"/{TAG}/{HELPERS_ARCHIVE}")


def test_the_setup_cell_never_installs_or_imports_torch():
    source = setup_cell_source()
    assert not re.search(r"import torch|\bpip\b|install", source)


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True)


def test_the_release_the_notebooks_name_holds_the_archive_of_its_own_helpers_and_is_tagged():
    """A notebook opened alone fetches the archive of release VERSION as its tag holds it, and its badges open
    the tag's notebooks. The release commit (the one that wrote `VERSION` into tools/series.py, as `make release`
    does) must hold the archive of its own helpers; where this clone carries tags, the tag must name that commit.
    A clone made without tags (`git clone --no-tags`, some CI checkouts) still checks the commit."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (a downloaded archive): its history cannot be read here")
    line = f'VERSION = "{VERSION}"'
    commits = git("log", "--format=%H", "--reverse", "-S", line, "--", "tools/series.py").stdout.decode().split()
    if not commits and git("rev-parse", "--is-shallow-repository").stdout.decode().strip() == "true":
        pytest.skip(f"a shallow clone that does not reach the commit of release {VERSION}")
    assert commits, f"no commit in this branch's history wrote {line} into tools/series.py"
    released = commits[0]
    archive = git("show", f"{released}:{HELPERS_ARCHIVE}")
    assert archive.returncode == 0, f"release {VERSION}'s commit {released[:7]} holds no {HELPERS_ARCHIVE}"
    assert archive.stdout == release.archive_bytes(release.files_at(released)), \
        f"release {VERSION}'s archive (commit {released[:7]}) is not the archive of its own helpers"
    if git("tag", "--list").stdout.strip():
        tagged = git("rev-parse", "--verify", "--quiet", f"refs/tags/{TAG}^{{commit}}")
        assert tagged.returncode == 0, f"tools/series.py names release {VERSION}, but this repository has no tag {TAG}"
        assert tagged.stdout.decode().strip() == released, \
            f"the tag {TAG} is not release {VERSION}'s commit {released[:7]}"


# --- the Chinese edition: the same cell, speaking Chinese ------------------------------------

ZH_ALONE = [ZH / "00_check_your_setup.ipynb", ZH / "03_copies_between_devices.ipynb"]


@pytest.mark.alone
@pytest.mark.parametrize("path", ZH_ALONE, ids=[f"zh/{p.name}" for p in ZH_ALONE])
def test_a_chinese_lesson_opened_alone_in_an_empty_folder_fetches_its_helpers_and_runs(tmp_path, path, archive):
    alone = tmp_path / path.name
    shutil.copy(path, alone)
    nb = nbformat.read(alone, as_version=4)
    execute.execute(nb, tmp_path, timeout=300, env=kernel_env(archive))
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name], "the setup cell wrote beside the notebook"


def strings_of(source: str) -> tuple[str, list[str], list[str]]:
    """The cell's code with every string blanked, then its messages (the values of `advice` and the parts of the
    error it raises) and its other strings; implicitly joined literals are one string, however they are split."""
    tree = ast.parse(source)
    in_messages = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["advice"]:
            in_messages |= {id(n) for n in ast.walk(node.value)}
        elif isinstance(node, ast.Raise):
            in_messages |= {id(n) for n in ast.walk(node.exc)}
    messages, others = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            (messages if id(node) in in_messages else others).append(node.value)
            node.value = "..."
    return ast.dump(tree), messages, others


def test_every_chinese_notebook_has_the_chinese_setup_cell_with_the_same_code(tmp_path):
    english = setup_cell_source()
    zh = setup_cell_source(ZH_SETUP_CELL)
    for path in sorted(ZH.rglob("*.ipynb")):
        cell = next(c for c in read(path).cells if c.get("id") == "setup")
        assert cell.source == zh, path.name
        assert cell.metadata.get("cellView") == "form" and cell.metadata["jupyter"]["source_hidden"], path.name
    # The Chinese cell chooses the language of the helpers' messages, one line after the imports (the helpers
    # read GPU_LESSONS_LANGUAGE: i18n/language.py); besides it, only the comments and the messages differ from
    # the English cell: every message, and every comment, speaks Chinese.
    chooses = 'os.environ["GPU_LESSONS_LANGUAGE"] = "zh"'
    lines = zh.splitlines()
    assert lines[3].startswith(chooses + "  # ") and chooses not in english
    (en_code, en_messages, en_others), (zh_code, zh_messages, zh_others) = \
        strings_of(english), strings_of("\n".join(lines[:3] + lines[4:]))
    assert zh_code == en_code and zh_others == en_others and "GPU_LESSONS_URL" in zh_others
    assert len(zh_messages) == 7
    assert all(a.isascii() and not b.isascii() for a, b in zip(en_messages, zh_messages, strict=True))
    zh_comments = [t.string for t in tokenize.generate_tokens(io.StringIO(zh).readline) if t.type == tokenize.COMMENT]
    assert len(zh_comments) == 9 and not any(c.isascii() for c in zh_comments)
    assert len(zh.splitlines()) <= 37 and too_wide(zh) == []
    ruff = subprocess.run([sys.executable, "-m", "ruff", "format", "--diff", "--stdin-filename", "setup.py", "-"],
                          input=zh + "\n", capture_output=True, text=True)
    assert ruff.returncode == 0, ruff.stdout
