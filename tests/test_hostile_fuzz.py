"""Fuzz tests (hypothesis) of the paths a hostile-input round had not reached: ``bfast_breaks``
with LWZ, ``confint=``, exact fits and gaps against the numpy reference, its xarray and Dask
paths against the numpy call, and multi-band GeoTIFF stacks (integer and float, nodata 0 /
-9999 / NaN / none, bands out of date order) against ``clts.bfast_monitor`` on the same
arrays. Every input is hashed before and after the call; no output folder holds anything but
the four results. Small and few examples (deterministic: derandomize)."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

hyp = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

import clts  # noqa: E402
from clts.bfast import breakpoints_reference as bref  # noqa: E402
from clts.bfast.common import design_matrix, trend_scaling  # noqa: E402

FUZZ = settings(max_examples=12, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.asarray(a)
        h.update(str((a.shape, a.dtype.str, a.strides)).encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


@st.composite
def break_cases(draw):
    return dict(N=draw(st.sampled_from([46, 69])), M=draw(st.integers(1, 4)),
                order=draw(st.integers(0, 2)), trend=draw(st.booleans()),
                h=draw(st.sampled_from([0.15, 0.25, 0.5, 8, 12])),
                breaks=draw(st.integers(1, 3)), criterion=draw(st.sampled_from(["BIC", "LWZ"])),
                nan=draw(st.sampled_from([0.0, 0.1, 0.3])),
                exact=draw(st.sampled_from([None, "constant", "harmonic", "step"])),
                scale=draw(st.sampled_from([1e-3, 1.0, 255.0, 1e4])),
                layout=draw(st.sampled_from(["C", "F", "strided"])),
                seed=draw(st.integers(0, 2**16)))


def _series(c):
    rng = np.random.default_rng(c["seed"])
    N, M = c["N"], c["M"]
    t = 2000 + np.arange(N) / 23
    y = (np.sin(2 * np.pi * t)[:, None] * 0.3 + 0.05 * rng.standard_normal((N, M))
         + (t[:, None] >= rng.uniform(t[8], t[-8], M)) * rng.uniform(-1, 1, M))
    if c["exact"] == "constant":
        y[:, 0] = 1.0
    elif c["exact"] == "harmonic":
        y[:, 0] = 2 + np.cos(2 * np.pi * t)
    elif c["exact"] == "step":
        y[:, 0] = np.where(t >= t[N // 2], 2.0, 1.0)
    y = y * c["scale"]
    y[rng.random((N, M)) < c["nan"]] = np.nan
    if c["layout"] == "F":
        y = np.asfortranarray(y)
    elif c["layout"] == "strided":
        w = np.full((N, 2 * M), 7.0)
        w[:, ::2] = y
        y = w[:, ::2]
    return t, y


@FUZZ
@given(c=break_cases())
def test_fuzz_bfast_breaks_against_the_reference(device, c):
    if not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")
    t, y = _series(c)
    before = _digest(y, t)
    kw = dict(freq=1.0, order=c["order"], trend=c["trend"], h=c["h"], breaks=c["breaks"],
              criterion=c["criterion"])
    r = clts.bfast_breaks(y, t, confint=0.95, device=device, progress=False, **kw)
    assert _digest(y, t) == before
    cs, sc = trend_scaling(t, t.size)
    X = design_matrix(t, c["order"], 1.0, c["trend"], cs, sc)
    for p in range(c["M"]):
        e = bref.breakpoints_pixel(X, y[:, p], h=c["h"], breaks=c["breaks"])
        assert r.status[p] == e["status"], p
        if e["status"]:
            assert r.n_breaks[p] == -1 and (r.breakpoints[:, p] == -1).all()
            continue
        B = e["breaks"]
        np.testing.assert_allclose(r.rss[:B + 1, p], e["rss"][:B + 1], rtol=1e-8,
                                   atol=1e-20 * np.nansum(y[:, p] ** 2))
        m = bref.select(e, c["criterion"])
        assert r.n_breaks[p] == m, p
        want = [int(e["idx"][b - 1]) for b in e["bp"][m]]
        assert r.breakpoints[:m, p].tolist() == want
        for j in range(m):        # an interval holds its break, or R's NA (-1)
            lo, hi = r.ci_lower[j, p], r.ci_upper[j, p]
            assert (lo == -1 and hi == -1) or lo <= r.breakpoints[j, p] <= hi
    exact = c["exact"] == "constant" or (c["exact"] == "harmonic" and c["order"] >= 1)
    if exact and r.status[0] == 0:             # a model without breaks fits it exactly
        assert r.n_breaks[0] == 0 and r.diagnostics["exact_fit"] >= 1


@FUZZ
@given(c=break_cases(), chunk=st.sampled_from([None, 1, 2]))
def test_fuzz_bfast_breaks_xarray_and_dask(device, c, chunk):
    xr = pytest.importorskip("xarray")
    import clts.xarray as cx
    if not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")
    if chunk is not None:
        pytest.importorskip("dask")
    t, y = _series(c)
    kw = dict(freq=1.0, order=c["order"], trend=c["trend"], h=c["h"], breaks=c["breaks"],
              criterion=c["criterion"])
    want = clts.bfast_breaks(y, t, device=device, progress=False, **kw)
    da = xr.DataArray(np.ascontiguousarray(y.T), dims=("x", "time"), coords={"time": t})
    before = _digest(da.values)
    if chunk is not None:
        da = da.chunk({"x": chunk})
    ds = cx.bfast_breaks(da, device=device, **kw).compute()
    assert _digest(np.asarray(da.values)) == before
    np.testing.assert_array_equal(ds["n_breaks"].values, want.n_breaks)
    np.testing.assert_array_equal(ds["status"].values, want.status)
    np.testing.assert_array_equal(ds["breakpoints"].transpose("break", "x").values,
                                  want.breakpoints)
    np.testing.assert_array_equal(ds["rss"].transpose("n", "x").values, want.rss)


@st.composite
def geotiff_cases(draw):
    return dict(dtype=draw(st.sampled_from(["int16", "uint16", "float32"])),
                nodata=draw(st.sampled_from([0, -9999, "nan", None])),
                shuffle=draw(st.booleans()), H=draw(st.integers(1, 5)),
                W=draw(st.integers(1, 4)), block_rows=draw(st.integers(1, 3)),
                seed=draw(st.integers(0, 2**16)))


@settings(max_examples=8, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(c=geotiff_cases())
def test_fuzz_multiband_geotiff(device, c, tmp_path_factory):
    rasterio = pytest.importorskip("rasterio")
    from affine import Affine
    from clts import geotiff
    nd = c["nodata"]
    if nd == -9999 and c["dtype"] == "uint16":
        nd = 65535
    if nd == "nan" and c["dtype"] != "float32":
        nd = None
    nd = float("nan") if nd == "nan" else nd
    rng = np.random.default_rng(c["seed"])
    dates = np.arange("2013-01-01", "2018-01-01", 16, dtype="datetime64[D]")
    T, H, W = dates.size, c["H"], c["W"]
    tt = (dates - dates[0]).astype(float)
    y = 3000 + 1000 * np.sin(2 * np.pi * tt / 365.25)[:, None, None] + \
        80 * rng.standard_normal((T, H, W))
    y[dates >= np.datetime64("2016-06-01"), :, : max(1, W // 2)] -= 1500
    y = np.round(y)
    miss = rng.random(y.shape) < 0.15
    if nd is not None and not np.isnan(nd):
        y[~miss & (y == nd)] += 1
    stored = np.where(miss, nd if nd is not None else 0, y).astype(c["dtype"])
    if nd is None:
        miss[:] = False                              # no nodata: every value is data
        y = stored.astype(np.float64)
    perm = rng.permutation(T) if c["shuffle"] else np.arange(T)
    d = tmp_path_factory.mktemp("mb")
    path = d / "multi.tif"
    with rasterio.open(path, "w", driver="GTiff", width=W, height=H, count=T,
                       dtype=c["dtype"], crs="EPSG:32633", nodata=nd,
                       transform=Affine(30.0, 0, 500000.0, 0, -30.0, 4200000.0)) as ds:
        ds.write(stored[perm])
    csv = d / "dates.csv"
    csv.write_text("date\n" + "\n".join(str(x) for x in dates[perm]) + "\n")
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (path, csv)}
    out = geotiff.bfast_monitor_geotiff(path, "2016-01-01", d / "out", dates=csv,
                                        block_rows=c["block_rows"], device=device,
                                        progress=False)
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (path, csv)} == before
    assert sorted(p.name for p in (d / "out").iterdir()) == sorted(
        f"{n}.tif" for n in geotiff.OUTPUTS)
    yf = np.where(miss, np.nan, stored.astype(np.float64))
    want = clts.bfast_monitor(yf, dates, np.datetime64("2016-01-01"),
                              dtype=np.float32, device=device, progress=False)
    with rasterio.open(out["status"]) as ds:
        np.testing.assert_array_equal(ds.read(1), want.status)
        assert ds.nodata == -1
    with rasterio.open(out["valid_count"]) as ds:
        np.testing.assert_array_equal(ds.read(1), want.valids)
    with rasterio.open(out["break_date"]) as ds:
        np.testing.assert_array_equal(
            ds.read(1), geotiff.date_values(want.break_dates, "decimal_year").astype(np.float32))


# ------------------------------------------------ mstl, trend_test, mass, stumpi
@settings(max_examples=8, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(n=st.integers(60, 130), periods=st.sampled_from([(7,), (7, 12), (12, 5)]),
       robust=st.booleans(), layout=st.sampled_from(["C", "F", "strided"]),
       seed=st.integers(0, 2**16))
def test_fuzz_mstl_against_statsmodels(device, n, periods, robust, layout, seed):
    sm = pytest.importorskip("statsmodels.tsa.seasonal")
    if not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    y = (np.sin(2 * np.pi * t / periods[0]) + 0.02 * t
         + rng.standard_normal((2, n)) * rng.uniform(0.05, 1.0))
    if layout == "F":
        y = np.asfortranarray(y)
    elif layout == "strided":
        w = np.zeros((2, 2 * n))
        w[:, ::2] = y
        y = w[:, ::2]
    before = _digest(y)
    kw = dict(stl_kwargs=dict(robust=True)) if robust else {}
    r = clts.mstl(y, periods, device=device, **kw)
    assert _digest(y) == before
    for i in range(2):
        s = sm.MSTL(np.array(y[i]), periods=periods, **kw).fit()
        S = np.asarray(s.seasonal).reshape(n, -1)
        for j, p in enumerate(r.periods):
            np.testing.assert_allclose(r.seasonal[p][i], S[:, j], rtol=0,
                                       atol=1e-9 * np.ptp(y[i]))
        np.testing.assert_allclose(r.trend[i], s.trend, rtol=0, atol=1e-9 * np.ptp(y[i]))


@FUZZ
@given(n=st.integers(10, 90), variant=st.sampled_from(["original", "hamed_rao", "yue_wang",
                                                       "seasonal"]),
       ties=st.booleans(), trend=st.sampled_from([0.0, 0.02, -0.05]),
       layout=st.sampled_from(["C", "F"]), seed=st.integers(0, 2**16))
def test_fuzz_trend_test_against_pymannkendall(device, n, variant, ties, trend, layout, seed):
    mk = pytest.importorskip("pymannkendall")
    if not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")
    rng = np.random.default_rng(seed)
    y = trend * np.arange(n) + rng.standard_normal((3, n))
    if ties:
        y = np.round(y * 2) / 2
    if layout == "F":
        y = np.asfortranarray(y)
    before = _digest(y)
    kw = dict(period=4) if variant == "seasonal" else {}
    r = clts.trend_test(y, variant=variant, device=device, **kw)
    assert _digest(y) == before
    anchor = {"original": mk.original_test, "hamed_rao": mk.hamed_rao_modification_test,
              "yue_wang": mk.yue_wang_modification_test,
              "seasonal": lambda x, period: mk.seasonal_test(x, period=period)}[variant]
    for i in range(3):
        with np.errstate(all="ignore"):
            a = anchor(np.array(y[i]), **kw)
        for mine, theirs in (("s", "s"), ("z", "z"), ("p", "p"), ("slope", "slope")):
            m, w = float(getattr(r, mine)[i]), float(getattr(a, theirs))
            assert (np.isnan(m) and np.isnan(w)) or np.isclose(m, w, rtol=1e-9, atol=1e-12), \
                (i, mine, m, w)


@FUZZ
@given(m=st.integers(3, 20), n=st.integers(20, 120), normalize=st.booleans(),
       p=st.sampled_from([1.0, 2.0, 3.0]), flat=st.booleans(), seed=st.integers(0, 2**16))
def test_fuzz_mass_against_direct_distances(device, m, n, normalize, p, flat, seed):
    if not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")
    if m > n:
        m = n
    rng = np.random.default_rng(seed)
    T = np.cumsum(rng.standard_normal(n))
    Q = rng.standard_normal(m)
    if flat:
        T[: m + 2] = 3.0                          # constant windows
    before = _digest(T, Q)
    D = np.asarray(clts.mass(Q, T, normalize=normalize, p=p, device=device)).ravel()
    assert _digest(T, Q) == before
    W = np.lib.stride_tricks.sliding_window_view(T, m)
    if normalize:
        def z(a):
            s = a.std(axis=-1, keepdims=True)
            return np.where(s > 0, (a - a.mean(axis=-1, keepdims=True)) / np.where(s > 0, s, 1), 0)
        want = np.sqrt(np.sum((z(W) - z(Q[None])) ** 2, axis=1))
        sd = W.std(axis=1)
        want = np.where(sd > 1e-12 * np.abs(W).max(axis=1), want, np.sqrt(m))   # stumpy's
        keep = sd > 1e-6
        np.testing.assert_allclose(D[keep], want[keep], rtol=1e-7, atol=1e-7)
    else:
        want = np.sum(np.abs(W - Q) ** p, axis=1) ** (1 / p)
        np.testing.assert_allclose(D, want, rtol=1e-9, atol=1e-9)


@FUZZ
@given(m=st.integers(4, 16), n0=st.integers(40, 80), k=st.integers(1, 30),
       block=st.booleans(), seed=st.integers(0, 2**16))
def test_fuzz_stumpi_against_the_numpy_call(device, m, n0, k, block, seed):
    if not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")
    rng = np.random.default_rng(seed)
    T = np.cumsum(rng.standard_normal(n0 + k))
    head = T[:n0].copy()
    before = _digest(head)
    s = clts.stumpi(head, m, egress=False, device=device)
    if block:
        s.update(T[n0:].copy())
    else:
        for x in T[n0:]:
            s.update(float(x))
    assert _digest(head) == before
    full = clts.matrix_profile(T, m, device=device, progress=False)
    np.testing.assert_allclose(s.P_, full.profile, atol=1e-7)
    assert np.mean(s.I_ == full.index) > 0.95
