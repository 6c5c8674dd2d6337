"""The website (make site) in a real browser: headless Chromium, driven by Playwright.

`make test-site` builds the site from the stored outputs, then runs this file. Each page is
served from localhost and loaded for real. It also builds build/site-fixture/, never published: the
same site with the fixture record of tests/fixtures/gpu-runs/ in place of gpu-runs/, where the
recorded GPU outputs (site/gpu_outputs.py) are checked. The machine has no internet, so requests to other
hosts (the Colab, Kaggle and GitHub badge images) are answered here with a stand-in image and
listed; every page, link and image of the site itself must resolve.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import json
import os
import re
import sys
import threading
from urllib.parse import urldefrag, urljoin, urlparse

import pytest

from tools.i18n import DOCUMENTS
from tools.series import ROOT

pytestmark = pytest.mark.site

SITE = ROOT / "build" / "site"
FIXTURE_SITE = ROOT / "build" / "site-fixture"  # make test-site: GPU_RUNS_DIR=tests/fixtures/gpu-runs
FIXTURE_RUNS = ROOT / "tests" / "fixtures" / "gpu-runs"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
STAND_IN = b'<svg xmlns="http://www.w3.org/2000/svg" width="88" height="20"><rect width="88" height="20"/></svg>'
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def serve(folder):
    if not (folder / "index.html").exists():
        pytest.fail(f"{folder.relative_to(ROOT)} is missing: run `make test-site`, which builds it first")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.RequestHandlerClass.log_message = lambda *args: None
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


@pytest.fixture(scope="module")
def server():
    yield from serve(SITE)


@pytest.fixture(scope="module")
def fixture_server():
    """The test build with the fixture record (build/site-fixture/)."""
    yield from serve(FIXTURE_SITE)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.outside = []

    def route(r):
        if urlparse(r.request.url).hostname == "127.0.0.1":
            r.continue_()
        else:
            page.outside.append(r.request.url)
            r.fulfill(status=200, content_type="image/svg+xml", body=STAND_IN)

    page.route("**/*", route)
    page.errors = []
    page.on("console", lambda m: page.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: page.errors.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: page.errors.append(f"failed request: {r.url}"))
    page.on("response", lambda r: page.errors.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    yield page
    context.close()


PAGES = sorted(p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html")) if SITE.exists() else []
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
LESSON_PAGES = [p for p in PAGES if p.startswith("notebooks/")]


def test_the_site_has_a_page_for_every_notebook():
    from tools.i18n import zh_path
    from tools.series import all_notebooks

    english = {p.relative_to(ROOT).with_suffix(".html").as_posix() for p in all_notebooks()}
    chinese = {zh_path(p).relative_to(ROOT).with_suffix(".html").as_posix() for p in all_notebooks()}
    assert english | chinese <= set(PAGES), (english | chinese) - set(PAGES)
    documents = {f"{name}{lang}.html" for name in DOCUMENTS for lang in ("", ".zh-CN")}
    assert {"index.html"} | documents <= set(PAGES), ({"index.html"} | documents) - set(PAGES)


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_without_errors_and_its_links_and_images_resolve(page, server, path):
    url = server + path
    page.goto(url, wait_until="load")
    assert not page.errors, page.errors
    for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))"):
        target, fragment = urldefrag(urljoin(url, href))
        if urlparse(target).hostname != "127.0.0.1" or href.startswith("mailto:"):
            continue
        local = SITE / urlparse(target).path.lstrip("/")
        local = local / "index.html" if local.is_dir() else local
        assert local.exists(), f"{path}: broken link {href}"
        if fragment and local.suffix == ".html":
            assert f'id="{fragment}"' in local.read_text(encoding="utf-8"), f"{path}: no anchor for {href}"
    images = page.eval_on_selector_all(
        "img", "els => els.map(e => [e.getAttribute('src'), e.complete && e.naturalWidth > 0])")
    for src, shown in images:
        assert shown, f"{path}: image {src} did not load"
    # Every page switches language: to its twin (a lesson, README, TEACHING) or the other front page.
    switch = page.eval_on_selector_all("a.language-switch", "els => els.map(e => e.getAttribute('href'))")
    assert len(switch) == 1, f"{path}: no language switch"
    chinese = path.startswith(("notebooks/zh/", "i18n/zh/")) or path.endswith(".zh-CN.html")
    assert page.get_attribute("html", "lang") == ("zh-CN" if chinese else "en")
    if path.startswith("notebooks/"):
        twin = path.replace("zh/", "", 1) if chinese else path.replace("notebooks/", "notebooks/zh/", 1)
        assert urljoin(url, switch[0]) == server + twin, f"{path}: the switch leads to {switch[0]}"
    elif path.removesuffix(".html").removesuffix(".zh-CN") in DOCUMENTS:
        twin = path.replace(".zh-CN", "") if chinese else path.replace(".html", ".zh-CN.html")
        assert urljoin(url, switch[0]) == server + twin, f"{path}: the switch leads to {switch[0]}"


def test_lesson_pages_show_navigation_outputs_errors_and_plots(page, server):
    page.goto(server + "notebooks/03_copies_between_devices.html", wait_until="load")
    text = page.inner_text("article")
    assert "Contents" in text and "04 Models on devices >" in text and "< 02 Tensors on devices" in text
    assert "RuntimeError" in text and "not on the expected device" in text  # the error, shown for real
    page.goto(server + "notebooks/06_where_a_gpu_pays_off.html", wait_until="load")
    plots = page.eval_on_selector_all("article img", "els => els.filter(e => e.naturalWidth > 300).length")
    assert plots >= 1, "the throughput plot is missing"


@pytest.mark.parametrize("edition", ["", ".zh-CN"])
def test_the_teachers_page_is_in_the_sidebar_with_its_tables_and_links_to_the_lessons(page, server, edition):
    page.goto(server + f"README{edition}.html", wait_until="load")
    caption = "教师指南" if edition else "For teachers"  # the theme writes captions in capitals
    assert caption.lower() in page.inner_text(".sidebar-tree").lower()
    entry = page.locator(f".sidebar-tree a[href$='TEACHING{edition}.html']").first
    assert entry.inner_text() == ("用本系列教学" if edition else "Teaching with the series")
    entry.click()
    page.wait_for_load_state("load")
    assert page.url == server + f"TEACHING{edition}.html"
    heads = page.eval_on_selector_all("article table", "ts => ts.map(t => t.querySelector('tr').innerText)")
    assert any(("先修课程" if edition else "Prerequisites") in h for h in heads), heads  # the lessons' table
    assert len(page.locator("article table").first.locator("tbody tr").all()) == len(LESSONS)
    lesson = page.locator("article table a[href*='notebooks/']").first
    assert lesson.get_attribute("href").startswith("notebooks/zh/" if edition else "notebooks/0")
    lesson.click()
    page.wait_for_load_state("load")
    assert "/notebooks/" in page.url and page.url.endswith("00_check_your_setup.html"), page.url
    assert not page.errors, page.errors


def test_a_screenshot_of_one_lesson_is_saved(page, server):
    page.goto(server + "notebooks/03_copies_between_devices.html", wait_until="load")
    page.locator("#the-same-device-error").scroll_into_view_if_needed()
    shot = ROOT / "build" / "site-lesson-03.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    assert page.outside, "the badges should have asked for their images"


def platform_fonts(page, selector: str) -> list[str]:
    """The fonts Chromium really drew the element's text with (DevTools' CSS.getPlatformFontsForNode)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    return [f["familyName"] for f in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]]


