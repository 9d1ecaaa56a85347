"""Host code: C sources under kernels/, compiled by the system C compiler, called through
cffi and timed on the host CPU.

    src = HostSource("mandelbrot/mandel_avx2.c",
                     cdef="void mandel(float *out, int64_t w, int64_t h, int max_iter);",
                     flags=("-mavx2", "-mfma", "-fopenmp"))
    if supports("avx2"):
        lib = load(src)              # compiled once per source, flags, compiler and CPU
        out = np.empty((h, w), np.float32)
        t = auto_benchmark(lambda: lib.mandel(pointer(out), w, h, 256))
        entry = src.kernel_entry("mandel")   # a row's "kernels" entry: stale like a .cu

cffi's ABI mode: the compiler named by $CC (else cc, gcc or clang on PATH) builds a plain
shared library, which `ffi.dlopen` loads. That needs no Python headers and no setuptools
and does not depend on the Python that loads it. The cdef is compiled in the same unit as
the source, after it, so a declaration that disagrees with the definition is a compile
error rather than a silent wrong call.

Builds are cached in $PERFLAB_CACHE_DIR/host (default ~/.cache/perflab/host), one file
per key: the source sha256 (kernels.source_sha256: the file and the headers it includes),
the cdef, the flags and libraries, the compiler and its version, the machine and the CPU.
A build is written in a temporary folder beside the cache and renamed into place, so
concurrent builds never leave a half-written library. Each library is loaded once per
process.

For "all cores" variants, compile with -fopenmp and use `#pragma omp parallel for`: the
thread pool persists between calls, and by default it has one thread per core in the
process's affinity mask (`cpu_info()["available_cores"]`; OMP_NUM_THREADS overrides it).
pthreads work too (libraries=("pthread",)); nothing here is specific to either.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from time import perf_counter_ns

import numpy as np

from . import paths
from .device import slugify
from .errors import HostBuildError, HostUnavailableError, NoCompilerError, UnsupportedISAError
from .kernels import source_sha256
from .timing import repeats_for, summarize

#: Flags every host source is compiled with; a source's own flags come after (and win).
BASE_FLAGS: tuple[str, ...] = ("-O3",)
_LINK_FLAGS = ("-fPIC", "-shared") + (
    ("-Wl,-z,defs",) if sys.platform.startswith("linux") else ())  # unresolved symbol: error

#: The instruction sets recorded in `cpu_info()["flags"]` (names as in /proc/cpuinfo).
LAB_FLAGS = ("sse4_2", "avx", "avx2", "fma", "bmi2", "f16c", "avx512f", "avx512cd",
             "avx512bw", "avx512dq", "avx512vl", "avx512_vnni", "avx512_bf16",
             "avx512_fp16", "asimd", "sve")

# The macro a compiler predefines when its flags let it emit an instruction set, and the
# name of that set in /proc/cpuinfo.
_ISA_MACROS = {
    "__SSE4_2__": "sse4_2", "__AVX__": "avx", "__AVX2__": "avx2", "__FMA__": "fma",
    "__BMI2__": "bmi2", "__F16C__": "f16c", "__AVX512F__": "avx512f",
    "__AVX512CD__": "avx512cd", "__AVX512BW__": "avx512bw", "__AVX512DQ__": "avx512dq",
    "__AVX512VL__": "avx512vl", "__AVX512VNNI__": "avx512_vnni",
    "__AVX512BF16__": "avx512_bf16", "__AVX512FP16__": "avx512_fp16",
    "__ARM_FEATURE_SVE": "sve",
}


@dataclass(frozen=True)
class HostSource:
    """One C file under kernels/, the functions Python calls, and how to compile it."""

    file: str                           # relative to kernels/, e.g. "mandelbrot/scalar.c"
    cdef: str                           # C declarations of the functions to expose
    flags: tuple[str, ...] = ()         # extra compiler flags, e.g. ("-mavx512f", "-fopenmp")
    libraries: tuple[str, ...] = ()     # linked as -l<name>, e.g. ("m",)

    @property
    def path(self) -> Path:
        return paths.KERNELS / self.file

    @property
    def recorded_options(self) -> list[str]:
        """The options a row records (as KernelSpec.recorded_options): the flags and the
        libraries, not the include path, which depends on where the lab is checked out."""
        return [*BASE_FLAGS, *self.flags, *(f"-l{lib}" for lib in self.libraries)]

    def kernel_entry(self, function: str) -> dict:
        """A row's "kernels" entry for `function`, as for a CUDA kernel: store.stale_kernels
        compares its sha256 with the source today."""
        return {"file": self.file, "name": function, "options": self.recorded_options,
                "sha256": source_sha256(self.file)}


# --------------------------------------------------------------------------- the compiler

@dataclass(frozen=True)
class Compiler:
    argv: tuple[str, ...]     # the command, argv[0] found on PATH: ("/usr/bin/cc",)
    path: str                 # argv[0] with links followed: "/usr/bin/x86_64-linux-gnu-gcc-12"
    version: str              # the first line of `--version`

    def as_dict(self) -> dict:
        return asdict(self)


def compiler() -> Compiler:
    """The C compiler: $CC (which may carry arguments) when it is found on PATH, else the
    first of cc, gcc, clang. NoCompilerError where there is none."""
    env = os.environ.get("CC", "").strip()
    candidates = ([shlex.split(env)] if env else []) + [["cc"], ["gcc"], ["clang"]]
    for argv in candidates:
        found = shutil.which(argv[0])
        if found:
            return _probe_compiler((found, *argv[1:]))
    tried = f"$CC={env!r}" if env else "$CC (unset)"
    raise NoCompilerError(
        f"no C compiler found (tried {tried}, cc, gcc, clang): install one, e.g. "
        "apt-get install gcc; without it the chapter replays recorded rows")


@functools.lru_cache(maxsize=None)
def _probe_compiler(argv: tuple[str, ...]) -> Compiler:
    try:
        p = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise NoCompilerError(f"the C compiler {' '.join(argv)} does not run ({exc})") from None
    if p.returncode != 0:
        raise NoCompilerError(f"the C compiler {' '.join(argv)} does not run "
                              f"(--version exits {p.returncode}: {p.stderr.strip()[-500:]})")
    version = p.stdout.strip().splitlines()[0] if p.stdout.strip() else "unknown"
    return Compiler(argv, os.path.realpath(argv[0]), version)


def _run(cmd: list[str], what: str) -> str:
    """Run the compiler; its stdout, or HostBuildError with its errors."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as exc:
        raise HostBuildError(f"{what}: {exc}") from None
    if p.returncode != 0:
        raise HostBuildError(f"{what} failed (exit {p.returncode}):\n$ {shlex.join(cmd)}\n"
                             f"{p.stderr.strip()[-3000:]}")
    return p.stdout


