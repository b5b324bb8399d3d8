"""clts.stl against statsmodels (complete data) and the numpy reference (missing data), every
LOESS version forced, both dtypes, every device."""
from __future__ import annotations

import numpy as np
import pytest

import clts
from clts.stl import reference as ref

import references

statsmodels = pytest.importorskip("statsmodels.tsa.seasonal")
STL = statsmodels.STL

VERSIONS = ("outer", "intragroup", "flat")


def series(rng, batch, n, period, outliers=False):
    t = np.arange(n)
    y = (3 * np.sin(2 * np.pi * t / period) + np.cos(4 * np.pi * t / period) + 0.01 * t
         + rng.normal(size=(batch, n)) + rng.normal(size=(batch, 1)) * 5)
    if outliers:
        idx = rng.random(y.shape) < 0.04
        y[idx] += rng.normal(size=idx.sum()) * 30
    return y


def err(a, b, y):
    scale = np.nanmax(np.ptp(np.nan_to_num(y), axis=-1))
    d = np.abs(np.asarray(a, np.float64) - b)
    assert np.array_equal(np.isnan(a), np.isnan(b)), "NaN patterns differ"
    return float(np.nanmax(d) / scale) if np.isfinite(d).any() else 0.0


def sm_fit(y, period, **kw):
    """statsmodels' STL of each row of ``y``, once per input in a test process."""
    return references.once(_sm_fit, y, period, **kw)


def _sm_fit(y, period, **kw):
    inner, outer = kw.pop("inner_iter", None), kw.pop("outer_iter", None)
    out = [STL(row, period, **kw).fit(inner_iter=inner, outer_iter=outer) for row in y]
    return (np.array([o.seasonal for o in out]), np.array([o.trend for o in out]),
            np.array([o.resid for o in out]), np.array([o.weights for o in out]))


CASES = [  # (period, n, kwargs)
    (12, 24, dict()),
    (12, 100, dict(seasonal_jump=3, trend_jump=4, low_pass_jump=3)),
    (24, 530, dict(seasonal=49, trend=261, low_pass=169, seasonal_jump=5, trend_jump=27,
                   low_pass_jump=17)),
    (7, 151, dict(seasonal_deg=0, trend_deg=0, low_pass_deg=0, seasonal_jump=2, trend_jump=9)),
    (4, 37, dict(seasonal=3, trend_deg=0, trend_jump=30, low_pass_jump=2)),
    (12, 203, dict(robust=True)),
    (23, 300, dict(seasonal=25, trend=39, low_pass=25, seasonal_jump=3, trend_jump=4,
                   low_pass_jump=3, robust=True, outer_iter=3)),
    (52, 400, dict(seasonal=13, seasonal_deg=0, low_pass_deg=0, trend_jump=7, robust=True,
                   inner_iter=1, outer_iter=2)),
    (365, 730, dict(trend_jump=37, low_pass_jump=37, seasonal_jump=2)),
]


@pytest.mark.parametrize("period,n,kw", CASES, ids=[f"p{c[0]}-n{c[1]}-{i}"
                                                   for i, c in enumerate(CASES)])
def test_matches_statsmodels(device, period, n, kw):
    rng = np.random.default_rng(period * 1000 + n)
    y = series(rng, 3, n, period, outliers=kw.get("robust", False))
    r = clts.stl(y, period, device=device, **kw)
    s, t, res, w = sm_fit(y, period, **kw)
    assert err(r.seasonal, s, y) < 1e-9
    assert err(r.trend, t, y) < 1e-9
    assert err(r.resid, res, y) < 1e-9
    assert np.abs(r.weights - w).max() < 1e-9
    assert r.diagnostics["n_failed"] == 0


