"""Chapter 1's rung 10 (perflab.chapters.sgemm.hopper: TF32 wgmma fed by TMA) without a GPU.

Its parameter checks and their messages, the refusal of any GPU that is not a Hopper
(compute capability 9.x), the tensor maps it asks the driver for (the driver faked), and
the offline compile of every kernel it may launch, for sm_90a: no spills, the warpgroup
MMA, the tensor copies (multicast with a cluster) and the fragment loads in the SASS, and
setmaxnreg honoured (no C7508 warning)."""
from __future__ import annotations

import ctypes
import itertools

import numpy as np
import pytest

from perflab import compile_report as cr
from perflab.chapters.sgemm import hopper
from perflab.errors import ConfigError
from perflab.kernels import KernelSpec

V = hopper.VARIANT
H200 = {"name": "NVIDIA H200", "compute_capability": "9.0", "smem_per_block_optin": 232448}


@pytest.fixture(autouse=True)
def compile_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFLAB_CACHE_DIR", str(tmp_path / "cache"))


def test_defaults_are_valid_on_an_h200_at_every_ladder_size():
    for M, N, K in ((3072,) * 3, (8192,) * 3, (4096, 8192, 2048), (3000, 2999, 3001),
                    (128, 128, 32768), (67, 45, 93), (1, 1, 1)):
        V.check(V.params(), M, N, K, H200)
    assert V.params() == {"BN": 128, "stages": 4, "cluster": 1}


@pytest.mark.parametrize("cc, name", [("8.9", "NVIDIA L4"), ("8.0", "NVIDIA A100"),
                                      ("10.0", "NVIDIA B200"), ("12.0", "RTX 5090")])
def test_other_gpus_are_refused_with_the_reason(cc, name):
    dev = {"name": name, "compute_capability": cc, "smem_per_block_optin": 232448}
    with pytest.raises(ConfigError) as e:
        V.check(V.params(), 256, 256, 256, dev)
    msg = str(e.value)
    assert msg.startswith("10-wgmma-tma:") and "compute capability 9.x" in msg
    assert f"compute capability {cc}" in msg and name in msg and "08-tf32-mma" in msg


def test_the_gpu_check_comes_before_the_shared_memory_check():
    small = {"name": "NVIDIA L4", "compute_capability": "8.9", "smem_per_block_optin": 101376}
    with pytest.raises(ConfigError, match="compute capability 9.x"):
        V.check(V.params(), 256, 256, 256, small)


@pytest.mark.parametrize("over, words", [
    ({"BN": 96}, "BN=96"), ({"BN": 256}, "BN 64 or 128"), ({"stages": 1}, "2 to 8"),
    ({"stages": 9}, "2 to 8"), ({"stages": 5}, "246784 B of shared memory"),
    ({"cluster": 4}, "cluster=4"), ({"cluster": 0}, "1 (no cluster) or 2"),
    ({"BN": 128.0}, "must be an integer"), ({"stages": True}, "must be an integer")])
def test_bad_parameters_say_why(over, words):
    with pytest.raises(ConfigError, match="^10-wgmma-tma: ") as e:
        V.check({**V.params(), **over}, 256, 256, 256, H200)
    assert words in str(e.value)


def test_unknown_parameter_and_huge_problems():
    with pytest.raises(ConfigError, match="unknown parameter"):
        V.params(BM=128)
    with pytest.raises(ConfigError, match="too large for the tensor maps"):
        V.check(V.params(), 2**31, 64, 64, H200)


def test_smem_and_threads():
    assert hopper.smem_bytes(V.params()) == 4 * (256 + 128) * 32 * 4 + 1024 == 197632
    assert hopper.threads(V.params()) == 384
    assert hopper.threads(V.params(BN=64)) == 256
    # 5 stages of BN 64 fit (5 x 40 KB + 1 KB), 5 of BN 128 do not
    V.check(V.params(BN=64, stages=5), 256, 256, 256, H200)