def test_the_chinese_lesson_03_shows_chinese_text_the_error_and_a_screenshot_is_saved(page, server):
    page.goto(server + "notebooks/zh/03_copies_between_devices.html", wait_until="load")
    text = page.inner_text("article")
    assert "目录" in text and "English" in text and "RuntimeError" in text and "not on the expected device" in text
    sidebar = page.inner_text(".sidebar-tree")  # the Chinese edition's own table of contents
    assert "练习解答" in sidebar and "Check your setup" not in sidebar, sidebar[:300]
    heading = page.inner_text("article h1")
    assert re.search(r"[\u4e00-\u9fff]", heading), heading
    fonts = platform_fonts(page, "article h1")
    assert any(re.search(r"CJK|Hei|Song|Ming|Kai|Noto Sans SC|Source Han", f) for f in fonts), (
        f"the Chinese title was drawn with {fonts}: boxes, not characters; install a CJK font"
        " (Debian: fonts-noto-cjk; `make test-site` does)")
    page.locator("div.output pre", has_text="RuntimeError").first.scroll_into_view_if_needed()
    page.mouse.wheel(0, -250)
    shot = ROOT / "build" / "site-lesson-03-zh.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000


DIAGRAM = "img[src^='data:image/svg+xml']"
# The corner pixel of the first diagram, drawn into a canvas: its own opaque background.
CORNER = """el => { const c = document.createElement('canvas'); c.width = el.naturalWidth; c.height = el.naturalHeight;
  const g = c.getContext('2d'); g.drawImage(el, 0, 0); return Array.from(g.getImageData(2, 2, 1, 1).data); }"""


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("edition", ["", "zh/"])
def test_a_lessons_diagram_shows_with_its_alt_text_and_its_own_light_background_in_either_theme(page, server,
                                                                                             edition, theme):
    page.emulate_media(color_scheme=theme)  # furo follows the system's theme unless the reader picks one
    page.goto(server + f"notebooks/{edition}03_copies_between_devices.html", wait_until="load")
    page.wait_for_function(f"document.querySelector(\"{DIAGRAM}\")?.complete")
    picture = page.locator(DIAGRAM).first
    width, alt = picture.evaluate("el => el.naturalWidth"), picture.get_attribute("alt")
    assert width >= 300 and len(alt.split()) >= (1 if edition else 6), (width, alt)
    if edition:
        assert re.search(r"[\u4e00-\u9fff]", alt), alt
    red, green, blue, opacity = picture.evaluate(CORNER)
    assert opacity == 255 and min(red, green, blue) >= 230, "the diagram's background is not opaque and light"
    body = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert (theme == "dark") == (body not in ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)")), body
    picture.scroll_into_view_if_needed()
    page.screenshot(path=str(ROOT / "build" / f"site-diagram-03{'-zh' if edition else ''}-{theme}.png"))


