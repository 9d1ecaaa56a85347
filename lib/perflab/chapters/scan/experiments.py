"""The scan chapters' experiments: every scan and encoder checked, then raced with CUB."""
from __future__ import annotations

import math
import time

import numpy as np

from ... import race
from ...correctness import Check, compare, poison, seed
from ...device import current
from ...errors import ConfigError, refusal
from ...kernels import capture_launches, checked
from ...profile import REPLAYED, ncu_missing, profiled
from ...registry import experiment
from ...timing import rotations
from ...vendors import as_torch, cupy_accelerators, gpu_kernels, release, torch_or_none
from .. import machine
from . import ops, rle

DTYPES = tuple(ops.CTYPES)
SWEEP_SIZES = tuple(1 << k for k in range(10, 31, 2))
SERIAL_MAX = 1 << 24          # the seed's version takes ~10 ms per call past this
TUNE_BLOCKS = (128, 256, 512, 1024)
TUNE_ITEMS = (2, 4, 8, 12, 16, 24, 32)
RLE_KINDS = ("short", "long", "mixed", "equal", "distinct")
NUMPY_MAX = 1 << 25


# -- inputs and checks ------------------------------------------------------------------
def fresh(n: int, dtype: str, s: int, dist: str = "small"):
    """Integers in [-1000, 1000] ("small") or over int32 ("wrap"), floats in [0, 1)."""
    import cupy as cp
    rs = cp.random.RandomState(s)
    if dtype == "float32":
        return rs.random_sample(n, dtype=cp.float32)
    if dist == "wrap":
        return rs.randint(-2**31, 2**31 - 1, n, dtype=cp.int64).astype(dtype)
    return rs.randint(-1000, 1001, n, dtype=cp.int64).astype(dtype)


def float_tolerance(n: int) -> float:
    """Relative-error bound of a float32 scan of n: log2 n levels plus a √(n / 4096) walk."""
    return 8 * 2.0 ** -24 * (8 + math.log2(n + 1) + math.sqrt(n / 4096))


def _int_scan_wrong(out, x, inclusive: bool, chunk: int = 1 << 26) -> int:
    """Wrong elements of the integer scan `out` of `x`: out[i] - out[i-1] against x."""
    import cupy as cp
    n = x.size
    if n == 0:
        return 0
    u = cp.uint32 if x.dtype.itemsize == 4 else cp.uint64
    o, v = out.view(u), x.view(u)
    wrong = int(o[0] != (v[0] if inclusive else 0))
    for a in range(1, n, chunk):
        b = min(n, a + chunk)
        d = o[a:b] - o[a - 1:b - 1]
        want = v[a:b] if inclusive else v[a - 1:b - 1]
        wrong += int((d != want).sum())
    return wrong


def check_scan(out, x, inclusive: bool) -> Check:
    """Integers exactly (rel_err: the wrong fraction), floats within float_tolerance(n)."""
    import cupy as cp
    n = x.size
    if x.dtype.kind in "iu":
        wrong = _int_scan_wrong(out, x, inclusive)
        return Check(wrong == 0, wrong / max(n, 1), 0.0, 0)
    if n == 0:
        return Check(True, 0.0, float_tolerance(0), 0)
    ref = cp.cumsum(x, dtype=cp.float64)
    if not inclusive:
        ref = cp.concatenate((cp.zeros(1), ref[:-1]))
    c = compare(out, ref, "fp32")
    tol = float_tolerance(n)
    return Check(c.unwritten == 0 and math.isfinite(c.rel_err) and c.rel_err <= tol,
                 c.rel_err, tol, c.unwritten)


def check_rle(x, values, lengths, count) -> tuple[Check, int]:
    """(check, runs): the runs are the reference's and decode to x bit for bit."""
    n = x.size
    runs = int(count[0]) if n else 0
    ref_v, ref_l = rle.reference(x)
    ok = runs == ref_v.size
    if ok and runs:
        ok = bool((values[:runs] == ref_v).all()) and bool((lengths[:runs] == ref_l).all())
    if ok and n:
        back = rle.decode(values[:runs], lengths[:runs], n)
        ok = bool((back == x).all())
        del back
    return Check(ok, 0.0 if ok else 1.0, 0.0, 0), runs


