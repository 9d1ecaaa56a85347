"""Host code: C sources compiled by the system compiler, loaded through cffi, timed on
the CPU (perflab.host). No GPU needed; a C compiler (gcc) and cffi are.

The C files are tiny fixtures in tests/kernels_fixture/host/ (perflab.paths.KERNELS is
pointed at tests/kernels_fixture/), and every test builds into an empty cache folder.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from perflab import host, kernels, paths, store
from perflab.errors import KernelCompileError, PerflabError

FIXTURE = Path(__file__).parent / "kernels_fixture"
ROOT = Path(__file__).resolve().parents[1]

SCALE = host.HostSource(
    "host/scale.c",
    cdef="void scale_sqrt(const double *x, double *y, int64_t n);\n"
         "double sum(const double *x, int64_t n);",
    libraries=("m",))
OMP = host.HostSource(
    "host/omp_sum.c",
    cdef="double sum_parallel(const double *x, int64_t n, int n_threads, "
         "int32_t *threads_used);",
    flags=("-fopenmp",))
AVX512 = host.HostSource("host/avx512_sum.c", cdef="float sum_avx512(const float *x, int64_t n);",
                         flags=("-O2", "-mavx512f"))
AVX512_SETS = ["avx512bw", "avx512cd", "avx512dq", "avx512f", "avx512vl"]


@pytest.fixture
def fixture_kernels(monkeypatch, tmp_path):
    """Point the lab's kernel directory at tests/kernels_fixture/, the cache at tmp_path."""
    assert kernels.paths is paths and host.paths is paths
    monkeypatch.setattr(paths, "KERNELS", FIXTURE)
    monkeypatch.setenv("PERFLAB_CACHE_DIR", str(tmp_path / "cache"))
    return FIXTURE


def count_builds(monkeypatch) -> list:
    """Record every compilation of a library from now on."""
    builds = []
    build = host.build

    def counted(src, cc, out):
        builds.append(src.file)
        build(src, cc, out)

    monkeypatch.setattr(host, "build", counted)
    return builds


def cached_files() -> list[str]:
    return sorted(p.name for p in host.cache_dir().iterdir())


def scale_sqrt(lib, x):
    y = np.empty_like(x)
    lib.scale_sqrt(host.pointer(x), host.pointer(y), x.size)
    return y


# --------------------------------------------------------------------------- build, load, call

def test_compiles_loads_and_matches_numpy(fixture_kernels, tmp_path):
    lib = host.load(SCALE)
    x = np.random.default_rng(0).random(1001)
    np.testing.assert_allclose(scale_sqrt(lib, x), 2.5 * np.sqrt(x), rtol=1e-15)
    assert lib.sum(host.pointer(x), x.size) == pytest.approx(x.sum(), rel=1e-12)
    assert host.cache_dir() == tmp_path / "cache" / "host"
    assert len(cached_files()) == 1 and cached_files()[0].startswith("scale-")


def test_pointer_is_typed_by_dtype(fixture_kernels):
    lib = host.load(SCALE)
    with pytest.raises(TypeError, match="double"):
        lib.sum(host.pointer(np.ones(4, np.float32)), 4)
    assert lib.sum(host.pointer(np.ones(4)), 4) == 4.0
    with pytest.raises(TypeError, match="no C type for arrays of complex128"):
        host.pointer(np.ones(4, np.complex128))
    assert host.plain_ffi().typeof(host.pointer(np.ones(2, np.int32))).cname == "int32_t[]"
    assert host.plain_ffi().typeof(host.pointer(np.ones(2, np.int32), ctype="int")).cname == "int[]"


def test_second_load_comes_from_the_caches(fixture_kernels, monkeypatch):
    builds = count_builds(monkeypatch)
    lib = host.load(SCALE)
    assert builds == ["host/scale.c"]
    assert host.load(SCALE) is lib, "one process loads a build once"
    host.forget_loaded()                          # as a new process would start
    again = host.load(SCALE)
    assert again is not lib and builds == ["host/scale.c"], "the disk cache served it"
    x = np.arange(5.0)
    np.testing.assert_allclose(scale_sqrt(again, x), 2.5 * np.sqrt(x))
    assert len(cached_files()) == 1, "no temporary build folder is left behind"


