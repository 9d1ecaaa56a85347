"""SASS: nvdisasm from pip (`nvidia-cuda-nvdisasm`) on a kernel's cubin, and what the
book reads in it (instruction counts, the excerpt around an inner loop)."""
from __future__ import annotations

import collections
import functools
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import PerflabError
from ..kernels import KernelSpec
from .nvrtc import compile_cubin


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
def disassemble(cubin: bytes) -> str:
    """The whole cubin's SASS (`nvdisasm -c`)."""
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
    text = _function_sass(disassemble(ck.cubin), ck.lowered_name)
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
