"""What solve_tridiagonal and the ocean functions promise about their arguments: a plan runs
only on data of its precision, the diagnostics of an in-place solve say what they cannot know,
device integer starts are clipped as numpy's, forced work-groups are checked for every version,
outputs are arrays of their own. Each case crashed the process (a double plan on float32 data),
gave wrong numbers or was silently accepted before its fix."""
from __future__ import annotations

import numpy as np
import pyopencl.array as cla
import pytest

import clts
from clts.ocean.inputs import benchmark_inputs


def _systems(nsys=6, n=20, seed=0):
    rng = np.random.default_rng(seed)
    a, c, d = rng.standard_normal((3, nsys, n))
    return a, 4 + np.abs(a) + np.abs(c), c, d


def test_plan_of_another_precision_is_refused(device):
    a, b, c, d = _systems()
    p64 = clts.solve_tridiagonal(a, b, c, d, device=device).plan
    f32 = [v.astype(np.float32) for v in (a, b, c, d)]
    p32 = clts.solve_tridiagonal(*f32, device=device).plan
    with pytest.raises(ValueError, match="one precision"):
        clts.solve_tridiagonal(*f32, plan=p64, device=device)
    with pytest.raises(ValueError, match="one precision"):
        clts.solve_tridiagonal(a, b, c, d, plan=p32, device=device)


def test_in_place_diagnostics_are_unknown_not_wrong(device):
    a, b, c, d = _systems()
    want = clts.solve_tridiagonal(a, b, c, d, device=device)
    assert want.backward_error.max() < 1e-15 and want.unreliable == 0
    dd = d.copy()
    r = clts.solve_tridiagonal(a, b, c, dd, out=dd, device=device)
    np.testing.assert_array_equal(r.x, want.x)
    assert np.isnan(r.backward_error).all() and r.unreliable == 0
    np.testing.assert_array_equal(r.pivot_growth, want.pivot_growth)
    assert np.isnan(r.diagnostics["max_backward_error"])
    g = [cla.to_device(device.queue, v) for v in (a, b, c, d)]
    rd = clts.solve_tridiagonal(*g, out=g[3], device=device)
    assert np.isnan(rd.backward_error).all() and rd.unreliable == 0


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int16])
def test_device_starts_clip_as_numpy(device, dtype):
    z = np.ones((3, 4))
    big = 2 ** 32 + 1 if np.dtype(dtype).itemsize == 8 else 300
    st = np.array([big, 2, 1], dtype)
    want = clts.solve_tridiagonal(0 * z, 2 * z, 0 * z, z, start=st, device=device).x
    g = [cla.to_device(device.queue, v) for v in (0 * z, 2 * z, 0 * z, z)]
    got = clts.solve_tridiagonal(*g, start=cla.to_device(device.queue, st), device=device).x
    np.testing.assert_array_equal(got.get(), want)
    assert (want[0] == 0).all()         # a start past n: land, not a wrapped row index


def test_forced_work_group_checked_for_every_version(device):
    a, b, c, d = _systems()
    for version in ("pcr", "thomas"):
        with pytest.raises(ValueError, match="largest work-group"):
            clts.solve_tridiagonal(a, b, c, d, version=version, wg=10 ** 6, device=device)


def test_out_must_be_an_array():
    a, b, c, d = _systems()
    with pytest.raises(TypeError, match="numpy array"):
        clts.solve_tridiagonal(a, b, c, d, out=d.tolist())


def test_ocean_outputs_of_their_own(device):
    x = benchmark_inputs(2 ** 10)
    first = clts.ocean.tke(*x.values(), device=device)
    o = np.empty_like(first[0])
    with pytest.raises(ValueError, match=r"out\[1\] overlaps out\[0\]"):
        clts.ocean.tke(*x.values(), device=device, out=(o, o, first[2]))
    with pytest.raises(ValueError, match="not C-contiguous"):
        clts.ocean.tke(*x.values(), device=device,
                       out=(np.asfortranarray(first[0]),) + tuple(first[1:]))


def test_result_pickles_and_reads_back(device):
    import copy
    import pickle
    a, b, c, d = _systems()
    r = clts.solve_tridiagonal(a, b, c, d, device=device)
    for back in (pickle.loads(pickle.dumps(r)), copy.deepcopy(r)):
        np.testing.assert_array_equal(back.x, r.x)
        assert back.diagnostics == r.diagnostics
    g = [cla.to_device(device.queue, v) for v in (a, b, c, d)]
    rd = clts.solve_tridiagonal(*g, device=device)
    host = clts.to_numpy(rd)
    assert isinstance(host.x, np.ndarray) and np.array_equal(host.x, r.x)
    assert isinstance(pickle.loads(pickle.dumps(rd)).x, np.ndarray)
