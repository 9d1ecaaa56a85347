"""SASS: nvdisasm from pip (`nvidia-cuda-nvdisasm`) on a kernel's cubin, and what the
book reads in it: the instructions (`instructions`), their counts by opcode or opcode
family (`count_instructions`, `Loop.count`, FP32), the loops (`loops`: a branch back to an
earlier label; `hot_loop`: the one with the most of a marker instruction; `loop_lines`:
its instructions' lines) and the excerpt around an inner loop (`sass_excerpt`). Every
chapter reads SASS through these."""
from __future__ import annotations

import collections
import functools
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

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


# `/*0a40*/   @!P0 LDS.128 R4, [R2+0x10] ;` -> address 0x0a40, opcode "LDS.128", operands
_INSTR = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(?:@!?U?P[T0-9]+\s+)?"
                    r"([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)(.*)$")
# `.L_x_12:` -> the label of the instruction that follows
_LABEL = re.compile(r"^\s*(\.L_x_\d+):")
# a branch's target, "`(.L_x_12)"
_TARGET = re.compile(r"`\((\.L_x_\d+)\)")


class Instruction(NamedTuple):
    line: int          # index of its line in the SASS text
    address: int       # byte address in the function
    opcode: str        # with its modifiers: "LDS.128", "HMMA.1684.F32.TF32"
    text: str          # the whole instruction, "LDS.128 R4, [R2+0x10] ;"
    labels: tuple      # the labels that name this instruction (branch targets)

    @property
    def base(self) -> str:
        """The opcode without modifiers: "LDS", "HMMA"."""
        return self.opcode.split(".")[0]


def instructions(sass_text: str) -> list[Instruction]:
    """Every instruction of `sass_text` in order, with the labels that name it."""
    out, pending = [], []
    for i, ln in enumerate(sass_text.splitlines()):
        lab = _LABEL.match(ln)
        if lab:
            pending.append(lab.group(1))
            continue
        m = _INSTR.match(ln)
        if m:
            out.append(Instruction(i, int(m.group(1), 16), m.group(2),
                                   ln.split("*/", 1)[1].strip(), tuple(pending)))
            pending = []
    return out


def count_instructions(sass_text: str, base: bool = False) -> collections.Counter:
    """Counter of opcodes with their modifiers ("FFMA", "LDS.128", "HMMA.1684.F32.TF32",
    "STL", ...) in `sass_text`; `base=True` drops modifiers ("LDS", "HMMA")."""
    return collections.Counter(ins.base if base else ins.opcode
                               for ins in instructions(sass_text))


def count_families(sass_text: str, families: dict) -> dict:
    """name -> how many instructions of `sass_text` have an opcode (with its modifiers)
    starting with one of the family's prefixes (a str or a tuple of them): {"lds": "LDS"}
    counts LDS, LDS.128 and LDSM; {"ld": ("LDG", "LDS")} both."""
    c = count_instructions(sass_text)
    return {name: sum(n for op, n in c.items()
                      if op.startswith((pre,) if isinstance(pre, str) else tuple(pre)))
            for name, pre in families.items()}


#: FP32 arithmetic, an opcode family: what the FP32 pipes run and the FFMA peak measures
#: (an FFMA is one instruction, as an FADD or an FMUL is).
FP32 = ("FADD", "FMUL", "FFMA")


@dataclass(frozen=True)
class Loop:
    """A loop of the SASS: a branch back to an earlier label, and its body, the
    instructions from that label to the branch."""
    start: int                          # address of the body's first instruction
    end: int                            # address of the branch back
    ops: collections.Counter            # base opcode -> count in the body

    @property
    def instructions(self) -> int:
        return sum(self.ops.values())

    def count(self, *opcodes: str) -> int:
        """Instructions of the body with one of these base opcodes (a family: `FP32`)."""
        return sum(self.ops[o] for o in opcodes)


def loops(sass_text: str) -> list[Loop]:
    """Every loop of `sass_text`, in the order of their branches back."""
    ins = instructions(sass_text)
    at = {lab: i.address for i in ins for lab in i.labels}
    out = []
    for i in ins:
        if i.base != "BRA":
            continue
        t = _TARGET.search(i.text)
        if not t or t.group(1) not in at or at[t.group(1)] >= i.address:
            continue
        start = at[t.group(1)]
        out.append(Loop(start, i.address, collections.Counter(
            j.base for j in ins if start <= j.address <= i.address)))
    return out


def hot_loop(sass_text: str, marker: str) -> Loop:
    """The loop of `sass_text` with the most `marker` instructions in its body (a base
    opcode that each pass of the work makes once, e.g. an escape test), ties going to the
    shortest (the innermost); ValueError when no loop has one."""
    found = [lp for lp in loops(sass_text) if lp.count(marker) > 0]
    if not found:
        raise ValueError(f"no loop with {marker} in this SASS")
    return max(found, key=lambda lp: (lp.count(marker), -lp.instructions))


def loop_lines(sass_text: str, loop: Loop) -> list[str]:
    """The lines of `loop`'s instructions, from its first to its branch back, stripped."""
    lines = sass_text.splitlines()
    return [lines[i.line].strip() for i in instructions(sass_text)
            if loop.start <= i.address <= loop.end]


def sass_excerpt(sass_text: str, first: str, then: str, context: int = 12, *,
                 within: int = 8, run: int = 2) -> str:
    """The lines around the first instruction matching regex `first` that is followed,
    within `within` instructions, by `run` or more consecutive instructions matching
    regex `then` (e.g. first=r"LDS\\.128", then=r"FFMA"). The excerpt runs from `context`
    lines before that instruction to `context` lines after the end of the run's first
    `run` instructions. PerflabError when there is no such place."""
    lines = sass_text.splitlines()
    instrs = instructions(sass_text)
    f_re, t_re = re.compile(first), re.compile(then)
    for k, ins in enumerate(instrs):
        if not f_re.search(ins.text):
            continue
        for s in range(k + 1, min(k + 1 + within, len(instrs))):
            window = instrs[s:s + run]
            if len(window) == run and all(t_re.search(w.text) for w in window):
                start = max(0, ins.line - context)
                end = min(len(lines), window[-1].line + context + 1)
                return "\n".join(lines[start:end])
    raise PerflabError(
        f"no instruction matching {first!r} followed within {within} instructions by "
        f"{run} matching {then!r}")
