"""Driving NVRTC: each kernel instantiation compiled to a cubin in a program of its own,
across the cores, each result kept in the on-disk cache (`cache`).

The C++ front end is a few hundredths of a second per file; the time goes to optimising
and assembling each instantiation (about 0.5 s to 1.5 s for the big SGEMM kernels), so one
program per instantiation costs almost nothing more than one per file, and lets a file
with a hundred instantiations use every core. NVRTC releases the GIL while it compiles:
threads keep the cores as busy as processes do, without starting or feeding processes.
"""
from __future__ import annotations

import functools
import hashlib
import os
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from typing import Iterable

from tqdm import tqdm

from .. import kernels
from ..errors import KernelCompileError, PerflabError
from ..kernels import KernelSpec
from . import cache, ptxas

#: Added to every compile. `-Xptxas=-v`: the resource lines the report reads.
#: `--no-cache`: where a GPU driver is installed, NVRTC (12.9 and newer) keeps what it
#: compiled in the driver's cache (~/.nv/ComputeCache) and serves a program it has seen
#: before without running ptxas, so the log of that compile has no resource lines.
NVRTC_OPTIONS: tuple[str, ...] = ("-Xptxas=-v", "--no-cache")


@dataclass(frozen=True)
class CompiledKernel:
    """One kernel instantiation compiled for one architecture, alone in its program.

    `lowered_name` is its mangled symbol (what the ptxas log and nvdisasm call it), `log`
    the program log (the ptxas -v lines), `compiler` the NVRTC that compiled it (version
    and library), `cached` whether it came from the on-disk cache."""

    file: str
    name_expression: str
    arch: str
    options: tuple[str, ...]
    lowered_name: str
    cubin: bytes
    log: str
    compiler: str
    cached: bool = False


def _api():
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:
        raise PerflabError(
            "the offline compile report needs NVRTC from pip: "
            "pip install 'cuda-bindings>=13' 'nvidia-cuda-nvrtc>=13.1' "
            f"(import failed: {exc})") from None
    return nvrtc


def _check(result, what: str):
    """Unpack a cuda.bindings return tuple, raising on an NVRTC error code."""
    api = _api()
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != api.nvrtcResult.NVRTC_SUCCESS:
        _, msg = api.nvrtcGetErrorString(err)
        raise PerflabError(f"NVRTC {what} failed: {msg.decode(errors='replace')}")
    return rest[0] if len(rest) == 1 else tuple(rest)


