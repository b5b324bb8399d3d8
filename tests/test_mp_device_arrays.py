"""Matrix profile on device arrays: pyopencl arrays in, device arrays out, no host transfer,
map or wait inside the call (tests/transfers.py), the numpy path's results; on the test
devices and under the emulated H100 / MI100 Plans."""
from __future__ import annotations

import numpy as np
import pytest

import clts
from emulated import gpus_over_pocl
from transfers import host_traffic


def _series(n, seed=0):
    rng = np.random.default_rng(seed)
    T = np.cumsum(rng.standard_normal(n))
    T[n // 4:n // 4 + 80] = 2.5            # constant windows: the exact scans
    T[n // 2] = np.nan                     # non-finite windows
    T[n // 2 + 100:n // 2 + 160] = 1.0 + 1e-9 * rng.standard_normal(60)   # ill-conditioned
    return T


def _same(r_dev, r_np, keys):
    import pyopencl.array as cla
    for key in keys:
        a = getattr(r_dev, key)
        assert isinstance(a, cla.Array), key
        got = a.get()
        want = getattr(r_np, key)
        assert got.shape == want.shape, key
        if key.endswith("I") or key.startswith("I"):
            np.testing.assert_array_equal(got, want, err_msg=key)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=key)


def _check(dev, T, TB=None, **kw):
    import pyopencl.array as cla
    dA = cla.to_device(dev.queue, T)
    dB = None if TB is None else cla.to_device(dev.queue, TB)
    want = clts.matrix_profile(T, 48, TB, device=dev, **kw)
    clts.matrix_profile(dA, 48, dB, device=dev, **kw)          # builds
    dev.queue.finish()
    with host_traffic() as t:
        got = clts.matrix_profile(dA, 48, dB, device=dev, **kw)
    assert t.total == 0, t.report()
    keys = ["P", "I"] + (["left_P", "left_I", "right_P", "right_I"] if TB is None else []) \
        + (["P_B", "I_B"] if kw.get("both") else [])
    _same(got, want, keys)
    host = clts.to_numpy(got)
    assert isinstance(host.P, np.ndarray) and host.diagnostics == want.diagnostics | {
        "seconds": host.diagnostics["seconds"]}
    return got


@pytest.mark.parametrize("normalize", [True, False])
def test_self_join_device_arrays(device, normalize):
    _check(device, _series(1500), normalize=normalize)


@pytest.mark.parametrize("normalize", [True, False])
def test_ab_join_device_arrays(device, normalize):
    _check(device, _series(900, 1), _series(1100, 2), normalize=normalize, both=True)


def test_device_arrays_float32_input(device):
    """A float32 device series computes as the numpy path does on the same float32 values."""
    import pyopencl.array as cla
    T = _series(800, 3).astype(np.float32)
    want = clts.matrix_profile(T, 32, device=device)
    got = clts.matrix_profile(cla.to_device(device.queue, T), 32, device=device)
    np.testing.assert_array_equal(got.I.get(), want.I)
    np.testing.assert_allclose(got.P.get(), want.P, rtol=1e-12, atol=1e-12)


def test_device_arrays_emulated_gpus():
    """The emulated H100 and MI100 Plans (GPU tiles, merges, coop re-evaluation) on device
    arrays: no host traffic, the numpy path's results."""
    emus = {k: v for k, v in gpus_over_pocl().items() if k in ("h100", "mi100")}
    if not emus:
        pytest.skip("no pocl device to emulate GPUs on")
    for dev in emus.values():
        _check(dev, _series(700, 4))


def test_device_array_checks(device):
    import pyopencl.array as cla
    T = _series(700)
    with pytest.raises(ValueError, match="dimension"):
        clts.matrix_profile(cla.to_device(device.queue, np.stack([T, T])), 16, device=device)
    with pytest.raises(TypeError, match="dtype"):
        clts.matrix_profile(cla.to_device(device.queue, np.nan_to_num(T).astype(np.int32)), 16, device=device)
    with pytest.raises(TypeError, match="both"):
        clts.matrix_profile(cla.to_device(device.queue, T), 16, T, device=device)
    with pytest.raises(ValueError, match="C-contiguous"):
        clts.matrix_profile(cla.to_device(device.queue, T)[::2], 16, device=device)
