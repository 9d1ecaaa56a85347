"""The built book (_build/html) in headless Chromium with the network off (make test-browser).

Every page is opened twice: served over HTTP, and from disk (file://) as the README tells
a reader to open it. Each time it must load without a request leaving the book (from
disk: a file outside _build/html), without a console or page error, with its math
typeset and no MathJax error box, nothing wider than the main column, no code block that
scrolls, a main column of at most HEIGHT_BUDGET px, and none of FORBIDDEN_WORDS in its
text; its explorers must answer a selection with the recorded row. A full-page
screenshot of every page (HTTP) goes to _build/screenshots/, with heights.json: each
page's main-column height.

The checks and the explorer driver are themselves tested on small pages made here."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from explorer_driver import drive_explorers
from pagecheck import (CHROMIUM, CHROMIUM_ARGS, check_page, column_height, main_column, math_errors,
                       open_page, redirect_target, serve, site_url, too_tall)

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"
RESULTS = ROOT / "results"
SKIPPED_DIRS = {"_static", "_sources", "_images", "reports"}
#: The tallest a page's main column may be (CSS px at 1400 px wide, folds closed): every
#: chapter, the introduction, the references and the execution page alike.
HEIGHT_BUDGET = 12_000
#: How the book is opened: served over HTTP, and from disk as the README says.
SCHEMES = ("http", "file")


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (installs Debian's chromium)", pytrace=False)
    # launch() gives Chromium a fresh, empty user-data-dir of its own, removed on close.
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def book_urls():
    """scheme -> the book's base URL (a local server for http, the folder for file)."""
    if not (HTML / "index.html").is_file():
        pytest.fail(f"{HTML / 'index.html'} is missing: run `make book` first", pytrace=False)
    with site_url(HTML, "http") as http, site_url(HTML, "file") as file:
        yield {"http": http, "file": file}


@pytest.fixture(scope="session")
def heights():
    """page -> height of its main column in CSS px, written to _build/screenshots/heights.json
    at the end, next to the screenshots (the directory is emptied first)."""
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    SCREENSHOTS.mkdir(parents=True)
    found: dict[str, int] = {}
    yield found
    (SCREENSHOTS / "heights.json").write_text(json.dumps(dict(sorted(found.items())), indent=1) + "\n")


def book_pages() -> list[str]:
    return sorted(p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html")
                  if p.relative_to(HTML).parts[0] not in SKIPPED_DIRS)


def fail_with(what: str, problems: list[str]) -> None:
    if problems:
        unique = list(dict.fromkeys(problems))
        pytest.fail(f"{what}: {len(unique)} problem(s)\n" + "\n".join(f"  - {p}" for p in unique), pytrace=False)


# Without a build there is no page: one test per scheme still runs, and the book_urls
# fixture fails it naming `make book`.
@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("path", book_pages() or ["index.html"])
def test_page(path, scheme, browser, book_urls, heights):
    with open_page(browser, book_urls[scheme], path, lands_on=redirect_target(HTML / path)) as (page, problems):
        if column := main_column(page):
            problems += too_tall(column, HEIGHT_BUDGET)
            if scheme == "http":
                heights[path] = column_height(column)
                page.screenshot(path=SCREENSHOTS / f"{path.removesuffix('.html').replace('/', '__')}.png",
                                full_page=True)
        problems += check_page(page)
        problems += drive_explorers(page, RESULTS)
    fail_with(f"{path} ({scheme})", problems)


# --- the checks themselves, on pages made here ---------------------------------------

