"""Chapter 1's operand check (perflab.chapters.sgemm.variant.operands) on alignment, with
no GPU: every rung refuses a float32 operand that does not start on 4 bytes (it would
fault with a misaligned address and lose the CUDA context) and lets one 4 bytes past
16-byte alignment through, to the path that does not assume 16 bytes."""
from __future__ import annotations

import dataclasses
import re
import types

import numpy as np
import pytest

from perflab.chapters.sgemm import variants
from perflab.chapters.sgemm.variant import aligned, operands
from perflab.errors import ConfigError


class _Operand:
    """What the check reads of a CuPy array: dtype, ndim, shape, flags, data.ptr, nbytes."""

    def __init__(self, shape, ptr):
        self.shape, self.ndim, self.dtype = shape, len(shape), np.dtype(np.float32)
        self.flags = types.SimpleNamespace(c_contiguous=True)
        self.data = types.SimpleNamespace(ptr=ptr)
        self.nbytes = int(np.prod(shape)) * 4


def _abc(offsets=(0, 0, 0), M=64, N=48, K=32):
    bases = (1 << 20, 2 << 20, 3 << 20)
    shapes = ((M, K), (K, N), (M, N))
    return [_Operand(s, b + o) for s, b, o in zip(shapes, bases, offsets)]


def _never(*args):
    raise AssertionError("a refused call must enqueue nothing")


@pytest.mark.parametrize("v", variants(), ids=lambda v: v.name)
@pytest.mark.parametrize("which", [0, 1, 2], ids=["A", "B", "C"])
@pytest.mark.parametrize("offset", [1, 2, 3, 6])
def test_an_operand_off_4_bytes_is_refused_by_every_rung(v, which, offset):
    offs = [0, 0, 0]
    offs[which] = offset
    name = "ABC"[which]
    msg = f"{v.name}: {name} starts {offset % 4} bytes past a 4-byte boundary"
    with pytest.raises(ConfigError, match=re.escape(msg)):
        dataclasses.replace(v, enqueue=_never).run(*_abc(offs), v.params())


@pytest.mark.parametrize("v", variants(), ids=lambda v: v.name)
def test_operands_4_bytes_past_16_byte_alignment_are_accepted(v):
    A, B, C = _abc((4, 4, 4))
    assert operands(v.name, A, B, C) == (64, 48, 32)
    seen = []
    dataclasses.replace(v, enqueue=lambda *a: seen.append(a)).run(A, B, C, v.params())
    assert len(seen) == 1


def test_the_16_byte_paths_need_16_byte_starts_and_rows():
    A, B, C = _abc()
    assert aligned(A, B, C, cols=(48, 32))
    assert not aligned(*_abc((4, 0, 0)), cols=(48, 32))      # A 4 bytes past 16
    assert not aligned(*_abc((0, 0, 8)), cols=(48, 32))      # C 8 bytes past 16
    assert not aligned(A, B, C, cols=(47, 32))               # rows of 47 floats