# -- baselines: CUB through CuPy and PyTorch ---------------------------------------------
def vendor_scans(dtype: str) -> dict:
    """The vendors' inclusive scans `fn(a, out)` of `dtype`: CUB through CuPy, and PyTorch's."""
    import cupy as cp
    calls = {"cupy.cumsum (CUB)": lambda a, b: cp.cumsum(a, dtype=a.dtype, out=b)}
    torch = torch_or_none()
    if torch is not None:
        tdt = getattr(torch, dtype)
        calls["torch.cumsum"] = lambda a, b: torch.cumsum(as_torch(a), 0, dtype=tdt,
                                                          out=as_torch(b))
    return calls


def ours(variant, inclusive, block=ops.DEFAULT_BLOCK, items=None):
    return lambda a, b: ops.enqueue(a, b, inclusive, variant, block, items)


def timed_input(ctx, n: int, dtype: str = "int32"):
    """(seed, x, sets): a fresh input and the (input, output) pairs, more than L2 holds."""
    import cupy as cp
    s = seed()
    x = fresh(n, dtype, s)
    copies = rotations(2 * x.nbytes, current().l2_bytes) if ctx.timing else 1
    return s, x, [(x.copy() if k else x, cp.empty_like(x)) for k in range(copies)]


def raced_specs(name: str, dtype: str, inclusive: bool = True) -> list:
    return ops.specs(name, dtype, inclusive) if name in ops.RACED else []


#: the vendor scans, and the keys of their ratios in a race
VENDORS = {"cupy.cumsum (CUB)": "x_cub", "torch.cumsum": "x_torch"}


def scan_entry(name, fn, x, sets, inclusive, kernels, judge=None, **kw) -> race.Entry:
    """One scan `fn(x, out)` in a race, checked by `judge(out, x)` (check_scan) first."""
    out = sets[0][1]

    def check():
        poison(out)
        fn(x, out)
        return (judge or (lambda o, a: check_scan(o, a, inclusive)))(out, x)
    return race.Entry(name, fn, sets, check=check, kernels=kernels, bytes=2 * x.nbytes, **kw)


def vendor_entries(x, sets, names=tuple(VENDORS), row=True) -> list[race.Entry]:
    """The copy and the vendor scans of `names` as a race's baselines, checked."""
    out = sets[0][1]
    entries = [race.copy_of(sets, row=row)]
    for name, fn in vendor_scans(str(x.dtype)).items():
        if name in names:
            extra = {"gpu_kernels": gpu_kernels(lambda fn=fn: fn(x, out))} if row else {}
            if row and name == "cupy.cumsum (CUB)":
                extra["cupy_accelerators"] = cupy_accelerators()
            entries.append(scan_entry(name, fn, x, sets, True, [], baseline=VENDORS[name],
                                      row=row, extra=extra))
    return entries


# -- experiments -------------------------------------------------------------------------
@experiment("scan.check", title="Every scan, checked: sizes, dtypes, inclusive and exclusive",
            small={"sizes": (0, 1, 31, 1000003)},
            kernels=lambda: [s for dt in DTYPES for inc in (True, False)
                             for v in ("single-pass", "three-kernel", "serial")
                             for s in ops.specs(v, dt, inc)],
            reader={})          # every check is seconds; the page counts them all
def check(ctx, sizes=(0, 1, 31, 4097, 1000003, 1 << 24)):
    """Each scan × dtype × inclusive/exclusive × size, integers also wrapping."""
    for n in sizes:
        for dt in DTYPES:
            for dist in ("small", "wrap") if dt == "int32" else ("small",):
                check_rows(ctx, n, dt, [(v, inc) for inc in (True, False) for v in ALL
                                        if v != "serial" or n <= 1 << 22], input=dist)


#: the scans check_rows runs: ours (RACED) and the vendors', in their rows' order
ALL = ops.RACED + tuple(VENDORS)
NUMPY_SCAN = "NumPy float32 (CPU, left to right)"


