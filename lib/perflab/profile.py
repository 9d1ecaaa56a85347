"""Profiler metrics, recorded like timings: Nsight Compute (`ncu`) runs a child process
that launches each kernel once, and its per-kernel counters become rows of an experiment.

The child launches a named marker kernel before every segment (one variant × size), so
the parent can cut ncu's per-kernel table into segments without relying on NVTX filters.
Clocks are left as they are (`--clock-control none`): the lab never changes a GPU's
settings.

What a segment runs is the chapter's business: `profile(segments, child="module")` runs
`python -m perflab.profile module plan.json` under ncu, and that module's
`prepare(segments)` returns one callable per segment, everything compiled and every input
made (from the host: no cuRAND kernels to filter out) before the first marker.

Which counters: METRICS on every run, and any other of the catalogue (COUNTERS) that a
chapter names: `profile(plan, child=..., extra=("branch_instructions", "inst_executed"))`.
"""
from __future__ import annotations

import csv
import importlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from .errors import PerflabError

MARKER = "perflab_marker"

#: The catalogue of every counter the lab records: name -> (ncu metric, unit the lab
#: records, scale from ncu's unit to the lab's). `profile` records METRICS on every run
#: and, besides them, those a chapter names (`profile(..., extra=names)`).
COUNTERS = {
    # recorded on every run: time, throughput, traffic, hit rates, occupancy, pipes, stalls
    "duration_us": ("gpu__time_duration.sum", "us", None),
    "sm_throughput_pct": ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", None),
    "dram_read_MB": ("dram__bytes_read.sum", "MB", None),
    "dram_write_MB": ("dram__bytes_write.sum", "MB", None),
    "l2_MB": ("lts__t_bytes.sum", "MB", None),
    "gld_sectors_per_request": ("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio", "sectors", None),
    "gld_requests": ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "1", None),
    "gld_sectors": ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "1", None),
    "l1_hit_pct": ("l1tex__t_sector_hit_rate.pct", "%", None),
    "l2_hit_pct": ("lts__t_sector_hit_rate.pct", "%", None),
    "smem_ld_instructions": ("smsp__inst_executed_op_shared_ld.sum", "1", None),
    "smem_ld_wavefronts": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "1", None),
    "smem_ld_bank_conflicts": ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "1", None),
    "achieved_occupancy_pct": ("sm__warps_active.avg.pct_of_peak_sustained_active", "%", None),
    "issue_active_pct": ("smsp__issue_active.avg.pct_of_peak_sustained_active", "%", None),
    "fma_pipe_pct": ("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "%", None),
    "tensor_pipe_pct": ("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "%", None),
    "stall_long_scoreboard": ("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", "warps/issue", None),
    "stall_mio_throttle": ("smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio", "warps/issue", None),
    "stall_short_scoreboard": ("smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio", "warps/issue", None),
    "stall_barrier": ("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", "warps/issue", None),
    "stall_math_pipe_throttle": ("smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio", "warps/issue", None),
    "stall_not_selected": ("smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio", "warps/issue", None),
    "stall_wait": ("smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", "warps/issue", None),
    "stall_lg_throttle": ("smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio", "warps/issue", None),
    # instructions, the threads active in them, branches
    "inst_executed": ("smsp__inst_executed.sum", "1", None),
    "threads_per_inst": ("smsp__thread_inst_executed_per_inst_executed.ratio", "threads", None),
    "branch_instructions": ("smsp__sass_inst_executed_op_branch.sum", "1", None),
    # The share of executed branches whose target is the same for every active thread of
    # the warp (ncu's "Branch Efficiency").
    "branch_efficiency_pct": ("smsp__sass_average_branch_targets_threads_uniform.pct", "%", None),
    "divergent_branch_targets": ("smsp__sass_branch_targets_threads_divergent.sum", "1", None),
    # FP32 instructions by opcode (threads), and by pipe (warps)
    "fadd_thread_inst": ("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "1", None),
    "fmul_thread_inst": ("smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "1", None),
    "ffma_thread_inst": ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "1", None),
    "pipe_fma_inst": ("smsp__inst_executed_pipe_fma.sum", "1", None),
    "pipe_alu_inst": ("smsp__inst_executed_pipe_alu.sum", "1", None),
    "lsu_pipe_pct": ("sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", "%", None),
    "sm_cycles": ("sm__cycles_elapsed.avg", "1", None),
    "theoretical_occupancy_pct": ("sm__maximum_warps_per_active_cycle_pct", "%", None),
    # global loads and stores
    "gld_instructions": ("smsp__inst_executed_op_global_ld.sum", "1", None),
    "l1_wavefronts_global_ld": ("l1tex__data_pipe_lsu_wavefronts_mem_lg_cmd_read.sum", "1", None),
    "gst_sectors_per_request": ("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio", "sectors", None),
    "gst_requests": ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "1", None),
    "gst_sectors": ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "1", None),
    # shared-memory stores
    "smem_st_instructions": ("smsp__inst_executed_op_shared_st.sum", "1", None),
    "smem_st_wavefronts": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "1", None),
    "smem_st_bank_conflicts": ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "1", None),
    # L1, L2 and DRAM: throughput as a share of the peak, L2 sectors
    "l1tex_throughput_pct": ("l1tex__throughput.avg.pct_of_peak_sustained_active", "%", None),
    "l2_throughput_pct": ("lts__throughput.avg.pct_of_peak_sustained_elapsed", "%", None),
    "dram_throughput_pct": ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", None),
    "gpu_dram_throughput_pct": ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "%", None),
    "l2_read_sectors": ("lts__t_sectors_op_read.sum", "1", None),
    "l2_write_sectors": ("lts__t_sectors_op_write.sum", "1", None),
    # the MIO-throttle stall as the warp-state section and the stall sampling give it
    "mio_throttle_latency": ("smsp__average_warp_latency_issue_stalled_mio_throttle.ratio", "cycles", None),
    "pcsamp_mio_throttle": ("smsp__pcsamp_warps_issue_stalled_mio_throttle", "samples", None),
    "pcsamp_total": ("smsp__pcsamp_sample_count", "samples", None),
}

