"""Which GPU is here, if any, and whether the lab measures live or replays recorded runs.

`mode()` is the single switch of the record/replay design:
- ``live``   a usable CUDA GPU answered through CuPy (and PERFLAB_MODE is not ``replay``);
- ``replay`` no GPU, no driver, or PERFLAB_MODE=replay.
PERFLAB_MODE=live on a machine without a GPU is an error, never a silent replay.
"""
from __future__ import annotations

import functools
import os
import re
from dataclasses import asdict, dataclass

from .errors import NoGPUError


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    slug: str
    compute_capability: str      # "9.0"
    arch: str                    # "sm_90"
    sms: int
    l2_bytes: int
    smem_per_block: int          # default limit (48 KiB)
    smem_per_block_optin: int    # what a kernel may opt in to
    smem_per_sm: int
    regs_per_sm: int
    regs_per_block: int
    max_threads_per_block: int
    max_threads_per_sm: int
    warp_size: int
    sm_clock_max_mhz: float      # the boost clock the driver reports
    mem_clock_max_mhz: float
    mem_bus_bits: int
    total_mem_bytes: int
    driver_version: str
    runtime_version: str
    cupy_version: str
    # The compiler of every kernel: its ptxas allocates the registers, and versions differ
    # (NVRTC 13.0 spills rung 06's main loop that 13.1+ keeps in 234 registers).
    nvrtc_version: str = "?"

    def as_dict(self) -> dict:
        return asdict(self)



# FP32 lanes per SM by compute capability (CUDA C++ Programming Guide, arithmetic
# instruction throughput table). Used only to state the datasheet ceiling beside the
# measured one.
_FP32_LANES = {"7.0": 64, "7.5": 64, "8.0": 64, "8.6": 128, "8.7": 128, "8.9": 128,
               "9.0": 128, "10.0": 128, "12.0": 128}


def fp32_lanes(compute_capability: str) -> int:
    """FP32 FMA lanes per SM (the datasheet's 'CUDA cores' per SM)."""
    return _FP32_LANES.get(compute_capability, 128)


def fp32_peak_flops(dev: dict, clock_mhz: float | None = None) -> float:
    """The datasheet FP32 rate: SMs × lanes × 2 FLOP × clock (default: the maximum clock)."""
    clock = dev["sm_clock_max_mhz"] if clock_mhz is None else clock_mhz
    return dev["sms"] * fp32_lanes(dev["compute_capability"]) * 2 * clock * 1e6


#: The shared memory (KiB) an SM of compute capability 9.0 can be split at; the rest of its
#: 256 KiB is L1 (CUDA's Hopper tuning guide). A launch takes the smallest split that holds
#: its resident blocks, or the largest when its kernel asks for all shared memory.
SM90_SPLITS_KIB = (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)
#: shared memory the system keeps for each resident block (compute capability 8.0 and later)
RESERVED_A_BLOCK = 1024


def l1_room(static: int, smem: int, blocks: int, all_shared: bool, cc: str) -> dict:
    """What `blocks` blocks an SM, each with `static` B of static and `smem` B of dynamic
    shared memory (and RESERVED_A_BLOCK), take of the SM ("shared_kib_sm") and the L1 the
    split leaves ("l1_kib": from the smallest split that holds them, or the largest with
    `all_shared`; None off compute capability 9.0, or where they do not fit)."""
    need = blocks * (smem + static + RESERVED_A_BLOCK)
    fits = [c for c in SM90_SPLITS_KIB if c * 1024 >= need]
    split = (SM90_SPLITS_KIB[-1] if all_shared else fits[0]) if cc == "9.0" and fits else None
    return {"shared_kib_sm": round(need / 1024, 1),
            "l1_kib": None if split is None else 256 - split}