# --- recorded GPU outputs (site/gpu_outputs.py) -----------------------------------------------

@pytest.fixture(scope="module")
def gpu_outputs():
    """site/gpu_outputs.py, the site's extension (site/ is no package: `site` is Python's own module)."""
    spec = importlib.util.spec_from_file_location("gpu_outputs", ROOT / "site" / "gpu_outputs.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gpu_outputs", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def stream(text):
    return [{"output_type": "stream", "name": "stdout", "text": text}]


def a_record(folder, gpus, runs):
    """A record written by tools.gpu_runs (as `make gpu-report` writes one) into ``folder``."""
    from tools import gpu_runs

    settings = {}
    if len(gpus) > 1:
        settings["all GPUs"] = {"CUDA_VISIBLE_DEVICES": None, "gpus_seen": len(gpus)}
    if gpus:
        settings["one GPU"] = {"CUDA_VISIBLE_DEVICES": "0" if len(gpus) > 1 else None, "gpus_seen": 1}
    settings["no GPU"] = {"CUDA_VISIBLE_DEVICES": "", "gpus_seen": 0}
    machine = {"gpus": gpus, "gpu_count": len(gpus), "driver": "580.1" if gpus else None, "torch": "2.14.1",
               "cuda": "12.8", "python": "3.12.3"}
    runs = {nb: {s: {"status": "ok", "seconds": 1.0, "cells": [{"id": i, "output": o} for i, o in cells.items()]}
                 for s, cells in by_setting.items()} for nb, by_setting in runs.items()}
    return gpu_runs.write(gpu_runs.build("2026-12-01", "abc123", machine, settings, runs), folder)


NB = "notebooks/02_tensors_on_devices.ipynb"


def test_a_gpu_output_is_shown_only_where_it_differs_from_the_stored_one_and_labelled_with_machine_and_date(
        gpu_outputs, tmp_path):
    a_record(tmp_path, ["NVIDIA H200"], {NB: {
        "one GPU": {"moved": "cpu -> cuda:0\n", "same": "tensor(54.)\n", "plot": "<Figure>\n<image/png, 999 bytes>\n",
                    "error": "RuntimeError: CUDA error\n"},
        "no GPU": {"moved": "cpu -> cpu\n", "quiet": "printed only without a GPU\n"}}})
    records = gpu_outputs.load_records(tmp_path)
    stored = {"moved": stream("cpu -> cpu\n"), "same": stream("tensor(54.)"),  # a last newline or not: the same
              "plot": [{"output_type": "display_data", "data": {"text/plain": "<Figure>", "image/png": "iVBOR"}}],
              "quiet": stream("x\n"), "unrecorded": stream("device(type='cpu')\n"),
              "error": [{"output_type": "error", "ename": "ValueError", "evalue": "no GPU", "traceback": []}]}
    shown = {cell: gpu_outputs.recorded(records, NB, cell, outputs) for cell, outputs in stored.items()}
    assert [s.text for s in shown["moved"]] == ["cpu -> cuda:0\n"]
    assert [s.text for s in shown["error"]] == ["RuntimeError: CUDA error\n"]  # errors as `Name: message`
    # the same text, a picture whose bytes differ, a no-GPU run, a cell the record lacks: nothing extra
    assert shown["same"] == shown["plot"] == shown["quiet"] == shown["unrecorded"] == []
    assert gpu_outputs.recorded(records, "notebooks/03_copies_between_devices.ipynb", "moved", stored["moved"]) == []
    label = "1 × NVIDIA H200, driver 580.1, torch 2.14.1 (CUDA 12.8), Python 3.12.3, 2026-12-01"
    assert shown["moved"][0].label() == f"On a GPU: {label}"
    assert shown["moved"][0].label(chinese=True) == (
        "在 GPU 上：1 × NVIDIA H200，驱动 580.1，torch 2.14.1（CUDA 12.8），Python 3.12.3，2026-12-01")


def test_all_gpus_and_one_gpu_are_one_block_where_they_print_the_same_and_two_where_not(gpu_outputs, tmp_path):
    a_record(tmp_path, ["NVIDIA A100", "NVIDIA A100"], {NB: {
        "all GPUs": {"same": "cuda:0\n", "count": "2 GPUs\n"}, "one GPU": {"same": "cuda:0\n", "count": "1 GPU\n"}}})
    records = gpu_outputs.load_records(tmp_path)
    same = gpu_outputs.recorded(records, NB, "same", stream("cpu\n"))
    assert [(s.settings, s.label().split(":")[0]) for s in same] == [(("all GPUs", "one GPU"), "On 1 and on 2 GPUs")]
    assert same[0].label(chinese=True).startswith("在 1 个和 2 个 GPU 上：2 × NVIDIA A100")
    count = gpu_outputs.recorded(records, NB, "count", stream("0 GPUs\n"))
    assert [(s.text, s.label().split(":")[0]) for s in count] == [("2 GPUs\n", "On 2 GPUs"), ("1 GPU\n", "On a GPU")]


def test_a_record_made_without_a_gpu_is_never_shown(gpu_outputs, tmp_path):
    a_record(tmp_path, [], {NB: {"no GPU": {"moved": "cpu -> cpu, on a machine without a GPU\n"}}})
    assert gpu_outputs.load_records(tmp_path) == []


def test_a_record_of_code_since_changed_shows_nothing(gpu_outputs, tmp_path):
    """A record keeps each cell's fingerprint: once the lesson's cell changes, its old output is stale."""
    from tools import gpu_runs

    a_record(tmp_path, ["NVIDIA H200"], {NB: {"one GPU": {"moved": "cpu -> cuda:0\n"}}})
    records = gpu_outputs.load_records(tmp_path)
    path = tmp_path / next(p.name for p in tmp_path.glob("*.json"))
    data = json.loads(path.read_text())
    data["code"] = {NB: {"moved": gpu_runs.fingerprint("x.to(device)\n")}}
    path.write_text(gpu_runs.dumps(data))
    records = gpu_outputs.load_records(tmp_path)
    assert gpu_outputs.recorded(records, NB, "moved", stream("cpu -> cpu\n"), "x.to(device)\n")
    assert gpu_outputs.recorded(records, NB, "moved", stream("cpu -> cpu\n"), "x.to('cuda')\n") == []


def test_the_fixture_record_ran_the_code_lesson_02_holds_today():
    """Else the browser test below would find no block: after changing one of these cells of lesson 02,
    refresh the fixture's "code" fingerprints (tools.gpu_runs.fingerprint of each cell's source)."""
    import nbformat

    from tools import gpu_runs

    for record in gpu_runs.records(FIXTURE_RUNS):
        for notebook, cells in record.data["code"].items():
            sources = {c.id: c.source for c in nbformat.read(ROOT / notebook, as_version=4).cells}
            assert [c for c in cells if record.stale(notebook, c, sources.get(c, ""))] == [], notebook


def test_the_fixture_record_is_visibly_a_fixture_and_refused_unless_the_test_build_asks_for_it(gpu_outputs):
    from tools import gpu_runs

    fixtures = gpu_runs.records(FIXTURE_RUNS)
    assert fixtures and all(r.data.get("fixture") is True for r in fixtures)
    assert all(set(r.machine["gpus"]) == {"test fixture, not a real GPU"} for r in fixtures)
    with pytest.raises(gpu_runs.RecordError, match="test fixture"):
        gpu_outputs.load_records(FIXTURE_RUNS)
    assert gpu_outputs.load_records(FIXTURE_RUNS, allow_fixtures=True) == fixtures
    with pytest.raises(gpu_runs.RecordError, match="fixture, where present, must be true"):
        gpu_runs.validate({**fixtures[0].data, "fixture": False})


def test_a_chinese_cell_takes_the_english_record_only_where_its_code_and_outputs_are_the_english_cells(gpu_outputs):
    english = {"cell_type": "code", "source": "x = 1  # one\nx", "outputs": stream("1\n")}
    assert gpu_outputs.english_twin({**english, "source": "x = 1  # 一\nx"}, english)
    assert not gpu_outputs.english_twin({**english, "source": "x = 2  # 二\nx"}, english)
    assert not gpu_outputs.english_twin({**english, "outputs": stream("2\n")}, english)
    assert not gpu_outputs.english_twin(english, None)


def test_the_blocks_opening_tag_escapes_what_it_names(gpu_outputs):
    tag = gpu_outputs.details_tag('run "<a>"', "one GPU", "cell-1")
    assert tag == ('<details class="gpu-output" data-gpu-record="run &quot;&lt;a&gt;&quot;" data-gpu-setting="one GPU"'
                   ' data-cell-id="cell-1" open>\n')


GPU_BLOCK = re.compile(r'<details class="gpu-output" data-gpu-record="([^"]*)" data-gpu-setting="[^"]*"'
                       r' data-cell-id="([^"]*)" open>')


@pytest.mark.parametrize("site, runs, fixtures", [(SITE, ROOT / "gpu-runs", False), (FIXTURE_SITE, FIXTURE_RUNS, True)],
                         ids=["published", "fixture"])
def test_each_page_shows_the_gpu_outputs_its_records_hold_and_no_other(gpu_outputs, site, runs, fixtures):
    from tools.i18n import zh_path
    from tools.series import all_notebooks

    if not (site / "index.html").exists():
        pytest.fail(f"{site.relative_to(ROOT)} is missing: run `make test-site`, which builds it first")
    records = gpu_outputs.load_records(runs, allow_fixtures=fixtures)
    expected, found = [], []
    for notebook in all_notebooks() + [zh_path(p) for p in all_notebooks()]:
        page = site / notebook.relative_to(ROOT).with_suffix(".html")
        expected += [(page.name, r.record.name, cell) for cell, shown in gpu_outputs.notebook_outputs(notebook, records)
                     .values() for r in shown]
        found += [(page.name, record, cell) for record, cell in GPU_BLOCK.findall(page.read_text(encoding="utf-8"))]
    assert sorted(found) == sorted(expected)
    if fixtures:
        assert len(found) == 4, found  # tensors-02 and tensors-14, in English and in Chinese
    else:  # the published site never shows a fixture
        assert not [p for p in site.rglob("*.html") if "test fixture" in p.read_text(encoding="utf-8")]


@pytest.mark.parametrize("edition, on_a_gpu", [("", "On a GPU: "), ("zh/", "在 GPU 上：")])
def test_a_recorded_gpu_output_shows_labelled_after_the_stored_one_and_a_cell_without_one_shows_nothing_extra(
        page, fixture_server, edition, on_a_gpu):
    page.goto(fixture_server + f"notebooks/{edition}02_tensors_on_devices.html", wait_until="load")
    assert not page.errors, page.errors
    cell = page.locator("div.cell").filter(has=page.locator("details.gpu-output[data-cell-id='tensors-14']"))
    assert 'print(data.device, "->", on_device.device)' in cell.locator(".cell_input").inner_text()
    # in the cell's output: the stored (CPU) output first, then the GPU's, open, with its label
    outputs = cell.locator(".cell_output > *")
    assert outputs.count() == 2
    assert outputs.nth(0).inner_text().strip() == "cpu -> cpu"
    block = outputs.nth(1)
    assert block.evaluate("e => e.tagName") == "DETAILS"
    assert block.locator("summary").inner_text() == (
        on_a_gpu + ("1 × test fixture, not a real GPU, driver test fixture, torch test fixture (CUDA test fixture),"
                    " Python test fixture, 2026-12-01" if not edition else
                    "1 × test fixture, not a real GPU，驱动 test fixture，torch test fixture（CUDA test fixture），"
                    "Python test fixture，2026-12-01"))
    gpu_text = block.locator("pre")
    assert gpu_text.is_visible() and gpu_text.inner_text().strip() == "cpu -> cuda:0"
    block.scroll_into_view_if_needed()
    page.screenshot(path=str(ROOT / "build" / f"site-gpu-output-02{'-zh' if edition else ''}.png"))
    block.locator("summary").click()  # the reader can fold it away
    assert not gpu_text.is_visible()
    # a cell the record does not hold, and one whose recorded output is the stored one: nothing extra
    for code in ("X.device, v.device", "big.numel() * big.element_size()"):
        other = page.locator("div.cell").filter(has=page.locator(".cell_input", has_text=code))
        assert other.count() == 1 and other.locator(".cell_output").count() == 1, code
        assert other.locator("details").count() == 0, code
    assert page.locator("details.gpu-output").count() == 2  # tensors-02 and tensors-14