def test_long_series_statsmodels(device):
    rng = np.random.default_rng(5)
    y = series(rng, 1, 100_000, 24)[0]
    kw = dict(seasonal=7, seasonal_jump=2, trend_jump=5, low_pass_jump=3, inner_iter=2)
    r = clts.stl(y, 24, device=device, **kw)
    s, t, _, _ = sm_fit(y[None], 24, **kw)
    assert err(r.seasonal, s[0], y) < 1e-9
    assert err(r.trend, t[0], y) < 1e-9


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("frac", [0.0, 0.3, 0.6, 0.9])
def test_missing_vs_reference(device, version, frac):
    """NaN fractions 0-90 % (series long enough that most survive 90 %: values are compared),
    a gap longer than a period, and one series with a value in every cycle-subseries but fewer
    than two periods' worth in all (too few values: NaN, counted). The versions' settings are
    test_versions_agree's at degree 1 in float64 (outer at 8 lanes, intragroup at 16, flat at
    8): the same programs."""
    rng = np.random.default_rng(int(frac * 10) + 7)
    y = series(rng, 5, 600, 12, outliers=True)
    y[rng.random(y.shape) < frac] = np.nan
    y[1, 30:50] = np.nan  # a gap longer than a period
    y[4] = np.nan
    y[4, 100:118] = 1.0 + rng.standard_normal(18)   # 18 valid values < 2 periods
    kw = dict(seasonal_jump=2, trend_jump=3, low_pass_jump=2, robust=True, outer_iter=2)
    r = clts.stl(y, 12, device=device, version=version, lanes=8, wg=16, chunk=8, **kw)
    s, t, res, w = references.stl(y, 12, **kw)
    assert err(r.seasonal, s, y) < 1e-9
    assert err(r.trend, t, y) < 1e-9
    assert np.array_equal(np.isnan(r.resid), np.isnan(res))
    assert np.array_equal(np.isnan(r.resid), np.isnan(y) | r.diagnostics["failed"][:, None])
    assert np.nanmax(np.abs(r.weights - w)) < 1e-9
    dead = [any(np.isnan(row[j::12]).all() for j in range(12)) or np.isfinite(row).sum() < 24
            for row in y]
    assert dead[4] and r.diagnostics["n_failed"] == sum(dead)
    assert np.array_equal(r.diagnostics["failed"], dead)
    ok = ~r.diagnostics["failed"]
    assert ok.sum() >= 3                    # values were compared, not only NaN patterns
    assert np.isfinite(r.seasonal[ok]).all() and np.isfinite(r.trend[ok]).all()


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize("deg", [0, 1, 2])
def test_versions_agree(device, dtype, tol, deg):
    """Every LOESS version forced (outer at 1, 4 or 8 and 16 lanes, intragroup, flat) agrees
    with the outer version at one lane, and that with the reference, at each degree in both
    dtypes, robust, with missing values. The second intragroup and flat settings (a work-group
    wider than the trend's window, longer chunks, and the interpolation split over items) change
    no degree-dependent code: they run at one degree per dtype (degree 2 in float64, degree 1
    in float32), not at all six (each is a program per degree, dtype and use of weights). The
    16 lanes' names (.sa-.sf, the moments each degree adds) are the same in both dtypes: every
    degree in float64, degree 0 in float32."""
    rng = np.random.default_rng(deg + 11)
    y = series(rng, 5, 96, 8, outliers=True)
    y[rng.random(y.shape) < 0.2] = np.nan
    kw = dict(seasonal_deg=deg, trend_deg=deg, low_pass_deg=deg, seasonal_jump=2,
              trend_jump=3, robust=True, outer_iter=2)
    if deg == 2 and dtype == np.float32:
        kw.update(low_pass_deg=1)
        # robust degree-2 fits on few effective points are ill-conditioned: float32 rounding
        # moves them by up to percent (documented); check degree 2 in float32 without robustness
        kw.update(robust=False, outer_iter=0)
    y = y.astype(dtype)
    # the outer version at 1 lane (scalar), 16 (the vector code's lane names .sa-.sf) and one
    # of 4 / 8, alternating over (deg, dtype) so that each runs at every degree: every lane
    # width costs pocl ~2 s of builds per case
    mid = 4 if (deg + (dtype == np.float32)) % 2 == 0 else 8
    forced = [("outer", {"lanes": 1}), ("outer", {"lanes": mid}),
              ("intragroup", {"wg": 16}), ("flat", {"chunk": 8})]
    if dtype == np.float64 or deg == 0:
        forced.append(("outer", {"lanes": 16, "interp_per_item": 1}))
    if (deg, dtype) in ((2, np.float64), (1, np.float32)):
        forced += [("intragroup", {"wg": 64, "interp_per_item": 2}),
                   ("flat", {"chunk": 64, "interp_per_item": 1})]
    outs = [clts.stl(y, 8, device=device, version=v, **lp, **kw)
            for v, lp in forced]
    if deg == 2 and dtype == np.float64:
        tol = 1e-10  # the quadratic's normal equations lose a few more digits
    for o, (v, _) in zip(outs, forced):       # forcing took effect for every smoother
        assert set(o.diagnostics["loess_versions"].values()) == {v}
    for o in outs[1:]:
        assert err(o.seasonal, outs[0].seasonal, y) < tol
        assert err(o.trend, outs[0].trend, y) < tol
    s, t, _, _ = references.stl(y.astype(np.float64), 8, **kw)
    rtol = 1e-9 if dtype == np.float64 else 1e-4
    assert err(outs[0].seasonal, s, y) < rtol
    assert err(outs[0].trend, t, y) < rtol


