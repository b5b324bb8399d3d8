"""clts.trend_test's pre-whitening, multivariate / regional, correlated and partial variants,
batched, against pymannkendall series by series (every field to 1e-10 relative in float64)
and the numpy reference (clts.trend.reference.trend_multi): random series with ties, gaps,
scattered NaN and a constant series, and real ones (statsmodels' CO2 and sunspots when
statsmodels is installed)."""
from __future__ import annotations

import numpy as np
import pytest

import clts
from clts.trend import multi
from clts.trend import reference as ref
from test_trend import batch as trend_batch
from test_trend import close

mk = pytest.importorskip("pymannkendall")

SERIES_ANCHOR = {
    "pre_whitening": mk.pre_whitening_modification_test,
    "trend_free_pre_whitening": mk.trend_free_pre_whitening_modification_test,
    "correlated_seasonal": lambda x: mk.correlated_seasonal_test(x, period=6)}
MULTI_ANCHOR = {"multivariate": mk.multivariate_test, "regional": mk.regional_test,
                "correlated_multivariate": mk.correlated_multivariate_test,
                "partial": mk.partial_test}
FIELDS = (("s", "s"), ("var_s", "var_s"), ("z", "z"), ("p", "p"), ("tau", "Tau"),
          ("slope", "slope"), ("intercept", "intercept"))


def batch(rng, n):
    """test_trend's batch (ties, a gap, autocorrelation, scattered NaN) and a constant series."""
    y = trend_batch(rng, n, b=7)
    y[6] = 3.0
    return y


def _real():
    try:
        import statsmodels.datasets as ds
        co2 = ds.co2.load_pandas().data["co2"].to_numpy(float)[:960]    # NaN inside
        spots = ds.sunspots.load_pandas().data["SUNACTIVITY"].to_numpy(float)[:240]
    except Exception:       # optional data
        return {}
    return {"co2": co2.reshape(8, 120), "sunspots": spots.reshape(2, 120)}


REAL = _real()


def check(r, i, anchor, x, e):
    """Series i of result r against pymannkendall's test ``anchor`` of x and the reference's
    dict e."""
    if e["status"] != 0:          # clts's rule: fewer than 3 values, all NaN
        assert r.status.flat[i] == 1 and np.isnan(r.s.flat[i])
        return
    with np.errstate(all="ignore"):
        a = anchor(x)
    for mine, theirs in FIELDS:
        assert close(r.__dict__[mine].flat[i], getattr(a, theirs)), (i, mine)
        assert close(r.__dict__[mine].flat[i], e[mine], 1e-9), (i, mine, "reference")
    assert r.trend_names().flat[i] == a.trend and bool(r.h.flat[i]) == bool(a.h)


@pytest.mark.parametrize("variant", list(SERIES_ANCHOR))
@pytest.mark.parametrize("n", [40, 97])
def test_series_variants_match_pymannkendall(device, variant, n):
    y = batch(np.random.default_rng(n), n)
    kw = dict(period=6) if variant == "correlated_seasonal" else {}
    r = clts.trend_test(y, variant=variant, device=device, **kw)
    assert r.s.shape == (len(y),)
    for i in range(len(y)):
        e = ref.trend_multi(y[i], variant, kw.get("period"))
        check(r, i, SERIES_ANCHOR[variant], y[i], e)
        e = ref.trend_multi(y[i], variant, kw.get("period"))
        assert close(r.slope_low[i], e["slope_low"], 1e-12)
        assert r.n[i] == e["n"]


@pytest.mark.parametrize("variant", list(MULTI_ANCHOR))
def test_multi_variants_match_pymannkendall(device, variant):
    rng = np.random.default_rng(2)
    C = 2 if variant == "partial" else 3
    y = np.stack([batch(rng, 50) for _ in range(C)], axis=1)       # (7, C, 50)
    y[6, 1] += np.arange(50)                    # one variable not constant
    y[3, 1, ::4] = np.nan                       # NaN in different variables and steps
    y[0, :, 10] = np.nan
    r = clts.trend_test(y, variant=variant, device=device)
    assert r.s.shape == (7,)
    for i in range(len(y)):
        check(r, i, MULTI_ANCHOR[variant], y[i].T, ref.trend_multi(y[i], variant))