def _loaded_library() -> str:
    """The path of the libnvrtc this process has loaded (Linux), or "" if unknown."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if os.path.basename(path).startswith("libnvrtc.so"):
                    return path
    except OSError:
        pass
    return ""


@functools.cache
def identity() -> dict:
    """The NVRTC this process compiles with: its version, the library loaded and its size
    (a reinstall of another build in place changes it), and the cuda-bindings version."""
    import cuda.bindings

    major, minor = _check(_api().nvrtcVersion(), "nvrtcVersion")
    library = _loaded_library()
    return {"nvrtc": f"{major}.{minor}", "library": library,
            "library_bytes": os.path.getsize(library) if library else None,
            "cuda_bindings": cuda.bindings.__version__}


def describe(ident: dict) -> str:
    """'NVRTC 13.5 (/path/libnvrtc.so.13, cuda-bindings 13.5.0)'."""
    return (f"NVRTC {ident['nvrtc']} ({ident['library'] or 'library path unknown'}, "
            f"cuda-bindings {ident['cuda_bindings']})")


def _options(spec: KernelSpec, arch: str) -> tuple[str, ...]:
    return spec.all_options + (f"--gpu-architecture={arch}",) + NVRTC_OPTIONS


def _program_log(prog) -> str:
    api = _api()
    size = _check(api.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
    buf = b" " * size
    _check(api.nvrtcGetProgramLog(prog, buf), "nvrtcGetProgramLog")
    return buf.rstrip(b"\0").decode(errors="replace")


def _compile_message(file: str, arch: str, log: str) -> str:
    errors = [ln for ln in log.splitlines() if "error" in ln]
    shown = "\n".join(errors[:10]) or log[-2000:]
    return f"NVRTC could not compile kernels/{file} for {arch}:\n{shown}"


def compile_program(source: str, file: str, options: tuple[str, ...], arch: str,
                     name: str) -> tuple[str, bytes, str]:
    """Compile `source` with the one name expression `name`: (lowered name, cubin, log)."""
    api = _api()
    prog = _check(api.nvrtcCreateProgram(source.encode(), f"kernels/{file}".encode(),
                                         0, [], []), "nvrtcCreateProgram")
    try:
        _check(api.nvrtcAddNameExpression(prog, name.encode()),
               f"nvrtcAddNameExpression({name!r})")
        enc = [o.encode() for o in options]
        (err,) = api.nvrtcCompileProgram(prog, len(enc), enc)
        log = _program_log(prog)
        if err != api.nvrtcResult.NVRTC_SUCCESS:
            raise KernelCompileError(_compile_message(file, arch, log))
        size = _check(api.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
        cubin = b" " * size
        _check(api.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")
        err, lowered = api.nvrtcGetLoweredName(prog, name.encode())
        if err != api.nvrtcResult.NVRTC_SUCCESS:
            raise KernelCompileError(f"kernels/{file}: no kernel {name!r} for {arch}")
    finally:
        api.nvrtcDestroyProgram(prog)
    return lowered.decode(), bytes(cubin), log


def _compile(source: str, spec: KernelSpec, arch: str, compiler: str) -> CompiledKernel:
    options = _options(spec, arch)
    lowered, cubin, log = compile_program(source, spec.file, options, arch,
                                           spec.name_expression)
    ck = CompiledKernel(file=spec.file, name_expression=spec.name_expression, arch=arch,
                        options=spec.all_options, lowered_name=lowered, cubin=cubin,
                        log=log, compiler=compiler)
    ptxas.resources(ck)     # raises, naming the compiler, when the resource lines are missing
    return ck


def _key(source: str, spec: KernelSpec, arch: str, ident: dict) -> str:
    """The cache key: the exact text compiled (which carries the sha256 of the file and
    its headers), the options, the architecture, the name expression, the compiler."""
    return cache.key(hashlib.sha256(source.encode()).hexdigest(), _options(spec, arch),
                     arch, spec.name_expression, ident)


def _load(key: str) -> CompiledKernel | None:
    entry = cache.load(key)
    if entry is None:
        return None
    meta, cubin = entry
    return CompiledKernel(file=meta["file"], name_expression=meta["name_expression"],
                          arch=meta["arch"], options=tuple(meta["options"]),
                          lowered_name=meta["lowered_name"], cubin=cubin, log=meta["log"],
                          compiler=meta["compiler"], cached=True)


def _store(key: str, ck: CompiledKernel) -> None:
    meta = asdict(ck)
    del meta["cubin"], meta["cached"]
    cache.store(key, meta, ck.cubin)


def workers() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def compile_all(jobs: Iterable[tuple[KernelSpec, str]], *,
                progress: bool = False) -> list[CompiledKernel]:
    """Compile every (spec, arch) of `jobs`, one CompiledKernel each, in order: from the
    on-disk cache where it holds them, the others in parallel (a progress bar on stderr
    with `progress`). Raises KernelCompileError, naming kernels/<file> and the error lines,
    when NVRTC rejects a source."""
    # A spec that names its architecture (KernelSpec.arch, e.g. sm_90a) is compiled for
    # that one only, whichever is asked: its rows say so in their `arch` column.
    jobs = [(spec, spec.arch or arch) for spec, arch in jobs]
    ident = identity()
    sources: dict[str, str] = {}
    keys = []
    for spec, arch in jobs:
        if spec.file not in sources:
            sources[spec.file] = kernels.read_source(spec.file)
        keys.append(_key(sources[spec.file], spec, arch, ident))
    done: dict[str, CompiledKernel] = {}
    todo: dict[str, tuple[KernelSpec, str]] = {}
    for key, job in zip(keys, jobs):
        if key not in done and key not in todo:
            ck = _load(key)
            if ck is None:
                todo[key] = job
            else:
                done[key] = ck
    if todo:
        done.update(_compile_in_parallel(todo, sources, describe(ident), progress))
    return [done[key] for key in keys]


def _compile_in_parallel(todo: dict[str, tuple[KernelSpec, str]], sources: dict[str, str],
                         compiler: str, progress: bool) -> dict[str, CompiledKernel]:
    out = {}
    bar = tqdm(total=len(todo), desc="compiling", unit="kernel", file=sys.stderr,
               disable=not progress, mininterval=0.2 if sys.stderr.isatty() else 10)
    pool = ThreadPoolExecutor(max_workers=min(len(todo), workers()))
    try:
        futures = {pool.submit(_compile, sources[spec.file], spec, arch, compiler): key
                   for key, (spec, arch) in todo.items()}
        for future in as_completed(futures):
            ck = future.result()
            _store(futures[future], ck)
            out[futures[future]] = ck
            bar.update()
    finally:
        pool.shutdown(cancel_futures=True)  # after an error: start nothing more
        bar.close()
    return out


def compile_many(specs: Iterable[KernelSpec], arch: str, *,
                 progress: bool = False) -> list[CompiledKernel]:
    """Compile `specs` for `arch` (e.g. "sm_90"): one CompiledKernel per spec, in order."""
    return compile_all([(spec, arch) for spec in specs], progress=progress)


def compile_cubin(spec: KernelSpec, arch: str) -> CompiledKernel:
    """Compile one kernel instantiation to a cubin for `arch`, cached.

    Raises KernelCompileError, naming kernels/<file> and the error lines, when NVRTC
    rejects the source."""
    return compile_all([(spec, arch)])[0]
