"""Explorers: pick a configuration, read its measurement — in the rendered book with no
Python kernel and no network, and in Jupyter, where on a GPU it measures live.

One explorer is a set of rows of an experiment (replayed or live), the parameters a
reader chooses (each with its options), the fields shown for the chosen row, and the
reason a combination cannot run (the chapter's own check, so the page gives the same
reason the Python call would). The chart is Vega-Lite, built with Altair:

- in the book (`make book` sets PERFLAB_BUILD=1) it is a static block: the rows and the
  reasons travel inside the page as JSON, the controls are Vega-Lite's bound inputs and
  `_static/perflab/explorer.js` answers a selection from that JSON, with the Vega bundle
  served from the book itself (perflab.sphinxext);
- in Jupyter it is an `altair.JupyterChart` (offline: its JavaScript comes from the
  vl-convert package; where that is not installed, from the network, with a one-line
  note: an explorer never stops a live notebook) with the same controls; with a GPU and a `measure` function, a
  button compiles, checks and times the chosen configuration and adds it to the chart.

    ex = Explorer("tiles", rows_df, experiment="slug.sweep",
                  match={"variant": "tiled", "n": 4096},       # the rows it shows
                  params={"BM": [64, 128, 256], "BN": [64, 128, 256]},
                  fields=[Field("TFLOP/s", digits=1, suffix=" TFLOP/s")],
                  reason=lambda p: None or "why not")
    ex.show()
"""
from __future__ import annotations

import html
import itertools
import json
import math
import os
from dataclasses import dataclass
from typing import Callable

import pandas as pd

from . import device, lab
from .errors import ConfigError

#: What the page says where the explorer's script does not run (JavaScript off, or
#: _static/ missing); explorer.js removes it as it draws the controls.
NOTE = ('<p class="perflab-explorer-note">This explorer cannot run here: its script did not '
        'run (JavaScript is off, or the book\'s _static folder is missing), so it has no '
        'controls and the readout below shows only the default configuration.</p>')

#: The colour of the chosen configuration in every explorer chart; the others are grey-blue.
SELECTED, OTHER = "#d62728", "#9ecae1"
#: The chart's axis titles for the metrics' column names (others are shown as they are).
AXIS_TITLES = {"median_ms": "median (ms)", "median_us": "median (µs)", "of_copy": "× copy",
               "of_best": "× the best", "useful_frac": "useful fraction",
               "inflight_per_sm": "in flight per SM", "blocks_per_sm": "blocks per SM"}
#: Text in the chart at 12 CSS px (9 pt), the book's smallest figure text.
CHART_FONT_PX = 12


@dataclass(frozen=True)
class Field:
    """A metric of the chosen row: `digits` after the point, "fixed" or "exp" notation."""
    name: str
    digits: int = 2
    style: str = "fixed"
    prefix: str = ""
    suffix: str = ""

    def format(self, v) -> str:
        if v is None:
            return "—"
        body = f"{v:.{self.digits}e}" if self.style == "exp" else f"{v:.{self.digits}f}"
        return f"{self.prefix}{body}{self.suffix}"


def _plain(v):
    """A JSON-able Python scalar: NumPy scalars unwrapped, whole floats as ints, NaN None."""
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float):
        if not math.isfinite(v):
            return None
        if v.is_integer():
            return int(v)
    return v


def _key(params: dict, names) -> tuple:
    return tuple(str(_plain(params[n])).lower() for n in names)


