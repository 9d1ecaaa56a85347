"""The ptxas -v lines of an NVRTC program log, and a kernel's resources from them."""
from __future__ import annotations

import re

from ..errors import PerflabError

#: The columns of `resources` (and of the report), in order.
COLUMNS: tuple[str, ...] = ("kernel", "file", "arch", "registers", "shared_static_bytes",
                            "stack_frame_bytes", "spill_store_bytes", "spill_load_bytes",
                            "barriers")

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


def resources(ck) -> dict:
    """The row of COLUMNS of a CompiledKernel: registers, static shared memory, stack
    frame, spills and barriers of its entry function. These are the entry function's own:
    a non-inlined device function it calls has its own stack frame and spills in the log
    (rare in these kernels, which inline everything).

    PerflabError, naming the NVRTC that compiled it, when the log lacks those lines."""
    info = parse_ptxas_log(ck.log).get(ck.lowered_name, {})
    if "registers" not in info or "stack_frame_bytes" not in info:
        raise PerflabError(
            f"kernels/{ck.file}: {ck.compiler} returned no ptxas resource lines for "
            f"{ck.name_expression} ({ck.lowered_name}) on {ck.arch}, though asked for them "
            "(-Xptxas=-v); the compile report needs an NVRTC that prints them (those of "
            "pip's nvidia-cuda-nvrtc 13.x do): pip install 'nvidia-cuda-nvrtc>=13.1'. "
            "Program log:\n"
            + (ck.log[-2000:] or "(empty)"))
    return {"kernel": ck.name_expression, "file": ck.file, "arch": ck.arch,
            **{c: info[c] for c in COLUMNS[3:]}}
