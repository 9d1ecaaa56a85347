"""A Sphinx extension for the book: everything a page loads is served by the book itself.

- MathJax 3 (the SVG build, which needs no font files) from the `django-static-mathjax`
  package on PyPI, copied into `_static/perflab/` (_config.yml points `mathjax_path`
  there);
- Vega, Vega-Lite and vega-embed as one bundle made by the `vl-convert-python` package at
  build time, wrapped in a function so that it runs as a classic script, written to
  `_static/perflab/vega-bundle.js` and loaded only on pages with an explorer, with
  `explorer.js` (lib/perflab/static/). Classic scripts, not modules: a page opened from
  disk (file://) has the origin "null", and Chromium refuses module scripts there (CORS),
  so the explorers would stay frozen;
- the lab's CSS for tables, dropdowns and explorers on every page;
- in the first column of every table (the row's name: a kernel such as 06-warptiling, a
  target), each hyphenated word wrapped in <span class="perflab-word">, which the CSS
  keeps on one line: a name never breaks at its hyphen, and a long label still wraps at
  its spaces (a whole first column kept on one line would push the numbers out of view).
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

STATIC = Path(__file__).parent / "static"
MATHJAX = "perflab/tex-svg-full.js"
# The first line of the bundle as written here: a bundle without it (an older build's
# module) is made again.
BUNDLE_HEAD = "/* Vega, Vega-Lite and vega-embed (vl-convert-python), as a classic script. */"


def mathjax_file() -> Path:
    from importlib import resources
    try:
        root = resources.files("mathjax")
    except ModuleNotFoundError:
        raise RuntimeError("the book's MathJax comes from the django-static-mathjax "
                           "package: pip install -r requirements.txt") from None
    return Path(str(root / "static" / "mathjax" / "es5" / "tex-svg-full.js"))


def _write_assets(app) -> None:
    """Put the vendored scripts in a folder Sphinx copies into _static/ (the Vega bundle
    is made once per build folder: vl-convert is needed only where it is missing)."""
    out = Path(app.doctreedir).parent / "perflab_static"
    dest = out / "perflab"
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(mathjax_file(), dest / "tex-svg-full.js")
    bundle = dest / "vega-bundle.js"
    if not bundle.exists() or not bundle.read_text().startswith(BUNDLE_HEAD):
        import vl_convert
        bundle.write_text(classic_script(vl_convert.javascript_bundle()))
    for f in STATIC.iterdir():
        shutil.copyfile(f, dest / f.name)
    app.config.html_static_path.append(str(out))


def classic_script(bundle: str) -> str:
    """vl-convert's bundle is an ES module body: top-level const and function declarations
    (one of them `_`, which Sphinx's own scripts declare too), no import or export, and
    `window.vegaEmbed = ...` at the end. Inside a strict function it keeps its names to
    itself and runs as a plain <script>, from file:// as over HTTP."""
    if any(line.startswith(("import ", "export ")) for line in bundle.splitlines()):
        raise RuntimeError("vl_convert.javascript_bundle() returned a module with imports or "
                           "exports: it can no longer be wrapped as a classic script")
    return f'{BUNDLE_HEAD}\n(function () {{\n"use strict";\n{bundle}\n}})();\n'


# The first cell of a table row (cells do not nest), a tag, a hyphenated word.
_FIRST_CELL = re.compile(r"(<tr\b[^>]*>\s*<t[dh]\b[^>]*>)(.*?)(</t[dh]>)", re.S)
_TAG = re.compile(r"(<[^>]*>)")
_HYPHENATED = re.compile(r"[^\s<>]*[^\W_]-[^\W_][^\s<>]*")
# Math that MathJax reads from the text: a span inside it would break the formula.
_MATH = re.compile(r"\\[(\[]|\$|<math|mjx-")


def keep_words_whole(body: str) -> str:
    """`body` with every hyphenated word of a table's first column in a
    <span class="perflab-word"> (cells holding math are left as they are)."""
    def cell(m):
        inner = m.group(2)
        if "-" not in inner or _MATH.search(inner):
            return m.group(0)
        parts = _TAG.split(inner)  # text at even indices, tags at odd ones
        parts[::2] = [_HYPHENATED.sub(lambda w: f'<span class="perflab-word">{w.group(0)}</span>', t)
                      for t in parts[::2]]
        return m.group(1) + "".join(parts) + m.group(3)
    return _FIRST_CELL.sub(cell, body)


def _page(app, pagename, templatename, context, doctree) -> None:
    # Jupyter Book loads sphinx-thebe on every page with code cells even with thebe off:
    # its inline script is written twice (a console error) and names a CDN. The book
    # has no live kernel to connect to, so the page does without it.
    # (In place: these lists are the builder's, which add_js_file below appends to, and
    # which Sphinx restores before the next page.)
    scripts, styles = context.get("script_files", []), context.get("css_files", [])
    scripts[:] = [s for s in scripts if "thebe" not in str(s)
                  and "THEBE_JS_URL" not in getattr(s, "attributes", {}).get("body", "")]
    styles[:] = [c for c in styles if "thebe" not in str(c)]
    if "body" in context and "<tr" in context["body"]:
        context["body"] = keep_words_whole(context["body"])
    if doctree is not None and "perflab-explorer" in context.get("body", ""):
        # Classic scripts (a module is refused from file://), deferred: they run in this
        # order once the page is parsed, the explorer script after the bundle.
        app.add_js_file("perflab/vega-bundle.js", loading_method="defer")
        app.add_js_file("perflab/explorer.js", loading_method="defer")


def setup(app):
    app.connect("builder-inited", _write_assets)
    app.connect("html-page-context", _page)
    app.add_css_file("perflab/perflab.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