CONCURRENT = """
import sys, time
from pathlib import Path
sys.path.insert(0, {lib!r})
import numpy as np
from perflab import host, paths
paths.KERNELS = Path({kernels!r})
build = host.build
host.build = lambda *a: (print("built"), build(*a))
time.sleep(max(0.0, {start} - time.time()))      # all at once
src = host.HostSource("host/scale.c", "double sum(const double *x, int64_t n);",
                      libraries=("m",))
print(host.load(src).sum(host.pointer(np.arange(10.0)), 10))
"""


def test_concurrent_builds_leave_one_whole_library(fixture_kernels):
    code = CONCURRENT.format(lib=str(ROOT / "lib"), kernels=str(FIXTURE),
                             start=time.time() + 2.0)
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    assert all(out.split()[-1] == "45.0" for out, _ in outs)
    assert sum(out.split().count("built") for out, _ in outs) >= 2, "the builds did race"
    assert len(cached_files()) == 1


@pytest.mark.parametrize("edit, before, after, factor", [
    ("scale.h", "#define SCALE_FACTOR 2.5", "#define SCALE_FACTOR 4.0", 4.0),
    ("scale.c", "y[i] = scaled(sqrt(x[i]));", "y[i] = 2.0 * scaled(sqrt(x[i]));", 5.0),
])
def test_an_edit_rebuilds_and_makes_the_row_stale(fixture_kernels, monkeypatch, tmp_path,
                                                   edit, before, after, factor):
    shutil.copytree(FIXTURE / "host", tmp_path / "kernels" / "host")
    monkeypatch.setattr(paths, "KERNELS", tmp_path / "kernels")
    builds = count_builds(monkeypatch)
    x = np.arange(7.0)
    first = host.load(SCALE)
    np.testing.assert_allclose(scale_sqrt(first, x), 2.5 * np.sqrt(x))
    row = {"kernels": [SCALE.kernel_entry("scale_sqrt")]}
    assert row["kernels"][0] == {"file": "host/scale.c", "name": "scale_sqrt",
                                 "options": ["-O3", "-lm"],
                                 "sha256": kernels.source_sha256("host/scale.c")}
    assert store.stale_kernels(row) == []

    f = tmp_path / "kernels" / "host" / edit
    assert before in f.read_text()
    f.write_text(f.read_text().replace(before, after))

    assert store.stale_kernels(row) == ["host/scale.c"]
    second = host.load(SCALE)
    assert second is not first and len(builds) == 2
    np.testing.assert_allclose(scale_sqrt(second, x), factor * np.sqrt(x))
    assert len(cached_files()) == 2


# --------------------------------------------------------------------------- clear errors

def test_no_compiler_is_a_clear_error(fixture_kernels, monkeypatch, tmp_path):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(host.NoCompilerError) as err:
        host.load(SCALE)
    msg = str(err.value)
    assert msg.startswith("no C compiler found (tried $CC='/nonexistent/cc', cc, gcc, clang)")
    assert "apt-get install gcc" in msg and "replays recorded rows" in msg
    assert isinstance(err.value, host.HostUnavailableError)
    assert isinstance(err.value, PerflabError)
    assert host.cpu_info()["compiler"] is None
    monkeypatch.delenv("CC")
    with pytest.raises(host.NoCompilerError, match=r"tried \$CC \(unset\), cc, gcc, clang"):
        host.compiler()


