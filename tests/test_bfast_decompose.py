"""clts.bfast_decompose against R's bfast() (bfast 1.7.2 with strucchange 1.5-3): R's example
series (harvest, simts, ndvi with its gaps filled) and synthetic NDVI-like series, with the
seasonal models "harmonic", "dummy" and "none", one and more iterations, BIC and fixed numbers
of breaks. Fixtures: tests/data/bfast_decompose_*.csv (bench/bfast_decompose_fixtures.R).

Checked against R: the breakpoints of trend and season, the number of iterations, the fitted
trend and season and the magnitudes. Tolerance 1e-9 of the series' range: the fixtures hold 13
digits; clts fits by normal equations on a centred time and R by QR on the decimal years
(measured differences 1e-11 on the trend, 1e-12 on the season).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import clts

pd = pytest.importorskip("pandas")
DATA = Path(__file__).resolve().parent / "data"


def _fp64(device):
    if not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")


def _cases():
    cs = pd.read_csv(DATA / "bfast_decompose_cases.csv", keep_default_na=False, na_values=["NA"])
    ser = pd.read_csv(DATA / "bfast_decompose_series.csv")
    return [(row, ser[ser.case == row.case]) for _, row in cs.iterrows()]


CASES = _cases()


def _ints(s):
    s = str(s).strip()
    return [int(float(v)) for v in s.split()] if s else []


def _ci(s, idx=None):
    """R's "lower upper" pairs as date indices (-1 for NA), through ``idx`` (valid dates)."""
    v = [None if t == "NA" else int(float(t)) for t in str(s).split()]
    to = (lambda b: b - 1) if idx is None else (lambda b: int(idx[b - 1]))
    return [(-1 if a is None else to(a), -1 if b is None else to(b))
            for a, b in zip(v[::2], v[1::2])]


def _floats(s):
    s = str(s).strip()
    return [float(v) for v in s.split()] if s else []


def _run(row, y, device, **kw):
    br = None if pd.isna(row.breaks) else int(row.breaks)
    return clts.bfast_decompose(y, int(row.freq), h=float(row.h), season=row.season,
                                max_iter=int(row.max_iter), breaks=br, device=device, **kw)


@pytest.mark.parametrize("row,g", CASES, ids=[c[0].case for c in CASES])
def test_matches_r(device, row, g):
    _fp64(device)
    y = g.y.to_numpy()
    r = _run(row, y, device, confint=0.95)
    tol = 1e-9 * np.ptp(y)
    assert r.status == 0
    for lo, up, col in ((r.trend_ci_lower, r.trend_ci_upper, row.trend_ci),
                        (r.season_ci_lower, r.season_ci_upper, row.season_ci)):
        got = [(int(a), int(b)) for a, b in zip(lo, up) if a >= 0 or b >= 0]
        assert got == _ci(col)
    assert int(r.iterations) == row.iterations
    assert [b + 1 for b in r.trend_breaks if b >= 0] == _ints(row.trend_bp)
    assert [b + 1 for b in r.season_breaks if b >= 0] == _ints(row.season_bp)
    assert int(r.n_trend_breaks) == len(_ints(row.trend_bp))
    assert bool(r.n_trend_breaks == 0) == bool(row.nobp_trend == "TRUE" or row.nobp_trend is True)
    np.testing.assert_allclose(r.trend, g.Tt.to_numpy(), rtol=0, atol=tol)
    np.testing.assert_allclose(r.seasonal, g.St.to_numpy(), rtol=0, atol=tol)
    np.testing.assert_allclose(r.remainder, y - g.Tt.to_numpy() - g.St.to_numpy(), rtol=0,
                               atol=2 * tol)
    assert abs(float(r.magnitude) - row.magnitude) <= tol
    assert (int(r.magnitude_break) + 1 if r.magnitude_break >= 0 else None) == (
        None if pd.isna(row.time) else int(row.time))
    mags = _floats(row.mags)
    np.testing.assert_allclose(r.magnitudes[:len(mags)], mags, rtol=0, atol=tol)
    assert np.all(np.isnan(r.magnitudes[len(mags):]))