def test_float32_complete(device):
    rng = np.random.default_rng(3)
    y = series(rng, 3, 200, 12)
    kw = dict(seasonal_jump=3, trend_jump=4, low_pass_jump=3)
    r = clts.stl(y.astype(np.float32), 12, device=device, **kw)
    assert r.seasonal.dtype == np.float32
    s, t, _, _ = sm_fit(y, 12, **kw)
    assert err(r.seasonal, s, y) < 1e-5
    assert err(r.trend, t, y) < 1e-5


def test_co2(device):
    from statsmodels.datasets import co2
    data = co2.load_pandas().data["co2"].to_numpy()
    assert np.isnan(data).any()
    filled = data.copy()
    idx = np.flatnonzero(np.isnan(filled))
    good = np.flatnonzero(~np.isnan(filled))
    filled[idx] = np.interp(idx, good, data[good])
    kw = dict(seasonal=7, seasonal_jump=2, trend_jump=8, low_pass_jump=6)
    r = clts.stl(filled, 52, device=device, **kw)
    s, t, _, _ = sm_fit(filled[None], 52, **kw)
    assert err(r.seasonal, s[0], filled) < 1e-9
    assert err(r.trend, t[0], filled) < 1e-9
    r2 = clts.stl(data[:520], 52, device=device, **kw)
    s2, t2, res2, _ = references.stl(data[:520], 52, **kw)
    assert err(r2.seasonal, s2, data[:520]) < 1e-9
    assert err(r2.trend, t2, data[:520]) < 1e-9
    assert np.array_equal(np.isnan(r2.resid), np.isnan(data[:520]))


def test_shapes_trend_slope_and_hastl_helper(device):
    rng = np.random.default_rng(9)
    y = series(rng, 2, 48, 12)
    r1 = clts.stl(y[0], 12, device=device)
    r2 = clts.stl(y, 12, device=device)
    assert r1.seasonal.shape == (48,) and r2.seasonal.shape == (2, 48)
    assert np.allclose(r1.trend, r2.trend[0], atol=1e-12)
    slope = r2.trend_slope()
    assert np.allclose(slope, [np.polyfit(np.arange(48), t, 1)[0] for t in r2.trend])
    s, t, res = clts.stl_hastl(y, 12, 7, 23, 13, 1, 1, 1, 2, 3, 2, device=device)
    r3 = clts.stl(y, 12, seasonal=7, trend=23, low_pass=13, seasonal_jump=2, trend_jump=3,
                  low_pass_jump=2, device=device)
    assert np.allclose(s, r3.seasonal) and np.allclose(res, r3.resid)
    _, th, _ = clts.stl_hastl(y, 12, 7, 23, 13, 1, 1, 1, 2, 3, 2, device=device,
                              interpolation="hermite")
    rh = clts.stl(y, 12, seasonal=7, trend=23, low_pass=13, seasonal_jump=2, trend_jump=3,
                  low_pass_jump=2, device=device, interpolation="hermite")
    assert np.array_equal(th, rh.trend) and not np.allclose(th, r3.trend, rtol=0, atol=1e-9)