PROBLEM_PAGE = r"""<!doctype html><html><head><meta charset="utf-8"><title>A page</title>
<style>article { width: 600px } pre { white-space: pre; overflow-x: auto }</style></head>
<body><article class="bd-article">
<p>Shown as text: \(x^2\) and $a_b$.</p>
<p>A price of $5 is not math, nor is $10.</p>
<details><summary>closed</summary><p>Hidden \(y\)</p><p>Two Seeds, folded.</p>
<pre>int folded_and_far_too_long = 0; /* ................................................................................................................ */</pre></details>
<p style="display: none">Hidden \(w\)</p>
<pre>code \(z\)</pre>
<pre>

    float wide = a_rather_long_name_for_a_value * another_long_name_for_a_factor + yet_another_long_name_that_does_not_fit;
</pre>
<pre style="white-space: pre-wrap">float wraps = a_rather_long_name_for_a_value * another_long_name_for_a_factor + yet_another_long_name_that_fits;</pre>
<p>A seedling and a seedy bar are other words; one seed is not.</p>
<table class="wide"><tr><td style="min-width: 900px">a wide table</td></tr></table>
<div style="overflow-x: auto"><table><tr><td style="min-width: 900px">scrolls</td></tr></table></div>
<table style="width: 140px"><tr><td>06-warptiling tiles</td><td>1.0</td></tr>
<tr><td><span style="white-space: nowrap">07-split-k</span> tiles</td><td>2.0</td></tr>
<tr><td>x</td><td style="max-width: 60px">a_mangled_name_with_no_break_at_all</td></tr></table>
<div style="height: 3000px">tall</div>
<img src="http://example.invalid/logo.png" alt="">
<img src="../outside.png" alt="">
<script>console.error("boom")</script>
</article></body></html>"""


@pytest.mark.parametrize("scheme", SCHEMES)
def test_page_checks_report_problems(tmp_path, browser, scheme):
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "problems.html").write_text(PROBLEM_PAGE)
    (tmp_path / "outside.png").write_bytes(b"")
    with site_url(tmp_path / "book", scheme) as url, open_page(browser, url, "problems.html") as (page, problems):
        problems += check_page(page)
        column = main_column(page)
        tall, short = too_tall(column, 2000), too_tall(column, 20_000)
        folds = page.evaluate("[...document.querySelectorAll('details')].map(d => d.open)")
    text = "\n".join(problems)
    assert "request leaving the book (image): http://example.invalid/logo.png" in text
    if scheme == "file":  # from disk, a file beside the book's folder is outside it
        assert f"request leaving the book (image): {(tmp_path / 'outside.png').as_uri()}" in text
    assert "console error: boom" in text and "logo.png:0" not in text  # the request, once
    assert "math left as text, 2 times: “\\(x^2\\)”, “$a_b$”" in text
    assert '<table class="wide"> reaches' in text and "“a wide table”" in text
    assert "first line “float wide = a_rather_long_name_for_a_value" in text
    assert "first line “int folded_and_far_too_long = 0;" in text  # folded code is checked too
    assert "the word “seed” in the page's text, 2 times: “…" in text and "Two Seeds, folded." in text
    assert "first-column words broken over two lines: “06-warptiling”\n" in text + "\n"
    assert "table cell wider than its column, its text runs into the next: “a_mangled_name_with" in text
    assert len(tall) == 1 and "px tall, over its budget of 2000 px" in tall[0] and short == []
    assert folds == [False]  # the fold opened for the checks is closed again
    others = "\n".join(p for p in problems if "the word “seed”" not in p)  # it quotes the text
    for quiet in ("y\\)", "w\\)", "z\\)", "scrolls", "$5", "page scrolls", "float wraps", "code \\(z",
                  "MathJax", "07-split-k", "“06-warptiling tiles"):
        assert quiet not in others, f"{quiet!r} reported:\n{text}"


MATH_PAGE = r"""<!doctype html><html><head><meta charset="utf-8">
<script>window.MathJax = {"options": {"processHtmlClass": "tex2jax_process|mathjax_process|math|output_area"}}</script>
<script defer src="tex-svg-full.js"></script></head><body><article class="bd-article">
<p>Fine: \(x^2 + 1\). Broken: \(\frac{1}\). Broken too: \[ x^{2}} \]</p>
</article></body></html>"""


@pytest.mark.parametrize("scheme", SCHEMES)
def test_math_error_boxes_are_reported_with_their_tex(tmp_path, browser, scheme):
    from perflab.sphinxext import mathjax_file  # the book's own MathJax

    shutil.copyfile(mathjax_file(), tmp_path / "tex-svg-full.js")
    (tmp_path / "math.html").write_text(MATH_PAGE)
    with site_url(tmp_path, scheme) as url, open_page(browser, url, "math.html") as (page, problems):
        problems += math_errors(page)
    text = "\n".join(problems)
    assert len(problems) == 2, text
    assert "MathJax error box: “\\frac{1}” (" in text and "MathJax error box: “x^{2}}” (Extra close brace" in text
    assert "x^2" not in text


