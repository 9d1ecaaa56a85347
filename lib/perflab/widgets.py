"""The tile-size widget: pick a configuration of an SGEMM rung; on a GPU it compiles,
checks and times that instantiation; without one it looks the configuration up in the
recorded sweep. An invalid combination gets the reason, never a crash."""
from __future__ import annotations

import functools

from . import device, lab, registry, store
from .errors import PerflabError


def explore(variant_name: str, params: dict, size=(4096, 4096, 4096)) -> dict:
    """One configuration → a result dict (status, TFLOP/s, vs cuBLAS, rel_err, message)."""
    from .sgemm import get

    v = get(variant_name)
    params = v.params(**params)
    M, N, K = size
    try:
        v.check(params, M, N, K)
    except PerflabError as exc:
        return {"status": "invalid", "message": str(exc)}
    if device.mode() == "live":
        return _live(v, params, tuple(size))
    return _recorded(variant_name, params, tuple(size))


def _live(v, params, size) -> dict:
    from .experiments.sgemm import _run_variant

    ctx, prob, base = _live_state(size)
    try:
        row = _run_variant(ctx, prob, v, params, base)
    except PerflabError as exc:
        return {"status": "invalid", "message": str(exc)}
    return _summary(row, "measured live")


@functools.lru_cache(maxsize=2)
def _live_state(size):
    from .experiments.sgemm import Problem, _baselines

    exp = registry.get("sgemm.sweep")
    run = store.new_run(device.current().as_dict())
    ctx = registry.Context(exp, run)
    prob = Problem(*size, timing=True)
    return ctx, prob, _baselines(ctx, prob)


def _recorded(name, params, size) -> dict:
    try:
        df = lab.replay("sgemm.sweep")
    except PerflabError as exc:
        return {"status": "unavailable", "message": str(exc)}
    sel = df[(df["variant"] == name) & (df["M"] == size[0]) & (df["N"] == size[1])
             & (df["K"] == size[2])]
    for k, val in params.items():
        if k in sel:
            sel = sel[sel[k] == val]
    if sel.empty:
        return {"status": "not recorded",
                "message": f"{name} {params} at {size} is not in the recorded sweep; "
                           "on a machine with an NVIDIA GPU this widget measures it live"}
    r = sel.iloc[0]
    return {"status": "recorded" if r["correct"] else "failed check",
            "TFLOP/s": r.get("TFLOP/s"), "vs_cublas_fp32": r.get("vs_cublas_fp32"),
            "rel_err": r["rel_err"], "message": lab.caption(df)}


def _summary(row, how) -> dict:
    m = row["metrics"]
    return {"status": "ok" if row["correct"] else "failed check",
            "TFLOP/s": m.get("TFLOP/s", {}).get("value"),
            "vs_cublas_fp32": m.get("vs_cublas_fp32", {}).get("value"),
            "rel_err": row["rel_err"], "message": how}


def format_result(name: str, params: dict, res: dict) -> str:
    parts = [f"{name} {params}: {res['status']}"]
    if res.get("TFLOP/s") is not None:
        parts.append(f"{res['TFLOP/s']:.1f} TFLOP/s")
    if res.get("vs_cublas_fp32") is not None:
        parts.append(f"{res['vs_cublas_fp32']:.2f}× cuBLAS FP32")
    if res.get("rel_err") is not None:
        parts.append(f"rel. error {res['rel_err']:.2e}")
    return " · ".join(parts) + (f"\n{res['message']}" if res.get("message") else "")


def tile_explorer(variant_name: str, size=(4096, 4096, 4096)):
    """An ipywidgets panel: one dropdown per tile parameter and a button."""
    import ipywidgets as W
    from .sgemm import get

    v = get(variant_name)
    drops = {}
    for k, vals in v.param_space.items():
        opts = list(dict.fromkeys([v.default_params[k], *vals]))   # the default first
        drops[k] = W.Dropdown(options=opts, value=opts[0], description=k,
                              layout=W.Layout(width="160px"))
    live = device.mode() == "live"
    button = W.Button(description="compile · check · time" if live else "look up recorded",
                      layout=W.Layout(width="220px"))
    out = W.Output()

    def on_click(_):
        params = {k: d.value for k, d in drops.items()}
        with out:
            out.clear_output()
            print(format_result(variant_name, params, explore(variant_name, params, size)))

    button.on_click(on_click)
    note = W.HTML(f"<b>{v.label}</b> at M×N×K = {'×'.join(map(str, size))} — "
                  + ("live on this GPU" if live else "no GPU here: browsing the recorded sweep"))
    return W.VBox([note, W.HBox(list(drops.values())), button, out])
