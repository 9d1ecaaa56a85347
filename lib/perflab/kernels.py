"""Kernels: plain `.cu` files under `kernels/`, compiled at run time by NVRTC through
CuPy, with template parameters (tile sizes) instantiated through `name_expressions`.

    spec = KernelSpec("NN-slug/tiled.cu", "tiled", template=(32,))
    k = get_kernel(spec)                    # compiled once per (file, options, names)
    launch(k, grid, block, (A, B, C, n), shared_mem=0)

`launch` checks the configuration against the device and the compiled kernel before
launching, and `checked(...)` turns an asynchronous CUDA fault into an error that names
the kernel.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import paths
from .errors import ConfigError, KernelCompileError, KernelRuntimeError, LaunchConfigError

#: NVRTC options every kernel is compiled with (the architecture is the device's, added by CuPy).
BASE_OPTIONS: tuple[str, ...] = ("-std=c++17",)

_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


@dataclass(frozen=True)
class KernelSpec:
    """One kernel instantiation: a file under kernels/, a function name, template args."""

    file: str                       # relative to kernels/, e.g. "NN-slug/tiled.cu"
    name: str                       # the __global__ function, e.g. "tiled"
    template: tuple = ()            # template arguments, e.g. (32,) -> "tiled<32>"
    options: tuple[str, ...] = field(default_factory=tuple)  # extra NVRTC options

    @property
    def name_expression(self) -> str:
        if not self.template:
            return self.name
        args = ", ".join(_template_arg(a) for a in self.template)
        return f"{self.name}<{args}>"

    @property
    def arch(self) -> str | None:
        """The architecture the spec is built for when it names one among its options
        (`-arch=sm_90a`: a kernel using wgmma or setmaxnreg, which only the sm_90a target
        has), else None: built for the device's (CuPy adds its `-arch=sm_XY` after the
        spec's options; NVRTC keeps the `a` target given first, same major and minor)."""
        for o in self.options:
            for pre in ("-arch=", "--gpu-architecture="):
                if o.startswith(pre):
                    return o[len(pre):]
        return None

    @property
    def path(self) -> Path:
        return paths.KERNELS / self.file

    @property
    def all_options(self) -> tuple[str, ...]:
        """The options NVRTC gets: the lab's, include paths (kernels/ and the file's own
        folder, so a chapter's files include each other by bare name), then the spec's.
        (Looked up on every launch of a rung without a plan: kept to a dict lookup.)"""
        return BASE_OPTIONS + _include_options(str(paths.KERNELS), self.file) + self.options

    @property
    def recorded_options(self) -> list[str]:
        """The options a row records: those that change the code (not the include paths,
        which depend on where the lab is checked out)."""
        return list(BASE_OPTIONS + tuple(self.options))


@functools.lru_cache(maxsize=None)
def _include_options(kernels: str, file: str) -> tuple[str, ...]:
    return (f"-I{kernels}", f"-I{(Path(kernels) / file).parent}")


def _template_arg(a) -> str:
    if isinstance(a, bool):
        return "true" if a else "false"
    return str(a)


def _resolve(including: Path, name: str, root: Path | None = None) -> Path | None:
    """The file a quoted #include names: next to the including file, then under kernels/
    (`root`: another copy of kernels/, e.g. one taken from a past commit)."""
    for base in (including.parent, root or paths.KERNELS):
        if (base / name).exists():
            return (base / name).resolve()
    return None


def source_files(file: str) -> list[Path]:
    """The kernel file and every header it includes (quoted includes, recursively)."""
    seen: list[Path] = []

    def visit(p: Path):
        if p in seen:
            return
        if not p.exists():
            raise KernelCompileError(f"kernel source {p} does not exist")
        seen.append(p)
        for inc in _INCLUDE.findall(p.read_text()):
            found = _resolve(p, inc)
            if found is not None:
                visit(found)

    visit((paths.KERNELS / file).resolve())
    return seen


