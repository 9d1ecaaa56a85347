"""The lab on a GPU: live runs, launch checks before launch, errors that name the kernel,
the cuBLAS modes, and every kernel's correctness pass. Run with `make test-gpu`."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

FIXTURES = Path(__file__).parent / "kernels_fixture"


@pytest.fixture
def live(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")


def test_every_kernel_passes_its_correctness_check(live):
    from perflab import lab
    rows = lab.check_all()
    failed = [(r["experiment"], r["variant"], r["params"], r["rel_err"])
              for r in rows if r["correct"] is False]
    assert rows and not failed


def test_live_run_gives_the_replay_columns(live):
    import perflab
    df = perflab.run("machine.copy", sizes=(1 << 24,))
    assert set(df["variant"]) == {"kernel-vec4", "cupy-elementwise", "cudaMemcpy"}
    assert df["correct"].all() and (df["TB/s"] > 0).all()
    assert perflab.caption(df).startswith("measured live on ")
    assert df.attrs["units"]["TB/s"] == "TB/s"


def test_launch_limits_are_checked_before_launch(live):
    from perflab.errors import LaunchConfigError
    from perflab.chapters.machine import copy_spec
    from perflab.kernels import get_kernel, launch
    import cupy as cp

    k = get_kernel(copy_spec())
    x = cp.zeros(1024, dtype=cp.float32)
    with pytest.raises(LaunchConfigError, match="exceeds the device limit of 1024"):
        launch(k, 1, 2048, (x, x, np.int64(256)))
    with pytest.raises(LaunchConfigError, match=r"shared memory exceeds the device limit of \d+ B"):
        launch(k, 1, 256, (x, x, np.int64(256)), shared_mem=1 << 20)


def test_compile_error_names_file_and_line(live, monkeypatch):
    from perflab import kernels, paths
    from perflab.errors import KernelCompileError

    monkeypatch.setattr(paths, "KERNELS", FIXTURES)
    kernels.clear_cache()
    with pytest.raises(KernelCompileError, match=r"kernels/syntax_error\.cu\(\d+\)"):
        kernels.get_kernel(kernels.KernelSpec("syntax_error.cu", "broken"))


def test_fault_inside_a_kernel_names_it(tmp_path):
    # A fault poisons the CUDA context, so it runs in its own process.
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "fault.cu").write_text(
        'extern "C" __global__ void write_null(float* p) { p[threadIdx.x + (1LL << 40)] = 1.0f; }\n')
    (tmp_path / "_toc.yml").write_text("root: intro\n")
    script = textwrap.dedent("""
        import cupy as cp
        from perflab.kernels import KernelSpec, get_kernel, launch, checked
        from perflab.errors import KernelRuntimeError
        k = get_kernel(KernelSpec("fault.cu", "write_null"))
        x = cp.zeros(32, dtype=cp.float32)
        try:
            checked(lambda: launch(k, 1, 32, (x,)), "fault/write_null")
        except KernelRuntimeError as e:
            print("CAUGHT", e)
    """)
    import os
    lib = str(Path(__file__).resolve().parents[1] / "lib")
    env = {**os.environ, "PERFLAB_ROOT": str(tmp_path),
           "PYTHONPATH": os.pathsep.join(filter(None, [lib, os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, timeout=120)
    assert "CAUGHT CUDA error in fault/write_null" in out.stdout, out.stdout + out.stderr


def test_cublas_modes_are_what_they_say(live):
    import cupy as cp
    from perflab.blas import gemm
    from perflab.correctness import compare

    n = 1024
    A = cp.random.uniform(-1, 1, (n, n), dtype=cp.float32)
    B = cp.random.uniform(-1, 1, (n, n), dtype=cp.float32)
    ref = A.astype(cp.float64) @ B.astype(cp.float64)
    C = cp.empty((n, n), dtype=cp.float32)
    gemm(A, B, C, "fp32")
    e32 = compare(C, ref, "fp32").rel_err
    gemm(A, B, C, "tf32")
    etf = compare(C, ref, "tf32").rel_err
    assert e32 < 1e-5 < etf < 5e-3


def test_gpu_reference_agrees_with_numpy(live):
    import cupy as cp
    from perflab.chapters.sgemm import Problem

    gpu = Problem(67, 45, 93, timing=False, reference="gpu")
    cpu = cp.asnumpy(gpu.A).astype("f8") @ cp.asnumpy(gpu.B).astype("f8")
    np.testing.assert_allclose(cp.asnumpy(gpu.ref), cpu, rtol=1e-12, atol=1e-12)