def check_rows(ctx, n, dtype, pairs, metrics=lambda out, x, dt: {}, **params):
    """Each scan of `pairs` ((name, inclusive)) checked on a fresh input, a row each."""
    import cupy as cp
    s = seed()
    x = fresh(n, dtype, s, params.get("input", "small"))
    out = cp.empty_like(x)
    numpy = {NUMPY_SCAN: lambda a, b: b.set(np.cumsum(cp.asnumpy(a), dtype=np.float32))}
    for name, inc in pairs:
        fn = {**{v: ours(v, inc) for v in ops.RACED}, **(vendor_scans(dtype) if inc else {}),
              **numpy}.get(name)
        if fn is not None:
            t0 = time.perf_counter()
            poison(out)
            with capture_launches() as launches:
                checked(lambda: fn(x, out), "scan")
            chk = check_scan(out, x, inc)
            ctx.row(variant=name, params={"n": n, "dtype": dtype, "inclusive": inc, **params},
                    metrics=metrics(out, x, time.perf_counter() - t0), check=chk,
                    kernels=raced_specs(name, dtype, inc), launch=launches, seed=s)
    del x, out
    release()


@experiment("scan.float_order", title="Summation order and the float32 result",
            small={"sizes": (1 << 16,)},
            kernels=lambda: [s for v in ops.RACED for s in ops.specs(v, "float32", True)],
            reader={})          # three float32 scans per size, no timing
def float_order(ctx, sizes=(1 << 16, 1 << 20, 1 << 24)):
    """One float32 input scanned by each, and by NumPy left to right, against float64."""
    import cupy as cp

    def metrics(out, x, _):
        ref = float(cp.cumsum(x, dtype=cp.float64)[-1])
        return {"rel_err_last": (abs(float(out[-1]) - ref) / abs(ref), "1"),
                "tolerance": (float_tolerance(x.size), "1")}
    for n in sizes:
        check_rows(ctx, n, "float32", [(v, True) for v in ALL + (NUMPY_SCAN,)], metrics)


def time_set(ctx, n, dtype, inclusive_set, variants, budget_s, **part):
    """Our `variants`, the vendor scans and the copy, checked, then raced: the rows."""
    s, x, sets = timed_input(ctx, n, dtype)
    useful = 2 * x.nbytes
    entries = []
    for inc in inclusive_set:
        for v in variants:
            if v == "serial" and n > SERIAL_MAX:
                continue
            moved = ops.traffic_bytes(v, n, x.itemsize) if v in ops.RACED else useful
            name = v if len(inclusive_set) == 1 else \
                f"{v} {'inclusive' if inc else 'exclusive'}"
            entries.append(scan_entry(name, ours(v, inc), x, sets, inc, ops.specs(v, dtype, inc),
                                      params={"inclusive": inc, **part},
                                      metrics={"bytes_moved": (moved, "B")}))
    for e in vendor_entries(x, sets):
        e.params, e.metrics = {"inclusive": True, **part}, {"bytes_moved": (useful, "B")}
        entries.append(e)
    race.run(ctx, entries, params={"n": n, "dtype": dtype}, budget_s=budget_s, seed=s)
    del sets, x, entries
    release()


@experiment("scan.sizes", title="int32 inclusive scan from 2^10 to 2^30 elements",
            small={"sizes": (1000003,)},
            kernels=lambda: [s for v in ops.RACED for s in ops.specs(v, "int32", True)],
            # the sizes the page quotes (2^10, 2^24 for 01, 2^28) and a few between; not 2^30
            reader={"sizes": (1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 28)})
def sizes(ctx, sizes=SWEEP_SIZES):
    for n in sizes:
        time_set(ctx, n, "int32", (True,), ops.RACED, budget_s=0.6)


@experiment("scan.dtypes", title="int32, int64, float32; inclusive and exclusive",
            small={"n": 1000003},
            kernels=lambda: [s for dt in DTYPES for inc in (True, False)
                             for v in ("single-pass", "three-kernel")
                             for s in ops.specs(v, dt, inc)],
            reader={})          # one size; its table is the page's only use
def dtypes(ctx, n=1 << 28):
    for dt in DTYPES:
        time_set(ctx, n, dt, (True, False), ("single-pass", "three-kernel"), budget_s=1.2)


LOOKBACK_SHAPES = tuple((lb, g) for lb in ops.LOOKBACKS for g in ops.GRIDS)


