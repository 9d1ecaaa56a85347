"""The reader's GPU beside the reference GPU.

Live on a GPU, a chapter's key figures draw what this GPU measured beside what the
reference GPU recorded for the same experiment (the recordings a build without a GPU
replays: `results/nvidia-h200/` unless PERFLAB_DEVICE names another device), each source
stamped with its own line. Without a GPU, or live on the reference GPU itself, the same
calls give the one frame, and the figure is the one the book shows:

    frames = lab.beside(ladder)         # [ladder] replayed; [live, recorded] on another GPU
    shown = lab.fill_not_run(ladder)    # what this GPU could not run: the recorded rows, and why
    plots.stamp(fig, *frames)           # one provenance line per source

Absolute numbers of two GPUs are seldom comparable; a figure beside another GPU shows each
device's numbers as fractions of its own measured ceilings or libraries (a rung against
its own cuBLAS, a copy against its own cudaMemcpy), measured in the same run as the rows.

A kernel that cannot run on the reader's GPU (the Hopper rungs on an earlier one) leaves a
row that says why, `invalid`, from the check that refused it (for an SGEMM rung,
`Variant.check`: its ConfigError's text, and its `short` form where it has one, in
`invalid_short`). `fill_not_run` puts the reference's recorded rows of the same variant and
parameters in its place, marked `measured_on` (the reference's slug; every other row has
this GPU's) and `not_run_reason` / `not_run_short` (the refusal, in full and in a few words),
so that a figure or a table shows the recorded number, drawn apart, with the reason, and
its stamp names the recording (`lab.captions`). `lab.run` itself never mixes devices: a
number the prose quotes comes from one GPU.
"""
from __future__ import annotations

import copy
import math

import pandas as pd

from . import lab, store

#: What a row that could not run here is called on a figure when its check gave no short
#: reason and its reason is too long for a label.
NOT_RUN = "its check refused it"
#: The longest reason a figure's label takes as it stands.
SHORT_CHARS = 48


def reference_slug() -> str:
    """The reference device: the one whose recordings a build without a GPU replays."""
    return lab.replay_device()


def experiment_of(df: pd.DataFrame) -> str | None:
    """The experiment behind a frame of `lab.run` / `lab.replay`."""
    if "experiment" in df and len(df):
        return str(df["experiment"].iloc[0])
    return df.attrs.get("experiment")


def is_live(df: pd.DataFrame) -> bool:
    return df.attrs.get("source", {}).get("kind") == "live"


def why_alone(df: pd.DataFrame) -> str | None:
    """Why the rows of `df` have no recorded frame beside them (None when they have one):
    they are the recording (no GPU here), this GPU is the reference, or the reference has
    no recording of the experiment."""
    if not is_live(df):
        return "replayed: the recorded rows are the only ones"
    ref = reference_slug()
    if df.attrs.get("source", {}).get("slug") == ref:
        return f"measured live on the reference GPU ({ref})"
    name = experiment_of(df)
    if name is None:
        return "no rows"
    if store.find(name, ref) is None:
        return f"no recording of {name} on {ref} under results/{ref}/"
    return None


_RECORDED: dict[tuple, pd.DataFrame] = {}


def _recorded(name: str, slug: str) -> pd.DataFrame:
    """`lab.replay(name, device_slug=slug)`, read once per version of its file: a page
    asks for it from a figure and a table."""
    path = store.find(name, slug)
    key = (name, slug, str(path), path.stat().st_mtime_ns)
    if key not in _RECORDED:
        _RECORDED.clear()   # an old version of the file is not asked for again
        _RECORDED[key] = lab.replay(name, device_slug=slug)
    df = _RECORDED[key]
    out = df.copy()
    out.attrs = copy.deepcopy(df.attrs)
    return out


def reference(df: pd.DataFrame) -> pd.DataFrame | None:
    """The reference GPU's recorded frame of the experiment behind the live frame `df`
    (all its recorded rows), or None where there is none to show beside it (`why_alone`
    says why)."""
    if why_alone(df) is not None:
        return None
    return _recorded(experiment_of(df), reference_slug())


def beside(df: pd.DataFrame) -> list[pd.DataFrame]:
    """The frames a key figure draws, this GPU first: `[df]` replayed (or live on the
    reference GPU, or where it has no recording), `[df, reference(df)]` live on another
    GPU. `plots.stamp(fig, *beside(df))` names each source."""
    ref = reference(df)
    return [df] if ref is None else [df, ref]


