"""`python -m perflab execute`: each chapter executed in a Jupyter kernel, timed, counted."""
from __future__ import annotations

import pytest

from perflab import execute, paths, store

CHAPTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# Demo

```{code-cell} ipython3
import time
time.sleep(0.2)
print("setup, not shown as a result")
```

```{code-cell} ipython3
:tags: [remove-cell]

from IPython.display import HTML
HTML("<p>set up, not shown in the book</p>")
```

```{code-cell} ipython3
import matplotlib
matplotlib.use("module://matplotlib_inline.backend_inline")
import matplotlib.pyplot as plt
time.sleep(0.4)
fig, ax = plt.subplots()
ax.plot([1, 2])
plt.show()
```
"""


@pytest.fixture
def chapters(tmp_path, monkeypatch):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "01-demo.md").write_text(CHAPTER)
    (tmp_path / "chapters" / "02-broken.md").write_text(
        CHAPTER.replace("time.sleep(0.2)", "raise ValueError('broken on purpose')"))
    (tmp_path / "chapters" / "99-execution.md").write_text("# not a chapter\n")
    monkeypatch.setattr(paths, "ROOT", tmp_path)
    monkeypatch.setattr(paths, "RESULTS", tmp_path / "results")
    monkeypatch.setenv("PERFLAB_MODE", "replay")
    return tmp_path


def test_chapter_files_in_order_and_unknown_names_refused(chapters):
    assert [p.stem for p in execute.chapter_files()] == ["01-demo", "02-broken"]
    with pytest.raises(ValueError, match="no chapter.*03-none"):
        execute.chapter_files(["03-none"])


def test_a_chapter_is_timed_counted_and_recorded(chapters):
    rows = execute.execute(record=True, progress=lambda *_: None, timeout=120)
    demo, broken = rows
    m = {k: v["value"] for k, v in demo["metrics"].items()}
    assert demo["variant"] == "01-demo" and demo["correct"] and demo["error"] is None
    assert m["cells"] == 3 and m["figures"] == 1
    # the slowest cell first, named by its first line of code: the figure's (0.4 s)
    assert demo["slowest"].startswith("cell ") and "(import matplotlib)" in demo["slowest"].split(";")[0]
    # The first output a reader sees is the figure (after both sleeps): the hidden cell's
    # HTML before it does not count.
    assert 0.6 < m["first_output_s"] <= m["seconds"]
    assert not broken["correct"] and "broken on purpose" in broken["error"]   # in its first cell
    assert broken["metrics"]["cells"]["value"] == 1 and broken["metrics"]["first_output_s"]["value"] is None
    (path,) = (chapters / "results").glob("*/99-execution/book.execute.json")
    doc = store.load(path)
    assert [r["variant"] for r in doc["rows"]] == ["01-demo", "02-broken"]
    assert doc["rows"][0]["provenance"]["mode"] == "replay"


def test_a_signal_to_this_process_stops_the_run_and_says_so(chapters):
    """SIGTERM to the executing process (a time limit) while a cell runs: nbclient shuts
    the kernel down under the cell, and its cleanup fails with a bare AssertionError. The
    row says "interrupted" and names the cell, and the run stops there."""
    (chapters / "chapters" / "02-broken.md").unlink()
    (chapters / "chapters" / "03-stopped.md").write_text(CHAPTER.replace(
        "time.sleep(0.2)", "import os, signal; os.kill(os.getppid(), signal.SIGTERM); "
                           "time.sleep(5)"))
    seen = []
    with pytest.raises(KeyboardInterrupt, match="03-stopped: interrupted"):
        execute.execute(record=True, progress=seen.append, timeout=120)
    (path,) = (chapters / "results").glob("*/99-execution/book.execute.json")
    rows = store.load(path)["rows"]
    assert [r["variant"] for r in rows] == ["01-demo", "03-stopped"]
    assert rows[1]["error"].startswith("interrupted: this process got SIGTERM or SIGINT "
                                       "(in cell 1: import time)")


def test_the_execution_targets_read_the_slowest_chapter_and_the_latest_first_output():
    import pandas as pd

    from perflab import execute, targets
    runs = pd.DataFrame({"variant": ["01-a", "02-b", "03-c"], "seconds": [95.5, 40.0, 20.0],
                         "first_output_s": [1.5, 35.7, None], "correct": [True, True, False]})
    f = execute.facts(runs)
    assert (f["slowest"], f["max_seconds"]) == ("01-a", 95.5)
    assert (f["latest"], f["max_first_output_s"]) == ("02-b", 35.7)
    assert f["total_min"] == 155.5 / 60 and f["n_chapters"] == 3 and f["n_failed"] == 1
    t = targets.table(execute.TARGETS, f)
    assert list(t["met"]) == [False, False, True, False]
    assert "01-a" in t["target"][0] and "02-b" in t["target"][1]
    with pytest.raises(ValueError, match="no executed chapter"):
        execute.facts(runs.iloc[:0])