@experiment("scan.lookback", title="What the single pass waits on: look-back width, grid",
            small={"n": 1000003}, sweep=True,
            kernels=lambda: [ops.single_pass_spec("int32", inclusive=True, lookback=lb, grid=g)
                             for lb, g in LOOKBACK_SHAPES],
            # reader={}: four shapes of one race at 2^28, about two seconds
            reader={})
def lookback(ctx, n=1 << 28):
    s, x, sets = timed_input(ctx, n)
    entries = [scan_entry(f"{lb} look-back, {g}",
                          lambda a, b, lb=lb, g=g: ops.enqueue(a, b, True, "single-pass",
                                                               lookback=lb, grid=g),
                          x, sets, True,
                          [ops.single_pass_spec("int32", inclusive=True, lookback=lb, grid=g)],
                          params={"lookback": lb, "grid": g})
               for lb, g in LOOKBACK_SHAPES]
    entries += vendor_entries(x, sets, ("torch.cumsum",), row=False)
    race.run(ctx, entries, params={"n": n, "dtype": "int32"}, budget_s=1.5, seed=s)
    del sets, x, entries
    release()


def tune_reason(dtype: str, block: int, items: int) -> str | None:
    return refusal(ops.check_tile, dtype, block, items)


def tune_one(ctx, x, sets, block: int, items: int) -> dict:
    """One tile shape of 03 raced with the copy, or its row saying why it cannot run."""
    n = x.size
    params = {"n": n, "dtype": "int32", "block": block, "items": items}
    why = tune_reason("int32", block, items)
    if why:
        return ctx.row(variant="single-pass", params=params, metrics={}, invalid=why)
    moved = ops.traffic_bytes("single-pass", n, 4, block, items)
    entry = scan_entry("single-pass", ours("single-pass", True, block, items), x, sets, True,
                       [ops.single_pass_spec("int32", block, items, True)],
                       metrics={"bytes_moved": (moved, "B")})
    rows = race.run(ctx, [entry, race.copy_of(sets, row=False)], params=params,
                    budget_s=0.3, rounds=5)
    return rows["single-pass"]


@experiment("scan.tune", title="Single-pass scan: block size and ITEMS_PER_THREAD",
            small={"n": 100003, "blocks": (128,), "items": (2, 4, 16)}, sweep=True,
            kernels=lambda: [ops.single_pass_spec("int32", b, i, True) for b in TUNE_BLOCKS
                             for i in TUNE_ITEMS if tune_reason("int32", b, i) is None],
            # the best and worst tiles the page quotes, and the default between them
            reader={"blocks": (128, 256), "items": (4, 16, 32)})
def tune(ctx, n=1 << 28, blocks=TUNE_BLOCKS, items=TUNE_ITEMS):
    _, x, sets = timed_input(ctx, n)
    for b in blocks:
        for i in items:
            tune_one(ctx, x, sets, b, i)
    del sets, x
    release()


@experiment("scan.rle", title="Run-length encoding: fused, unfused, PyTorch, NumPy",
            small={"sizes": (1000003,)}, kernels=rle.all_specs,
            # the size the page quotes and draws (2^25)
            reader={"sizes": (1 << 25,)})
def rle_exp(ctx, sizes=(1 << 20, 1 << 25, 1 << 28), kinds=RLE_KINDS):
    for n in sizes:
        enc = rle.Encoder(n)
        race_encoders(ctx, n, kinds, {v: ({}, RLE_SPECS[v](), {"variant": v}, enc)
                                      for v in ("fused", "unfused")},
                      budget_s=0.8, copy_row=False, numpy=True)
        del enc
        release()


RLE_SPECS = {"fused": lambda: [rle.fused_spec(), rle.lengths_spec()],
             "unfused": lambda: (rle.unfused_specs()
                                 + [ops.single_pass_spec("int32", inclusive=False),
                                    rle.lengths_spec()]),
             "bulk": lambda: [rle.bulk_spec()],
             "room": lambda: [rle.room_spec()]}


