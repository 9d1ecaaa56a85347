"""Drive the book's kernel-free explorers and check what their readouts answer.

The contract an explorer follows:
- a container ``<div class="perflab-explorer" data-explorer="<id>">`` holding
  ``<script type="application/json" class="perflab-explorer-data">`` with
  experiment, chapter, device_slug, match (the fixed row fields, ``variant`` among them),
  params ([{name, options}], the controls), fields (the metrics shown: names, or
  {name, ...} objects that also say how to format them), rows ([{params, values}], a row
  whose check failed with status "failed") and invalid ([{params, reason}]);
- one ``<select name="<param>">`` per param inside the container (they may appear a
  moment after load, as Vega's bound inputs do), option values the values as strings;
- a readout ``.perflab-explorer-readout`` with ``data-status`` recorded | invalid |
  not-recorded | failed; for a recorded row one ``<span data-field data-value>`` per field
  (data-value: the raw number as JSON); for an invalid one, text holding the reason;
- a note ``.perflab-explorer-note`` saying the explorer cannot run, which its script
  removes as it draws the controls (where the script never runs, the reader reads it).

An explorer inside a closed fold is unfolded first, as a reader would.

Every value shown is compared with the embedded row and with the recorded results file,
``results/<device_slug>/<chapter>/<experiment>.json``.
"""
from __future__ import annotations

import json
import math
import time
from pathlib import Path

from playwright.sync_api import Error as PlaywrightError, Locator, Page

REL_TOL = 1e-9

_CONTROLS = """(box, names) => {
    const readout = box.querySelector(".perflab-explorer-readout");
    const note = box.querySelector(".perflab-explorer-note");
    return {missing: names.filter(name => !box.querySelector(`select[name="${name}"]`)),
            readout: readout && {status: readout.dataset.status, text: readout.innerText},
            note: note && note.checkVisibility() ? note.innerText : null};
}"""
_UNFOLD = """box => { for (let d = box.closest("details"); d; d = d.parentElement.closest("details")) d.open = true; }"""
_READOUT_STATE = """el => ({
    status: el.dataset.status, text: el.innerText,
    values: Object.fromEntries([...el.querySelectorAll("[data-field]")]
        .map(span => [span.dataset.field, span.dataset.value]))})"""


def drive_explorers(page: Page, results_dir: Path, timeout_ms: int = 10_000) -> list[str]:
    """Drive every explorer on the page; return the problems found (empty: all answered).
    timeout_ms bounds each wait: for the controls to appear, for the readout to answer."""
    problems = []
    for box in page.locator(".perflab-explorer").all():
        name = f"explorer {box.get_attribute('data-explorer')!r}"
        problems += [f"{name}: {p}" for p in _drive(box, results_dir, timeout_ms)]
    return problems


