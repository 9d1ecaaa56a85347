"""The hot loop of a kernel, read from its SASS: how many instructions one iteration of
the Mandelbrot step issues, and how many of them are FP32 arithmetic.

A loop is a branch back to an earlier label; its body, the instructions from that label
to the branch. The escape test is the one FSETP that compares with 4 per step, so the
number of FSETPs in a body is the number of steps it makes (8 for a chunk of 8, 2 for a
thread that carries two pixels). The hot loop is the one with the most steps (ties: the
smallest, the innermost)."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

#: FP32 arithmetic: what the FP32 pipes run and chapter 0's FFMA peak measures (an FFMA
#: is one instruction, as an FADD or an FMUL is).
FP32_OPS = ("FADD", "FMUL", "FFMA")

_LABEL = re.compile(r"^\s*(\.L_x_\d+):")
_INSN = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")
_TARGET = re.compile(r"`\((\.L_x_\d+)\)")


@dataclass(frozen=True)
class Loop:
    start: int                  # byte address of the first instruction of the body
    end: int                    # address of the branch back
    ops: Counter                # opcode (without modifiers) -> count in the body

    @property
    def instructions(self) -> int:
        return sum(self.ops.values())

    @property
    def steps(self) -> int:
        return self.ops["FSETP"]

    @property
    def fp32(self) -> int:
        return sum(self.ops[o] for o in FP32_OPS)

    def per_step(self) -> dict:
        """Instructions and FP32 instructions per Mandelbrot step of this loop."""
        s = max(self.steps, 1)
        return {"steps_per_trip": self.steps, "instructions_per_trip": self.instructions,
                "instructions_per_step": self.instructions / s,
                "fp32_per_step": self.fp32 / s,
                "fp32_fraction": self.fp32 / self.instructions if self.instructions else 0.0,
                **{f"{o.lower()}_per_step": self.ops[o] / s for o in FP32_OPS}}


def instructions(text: str) -> tuple[list[tuple[int, str, str]], dict[str, int]]:
    """[(address, opcode, operands)] in order, and label -> address of what follows it."""
    insns, labels, pending = [], {}, []
    for line in text.splitlines():
        m = _LABEL.match(line)
        if m:
            pending.append(m.group(1))
            continue
        m = _INSN.search(line)
        if m:
            addr = int(m.group(1), 16)
            for lab in pending:
                labels[lab] = addr
            pending = []
            insns.append((addr, m.group(3).split(".")[0], m.group(4)))
    return insns, labels


def loops(text: str) -> list[Loop]:
    insns, labels = instructions(text)
    out = []
    for addr, op, operands in insns:
        if op != "BRA":
            continue
        t = _TARGET.search(operands)
        if not t or t.group(1) not in labels or labels[t.group(1)] >= addr:
            continue
        start = labels[t.group(1)]
        body = Counter(o for a, o, _ in insns if start <= a <= addr)
        out.append(Loop(start, addr, body))
    return out


def hot_loop(text: str) -> Loop:
    found = [lp for lp in loops(text) if lp.steps > 0]
    if not found:
        raise ValueError("no loop with an escape test (FSETP) in this SASS")
    return max(found, key=lambda lp: (lp.steps, -lp.instructions))
