"""New kernel objects through the memo in front of pyopencl's argument-setter generator
(``clts.runtime.kernel_objects``): they launch as pyopencl's own do, share the generated
functions of equal arguments, and a pyopencl whose generator has other parameters keeps its
own path."""
from __future__ import annotations

import time

import numpy as np
import pytest

from clts.runtime import kernel_objects
from clts.runtime.programs import quiet_pyopencl_builds

cl = pytest.importorskip("pyopencl")

SOURCE = """__kernel void axpy(__global float *y, __global const float *x, float a, int n) {
    int i = get_global_id(0); if (i < n) y[i] += a * x[i]; }"""


def test_new_kernels_launch_and_share_their_setters(device):
    assert kernel_objects.install()
    with quiet_pyopencl_builds():     # a driver's routine build log: no CompilerWarning
        prg = cl.Program(device.context, SOURCE).build()
    ks = [kernel_objects.new_kernel(prg, "axpy") for _ in range(3)]
    assert len({id(k) for k in ks}) == 3
    x = np.arange(10, dtype=np.float32)
    y = np.ones(10, np.float32)
    mf = cl.mem_flags
    xb = cl.Buffer(device.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    yb = cl.Buffer(device.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
    for k in ks:                    # pyopencl's own setter and enqueue on each object
        k(device.queue, (10,), None, yb, xb, np.float32(2), np.int32(10))
    got = np.empty_like(y)
    cl.enqueue_copy(device.queue, got, yb)
    np.testing.assert_array_equal(got, 1 + 3 * 2 * x)
    from pyopencl import invoker
    devs = device.context.devices
    a = invoker.generate_enqueue_and_set_args("axpy", 4, 4, None, False, False, devs)
    b = invoker.generate_enqueue_and_set_args("axpy", 4, 4, None, False, False, devs)
    assert a[0] is b[0] and a[1] is b[1]
    t = time.perf_counter()
    for _ in range(20):
        kernel_objects.new_kernel(prg, "axpy")
    assert (time.perf_counter() - t) / 20 < 0.1       # ~10 µs; pyopencl's own ~0.2-0.3 ms


def test_another_generator_keeps_its_own_path(monkeypatch):
    from pyopencl import invoker

    def other(function_name, num_passed_args, num_cl_args, arg_types, devs):
        return None
    monkeypatch.setattr(invoker, "generate_enqueue_and_set_args", other)
    assert kernel_objects._install() is False
    assert invoker.generate_enqueue_and_set_args is other