def _cffi():
    try:
        import cffi
    except ImportError:
        raise HostUnavailableError(
            "cffi is not installed (pip install cffi; it is in requirements.txt): host code "
            "is loaded through it; without it the chapter replays recorded rows") from None
    return cffi


def unavailable() -> str | None:
    """Why host code cannot be built and loaded here (no cffi, no C compiler), or None."""
    try:
        _cffi()
        compiler()
    except HostUnavailableError as exc:
        return str(exc)
    return None


# --------------------------------------------------------------------------- the CPU

@functools.lru_cache(maxsize=1)
def _cpuinfo() -> tuple[dict[str, str], ...]:
    """/proc/cpuinfo, one dict per logical processor (empty where there is no such file)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return ()
    blocks = []
    for block in text.strip().split("\n\n"):
        fields = (line.partition(":") for line in block.splitlines())
        blocks.append({k.strip(): v.strip() for k, _, v in fields})
    return tuple(blocks)


def _field(name: str) -> str:
    return next((b[name] for b in _cpuinfo() if b.get(name)), "")


def cpu_flags() -> frozenset[str]:
    """Every instruction-set flag of the CPU ("flags" on x86, "Features" on Arm); empty
    where /proc/cpuinfo is missing, so that elsewhere supports() says no and the caller
    falls back to plain C."""
    return frozenset((_field("flags") or _field("Features")).split())


def supports(flag: str) -> bool:
    """Whether the CPU has an instruction set, named as in /proc/cpuinfo ("avx512f")."""
    return flag in cpu_flags()


def cpu_slug(model: str) -> str:
    """A short name for a CPU model: "AMD EPYC 7B13 64-Core Processor" -> "amd-epyc-7b13"."""
    noise = r"\((R|TM)\)|@.*$|\b\d+-Core\b|\bProcessor\b|\bCPU\b"
    return slugify(re.sub(noise, " ", model, flags=re.IGNORECASE).replace("+", " plus"))


def _model() -> str:
    return _field("model name") or platform.processor() or platform.machine() or "unknown"


def cpu_info() -> dict:
    """The host CPU and C compiler, for a row's provenance (under "host")."""
    model = _model()
    cores = {(b["physical id"], b["core id"]) for b in _cpuinfo()
             if "physical id" in b and "core id" in b}
    try:
        cc = compiler().as_dict()
    except NoCompilerError:
        cc = None
    return {
        "model": model,
        "slug": cpu_slug(model),
        "vendor": _field("vendor_id") or _field("CPU implementer"),
        "machine": platform.machine(),
        "logical_cores": os.cpu_count(),
        "physical_cores": len(cores) or None,
        "available_cores": (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                            else os.cpu_count()),
        "flags": [f for f in LAB_FLAGS if supports(f)],
        "compiler": cc,
    }