def expanded_source(file: str, root: Path | None = None) -> str:
    """The source with every quoted #include of a lab file replaced by that file's text
    (each file once, as `#pragma once` would): what the compiler reads, whatever the
    files are called or where they sit. Includes that name no file of the lab (system
    headers, <...>) stay as written. `root`: read another copy of kernels/."""
    root = root or paths.KERNELS
    seen: set[Path] = set()

    def expand(p: Path) -> str:
        if p in seen:
            return ""
        if not p.exists():
            raise KernelCompileError(f"kernel source {p} does not exist")
        seen.add(p)
        out = []
        for line in p.read_text().splitlines(keepends=True):
            m = _INCLUDE.match(line)
            found = _resolve(p, m.group(1), root) if m else None
            out.append(expand(found) if found is not None else line)
        return "".join(out)

    return expand((root / file).resolve())


def source_sha256(file: str, root: Path | None = None) -> str:
    """sha256 of `expanded_source(file)`: a row records it, staleness compares it.

    It covers the kernel and every header it includes, and nothing else: moving or
    renaming a file (and the #include lines that name it) leaves it unchanged, while any
    edit of the text that is compiled changes it."""
    return hashlib.sha256(expanded_source(file, root).encode()).hexdigest()


def read_source(file: str) -> str:
    """The source as NVRTC sees it: a #line directive first, so errors name kernels/<file>.

    Before it, a comment with source_sha256 (the file and every header it includes): CuPy
    keys its on-disk compile cache on this text and the options only, so without it an
    edited header would go on being served from the cubin compiled before the edit."""
    p = paths.KERNELS / file
    if not p.exists():
        raise KernelCompileError(f"kernel source kernels/{file} does not exist")
    return (f"// sources sha256 {source_sha256(file)}\n"
            f'#line 1 "kernels/{file}"\n' + p.read_text())


@functools.lru_cache(maxsize=None)
def _module(file: str, options: tuple[str, ...], names: tuple[str, ...]):
    import cupy
    from cupy.cuda.compiler import CompileException

    mod = cupy.RawModule(code=read_source(file), options=options,
                         name_expressions=names or None)
    try:
        mod.compile()
    except CompileException as exc:
        raise KernelCompileError(_compile_message(file, str(exc))) from None
    return mod


def clear_cache() -> None:
    """Forget the modules compiled in this process (the next get_kernel compiles again)."""
    _module.cache_clear()
    _CHECKED.clear()


def _compile_message(file: str, log: str) -> str:
    errors = [ln for ln in log.splitlines() if "error" in ln]
    shown = "\n".join(errors[:10]) or log[-2000:]
    return f"NVRTC could not compile kernels/{file}:\n{shown}"


def get_kernel(spec: KernelSpec):
    """The compiled cupy.RawKernel for `spec` (compiled once, cached for the process)."""
    mod = _module(spec.file, spec.all_options, (spec.name_expression,) if spec.template else ())
    try:
        return mod.get_function(spec.name_expression)
    except Exception as exc:
        if isinstance(exc, KernelCompileError):
            raise
        raise KernelCompileError(
            f"kernels/{spec.file}: no kernel {spec.name_expression!r} ({exc})") from None


def upload_global(spec: KernelSpec, name: str, host) -> None:
    """Copy the NumPy array `host` into the global (`__constant__` or `__device__`) variable
    `name` of the module that holds `spec`'s kernel, through CuPy's public
    `RawModule.get_global`; ConfigError when the variable is smaller than `host`."""
    import numpy as np
    host = np.ascontiguousarray(host)
    mod = _module(spec.file, spec.all_options, (spec.name_expression,) if spec.template else ())
    ptr = mod.get_global(name)
    if ptr.mem.size and host.nbytes > ptr.mem.size - (ptr.ptr - ptr.mem.ptr):
        from .errors import ConfigError
        raise ConfigError(f"kernels/{spec.file}: {host.nbytes} B do not fit in {name}")
    ptr.copy_from_host(host.ctypes.data, host.nbytes)