def test_batched_equals_one_by_one(device):
    """A cube of R's series and synthetic pixels (with gaps, a constant, an inf and a too short
    pixel): each pixel's result is that of the pixel alone, the failures have their status."""
    _fp64(device)
    pick = {"harvest_harmonic_i10": None, "syn1_harmonic_i10": None, "syn3_harmonic_i10": None}
    for row, g in CASES:
        if row.case in pick:
            pick[row.case] = g.y.to_numpy()
    N = 199
    rng = np.random.default_rng(5)
    cols = [pick["harvest_harmonic_i10"], pick["syn1_harmonic_i10"][:N],
            pick["syn3_harmonic_i10"][:N]]
    gap = cols[1].copy()
    gap[rng.random(N) < 0.15] = np.nan
    gap[40:55] = np.nan
    cols += [gap, np.full(N, 0.4), cols[0].copy(), np.full(N, np.nan)]
    cols[5][17] = np.inf
    short = cols[2].copy()
    short[30:] = np.nan
    cols.append(short)
    cube = np.stack(cols, axis=1).reshape(N, 2, 4)
    r = clts.bfast_decompose(cube, 23, season="harmonic", device=device)
    assert r.trend.shape == (N, 2, 4) and r.trend_breaks.shape[1:] == (2, 4)
    st = r.status.reshape(-1)
    assert st.tolist() == [0, 0, 0, 0, 2, 3, 1, 1]
    flat = lambda a: np.asarray(a).reshape(a.shape[0], -1)   # noqa: E731
    for j in range(4):
        one = clts.bfast_decompose(cube.reshape(N, -1)[:, j], 23, season="harmonic",
                                   device=device)
        assert one.status == 0
        np.testing.assert_array_equal(flat(r.trend_breaks)[:, j], one.trend_breaks)
        np.testing.assert_array_equal(flat(r.season_breaks)[:, j], one.season_breaks)
        np.testing.assert_allclose(flat(r.trend)[:, j], one.trend, rtol=0, atol=1e-12)
        np.testing.assert_allclose(flat(r.seasonal)[:, j], one.seasonal, rtol=0, atol=1e-12)
        assert r.iterations.reshape(-1)[j] == one.iterations
    # the gaps: NaN components there, break dates are dates of the whole series
    assert np.all(np.isnan(flat(r.trend)[np.isnan(gap), 3]))
    assert np.all(np.isfinite(flat(r.trend)[~np.isnan(gap), 3]))
    # the constant pixel: fitted exactly, no break, trend = the value
    c = 4
    assert r.n_trend_breaks.reshape(-1)[c] == 0 and r.n_season_breaks.reshape(-1)[c] == 0
    np.testing.assert_allclose(flat(r.trend)[:, c], 0.4, atol=1e-12)
    np.testing.assert_allclose(flat(r.seasonal)[:, c], 0.0, atol=1e-12)
    for j in (5, 6, 7):
        assert np.all(np.isnan(flat(r.trend)[:, j])) and r.n_trend_breaks.reshape(-1)[j] == -1
    assert r.diagnostics["status_counts"]["too_few_values"] == 2


def test_dates_and_labels(device):
    _fp64(device)
    row, g = next(c for c in CASES if c[0].case == "harvest_harmonic_b2")
    y = g.y.to_numpy()
    dates = np.datetime64("2000-02-18") + 16 * np.arange(y.size)
    df = pd.DataFrame({"a": y, "b": y[::-1].copy()}, index=pd.DatetimeIndex(dates))
    r = _run(row, df, device)
    assert isinstance(r.trend, pd.DataFrame) and list(r.trend.columns) == ["a", "b"]
    bp = int(r.trend_breaks["a"].iloc[0])
    assert r.trend_break_dates["a"].iloc[0] == dates[bp]
    assert r.magnitude_date["a"] == dates[int(r.magnitude_break["a"])]
    # numpy with time last, and dates as decimal years
    t = 2000.13 + np.arange(y.size) / 23
    r2 = _run(row, np.stack([y, y[::-1]]), device, dates=t, time_axis=-1)
    assert r2.trend.shape == (2, y.size)
    np.testing.assert_array_equal(r2.trend_breaks[:, 0], r.trend_breaks["a"].to_numpy())
    assert r2.trend_break_dates[0, 0] == t[bp]