@pytest.mark.skipif(not REAL, reason="statsmodels' datasets not installed")
def test_real_series(device):
    for name, y in REAL.items():
        for variant, f in SERIES_ANCHOR.items():
            kw = dict(period=6) if variant == "correlated_seasonal" else {}
            r = clts.trend_test(y, variant=variant, device=device, **kw)
            for i in range(len(y)):
                check(r, i, f, y[i], ref.trend_multi(y[i], variant, kw.get("period")))
    # the CO2 years as sites, the sunspot halves as two variables
    y3 = REAL["co2"].reshape(2, 4, 120)
    for variant in ("multivariate", "correlated_multivariate"):
        r = clts.trend_test(y3, variant=variant, device=device)
        for i in range(2):
            check(r, i, MULTI_ANCHOR[variant], y3[i].T, ref.trend_multi(y3[i], variant))
    s = REAL["sunspots"][None]
    r = clts.trend_test(s, variant="partial", device=device)
    check(r, 0, mk.partial_test, s[0].T, ref.trend_multi(s[0], "partial"))


def test_whitening_is_pymannkendalls(device):
    """The whitened values are pymannkendall's bits (its lag-1 autocorrelation formed as
    np.correlate forms it), at lengths on both sides of numpy's small-kernel loop."""
    acf = getattr(mk.pymannkendall, "__acf")
    rng = np.random.default_rng(4)
    for n in (3, 5, 11, 12, 13, 40, 200):
        x = rng.normal(size=(20, n)) * 50 + 1000
        r1 = multi.lag1(x)
        assert all(r1[i] == acf(x[i], 1)[1] for i in range(len(x)))
        w, flat = multi.whiten(x)
        assert not flat.any()
        assert all(np.array_equal(w[i], x[i, 1:] - x[i, :-1] * acf(x[i], 1)[1])
                   for i in range(len(x)))


def test_shapes_layouts_float32(device):
    rng = np.random.default_rng(8)
    y = rng.normal(size=(2, 3, 4, 36)) + 0.05 * np.arange(36)
    base = clts.trend_test(y, variant="correlated_multivariate", device=device)
    assert base.s.shape == (2, 3) and base.n.dtype == np.int64
    for v in (np.asfortranarray(y), y.astype(">f8")):
        r = clts.trend_test(v, variant="correlated_multivariate", device=device)
        assert np.array_equal(r.z, base.z) and np.array_equal(r.slope, base.slope)
    r = clts.trend_test(np.moveaxis(y, -1, 0), variant="correlated_multivariate",
                        time_axis=0, device=device)
    assert np.array_equal(r.var_s, base.var_s)
    one = clts.trend_test(y[0, 0], variant="multivariate",
                          device=device)
    assert isinstance(one.s, float)
    for variant in ("pre_whitening", "correlated_seasonal", "multivariate", "partial"):
        v = y[:, :, :2] if variant == "partial" else y
        kw = dict(period=6) if variant == "correlated_seasonal" else {}
        r64 = clts.trend_test(v, variant=variant, device=device, **kw)
        r32 = clts.trend_test(v.astype(np.float32), variant=variant, device=device, **kw)
        assert np.allclose(r32.z, r64.z, rtol=1e-3, atol=1e-3)
        assert np.allclose(r32.slope, r64.slope, rtol=1e-4, atol=1e-6)
    empty = clts.trend_test(np.zeros((0, 3, 20)), variant="correlated_multivariate",
                            device=device)
    assert empty.s.shape == (0,)
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(y[0, 0].T, columns=list("abcd"))        # time down, a variable a column
    r = clts.trend_test(df, variant="regional", device=device)
    assert close(r.z, mk.regional_test(y[0, 0].T).z)


def test_bad_input(device):
    y = np.random.default_rng(1).normal(size=(3, 30))
    with pytest.raises(ValueError, match="two variables"):
        clts.trend_test(y, variant="partial", device=device)
    with pytest.raises(ValueError, match="variables, time"):
        clts.trend_test(y[0], variant="multivariate", device=device)
    with pytest.raises(ValueError, match="period"):
        clts.trend_test(y, variant="pre_whitening", period=4, device=device)
    with pytest.raises(ValueError, match="half"):
        clts.trend_test(y, variant="correlated_seasonal", period=16, device=device)
    cla = pytest.importorskip("pyopencl.array")
    dev = clts.get_device(device) if hasattr(clts, "get_device") else None
    if dev is not None:
        yd = cla.to_device(dev.queue, y)        # device arrays: the same refusals
        with pytest.raises(ValueError, match="two variables"):
            clts.trend_test(yd, variant="partial", device=device)
        with pytest.raises(ValueError, match="dimension"):
            clts.trend_test(yd[0], variant="multivariate", device=device)
        with pytest.raises(ValueError, match="half"):
            clts.trend_test(yd, variant="correlated_seasonal", period=16, device=device)


