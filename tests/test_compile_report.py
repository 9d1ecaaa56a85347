"""The offline compile report: NVRTC + nvdisasm from pip, no GPU needed.

Most tests compile the tiny kernels in tests/kernels_fixture/ (pointed to by patching
perflab.paths.KERNELS); `test_every_kernel_compiles` compiles the lab's real kernels.
Every test starts with an empty compile cache of its own: none depends on a warm one.
"""
from __future__ import annotations

import re
import shutil
import threading
import time
import zlib
from pathlib import Path

import pandas as pd
import pytest

from perflab import compile_report as cr
from perflab import kernels, paths, registry
from perflab.compile_report import cache, nvrtc
from perflab.errors import KernelCompileError, PerflabError
from perflab.kernels import KernelSpec

FIXTURE = Path(__file__).parent / "kernels_fixture"
ARCHS = ("sm_89", "sm_90")

REVERSE_256 = KernelSpec("smem_template.cu", "reverse_block", template=(256,))
REVERSE_64 = KernelSpec("smem_template.cu", "reverse_block", template=(64,))
PLAIN = KernelSpec("smem_template.cu", "plain_scale")
LOCAL_ARRAY = KernelSpec("local_memory.cu", "local_array")
FORCED_SPILL = KernelSpec("local_memory.cu", "forced_spill")
REGTILE = KernelSpec("regtile_sgemm.cu", "sgemm_regtile", template=(128, 128, 8, 8, 8))
TF32 = KernelSpec("tf32_mma.cu", "sgemm_tf32_mma", template=(2, 2, 4))
BROKEN = KernelSpec("syntax_error.cu", "broken")