def test_float32(device):
    row, g = next(c for c in CASES if c[0].case == "harvest_harmonic_i10")
    y = g.y.to_numpy()
    r = _run(row, y, device, dtype=np.float32)
    assert [b + 1 for b in r.trend_breaks if b >= 0] == _ints(row.trend_bp)
    np.testing.assert_allclose(r.trend, g.Tt.to_numpy(), rtol=0, atol=1e-4)


@pytest.mark.parametrize("kw,match", [
    (dict(season="periodic"), "season"), (dict(h=0.7), "h"), (dict(h=0), "h"),
    (dict(max_iter=0), "max_iter"), (dict(breaks=0), "breaks"), (dict(breaks="AIC"), "breaks"),
    (dict(level=1.5), "level"), (dict(level=(0.05,)), "level"), (dict(type="Rec-CUSUM"), "type"),
])
def test_bad_arguments(kw, match):
    y = np.zeros((100, 2))
    with pytest.raises(ValueError, match=match):
        clts.bfast_decompose(y, 23, **kw)


def test_bad_input():
    with pytest.raises(ValueError, match="freq"):
        clts.bfast_decompose(np.zeros((100, 2)), 1.5)
    with pytest.raises(ValueError, match="freq"):
        clts.bfast_decompose(np.zeros((100, 2)), 1, season="dummy")
    with pytest.raises(ValueError, match="two seasons"):
        clts.bfast_decompose(np.zeros((40, 2)), 23, season="harmonic")
    with pytest.raises(TypeError, match="real"):
        clts.bfast_decompose(np.zeros((100, 2), bool), 23)
    with pytest.raises(ValueError, match="dates"):
        clts.bfast_decompose(np.zeros((100, 2)), 23, dates=np.arange(99))


# ------------------------------------------------------------------ missing values
def _gap_cases():
    cs = pd.read_csv(DATA / "bfast_decompose_gaps_cases.csv", keep_default_na=False,
                     na_values=["NA"])
    ser = pd.read_csv(DATA / "bfast_decompose_gaps_series.csv")
    return [(row, ser[ser.case == row.case]) for _, row in cs.iterrows()]


GAP_CASES = _gap_cases()


@pytest.mark.parametrize("row,g", GAP_CASES, ids=[c[0].case for c in GAP_CASES])
def test_gaps_match_r(device, row, g):
    """Series with missing values (ndvi's own, and planted ones), from R's initial season
    (bench/bfast_decompose_gap_fixtures.R: R's bfast with a stand-in stlplus): the iteration's
    breaks (R's indices of the valid values, mapped to dates), iterations, components (NaN at
    the gaps) equal R's. Magnitudes: R evaluates the segment lines at ``ti[bp]`` with ``bp``
    an index of the valid values (an earlier date where gaps precede); clts at the valid dates
    around the break: R's own fitted trend there."""
    from clts.bfast import decompose as dm
    _fp64(device)
    y = g.y.to_numpy()
    N, f, season = y.size, int(row.freq), row.season
    XT, XS = dm.trend_design(N), dm.season_design(N, f, season)
    dev = clts.get_device(device)
    plans = dm.make_plans(dev, N, XS.shape[1], np.float64)
    o = dm.iterate(dev, plans, y[:, None].copy(), f, XT, XS, season, float(row.h),
                   int(row.max_iter), (None, None), (0.05, 0.05), np.dtype(np.float64),
                   season0=g.St0.to_numpy()[:, None], keep=True)
    idx = np.nonzero(~np.isnan(y))[0]
    ci = dm.intervals(o["V"], XT, o["bpT"], o["nT"], 0.95)
    assert [(int(a), int(b)) for a, b in ci[:, :, 0].T if a >= 0 or b >= 0] == \
        _ci(row.trend_ci, idx)
    tol = 1e-9 * (np.nanmax(y) - np.nanmin(y))
    assert o["status"][0] == 0 and o["iterations"][0] == row.iterations
    tb = [idx[b - 1] for b in _ints(row.trend_bp)]
    assert [b for b in o["bpT"][:, 0] if b >= 0] == tb
    assert [b for b in o["bpS"][:, 0] if b >= 0] == [idx[b - 1] for b in _ints(row.season_bp)]
    Tt, St = g.Tt.to_numpy(), g.St.to_numpy()
    np.testing.assert_array_equal(np.isnan(o["trend"][:, 0]), np.isnan(y))
    np.testing.assert_allclose(o["trend"][:, 0], Tt, rtol=0, atol=tol)
    np.testing.assert_allclose(o["seasonal"][:, 0], St, rtol=0, atol=tol)
    nxt = [idx[np.searchsorted(idx, b) + 1] for b in tb]
    mags = [Tt[a] - Tt[b] for a, b in zip(nxt, tb)]
    np.testing.assert_allclose(o["mags"][:len(tb), 0], mags, rtol=0, atol=tol)
    k = int(np.argmax(np.abs(mags)))
    assert o["mtime"][0] == tb[k]
    assert abs(o["magnitude"][0] - mags[k]) <= tol
    if idx[0] == 0 and np.all(np.diff(idx[:max(_ints(row.trend_bp) + [1]) + 1]) == 1):
        assert abs(o["magnitude"][0] - row.magnitude) <= tol    # no gap before: R's value