_UNIT_SCALE = {("ns", "us"): 1e-3, ("usecond", "us"): 1.0, ("nsecond", "us"): 1e-3,
               ("msecond", "us"): 1e3, ("byte", "MB"): 1e-6, ("Kbyte", "MB"): 1e-3,
               ("Mbyte", "MB"): 1.0, ("Gbyte", "MB"): 1e3, ("KB", "MB"): 1e-3,
               ("MB", "MB"): 1.0, ("GB", "MB"): 1e3}


#: Why a reader's live run shows a profiler experiment's recorded counters, for those
#: registered as recorded checks (registry: replay_reader): plan="full" profiles live.
REPLAYED = "recorded counters, each segment replayed under Nsight Compute, tens of seconds in all"


def ncu_missing() -> str | None:
    """Why the profiler cannot run here (for an experiment's `requires`), or None."""
    return None if shutil.which("ncu") else "Nsight Compute (ncu) is not installed here"


def ncu_path() -> str:
    path = shutil.which("ncu")
    if path is None:
        raise PerflabError("Nsight Compute (ncu) is not on PATH; it ships with the CUDA "
                           "toolkit. Without it, the profile is replayed from results/.")
    return path


def available_metrics(ncu: str) -> set[str]:
    """Base names of the metrics this GPU's counters provide."""
    out = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True, timeout=120)
    return set(re.findall(r"^\s*([a-z0-9]+__[a-z0-9_]+)", out.stdout, re.MULTILINE))


def _base(metric: str) -> str:
    return metric.split(".")[0]


def counters(names) -> dict:
    """The catalogue's counters `names`, in their order and its form. A name may be a pair
    (row name, catalogue name): the counter recorded under the name a chapter's rows give
    it."""
    out = {}
    for n in names:
        row, key = (n, n) if isinstance(n, str) else n
        if key not in COUNTERS:
            raise PerflabError(f"no counter {key!r} in perflab.profile.COUNTERS; "
                               f"it has {', '.join(COUNTERS)}")
        out[row] = COUNTERS[key]
    return out


#: The counters every profile records, in the catalogue's form.
METRICS = counters((
    "duration_us", "sm_throughput_pct", "dram_read_MB", "dram_write_MB", "l2_MB",
    "gld_sectors_per_request", "gld_requests", "gld_sectors", "l1_hit_pct", "l2_hit_pct",
    "smem_ld_instructions", "smem_ld_wavefronts", "smem_ld_bank_conflicts",
    "achieved_occupancy_pct", "issue_active_pct", "fma_pipe_pct", "tensor_pipe_pct",
    "stall_long_scoreboard", "stall_mio_throttle", "stall_short_scoreboard", "stall_barrier",
    "stall_math_pipe_throttle", "stall_not_selected", "stall_wait", "stall_lg_throttle"))