def _drive(box: Locator, results_dir: Path, timeout_ms: int) -> list[str]:
    data = json.loads(box.locator("script.perflab-explorer-data").text_content())
    results = results_dir / data["device_slug"] / data["chapter"] / f"{data['experiment']}.json"
    if not results.is_file():
        return [f"no results file {results}"]
    recorded = json.loads(results.read_text())["rows"]
    box.evaluate(_UNFOLD)
    if problem := _wait_for_controls(box, [p["name"] for p in data["params"]], timeout_ms):
        return [problem]
    readout = box.locator(".perflab-explorer-readout")
    rows = [r for r in data["rows"] if r.get("status", "recorded") == "recorded"]
    if not rows:
        return ["embeds no recorded rows"]
    problems = []
    for row in _picks(rows):
        problems += _check_recorded(box, readout, data, row, recorded, timeout_ms)
    if data.get("invalid"):
        problems += _check_invalid(box, readout, data["invalid"][len(data["invalid"]) // 2], timeout_ms)
    return problems


def _poll(page: Page, read, done, timeout_ms: int):
    """Call read() until done(its result) or the timeout; return the last result."""
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        result = read()
        if done(result) or time.monotonic() > deadline:
            return result
        page.wait_for_timeout(50)


def _wait_for_controls(box: Locator, names: list[str], timeout_ms: int) -> str | None:
    """Wait for a select per param and the readout; the problem if they do not come (at
    once where the readout says the explorer failed: its script could not draw it)."""
    def settled(state):
        return state["readout"] is not None and (not state["missing"] or state["readout"]["status"] == "failed")

    state = _poll(box.page, lambda: box.evaluate(_CONTROLS, names), settled, timeout_ms)
    readout, missing, note = state["readout"], state["missing"], state["note"]
    says = f"; the page says “{note}”" if note else ""
    if readout and not missing:
        return f"its controls are there, but the page still says it cannot run: “{note}”" if note else None
    if readout and readout["status"] == "failed":
        return f"the explorer failed: {readout['text']!r}{says}"
    absent = [f'<select name="{n}">' for n in missing] + ([] if readout else ["readout"])
    return f"no {', '.join(absent)} after {timeout_ms / 1000:g} s{says}"


def _picks(rows: list[dict]) -> list[dict]:
    """The middle row and one other: the last, or the first where the middle is the last."""
    mid = len(rows) // 2
    other = len(rows) - 1 if mid < len(rows) - 1 else 0
    return [rows[mid]] + ([rows[other]] if other != mid else [])


def _option(value) -> str:
    """A param value as its option value: 128 -> "128", True -> "true"."""
    return json.dumps(value) if isinstance(value, bool) else str(value)


def _select(box: Locator, params: dict, timeout_ms: int) -> str | None:
    """Choose params in the controls; the problem, if one cannot be chosen."""
    for name, value in params.items():
        try:
            box.locator(f'select[name="{name}"]').select_option(_option(value), timeout=timeout_ms)
        except PlaywrightError as exc:
            return f"cannot select {name}={_option(value)}: {exc.message.splitlines()[0]}"
    return None


def _await_readout(readout: Locator, done, timeout_ms: int) -> dict:
    """The readout's state once done(state), or the last one seen at the timeout."""
    def read():
        state = readout.evaluate(_READOUT_STATE)
        state["values"] = {f: _parse(v) for f, v in state["values"].items()}
        return state
    return _poll(readout.page, read, done, timeout_ms)


def _parse(raw: str | None):
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        return raw


def _same(a, b) -> bool:
    numbers = all(isinstance(x, (int, float)) for x in (a, b))
    return a == b or (numbers and math.isclose(a, b, rel_tol=REL_TOL))


def _recorded_value(row: dict, field: str):
    """A field of a results-file row: a metric's value, else a top-level entry (rel_err)."""
    return row["metrics"][field]["value"] if field in row["metrics"] else row.get(field)


def _results_row(recorded: list[dict], match: dict, params: dict) -> tuple[dict | None, str]:
    """The one results-file row with `match` and `params` (variant is a row key)."""
    want = {k: v for k, v in {**match, **params}.items() if k != "variant"}
    hits = [r for r in recorded
            if r["variant"] == match.get("variant", r["variant"]) and want.items() <= r["params"].items()]
    return (hits[0], "") if len(hits) == 1 else (None, f"{len(hits)} rows of the results file match")


def _check_recorded(box, readout, data, row, recorded, timeout_ms) -> list[str]:
    params = row["params"]
    if problem := _select(box, params, timeout_ms):
        return [problem]
    fields = [f if isinstance(f, str) else f["name"] for f in data["fields"]]
    expected = {f: row["values"][f] for f in fields}
    state = _await_readout(readout, lambda s: s["status"] == "recorded" and all(
        _same(s["values"].get(f), v) for f, v in expected.items()), timeout_ms)
    if state["status"] != "recorded":
        return [f"{params}: the readout is {state['status']!r}, not 'recorded' ({state['text']!r})"]
    problems = []
    results_row, why = _results_row(recorded, data["match"], params)
    if results_row is None:
        problems.append(f"{params}: {why}")
    for field, value in expected.items():
        shown = state["values"].get(field, "nothing")
        if not _same(shown, value):
            problems.append(f"{params}: {field} shows {shown}, the embedded row has {value}")
        if results_row is None:
            continue
        in_file = _recorded_value(results_row, field)
        if not _same(shown, in_file):
            problems.append(f"{params}: {field} shows {shown}, the results file has {in_file}")
    return problems


def _check_invalid(box, readout, invalid, timeout_ms) -> list[str]:
    params, reason = invalid["params"], invalid["reason"]
    if problem := _select(box, params, timeout_ms):
        return [problem]
    state = _await_readout(readout, lambda s: s["status"] == "invalid" and reason in s["text"], timeout_ms)
    if state["status"] == "invalid" and reason in state["text"]:
        return []
    return [f"invalid {params}: the readout is {state['status']!r} with text {state['text']!r}; "
            f"expected 'invalid' and the reason {reason!r}"]