def test_cc_names_the_compiler(fixture_kernels, monkeypatch, tmp_path):
    wrapper = tmp_path / "my-cc"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> "$0.log"\nexec {shutil.which("cc")} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("CC", f"{wrapper} -DFROM_CC")
    lib = host.load(SCALE)
    assert lib.sum(host.pointer(np.ones(3)), 3) == 3.0
    log = (tmp_path / "my-cc.log").read_text()
    assert "-DFROM_CC -O3" in log and "-lm" in log
    assert host.cpu_info()["compiler"]["argv"] == (str(wrapper), "-DFROM_CC")


def test_missing_cffi_is_a_clear_error(fixture_kernels, monkeypatch):
    monkeypatch.setitem(sys.modules, "cffi", None)     # `import cffi` now fails
    with pytest.raises(host.HostUnavailableError, match="cffi is not installed"):
        host.load(SCALE)


@pytest.mark.parametrize("src, message", [
    (host.HostSource("host/syntax_error.c", "double broken(double x);"),
     r"syntax_error\.c:4:\d+: error"),
    (host.HostSource("host/scale.c", "double sum(const float *x, int64_t n);", libraries=("m",)),
     r"cdef of kernels/host/scale\.c:1:\d+: error: conflicting types for .sum"),
    (host.HostSource("host/scale.c", "double sum(const double *x, int64_t n);"),
     r"undefined reference to .sqrt"),
    (host.HostSource("host/scale.c", "double sum_of_squares(const double *x, int64_t n);",
                     libraries=("m",)),
     r"kernels/host/scale\.c defines no exported 'sum_of_squares'"),
    (host.HostSource("host/scale.c", "double sum(const double *x, int64_t n"),
     r"the cdef of kernels/host/scale\.c: parse error"),
])
def test_build_errors_name_the_problem(fixture_kernels, src, message):
    with pytest.raises(host.HostBuildError, match=message) as err:
        host.load(src)
    assert isinstance(err.value, KernelCompileError)


# --------------------------------------------------------------------------- instruction sets

def test_avx512_source_where_the_cpu_has_it_or_not(fixture_kernels, monkeypatch):
    """The real behaviour of this machine: a result where the CPU has AVX-512F, a clear
    error (before anything is compiled) where it lacks it."""
    builds = count_builds(monkeypatch)
    x = np.random.default_rng(1).random(37, dtype=np.float32)     # two vectors and a tail
    if host.supports("avx512f"):
        assert host.missing_isa(AVX512) == []
        lib = host.load(AVX512)
        assert lib.sum_avx512(host.pointer(x), x.size) == pytest.approx(x.sum(), rel=1e-5)
        assert builds == ["host/avx512_sum.c"]
    else:
        assert host.missing_isa(AVX512) == ["avx512f"]
        with pytest.raises(host.UnsupportedISAError, match=r"needs avx512f; this CPU \(.+\) "
                                                           r"lacks it\. Ask supports\('avx512f'\)"):
            host.load(AVX512)
        assert builds == []


def test_a_cpu_without_avx512_refuses_the_source(fixture_kernels, monkeypatch):
    avx2_only = frozenset({"sse4_2", "avx", "avx2", "fma", "bmi2", "f16c"})   # x86-64-v3
    monkeypatch.setattr(host, "cpu_flags", lambda: avx2_only)
    assert not host.supports("avx512f") and host.supports("avx2")
    with pytest.raises(host.UnsupportedISAError, match="avx512f"):
        host.load(AVX512)
    assert host.missing_isa(SCALE) == []
    levels = host.HostSource("host/scale.c", "", flags=("-march=x86-64-v4",))
    assert host.missing_isa(levels) == AVX512_SETS
    undone = host.HostSource("host/scale.c", "", flags=("-mavx512f", "-mno-avx512f"))
    assert host.missing_isa(undone) == []


def test_cpu_flags_agree_with_the_compilers_cpuid(fixture_kernels):
    """/proc/cpuinfo and gcc's -march=native (which asks cpuid) see the same ISA."""
    native = host.isa_needed(host.compiler().argv, ("-march=native",))
    for flag in ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl"):
        assert host.supports(flag) == (flag in native), flag