def test_tensor_maps_ask_the_driver_for_swizzled_boxes(monkeypatch):
    calls = []

    def fake(addr, dtype, rank, ptr, dims, strides, box, estr, inter, swz, l2, oob):
        calls.append(dict(dtype=dtype, rank=rank, ptr=ptr, dims=(dims[0], dims[1]),
                          stride=strides[0], box=(box[0], box[1]), estr=(estr[0], estr[1]),
                          inter=inter, swz=swz, oob=oob, aligned=addr % 64 == 0))
        ctypes.memmove(addr, bytes(range(128)), 128)
        return 0

    monkeypatch.setattr(hopper, "encode_tiled", lambda: fake)
    m = hopper.tensor_map(0x7f0000000000, 3000, 3001, 3004, 128, dtype=11)
    assert m.dtype == np.uint64 and m.size == 16
    assert m.view(np.uint8).tolist() == list(range(128))
    c = calls[0]
    assert c == dict(dtype=11, rank=2, ptr=0x7f0000000000, dims=(3001, 3000), stride=3004 * 4,
                     box=(32, 128), estr=(1, 1), inter=0, swz=3, oob=0, aligned=True)
    assert hopper.MAPS_DTYPE.itemsize == 256


def test_a_driver_error_is_a_config_error(monkeypatch):
    monkeypatch.setattr(hopper, "encode_tiled", lambda: (lambda *a: 1))
    with pytest.raises(ConfigError, match="cuTensorMapEncodeTiled failed with CUresult 1"):
        hopper.tensor_map(0x1000, 4, 4, 4, 128)


def test_kernel_specs_name_their_architecture():
    specs = V.kernels(V.params())
    assert {s.arch for s in specs} == {"sm_90a"}
    assert KernelSpec("x.cu", "k").arch is None
    assert KernelSpec("x.cu", "k", options=("--gpu-architecture=sm_100a",)).arch == "sm_100a"


def _every_spec():
    out = []
    for p in [dict(zip(V.param_space, c)) for c in itertools.product(*V.param_space.values())]:
        for s in V.kernels(V.params(**p)):
            if s not in out:
                out.append(s)
    return out


def test_every_kernel_compiles_for_sm_90a_without_spills():
    """The compile report builds each spec for the architecture it names: asked for sm_89
    and sm_90, every row is sm_90a."""
    specs = _every_spec()
    df = cr.report(specs, archs=("sm_89", "sm_90"))
    assert len(df) == 2 * len(specs) and set(df.arch) == {"sm_90a"}
    assert (df.spill_store_bytes == 0).all() and (df.spill_load_bytes == 0).all()
    assert (df.stack_frame_bytes == 0).all()
    gemm = df[df.kernel.str.startswith("sgemm_wgmma_tma")]
    assert (gemm.registers * gemm.kernel.map(
        lambda k: 128 * (int(k.split("<")[1].split(",")[0]) + 1)) <= 65536).all()


def test_the_sass_has_warpgroup_mma_and_tensor_copies():
    for cl in (1, 2):
        spec = hopper.gemm_spec(V.params(cluster=cl))
        ck = cr.compile_cubin(spec, "sm_90")
        assert ck.arch == "sm_90a"
        assert "C7508" not in ck.log, "setmaxnreg ignored: " + ck.log
        text = cr.sass(spec, "sm_90a")
        counts = cr.count_instructions(text, base=True)
        # 4 x m64n256k8 per 32-deep k-tile; the k loop is unrolled twice, plus an odd tail
        assert counts["HGMMA"] == 12
        assert "HGMMA.64x256x8.F32.TF32" in text
        assert counts["UTMALDG"] == 5         # one box of A (or half, multicast), 4 of B
        assert ("UTMALDG.2D.MULTICAST" in text) == (cl == 2)
        assert counts["USETMAXREG"] == 2      # producer gives, consumers take
        assert counts["LDS"] == 48            # 16 fragment values per k-tile, x 3
        assert counts["LDL"] == counts["STL"] == 0