@pytest.fixture(autouse=True)
def compile_cache(tmp_path, monkeypatch) -> Path:
    """An empty compile cache for each test; returns the folder of its entries."""
    monkeypatch.setenv("PERFLAB_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "compile"


@pytest.fixture
def fixture_kernels(monkeypatch):
    """Point the lab's kernel directory at tests/kernels_fixture/."""
    # perflab.kernels reads `paths.KERNELS` through the module at call time.
    assert kernels.paths is paths
    monkeypatch.setattr(paths, "KERNELS", FIXTURE)
    return FIXTURE


# --------------------------------------------------------------------------- resources

@pytest.mark.parametrize("arch", ARCHS)
def test_template_static_shared_memory(fixture_kernels, arch):
    r256 = cr.resources(REVERSE_256, arch)
    r64 = cr.resources(REVERSE_64, arch)
    assert r256["kernel"] == "reverse_block<256>"
    assert r256["file"] == "smem_template.cu" and r256["arch"] == arch
    assert r256["shared_static_bytes"] == 256 * 4
    assert r64["shared_static_bytes"] == 64 * 4
    for r in (r256, r64):
        assert r["barriers"] == 1
        assert 0 < r["registers"] <= 255
        assert r["stack_frame_bytes"] == r["spill_store_bytes"] == r["spill_load_bytes"] == 0
    assert set(r256) == set(cr.COLUMNS)


@pytest.mark.parametrize("arch", ARCHS)
def test_extern_c_kernel_without_shared_memory(fixture_kernels, arch):
    ck = cr.compile_cubin(PLAIN, arch)
    assert ck.lowered_name == "plain_scale"
    r = cr.resources(PLAIN, arch)
    assert r["shared_static_bytes"] == 0 and r["barriers"] == 0


@pytest.mark.parametrize("arch", ARCHS)
def test_dynamically_indexed_array_takes_a_stack_frame(fixture_kernels, arch):
    r = cr.resources(LOCAL_ARRAY, arch)
    assert r["stack_frame_bytes"] >= 256 * 4
    assert r["spill_store_bytes"] == r["spill_load_bytes"] == 0


@pytest.mark.parametrize("arch", ARCHS)
def test_register_pressure_spills(fixture_kernels, arch):
    r = cr.resources(FORCED_SPILL, arch)
    assert r["spill_store_bytes"] > 0
    assert r["spill_load_bytes"] > 0
    assert r["stack_frame_bytes"] > 0
    text = cr.sass(FORCED_SPILL, arch)
    counts = cr.count_instructions(text, base=True)
    assert counts["STL"] > 0 and counts["LDL"] > 0


@pytest.mark.parametrize("arch", ARCHS)
def test_kernel_with_header_include(fixture_kernels, arch):
    r = cr.resources(REGTILE, arch)
    assert r["shared_static_bytes"] == (8 * 128 + 8 * 128) * 4
    assert r["spill_store_bytes"] == 0


def test_parse_ptxas_log_with_mangled_template_names():
    log = (
        "ptxas info    : 0 bytes gmem, 256 bytes cmem[3]\n"
        "ptxas info    : Compiling entry function '_Z1kILi256ELb1EEvPf' for 'sm_89'\n"
        "ptxas info    : Function properties for _Z1kILi256ELb1EEvPf\n"
        "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
        "ptxas info    : Used 12 registers, used 1 barriers, 1024 bytes smem, 360 bytes cmem[0]\n"
        "ptxas info    : Compile time = 2.551 ms\n"
        "ptxas info    : Function properties for _Z1fPfi\n"
        "ptxas         .     32 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Compiling entry function '_Z3locPfi' for 'sm_90'\n"
        "ptxas info    : Function properties for _Z3locPfi\n"
        "ptxas         .     1024 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 40 registers, used 0 barriers, 1024 bytes cumulative stack size\n"
    )
    funcs = cr.parse_ptxas_log(log)
    assert funcs["_Z1kILi256ELb1EEvPf"] == {
        "entry": True, "registers": 12, "barriers": 1, "shared_static_bytes": 1024,
        "stack_frame_bytes": 16, "spill_store_bytes": 8, "spill_load_bytes": 12}
    assert funcs["_Z3locPfi"]["registers"] == 40
    assert funcs["_Z3locPfi"]["shared_static_bytes"] == 0
    assert funcs["_Z3locPfi"]["stack_frame_bytes"] == 1024
    assert funcs["_Z1fPfi"] == {"entry": False, "stack_frame_bytes": 32,
                                "spill_store_bytes": 0, "spill_load_bytes": 0}


# --------------------------------------------------------------------------- which NVRTC

def test_the_nvrtc_in_use_is_named():
    ident = nvrtc.identity()
    assert re.fullmatch(r"\d+\.\d+", ident["nvrtc"])
    assert Path(ident["library"]).name.startswith("libnvrtc.so")
    assert Path(ident["library"]).stat().st_size == ident["library_bytes"]
    assert nvrtc.describe(ident).startswith(f"NVRTC {ident['nvrtc']} ({ident['library']}, ")


def test_a_repeated_compile_keeps_its_ptxas_lines(fixture_kernels):
    """Where a GPU driver is installed, NVRTC keeps what it compiled in the driver's cache
    and, unless given --no-cache, answers a program it has seen (here: the same source, or
    the same PTX: both kernels of local_memory.cu are in every program of that file)
    without running ptxas, so with an empty log."""
    for spec in (LOCAL_ARRAY, LOCAL_ARRAY, FORCED_SPILL):
        cr.clear_cache()
        r = cr.resources(spec, "sm_90")
        assert r["registers"] > 0 and r["stack_frame_bytes"] > 0


def test_a_log_without_resource_lines_names_the_nvrtc(fixture_kernels, monkeypatch,
                                                     compile_cache):
    real = nvrtc.compile_program
    monkeypatch.setattr(nvrtc, "compile_program", lambda *a: real(*a)[:2] + ("",))
    with pytest.raises(PerflabError) as exc:
        cr.resources(PLAIN, "sm_90")
    msg = str(exc.value)
    assert nvrtc.describe(nvrtc.identity()) in msg
    assert "returned no ptxas resource lines for plain_scale" in msg
    assert "pip install 'nvidia-cuda-nvrtc>=13.1'" in msg
    assert not list(compile_cache.glob("*")), "a compile without resources was cached"


# --------------------------------------------------------------------------- errors

def test_syntax_error_names_file_and_line(fixture_kernels):
    with pytest.raises(KernelCompileError) as exc:
        cr.compile_cubin(BROKEN, "sm_90")
    msg = str(exc.value)
    assert "kernels/syntax_error.cu(6): error" in msg
    assert "sm_90" in msg


def test_unknown_kernel_name_is_a_compile_error(fixture_kernels):
    with pytest.raises(KernelCompileError, match="nope"):
        cr.compile_cubin(KernelSpec("smem_template.cu", "nope"), "sm_90")


def test_missing_file_is_a_compile_error(fixture_kernels):
    with pytest.raises(KernelCompileError, match="does not exist"):
        cr.compile_cubin(KernelSpec("no_such_file.cu", "k"), "sm_90")


# --------------------------------------------------------------------------- parallel, cached

def test_instantiations_of_one_file_compile_in_parallel(fixture_kernels, monkeypatch):
    running, most = set(), []
    lock = threading.Lock()
    real = nvrtc.compile_program

    def compile_slowly(*args):
        with lock:
            running.add(threading.get_ident())
            most.append(len(running))
        time.sleep(0.2)
        try:
            return real(*args)
        finally:
            with lock:
                running.discard(threading.get_ident())

    monkeypatch.setattr(nvrtc, "compile_program", compile_slowly)
    monkeypatch.setattr(nvrtc, "workers", lambda: 2)
    cks = cr.compile_many([REVERSE_256, REVERSE_64, PLAIN, REVERSE_256], "sm_90")
    assert max(most) == 2 and len(most) == 3        # the repeated spec compiled once
    assert [ck.name_expression for ck in cks] == [
        "reverse_block<256>", "reverse_block<64>", "plain_scale", "reverse_block<256>"]
    assert cks[0].lowered_name != cks[1].lowered_name


def test_a_warm_cache_compiles_nothing(fixture_kernels, monkeypatch, compile_cache):
    specs = [REVERSE_256, REVERSE_64, PLAIN]
    cold = cr.report(specs)
    assert cold.attrs["compiled"] == 6
    entries = sorted(p.name for p in compile_cache.iterdir())
    assert len(entries) == 6 and all(e.endswith(".z") for e in entries)  # no temporary files
    warm = cr.report(specs)
    assert warm.attrs["compiled"] == 0
    pd.testing.assert_frame_equal(cold, warm)

    def no_compiling(*args):
        raise AssertionError("compiled although the cache holds it")

    monkeypatch.setattr(nvrtc, "compile_program", no_compiling)
    assert cr.compile_cubin(REVERSE_64, "sm_90").cached
    assert "BAR.SYNC" in cr.sass(REVERSE_64, "sm_90")    # the cubin is cached too


def test_edited_source_compiles_again(tmp_path, monkeypatch):
    kdir = tmp_path / "kernels"
    shutil.copytree(FIXTURE, kdir)
    monkeypatch.setattr(paths, "KERNELS", kdir)
    specs = [KernelSpec("smem_template.cu", "plain_scale"), LOCAL_ARRAY]
    before = cr.report(specs, archs=("sm_90",))
    assert before.attrs["compiled"] == 2 and before.shared_static_bytes[0] == 0
    src = (kdir / "smem_template.cu").read_text()
    (kdir / "smem_template.cu").write_text(src.replace(
        "    if (i < n) a[i] *= k;",
        "    __shared__ float t[32];\n    t[threadIdx.x % 32] = k;\n"
        "    __syncthreads();\n    if (i < n) a[i] *= t[(threadIdx.x + 1) % 32];"))
    after = cr.report(specs, archs=("sm_90",))
    assert after.attrs["compiled"] == 1                 # local_memory.cu did not change
    assert after.shared_static_bytes[0] == 128 and after.barriers[0] == 1


def test_another_nvrtc_misses_the_cache(fixture_kernels, monkeypatch):
    assert cr.report([PLAIN], archs=("sm_90",)).attrs["compiled"] == 1
    real = nvrtc.identity()
    monkeypatch.setattr(nvrtc, "identity", lambda: {**real, "nvrtc": "13.99"})
    other = cr.report([PLAIN], archs=("sm_90",))
    assert other.attrs["compiled"] == 1 and "NVRTC 13.99 (" in other.attrs["nvrtc"]
    monkeypatch.setattr(nvrtc, "identity", lambda: real)
    assert cr.report([PLAIN], archs=("sm_90",)).attrs["compiled"] == 0


def test_a_corrupt_entry_is_compiled_again(fixture_kernels, compile_cache):
    specs = [PLAIN, REVERSE_64]
    first = cr.report(specs, archs=("sm_90",))
    truncated, foreign = sorted(compile_cache.glob("*.z"))
    truncated.write_bytes(truncated.read_bytes()[:-16])
    foreign.write_bytes(zlib.compress(b'{"key": "another entry"}\0not a cubin'))
    again = cr.report(specs, archs=("sm_90",))
    assert again.attrs["compiled"] == 2
    pd.testing.assert_frame_equal(first, again)
    assert cr.report(specs, archs=("sm_90",)).attrs["compiled"] == 0   # rewritten whole


def test_clear_cache_empties_it(fixture_kernels, compile_cache):
    cr.report([PLAIN], archs=("sm_90",))
    cr.clear_cache()
    assert not list(compile_cache.glob("*.z"))
    assert cr.report([PLAIN], archs=("sm_90",)).attrs["compiled"] == 1


def test_a_cache_that_cannot_be_written_is_no_error(fixture_kernels, monkeypatch, tmp_path):
    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("PERFLAB_CACHE_DIR", str(tmp_path / "not-a-folder"))
    for _ in range(2):
        assert cr.report([PLAIN], archs=("sm_90",)).attrs["compiled"] == 1


def test_cache_directory_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("PERFLAB_CACHE_DIR", str(tmp_path / "p"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache.directory() == tmp_path / "p" / "compile"
    monkeypatch.delenv("PERFLAB_CACHE_DIR")
    assert cache.directory() == tmp_path / "x" / "perflab" / "compile"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.directory() == tmp_path / "home" / ".cache" / "perflab" / "compile"


# --------------------------------------------------------------------------- report

def test_report_one_row_per_spec_and_arch(fixture_kernels):
    specs = [REVERSE_256, LOCAL_ARRAY, TF32]
    df = cr.report(specs)
    assert list(df.columns) == list(cr.COLUMNS)
    assert len(df) == len(specs) * 2
    assert list(df["kernel"]) == ["reverse_block<256>"] * 2 + ["local_array"] * 2 + \
        ["sgemm_tf32_mma<2, 2, 4>"] * 2
    assert list(df["arch"]) == ["sm_89", "sm_90"] * 3
    row = df[(df.kernel == "reverse_block<256>") & (df.arch == "sm_90")].iloc[0]
    assert row.shared_static_bytes == 1024
    assert df.attrs["nvrtc"] == nvrtc.describe(nvrtc.identity())
    only90 = cr.report(specs, archs=("sm_90",))
    assert list(only90["arch"]) == ["sm_90"] * 3


def test_report_raises_on_a_broken_kernel(fixture_kernels):
    with pytest.raises(KernelCompileError, match="syntax_error.cu"):
        cr.report([REVERSE_256, BROKEN])


# --------------------------------------------------------------------------- SASS

@pytest.mark.parametrize("arch", ARCHS)
def test_sass_of_one_function(fixture_kernels, arch):
    ck = cr.compile_cubin(REGTILE, arch)
    text = cr.sass(REGTILE, arch)
    assert f".text.{ck.lowered_name}" in text
    assert text.count("//---------------------") == 1  # that function's section only
    counts = cr.count_instructions(text)
    # 8 x 8 accumulators per thread, BK = 8, fully unrolled: 512 FFMAs in the k-loop.
    assert counts["FFMA"] == 8 * 8 * 8
    assert counts["LDS.128"] >= 4
    assert counts["LDL"] == counts["STL"] == 0
    excerpt = cr.sass_excerpt(text, r"LDS\.128", r"FFMA")
    assert "LDS.128" in excerpt and "FFMA" in excerpt
    assert len(excerpt.splitlines()) <= 2 * 12 + 8 + 2


@pytest.mark.parametrize("arch", ARCHS)
def test_sass_of_tensor_core_kernel(fixture_kernels, arch):
    text = cr.sass(TF32, arch)
    assert cr.count_instructions(text, base=True)["HMMA"] == 4
    assert any(op.startswith("HMMA.1688.F32.TF32") for op in cr.count_instructions(text))
    excerpt = cr.sass_excerpt(text, r"^LDS\b", r"HMMA", within=40)
    assert "HMMA" in excerpt


def test_sass_excerpt_and_counts_on_text():
    text = "\n".join([
        "        /*0000*/                   LDC R1, c[0x0][0x28] ;",
        ".L_x_1:",
        "        /*0010*/                   LDS.128 R4, [R2] ;",
        "        /*0020*/              @!P0 IADD3 R9, R9, 0x1, RZ ;",
        "        /*0030*/                   FFMA R8, R4, R5.reuse, R8 ;",
        "        /*0040*/                   FFMA R9, R6, R5, R9 ;",
        "        /*0050*/                   @!UPT UIADD3 URZ, URZ, URZ, URZ ;",
        "        /*0060*/                   HMMA.1688.F32.TF32 R8, R16, R26, R8 ;",
        "        /*0070*/                   EXIT ;",
    ])
    counts = cr.count_instructions(text)
    assert counts == {"LDC": 1, "LDS.128": 1, "IADD3": 1, "FFMA": 2, "UIADD3": 1,
                      "HMMA.1688.F32.TF32": 1, "EXIT": 1}
    assert cr.count_instructions(text, base=True)["HMMA"] == 1
    ex = cr.sass_excerpt(text, r"LDS\.128", r"FFMA", context=1)
    assert ex.splitlines() == text.splitlines()[1:7]
    with pytest.raises(PerflabError, match="HMMA"):
        cr.sass_excerpt(text, r"LDS\.128", r"HMMA", run=2)
    with pytest.raises(PerflabError):
        cr.sass_excerpt(text, r"LDS\.128", r"FFMA", within=1)


def test_loops_their_opcode_families_and_the_hot_loop_on_text():
    """Two loops, an inner one of 4 (two FSETPs) inside an outer one: the marker's count
    picks the hot loop (ties: the shorter), `count` sums an opcode family, `loop_lines`
    gives its instructions' lines."""
    text = """.L_x_0:
        /*0000*/                   FMUL R1, R2, R2 ;
.L_x_1:
        /*0010*/                   FSETP.GT.AND P0, PT, R1, 4, PT ;
        /*0020*/                   FFMA R1, R1, R1, R3 ;
        /*0030*/                   FSETP.GT.AND P1, PT, R1, 4, PT ;
        /*0040*/              @!P0 BRA `(.L_x_1) ;
        /*0050*/                   FADD R2, R2, 1 ;
        /*0060*/              @!P1 BRA `(.L_x_0) ;
        /*0070*/                   EXIT ;"""
    inner, outer = cr.loops(text)
    assert (inner.start, inner.end, outer.start, outer.end) == (0x10, 0x40, 0x0, 0x60)
    assert inner.count("FSETP") == outer.count("FSETP") == 2
    assert outer.count(*cr.FP32) == 3 and inner.count(*cr.FP32) == 1
    assert cr.hot_loop(text, "FSETP") == inner                  # as many, and shorter
    assert cr.hot_loop(text, "FADD") == outer
    assert cr.loop_lines(text, inner) == [ln.strip() for ln in text.splitlines()[3:7]]
    with pytest.raises(ValueError, match="no loop with HMMA"):
        cr.hot_loop(text, "HMMA")


def test_opcode_families_count_every_form_of_their_prefixes():
    text = """        /*0000*/                   LDS R1, [R2] ;
        /*0010*/                   LDS.128 R4, [R2+0x10] ;
        /*0020*/                   LDSM.16.M88.4 R8, [R3] ;
        /*0030*/              @!P0 LDG.E R9, desc[UR4][R10.64] ;
        /*0040*/                   FFMA R1, R1, R1, R3 ;
        /*0050*/                   EXIT ;"""
    assert cr.count_families(text, {"lds": "LDS", "lds128": "LDS.128", "ld": ("LDG", "LDS"),
                                    "ffma": "FFMA", "hmma": "HMMA"}) == \
        {"lds": 3, "lds128": 1, "ld": 4, "ffma": 1, "hmma": 0}


def test_missing_nvdisasm_is_a_clear_error(monkeypatch):
    from importlib import metadata

    def not_installed(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", not_installed)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(PerflabError, match="pip install 'nvidia-cuda-nvdisasm"):
        cr.nvdisasm_path()


def test_nvdisasm_found_through_the_package():
    p = cr.nvdisasm_path()
    assert p.name.startswith("nvdisasm") and p.exists()


# --------------------------------------------------------------------------- command line

def test_main_prints_the_table(fixture_kernels, capsys):
    specs = [REVERSE_256, REVERSE_64, LOCAL_ARRAY]
    assert cr.main(["--arch", "sm_90"], specs=specs) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "reverse_block<256>" in out and "local_array" in out
    assert "sm_90" in out and "sm_89" not in out
    assert "shared_static_bytes" in out
    assert f"compiled by {nvrtc.describe(nvrtc.identity())}: 3 compiled now, 0 from" in out
    assert "compiling" in captured.err and "3/3" in captured.err      # the progress bar

    assert cr.main(["--kernel", "local"], specs=specs) == 0
    out = capsys.readouterr().out
    assert "local_array" in out and "reverse_block" not in out
    assert "sm_89" in out and "sm_90" in out
    assert "1 compiled now, 1 from the cache" in out


def test_main_all_takes_every_instantiation(fixture_kernels, monkeypatch, capsys):
    asked = []

    def kernel_specs(full=False):
        asked.append(full)
        return [PLAIN]

    monkeypatch.setattr(registry, "kernel_specs", kernel_specs)
    assert cr.main(["--arch", "sm_90"]) == 0
    assert cr.main(["--arch", "sm_90", "--all"]) == 0
    assert asked == [False, True]
    assert "plain_scale" in capsys.readouterr().out


def test_main_prints_sass(fixture_kernels, capsys):
    assert cr.main(["--arch", "sm_90", "--sass", "reverse_block<64>"],
                   specs=[REVERSE_256, REVERSE_64]) == 0
    out = capsys.readouterr().out
    assert "reverse_block<64> (sm_90)" in out and "BAR.SYNC" in out
    assert "reverse_block<256>" not in out


def test_main_reports_errors(fixture_kernels, capsys):
    assert cr.main(["--sass", "nothing"], specs=[REVERSE_256]) == 1
    assert "no kernel matches 'nothing'" in capsys.readouterr().err
    assert cr.main([], specs=[BROKEN]) == 1
    assert "kernels/syntax_error.cu(6)" in capsys.readouterr().err


# --------------------------------------------------------------------------- the lab's kernels

@pytest.mark.parametrize("arch", ARCHS)
def test_every_kernel_compiles(arch):
    """The default set (every experiment's kernels at default parameters), compiled from
    an empty cache: a kernel that does not compile, or that spills, fails here."""
    specs = registry.kernel_specs()
    assert specs, "perflab.registry.kernel_specs() returned no kernels"
    df = cr.report(specs, archs=(arch,))
    assert len(df) == len(specs) and df.attrs["compiled"] == len(specs)
    spilling = df[~df.kernel.str.contains("naive")
                  & ((df.spill_store_bytes > 0) | (df.spill_load_bytes > 0))]
    assert spilling.empty, (
        f"kernels that spill on {arch}, compiled by {df.attrs['nvrtc']} (requirements.txt "
        "asks for nvidia-cuda-nvrtc>=13.1: 13.0's ptxas spills rungs 06 and 07):\n"
        + spilling.to_string(index=False))


def test_every_kernel_file_is_used_by_an_experiment():
    """A .cu file no experiment launches would never be compiled, checked or timed. A file
    that only a sweep launches counts (it is compiled by `compile-report --all`, checked
    by the sweep's correctness pass and timed by the sweep)."""
    used = {s.file for s in registry.kernel_specs(full=True)}
    files = {p.relative_to(paths.KERNELS).as_posix() for p in paths.KERNELS.rglob("*.cu")}
    assert files - used == set(), f"kernel files no experiment uses: {sorted(files - used)}"


def test_every_kernel_without_template_arguments_is_extern_c():
    """A spec with no template arguments is loaded by its bare name, which only an
    extern "C" kernel keeps (any other is mangled): one that is not would compile offline
    and fail only on a GPU ("named symbol not found")."""
    plain = {(s.file, s.name): s for s in registry.kernel_specs(full=True) if not s.template}
    assert plain
    mangled = [f"{f}: {n} -> {cr.compile_cubin(s, 'sm_90').lowered_name}"
               for (f, n), s in plain.items()
               if cr.compile_cubin(s, "sm_90").lowered_name != n]
    assert not mangled, "kernels loaded by name that are not extern \"C\":\n" + "\n".join(mangled)


SASS_LOOP = """
        /*0000*/                   MOV R1, c[0x0][0x28] ;
.L_x_1:
        /*0010*/                   FFMA R2, R2, R3, R4 ;
        /*0020*/              @!P0 LDS.128 R4, [R2+0x10] ;
.L_x_2:
        /*0030*/                   FSETP.GT.AND P0, PT, R2, 4, PT ;
        /*0040*/               @P0 BRA `(.L_x_2) ;
        /*0050*/                   BRA `(.L_x_1) ;
        /*0060*/                   BRA `(.L_x_3) ;
.L_x_3:
        /*0070*/                   EXIT ;
"""


def test_instructions_and_loops_are_read_from_the_sass():
    from perflab import compile_report as cr
    ins = cr.instructions(SASS_LOOP)
    assert [i.opcode for i in ins] == ["MOV", "FFMA", "LDS.128", "FSETP.GT.AND", "BRA", "BRA",
                                       "BRA", "EXIT"]
    assert ins[2].base == "LDS" and ins[2].address == 0x20 and ins[1].labels == (".L_x_1",)
    assert cr.count_instructions(SASS_LOOP, base=True)["BRA"] == 3
    inner, outer = cr.loops(SASS_LOOP)          # the forward branch to .L_x_3 is no loop
    assert (inner.start, inner.end, inner.instructions) == (0x30, 0x40, 2)
    assert (outer.start, outer.end) == (0x10, 0x50)
    assert outer.ops == {"FFMA": 1, "LDS": 1, "FSETP": 1, "BRA": 2}
