"""The hot loop of a kernel, read from its SASS: how many instructions one iteration of
the Mandelbrot step issues, and how many of them are FP32 arithmetic.

The loops come from the lab's SASS reader (perflab.compile_report.loops: a branch back
to an earlier label, and its body). The escape test is the one FSETP that compares with 4
per step, so the number of FSETPs in a body is the number of steps it makes (8 for a
chunk of 8, 2 for a thread that carries two pixels). The hot loop is the one with the
most steps (ties: the smallest, the innermost)."""
from __future__ import annotations

from dataclasses import dataclass

from ...compile_report import disasm

#: FP32 arithmetic: what the FP32 pipes run and the machine chapter's FFMA peak measures
#: (an FFMA is one instruction, as an FADD or an FMUL is).
FP32_OPS = ("FADD", "FMUL", "FFMA")


@dataclass(frozen=True)
class Loop(disasm.Loop):
    """A SASS loop read as Mandelbrot steps."""

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


def loops(text: str) -> list[Loop]:
    return [Loop(lp.start, lp.end, lp.ops) for lp in disasm.loops(text)]


def hot_loop(text: str) -> Loop:
    found = [lp for lp in loops(text) if lp.steps > 0]
    if not found:
        raise ValueError("no loop with an escape test (FSETP) in this SASS")
    return max(found, key=lambda lp: (lp.steps, -lp.instructions))