def runs_metrics(state: dict, moved=None):
    """A race entry's metrics, read after every check: the runs the last checked encoder
    found (in `state`) and, with `moved`, the bytes `moved(runs)`."""
    def metrics() -> dict:
        runs = state.get("runs", 0)
        return {"runs": (runs, "1")} | ({"bytes_moved": (moved(runs), "B")} if moved else {})
    return metrics


def encoder_entry(name, enc, options, x, kernels, state: dict, moved=True, **kw) -> race.Entry:
    """`enc.encode(x, **options)` in a race, checked (its runs left in `state`); with
    `moved`, the bytes its variant moves by design (rle.traffic_bytes)."""
    def run(a):
        enc.encode(a, check=False, **options)

    def judge():
        enc.poison()
        run(x)
        chk, state["runs"] = check_rle(x, enc.values, enc.lengths, enc.count)
        state["last"] = enc
        return chk
    bytes_of = moved and (lambda runs: rle.traffic_bytes(options["variant"], x.size, runs))
    return race.Entry(name, run, [(x,)], check=judge, kernels=kernels,
                      metrics=runs_metrics(state, bytes_of), bytes=4 * x.size, **kw)


def torch_runs(torch, tx, enc, runs: int) -> Check:
    """torch.unique_consecutive of `tx` against the `runs` runs `enc` wrote."""
    vals, counts = torch.unique_consecutive(tx, return_counts=True)
    ok = (vals.numel() == runs and bool((torch.from_dlpack(enc.values[:runs]) == vals).all())
          and bool((torch.from_dlpack(enc.lengths[:runs]).long() == counts).all()))
    return Check(ok, 0.0 if ok else 1.0, 0.0, 0)


def torch_rle_entry(x, state: dict) -> race.Entry | None:
    """torch.unique_consecutive, a race's x_torch, checked (None without PyTorch)."""
    torch = torch_or_none()
    if torch is None:
        return None
    tx = as_torch(x)
    return race.Entry("torch.unique_consecutive",
                      lambda a: torch.unique_consecutive(as_torch(a), return_counts=True),
                      [(x,)], check=lambda: torch_runs(torch, tx, state["last"], state["runs"]),
                      bytes=4 * x.size, baseline="x_torch",
                      metrics=runs_metrics(state, lambda runs: 4 * x.size + 12 * runs),
                      extra={"gpu_kernels": gpu_kernels(
                          lambda: torch.unique_consecutive(tx, return_counts=True))})


@experiment("scan.large", title="Past 2^31: byte offsets and element counts",
            small={"sizes": (4097,)},
            kernels=lambda: (ops.specs("single-pass", "int32", True)
                             + ops.specs("single-pass", "int32", False)
                             + ops.specs("three-kernel", "int32", True) + rle.all_specs()),
            reader={})          # the claim past 2^31 is the point of the run
def large(ctx, sizes=((1 << 30) + 1, (1 << 31) + 5)):
    """Scans whose byte offsets or count pass 2^31; the encoder, or its refusal."""
    for n in sizes:
        if 3 * 4 * n > current().total_mem_bytes:
            continue
        check_rows(ctx, n, "int32", [("single-pass", True), ("single-pass", False)]
                   + [("three-kernel", True)] * (n < 1 << 31),
                   lambda out, x, t: {"check_s": (t, "s")}, input="wrap")
        encode_once(ctx, n, seed(), "fused", {"n": n, "dtype": "int32", "inclusive": True,
                                              "input": "short runs"})


def profile_missing():
    return ncu_missing()


def profile_rows(ctx, segments, kernels_of, extra=(), derive=None) -> None:
    """Each segment (variant, n) once under Nsight Compute (`profiling`), a row each."""
    plan = tuple({"variant": v, "n": n} for v, n in segments)
    for seg in profiled(ctx, plan, None, "perflab.chapters.scan.profiling", extra):
        metrics = dict(seg["metrics"])
        metrics.update(derive(seg["n"], metrics) if derive else {})
        ctx.row(variant=seg["variant"], params={"n": seg["n"], "dtype": "int32"},
                metrics=metrics, kernels=kernels_of(seg["variant"]),
                profiled_kernels=", ".join(seg["kernels"]))


