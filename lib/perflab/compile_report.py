"""The offline compile report: what the compiler made of every kernel, with no GPU.

NVRTC from pip (`cuda-bindings` with `nvidia-cuda-nvrtc`) compiles each kernel to a
cubin for a chosen architecture, with `-Xptxas=-v`, and the ptxas lines of the program
log give, per kernel instantiation, the registers, static shared memory, stack frame,
spill stores/loads and barriers. nvdisasm from pip (`nvidia-cuda-nvdisasm`) turns the
cubin into SASS.

    spec = KernelSpec("matmul/05_regtile.cu", "sgemm_regtile", template=(128, 128, 8, 8, 8))
    resources(spec, "sm_90")    # {'kernel': 'sgemm_regtile<128, 128, 8, 8, 8>', 'registers': 128, ...}
    report(specs)               # DataFrame: one row per spec x arch
    text = sass(spec, "sm_90")  # the SASS of just that function
    print(sass_excerpt(text, r"LDS\\.128", r"FFMA"))
    count_instructions(text)    # Counter({'FFMA': 512, 'LDS.128': 32, ...})

Compiles are cached in memory per (source sha256 of the file and its headers, options,
architecture, name expression); `report` compiles each (file, options) once per
architecture with all of its name expressions. The values reported are the entry
function's own: a non-inlined device function it calls has its own stack frame and
spills in the ptxas log (rare in these kernels, which inline everything).
"""
from __future__ import annotations

import argparse
import collections
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from . import kernels
from .errors import KernelCompileError, PerflabError
from .kernels import KernelSpec

#: The architectures the report covers by default (Ada and Hopper).
ARCHS: tuple[str, ...] = ("sm_89", "sm_90")

#: The columns of `resources` and `report`, in order.
COLUMNS: tuple[str, ...] = ("kernel", "file", "arch", "registers", "shared_static_bytes",
                            "stack_frame_bytes", "spill_store_bytes", "spill_load_bytes",
                            "barriers")


@dataclass(frozen=True)
class CompiledKernel:
    """One kernel instantiation compiled for one architecture.

    `cubin` is the whole program's cubin: every name expression of the file compiled in
    the same batch is in it. `lowered_name` is the mangled symbol of this instantiation
    (what the ptxas log and nvdisasm call it); `log` is the program log (ptxas -v lines).
    """

    file: str
    name_expression: str
    arch: str
    options: tuple[str, ...]
    lowered_name: str
    cubin: bytes
    log: str


# ---------------------------------------------------------------------------- compiling

def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:
        raise PerflabError(
            "the offline compile report needs NVRTC from pip: "
            "pip install 'cuda-bindings>=13' 'nvidia-cuda-nvrtc>=13' "
            f"(import failed: {exc})") from None
    return nvrtc


def _check(result, what: str):
    """Unpack a cuda.bindings return tuple, raising on an NVRTC error code."""
    nvrtc = _nvrtc()
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, msg = nvrtc.nvrtcGetErrorString(err)
        raise PerflabError(f"NVRTC {what} failed: {msg.decode(errors='replace')}")
    return rest[0] if len(rest) == 1 else tuple(rest)