def warm(specs) -> None:
    """Compile (or load from CuPy's disk cache) every kernel of `specs` before the first
    launch needs it, several at once: NVRTC releases the GIL while it compiles. A kernel
    that fails here is left for its launch, which compiles it again alone and raises the
    error with its message."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    import cupy as cp

    uniq = list({(s.file, s.name_expression, s.options): s for s in specs}.values())
    if not uniq:
        return
    dev = cp.cuda.Device().id            # the caller's device, in every worker thread

    def one(spec):
        cp.cuda.Device(dev).use()
        try:
            get_kernel(spec)
        except Exception:   # noqa: BLE001  (the launch raises it again, with its message)
            pass

    with ThreadPoolExecutor(max_workers=max(1, min(16, os.cpu_count() or 1, len(uniq)))) as ex:
        list(ex.map(one, uniq))


def _prod(xs) -> int:
    n = 1
    for x in xs:
        n *= int(x)
    return n


def check_block2d(block) -> tuple[int, int]:
    """A 2-D block (threads in x, threads in y) every GPU runs: two whole numbers, each at
    least 1, at most 1024 threads in all; else ConfigError with the reason."""
    try:
        bx, by = (int(v) for v in block)
    except (TypeError, ValueError):
        raise ConfigError(f"block={block!r}: give two whole numbers (threads in x, "
                          "threads in y)") from None
    if bx < 1 or by < 1:
        raise ConfigError(f"block={block!r}: both sides at least 1 thread")
    if bx * by > 1024:
        raise ConfigError(f"block {bx}×{by} = {bx * by} threads: a block holds at most 1024")
    return bx, by


def check_launch(kernel, grid, block, shared_mem: int = 0) -> None:
    """Raise LaunchConfigError, naming the limit, for a launch the device cannot run."""
    from .device import current

    dev = current()
    grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
    block = tuple(block) if isinstance(block, (tuple, list)) else (block,)
    threads = _prod(block)
    name = kernel.name
    if threads > dev.max_threads_per_block:
        raise LaunchConfigError(
            f"{name}: a block of {threads} threads exceeds the device limit of "
            f"{dev.max_threads_per_block}")
    if threads > kernel.max_threads_per_block:
        raise LaunchConfigError(
            f"{name}: a block of {threads} threads exceeds this kernel's limit of "
            f"{kernel.max_threads_per_block} ({kernel.num_regs} registers/thread, "
            f"{dev.regs_per_block} registers per block)")
    static = kernel.shared_size_bytes
    if static + shared_mem > dev.smem_per_block_optin:
        raise LaunchConfigError(
            f"{name}: {static} B static + {shared_mem} B dynamic shared memory exceeds the "
            f"device limit of {dev.smem_per_block_optin} B per block")
    if any(g < 1 for g in grid) or (len(grid) > 1 and any(g > 65535 for g in grid[1:])):
        raise LaunchConfigError(f"{name}: grid {grid} is outside the device limits")
    if shared_mem > kernel.max_dynamic_shared_size_bytes:
        kernel.max_dynamic_shared_size_bytes = shared_mem


_CAPTURE: list | None = None
_CHECKED: dict = {}


def capturing() -> bool:
    """Whether launches are being captured (capture_launches)."""
    return _CAPTURE is not None


@contextlib.contextmanager
def capture_launches():
    """Collect the configuration of every launch made inside the block (for the record)."""
    global _CAPTURE
    prev, _CAPTURE = _CAPTURE, []
    try:
        yield _CAPTURE
    finally:
        _CAPTURE = prev


@dataclass(frozen=True)
class Step:
    """One launch of a plan: the kernel, its configuration, which arrays it takes (names
    looked up at call time), the scalar arguments after them, dynamic shared memory."""
    kernel: object
    grid: tuple
    block: tuple
    arrays: str                 # e.g. "ABC": the call's arrays, in argument order
    scalars: tuple = ()
    shared_mem: int = 0


class Plans:
    """Launch plans computed once per key (device, shapes, alignment, parameters).

    On a problem of tens of microseconds the Python around a launch (choosing a shape,
    validating, looking up kernels) is as long as the kernels, and the timer's events
    bracket the whole call: a rung computes its plan once, and a call is then only its
    launches. Every plan's launches were checked against the device when it was made."""

    def __init__(self):
        self._plans: dict = {}

    def get(self, key, build):
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = build()
        return plan

    def drop(self, keep=lambda key: False) -> None:
        """Forget the plans whose key `keep` rejects (all of them by default)."""
        self._plans = {k: v for k, v in self._plans.items() if keep(k)}


