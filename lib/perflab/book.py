"""Small helpers for the chapters' prose: numbers quoted in the text are glued from rows."""
from __future__ import annotations


def glue(name: str, value) -> None:
    """Glue `value` for `{glue:text}` references, as a plain Python number or string
    (NumPy scalars would be formatted from their repr, 'np.float64(…)')."""
    from myst_nb import glue as _glue

    if hasattr(value, "item"):
        value = value.item()
    _glue(name, value, display=False)


def glue_all(values: dict) -> None:
    """Glue every name -> value of `values` (a chapter's `summary` of its rows)."""
    for name, value in values.items():
        glue(name, value)


class Facts(dict):
    """The facts a page has glued so far, section by section: `add` glues the new ones and
    keeps them for the page's closing tables; a fact glued twice is an error (two sections
    would then quote two different numbers under one name)."""

    def add(self, values: dict) -> None:
        twice = sorted(set(values) & set(self))
        if twice:
            raise KeyError(f"facts glued twice on this page: {twice}")
        glue_all(values)
        self.update(values)


# ---- which facts a page produces, and which it cites ---------------------------------------

def page_facts(entries, run) -> dict:
    """Every fact of a page: each (facts function, inputs) of its report's PAGE_FACTS
    entry called on its inputs, an input being an experiment's name (its rows:
    `run(name)`, perflab.run or a replay) or a function of `run` (the machine chapter's
    ceilings, say). A fact two functions give is an error, as on the page."""
    out = {}
    for fn, inputs in entries:
        got = fn(*(run(i) if isinstance(i, str) else i(run) for i in inputs))
        twice = sorted(set(got) & set(out))
        if twice:
            raise KeyError(f"{fn.__name__} gives facts another function gave: {twice}")
        out.update(got)
    return out


def cited(page: str, *, root=None) -> set[str]:
    """The facts chapters/<page>.md quotes: the keys of its glue roles ({glue:text}`key:fmt`,
    {glue}`key`). Figures glued by the page's cells ({glue:figure} directives) are not
    facts."""
    import re

    from . import paths
    text = ((root or paths.ROOT) / "chapters" / f"{page}.md").read_text()
    return set(re.findall(r"\{glue(?::text|:any)?\}`([^`:]+)", text))