def device_name(df: pd.DataFrame) -> str:
    """The device of a frame, as its stamp names it ("NVIDIA H200")."""
    return str(df.attrs.get("source", {}).get("device", "?"))


def short_name(df_or_name) -> str:
    """A device name for a legend or a label: the vendor's prefix dropped ("H200")."""
    name = df_or_name if isinstance(df_or_name, str) else device_name(df_or_name)
    return name.replace("NVIDIA ", "", 1).strip()


def label(df: pd.DataFrame) -> str:
    """A frame's device and how its numbers were had: "NVIDIA H200, recorded" or
    "NVIDIA GeForce RTX 4090, measured live"."""
    return f"{device_name(df)}, {'measured live' if is_live(df) else 'recorded'}"


def short_reason(reason: str, short=None, variant: str = "") -> str:
    """A refusal in a few words, for a figure's label: the check's own short form where it
    gave one, else the reason's first clause (without the variant's name in front) where
    that is short, else NOT_RUN."""
    if isinstance(short, str) and short:
        return short
    text = str(reason)
    if variant and text.startswith(f"{variant}: "):
        text = text[len(variant) + 2:]
    text = text.split("; ")[0].split(". ")[0].strip()
    return text if 0 < len(text) <= SHORT_CHARS else NOT_RUN


def _hashable(v):
    try:
        hash(v)
        return v
    except TypeError:           # a parameter recorded as a mapping
        return repr(v)


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def fill_not_run(df: pd.DataFrame, ref: pd.DataFrame | None = None) -> pd.DataFrame:
    """`df` with every row that could not run on this GPU (its `invalid` says why)
    replaced by the reference GPU's recorded rows of the same variant and parameters, where
    the reference ran them. Every row then says where it was measured (`measured_on`, a
    device slug) and the borrowed ones why (`not_run_reason`, `not_run_short`); the
    frame's stamp (`lab.captions`) names the recording too. Replayed, live on the reference
    GPU, or where nothing was refused, `df` itself comes back."""
    if "invalid" not in df or not df["invalid"].notna().any():
        return df
    ref = reference(df) if ref is None else ref
    if ref is None or not len(ref):
        return df
    here = df.attrs.get("source", {}).get("slug", "?")
    there = ref.attrs.get("source", {}).get("slug", reference_slug())
    params = [p for p in df.attrs.get("params", []) if p in df]
    ran = ref[ref["invalid"].isna()] if "invalid" in ref else ref
    ref_params = [p for p in ref.attrs.get("params", []) if p in ran]

    def key(rec, names):        # a row's variant and the parameters it has, by name
        return (rec["variant"],) + tuple((p, _hashable(rec[p])) for p in sorted(names)
                                         if not _missing(rec.get(p)))

    recorded: dict[tuple, list] = {}
    for r in ran.to_dict("records"):
        recorded.setdefault(key(r, ref_params), []).append(r)
    records, borrowed = [], []
    for rec in df.to_dict("records"):
        reason = rec.get("invalid")
        match = [] if _missing(reason) else recorded.get(key(rec, params), [])
        if not match:
            records.append({**rec, "measured_on": here, "not_run_reason": None,
                            "not_run_short": None})
            continue
        short = short_reason(reason, rec.get("invalid_short"), rec["variant"])
        for r in match:
            records.append({**r, "measured_on": there, "not_run_reason": reason,
                            "not_run_short": short})
        borrowed.append(rec["variant"])
    if not borrowed:
        return df
    columns = list(dict.fromkeys([*df.columns, *ran.columns, "measured_on", "not_run_reason",
                                  "not_run_short"]))
    out = pd.DataFrame.from_records(records, columns=columns)
    out.attrs = copy.deepcopy(df.attrs)
    out.attrs["borrowed"] = [{"slug": there, "device": device_name(ref),
                              "variants": list(dict.fromkeys(borrowed)),
                              "caption": lab.caption(ref)}]
    return out


def measured_here(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of `df` this GPU measured (those `fill_not_run` borrowed left out)."""
    if "not_run_reason" not in df:
        return df
    return df[df["not_run_reason"].isna()]


def not_run(df: pd.DataFrame) -> pd.DataFrame:
    """The rows `fill_not_run` borrowed from the reference GPU (none: an empty frame)."""
    if "not_run_reason" not in df:
        return df.iloc[0:0]
    return df[df["not_run_reason"].notna()]