class PreparedLaunch:
    """One kernel's launch with its argument buffer built once: a call writes the
    arguments into the buffer and hands it to the driver (cuLaunchKernel), skipping the
    per-argument conversions of a CuPy kernel call, which on a call of tens of microseconds
    cost as much as the launch itself. `kinds`: one letter an argument, "p" a device array
    (its pointer), "q" a 64-bit integer, "I" a 32-bit unsigned one. The configuration is
    checked once, here; a call while launches are captured goes through `launch` (which
    records it) with the same arguments. `cooperative`: a cooperative launch (every block
    resident at once, or the driver refuses the launch)."""

    cooperative = False
    _FORMAT = {"p": "P", "q": "q", "I": "I"}         # struct's native codes of the kinds

    def __init__(self, kernel, grid: int, block: int, kinds: str, shared_mem: int = 0,
                 cooperative: bool = False):
        check_launch(kernel, (grid,), (block,), shared_mem)
        if any(k not in self._FORMAT for k in kinds):
            raise ValueError(f"argument kinds {kinds!r}: one of p, q, I each")
        self.kernel, self.grid, self.block, self.shared_mem = kernel, grid, block, shared_mem
        self.kinds, self.cooperative = kinds, cooperative
        self._lay_out(kinds)
        self._fn = kernel.kernel.ptr
        import cupy
        from cupy.cuda import driver
        self._stream = cupy.cuda.get_current_stream
        self._launch = driver.launchCooperativeKernel if cooperative else driver.launchKernel
        self._tail = () if cooperative else (0,)       # (cuLaunchKernel's `extra`)

    def _lay_out(self, kinds: str) -> None:
        """One buffer holds every argument at its native alignment, and the driver gets a
        pointer to each: a call packs them all with one struct call (`_put`)."""
        import struct
        codes = "".join(self._FORMAT[k] for k in kinds)
        self._pack = struct.Struct("@" + codes).pack_into
        self._buf = ctypes.create_string_buffer(max(1, struct.calcsize("@" + codes)))
        at = [struct.calcsize("@" + codes[:i + 1]) - struct.calcsize(c)
              for i, c in enumerate(codes)]
        base = ctypes.addressof(self._buf)
        self._params = (ctypes.c_void_p * len(kinds))(*[base + a for a in at])
        self._arrays = tuple(i for i, k in enumerate(kinds) if k == "p")
        self._params_at = ctypes.addressof(self._params)

    def _put(self, args) -> None:
        """Write a call's arguments into the buffer (arrays as their pointers)."""
        values = list(args)
        for i in self._arrays:
            values[i] = values[i].data.ptr
        self._pack(self._buf, 0, *values)

    def __call__(self, grid: int, *args) -> None:
        """Launch on the current stream with `grid` blocks (at most the checked grid). An
        integer that does not fit its kind is refused (struct.error), not truncated."""
        if not 1 <= grid <= self.grid or len(args) != len(self.kinds):
            raise LaunchConfigError(f"{self.kernel.name}: grid {grid} of at most {self.grid}, "
                                    f"{len(args)} arguments of {len(self.kinds)}")
        if _CAPTURE is not None:
            import numpy as np
            typed = tuple(np.int64(a) if k == "q" else np.uint32(a) if k == "I" else a
                          for k, a in zip(self.kinds, args))
            extra = {"cooperative": True} if self.cooperative else {}
            launch(self.kernel, (grid,), (self.block,), typed, shared_mem=self.shared_mem,
                   **extra)
            return
        self._put(args)
        self._launch(self._fn, grid, 1, 1, self.block, 1, 1, self.shared_mem,
                     self._stream().ptr, self._params_at, *self._tail)