@functools.lru_cache(maxsize=None)
def isa_needed(argv: tuple[str, ...], flags: tuple[str, ...]) -> frozenset[str]:
    """The instruction sets code compiled with `flags` may use, as the compiler itself
    says through its predefined macros: -mavx512f, -march=x86-64-v4, -mno-avx2 and
    -march=native all count as the compiler means them."""
    out = _run([*argv, *flags, "-dM", "-E", "-x", "c", os.devnull],
               f"asking {argv[0]} which instruction sets {' '.join(flags)} enables")
    defined = {line.split()[1] for line in out.splitlines() if line.startswith("#define ")}
    return frozenset(isa for macro, isa in _ISA_MACROS.items() if macro in defined)


def missing_isa(src: HostSource) -> list[str]:
    """The instruction sets `src` is compiled for that this CPU lacks ([] if it runs here)."""
    return sorted(isa_needed(compiler().argv, BASE_FLAGS + src.flags) - cpu_flags())


# --------------------------------------------------------------------------- build and load

def cache_dir() -> Path:
    base = os.environ.get("PERFLAB_CACHE_DIR")
    return (Path(base) if base else Path.home() / ".cache" / "perflab") / "host"


def _library_path(src: HostSource, cc: Compiler) -> Path:
    """Where the build of `src` by `cc` on this CPU is cached. The key holds what the
    library's code depends on; no Python version, since the library does not link Python."""
    key = {"sha256": source_sha256(src.file), "cdef": src.cdef,
           "flags": [*BASE_FLAGS, *src.flags, *_LINK_FLAGS], "libraries": list(src.libraries),
           "compiler": list(cc.argv), "compiler_version": cc.version,
           "machine": platform.machine(), "cpu": [_model(), *sorted(cpu_flags())]}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
    return cache_dir() / f"{Path(src.file).stem}-{digest[:32]}.so"