def test_r_defaults(device):
    """R's stats::stl defaults, written out from its documentation (period 12, s.window 13):
    t.window = nextodd(ceiling(1.5 * 12 / (1 - 1.5 / 13))) = 21, l.window = nextodd(12) = 13,
    s.degree 0, t.degree 1, l.degree = t.degree, jumps ceiling(window / 10) = 2, 3, 2,
    inner 2 / outer 0, robust: inner 1 / outer 15."""
    rng = np.random.default_rng(2)
    y = series(rng, 1, 120, 12)[0]
    for robust, inner, outer in ((False, 2, 0), (True, 1, 15)):
        r = clts.stl(y, 12, seasonal=13, robust=robust, r_defaults=True, device=device)
        p = r.diagnostics["params"]
        want = dict(trend=21, low_pass=13, seasonal_deg=0, trend_deg=1, low_pass_deg=1,
                    seasonal_jump=2, trend_jump=3, low_pass_jump=2, inner_iter=inner,
                    outer_iter=outer)
        assert {k: p[k] for k in want} == want
        s, t, _, _ = references.stl(y, 12, seasonal=13, robust=robust, **want)
        assert err(r.seasonal, s, y) < 1e-9 and err(r.trend, t, y) < 1e-9
    r = clts.stl(y, 12, seasonal=13, trend_deg=0, r_defaults=True, device=device)
    assert r.diagnostics["params"]["low_pass_deg"] == 0      # l.degree follows t.degree


@pytest.mark.parametrize("bad,msg", [
    (dict(seasonal=8), "seasonal must be an odd"), (dict(trend=11), "trend > period"),
    (dict(trend=12), "trend must be an odd"), (dict(low_pass=12), "low_pass must be an odd"),
    (dict(seasonal_deg=3), "seasonal_deg must be 0, 1 or 2"),
    (dict(trend_jump=0), "trend_jump"), (dict(version="fast"), "version must be"),
    (dict(period=1), "period must be"), (dict(inner_iter=0), "inner_iter"),
    (dict(version="intragroup", wg=48), "power of two"),
    (dict(version="flat", chunk=0), "chunk.*must be >= 1"),
])
def test_validation(bad, msg):
    y = np.zeros(48)
    kw = dict(period=12)
    kw.update(bad)
    with pytest.raises(ValueError, match=msg):
        clts.stl(y, **kw)


def test_bad_inputs():
    with pytest.raises(ValueError, match="inf"):
        clts.stl(np.r_[np.zeros(47), np.inf], 12)
    with pytest.raises(TypeError):
        clts.stl(np.zeros(48, complex), 12)
    with pytest.raises(ValueError, match="two periods"):
        clts.stl(np.zeros(20), 12)
    with pytest.raises(ValueError, match="time axis"):
        clts.stl(np.float64(1.0), 12)
    # more batch axes than one are batch axes (time last by default)
    assert clts.stl(np.zeros((2, 2, 48)), 12).trend.shape == (2, 2, 48)


@pytest.mark.oclgrind
@pytest.mark.parametrize("version,lanes,missing,ipw,interp", [
    ("outer", 1, True, 0, "linear"), ("outer", 4, True, 1, "hermite"),
    ("outer", 4, False, 0, "hermite"), ("intragroup", 1, True, 1, "hermite"),
    ("flat", 1, True, 0, "linear"), ("flat", 1, True, 0, "hermite")])
def test_tiny_oclgrind(device, version, lanes, missing, ipw, interp):
    rng = np.random.default_rng(1)
    y = series(rng, 2, 16, 4)
    if missing:
        y[0, 5] = np.nan
    kw = dict(seasonal=3, trend=7, low_pass=5, seasonal_jump=2, trend_jump=2, inner_iter=1,
              outer_iter=1, interpolation=interp)
    tunables = {"wg": 8, "chunk": 4, "lanes": lanes, "interp_per_item": ipw}
    r = clts.stl(y, 4, device=device, version=version, **tunables, **kw)
    s, t, _, _ = references.stl(y, 4, **kw)
    tol = 1e-9 if device.fp64 else 1e-4
    assert err(r.seasonal, s, y) < tol
    assert err(r.trend, t, y) < tol


