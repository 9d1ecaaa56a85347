"""@TITLE@: the page's facts, tables and figures, computed from the rows (live or
replayed). A page glues what its facts functions return (PAGE_FACTS) and quotes every key
of it; its targets are data (TARGETS), each a fact and what is wanted of it."""
from __future__ import annotations

from ... import plots
from ...targets import Target


def scale_facts(rows) -> dict:
    """The numbers the page quotes from @SLUG@.scale: the kernel's best rate and, in the
    same rounds, its fraction of the copy of the same bytes."""
    ours = rows[rows["variant"] == "scale"]
    best = ours.loc[ours["TB/s"].idxmax()]
    return {"best_tbs": float(best["TB/s"]), "of_copy": float(best["of_copy"]) * 100}


def rate_figure(ax, rows) -> None:
    """TB/s (read + write) of the kernel and of the copy, by size."""
    for v, style in (("scale", "o-"), ("copy", "s--")):
        d = rows[rows["variant"] == v]
        ax.plot(d["n"], d["TB/s"], style, label=v,
                color=plots.COLORS["kernel"] if v == "scale" else "0.4")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("elements")
    ax.set_ylabel("TB/s (read + write)")
    ax.legend(fontsize=9)


#: the page's facts: (function, the experiments whose rows it takes, in order)
PAGE_FACTS = {"@CHAPTER@": ((scale_facts, ("@SLUG@.scale",)),)}

#: what the chapter sets out to show: each target a fact of the page and what is wanted of it
TARGETS = {"@CHAPTER@": (
    Target("y = a·x: the best rate, × the copy of the same bytes in the same rounds", "of_copy",
           at_least=90, digits=0, unit=" %"),
)}