def profile(segments: list[dict], child: str, timeout: int = 480, extra=()) -> list[dict]:
    """Run `child`'s segments under ncu (`segments`: JSON-able dicts the child reads).
    Returns one dict per segment: the segment's keys, kernels (names) and metrics summed
    or averaged over the segment's kernels (times and bytes summed; ratios weighted by
    duration). `extra` names counters of COUNTERS to record besides METRICS (see
    `counters`)."""
    asked = {**METRICS, **counters(extra)}
    ncu = ncu_path()
    have = available_metrics(ncu)
    wanted = {k: v for k, v in asked.items() if _base(v[0]) in have}
    if "duration_us" not in wanted:
        raise PerflabError("ncu lists no gpu__time_duration metric on this GPU")
    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "plan.json")
        log = os.path.join(tmp, "ncu.csv")
        with open(plan, "w") as f:
            json.dump(segments, f)
        cmd = [ncu, "--clock-control", "none", "--csv", "--page", "raw", "--log-file", log,
               "--metrics", ",".join(v[0] for v in wanted.values()),
               sys.executable, "-m", "perflab.profile", child, plan]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if run.returncode != 0 or not os.path.exists(log):
            raise PerflabError(f"ncu failed (exit {run.returncode}):\n{run.stdout[-2000:]}\n"
                               f"{run.stderr[-2000:]}")
        with open(log) as f:
            rows = _parse_csv(f.read())
    return segment_rows(rows, segments, wanted)


def profiled(ctx, plan, default, child: str, extra=()) -> list[dict]:
    """A profile experiment's segments under ncu (see `profile`): `plan`, or `default()`
    when it is None; none in the correctness pass (`ctx.timing` False) or for the empty
    plan `()` its `small` gives."""
    if not ctx.timing or plan == ():
        return []
    return profile(default() if plan is None else list(plan), child, extra=extra)


def _parse_csv(text: str) -> list[dict]:
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID"')), None)
    if start is None:
        raise PerflabError("ncu wrote no per-kernel table:\n" + text[-2000:])
    reader = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header, units, data = reader[0], reader[1], reader[2:]
    out = []
    for rec in data:
        if len(rec) != len(header):
            continue
        out.append({h: (v, u) for h, v, u in zip(header, rec, units)})
    return out


def _value(cell, unit_to: str) -> float:
    v, u = cell
    x = float(str(v).replace(",", ""))
    if unit_to in ("us", "MB"):
        x *= _UNIT_SCALE.get((u, unit_to), 1.0)
    return x


def segment_rows(rows, segments, wanted) -> list[dict]:
    """ncu's per-kernel rows cut at the marker launches into one dict per segment: its
    keys, the kernels it ran and their `wanted` metrics combined (see `profile`)."""
    groups, cur = [], None
    for r in rows:
        name = r.get("Kernel Name", ("", ""))[0]
        if MARKER in name:
            cur = []
            groups.append(cur)
        elif cur is not None:
            cur.append(r)
    # The marker's own first launch (it compiles before the first segment) opens a group
    # with no kernels in it.
    while len(groups) > len(segments) and groups and not groups[0]:
        groups.pop(0)
    if len(groups) != len(segments):
        raise PerflabError(f"ncu saw {len(groups)} segments, the plan had {len(segments)}; "
                           "kernels per segment: "
                           + "; ".join(",".join(r.get("Kernel Name", ("?",))[0][:30] for r in g)
                                       for g in groups)[:3000])
    out = []
    for seg, rs in zip(segments, groups):
        durs = [_value(r[wanted["duration_us"][0]], "us") for r in rs]
        total = sum(durs) or 1.0
        metrics = {}
        for key, (metric, unit, _) in wanted.items():
            vals = [_value(r[metric], unit) for r in rs if metric in r and r[metric][0] != ""]
            if not vals:
                continue
            if unit in ("us", "MB", "1"):
                metrics[key] = (sum(vals), unit)
            else:   # rates and ratios: weight each kernel by its duration
                metrics[key] = (sum(v * d for v, d in zip(vals, durs)) / total, unit)
        out.append({**seg, "kernels": [r["Kernel Name"][0] for r in rs], "metrics": metrics})
    return out


def _child(module: str, plan_path: str) -> None:
    """The profiled process: the chapter prepares every segment, then each runs once
    after a marker launch."""
    import cupy as cp

    with open(plan_path) as f:
        segments = json.load(f)
    calls = importlib.import_module(module).prepare(segments)
    marker = cp.ElementwiseKernel("float32 x", "float32 y", "y = x", MARKER)
    flag = cp.zeros(1, dtype=cp.float32)
    marker(flag, flag)                         # compiled before the first segment
    cp.cuda.Device().synchronize()
    for fn in calls:
        marker(flag, flag)
        fn()
        cp.cuda.Device().synchronize()


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2])