@experiment("scan.profile", title="Where the seed's scan loses: profiler counters",
            small={"segments": ()}, requires=profile_missing,
            kernels=lambda: [s for v in ops.RACED for s in ops.specs(v, "int32", True)],
            # a recorded check: a reader's run shows the recorded counters of the segments
            # the page quotes; plan="full" profiles where Nsight Compute is installed
            reader={}, replay_reader=REPLAYED)
def profile(ctx, segments=(("serial", 1 << 24), ("three-kernel", 1 << 24),
                           ("single-pass", 1 << 24), ("cupy.cumsum (CUB)", 1 << 24))):
    profile_rows(ctx, segments, lambda v: raced_specs(v, "int32"),
                 extra=("threads_per_inst", "dram_throughput_pct"))


@experiment("scan.stress", title="1000 back-to-back single-pass scans",
            small={"calls": 20, "sizes": (1000003,)},
            kernels=lambda: (ops.specs("single-pass", "int32", True)
                             + ops.specs("bulk", "int32", True)),
            # 1000 calls at one size: the page quotes the calls and the wrong ones
            reader={"sizes": (1000003,)})
def stress(ctx, calls=1000, sizes=(1000003, 1 << 24), variants=("single-pass", "bulk")):
    """`calls` scans back to back over four rotating inputs, each last element checked."""
    import cupy as cp
    for v in available(variants):
        for n in sizes:
            s = seed()
            xs = [fresh(n, "int32", s + k, "wrap") for k in range(4)]
            sums = [((int(x.astype(cp.int64).sum()) + 2**31) % 2**32) - 2**31 for x in xs]
            outs = [cp.empty_like(x) for x in xs]

            def call(k, v=v):
                ops.enqueue(xs[k % 4], outs[k % 4], True, v)
                return outs[k % 4][-1:]
            back_to_back(ctx, v, calls, call, lambda k: sums[k % 4],
                         lambda: sum(_int_scan_wrong(o, x, True) for o, x in zip(outs, xs)),
                         params={"n": n, "calls": calls}, kernels=ops.specs(v, "int32", True),
                         seed=s)
            del xs, outs
            cp.get_default_memory_pool().free_all_blocks()


# -- what the later experiments (bulk.py, encoders.py) share --------------------------
def available(variants) -> tuple:
    """`variants` less those this GPU cannot run (rle.SM90)."""
    return tuple(v for v in variants if v not in rle.SM90
                 or ops.bulk_missing() is None)


def back_to_back(ctx, name: str, calls: int, call, want, wrong_after, **row) -> None:
    """`calls` calls `call(k)` with no host wait, each against `want(k)`: one row."""
    import cupy as cp
    got = cp.empty(calls, dtype=cp.int32)
    t0 = time.perf_counter()
    for k in range(calls):
        got[k:k + 1] = call(k)
    checked(lambda: None, f"{name} back to back")
    wall = time.perf_counter() - t0
    wrong = int((cp.asnumpy(got).astype(np.int64)
                 != np.array([want(k) for k in range(calls)], dtype=np.int64)).sum())
    wrong += wrong_after()
    ctx.row(variant=name, metrics={"wall_s": (wall, "s"), "wrong_calls": (wrong, "1")},
            check=Check(wrong == 0, float(wrong), 0.0, 0), **row)


def check_tile_scans(out, x, tile: int) -> Check:
    """Every tile of `tile` elements scanned alone, exactly (the diagnostic's check)."""
    import cupy as cp
    n = x.size
    full, wrong = n - n % tile, 0
    if full:
        wrong += int((out[:full].reshape(-1, tile)
                      != cp.cumsum(x[:full].reshape(-1, tile), axis=1, dtype=x.dtype)).sum())
    if n > full:
        wrong += int((out[full:] != cp.cumsum(x[full:], dtype=x.dtype)).sum())
    return Check(wrong == 0, wrong / max(n, 1), 0.0, 0)


