// The lab's explorers in the rendered book (perflab/explorer.py writes the markup):
// every .perflab-explorer carries its rows and the reasons invalid combinations cannot
// run as JSON; Vega-Lite draws the chart and its bound controls, and this script answers
// each selection from that JSON. No kernel, no network. A classic script (with the Vega
// bundle, sphinxext.py), so that it also runs in a page opened from disk (file://).
(function () {
  "use strict";

  function esc(s) {
    return String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})[c]);
  }

  function format(v, f) {
    if (v === null || v === undefined) return "—";
    const body = f.style === "exp" ? v.toExponential(f.digits) : v.toFixed(f.digits);
    return f.prefix + body + f.suffix;
  }

  function key(params, names) {
    return names.map((n) => String(params[n]).toLowerCase()).join("|");
  }

  function mount(el) {
    const data = JSON.parse(el.querySelector("script.perflab-explorer-data").textContent);
    const names = data.params.map((p) => p.name);
    const rows = new Map(data.rows.map((r) => [key(r.params, names), r]));
    const invalid = new Map(data.invalid.map((r) => [key(r.params, names), r.reason]));
    const chosen = Object.fromEntries(data.params.map((p) => [p.name, p.value]));
    const readout = el.querySelector(".perflab-explorer-readout");
    // What a control shows for an option (the payload's labels), as explorer.py writes it.
    function label(n, v) {
      const p = data.params.find((q) => q.name === n);
      const i = p.options.map((o) => String(o).toLowerCase()).indexOf(String(v).toLowerCase());
      return p.labels && i >= 0 ? p.labels[i] : String(v);
    }

    function show() {
      const k = key(chosen, names);
      const head = names.map((n) => n + "=" + label(n, chosen[n])).join(" ");
      const row = rows.get(k);
      let status, body, source = "";
      if (row) {
        status = row.status;
        body = data.fields.map((f) =>
          '<span data-field="' + esc(f.name) + '" data-value="' + esc(JSON.stringify(row.values[f.name])) +
          '">' + esc(format(row.values[f.name], f)) + "</span>").join(" · ");
        if (status === "failed") body += " · <b>failed its check</b>";
        source = row.source;
      } else if (invalid.has(k)) {
        status = "invalid";
        body = "cannot run: " + esc(invalid.get(k));
      } else {
        status = "not-recorded";
        body = "not in the recorded run; on a machine with an NVIDIA GPU this explorer measures it live";
      }
      readout.dataset.status = status;
      readout.innerHTML = '<span class="perflab-explorer-choice">' + esc(head) + "</span>: " + body +
        (source ? '<div class="perflab-explorer-source">' + esc(source) + "</div>" : "");
    }

    if (typeof window.vegaEmbed !== "function") {
      readout.dataset.status = "failed";
      readout.textContent = "the explorer's chart library did not load";
      console.error("perflab explorer: vegaEmbed is missing");
      return;
    }
    // The script runs: the note saying it cannot goes.
    el.querySelectorAll(".perflab-explorer-note").forEach((note) => note.remove());
    window.vegaEmbed(el.querySelector(".perflab-explorer-chart"), data.vega,
                     {actions: false, renderer: "svg"}).then((res) => {
      names.forEach((n) => res.view.addSignalListener(n, (_, value) => { chosen[n] = value; show(); }));
      show();
    }).catch((err) => {
      readout.dataset.status = "failed";
      readout.textContent = "the explorer could not draw its chart: " + err;
      console.error(err);
    });
  }

  function mountAll() { document.querySelectorAll(".perflab-explorer").forEach(mount); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
  else mountAll();
})();
