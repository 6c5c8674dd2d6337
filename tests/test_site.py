"""The website (make site) in a real browser: headless Chromium, driven by Playwright.

`make test-site` builds the site from the stored outputs, then runs this file. Each page is
served from localhost and loaded for real. The machine has no internet, so requests to other
hosts (the Colab, Kaggle and GitHub badge images) are answered here with a stand-in image and
listed; every page, link and image of the site itself must resolve.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import threading
from urllib.parse import urldefrag, urljoin, urlparse

import pytest

from tools.i18n import DOCUMENTS
from tools.series import ROOT

pytestmark = pytest.mark.site

SITE = ROOT / "build" / "site"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
STAND_IN = b'<svg xmlns="http://www.w3.org/2000/svg" width="88" height="20"><rect width="88" height="20"/></svg>'
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def server():
    if not (SITE / "index.html").exists():
        pytest.fail("build/site is missing: run `make test-site`, which builds it first")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(SITE))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.RequestHandlerClass.log_message = lambda *args: None
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


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
    # Every page switches language: to its twin (a lesson, README, CONTRIBUTING) or the other front page.
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
    assert "习题解答" in sidebar and "Check your setup" not in sidebar, sidebar[:300]
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