# ------------------------------------------------------------------ numpy reference
def _ndvi_like(seed, M=6, N=96, f=12, miss=0.1):
    rng = np.random.default_rng(seed)
    t = np.arange(N)
    y = (0.5 + 0.2 * np.sin(2 * np.pi * t[:, None] / f + rng.uniform(0, 6, M))
         + 0.001 * t[:, None] + 0.03 * rng.standard_normal((N, M)))
    y += (t[:, None] > rng.integers(25, N - 25, M)) * rng.choice([-0.3, 0.0, 0.25], M)
    amp = (t[:, None] > rng.integers(25, N - 25, M)) * rng.choice([0.0, 0.15], M)
    y += amp * np.cos(2 * np.pi * t[:, None] / f)
    y[rng.random((N, M)) < miss] = np.nan
    y[0] = 0.5
    return y


@pytest.mark.parametrize("season,breaks,level", [
    ("harmonic", None, 0.05), ("dummy", None, 0.05), ("none", None, 0.05),
    ("harmonic", 2, 0.05), ("harmonic", "LWZ", 0.05), ("harmonic", None, (0.05, 0.9)),
    ("dummy", 1, (0.05, 0.9))])
def test_matches_reference_with_gaps(device, season, breaks, level):
    """Against the one-pixel numpy reference (lstsq fits, window-sum MOSUM, the reference
    Bai-Perron, the reference STL) on NDVI-like pixels with 10 % missing values (a lax
    seasonal level: seasonal breaks in most pixels)."""
    from clts.bfast import decompose_reference as ref
    _fp64(device)
    y = _ndvi_like(1 if season != "dummy" else 2)
    r = clts.bfast_decompose(y, 12, season=season, breaks=breaks, level=level, device=device)
    lv = level if isinstance(level, tuple) else (level, level)
    for p in range(y.shape[1]):
        e = ref.bfast_pixel(y[:, p], 12, season=season, breaks=(breaks, breaks), level=lv)
        assert r.status[p] == e["status"] == 0
        assert [b for b in r.trend_breaks[:, p] if b >= 0] == e["trend_breaks"], p
        assert [b for b in r.season_breaks[:, p] if b >= 0] == e["season_breaks"], p
        assert r.iterations[p] == e["iterations"]
        np.testing.assert_allclose(r.trend[:, p], e["trend"], rtol=0, atol=1e-9)
        np.testing.assert_allclose(r.seasonal[:, p], e["seasonal"], rtol=0, atol=1e-9)
        assert r.magnitude_break[p] == e["magnitude_break"]
        np.testing.assert_allclose(r.magnitude[p], e["magnitude"], rtol=0, atol=1e-9)
        k = len(e["mags"])
        np.testing.assert_allclose(r.magnitudes[:k, p], e["mags"], rtol=0, atol=1e-9)
    assert np.any(r.n_trend_breaks > 0)
    if lv[1] > 0.5:
        assert np.sum(r.n_season_breaks > 0) >= 3