# --------------------------------------------------------------------------- threads

def test_openmp_runs_the_threads_asked_and_every_core_by_default(fixture_kernels):
    lib = host.load(OMP)
    x = np.random.default_rng(2).random(100_003)
    used = np.zeros(1, np.int32)
    assert lib.sum_parallel(host.pointer(x), x.size, 3, host.pointer(used)) == \
        pytest.approx(x.sum(), rel=1e-12)
    assert used[0] == 3
    lib.sum_parallel(host.pointer(x), x.size, 0, host.pointer(used))
    assert used[0] == int(os.environ.get("OMP_NUM_THREADS", host.cpu_info()["available_cores"]))


# --------------------------------------------------------------------------- the CPU

def test_cpu_info_fields(fixture_kernels):
    info = host.cpu_info()
    assert set(info) == {"model", "slug", "vendor", "machine", "logical_cores",
                         "physical_cores", "available_cores", "flags", "compiler"}
    assert info["model"] and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", info["slug"])
    assert info["logical_cores"] == os.cpu_count()
    assert 1 <= info["available_cores"] <= info["logical_cores"]
    assert info["physical_cores"] is None or 1 <= info["physical_cores"] <= info["logical_cores"]
    assert info["flags"] == [f for f in host.LAB_FLAGS if host.supports(f)]
    assert "sse4_2" in info["flags"], "every x86-64 CPU the lab runs on has SSE4.2"
    cc = info["compiler"]
    assert Path(cc["path"]).is_file() and re.search(r"\d+\.\d+", cc["version"])
    assert json.loads(json.dumps(info))["slug"] == info["slug"], "it goes into provenance"


@pytest.mark.parametrize("model, slug", [
    ("AMD EPYC 7B13 64-Core Processor", "amd-epyc-7b13"),
    ("Intel(R) Xeon(R) Platinum 8480+", "intel-xeon-platinum-8480-plus"),
    ("Intel(R) Xeon(R) CPU E5-2686 v4 @ 2.30GHz", "intel-xeon-e5-2686-v4"),
    ("13th Gen Intel(R) Core(TM) i7-13700K", "13th-gen-intel-core-i7-13700k"),
])
def test_cpu_slug(model, slug):
    assert host.cpu_slug(model) == slug


# --------------------------------------------------------------------------- timing

TIMING_KEYS = {"median_ms", "p20_ms", "p80_ms", "min_ms", "n_timed"}


def sleeper(seconds: float, calls: list):
    def fn():
        calls.append(1)
        time.sleep(seconds)
    return fn


def test_benchmark_shape_and_counts():
    calls = []
    t = host.benchmark(sleeper(0.001, calls), n_repeat=7, n_warmup=3)
    assert set(t) == TIMING_KEYS and t["n_timed"] == 7 and len(calls) == 10
    assert 1.0 <= t["min_ms"] <= t["p20_ms"] <= t["median_ms"] <= t["p80_ms"] < 100


def test_benchmark_stops_at_max_duration():
    t = host.benchmark(sleeper(0.005, []), n_repeat=1000, n_warmup=0, max_duration=0.05)
    assert 1 <= t["n_timed"] <= 11


def test_auto_benchmark_sizes_the_run():
    calls = []
    slow = host.auto_benchmark(sleeper(0.01, calls), budget_s=0.2)
    assert 5 <= slow["n_timed"] <= 20 and len(calls) == 1 + 10 + slow["n_timed"]
    fast = host.auto_benchmark(lambda: None, budget_s=0.2)
    assert set(fast) == TIMING_KEYS and fast["n_timed"] == 200


def test_benchmark_a_loaded_function(fixture_kernels):
    lib = host.load(SCALE)
    x = host.pointer(np.ones(1 << 16))
    t = host.auto_benchmark(lambda: lib.sum(x, 1 << 16), budget_s=0.1)
    assert 0 < t["min_ms"] <= t["median_ms"] < 10