def build(src: HostSource, cc: Compiler, out: Path) -> None:
    """Compile `src` into the shared library `out`: in a temporary folder beside it, then
    renamed into place, so that a reader never sees a half-written file and concurrent
    builds of one key leave one whole library."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".build-", dir=out.parent) as tmp:
        unit = Path(tmp) / "unit.c"
        unit.write_text(f'#include "{src.path.resolve()}"\n'
                        f'#line 1 "cdef of kernels/{src.file}"\n{src.cdef}\n')
        built = Path(tmp) / out.name
        _run([*cc.argv, *BASE_FLAGS, *src.flags, *_LINK_FLAGS, f"-I{paths.KERNELS}",
              "-o", str(built), str(unit), *(f"-l{lib}" for lib in src.libraries)],
             f"compiling kernels/{src.file} with {cc.version}")
        os.replace(built, out)


_LOADED: dict[Path, object] = {}


def forget_loaded() -> None:
    """Forget which builds this process loaded (the next `load` opens its file again, as a
    new process would)."""
    _LOADED.clear()
_LOCK = threading.Lock()


def load(src: HostSource):
    """The cffi library of `src`, its cdef's functions callable from Python (arrays through
    `pointer`). Compiled on the first call for this key, loaded once per process.

    Raises HostUnavailableError (no cffi), NoCompilerError, UnsupportedISAError (ask
    `supports` first) or HostBuildError (the source or its cdef does not compile)."""
    cffi = _cffi()
    cc = compiler()
    missing = missing_isa(src)
    if missing:
        raise UnsupportedISAError(
            f"kernels/{src.file} is compiled with {' '.join(src.flags)}, which needs "
            f"{', '.join(missing)}; this CPU ({_model()}) lacks it. Ask "
            f"supports({missing[0]!r}) first and run another variant here.")
    path = _library_path(src, cc)
    with _LOCK:
        if path not in _LOADED:
            ffi = cffi.FFI()
            try:
                ffi.cdef(src.cdef)
            except (cffi.CDefError, cffi.FFIError) as exc:
                raise HostBuildError(f"the cdef of kernels/{src.file}: {exc}") from None
            if not path.exists():
                build(src, cc, path)
            _LOADED[path] = _open(ffi, path, src)
        return _LOADED[path]


def _open(ffi, path: Path, src: HostSource):
    """dlopen the library and look up every name of the cdef now, not at its first call."""
    try:
        lib = ffi.dlopen(str(path))
    except OSError as exc:
        raise HostBuildError(f"cannot load the build of kernels/{src.file} ({exc}); "
                             f"delete {path} to rebuild it") from None
    for name in dir(lib):
        try:
            getattr(lib, name)
        except AttributeError:
            raise HostBuildError(
                f"kernels/{src.file} defines no exported {name!r}, which its cdef declares "
                "(is it static, or misspelt?)") from None
    return lib


_C_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double",
            **{np.dtype(f"{u}int{b}"): f"{u}int{b}_t" for u in ("", "u") for b in (8, 16, 32, 64)}}


def pointer(a: np.ndarray, ctype: str | None = None):
    """A pointer to a C-contiguous NumPy array's data, typed by its dtype: float32 -> float*,
    float64 -> double*, int32 -> int32_t* and so on (<stdint.h> names), so that cffi refuses
    an array of the wrong type. cffi tells int32_t from int: for a parameter declared
    `int *`, pass ctype="int"."""
    ctype = ctype or _C_TYPES.get(a.dtype)
    if ctype is None:
        raise TypeError(f"no C type for arrays of {a.dtype}; use one of "
                        f"{', '.join(sorted(str(d) for d in _C_TYPES))}, or name it (ctype=)")
    return plain_ffi().from_buffer(f"{ctype}[]", a)


@functools.lru_cache(maxsize=1)
def plain_ffi():
    return _cffi().FFI()


# --------------------------------------------------------------------------- timing

def benchmark(fn, *, n_repeat: int = 50, n_warmup: int = 5, max_duration: float = 2.0) -> dict:
    """Time `fn()` on the host with perf_counter_ns around each call, after `n_warmup`
    untimed calls: `n_repeat` timed calls, or fewer once `max_duration` seconds have passed
    (at least one). The same dict as timing.benchmark: median, p20, p80, min (ms), n_timed."""
    for _ in range(n_warmup):
        fn()
    times = []
    deadline = perf_counter_ns() + int(max_duration * 1e9)
    while len(times) < n_repeat and (not times or perf_counter_ns() < deadline):
        start = perf_counter_ns()
        fn()
        times.append(perf_counter_ns() - start)
    return summarize(np.asarray(times) / 1e6)


def auto_benchmark(fn, *, budget_s: float = 1.5) -> dict:
    """`benchmark` sized as registry.Context.time sizes a GPU run: one untimed call first,
    then a slow function gets one warm-up and a few repeats, a fast one many, all within
    about `budget_s` seconds."""
    start = perf_counter_ns()
    fn()
    n_repeat, n_warmup = repeats_for((perf_counter_ns() - start) / 1e9, budget_s)
    return benchmark(fn, n_repeat=n_repeat, n_warmup=n_warmup, max_duration=budget_s * 2)