MATCH = {"variant": "06-warptiling", "M": 4096, "N": 4096, "K": 4096}
EXPLORER = {
    "experiment": "sgemm.sweep", "chapter": "01-sgemm", "device_slug": "nvidia-h200",
    "match": MATCH,
    "params": [{"name": "BM", "options": [64, 128]}, {"name": "BN", "options": [64, 128]},
               {"name": "swizzle", "options": [False, True]}],
    "fields": ["TFLOP/s", {"name": "rel_err", "digits": 1}],  # a name, or an object with one
    "rows": [
        {"params": {"BM": 64, "BN": 64, "swizzle": False}, "values": {"TFLOP/s": 31.41592653589793, "rel_err": 1.1e-06}},
        {"params": {"BM": 64, "BN": 128, "swizzle": True}, "values": {"TFLOP/s": 42.71828182845905, "rel_err": 1.2e-06}},
        {"params": {"BM": 128, "BN": 128, "swizzle": True}, "values": {"TFLOP/s": 48.73, "rel_err": 1.3e-06}},
        {"params": {"BM": 128, "BN": 64, "swizzle": True}, "values": {"TFLOP/s": 50.1, "rel_err": 0.5},
         "status": "failed"},  # failed its check: the driver must not expect "recorded" for it
    ],
    "invalid": [{"params": {"BM": 128, "BN": 64, "swizzle": False},
                 "reason": "06-warptiling: BN not divisible by WN (64 % 128)"}],
}


def results_file(explorer: dict, scale: float) -> dict:
    """The results file behind `explorer`, its values times `scale`, with a row of another
    variant at the same params that must not be taken for it."""
    rows = []
    for variant, factor in ((MATCH["variant"], scale), ("08-tf32-mma", 2.0)):
        for row in explorer["rows"]:
            rows.append({"variant": variant, "params": {"M": 4096, "N": 4096, "K": 4096, **row["params"], "stages": 3},
                         "metrics": {"TFLOP/s": {"value": row["values"]["TFLOP/s"] * factor, "unit": "TFLOP/s"}},
                         "rel_err": row["values"]["rel_err"]})
    return {"rows": rows}


def explorer_page(tmp_path: Path, bug: str, scale: float, script: bool = True) -> None:
    """index.html with one explorer (fixture JS, broken as `bug` says; none without
    `script`), the note the book's explorers carry, and results/."""
    from perflab.explorer import NOTE

    data = json.dumps(EXPLORER).replace("</", "<\\/")
    tag = '<script src="explorer_fixture.js"></script>' if script else ""
    (tmp_path / "index.html").write_text(f"""<!doctype html><html><head><meta charset="utf-8"></head><body>
<div class="perflab-explorer" data-explorer="fixture" data-bug="{bug}">
<script type="application/json" class="perflab-explorer-data">{data}</script>{NOTE}
<div class="perflab-explorer-readout" data-status="not-recorded"></div>
</div>{tag}</body></html>""")
    (tmp_path / "explorer_fixture.js").write_text((Path(__file__).parent / "explorer_fixture.js").read_text())
    results = tmp_path / "results" / "nvidia-h200" / "01-sgemm" / "sgemm.sweep.json"
    results.parent.mkdir(parents=True)
    results.write_text(json.dumps(results_file(EXPLORER, scale)))


@pytest.mark.parametrize("bug, scale, complaint", [
    ("", 1.0, None),
    ("wrong-value", 1.0, f"TFLOP/s shows {42.71828182845905 * 1.01}, the embedded row has 42.71828182845905"),
    ("no-reason", 1.0, "the readout is 'invalid' with text 'not a valid configuration'; expected 'invalid' "
                       "and the reason '06-warptiling: BN not divisible by WN (64 % 128)'"),
    ("", 1 + 1e-6, f"TFLOP/s shows 42.71828182845905, the results file has {42.71828182845905 * (1 + 1e-6)}"),
    ("no-chart", 1.0, "the explorer failed: 'the chart library did not load'; the page says “This explorer cannot run here"),
    ("keeps-note", 1.0, "its controls are there, but the page still says it cannot run: “This explorer cannot run here"),
], ids=["works", "wrong-value", "no-reason", "results-differ", "no-chart", "keeps-note"])
def test_explorer_driver(tmp_path, browser, bug, scale, complaint):
    explorer_page(tmp_path, bug, scale)
    with serve(tmp_path) as url, open_page(browser, url, "index.html") as (page, problems):
        assert problems == []
        found = drive_explorers(page, tmp_path / "results", timeout_ms=1500)
    if complaint is None:
        assert found == []
    else:
        assert any(complaint in p for p in found), "\n".join(found)


