"""The vendor libraries a chapter races against: PyTorch where it imports, CuPy's CUB, the
kernels a vendor call launches, and PyTorch views of CuPy arrays made once per array (so
that a timed call pays no conversion)."""
from __future__ import annotations

#: (pointer, size, dtype) -> (PyTorch view, the CuPy array it keeps alive)
TORCH_VIEWS: dict = {}


def torch_or_none():
    """PyTorch if it imports and sees a GPU, else None (its baselines are then left out)."""
    try:
        import torch
    except Exception:      # absent, or broken on this machine
        return None
    return torch if torch.cuda.is_available() else None


def as_torch(a):
    """A PyTorch view of the CuPy array `a`, made once per array."""
    key = (a.data.ptr, a.size, str(a.dtype))
    t = TORCH_VIEWS.get(key)
    if t is None:
        import torch
        if len(TORCH_VIEWS) > 64:
            TORCH_VIEWS.clear()
        t = TORCH_VIEWS[key] = (torch.from_dlpack(a), a)
    return t[0]


def release() -> None:
    """Forget the PyTorch views and give CuPy's pooled memory back (between inputs)."""
    import cupy as cp
    TORCH_VIEWS.clear()
    cp.get_default_memory_pool().free_all_blocks()


def cupy_accelerators() -> str:
    """CuPy's routine accelerators (CUB is what makes cupy.cumsum a CUB scan)."""
    import importlib
    acc = importlib.import_module("cupy._core._accelerator")
    names = {getattr(acc, "ACCELERATOR_CUB", 1): "cub",
             getattr(acc, "ACCELERATOR_CUTENSOR", 2): "cutensor"}
    return ",".join(names.get(a, str(a)) for a in acc.get_routine_accelerators()) or "none"


def gpu_kernels(fn) -> str:
    """The GPU kernels one call of `fn` launches (names without template arguments), as
    PyTorch's profiler sees them; "" where PyTorch is absent."""
    if torch_or_none() is None:
        return ""
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as p:
            fn()
            torch.cuda.synchronize()
        names = []
        for e in p.events():
            if str(getattr(e, "device_type", "")).endswith("CUDA"):
                short = e.name.split("<")[0].replace("void ", "").strip()
                if short not in names:
                    names.append(short)
        return ", ".join(names)
    except Exception as exc:       # the profiler is optional
        return f"(not read: {type(exc).__name__})"