@pytest.mark.gpu_layout
@pytest.mark.parametrize("variant", list(SERIES_ANCHOR) + list(MULTI_ANCHOR))
def test_interleaved_layout_gives_the_same_bits(device, variant):
    """The GPU profiles' layout (``interleave=1``: time-major chunks) through every pair-kernel
    call of the variant gives the bits of the device's own plan."""
    rng = np.random.default_rng(31)
    y = batch(rng, 60)
    if variant in MULTI_ANCHOR:
        y = np.stack([y, y[::-1] + 0.1 * batch(rng, 60)], axis=1)
    kw = dict(period=6) if variant == "correlated_seasonal" else {}
    own = clts.trend_test(y, variant=variant, device=device, **kw)
    r = clts.trend_test(y, variant=variant, device=device, lanes=1, interleave=1, items=3,
                        wg=1, **kw)
    for name in ("s", "var_s", "z", "p", "tau", "slope", "intercept", "slope_low",
                 "slope_high", "n", "status", "trend", "h"):
        assert np.array_equal(getattr(r, name), getattr(own, name), equal_nan=True), name


def test_cli_and_xarray(device, tmp_path):
    """``clts trend --variant correlated_seasonal`` writes trend_test's maps; the xarray
    function tests series one by one, so the multi-variable variants are a ValueError there."""
    xr = pytest.importorskip("xarray")
    pd = pytest.importorskip("pandas")
    from clts.cli import main
    rng = np.random.default_rng(12)
    t = pd.date_range("2000-01-01", periods=72, freq="MS")
    da = xr.DataArray(rng.normal(size=(2, 3, 72)) + 0.02 * np.arange(72), name="ndvi",
                      dims=("y", "x", "time"), coords={"time": t})
    path, out = tmp_path / "cube.nc", tmp_path / "t.nc"
    da.to_netcdf(path)
    assert main(["trend", str(path), "-o", str(out), "--variant", "correlated_seasonal",
                 "--period", "12", "--no-progress", "-d", device.slug]) == 0
    ds = xr.open_dataset(out)
    r = clts.trend_test(da.values, variant="correlated_seasonal", period=12, device=device)
    assert np.allclose(ds["var_s"].values, r.var_s, rtol=1e-12)
    assert np.array_equal(ds["trend"].values, r.trend)
    import clts.xarray as cx
    p = cx.trend_test(da, variant="pre_whitening", device=device)
    assert np.allclose(p["s"].values, clts.trend_test(da.values, variant="pre_whitening",
                                                      device=device).s)
    with pytest.raises(ValueError, match="several variables"):
        cx.trend_test(da, variant="multivariate", device=device)


def test_threads(device):
    from concurrent.futures import ThreadPoolExecutor
    rng = np.random.default_rng(13)
    y = rng.normal(size=(6, 3, 40))
    calls = [dict(variant="correlated_multivariate"), dict(variant="pre_whitening")]
    base = [clts.trend_test(y, device=device, **kw).z for kw in calls]
    with ThreadPoolExecutor(4) as ex:
        outs = list(ex.map(lambda i: clts.trend_test(y, device=device, **calls[i % 2]).z,
                           range(8)))
    assert all(np.array_equal(o, base[i % 2], equal_nan=True) for i, o in enumerate(outs))


@pytest.mark.parametrize("N", [1, 2, 3])
def test_short_series(device, N):
    """Too few values, whitened values or complete steps: status 1 and NaN, no error."""
    y = np.arange(4.0 * N).reshape(2, 2, N)
    for variant in list(SERIES_ANCHOR)[:2] + list(MULTI_ANCHOR):
        r = clts.trend_test(y if variant in MULTI_ANCHOR else y[:, 0], variant=variant,
                            device=device, time_axis=-1)
        if variant in ("multivariate", "regional") and N > 1:
            assert (r.status == 0).all()
        elif N < 3 or variant in SERIES_ANCHOR:
            assert (r.status == 1).all() and np.isnan(r.s).all()