def encode_once(ctx, n: int, s: int, mode: str, params: dict, kind: str = "short") -> None:
    """One checked encode of n int32 (runs of `kind`) by `mode`, or its refusal: a row."""
    import cupy as cp
    variant = f"rle {mode}"
    try:
        enc = rle.Encoder(n)
    except ConfigError as exc:
        ctx.row(variant=variant, params=params, metrics={}, invalid=str(exc))
        return
    x = rle.make_runs(n, kind, np.random.default_rng(s)) if n else cp.empty(0, cp.int32)
    enc.poison()
    with capture_launches() as launches:
        checked(lambda: enc.encode(x, mode), variant)
    chk, runs = check_rle(x, enc.values, enc.lengths, enc.count)
    ctx.row(variant=variant, params=params, metrics={"runs": (runs, "1")}, check=chk,
            kernels=RLE_SPECS[mode](), launch=launches, seed=s)
    del x, enc
    cp.get_default_memory_pool().free_all_blocks()


def floor_entry(x, state: dict) -> race.Entry:
    """The floor, baseline "of_floor": the input read once, 8 bytes written a run."""
    held = {}

    def check():
        held["call"], judge = machine.read_write(x, 8 * state.get("runs", 0))
        return judge()
    return race.Entry("floor", lambda a: held["call"](), [(x,)], check=check,
                      kernels=[machine.read_write_spec()], bytes=4 * x.size,
                      baseline="of_floor",
                      metrics=runs_metrics(state, lambda runs: 4 * x.size + 8 * runs),
                      extra={"note": "the floor, not an encoder: it reads the input once "
                                     "and writes the runs' bytes"})


def race_encoders(ctx, n: int, kinds, entries: dict, baselines=(), budget_s: float = 1.2,
                  ceiling: bool = False, floor: bool = False, copy_row: bool = True,
                  numpy: bool = False) -> None:
    """`entries` (name -> (row params, kernels, encode options, encoder)), each with the
    bytes it moves, `baselines` (variants on one encoder of their own), torch, the copy, the
    read ceiling and the floor raced on each kind of runs, checked first."""
    import cupy as cp
    rng = np.random.default_rng(seed())
    base = rle.Encoder(n) if baselines else None
    for kind in kinds:
        s = int(rng.integers(0, 2**31))
        x = rle.make_runs(n, kind, np.random.default_rng(s))
        state = {}
        race_entries = [encoder_entry(name, enc, opts, x, specs, state, params=params)
                        for name, (params, specs, opts, enc) in entries.items()]
        race_entries += [encoder_entry(v, base, {"variant": v}, x, RLE_SPECS[v](), state,
                                       moved=False) for v in baselines]
        race_entries += [e for e in (torch_rle_entry(x, state),) if e is not None]
        race_entries.append(race.copy_of([(x, cp.empty_like(x))], row=copy_row))
        if ceiling:
            race_entries.append(race.Entry(
                "read ceiling", lambda a, f=machine.read_once(x): f(), [(x,)],
                kernels=[machine.read_spec()], bytes=4 * n, metrics={"bytes_moved": (4 * n, "B")},
                extra={"note": "a ceiling, not an encoder: it reads the input once"}))
        if floor:
            race_entries.append(floor_entry(x, state))
        rows = race.run(ctx, race_entries, params={"n": n, "kind": kind}, budget_s=budget_s,
                        seed=s)
        if numpy and ctx.timing and n <= NUMPY_MAX and kind in ("short", "long", "mixed"):
            hx = cp.asnumpy(x)                  # NumPy's encoder, timed alone after it
            hv, _ = rle.numpy_encode(hx)
            ok = hv.size == state.get("runs")
            med = ctx.time_host(lambda: rle.numpy_encode(hx), budget_s=1.0)["median_ms"]
            metrics = {"runs": (hv.size, "1"), "median_ms": (med, "ms"),
                       "GB/s": (4 * n / (med * 1e-3) / 1e9, "GB/s")}
            torch_ms = (rows.get("torch.unique_consecutive", {}).get("metrics", {})
                        .get("median_ms", {}).get("value"))
            if torch_ms:
                metrics["torch_ms_over_numpy"] = (torch_ms / med, "1")
            ctx.row(variant="NumPy (CPU)", params={"n": n, "kind": kind}, metrics=metrics,
                    check=Check(ok, 0.0 if ok else 1.0, 0.0, 0), kernels=[], seed=s)
        del x, race_entries
        release()
    del base
    cp.get_default_memory_pool().free_all_blocks()