def test_explorer_driver_from_disk(tmp_path, browser):
    """The same explorer opened as a file: it answers, and nothing leaves its folder."""
    explorer_page(tmp_path, "", 1.0)
    with site_url(tmp_path, "file") as url, open_page(browser, url, "index.html") as (page, problems):
        problems += drive_explorers(page, tmp_path / "results", timeout_ms=1500)
    assert problems == []


def test_an_explorer_whose_script_does_not_run_says_so(tmp_path, browser):
    """Without its script (JavaScript off, _static/ missing), an explorer's page says it
    cannot run, in the page, where the reader looks for the controls."""
    explorer_page(tmp_path, "", 1.0, script=False)
    with site_url(tmp_path, "file") as url, open_page(browser, url, "index.html") as (page, problems):
        note = page.locator(".perflab-explorer-note")
        shown = note.is_visible() and note.inner_text()
        found = drive_explorers(page, tmp_path / "results", timeout_ms=500)
    assert problems == [] and shown.startswith("This explorer cannot run here")
    assert found == ["explorer 'fixture': no <select name=\"BM\">, <select name=\"BN\">, "
                     "<select name=\"swizzle\"> after 0.5 s; the page says “" + shown + "”"]


# --- the book's own explorer script and Vega bundle, from disk -------------------------

@pytest.fixture(scope="session")
def vega_bundle() -> str:
    """The Vega bundle as the book's build writes it (vl-convert, wrapped by sphinxext)."""
    import vl_convert
    from perflab.sphinxext import classic_script

    return classic_script(vl_convert.javascript_bundle())


def book_explorer(tmp_path: Path, bundle: str, script_type: str) -> None:
    """index.html with the fixture's explorer as perflab/explorer.py writes it (its note,
    readout and chart; fields with their formats; a Vega-Lite chart whose bound selects
    are the controls), loaded with the book's explorer.js and `bundle` as the book loads
    them ("classic": deferred scripts) or as modules ("module", as the book once did)."""
    from perflab.explorer import NOTE

    fields = [{"name": "TFLOP/s", "digits": 1, "style": "fixed", "prefix": "", "suffix": " TFLOP/s"},
              {"name": "rel_err", "digits": 1, "style": "exp", "prefix": "", "suffix": ""}]
    params = [{**p, "labels": [str(o) for o in p["options"]], "value": p["options"][0]} for p in EXPLORER["params"]]
    chosen = " && ".join(f"toString(datum['{p['name']}']) == toString({p['name']})" for p in params)
    vega = {"$schema": "https://vega.github.io/schema/vega-lite/v5.json",
            "data": {"values": [{**r["params"], "TFLOP/s": r["values"]["TFLOP/s"]} for r in EXPLORER["rows"]]},
            "mark": "bar", "width": 300, "height": 80,
            "encoding": {"x": {"field": "BM", "type": "nominal"}, "y": {"field": "TFLOP/s", "type": "quantitative"},
                         "color": {"condition": {"test": chosen, "value": "#d62728"}, "value": "#9ecae1"}},
            "params": [{"name": p["name"], "value": p["value"],
                        "bind": {"input": "select", "options": p["options"], "labels": p["labels"], "name": p["name"] + " "}}
                       for p in params]}
    data = {**EXPLORER, "fields": fields, "params": params, "vega": vega,
            "rows": [{"status": "recorded", "source": "recorded on a fixture", **r} for r in EXPLORER["rows"]]}
    payload = json.dumps(data).replace("</", "<\\/")
    static = tmp_path / "_static" / "perflab"
    static.mkdir(parents=True)
    (static / "vega-bundle.js").write_text(bundle)
    shutil.copyfile(ROOT / "lib" / "perflab" / "static" / "explorer.js", static / "explorer.js")
    how = 'defer="defer"' if script_type == "classic" else 'type="module"'
    (tmp_path / "index.html").write_text(f"""<!doctype html><html><head><meta charset="utf-8">
<script>var _ = "Sphinx declares this name too";</script>
<script {how} src="_static/perflab/vega-bundle.js"></script>
<script {how} src="_static/perflab/explorer.js"></script></head><body>
<div class="perflab-explorer" data-explorer="fixture">
<script type="application/json" class="perflab-explorer-data">{payload}</script>{NOTE}
<div class="perflab-explorer-readout" data-status="not-recorded"></div>
<div class="perflab-explorer-chart"></div></div></body></html>""")
    results = tmp_path / "results" / "nvidia-h200" / "01-sgemm" / "sgemm.sweep.json"
    results.parent.mkdir(parents=True)
    results.write_text(json.dumps(results_file(EXPLORER, 1.0)))


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_book_explorer_runs_from_disk_and_over_http(tmp_path, browser, vega_bundle, scheme):
    book_explorer(tmp_path, vega_bundle, "classic")
    with site_url(tmp_path, scheme) as url, open_page(browser, url, "index.html") as (page, problems):
        problems += drive_explorers(page, tmp_path / "results", timeout_ms=5000)
        notes = page.locator(".perflab-explorer-note").count()
    assert problems == [] and notes == 0


