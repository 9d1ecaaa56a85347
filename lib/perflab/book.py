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
