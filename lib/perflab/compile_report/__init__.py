"""The offline compile report: what the compiler made of every kernel, with no GPU.

NVRTC from pip (`cuda-bindings` with `nvidia-cuda-nvrtc`) compiles each kernel
instantiation to a cubin for a chosen architecture, with `-Xptxas=-v`, and the ptxas lines
of the program log give its registers, static shared memory, stack frame, spill
stores/loads and barriers. nvdisasm from pip (`nvidia-cuda-nvdisasm`) turns the cubin into
SASS.

    spec = KernelSpec("NN-slug/regtile.cu", "sgemm_regtile", template=(128, 128, 8, 8, 8))
    resources(spec, "sm_90")    # {'kernel': 'sgemm_regtile<128, 128, 8, 8, 8>', 'registers': ..., ...}
    report(specs)               # DataFrame: one row per spec x arch
    text = sass(spec, "sm_90")  # the SASS of just that function
    print(sass_excerpt(text, r"LDS\\.128", r"FFMA"))
    count_instructions(text)    # Counter({'FFMA': 512, 'LDS.128': 32, ...})
    count_families(text, {"lds": "LDS", "fma": "FFMA"})    # {'lds': 40, 'fma': 512}

The parts: `nvrtc` compiles (one program per instantiation, across the cores), `cache`
keeps every result on disk (keyed by the compiled text, options, architecture, name
expression and NVRTC), `ptxas` reads the log, `disasm` the SASS; this module makes the
report and its command line, `python -m perflab compile-report`.
"""
from __future__ import annotations

import argparse
import sys
from typing import Iterable, Sequence

from ..errors import PerflabError
from ..kernels import KernelSpec
from . import cache, disasm, nvrtc, ptxas
from .disasm import (FP32, Instruction, Loop, count_families, count_instructions, hot_loop,
                     instructions, loop_lines, loops, nvdisasm_path, sass, sass_excerpt)
from .nvrtc import CompiledKernel, compile_cubin, compile_many
from .ptxas import COLUMNS, parse_ptxas_log

__all__ = ["ARCHS", "COLUMNS", "FP32", "CompiledKernel", "Instruction", "Loop", "clear_cache",
           "compile_cubin", "compile_many", "count_families", "count_instructions", "hot_loop",
           "instructions", "loop_lines", "loops", "main", "nvdisasm_path", "parse_ptxas_log",
           "report", "resources", "sass", "sass_excerpt"]

#: The architectures the report covers by default (Ada and Hopper).
ARCHS: tuple[str, ...] = ("sm_89", "sm_90")


def resources(spec: KernelSpec, arch: str) -> dict:
    """Registers, static shared memory, stack frame, spills and barriers of one kernel
    instantiation compiled for `arch`, as a dict with the keys of COLUMNS."""
    return ptxas.resources(compile_cubin(spec, arch))


def report(specs: Iterable[KernelSpec], archs: Sequence[str] = ARCHS, *,
           progress: bool = False):
    """A pandas DataFrame with one row per spec x arch (columns COLUMNS), specs in order,
    then architectures in order; what is not in the cache is compiled in parallel (a
    progress bar on stderr with `progress`).

    Its `attrs`: "nvrtc", the compiler (version, library, cuda-bindings); "compiled", the
    rows compiled by this call (the others came from the cache); "cache", its folder."""
    import pandas as pd

    compiled = nvrtc.compile_all([(spec, arch) for spec in specs for arch in archs],
                           progress=progress)
    df = pd.DataFrame([ptxas.resources(ck) for ck in compiled], columns=list(COLUMNS))
    df.attrs.update(nvrtc=nvrtc.describe(nvrtc.identity()),
                    compiled=sum(not ck.cached for ck in compiled), cache=str(cache.directory()))
    return df


def clear_cache() -> None:
    """Forget every compile: remove the on-disk entries (the next call compiles again)."""
    cache.clear()
    disasm.disassemble.cache_clear()


# ---------------------------------------------------------------------------- command line

def _select(specs: list[KernelSpec], name: str) -> list[KernelSpec]:
    exact = [s for s in specs if name in (s.name_expression, s.name)]
    if exact:
        return exact
    return [s for s in specs if name in s.name_expression or name in s.file]


def _print_sass(specs: list[KernelSpec], name: str, archs: Sequence[str]) -> None:
    chosen = _select(specs, name)
    if not chosen:
        raise PerflabError(f"no kernel matches {name!r}; known: "
                           + ", ".join(s.name_expression for s in specs))
    for spec in chosen:
        for arch in archs:
            print(f"// ===== kernels/{spec.file}: {spec.name_expression} ({arch})")
            print(sass(spec, arch))


def _print_table(specs: list[KernelSpec], archs: Sequence[str]) -> None:
    import pandas as pd

    df = report(specs, archs, progress=True)
    with pd.option_context("display.width", 200, "display.max_rows", None,
                           "display.max_colwidth", 60):
        print(df.to_string(index=False))
    print(f"\n{len(df)} rows, compiled by {df.attrs['nvrtc']}: "
          f"{df.attrs['compiled']} compiled now, {len(df) - df.attrs['compiled']} from the "
          f"cache in {df.attrs['cache']}")


def main(argv: Sequence[str] | None = None, specs: Iterable[KernelSpec] | None = None) -> int:
    """`compile-report [--all] [--arch sm_90] [--kernel NAME] [--sass NAME]`.

    Prints the resource table of `specs` (default: perflab.registry.kernel_specs(), every
    experiment's kernels at their default parameters; with --all, every instantiation an
    experiment may launch, sweeps included) for each --arch (default sm_89 and sm_90);
    --kernel keeps the specs whose name, name expression or file contains NAME; --sass
    NAME prints the SASS of the matching kernels instead. Returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m perflab compile-report",
        description="Compile the kernels offline (NVRTC, no GPU) and report registers, "
                    "shared memory, stack, spills and barriers; or print a kernel's SASS. "
                    f"Compiles are cached in {cache.directory()} "
                    "($PERFLAB_CACHE_DIR/compile when set).")
    parser.add_argument("--all", action="store_true",
                        help="every instantiation an experiment may launch (the sweeps "
                             "too), not only those at default parameters")
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
            from ..registry import kernel_specs
            specs = kernel_specs(full=args.all)
        specs = list(specs)
        if args.kernel:
            specs = _select(specs, args.kernel)
        if args.sass:
            _print_sass(specs, args.sass, archs)
        elif not specs:
            raise PerflabError(f"no kernel matches {args.kernel!r}")
        else:
            _print_table(specs, archs)
        return 0
    except PerflabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
