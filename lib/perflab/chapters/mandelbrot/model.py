"""What the count map predicts a kernel costs: how many loop trips each warp makes (a
warp runs until its last lane is done), hence how many warp instructions it issues (the
trips × the instructions per trip read from the SASS), what share of lanes do useful
work, and the time that many instructions take at one issue per cycle per scheduler.

Per pixel, steps = its count, plus the step whose test found it escaped (if it did)."""
from __future__ import annotations

import numpy as np

from .gpu import GpuKernel


def steps(counts: np.ndarray, max_iter: int) -> np.ndarray:
    """Escape tests each pixel runs: its count, plus the one that stopped it."""
    return counts.astype(np.int64) + (counts < max_iter)


def _blocks(a: np.ndarray, bx: int, by: int, per_thread: int) -> np.ndarray:
    """`a` (h x w, per pixel) padded with zeros to whole blocks and arranged as
    (blocks, threads of a block in launch order, pixels of a thread)."""
    h, w = a.shape
    cols = bx * per_thread
    gy, gx = -(-h // by), -(-w // cols)
    p = np.zeros((gy * by, gx * cols), a.dtype)
    p[:h, :w] = a
    # (gy, by, gx, per_thread, bx): column = block * cols + k * bx + tx
    p = p.reshape(gy, by, gx, per_thread, bx).transpose(0, 2, 1, 4, 3)
    return p.reshape(gy * gx, by * bx, per_thread)


def warp_max(per_thread: np.ndarray) -> np.ndarray:
    """(blocks, threads) -> the largest value of each warp of 32 threads."""
    b, t = per_thread.shape
    return per_thread.reshape(b, t // 32, 32).max(axis=2).ravel()


def predict(k: GpuKernel, counts: np.ndarray, max_iter: int, block=(32, 4),
            chunk: int | None = None) -> dict:
    """For kernel `k` on `counts`: the loop trips its warps make, summed over warps
    ("trips"; for the chunked kernel "trips" counts chunks and "replay_trips" the steps
    of the loop after it), the share of lanes still in the loop per trip, and the share
    of lane-steps that advance a pixel that has not escaped (useful work). The SASS gives
    the instructions per trip (report.loop_costs); their product is the warp
    instructions."""
    s = steps(counts, max_iter)
    useful = float(s.sum())
    if k.lane:                  # warp w: pixels 32w .. 32w+31, one after another, lane 0
        return {"trips": useful, "replay_trips": 0.0, "active_lane_frac": 1 / 32,
                "useful_frac": 1 / 32}
    bx, by = block
    if chunk is None:
        per = _blocks(s, bx, by, k.per_thread)            # (blocks, threads, pixels)
        thread_trips = per.max(axis=2)
        trips = float(warp_max(thread_trips).sum())
        return {"trips": trips, "replay_trips": 0.0,
                "active_lane_frac": float(thread_trips.sum()) / (32 * trips),
                "useful_frac": useful / (32 * trips * k.per_thread)}
    u, full = chunk, max_iter // chunk
    n = counts.astype(np.int64)
    escaped = n < max_iter
    in_chunk = escaped & (n // u < full)                    # escaped inside a whole chunk
    c_trips = np.where(in_chunk, n // u + 1, full)
    passed = np.where(in_chunk, n // u, full)
    replay = n - u * passed + escaped                       # steps of the loop after it
    ct = float(warp_max(_blocks(c_trips, bx, by, 1)[:, :, 0]).sum())
    rt = float(warp_max(_blocks(replay, bx, by, 1)[:, :, 0]).sum())
    slots = 32 * (u * ct + rt)
    return {"trips": ct, "replay_trips": rt,
            "active_lane_frac": float((u * c_trips + replay).sum()) / slots,
            "useful_frac": useful / slots}


def warp_instructions(pred: dict, trip: float, replay: float = 0.0) -> float:
    """Warp instructions of the hot loops: trips × instructions per trip (from the SASS)."""
    return pred["trips"] * trip + pred["replay_trips"] * replay


def issue_time_s(warp_instructions: float, sms: int, clock_mhz: float) -> float:
    """Seconds to issue that many warp instructions at one per cycle on each of an SM's
    four schedulers."""
    return warp_instructions / (4 * sms * clock_mhz * 1e6)
