"""kernels.warm: every distinct kernel compiled once, on the caller's device, before the
first launch; a kernel that fails is left for its launch to raise."""
from __future__ import annotations

import threading

import cupy

from perflab import kernels
from perflab.kernels import KernelSpec


class FakeDevice:
    used: list = []

    def __init__(self, i=None):
        self.id = 3 if i is None else i

    def use(self):
        FakeDevice.used.append((self.id, threading.get_ident()))


def test_warm_compiles_each_distinct_kernel_once_on_the_callers_device(monkeypatch):
    compiled = []

    def get_kernel(spec):
        compiled.append(spec.file)
        if spec.file == "demo/broken.cu":
            raise kernels.KernelCompileError("broken on purpose")
    monkeypatch.setattr(kernels, "get_kernel", get_kernel)
    monkeypatch.setattr(cupy.cuda, "Device", FakeDevice)
    FakeDevice.used = []
    a, b = KernelSpec("demo/a.cu", "a"), KernelSpec("demo/broken.cu", "b")
    kernels.warm([a, a, b, KernelSpec("demo/a.cu", "a")])
    assert sorted(compiled) == ["demo/a.cu", "demo/broken.cu"]      # once each, no raise
    assert {dev for dev, _ in FakeDevice.used} == {3}
    kernels.warm([])                                                # nothing to do
    assert len(compiled) == 2
