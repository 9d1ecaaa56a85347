"""Open a page of a local site in headless Chromium with the network off, served over
HTTP or opened from disk (file://), and check what a reader would see: requests that
leave the site, console and page errors, TeX left as text, MathJax error boxes, content
wider than the main column, code blocks that scroll, a main column over its height
budget, and words the book must not use."""
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


@contextmanager
def site_url(directory: Path, scheme: str) -> Iterator[str]:
    """The base URL of `directory`: served on 127.0.0.1 ("http"), or the folder itself
    ("file", as a reader opens the built book from disk)."""
    if scheme == "file":
        yield directory.resolve().as_uri() + "/"
    elif scheme == "http":
        with serve(directory) as url:
            yield url
    else:
        raise ValueError(f"scheme {scheme!r}: http or file")


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
    base_url (aborted), console errors, uncaught exceptions. base_url may be http:// or
    file:// (site_url): from disk, a request for a file outside the site's folder leaves
    the book as surely as one for another host."""
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


def too_tall(column: ElementHandle, budget: int) -> list[str]:
    """The main column must be at most `budget` CSS px tall (folds closed)."""
    height = column_height(column)
    if height <= budget:
        return []
    return [f"the main column is {height} px tall, over its budget of {budget} px: "
            f"fold what supports the text"]


# Every MathJax error box (CHTML: <mjx-merror>; SVG, the book's output: an element with
# data-mml-node="merror"), with the TeX it was made from where MathJax still knows it.
_MATH_ERRORS = """() => {
    const boxes = "mjx-merror, [data-mml-node='merror']";
    const found = [], seen = new Set();
    const items = window.MathJax?.startup?.document?.math;
    for (const item of items || []) {
        const root = item.typesetRoot;
        const box = root && root.querySelector && root.querySelector(boxes);
        if (!box) continue;
        root.querySelectorAll(boxes).forEach(b => seen.add(b));
        found.push({tex: String(item.math), error: box.getAttribute("data-mjx-error") || box.textContent});
    }
    for (const box of document.querySelectorAll(boxes)) {
        if (seen.has(box)) continue;
        const host = box.closest("mjx-container");
        found.push({tex: host?.getAttribute("aria-label") || "", error: box.getAttribute("data-mjx-error") || box.textContent});
    }
    return found;
}"""


def math_errors(page: Page) -> list[str]:
    """One problem per MathJax error box, naming the TeX and MathJax's message."""
    return [f"MathJax error box: “{' '.join(e['tex'].split())}” ({' '.join(e['error'].split())})"
            for e in page.evaluate(_MATH_ERRORS)]


# Open every fold (<details>: dropdowns, hidden cells, table folds) and show every tab,
# so that what a reader can unfold is checked too.
@contextmanager
def unfolded(page: Page) -> Iterator[None]:
    """Every fold of the page open (and closed again afterwards)."""
    handle = page.evaluate_handle("""() => {
        const opened = [...document.querySelectorAll("details:not([open])")];
        opened.forEach(d => d.open = true);
        const style = document.createElement("style");
        style.textContent = ".sd-tab-content { display: block !important }";
        document.head.append(style);
        return {opened, style};
    }""")
    try:
        yield
    finally:
        handle.evaluate("s => { s.opened.forEach(d => d.open = false); s.style.remove(); }")
        handle.dispose()


# Visible code blocks whose lines run past their box (it scrolls, or would).
_WIDE_CODE = """column => [...column.querySelectorAll("pre")]
    .filter(pre => pre.checkVisibility() && pre.scrollWidth > pre.clientWidth + 1)
    .map(pre => ({width: pre.scrollWidth, box: pre.clientWidth,
                  line: (pre.textContent.split("\\n").find(l => l.trim()) || "").trim()}))"""


def wide_code(column: ElementHandle) -> list[str]:
    """One problem per visible <pre> that scrolls sideways, with its first line."""
    return [f"code block wider than its box ({c['width']} px in {c['box']} px), first line "
            f"“{c['line'][:100]}”" for c in column.evaluate(_WIDE_CODE)]


# Tables whose cells a reader cannot read whole: a word of a first-column cell (a row's
# name, such as a kernel 06-warptiling) laid over two lines, or a cell whose content runs
# past its box into the next one.
_BROKEN_CELLS = """column => {
    const split = [], over = [];
    for (const cell of column.querySelectorAll("td, th")) {
        if (!cell.checkVisibility()) continue;
        if (cell.scrollWidth > cell.clientWidth + 1)
            over.push(cell.innerText.replace(/\\s+/g, " ").trim().slice(0, 60));
        if (cell.cellIndex !== 0) continue;
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (const m of node.data.matchAll(/\\S+/g)) {
                const range = document.createRange();
                range.setStart(node, m.index);
                range.setEnd(node, m.index + m[0].length);
                const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
                if (tops.size > 1) split.push(m[0]);
            }
        }
    }
    return {split, over};
}"""


def broken_cells(column: ElementHandle) -> list[str]:
    """Words of a table's first column broken over two lines; cells that overflow."""
    found = column.evaluate(_BROKEN_CELLS)
    problems = []
    if found["split"]:
        words = list(dict.fromkeys(found["split"]))
        more = f", and {len(words) - MAX_SNIPPETS} more" if len(words) > MAX_SNIPPETS else ""
        problems.append("first-column words broken over two lines: "
                        + ", ".join(f"“{w}”" for w in words[:MAX_SNIPPETS]) + more)
    problems += [f"table cell wider than its column, its text runs into the next: “{t}”"
                 for t in dict.fromkeys(found["over"])]
    return problems


#: Words the rendered book never uses (whole words, any case, with their plurals).
FORBIDDEN_WORDS = ("seed",)


def forbidden_words(page: Page, words=FORBIDDEN_WORDS) -> list[str]:
    """One problem per word of `words` found in the page's text as a reader can see it
    (innerText of the whole document, folds open, and its title), with where it stands."""
    text = page.evaluate("() => document.title + '\\n' + document.documentElement.innerText")
    problems = []
    for word in words:
        hits = list(re.finditer(rf"\b{re.escape(word)}s?\b", text, re.I))
        if hits:
            where = ", ".join(f"“…{' '.join(text[max(0, m.start() - 40):m.end() + 40].split())}…”"
                              for m in hits[:5])
            more = f", and {len(hits) - 5} more" if len(hits) > 5 else ""
            problems.append(f"the word “{word}” in the page's text, {len(hits)} times: {where}{more}")
    return problems


def check_page(page: Page) -> list[str]:
    """Width, math, code, table and word problems of a loaded page (layout left as it was)."""
    column = main_column(page)
    if column is None:
        return [f"no main column ({MAIN_COLUMN})"]
    problems = too_wide(page, column) + unrendered_math(column) + math_errors(page)
    with unfolded(page):
        problems += wide_code(column) + broken_cells(column) + forbidden_words(page)
    return problems