class GraphLaunch:
    """A prepared launch replayed as a CUDA graph: the first call with a given `key` builds
    a graph of one kernel node from the call's arguments (by stream capture, once) and
    every later call with that key only launches it, the driver's cheapest way to start a
    kernel from the host. The caller's `key` must name every argument that can change
    (device pointers and values) and the grid: a graph keeps the values it was built with.
    The `keep` most recently built graphs are kept. A call while launches are captured
    goes through the prepared launch (which records it). `build(prepared, grid, args)`
    makes a graph (capture_graph by default)."""

    def __init__(self, prepared: PreparedLaunch, keep: int = 4, build=None):
        self.prepared, self.keep = prepared, keep
        self.grid = prepared.grid
        self._build = build or capture_graph
        self._graphs: dict = {}

    def __call__(self, key, grid: int, *args) -> None:
        if _CAPTURE is not None:
            self.prepared(grid, *args)
            return
        g = self._graphs.get(key)
        if g is None:
            g = self._build(self.prepared, grid, args)
            self._graphs[key] = g
            while len(self._graphs) > self.keep:
                self._graphs.pop(next(iter(self._graphs)))
        g.launch()

    @property
    def graphs(self) -> int:
        """How many graphs are kept."""
        return len(self._graphs)

    def get(self, key):
        """The graph built for `key`, or None."""
        return self._graphs.get(key)


def capture_graph(prepared: PreparedLaunch, grid: int, args):
    """A CUDA graph of one launch of `prepared` with `args`, captured on a stream of its
    own and uploaded to the current one."""
    import cupy as cp
    side = cp.cuda.Stream(non_blocking=True)
    with side:
        side.begin_capture()
        try:
            prepared(grid, *args)
        finally:
            g = side.end_capture()
    g.upload(cp.cuda.get_current_stream())
    return g


def run_steps(steps, arrays: dict) -> None:
    """Enqueue a plan's launches; through `launch` (which records them) when capturing,
    else directly."""
    for st in steps:
        args = tuple(arrays[c] for c in st.arrays) + tuple(st.scalars)
        if _CAPTURE is not None:
            launch(st.kernel, st.grid, st.block, args, shared_mem=st.shared_mem)
        else:
            st.kernel(st.grid, st.block, args, shared_mem=st.shared_mem)


def launch(kernel, grid, block, args, shared_mem: int = 0, cooperative: bool = False) -> None:
    """Check the configuration, then enqueue the kernel on the current stream
    (`cooperative`: every block resident at once, or the launch fails)."""
    grid = tuple(grid) if isinstance(grid, (list, tuple)) else (grid,)
    block = tuple(block) if isinstance(block, (list, tuple)) else (block,)
    key = (id(kernel), grid, block, shared_mem)
    if key not in _CHECKED:          # the limits do not change: check each config once
        check_launch(kernel, grid, block, shared_mem)
        _CHECKED[key] = kernel       # (holding the kernel keeps its id unique)
    if _CAPTURE is not None:
        _CAPTURE.append({
            "kernel": kernel.name, "grid": [int(g) for g in grid],
            "block": [int(b) for b in block], "dynamic_smem": int(shared_mem),
            "static_smem": kernel.shared_size_bytes, "registers": kernel.num_regs,
            "blocks_per_sm": blocks_per_sm(kernel, _prod(block), shared_mem),
            **({"cooperative": True} if cooperative else {})})
    if cooperative:       # (a RawKernel call passes its own enable_cooperative_groups)
        kernel.kernel(grid, block, args, shared_mem=shared_mem, enable_cooperative_groups=True)
    else:
        kernel(grid, block, args, shared_mem=shared_mem)


def checked(fn, what: str):
    """Run `fn()` and synchronize; a CUDA error becomes KernelRuntimeError naming `what`."""
    import cupy
    from cupy_backends.cuda.api.driver import CUDADriverError
    from cupy_backends.cuda.api.runtime import CUDARuntimeError

    try:
        out = fn()
        cupy.cuda.Device().synchronize()
    except (CUDARuntimeError, CUDADriverError) as exc:
        raise KernelRuntimeError(
            f"CUDA error in {what}: {exc}. After a fault like this the CUDA context is "
            "unusable; restart the kernel (Python process) before measuring again.") from None
    return out


def blocks_per_sm(kernel, threads: int, shared_mem: int = 0) -> int:
    """How many blocks of this kernel one SM holds at once (the driver's occupancy query)."""
    from cupy.cuda import driver

    if shared_mem > kernel.max_dynamic_shared_size_bytes:
        kernel.max_dynamic_shared_size_bytes = shared_mem
    return driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads,
                                                            shared_mem)