def test_layouts_and_threads(device):
    """Any numpy layout (Fortran, strided, big-endian, integers) gives the C float64 result;
    calls from several threads give each its serial result."""
    import threading
    _fp64(device)
    y = np.round(_ndvi_like(3, miss=0.0) * 1e4)
    base = clts.bfast_decompose(y, 12, season="harmonic", device=device)
    big = np.asfortranarray(y.astype(">i4"))
    wide = np.zeros((y.shape[0], 2 * y.shape[1]))
    wide[:, ::2] = y
    for v in (big, wide[:, ::2], np.asfortranarray(y.astype(">f8"))):
        r = clts.bfast_decompose(v, 12, season="harmonic", device=device)
        np.testing.assert_array_equal(r.trend_breaks, base.trend_breaks)
        np.testing.assert_allclose(r.trend, base.trend, rtol=0, atol=1e-9)
    cubes = [_ndvi_like(s) for s in (4, 5, 6, 7)]
    serial = [clts.bfast_decompose(c, 12, season="dummy", device=device) for c in cubes]
    got = [None] * len(cubes)

    def work(i):
        got[i] = clts.bfast_decompose(cubes[i], 12, season="dummy", device=device)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(cubes))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a, b in zip(got, serial):
        np.testing.assert_array_equal(a.trend_breaks, b.trend_breaks)
        np.testing.assert_array_equal(a.trend, b.trend)
        np.testing.assert_array_equal(a.seasonal, b.seasonal)


def test_from_bfastts(device):
    """Dated 16-day acquisitions (a fifth missing) through clts.bfastts, as R's
    bfast(bfastts(...)): the drop at 2011 found at 2011.0, its size, NaN at the gaps."""
    _fp64(device)
    rng = np.random.default_rng(0)
    d = np.array([np.datetime64(f"{yr}-01-01") + 16 * k for yr in range(2005, 2015)
                  for k in range(23)])
    d = d[rng.random(d.size) > 0.2]
    t = (d - np.datetime64("2005-01-01")).astype(float) / 365.25
    y = 0.5 + 0.2 * np.sin(2 * np.pi * t) - 0.2 * (t > 6) + 0.02 * rng.normal(size=d.size)
    s = clts.bfastts(y, d, "16-day")
    r = clts.bfast_decompose(s.values, s.freq, s.time, season="harmonic", device=device)
    assert r.status == 0 and r.n_trend_breaks == 1
    assert r.trend_break_dates[0] == 2011.0 and abs(r.magnitude + 0.2) < 0.03
    np.testing.assert_array_equal(np.isnan(r.trend), np.isnan(s.values))


def test_segment_fit_rank_deficient_segment():
    """A segment whose valid dates leave the dummy season rank-deficient (two seasons never
    observed in it): the fitted values are the least-squares ones (R's pivoting lm)."""
    from clts.bfast import decompose_steps as ds
    rng = np.random.default_rng(0)
    N, f = 24, 4
    X = ds.season_design(N, f, "dummy")
    y = rng.normal(size=(N, 3))
    y[12:, 1][np.isin(np.arange(12, N) % f, (0, 3))] = np.nan
    seg = (np.arange(N) >= 12).astype(np.int64)[:, None].repeat(3, axis=1)
    fitted, _ = ds.segment_fit(X, y, seg, 2)
    for p in range(3):
        for s in (0, 1):
            rows = (seg[:, p] == s) & ~np.isnan(y[:, p])
            beta = np.linalg.lstsq(X[rows], y[rows, p], rcond=None)[0]
            np.testing.assert_allclose(fitted[rows, p], X[rows] @ beta, rtol=0, atol=1e-12)
    assert np.all(np.isnan(fitted[np.isnan(y)]))


def test_plot(device):
    pytest.importorskip("matplotlib")
    _fp64(device)
    row, g = next(c for c in CASES if c[0].case == "harvest_harmonic_b2")
    y = g.y.to_numpy()
    cube = np.stack([y, y[::-1]], axis=1).reshape(-1, 1, 2)
    r = _run(row, cube, device, dates=2000.13 + np.arange(y.size) / 23)
    fig = r.plot((0, 0))
    assert len(fig.axes) == 4
    assert len(fig.axes[2].lines) == 1 + int(r.n_trend_breaks[0, 0]) + 1    # + largest change
    assert len(fig.axes[1].lines) == 1 + int(r.n_season_breaks[0, 0])
    assert len(r.plot(1).axes) == 4
