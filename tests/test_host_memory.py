"""numpy calls on CPU devices use the numpy memory in place (CL_MEM_USE_HOST_PTR) where the
device can: identical results to the copying path, whatever the layout, chunking, alignment,
out= (also aliasing an input) and read-only inputs."""
import numpy as np
import pytest

import clts
from clts.runtime.memory import host_array, host_empty, host_ptr_alignment


def _systems(nsys, n, seed=0):
    rng = np.random.default_rng(seed)
    a, c = rng.uniform(-1, 1, (2, nsys, n))
    return a, 4 + rng.uniform(0, 1, (nsys, n)), c, rng.standard_normal((nsys, n))


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("chunk", [None, 7])
def test_in_place_equals_copy(device, monkeypatch, axis, chunk):
    a, b, c, d = _systems(60, 9)
    if axis == 0:
        a, b, c, d = (np.ascontiguousarray(v.T) for v in (a, b, c, d))
    elif axis == 1:
        a, b, c, d = (v.reshape(6, 10, 9).transpose(0, 2, 1) for v in (a, b, c, d))
    if chunk:
        clts.set_options(max_chunk=chunk)
    x = clts.solve_tridiagonal(a, b, c, d, axis=axis, device=device).x
    clts.set_options(zero_copy=False)
    assert host_ptr_alignment(device) is None
    ref = clts.solve_tridiagonal(a, b, c, d, axis=axis, device=device).x
    np.testing.assert_array_equal(x, ref)
    assert x.flags.c_contiguous or axis == 1


def test_out_in_place_aliasing_and_read_only(device):
    a, b, c, d = _systems(50, 12, seed=1)
    ref = clts.solve_tridiagonal(a, b, c, d, device=device).x
    out = host_empty(device, d.shape, d.dtype)
    r = clts.solve_tridiagonal(a, b, c, d, out=out, device=device)
    assert r.x is out
    np.testing.assert_array_equal(out, ref)
    d2 = d.copy()
    clts.solve_tridiagonal(a, b, c, d2, out=d2, device=device)       # x written over d
    np.testing.assert_array_equal(d2, ref)
    for v in (a, b, c, d):
        v.flags.writeable = False
    np.testing.assert_array_equal(clts.solve_tridiagonal(a, b, c, d, device=device).x, ref)
    # an unaligned (offset) view of a larger array
    big = np.zeros(d.size + 1)
    view = big[1:].reshape(d.shape)
    view[...] = d
    np.testing.assert_array_equal(clts.solve_tridiagonal(a, b, c, view, device=device).x, ref)


def test_host_array_only_where_the_device_reads_in_place(device):
    al = host_ptr_alignment(device)
    a = host_empty(device, (64, 8), np.float64)
    if al is None:
        assert host_array(device, a) is None
        return
    assert a.ctypes.data % al == 0
    assert host_array(device, a) is not None
    assert host_array(device, a[:, ::2]) is None          # not contiguous
    ro = a.copy()
    ro.flags.writeable = False
    assert host_array(device, ro, write=True) is None