def test_chunked_batch(device, monkeypatch):
    rng = np.random.default_rng(4)
    y = series(rng, 7, 60, 6)
    y[2, 10:14] = np.nan
    kw = dict(seasonal_jump=2, trend_jump=3, robust=True, outer_iter=1)
    whole = clts.stl(y, 6, device=device, **kw)
    clts.set_options(max_chunk=3)
    parts = clts.stl(y, 6, device=device, **kw)
    np.testing.assert_allclose(parts.seasonal, whole.seasonal, rtol=0, atol=1e-12)
    np.testing.assert_allclose(parts.trend, whole.trend, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(parts.weights, whole.weights)


@pytest.mark.parametrize("mix", [
    (("intragroup", 1), ("outer", 8), ("flat", 1)),
    (("outer", 4), ("flat", 1), ("outer", 8)),
    (("outer", 8), ("outer", 2), ("intragroup", 1)),
])
def test_mixed_versions(device, monkeypatch, mix):
    """Each smoother with its own version and lanes (as a tuned profile's auto may choose):
    the layouts between kernels (interleaved by each consumer's lanes) must still agree."""
    from clts.stl import runner
    from clts.stl.plan import LoessChoice, Plan

    def plan(dev, problem, **overrides):
        c = [LoessChoice(v, wg=16, chunk=8, lanes=lanes, table=True) for v, lanes in mix]
        return Plan(problem=problem, seasonal=c[0], low_pass=c[1], trend=c[2], interp_per_item=0)
    monkeypatch.setattr(runner, "make_plan", plan)     # (the Plan cache's key names it)
    rng = np.random.default_rng(21)
    y = series(rng, 11, 90, 9, outliers=True)
    y[rng.random(y.shape) < 0.15] = np.nan
    kw = dict(seasonal_jump=2, trend_jump=3, low_pass_jump=2, robust=True, outer_iter=1)
    r = clts.stl(y, 9, device=device, **kw)
    s, t, _, w = references.stl(y, 9, **kw)
    tol = 1e-9 if device.fp64 else 1e-4
    assert err(r.seasonal, s, y) < tol
    assert err(r.trend, t, y) < tol
    assert np.nanmax(np.abs(r.weights - w)) < tol


@pytest.mark.oclgrind
@pytest.mark.parametrize("complete,wg,planes", [(False, 0, False), (True, 0, False),
                                                (False, 16, True), (False, (64, 16), True),
                                                (True, 0, True)])
def test_nns_kernel_vs_reference(device, complete, wg, planes):
    """The NNS kernel (binary search + interval growth) against reference.nearest_window on
    random NaN patterns: window ends, h, and the fallback point of every fit point; the packed
    positions by a work-item per segment (wg 0) or a work-group of wg (a pair: the program
    built for groups up to the first, launched with the second), the windows as four ints per
    fit point or (planes: the GPU mapping) four planes."""
    import pyopencl as cl
    import pyopencl.array as cla
    from clts.stl.plan import fit_table
    rng = np.random.default_rng(33 + complete)
    dtype = np.float64 if device.fp64 else np.float32
    real = "double" if device.fp64 else "float"
    B, seg = 6, np.array([40, 39, 17, 3, 1], np.int32)
    S, nmax = len(seg), int(seg.max())
    M = rng.normal(size=(B, S, nmax)).astype(dtype)
    wg, wg_run = wg if isinstance(wg, tuple) else (wg, wg)
    if not complete:
        for b in range(B):
            M[b][rng.random((S, nmax)) < [0, 0.3, 0.6, 0.9, 0.97, 0.5][b]] = np.nan
        M[2, 0, 5:30] = np.nan          # a long gap
        M[3, 2] = np.nan                # a segment without valid points
        M[4, 4, 0] = 1.0                # a single valid point
    for q, jump in ((7, 1), (13, 3), (45, 4), (1, 2)):
        tabs = [fit_table(int(n), q, jump) for n in seg]
        tabs = [(fp + [0, int(n) + 1], an + [0, int(n) + 1]) for (fp, an), n in zip(tabs, seg)]
        NF = max(len(t[0]) for t in tabs)
        fps = np.full((S, NF), -1, np.int32)
        ans = np.full((S, NF), -1, np.int32)
        for j, (fp, an) in enumerate(tabs):
            fps[j, :len(fp)], ans[j, :len(an)] = fp, an
        prg = device.program("stl/nns.cl.mako", real=real, complete=complete, wg=wg,
                             planes=planes)
        q_ = device.queue
        dM = cla.to_device(q_, M)
        dseg, dfp, dan = (cla.to_device(q_, a) for a in (seg, fps, ans))
        # host-initialised buffers and fresh kernel objects (Oclgrind's shadow memory)
        stats = cla.to_device(q_, np.zeros((B * S, 2), np.int32))
        pos = cla.to_device(q_, np.zeros((B * S, nmax), np.int32))
        nns = cla.to_device(q_, np.zeros((B * S * NF, 4), np.int32))
        i32 = np.int32
        k_stats = cl.Kernel(prg.cl_program, "stl_stats_group" if wg else "stl_stats")
        k_nns = cl.Kernel(prg.cl_program, "stl_nns")
        k_stats(q_, (B * S * max(wg_run, 1),), (wg_run,) if wg else None, dM.data, i32(S * nmax), i32(nmax), dseg.data, i32(S), i32(B),
                i32(nmax), stats.data, pos.data)
        k_nns(q_, (B * S * NF,), None, dseg.data, dfp.data, dan.data, i32(NF), i32(S), i32(B),
              i32(q), i32(nmax), stats.data, pos.data, nns.data)
        st, out = stats.get(), nns.get()
        out = (out.reshape(4, B, S, NF).transpose(1, 2, 3, 0) if planes
               else out.reshape(B, S, NF, 4))
        for b in range(B):
            for s in range(S):
                n = seg[s]
                vpos = np.flatnonzero(~np.isnan(M[b, s, :n])) + 1
                assert st[b * S + s, 0] == len(vpos)
                if len(vpos) == 0:
                    continue
                assert st[b * S + s, 1] == vpos[-1] - vpos[0]
                for f in range(NF):
                    xf, a = fps[s, f], ans[s, f]
                    if xf < 0:
                        continue
                    lo, hi = ref.nearest_window(vpos, int(a), min(q, len(vpos)))
                    h = max(xf - lo, hi - xf) + (max(q - len(vpos), 0)) // 2
                    fb = ref.nearest_valid(vpos, int(xf))
                    assert tuple(out[b, s, f]) == (lo, hi, h, fb), (b, s, f, q, jump)


@pytest.mark.parametrize("version,lanes", [("outer", 1), ("outer", 8), ("intragroup", 1),
                                           ("flat", 1)])
@pytest.mark.parametrize("deg", [0, 1, 2])
def test_hermite_vs_reference(device, version, lanes, deg):
    """interpolation="hermite" (Serykh et al.'s cubic Hermite between jumped fits, slopes from the
    local fits) against the reference, with missing values, robustness and unequal jumps."""
    rng = np.random.default_rng(40 + deg)
    y = series(rng, 5, 110, 10, outliers=True)
    y[rng.random(y.shape) < 0.2] = np.nan
    y[2, 40:55] = np.nan
    kw = dict(seasonal_deg=deg, trend_deg=deg, low_pass_deg=min(deg, 1), seasonal_jump=3,
              trend_jump=4, low_pass_jump=5, robust=True, outer_iter=2,
              interpolation="hermite")
    dtype = np.float64 if device.fp64 else np.float32
    r = clts.stl(y.astype(dtype), 10, device=device, version=version,
                 lanes=lanes, **kw)
    s, t, _, w = references.stl(y, 10, **kw)
    tol = (1e-10 if deg == 2 else 1e-9) if dtype == np.float64 else 1e-4
    assert err(r.seasonal, s, y) < tol
    assert err(r.trend, t, y) < tol
    assert np.nanmax(np.abs(r.weights - w)) < tol
    lin = references.stl(y, 10, **dict(kw, interpolation="linear"))
    assert err(lin[1], t, y) > 1e-6  # hermite is not linear


def test_hermite_complete_and_no_jump(device):
    rng = np.random.default_rng(8)
    y = series(rng, 3, 150, 12)
    kw = dict(seasonal_jump=2, trend_jump=7, low_pass_jump=3)
    r = clts.stl(y, 12, device=device, interpolation="hermite", **kw)
    s, t, _, _ = references.stl(y, 12, interpolation="hermite", **kw)
    tol = 1e-9 if device.fp64 else 1e-4
    assert err(r.seasonal, s, y) < tol and err(r.trend, t, y) < tol
    # without jumps there is nothing to interpolate: both methods are statsmodels' STL
    a = clts.stl(y, 12, device=device, interpolation="hermite")
    b = clts.stl(y, 12, device=device, fused=0)    # the same kernels (GPU profiles fuse linear)
    assert err(a.trend, b.trend, y) == 0 and err(a.seasonal, b.seasonal, y) == 0
    with pytest.raises(ValueError, match="interpolation"):
        clts.stl(y, 12, interpolation="cubic")


def test_function_and_package():
    """clts.stl is the function; the package's modules stay importable by their full path,
    whether or not they were imported before (numpy-ecosystem convention, no module tricks)."""
    import importlib
    import subprocess
    import sys
    import types
    from clts.stl import api, reference
    from clts.stl import stl as fn
    assert isinstance(clts.stl, types.FunctionType) and clts.stl is fn is api.stl
    assert reference.stl is ref.stl
    assert isinstance(sys.modules["clts.stl"], types.ModuleType)
    assert importlib.import_module("clts.stl.params").resolve_parameters
    code = ("import clts, importlib; importlib.import_module('clts.stl.tuning'); "
            "from clts.stl import reference; import clts.stl.plan; "
            "assert callable(clts.stl) and reference.stl")
    subprocess.run([sys.executable, "-c", code], check=True)
    y = np.sin(np.arange(48) * 2 * np.pi / 12) + 0.1 * np.arange(48)
    a, b = clts.stl(y, 12), fn(y, 12)
    assert np.array_equal(a.trend, b.trend) and np.array_equal(a.seasonal, b.seasonal)


@pytest.mark.parametrize("deg", [0, 1, 2])
def test_weight_table_complete(device, deg):
    """Complete data, vector outer LOESS: tricube weights from the per-call table (default)
    equal the inline computation and the scalar version, robust and not; at 8 lanes at each
    degree, at 4 lanes (the same code at another vector width, a program per degree) at
    degree 2 only."""
    rng = np.random.default_rng(50 + deg)
    y = series(rng, 9, 120, 12, outliers=True)
    kw = dict(seasonal_deg=deg, trend_deg=deg, low_pass_deg=min(deg, 1), seasonal_jump=2,
              trend_jump=3, robust=True, outer_iter=2)
    runs = [clts.stl(y, 12, device=device, version="outer", **lp, **kw)
            for lp in ({"lanes": 8}, {"lanes": 8, "table": False}, {"lanes": 1},
                       {"lanes": 4, "table": True})[:4 if deg == 2 else 3]]
    tol = 1e-10 if deg == 2 else 1e-12
    for r in runs[1:]:
        assert err(r.seasonal, runs[0].seasonal, y) < tol
        assert err(r.trend, runs[0].trend, y) < tol
    if deg < 2:
        s, t, _, _ = sm_fit(y, 12, **kw)
        assert err(runs[0].seasonal, s, y) < 1e-9 and err(runs[0].trend, t, y) < 1e-9


@pytest.mark.parametrize("version,interp,gaps", [("outer", "linear", False),
                                                 ("flat", "hermite", True),
                                                 ("intragroup", "linear", True)])
def test_prebuild_builds_what_run_asks_for(device, version, interp, gaps, monkeypatch):
    """A first call builds its programs from several threads before the kernels run: run()
    itself then builds nothing (robust, jumps, degree 2: every program kind)."""
    import importlib
    from clts.runtime import devices as devmod, programs
    api = importlib.import_module("clts.stl.api")
    run = api._Runner.run

    def checked(self, *a, **k):
        n = programs.stats["builds"]
        out = run(self, *a, **k)
        assert programs.stats["builds"] == n, "run() built a program prebuild missed"
        return out
    monkeypatch.setattr(api._Runner, "run", checked)
    y = np.random.default_rng(3).random((9, 96))
    if gaps:
        y[:, 7] = np.nan
    fresh = devmod.Device(device.info)              # nothing built yet
    r = clts.stl(y, 12, robust=True, seasonal_jump=2, trend_jump=3, seasonal_deg=2,
                 interpolation=interp, version=version, device=fresh)
    monkeypatch.setattr(api._Runner, "run", run)
    again = clts.stl(y, 12, robust=True, seasonal_jump=2, trend_jump=3, seasonal_deg=2,
                     interpolation=interp, version=version, device=device)
    np.testing.assert_array_equal(r.trend, again.trend)