def test_module_scripts_from_disk_leave_the_explorer_saying_it_cannot_run(tmp_path, browser, vega_bundle):
    """Why the book loads classic scripts: from file://, Chromium refuses module scripts
    (origin null, CORS); the explorer then has no controls and its note says so."""
    book_explorer(tmp_path, vega_bundle, "module")
    with site_url(tmp_path, "file") as url, open_page(browser, url, "index.html") as (page, problems):
        problems += drive_explorers(page, tmp_path / "results", timeout_ms=1000)
    text = "\n".join(problems)
    assert "console error" in text and "CORS" in text, text
    assert "no <select name=\"BM\">" in text and "the page says “This explorer cannot run here" in text, text


# --- the book's CSS and first-column words, on a narrow table ---------------------------

TABLE_PAGE = r"""<!doctype html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="perflab.css"><style>article { width: 300px }</style></head>
<body><article class="bd-article"><div class="perflab-table"><table>
<tr><th>kernel</th><th>TFLOP/s</th><th>note</th></tr>
<tr><td class="">06-warptiling</td><td class="num">48.6</td><td>warp tiles over a cp.async pipeline, three stages deep</td></tr>
<tr><td class="">look-ahead single pass (12), best of the sweep, × copy</td><td class="num">1.29</td>
<td>sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma</td></tr>
</table></div>
<div class="highlight"><pre>float wide = a_rather_long_name_for_a_value * another_long_name_for_a_factor + yet_another_long_name;</pre></div>
</article></body></html>"""


def test_first_columns_keep_words_whole_and_code_wraps(tmp_path, browser):
    """perflab.sphinxext marks the hyphenated words of first columns and perflab.css keeps
    them whole, while a long label still wraps at its spaces; a long code line wraps."""
    from perflab.sphinxext import keep_words_whole

    body = keep_words_whole(TABLE_PAGE)
    assert '<td class=""><span class="perflab-word">06-warptiling</span></td>' in body
    math = "<table><tr><td>\\(a-b\\) and x-y</td></tr></table>"
    assert keep_words_whole(math) == math  # a span inside the TeX would break it
    (tmp_path / "table.html").write_text(body)
    (tmp_path / "unmarked.html").write_text(TABLE_PAGE)
    shutil.copyfile(ROOT / "lib" / "perflab" / "static" / "perflab.css", tmp_path / "perflab.css")
    with site_url(tmp_path, "file") as url, open_page(browser, url, "unmarked.html") as (page, problems):
        unmarked = check_page(page)
    assert unmarked == ["first-column words broken over two lines: “06-warptiling”, “look-ahead”"]
    with site_url(tmp_path, "file") as url, open_page(browser, url, "table.html") as (page, problems):
        problems += check_page(page)
        label_lines = page.evaluate("""() => {
            const lines = cell => { const r = document.createRange(); r.selectNodeContents(cell);
                                    return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size; };
            const rows = document.querySelectorAll("tr");
            return [lines(rows[1].cells[0]), lines(rows[2].cells[0])];
        }""")
    assert problems == [] and label_lines[0] == 1 and label_lines[1] >= 2, (problems, label_lines)
