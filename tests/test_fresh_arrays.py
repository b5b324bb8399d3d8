"""``runtime.fresh_arrays.new_array``: the same Array as pyopencl's fast constructor makes,
whatever the shape, dtype and allocator; pyopencl's own operations work on it; and where the
check fails (another pyopencl), the constructor itself."""
from __future__ import annotations

import numpy as np
import pytest

from clts.runtime import fresh_arrays
from clts.runtime.launch import pyopencl_kernels
from clts.runtime.memory import array_geometry

cla = pytest.importorskip("pyopencl.array")


@pytest.mark.parametrize("shape", [(0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4, 5)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.complex64])
def test_the_constructors_array(device, shape, dtype):
    shp, dt, strides, size = array_geometry(shape, dtype)
    for alloc in (None, device.state.pool("scratch")):
        a = fresh_arrays.new_array(device.queue, device.context, shp, dt, strides, size, alloc)
        want = cla.Array(None, shp, dt, allocator=alloc, strides=strides, _fast=True,
                         _size=size, _context=device.context, _queue=device.queue)
        assert type(a) is cla.Array
        assert sorted(a.__dict__) == sorted(want.__dict__)
        for k, v in want.__dict__.items():
            if k != "base_data":
                assert a.__dict__[k] == v, k
        assert (a.base_data is None) == (want.base_data is None)
        if size:
            host = np.arange(size).astype(dt).reshape(shp)
            a.set(host)
            with pyopencl_kernels():        # pyopencl's own kernel, built quietly
                twice = a * 2
            np.testing.assert_array_equal(twice.get(), host * 2)
            assert a.flags.c_contiguous and a.ndim == len(shp)


def test_another_pyopencl_gets_the_constructor(device, monkeypatch):
    monkeypatch.setattr(fresh_arrays, "_DIRECT", False)
    calls = []
    init = cla.Array.__init__

    def spy(self, *args, **kw):
        calls.append(kw.get("_fast"))
        init(self, *args, **kw)
    monkeypatch.setattr(cla.Array, "__init__", spy)
    shp, dt, strides, size = array_geometry((4, 2), np.float32)
    a = fresh_arrays.new_array(device.queue, device.context, shp, dt, strides, size)
    assert calls == [True] and a.shape == (4, 2)


def test_the_check_refuses_another_dictionary(monkeypatch):
    """An Array whose constructor keeps another state (a new entry) fails the check."""
    init = cla.Array.__init__

    def more(self, *args, **kw):
        init(self, *args, **kw)
        self.extra = 1
    monkeypatch.setattr(cla.Array, "__init__", more)
    monkeypatch.setattr(fresh_arrays, "_DIRECT", None)
    assert fresh_arrays._direct_ok() is False
    monkeypatch.setattr(fresh_arrays, "_DIRECT", None)     # checked again after the test


def test_c_contiguous_is_pyopencls_flag(device):
    """``memory.c_contiguous`` answers as pyopencl's ``flags.c_contiguous`` for C arrays, views
    (transposes, slices, steps, length-1 and empty axes) and arrays whose flags were never
    read."""
    from clts.runtime.memory import c_contiguous, empty_device
    a = empty_device(device.queue, device.context, (4, 6, 5), np.float32)
    views = [a, a[1:], a[:, 1:], a[..., ::2], a.transpose((2, 1, 0)), a[:1], a[:, :1, :],
             a[:0], a[2], a[2:3, :, :1], a.reshape(24, 5), a.reshape(120), a[::2]]
    for v in views:
        fresh = cla.Array(v.queue, v.shape, v.dtype, strides=v.strides, data=v.base_data,
                          offset=v.offset)
        assert c_contiguous(fresh) == v.flags.c_contiguous, (v.shape, v.strides)
    odd = cla.Array(device.queue, (3, 1), np.float32, strides=(4, 40), data=a.base_data)
    assert c_contiguous(odd) and odd.flags.c_contiguous     # a length-1 axis' stride: any