class Explorer:
    def __init__(self, id: str, frame: pd.DataFrame, *, experiment: str, match: dict,
                 params: dict[str, list], fields: list[Field],
                 reason: Callable[[dict], str | None], title: str = "",
                 measure: Callable[[dict], pd.DataFrame] | None = None,
                 defaults: dict | None = None, y: str | None = None,
                 labels: dict[str, Callable] | None = None):
        if not params:
            raise ValueError(f"explorer {id}: no parameters to choose")
        self.id, self.experiment, self.match = id, experiment, dict(match)
        self.params = {k: [_plain(o) for o in opts] for k, opts in params.items()}
        self.fields, self.reason, self.title, self.measure = list(fields), reason, title, measure
        self.y = y or self.fields[0].name
        self.defaults = {k: _plain((defaults or {}).get(k, opts[0]))
                         for k, opts in self.params.items()}
        # What a control shows for each option (e.g. 16384 -> "16 KiB"); the value itself
        # is what rows and results files hold.
        self.labels = {k: [str((labels or {}).get(k, str)(o)) for o in opts]
                       for k, opts in self.params.items()}
        self.frame = frame.assign(_source=lab.caption(frame))

    # -- the rows ---------------------------------------------------------------------
    def rows(self) -> list[dict]:
        """The rows of the frame this explorer shows: params, values, and how it ran."""
        d = self.frame
        for k, v in self.match.items():
            d = d[d[k] == v] if k in d else d.iloc[0:0]
        out = []
        for _, r in d.iterrows():
            if any(k not in r or pd.isna(r[k]) for k in self.params):
                continue
            invalid = r.get("invalid")
            correct = r.get("correct")
            failed = correct is not None and not pd.isna(correct) and not bool(correct)
            status = ("invalid" if isinstance(invalid, str) else
                      "failed" if failed else "recorded")
            out.append({"params": {k: _plain(r[k]) for k in self.params},
                        "values": {f.name: _plain(r.get(f.name)) for f in self.fields},
                        "status": status, "reason": invalid if status == "invalid" else None,
                        "source": r["_source"]})
        return out

    def invalid(self) -> list[dict]:
        """Every combination of the options that cannot run, with the reason."""
        out = []
        names = list(self.params)
        for combo in itertools.product(*self.params.values()):
            p = dict(zip(names, combo))
            why = self.reason(p)
            if why:
                out.append({"params": p, "reason": why})
        return out

    def lookup(self, chosen: dict) -> dict:
        """What the explorer shows for `chosen`: status, values, reason (the same answer
        explorer.js gives in the page)."""
        names = list(self.params)
        k = _key(chosen, names)
        for r in self.rows():
            if _key(r["params"], names) == k:
                return r
        for r in self.invalid():
            if _key(r["params"], names) == k:
                return {"status": "invalid", "reason": r["reason"], "values": {}}
        return {"status": "not-recorded", "values": {}, "reason": None}

    # -- what the page carries ----------------------------------------------------------
    def payload(self) -> dict:
        from .registry import get

        rows = self.rows()
        return {
            "id": self.id, "title": self.title, "experiment": self.experiment,
            "chapter": get(self.experiment).chapter,
            "device_slug": self.frame.attrs.get("source", {}).get("slug", "?"),
            "match": self.match,
            "params": [{"name": k, "options": v, "labels": self.labels[k],
                        "value": self.defaults[k]} for k, v in self.params.items()],
            "fields": [f.__dict__ for f in self.fields],
            "rows": [r for r in rows if r["status"] != "invalid"],
            "invalid": self.invalid() + [{"params": r["params"], "reason": r["reason"]}
                                         for r in rows if r["status"] == "invalid"],
            "vega": self.chart(rows).to_dict(),
        }

    def chart(self, rows: list[dict] | None = None):
        """A bar per recorded configuration (of `rows`, default self.rows()), sorted by the
        first field; the chosen one in red. The controls are the chart's bound parameters."""
        import altair as alt

        recs = []
        for r in self.rows() if rows is None else rows:
            if r["status"] != "recorded" or r["values"].get(self.y) is None:
                continue
            recs.append({**r["params"], self.y: r["values"][self.y],
                         "configuration": " ".join(f"{k}={v}" for k, v in r["params"].items())})
        data = pd.DataFrame(recs)
        sel = [alt.param(name=k, value=self.defaults[k],
                         bind=alt.binding_select(options=opts, labels=self.labels[k],
                                                 name=f"{k} "))
               for k, opts in self.params.items()]
        chosen = " && ".join(f"toString(datum['{k}']) == toString({k})" for k in self.params)
        return (alt.Chart(data)
                .mark_bar()
                .encode(x=alt.X("configuration:N", sort="-y",
                                axis=alt.Axis(labels=False, ticks=False, domain=False),
                                title="every recorded configuration, highest first"),
                        y=alt.Y(f"{self.y}:Q", title=AXIS_TITLES.get(self.y, self.y),
                                axis=alt.Axis(tickCount=3)),
                        color=alt.condition(chosen, alt.value(SELECTED), alt.value(OTHER)),
                        tooltip=["configuration", alt.Tooltip(f"{self.y}:Q", format=".3g")])
                .add_params(*sel)
                .properties(width=600, height=110)
                .configure_axis(labelFontSize=CHART_FONT_PX, titleFontSize=CHART_FONT_PX,
                                titleFontWeight="normal"))

    def label(self, name: str, value) -> str:
        """The control's text for `value` of parameter `name`."""
        opts = [str(o).lower() for o in self.params[name]]
        v = str(_plain(value)).lower()
        return self.labels[name][opts.index(v)] if v in opts else str(value)

    def readout_html(self, chosen: dict) -> str:
        """The readout block for `chosen` (explorer.js rebuilds the same markup)."""
        r = self.lookup(chosen)
        head = " ".join(f"{k}={self.label(k, chosen[k])}" for k in self.params)
        if r["status"] in ("recorded", "failed"):
            parts = [f'<span data-field="{html.escape(f.name)}" '
                     f'data-value="{html.escape(json.dumps(r["values"].get(f.name)))}">'
                     f'{html.escape(f.format(r["values"].get(f.name)))}</span>'
                     for f in self.fields]
            body = " · ".join(parts) + (" · <b>failed its check</b>" if r["status"] == "failed" else "")
        elif r["status"] == "invalid":
            body = f"cannot run: {html.escape(r['reason'])}"
        else:
            body = ("not in the recorded run; on a machine with an NVIDIA GPU this explorer "
                    "measures it live")
        source = (f'<div class="perflab-explorer-source">{html.escape(r["source"])}</div>'
                  if r.get("source") else "")
        return (f'<div class="perflab-explorer-readout" data-status="{r["status"]}">'
                f'<span class="perflab-explorer-choice">{html.escape(head)}</span>: {body}'
                f'{source}</div>')

    def html(self) -> str:
        """The static explorer: data, the note explorer.js removes, readout (for the
        defaults), chart container."""
        data = json.dumps(self.payload(), allow_nan=False).replace("</", "<\\/")
        title = f'<div class="perflab-explorer-title">{html.escape(self.title)}</div>' \
            if self.title else ""
        return (f'<div class="perflab-explorer" data-explorer="{html.escape(self.id)}">'
                f'{title}<script type="application/json" class="perflab-explorer-data">'
                f'{data}</script>{NOTE}{self.readout_html(self.defaults)}'
                f'<div class="perflab-explorer-chart"></div></div>')

    # -- showing it -----------------------------------------------------------------------
    def show(self):
        """The static block in a book build; the Jupyter widget otherwise."""
        from IPython.display import HTML, display

        if os.environ.get("PERFLAB_BUILD") == "1":
            display(HTML(self.html()))
        else:
            display(self.widget())

    def widget(self):
        """ipywidgets: the chart (JupyterChart), the readout, and on a GPU with a
        `measure` function a button that measures the chosen configuration live."""
        import altair as alt
        import ipywidgets as W

        offline(alt)
        jchart = alt.JupyterChart(self.chart())
        readout = W.HTML(self.readout_html(self.defaults))
        chosen = dict(self.defaults)

        def changed(change):
            chosen[change["name"]] = _plain(change["new"])
            readout.value = self.readout_html(chosen)

        jchart.params.observe(changed, names=list(self.params))
        parts = [jchart, readout]
        if self.measure is not None and device.mode() == "live":
            button = W.Button(description="compile · check · time", layout=W.Layout(width="220px"))

            def clicked(_):
                if self.reason(chosen):
                    readout.value = self.readout_html(chosen)
                    return
                button.disabled, button.description = True, "measuring…"
                try:
                    self.add(self.measure(dict(chosen)))
                    jchart.chart = self.chart()
                    readout.value = self.readout_html(chosen)
                except ConfigError as exc:
                    readout.value = f"<b>cannot run</b>: {html.escape(str(exc))}"
                finally:
                    button.disabled, button.description = False, "compile · check · time"

            button.on_click(clicked)
            parts.insert(1, button)
        return W.VBox(parts)

    def add(self, rows: pd.DataFrame) -> None:
        """Put newly measured rows in front of the recorded ones (they win the lookup)."""
        merged = pd.concat([rows.assign(_source=lab.caption(rows)), self.frame],
                           ignore_index=True)
        merged.attrs = self.frame.attrs
        self.frame = merged


#: Whether the note that Vega loads from the network was printed (once a process).
ONLINE_NOTE = {"shown": False}


def offline(alt) -> bool:
    """JupyterChart offline (Vega's JavaScript from vl-convert-python) where it can be;
    else the default renderer, which loads it from the network, and a one-line note, once.
    (The book's static block needs neither: it serves its own Vega bundle.)"""
    try:
        alt.JupyterChart.enable_offline()
        return True
    except ImportError as exc:
        if not ONLINE_NOTE["shown"]:
            ONLINE_NOTE["shown"] = True
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            print(f"explorer: Vega's JavaScript loads from the network ({first[:120]}; "
                  "pip install vl-convert-python to embed it)")
        return False
