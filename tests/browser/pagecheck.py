"""Open a page of a locally served site in headless Chromium with the network off, and
check what a reader would see: requests that leave the site, console and page errors,
TeX left as text, content wider than the main column."""
from __future__ import annotations

import functools
import http.server
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urljoin

from playwright.sync_api import Browser, ElementHandle, Page

# Debian's package; the browser is never downloaded (no `playwright install`).
CHROMIUM = "/usr/bin/chromium"
# The background-networking flags stop Chromium's own calls to Google's hosts; the
# resolver rule makes every host but the local server unreachable, whatever asks.
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
VIEWPORT = {"width": 1400, "height": 900}
# The sphinx-book-theme content column, without the sidebars beside it and the buttons
# and prev/next links above and below it (search.html has no <article>: its container).
MAIN_COLUMN = "article.bd-article, .bd-search-container"
MATHJAX_TIMEOUT_MS = 15_000


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve `directory` on 127.0.0.1 (a free port) from a thread; yield its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/"
        finally:
            server.shutdown()


def redirect_target(html_file: Path) -> str | None:
    """The page a `<meta http-equiv="Refresh">` stub (Jupyter Book's index.html) sends to."""
    m = re.search(r'<meta http-equiv="Refresh" content="\d+;\s*url=([^"]+)"', html_file.read_text(), re.I)
    return m and m.group(1)


@contextmanager
def open_page(browser: Browser, base_url: str, path: str, lands_on: str | None = None
              ) -> Iterator[tuple[Page, list[str]]]:
    """Open base_url + path in a fresh context (empty storage) and wait until it is
    loaded, on `lands_on` if it redirects there, and typeset. Yield the page and the list
    of its problems, which keeps growing while the page is used: requests to anywhere but
    base_url (aborted), console errors, uncaught exceptions."""
    problems: list[str] = []
    aborted: set[str] = set()
    context = browser.new_context(viewport=VIEWPORT, service_workers="block")

    def route(route):
        request = route.request
        if request.url.startswith(base_url):
            route.continue_()
        else:
            problems.append(f"request leaving the book ({request.resource_type}): {request.url}")
            aborted.add(request.url)
            route.abort()

    def console(msg):
        where = msg.location.get("url")
        if msg.type == "error" and where not in aborted:  # an aborted request is reported once
            problems.append(f"console error: {msg.text}" + (f" (at {where}:{msg.location['lineNumber']})" if where else ""))

    def websocket(ws):
        problems.append(f"request leaving the book (websocket): {ws.url}")
        ws.close()

    context.route("**/*", route)
    context.route_web_socket(re.compile(".*"), websocket)
    page = context.new_page()
    page.on("console", console)
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    try:
        page.goto(base_url + path, wait_until="load")
        if lands_on:
            page.wait_for_url(urljoin(base_url + path, lands_on), wait_until="load")
        problems += _wait_until_typeset(page)
        yield page, problems
    finally:
        context.close()


def _wait_until_typeset(page: Page) -> list[str]:
    """Wait for MathJax's first typesetting (where MathJax loaded) and for the fonts."""
    state = page.evaluate(f"""async () => {{
        const startup = window.MathJax?.startup?.promise;
        const typeset = !startup ? "absent" : await Promise.race([
            startup.then(() => "done", e => "failed: " + e),
            new Promise(done => setTimeout(() => done("timeout"), {MATHJAX_TIMEOUT_MS}))]);
        await document.fonts.ready;
        return typeset;
    }}""")
    page.wait_for_timeout(200)  # let the last layout settle
    if state == "timeout":
        return [f"MathJax did not finish typesetting within {MATHJAX_TIMEOUT_MS // 1000} s"]
    return [f"MathJax {state}"] if state.startswith("failed") else []


def main_column(page: Page) -> ElementHandle | None:
    return page.query_selector(MAIN_COLUMN)


def column_height(column: ElementHandle) -> int:
    """Height of the main column in CSS px."""
    return round(column.bounding_box()["height"])


# The visible text of the column, one string per block, without code and rendered math.
_VISIBLE_TEXT = """column => {
    const skip = "pre, code, kbd, samp, script, style, textarea, mjx-container";
    const block = "p, li, dt, dd, td, th, h1, h2, h3, h4, h5, h6, caption, figcaption, summary, div";
    const blocks = new Map();
    const walker = document.createTreeWalker(column, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const el = node.parentElement;
        // checkVisibility: false under display:none and in a closed <details>
        if (el.closest(skip) || !el.checkVisibility({visibilityProperty: true, opacityProperty: true})) continue;
        const key = el.closest(block) || column;
        blocks.set(key, (blocks.get(key) || "") + node.data);
    }
    return [...blocks.values()];
}"""
# \(...\), \[...\], $$...$$, a lone delimiter of those, or a $...$ holding \ ^ or _.
_TEX = re.compile(r"\\\(.*?\\\)|\\\[.*?\\\]|\$\$.*?\$\$|\\[()\[\]]|\$\$|\$[^$\n]*[\\^_][^$\n]*\$", re.S)
MAX_SNIPPETS = 20


def unrendered_math(column: ElementHandle) -> list[str]:
    """One problem listing the visible text that still holds TeX delimiters, if any."""
    found = [" ".join(m.group(0).split()) for text in column.evaluate(_VISIBLE_TEXT) for m in _TEX.finditer(text)]
    if not found:
        return []
    shown = list(dict.fromkeys(s if len(s) <= 80 else s[:77] + "..." for s in found))
    more = f", and {len(shown) - MAX_SNIPPETS} more" if len(shown) > MAX_SNIPPETS else ""
    return [f"math left as text, {len(found)} times: " + ", ".join(f"“{s}”" for s in shown[:MAX_SNIPPETS]) + more]


# Outermost elements whose right edge passes the column's, unless an element between
# them and the column scrolls horizontally.
_STICKING_OUT = """column => {
    const edge = column.getBoundingClientRect().right;
    const scrolls = el => ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
    const out = [];
    for (const el of column.querySelectorAll("*")) {
        const box = el.getBoundingClientRect();
        if (box.width === 0 || box.right <= edge + 0.5 || out.some(o => o.contains(el))) continue;
        let up = el.parentElement;
        while (up !== column && !scrolls(up)) up = up.parentElement;
        if (up === column) out.push(el);
    }
    return {edge, out: out.map(el => ({
        tag: el.tagName.toLowerCase(), cls: el.getAttribute("class") || "",
        text: el.textContent.replace(/\\s+/g, " ").trim().slice(0, 60),
        right: el.getBoundingClientRect().right}))};
}"""


def too_wide(page: Page, column: ElementHandle) -> list[str]:
    """The page must not scroll sideways, nor anything stick out of the main column."""
    problems = []
    scroll_width, inner_width = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    if scroll_width > inner_width:
        problems.append(f"page scrolls horizontally: {scroll_width} px wide in a {inner_width} px window")
    found = column.evaluate(_STICKING_OUT)
    for el in found["out"]:
        problems.append(f"wider than the main column (right edge {found['edge']:.0f} px): "
                        f"<{el['tag']} class=\"{el['cls']}\"> reaches {el['right']:.0f} px, “{el['text']}”")
    return problems


def check_page(page: Page) -> list[str]:
    """Width and math problems of a loaded page."""
    column = main_column(page)
    if column is None:
        return [f"no main column ({MAIN_COLUMN})"]
    return too_wide(page, column) + unrendered_math(column)