def _program_log(prog) -> str:
    nvrtc = _nvrtc()
    size = _check(nvrtc.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
    buf = b" " * size
    _check(nvrtc.nvrtcGetProgramLog(prog, buf), "nvrtcGetProgramLog")
    return buf.rstrip(b"\0").decode(errors="replace")


@dataclass(frozen=True)
class _Build:
    cubin: bytes
    log: str
    lowered: dict          # name expression -> mangled name


@functools.lru_cache(maxsize=None)
def _build(file: str, sha: str, options: tuple[str, ...], arch: str,
           names: tuple[str, ...]) -> _Build:
    """Compile `file` once for `arch` with every name expression in `names`.

    `sha` is not used here except as part of the cache key: an edited kernel or header
    compiles again.
    """
    nvrtc = _nvrtc()
    source = kernels.read_source(file)
    opts = tuple(options) + (f"--gpu-architecture={arch}", "-Xptxas=-v")
    prog = _check(nvrtc.nvrtcCreateProgram(source.encode(), f"kernels/{file}".encode(),
                                           0, [], []), "nvrtcCreateProgram")
    try:
        for name in names:
            _check(nvrtc.nvrtcAddNameExpression(prog, name.encode()),
                   f"nvrtcAddNameExpression({name!r})")
        enc = [o.encode() for o in opts]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(enc), enc)
        log = _program_log(prog)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise KernelCompileError(_compile_message(file, arch, log))
        size = _check(nvrtc.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
        cubin = b" " * size
        _check(nvrtc.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")
        lowered = {}
        for name in names:
            err, low = nvrtc.nvrtcGetLoweredName(prog, name.encode())
            if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
                raise KernelCompileError(
                    f"kernels/{file}: no kernel {name!r} for {arch}")
            lowered[name] = low.decode()
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return _Build(cubin=bytes(cubin), log=log, lowered=lowered)


def _compile_message(file: str, arch: str, log: str) -> str:
    errors = [ln for ln in log.splitlines() if "error" in ln]
    shown = "\n".join(errors[:10]) or log[-2000:]
    return f"NVRTC could not compile kernels/{file} for {arch}:\n{shown}"


#: (sha, options, arch, name expression) -> the build that compiled it.
_INDEX: dict[tuple, _Build] = {}


def compile_many(specs: Iterable[KernelSpec], arch: str) -> list[CompiledKernel]:
    """Compile `specs` for `arch`: one NVRTC program per (file, options) with all of its
    name expressions. Returns one CompiledKernel per spec, in order."""
    specs = list(specs)
    groups: dict[tuple, list[str]] = {}
    keys = []
    shas: dict[str, str] = {}
    for spec in specs:
        if spec.file not in shas:
            shas[spec.file] = kernels.source_sha256(spec.file)
        opts = spec.all_options
        key = (shas[spec.file], opts, arch, spec.name_expression)
        keys.append(key)
        if key not in _INDEX:
            names = groups.setdefault((spec.file, opts), [])
            if spec.name_expression not in names:
                names.append(spec.name_expression)
    for (file, opts), names in groups.items():
        build = _build(file, shas[file], opts, arch, tuple(sorted(names)))
        for name in names:
            _INDEX[(shas[file], opts, arch, name)] = build
    out = []
    for spec, key in zip(specs, keys):
        build = _INDEX[key]
        out.append(CompiledKernel(file=spec.file, name_expression=spec.name_expression,
                                  arch=arch, options=spec.all_options,
                                  lowered_name=build.lowered[spec.name_expression],
                                  cubin=build.cubin, log=build.log))
    return out


def compile_cubin(spec: KernelSpec, arch: str) -> CompiledKernel:
    """Compile one kernel instantiation to a cubin for `arch` (e.g. "sm_90"), cached.

    Raises KernelCompileError, naming kernels/<file> and the error lines, when NVRTC
    rejects the source."""
    return compile_many([spec], arch)[0]


def clear_cache() -> None:
    """Forget every compile (the next call compiles again)."""
    _INDEX.clear()
    _build.cache_clear()
    _disassemble.cache_clear()


# ---------------------------------------------------------------------------- resources

_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(\w+)'")
_PROPS = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_ptxas_log(log: str) -> dict[str, dict]:
    """Per function (mangled name) in a `ptxas -v` log: registers, shared_static_bytes,
    barriers (entry functions only) and stack_frame_bytes, spill_store_bytes,
    spill_load_bytes (every function with a properties block)."""
    funcs: dict[str, dict] = {}
    entry = props = None
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            entry = m.group(1)
            funcs.setdefault(entry, {})["entry"] = True
        elif m := _PROPS.search(line):
            props = m.group(1)
            funcs.setdefault(props, {}).setdefault("entry", False)
        elif m := _FRAME.search(line):
            if props is not None:
                frame, stores, loads = (int(x) for x in m.groups())
                funcs[props].update(stack_frame_bytes=frame, spill_store_bytes=stores,
                                    spill_load_bytes=loads)
        elif m := _USED.search(line):
            if entry is not None:
                b = _BARRIERS.search(line)
                s = _SMEM.search(line)
                funcs[entry].update(registers=int(m.group(1)),
                                    barriers=int(b.group(1)) if b else 0,
                                    shared_static_bytes=int(s.group(1)) if s else 0)
    return funcs


def resources(spec: KernelSpec, arch: str) -> dict:
    """Registers, static shared memory, stack frame, spills and barriers of one kernel
    instantiation compiled for `arch`, as a dict with the keys of COLUMNS."""
    return _resources(compile_cubin(spec, arch))


def _resources(ck: CompiledKernel) -> dict:
    info = parse_ptxas_log(ck.log).get(ck.lowered_name)
    if not info or "registers" not in info or "stack_frame_bytes" not in info:
        raise PerflabError(
            f"kernels/{ck.file}: the ptxas log for {ck.arch} has no resource lines for "
            f"{ck.name_expression} ({ck.lowered_name}); log:\n{ck.log[-2000:]}")
    return {
        "kernel": ck.name_expression,
        "file": ck.file,
        "arch": ck.arch,
        "registers": info["registers"],
        "shared_static_bytes": info["shared_static_bytes"],
        "stack_frame_bytes": info["stack_frame_bytes"],
        "spill_store_bytes": info["spill_store_bytes"],
        "spill_load_bytes": info["spill_load_bytes"],
        "barriers": info["barriers"],
    }


def report(specs: Iterable[KernelSpec], archs: Sequence[str] = ARCHS):
    """A pandas DataFrame with one row per spec x arch (columns COLUMNS), specs in order,
    then architectures in order."""
    import pandas as pd

    specs = list(specs)
    by_arch = {arch: compile_many(specs, arch) for arch in archs}
    rows = [_resources(by_arch[arch][i]) for i in range(len(specs)) for arch in archs]
    return pd.DataFrame(rows, columns=list(COLUMNS))


# ---------------------------------------------------------------------------- SASS

def nvdisasm_path() -> Path:
    """The nvdisasm binary of the installed `nvidia-cuda-nvdisasm` package (or, failing
    that, one on PATH); PerflabError saying what to install when there is none."""
    from importlib import metadata

    try:
        dist = metadata.distribution("nvidia-cuda-nvdisasm")
    except metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        for f in dist.files or ():
            if f.name in ("nvdisasm", "nvdisasm.exe") and f.parent.name == "bin":
                p = Path(dist.locate_file(f))
                if p.exists():
                    return p
    found = shutil.which("nvdisasm")
    if found:
        return Path(found)
    raise PerflabError(
        "SASS needs nvdisasm, which is not installed: pip install 'nvidia-cuda-nvdisasm>=13' "
        "(or put a CUDA toolkit's bin/ on PATH)")


@functools.lru_cache(maxsize=64)
def _disassemble(cubin: bytes) -> str:
    tool = nvdisasm_path()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        proc = subprocess.run([str(tool), "-c", path], capture_output=True, text=True)
    if proc.returncode != 0:
        raise PerflabError(f"nvdisasm failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


# nvdisasm starts every section with "//---- .text.<mangled name> ----" (code) or
# "//---- .nv.shared.<...> ----" etc. (data, printed even with -c).
_SECTION = re.compile(r"^//-+ (\S+)\s+-+\s*$", re.MULTILINE)


def _function_sass(disassembly: str, lowered: str) -> str | None:
    heads = list(_SECTION.finditer(disassembly))
    for i, m in enumerate(heads):
        if m.group(1) == f".text.{lowered}":
            end = heads[i + 1].start() if i + 1 < len(heads) else len(disassembly)
            return disassembly[m.start():end].rstrip() + "\n"
    return None


def sass(spec: KernelSpec, arch: str) -> str:
    """The SASS of just this kernel instantiation (its .text section) for `arch`."""
    ck = compile_cubin(spec, arch)
    text = _function_sass(_disassemble(ck.cubin), ck.lowered_name)
    if text is None:
        raise PerflabError(f"kernels/{ck.file}: no .text.{ck.lowered_name} in the {arch} cubin")
    return text


# `/*0a40*/   @!P0 LDS.128 R4, [R2+0x10] ;` -> opcode "LDS.128"
_INSTR = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)(.*)$")


def _instructions(lines: list[str]) -> list[tuple[int, str, str]]:
    """(line index, opcode, whole instruction text) of every instruction line."""
    out = []
    for i, ln in enumerate(lines):
        m = _INSTR.match(ln)
        if m:
            out.append((i, m.group(1), ln.split("*/", 1)[1].strip()))
    return out


def count_instructions(sass_text: str, base: bool = False) -> collections.Counter:
    """Counter of opcodes with their modifiers ("FFMA", "LDS.128", "HMMA.1684.F32.TF32",
    "STL", ...) in `sass_text`; `base=True` drops modifiers ("LDS", "HMMA")."""
    ops = (op for _, op, _ in _instructions(sass_text.splitlines()))
    return collections.Counter(op.split(".")[0] if base else op for op in ops)


def sass_excerpt(sass_text: str, first: str, then: str, context: int = 12, *,
                 within: int = 8, run: int = 2) -> str:
    """The lines around the first instruction matching regex `first` that is followed,
    within `within` instructions, by `run` or more consecutive instructions matching
    regex `then` (e.g. first=r"LDS\\.128", then=r"FFMA"). The excerpt runs from `context`
    lines before that instruction to `context` lines after the end of the run's first
    `run` instructions. PerflabError when there is no such place."""
    lines = sass_text.splitlines()
    instrs = _instructions(lines)
    f_re, t_re = re.compile(first), re.compile(then)
    for k, (li, _, text) in enumerate(instrs):
        if not f_re.search(text):
            continue
        for s in range(k + 1, min(k + 1 + within, len(instrs))):
            window = instrs[s:s + run]
            if len(window) == run and all(t_re.search(t) for _, _, t in window):
                start = max(0, li - context)
                end = min(len(lines), window[-1][0] + context + 1)
                return "\n".join(lines[start:end])
    raise PerflabError(
        f"no instruction matching {first!r} followed within {within} instructions by "
        f"{run} matching {then!r}")


# ---------------------------------------------------------------------------- command line

def _select(specs: list[KernelSpec], name: str) -> list[KernelSpec]:
    exact = [s for s in specs if name in (s.name_expression, s.name)]
    if exact:
        return exact
    return [s for s in specs if name in s.name_expression or name in s.file]


def main(argv: Sequence[str] | None = None, specs: Iterable[KernelSpec] | None = None) -> int:
    """`compile-report [--arch sm_90] [--kernel NAME] [--sass NAME]`.

    Prints the resource table of `specs` (default: perflab.registry.kernel_specs()) for
    each --arch (default sm_89 and sm_90); --kernel keeps the specs whose name, name
    expression or file contains NAME; --sass NAME prints the SASS of the matching
    kernels instead. Returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m perflab compile-report",
        description="Compile every kernel offline (NVRTC, no GPU) and report registers, "
                    "shared memory, stack, spills and barriers; or print a kernel's SASS.")
    parser.add_argument("--arch", action="append", metavar="SM",
                        help="target architecture, e.g. sm_90 (repeatable; default sm_89 and sm_90)")
    parser.add_argument("--kernel", metavar="NAME",
                        help="only kernels whose name, name expression or file contains NAME")
    parser.add_argument("--sass", metavar="NAME",
                        help="print the SASS of the kernel(s) NAME instead of the table")
    args = parser.parse_args(argv)
    archs = tuple(args.arch) if args.arch else ARCHS
    try:
        if specs is None:
            from .registry import kernel_specs
            specs = kernel_specs()
        specs = list(specs)
        if args.kernel:
            specs = _select(specs, args.kernel)
        if args.sass:
            chosen = _select(specs, args.sass)
            if not chosen:
                raise PerflabError(f"no kernel matches {args.sass!r}; known: "
                                   + ", ".join(s.name_expression for s in specs))
            for spec in chosen:
                for arch in archs:
                    print(f"// ===== kernels/{spec.file}: {spec.name_expression} ({arch})")
                    print(sass(spec, arch))
            return 0
        if not specs:
            raise PerflabError(f"no kernel matches {args.kernel!r}")
        import pandas as pd

        with pd.option_context("display.width", 200, "display.max_rows", None,
                               "display.max_colwidth", 60):
            print(report(specs, archs).to_string(index=False))
        return 0
    except PerflabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
