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


def _offset_view(v, byte_offset):
    """A copy of ``v`` in a larger buffer, starting ``byte_offset`` bytes past its start."""
    raw = np.zeros(v.nbytes + 64, np.uint8)
    out = raw[byte_offset:byte_offset + v.nbytes].view(v.dtype).reshape(v.shape)
    out[...] = v
    return out


@pytest.mark.parametrize("layout", ["slice", "odd-bytes", "F", "strided", "big-endian"])
def test_unaligned_and_foreign_layouts_equal_copy(device, layout):
    """Inputs and ``out=`` as a[1:]-style views (not page- or 128-byte aligned), at an odd
    byte offset (not even element-aligned), Fortran-ordered, strided, big-endian: the same bits
    as the copying path. Element-aligned views are used in place where the device takes any
    pointer (pocl; system SVM: the Intel CPU runtime)."""
    a, b, c, d = _systems(40, 11, seed=3)
    clts.set_options(zero_copy=False)
    ref = clts.solve_tridiagonal(a, b, c, d, device=device).x
    clts.set_options(zero_copy=True)
    if layout == "slice":
        big = [np.concatenate([np.zeros(1), v.ravel()]) for v in (a, b, c, d)]
        args = [v[1:].reshape(a.shape) for v in big]
        if host_ptr_alignment(device) == 1:
            assert all(host_array(device, v) is not None for v in args)
    elif layout == "odd-bytes":
        args = [_offset_view(v, 3) for v in (a, b, c, d)]
    elif layout == "F":
        args = [np.asfortranarray(v) for v in (a, b, c, d)]
    elif layout == "strided":
        args = [np.repeat(v, 2, axis=1)[:, ::2] for v in (a, b, c, d)]
    else:
        args = [v.astype(">f8") for v in (a, b, c, d)]
    np.testing.assert_array_equal(clts.solve_tridiagonal(*args, device=device).x, ref)
    out = _offset_view(np.zeros_like(d), 8 if layout != "odd-bytes" else 5)
    r = clts.solve_tridiagonal(*args, out=out, device=device)
    assert r.x is out
    np.testing.assert_array_equal(out, ref)


def test_system_svm_only_on_cpus_that_share_memory(device):
    from clts.runtime.memory import system_svm
    al = host_ptr_alignment(device)
    if system_svm(device) and al is not None:
        assert al == 1
        odd = _offset_view(np.ones((4, 8)), 4)          # not element-aligned: copied
        assert host_array(device, odd) is None
    clts.set_options(zero_copy=False)
    assert host_array(device, np.ones(8)) is None
