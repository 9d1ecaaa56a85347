// A stand-in explorer for the driver's own test: it follows the contract in
// explorer_driver.py with plain selects and answers from the embedded JSON.
// data-bug on the container breaks it on purpose: "wrong-value" shows every value 1%
// too high, "no-reason" marks an invalid configuration without saying why, "no-chart"
// fails as explorer.js does when its chart library is missing (no controls, the note
// saying it cannot run stays), "keeps-note" draws its controls but leaves that note.
for (const box of document.querySelectorAll(".perflab-explorer")) {
  const data = JSON.parse(box.querySelector(".perflab-explorer-data").textContent);
  const readout = box.querySelector(".perflab-explorer-readout");
  if (box.dataset.bug === "no-chart") {
    readout.dataset.status = "failed";
    readout.textContent = "the chart library did not load";
    continue;
  }
  if (box.dataset.bug !== "keeps-note") box.querySelectorAll(".perflab-explorer-note").forEach(n => n.remove());
  const chosen = entry => Object.entries(entry.params).every(
    ([name, value]) => box.querySelector(`select[name="${name}"]`).value === String(value));

  const update = () => {
    const row = data.rows.find(chosen), invalid = data.invalid.find(chosen);
    if (row) {
      readout.dataset.status = row.status || "recorded";
      readout.replaceChildren(...data.fields.map(f => f.name || f).map(field => {
        const value = box.dataset.bug === "wrong-value" ? row.values[field] * 1.01 : row.values[field];
        const span = document.createElement("span");
        span.dataset.field = field;
        span.dataset.value = JSON.stringify(value);
        span.textContent = `${field} ${value.toPrecision(4)} `;
        return span;
      }));
    } else if (invalid) {
      readout.dataset.status = "invalid";
      readout.textContent = box.dataset.bug === "no-reason" ? "not a valid configuration" : invalid.reason;
    } else {
      readout.dataset.status = "not-recorded";
      readout.textContent = "not recorded";
    }
  };

  // The controls come a moment after load, as Vega's bound inputs do.
  setTimeout(() => {
    for (const param of data.params) {
      const select = document.createElement("select");
      select.name = param.name;
      for (const option of param.options) select.add(new Option(String(option), String(option)));
      select.addEventListener("change", update);
      box.prepend(select);
    }
    update();
  }, 300);
}