def slugify(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


@functools.lru_cache(maxsize=1)
def probe() -> tuple[DeviceInfo | None, str]:
    """Ask CuPy for device 0. Returns (info, reason) where reason says why there is none."""
    try:
        import cupy
        from cupy.cuda import runtime
    except Exception as exc:  # CuPy missing or broken: replay
        return None, f"CuPy could not be imported ({exc})"
    try:
        count = runtime.getDeviceCount()
    except Exception as exc:
        return None, f"no usable CUDA driver ({exc})"
    if count < 1:
        return None, "the CUDA driver reports no GPU"
    try:
        dev = cupy.cuda.Device(0)
        props = runtime.getDeviceProperties(0)
        attrs = dev.attributes
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        major, minor = props["major"], props["minor"]
        info = DeviceInfo(
            name=name,
            slug=slugify(name),
            compute_capability=f"{major}.{minor}",
            arch=f"sm_{major}{minor}",
            sms=attrs["MultiProcessorCount"],
            l2_bytes=attrs["L2CacheSize"],
            smem_per_block=attrs["MaxSharedMemoryPerBlock"],
            smem_per_block_optin=attrs["MaxSharedMemoryPerBlockOptin"],
            smem_per_sm=attrs["MaxSharedMemoryPerMultiprocessor"],
            regs_per_sm=attrs["MaxRegistersPerMultiprocessor"],
            regs_per_block=attrs["MaxRegistersPerBlock"],
            max_threads_per_block=attrs["MaxThreadsPerBlock"],
            max_threads_per_sm=attrs["MaxThreadsPerMultiProcessor"],
            warp_size=attrs["WarpSize"],
            sm_clock_max_mhz=attrs.get("ClockRate", 0) / 1000.0,
            mem_clock_max_mhz=attrs.get("MemoryClockRate", 0) / 1000.0,
            mem_bus_bits=attrs.get("GlobalMemoryBusWidth", 0),
            total_mem_bytes=int(props["totalGlobalMem"]),
            driver_version=_version(runtime.driverGetVersion()),
            runtime_version=_version(runtime.runtimeGetVersion()),
            cupy_version=cupy.__version__,
            nvrtc_version=_nvrtc_version(),
        )
    except Exception as exc:
        return None, f"the GPU did not answer ({exc})"
    return info, ""


def _nvrtc_version() -> str:
    try:
        import cupy
        major, minor = cupy.cuda.nvrtc.getVersion()
        return f"{major}.{minor}"
    except Exception:           # noqa: BLE001 - the version is informative only
        return "?"


def mode() -> str:
    """'live' or 'replay' (see the module docstring)."""
    want = os.environ.get("PERFLAB_MODE", "auto").lower()
    if want not in ("auto", "live", "replay"):
        raise ValueError(f"PERFLAB_MODE must be auto, live or replay, not {want!r}")
    if want == "replay":
        return "replay"
    info, reason = probe()
    if info is None:
        if want == "live":
            raise NoGPUError(f"PERFLAB_MODE=live, but there is no usable GPU: {reason}")
        return "replay"
    return "live"


def current() -> DeviceInfo:
    """The GPU measured live; NoGPUError (with the reason) where there is none."""
    info, reason = probe()
    if info is None:
        raise NoGPUError(
            f"live measurement needs a CUDA GPU, and there is none here: {reason}. "
            "Without a GPU the lab replays recorded runs (see `python -m perflab show`)."
        )
    return info


def why_replay() -> str:
    """A sentence for the reader saying why this build replays."""
    if os.environ.get("PERFLAB_MODE", "").lower() == "replay":
        return "PERFLAB_MODE=replay is set"
    return probe()[1] or "a GPU is present"


def clocks_now() -> dict:
    """Current and maximum SM/memory clocks in MHz through NVML, when it is installed."""
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        out = {
            "sm_clock_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
            "sm_clock_max_mhz": pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM),
            "mem_clock_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM),
            "power_limit_w": pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0,
        }
        pynvml.nvmlShutdown()
        return out
    except Exception:
        return {}
