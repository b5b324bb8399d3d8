"""Device-array inputs of the functions that came last to the device: clts.mstl with a Box-Cox
``lmbda``, clts.aamp with p != 2 and the trend tests' transform / multi-variable variants.
Results stay on the device with no host transfer, map or wait inside the call
(tests/transfers.py), on every test device and under the emulated H100 / MI100 Plans, and equal
the numpy path's."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import clts
from clts.runtime.arrays import is_device_array

sys.path.insert(0, str(Path(__file__).parent))
from emulated import gpus_over_pocl  # noqa: E402
from transfers import host_traffic, run_while_held  # noqa: E402

cla = pytest.importorskip("pyopencl.array")
from test_device_arrays_stl import need, on_device, same  # noqa: E402


def close(a, b, dtype, scale):
    """Equal up to the last bits of the device's log / expm1 against numpy's (``scale``: the
    data's magnitude, which the components' rounding follows)."""
    rtol = 1e-12 if np.dtype(dtype) == np.float64 else 2e-5
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    return np.allclose(a, b, rtol=rtol, atol=rtol * scale, equal_nan=True)


# ------------------------------------------------------------------ MSTL with Box-Cox
def boxcox_batch(dtype):
    t = np.arange(120.0)
    y = 5 + np.sin(2 * np.pi * t / 12) + 2 * np.cos(2 * np.pi * t / 24) + 0.01 * t
    Y = np.stack([y, 2 * y, y + 0.3 * np.random.default_rng(1).random(y.size)]).astype(dtype)
    Y[1, 50:60] = np.nan
    return Y


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mstl_boxcox_device(device, dtype):
    """A numeric lmbda: the transform is a kernel, zero host traffic, the numpy path's values
    (the device's log / expm1: within a few ulp), lmbda and the transformed observed kept."""
    need(device, dtype)
    Y = boxcox_batch(dtype)
    yd = on_device(device, Y)
    ref = clts.mstl(Y, (12, 24), lmbda=0.5, device=device)
    with host_traffic() as t:
        r = clts.mstl(yd, (12, 24), lmbda=0.5, device=device)
    assert t.total == 0, t.report()
    assert is_device_array(r.trend) and is_device_array(r.observed)
    assert r.lmbda == ref.lmbda == 0.5
    n = clts.to_numpy(r)
    scale = np.nanmax(np.abs(ref.observed))
    for k in ("trend", "resid", "weights", "observed"):
        assert close(getattr(n, k), getattr(ref, k), dtype, scale), k
    for p in ref.seasonal:
        assert close(n.seasonal[p], ref.seasonal[p], dtype, scale), p
    # lmbda 0 (statsmodels: none) is no transform; "auto" needs the host
    r0 = clts.mstl(yd, 12, lmbda=0, device=device)
    assert r0.observed is yd and r0.lmbda is None
    with pytest.raises(TypeError, match="lmbda"):
        clts.mstl(yd, 12, lmbda="auto", device=device)
    with pytest.raises(ValueError, match="lmbda"):
        clts.mstl(yd, 12, lmbda=np.inf, device=device)


# ------------------------------------------------------------------ aamp, p != 2
AAMP_FIELDS = ("P", "I", "left_P", "left_I", "right_P", "right_I")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_aamp_p_device(device, dtype, monkeypatch):
    """p = 1, 3 and inf, self-join (k 1 and 3, left / right) and AB-join, several row blocks,
    NaN windows: zero host traffic, the numpy path's bits."""
    need(device, dtype)
    aamp_mod = sys.modules["clts.mp.aamp"]
    monkeypatch.setattr(aamp_mod, "BLOCK_ROWS", 40)      # several blocks, a short last one
    rng = np.random.default_rng(3)
    T = np.cumsum(rng.standard_normal(150)).astype(dtype)
    T[70] = np.nan
    TB = np.cumsum(rng.standard_normal(90)).astype(dtype)
    Td, TBd = on_device(device, T), on_device(device, TB)
    prec = "double" if dtype == np.float64 else "single"
    for p, k, ab in ((1, 1, False), (3.0, 3, False), (np.inf, 2, True), (1.5, 1, True)):
        ref = clts.aamp(T, 12, TB if ab else None, p=p, k=k, precision=prec, device=device)
        with host_traffic() as t:
            r = clts.aamp(Td, 12, TBd if ab else None, p=p, k=k, device=device)
        assert t.total == 0, t.report()
        assert r.self_join == (not ab) and r.exclusion_zone == ref.exclusion_zone
        n = r.to_numpy()
        for key in AAMP_FIELDS if not ab else ("P", "I"):
            a, b = getattr(n, key), getattr(ref, key)
            if not device.fp64 and key.endswith("P"):
                b = b.astype(np.float32)
            assert same(a, b), (p, k, ab, key)
    with pytest.raises(TypeError, match="precision"):
        clts.aamp(Td, 12, p=1, precision="single" if dtype == np.float64 else "double",
                  device=device)
    with pytest.raises(TypeError, match="both"):
        clts.aamp(Td, 12, TB, p=1, device=device)


# ------------------------------------------------------------------ trend test variants
TREND_FIELDS = ("trend", "h", "p", "z", "tau", "s", "var_s", "slope", "intercept",
                "slope_low", "slope_high", "n", "status")
#: the variants whose host steps are numpy's operations one by one (the same bits but p); the
#: pre-whitening ones' lag-1 autocorrelation uses a BLAS dot on the host (last bits)
EXACT = ("multivariate", "regional", "correlated_multivariate", "correlated_seasonal",
         "partial")


def series_batch(rng, n=48):
    t = np.arange(float(n))
    y = np.stack([0.05 * t + rng.standard_normal(n), np.round(rng.standard_normal(n) * 2) / 2,
                  np.cumsum(rng.standard_normal(n)), -0.05 * t + np.sin(t), 3.0 + 0 * t,
                  t * np.nan, rng.standard_normal(n)])
    y[1, 5:12] = np.nan                       # a gap in a series with ties
    y[2, rng.random(n) < 0.3] = np.nan        # scattered
    y[5, :2] = 1.0                            # too few values
    y[6, 8:] = np.nan                         # 8 values (the whitening's short sums)
    return y


def multi_batch(rng, C, n=30, b=4):
    t = np.arange(float(n))
    y = 0.03 * t + rng.standard_normal((b, C, n))
    y[1] = np.round(y[1] * 2) / 2             # ties
    y[2, 0, rng.random(n) < 0.3] = np.nan     # one variable's steps missing
    y[3, :, 3:] = np.nan                      # too few complete steps
    return y


def same_fields(r, ref, exact):
    n = r.to_numpy()
    for k in TREND_FIELDS:
        a, b = np.asarray(getattr(n, k)), np.asarray(getattr(ref, k))
        assert a.dtype == b.dtype and a.shape == b.shape, k
        if exact and k != "p":
            assert same(a, b), k
        else:                 # p: the device's erf / erfc
            assert np.allclose(a, b, rtol=1e-12, atol=0, equal_nan=True), k
    assert n.diagnostics["n_too_few"] == ref.diagnostics["n_too_few"]


@pytest.mark.parametrize("variant", ["pre_whitening", "trend_free_pre_whitening",
                                     "correlated_seasonal", "multivariate", "regional",
                                     "correlated_multivariate", "partial"])
def test_trend_variants_device(device, variant):
    """The transform and multi-variable variants on device arrays: zero host traffic, the numpy
    path's values (bit for bit but p where the host steps are numpy's operations one by one),
    with ties, gaps, too few values, a constant series; the GPUs' interleaved layout too."""
    if not device.fp64:
        pytest.skip("the device's statistics are float32 without cl_khr_fp64")
    rng = np.random.default_rng(11)
    kw = dict(period=4) if variant == "correlated_seasonal" else {}
    if variant in ("multivariate", "regional", "correlated_multivariate", "partial"):
        ys = [multi_batch(rng, 2 if variant == "partial" else 3)]
        if variant == "correlated_multivariate":
            ys.append(multi_batch(rng, 12, n=12))    # 144 Gamma entries: numpy's split
            ys.append(multi_batch(rng, 40, n=8))     # 1,600: four levels of it
    else:
        ys = [series_batch(rng), np.cumsum(rng.standard_normal((2, 300)), axis=1),
              np.cumsum(rng.standard_normal((2, 3000)), axis=1)]
    for y in ys:
        yd = on_device(device, y)
        for layout in (dict(), dict(interleave=1, lanes=1)):
            ref = clts.trend_test(y, variant=variant, device=device, **layout, **kw)
            with host_traffic() as t:
                r = clts.trend_test(yd, variant=variant, device=device, **layout, **kw)
            assert t.total == 0, t.report()
            assert r.diagnostics.pending() == ["n_too_few"]
            same_fields(r, ref, variant in EXACT)
    one = ys[0][0]
    r = clts.trend_test(on_device(device, one), variant=variant, device=device, **kw)
    assert r.s.shape == ()
    assert clts.to_numpy(r).s == pytest.approx(
        clts.trend_test(one, variant=variant, device=device, **kw).s, nan_ok=True)


# ------------------------------------------------------------------ the GPUs' Plans
@pytest.mark.parametrize("name", ["h100", "mi100"])
def test_emulated_gpu_plans_rest(name):
    """Under the emulated H100 / MI100 (their Plans over pocl: the interleaved trend layout,
    the GPUs' mass plan): zero host traffic (mstl's Box-Cox, aamp p = 1, maamp p = 1, the
    correlated and pre-whitening trend variants), the numpy path's values there."""
    emu = gpus_over_pocl().get(name)
    if emu is None:
        pytest.skip("emulation runs on pocl")
    rng = np.random.default_rng(12)
    Y = boxcox_batch(np.float64)
    T = np.cumsum(rng.standard_normal(100))
    ym = multi_batch(rng, 3)
    ys = series_batch(rng)
    Tm = np.cumsum(rng.standard_normal((2, 60)), axis=1)
    yd, Td, ymd, ysd, Tmd = (on_device(emu, a) for a in (Y, T, ym, ys, Tm))
    with host_traffic() as t:
        m = clts.mstl(yd, (12, 24), lmbda=0.5, device=emu)
        a = clts.aamp(Td, 10, p=1, k=2, device=emu)
        c = clts.trend_test(ymd, variant="correlated_multivariate", device=emu)
        w = clts.trend_test(ysd, variant="trend_free_pre_whitening", device=emu)
        mp, mi = clts.mstump(Tmd, 8, normalize=False, p=1, device=emu)
        zp, zi = clts.mstump(Tmd, 8, include=[1], device=emu)
        st = clts.stumpi(Td, 10, device=emu)
        st.update(Td[:5])
    assert t.total == 0, t.report()
    st0 = clts.stumpi(T, 10, device=emu, host_points=0)
    st0.update(T[:5])
    assert same(st.P_.get(), st0.P_) and same(st.I_.get(), st0.I_)
    mp0, mi0 = clts.mstump(Tm, 8, normalize=False, p=1, device=emu)
    assert same(mp.get(), mp0) and same(mi.get(), mi0)
    zp0, zi0 = clts.mstump(Tm, 8, include=[1], device=emu)
    assert same(zp.get(), zp0) and same(zi.get(), zi0)
    ref = clts.mstl(Y, (12, 24), lmbda=0.5, device=emu)
    assert close(m.to_numpy().trend, ref.trend, np.float64, np.nanmax(np.abs(ref.observed)))
    aref = clts.aamp(T, 10, p=1, k=2, device=emu)
    for key in AAMP_FIELDS:
        assert same(getattr(a.to_numpy(), key), getattr(aref, key)), key
    same_fields(c, clts.trend_test(ym, variant="correlated_multivariate", device=emu), True)
    same_fields(w, clts.trend_test(ys, variant="trend_free_pre_whitening", device=emu), False)


# ------------------------------------------------------------------ mstump
def mstump_series(rng, d=3, n=120):
    """NaN, a constant stretch and a near-constant one (ill-conditioned windows: the exact
    rows and columns)."""
    T = np.cumsum(rng.standard_normal((d, n)), axis=1)
    T[1, 40] = np.nan
    T[0, 70:85] = 1.0
    T[2, 90:101] = 5 + 1e-9 * rng.standard_normal(11)
    return T


def test_mstump_device_arrays(device):
    """mstump of a device array (z-normalised, forced dimensions, discords, plain p = 2; float32
    arrays compute in single precision): zero host traffic, the numpy path's bits."""
    T = mstump_series(np.random.default_rng(13))
    for dtype, kw in ((np.float64, {}), (np.float64, dict(normalize=False)),
                      (np.float64, dict(include=[1], discords=True)),
                      (np.float32, dict(include=[2]))):
        if dtype == np.float64 and not device.fp64:
            continue
        x = T.astype(dtype)
        prec = "double" if dtype == np.float64 else "single"
        P0, I0 = clts.mstump(x, 10, precision=prec, device=device, **kw)
        xd = on_device(device, x)
        with host_traffic() as t:
            P, I = clts.mstump(xd, 10, device=device, **kw)
        assert t.total == 0, t.report()
        assert is_device_array(P) and is_device_array(I)
        P = P.get()
        assert same(I.get(), I0), (dtype, kw)
        assert same(P, P0 if device.fp64 else P0.astype(np.float32)), (dtype, kw)
    P, I = clts.mstump(on_device(device, T[0].astype(np.float32)), 10, device=device)
    P0, I0 = clts.mstump(T[0].astype(np.float32), 10, precision="single", device=device)
    assert P.shape == (1, 111) and same(I.get(), I0)
    with pytest.raises(ValueError, match="time_axis"):
        clts.mstump(on_device(device, T.astype(np.float32)), 10, time_axis=0, device=device)
    with pytest.raises(ValueError, match="m="):
        clts.mstump(on_device(device, T.astype(np.float32)), 200, device=device)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_maamp_p_device(device, dtype, monkeypatch):
    """mstump with normalize=False and p != 2 (maamp's) runs on the device: zero host traffic,
    the numpy path's bits, forced dimensions and discords, several row blocks, 3 and 9
    dimensions (the kernel's sorting network built for each)."""
    need(device, dtype)
    monkeypatch.setattr(sys.modules["clts.mp.mstump"], "PNORM_ELEMENTS", 3 * 80 * 30)
    rng = np.random.default_rng(17)
    T = np.cumsum(rng.standard_normal((3, 90)), axis=1).astype(dtype)
    T[2, 33] = np.nan
    prec = "double" if dtype == np.float64 else "single"
    T9 = np.cumsum(rng.standard_normal((9, 60)), axis=1).astype(dtype)    # a deeper network
    T9[4, 20] = np.inf
    for X, kw in ((T, dict(p=1)), (T, dict(p=np.inf, include=[1])),
                  (T, dict(p=3, discords=True)), (T9, dict(p=1, include=[5, 0])),
                  (T9, dict(p=3, discords=True, include=[2]))):
        P0, I0 = clts.mstump(X, 10, normalize=False, precision=prec, device=device, **kw)
        Xd = on_device(device, X)
        with host_traffic() as t:
            P, I = clts.mstump(Xd, 10, normalize=False, device=device, **kw)
        assert t.total == 0, t.report()
        P, I = P.get(), I.get()
        assert same(I, I0), kw
        assert same(P, P0 if device.fp64 else P0.astype(np.float32)), kw
    P, I = clts.mstump(on_device(device, T[0]), 10, normalize=False, p=1, device=device)
    P0, I0 = clts.mstump(T[0], 10, normalize=False, p=1, precision=prec, device=device)
    assert same(I.get(), I0) and P.shape == (1, 81)


STUMPI_BLOCKS = ((0, 1), (1, 6), (6, 7), (7, 22), (22, 40))


def stumpi_data(rng):
    T = np.cumsum(rng.standard_normal(150))
    T[60] = np.nan
    add = rng.standard_normal(40)
    add[7] = np.nan
    return T, add


def stumpi_ref(T, add, device, **kw):
    """The numpy path with every update a device block of distance profiles (host_points=0,
    blocks under 16 points: no join), the computation of the device state."""
    s = clts.stumpi(T, 12, device=device, host_points=0, lazy_points=1, **kw)
    for a, b in STUMPI_BLOCKS:
        for c in range(a, b, 8):
            s.update(add[c:min(b, c + 8)])
    return s


@pytest.mark.parametrize("dtype,dw", [(np.float64, 8), (np.float32, 8), (np.float64, 4)])
def test_stumpi_device_state(device, dtype, dw, monkeypatch):
    """stumpi started from a device array keeps its state on the device: updates with device
    points (slices at offsets, blocks of 1 to 15 points), egress or growing, k 1 and 3, plain
    p = 1: zero host traffic, device P_ / I_ / left_P_ / left_I_ / T_, the numpy path's bits
    (float32: its indices; distances within float32 rounding); a long update cut into blocks
    the same; numbers given to update are uploaded. The z-normalised blocks' sliding dot
    products carried over blocks and refreshed (every 5 points here) give the same lists,
    with 8 diagonals a work-item and with the 4 GPUs take in float64; the kept statistics'
    planes carried by one copy and (dw 4 here) widened, a copy a plane, every few points."""
    need(device, dtype)
    monkeypatch.setattr(sys.modules["clts.mp.stream_device"], "REFRESH", 5)
    monkeypatch.setattr(sys.modules["clts.mp.stream_device"], "DIAGONALS", dw)
    if dw == 4:
        monkeypatch.setattr(sys.modules["clts.mp.stream_device"], "plane_size", lambda l: l + 7)
    T, add = stumpi_data(np.random.default_rng(14))
    T, add = T.astype(dtype), add.astype(dtype)
    prec = "double" if dtype == np.float64 else "single"
    for kw in (dict(), dict(egress=False, k=3), dict(normalize=False, p=1)):
        s0 = stumpi_ref(T, add, device, precision=prec, **kw)
        Td, ad = on_device(device, T), on_device(device, add)
        s = clts.stumpi(Td, 12, device=device, lazy_points=1, **kw)
        with host_traffic() as t:
            for a, b in STUMPI_BLOCKS:
                s.update(ad[a:b])
            got = (s.P_, s.I_, s.left_P_, s.left_I_, s.T_)
        assert t.total == 0, t.report()
        assert all(is_device_array(x) for x in got)
        P, I, lP, lI, Tn = (x.get() for x in got)
        assert same(I, s0.I_) and same(lI, s0.left_I_), kw
        assert same(Tn, s0.T_.astype(dtype)), kw
        if dtype == np.float64:
            assert same(P, s0.P_) and same(lP, s0.left_P_), kw
        else:       # the float32 series' scaling on the device (numpy's path: from float64)
            assert np.allclose(P, s0.P_, rtol=1e-5, equal_nan=True), kw
            assert np.allclose(lP, s0.left_P_, rtol=1e-5, equal_nan=True), kw
    # one update of every point, cut into blocks of 3 rows: the same stream
    monkeypatch.setattr(sys.modules["clts.mp.stream_device"], "BLOCK_BYTES",
                        3 * 190 * np.dtype(dtype).itemsize)
    s = clts.stumpi(Td, 12, device=device, **kw)
    s.update(ad)
    assert same(s.I_.get(), s0.I_) and same(s.left_I_.get(), s0.left_I_)
    s.update(1.5)
    s0.update(1.5)
    assert same(s.I_.get(), s0.I_) and "(device)" in repr(s)
    with pytest.raises(TypeError, match="precision"):
        clts.stumpi(Td, 12, device=device, precision="single" if prec == "double" else "double")


@pytest.mark.parametrize("keep", [0, 3000, None])
def test_stumpi_device_kept_temporaries(device, keep, monkeypatch):
    """A device stream keeps its updates' temporaries (the statistics and dot products read
    from the last update, written to the other of two) within a budget: none kept, some kept
    and some fresh, and all kept give the numpy path's bits over one-point updates, blocks
    that grow the kept buffers, refreshes and reads between updates."""
    if not device.fp64:
        pytest.skip("float64 data")
    monkeypatch.setattr(sys.modules["clts.mp.stream_device"], "REFRESH", 6)
    rng = np.random.default_rng(21)
    T, add = np.cumsum(rng.standard_normal(120)), rng.standard_normal(40)
    cuts = (1, 2, 3, 9, 10, 11, 25, 26, 40)
    for egress in (True, False):
        s0 = clts.stumpi(T, 12, device=device, host_points=0, lazy_points=1, egress=egress)
        s = clts.stumpi(on_device(device, T), 12, device=device, lazy_points=1, egress=egress)
        if keep is not None:
            s._dstate._keep_most = keep
        ad = on_device(device, add)
        for a, b in zip((0,) + cuts[:-1], cuts):
            for c in range(a, b, 8):
                s0.update(add[c:min(b, c + 8)])
            s.update(ad[a:b])
            assert same(s.I_.get(), s0.I_) and same(s.P_.get(), s0.P_), (keep, egress, b)
        assert same(s.left_I_.get(), s0.left_I_) and same(s.left_P_.get(), s0.left_P_)
        kept = s._dstate._kept_bytes
        assert kept == 0 if keep == 0 else 0 < kept <= (keep or kept), kept


def test_stumpi_device_stream_budget(device, monkeypatch):
    """What a device stream keeps (kernel objects, buffers) counts against the device's
    recordings budget and goes back with the stream; with the budget full it launches the
    shared kernels with fresh buffers: the same bits."""
    import gc

    from clts.runtime import replay
    if not device.fp64:
        pytest.skip("float64 data")
    rng = np.random.default_rng(23)
    T, add = np.cumsum(rng.standard_normal(100)), rng.standard_normal(12)
    budget = device.state.constant("replay.budget", replay._Budget)
    gc.collect()
    before = budget.used
    s0 = clts.stumpi(T, 10, device=device, host_points=0, lazy_points=1)
    s = clts.stumpi(on_device(device, T), 10, device=device, lazy_points=1)
    ad = on_device(device, add)
    for i in range(6):
        s0.update(add[i:i + 1])
        s.update(ad[i:i + 1])
    held = s._dstate._held[0]
    assert held >= 5 * replay.KERNEL_BYTES and budget.used >= before + held
    monkeypatch.setattr(replay, "reserve_budget", lambda device, nbytes: False)
    full = clts.stumpi(on_device(device, T[:]), 10, device=device, lazy_points=1)
    for i in range(6):
        full.update(ad[i:i + 1])
    for i in range(6, 12):
        s0.update(add[i:i + 1])
        s.update(ad[i:i + 1])
        full.update(ad[i:i + 1])
    assert not any(full._dstate._launches.values()) and full._dstate._held[0] == 0
    for x in (s, full):
        assert same(x.I_.get(), s0.I_) and same(x.P_.get(), s0.P_)
        assert same(x.left_P_.get(), s0.left_P_) and same(x.T_.get(), s0.T_)
    used, held = budget.used, s._dstate._held[0]
    del s, full
    gc.collect()
    assert budget.used == used - held


def test_stumpi_device_state_near_matches(device, monkeypatch):
    """The device state's filter on what breaks sliding dot products: a 1e6 offset, exact and
    1e-9-perturbed repeats (distances near 0), constant plateaus, appended points that repeat
    earlier ones (constant new windows among them), refreshes (every 7 points here) and
    blocks of 1 to 35 points, k 1 and 3: the numpy path's bits."""
    if not device.fp64:
        pytest.skip("float64 data")
    monkeypatch.setattr(sys.modules["clts.mp.stream_device"], "REFRESH", 7)
    rng = np.random.default_rng(19)
    T = 1e6 + np.cumsum(rng.standard_normal(160))
    T[100:130] = T[20:50] + 1e-9 * rng.standard_normal(30)
    T[60:80] = T[60]
    add = np.concatenate([T[30:45], T[62:79], rng.standard_normal(20) + T[-1]])
    # a plateau whose constant windows arrive again (sqrt(m) beats old k-th neighbours)
    rng = np.random.default_rng(10)
    T2 = np.cumsum(rng.standard_normal(97))
    T2[15:37] = T2[15]
    add2 = np.concatenate([T2[6:46], rng.standard_normal(30) + T2[-1]])
    for T, add, m, k, cuts in ((T, add, 12, 1, (1, 2, 17, 52)), (T, add, 12, 3, (2, 17, 52)),
                               (T2, add2, 20, 3, (15, 36, 49, 52, 65, 70))):
        s0 = clts.stumpi(T, m, device=device, host_points=0, lazy_points=1, k=k)
        Td, ad = on_device(device, T), on_device(device, add)
        s = clts.stumpi(Td, m, device=device, lazy_points=1, k=k)
        for a, b in zip((0,) + cuts[:-1], cuts):
            for c in range(a, b, 8):
                s0.update(add[c:min(b, c + 8)])
            s.update(ad[a:b])
        assert same(s.I_.get(), s0.I_) and same(s.left_I_.get(), s0.left_I_), (m, k)
        assert same(s.P_.get(), s0.P_) and same(s.left_P_.get(), s0.left_P_), (m, k)
        assert m == 20 or np.min(s0.P_) < 1e-6


def test_trend_variants_device_float32_chunks_shapes(device):
    """float32 series in chunks of 3, a row slice at an offset, one test ([time] / [variables,
    time]: scalars as numpy input gives) and an empty batch, every variant: the numpy path's
    values, no host traffic."""
    if not device.fp64:
        pytest.skip("the device's statistics are float32 without cl_khr_fp64")
    rng = np.random.default_rng(15)
    for variant in ("pre_whitening", "trend_free_pre_whitening", "correlated_seasonal",
                    "multivariate", "regional", "correlated_multivariate", "partial"):
        kw = dict(period=4) if variant == "correlated_seasonal" else {}
        multi_axis = variant in ("multivariate", "regional", "correlated_multivariate",
                                 "partial")
        y = (multi_batch(rng, 2 if variant == "partial" else 3) if multi_axis
             else series_batch(rng)).astype(np.float32)
        exact = variant in EXACT
        yd = on_device(device, y)
        with clts.set_options(max_chunk=3), host_traffic() as t:
            r = clts.trend_test(yd, variant=variant, device=device, **kw)
            r1 = clts.trend_test(yd[1:], variant=variant, device=device, **kw)
            e = clts.trend_test(cla.empty(device.queue, (0,) + y.shape[1:], np.float32),
                                variant=variant, device=device, **kw)
        assert t.total == 0, t.report()
        same_fields(r, clts.trend_test(y, variant=variant, device=device, **kw), exact)
        same_fields(r1, clts.trend_test(y[1:], variant=variant, device=device, **kw), exact)
        assert e.to_numpy().s.shape == (0,)
        one = clts.trend_test(on_device(device, y[0]), variant=variant, device=device,
                              **kw).to_numpy()
        ref = clts.trend_test(y[0], variant=variant, device=device, **kw)
        assert type(one.s) is type(ref.s) and one.n == ref.n
        assert one.s == pytest.approx(ref.s, rel=1e-12, nan_ok=True)


def test_calls_return_while_the_queue_is_blocked_rest(device):
    """The device's queue held by a user event: mstl with lmbda, aamp with p = 1, the
    correlated / pre-whitening trend variants and mstump (z-normalised) on device arrays still
    return; the results are the numpy path's once it is released."""
    if "nvidia" in str(device.info.platform).lower():
        pytest.skip("NVIDIA's OpenCL (580, H200) segfaulted reading results after a user-event "
                    "barrier had held the queue: open, see docs/device-arrays.md")
    if not device.fp64:
        pytest.skip("float64 data")

    rng = np.random.default_rng(16)
    Y, T = boxcox_batch(np.float64), np.cumsum(rng.standard_normal(90))
    ym, ys = multi_batch(rng, 3), series_batch(rng)
    args = dict(m=(lambda y: clts.mstl(y, (12, 24), lmbda=0.5, device=device), Y),
                a=(lambda y: clts.aamp(y, 10, p=1, device=device), T),
                c=(lambda y: clts.trend_test(y, variant="correlated_multivariate",
                                             device=device), ym),
                w=(lambda y: clts.trend_test(y, variant="pre_whitening", device=device), ys),
                z=(lambda y: clts.mstump(y, 10, device=device), mstump_series(rng)))
    want = {k: f(x) for k, (f, x) in args.items()}
    dev_in = {k: on_device(device, x) for k, (_, x) in args.items()}
    for k, (f, _) in args.items():       # programs built outside
        f(dev_in[k])
    device.queue.finish()
    got = run_while_held(device, lambda: {k: f(dev_in[k]) for k, (f, _) in args.items()})
    out = clts.to_numpy(got)
    assert close(out["m"].trend, want["m"].trend, np.float64, np.nanmax(np.abs(Y)))
    assert same(out["a"].P, want["a"].P) and same(out["a"].I, want["a"].I)
    assert same(out["c"].s, want["c"].s) and same(out["w"].n, want["w"].n)
    assert same(out["z"][0], want["z"][0]) and same(out["z"][1], want["z"][1])


def test_threads_rest(device):
    """The new device-array calls from several threads at once (one device queue; mstump
    z-normalised and a device stumpi too): each thread's results are its serial ones."""
    from concurrency import run_in_threads
    if not device.fp64:
        pytest.skip("float64 data")
    rng = np.random.default_rng(18)
    Ts = [on_device(device, np.cumsum(rng.standard_normal(80))) for _ in range(4)]
    variants = ("correlated_multivariate", "multivariate", "regional", "partial")
    ys = [on_device(device, multi_batch(rng, 2 if v == "partial" else 3)) for v in variants]
    Ms = [on_device(device, np.cumsum(rng.standard_normal((2, 50)), axis=1)) for _ in range(4)]

    def work(i):
        a = clts.aamp(Ts[i], 8, p=1 + i % 2, device=device)
        t = clts.trend_test(ys[i], variant=variants[i], device=device)
        w = clts.trend_test(ys[i][0], variant="pre_whitening", device=device)
        mp = clts.mstump(Ms[i], 6, normalize=False, p=1, device=device)
        zp = clts.mstump(Ms[i], 6, include=[i % 2], device=device)
        st = clts.stumpi(Ts[i], 8, device=device)
        st.update(Ts[(i + 1) % 4][:5])
        return clts.to_numpy((a, t, w, mp, zp, st.P_, st.I_))
    serial = [work(i) for i in range(4)]
    got = run_in_threads(work, 4)
    for (a, t, w, mp, *rest), (a0, t0, w0, mp0, *rest0) in zip(got, serial):
        assert same(a.P, a0.P) and same(a.I, a0.I)
        assert same(t.s, t0.s) and same(t.var_s, t0.var_s) and same(w.n, w0.n)
        assert same(mp[0], mp0[0]) and same(mp[1], mp0[1])
        zp, sp, si = rest
        zp0, sp0, si0 = rest0
        assert same(zp[0], zp0[0]) and same(zp[1], zp0[1]) and same(sp, sp0) and same(si, si0)
