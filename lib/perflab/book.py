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
