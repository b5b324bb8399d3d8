"""Matrix profile on device arrays: pyopencl arrays in, device arrays out, no host transfer,
map or wait inside the call (tests/transfers.py), the numpy path's results; on the test
devices and under the emulated H100 / MI100 Plans."""
from __future__ import annotations

import numpy as np
import pytest

import clts
from emulated import gpus_over_pocl
from transfers import host_traffic, run_while_held


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


@pytest.mark.parametrize("normalize", [True, False])
def test_topk_device_arrays(device, normalize):
    """Top-k lists (k <= 16) merge on the device too: no host traffic, the numpy path's."""
    _check(device, _series(1000, 5), normalize=normalize, k=3)
    _check(device, _series(700, 6), _series(800, 7), normalize=normalize, k=2, both=True)


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
        _check(dev, _series(600, 8), k=2)


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


@pytest.mark.parametrize("kw", [{}, {"normalize": False}, {"normalize": False, "p": 3.5},
                                {"query_idx": 10}])
def test_mass_device_arrays(device, kw):
    """clts.mass on device arrays: a device array of profiles, no host traffic, the numpy
    path's bits (batched shapes, NaN windows, constant windows, plain distances)."""
    import pyopencl.array as cla
    rng = np.random.default_rng(0)
    T = np.cumsum(rng.standard_normal((3, 400)), axis=1)
    T[1, 50] = np.nan
    T[2, 100:140] = 1.0
    Q = T[0, 10:42].copy()
    for q, t in [(Q, T), (Q, T[0]), (np.stack([Q, Q + 1]), T[:2]), (np.stack([Q, 2 * Q]), T[0])]:
        want = clts.mass(q, t, device=device, **kw)
        dq = cla.to_device(device.queue, q)
        dt = cla.to_device(device.queue, np.ascontiguousarray(t))
        clts.mass(dq, dt, device=device, **kw)
        device.queue.finish()
        with host_traffic() as tr:
            got = clts.mass(dq, dt, device=device, **kw)
        assert tr.total == 0, tr.report()
        assert isinstance(got, cla.Array)
        np.testing.assert_array_equal(got.get(), want)


def test_mass_match_device_arrays_extremes(device):
    """Plain distances of values near 1e300 (rescaled on the device as on the host); match on
    device arrays gives the host list of the numpy path and rejects a NaN query."""
    import pyopencl.array as cla
    T = np.cumsum(np.random.default_rng(1).standard_normal(500))
    big = T * 1e300
    want = clts.mass(big[5:37], big, normalize=False, device=device)
    got = clts.mass(cla.to_device(device.queue, big[5:37].copy()),
                    cla.to_device(device.queue, big), normalize=False, device=device)
    np.testing.assert_array_equal(got.get(), want)
    Q = T[10:42].copy()
    r1 = clts.match(Q, T, device=device, max_distance=2.0)
    r2 = clts.match(cla.to_device(device.queue, Q), cla.to_device(device.queue, T),
                    device=device, max_distance=2.0)
    assert np.array_equal(r1.astype(float), r2.astype(float))
    Q[3] = np.nan
    with pytest.raises(ValueError, match="illegal"):
        clts.match(cla.to_device(device.queue, Q), cla.to_device(device.queue, T),
                   device=device)
    with pytest.raises(TypeError, match="dtype"):
        clts.mass(cla.to_device(device.queue, Q.astype(np.float32)),
                  cla.to_device(device.queue, T), device=device)


def test_aamp_device_arrays(device):
    """clts.aamp with p = 2 is the plain-Euclidean matrix profile: device arrays in and out,
    no host traffic (other p: tests/test_device_arrays_rest.py)."""
    import pyopencl.array as cla
    T = _series(700, 9)
    dT = cla.to_device(device.queue, T)
    want = clts.aamp(T, 24, device=device)
    clts.aamp(dT, 24, device=device)
    device.queue.finish()
    with host_traffic() as t:
        got = clts.aamp(dT, 24, device=device)
    assert t.total == 0, t.report()
    _same(got, want, ["P", "I", "left_P", "left_I", "right_P", "right_I"])


def test_calls_return_while_the_queue_is_blocked(device):
    """The device's queue held by a user event: matrix_profile (k = 1 and top-k) and mass on
    device arrays still return (a call that waited for the device would not come back); the
    results are complete once it is released."""
    if "nvidia" in str(device.info.platform).lower():
        pytest.skip("NVIDIA's OpenCL (580, H200) segfaulted reading these results after a "
                    "user-event barrier had held the queue; a plain pyopencl kernel + read "
                    "behind the same barrier did not: open, see docs/device-arrays.md")

    import pyopencl.array as cla
    T = _series(700, 12)
    want1 = clts.matrix_profile(T, 24, device=device)
    want3 = clts.matrix_profile(T, 24, k=3, device=device)
    wantm = clts.mass(T[5:29], T, device=device)
    dT = cla.to_device(device.queue, T)
    dQ = cla.to_device(device.queue, T[5:29].copy())
    clts.matrix_profile(dT, 24, device=device)               # programs built outside
    clts.matrix_profile(dT, 24, k=3, device=device)
    clts.mass(dQ, dT, device=device)
    device.queue.finish()
    got = run_while_held(device, lambda: dict(
        k1=clts.matrix_profile(dT, 24, device=device),
        k3=clts.matrix_profile(dT, 24, k=3, device=device),
        mass=clts.mass(dQ, dT, device=device)))
    out = clts.to_numpy(got)
    np.testing.assert_array_equal(out["k1"].I, want1.I)
    np.testing.assert_array_equal(out["k3"].I, want3.I)
    np.testing.assert_array_equal(out["k3"].P, want3.P)
    np.testing.assert_array_equal(out["mass"], wantm)
    assert out["k1"].diagnostics["special_A"] == want1.diagnostics["special_A"]


def test_motifs_discords_of_device_results(device):
    """motifs / discords of a device-array call's result (and a device series) read the
    profile back once and give the numpy path's lists."""
    import pyopencl.array as cla
    T = np.cumsum(np.random.default_rng(13).standard_normal(1000))
    dT = cla.to_device(device.queue, T)
    r = clts.matrix_profile(dT, 32, device=device)
    r0 = clts.matrix_profile(T, 32, device=device)
    for a, b in zip(clts.discords(r, 3), clts.discords(r0, 3)):
        np.testing.assert_array_equal(a, b)
    assert str(clts.motifs(dT, r, 2)) == str(clts.motifs(T, r0, 2))
