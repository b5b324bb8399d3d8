"""clts.trend_test / mann_kendall / sen_slope against pymannkendall (S, Z, p, Tau, Var S,
slope, intercept to 1e-10 relative in float64) and the numpy reference (Sen's confidence
interval, float32), every code version forced, every device."""
from __future__ import annotations

import numpy as np
import pytest

import clts
from clts.trend import reference as ref
from emulated import gpus_over_pocl
from exactness import assert_same_across_programs

mk = pytest.importorskip("pymannkendall")

ANCHOR = {"original": mk.original_test, "hamed_rao": mk.hamed_rao_modification_test,
          "yue_wang": mk.yue_wang_modification_test,
          "seasonal": lambda x, period: mk.seasonal_test(x, period=period)}
FIELDS = (("s", "s"), ("var_s", "var_s"), ("z", "z"), ("p", "p"), ("tau", "Tau"),
          ("slope", "slope"), ("intercept", "intercept"))


def batch(rng, n, b=6):
    t = np.arange(n)
    y = 0.02 * t + rng.normal(size=(b, n))
    y[1] = np.round(y[1] * 2) / 2                       # ties
    y[2, 5:20] = np.nan                                 # a gap
    y[3] = np.cumsum(rng.normal(size=n))                # autocorrelated
    y[4, rng.random(n) < 0.3] = np.nan                  # scattered missing values
    y[5] = -0.05 * t + np.sin(t)
    return y


def close(a, b, rtol=1e-10):
    return np.isclose(a, b, rtol=rtol, atol=1e-300) or (np.isnan(a) and np.isnan(b))


@pytest.mark.parametrize("variant", list(ANCHOR))
@pytest.mark.parametrize("n", [40, 150])
def test_matches_pymannkendall(device, variant, n):
    y = batch(np.random.default_rng(n), n)
    kw = dict(period=12) if variant == "seasonal" else {}
    r = clts.trend_test(y, variant=variant, device=device, **kw)
    names = r.trend_names()
    for i in range(len(y)):
        a = ANCHOR[variant](y[i], **kw)
        for mine, theirs in FIELDS:
            assert close(getattr(r, mine)[i], getattr(a, theirs)), (i, mine)
        assert names[i] == a.trend and r.h[i] == a.h and r.status[i] == 0
        e = ref.trend_series(y[i], variant, kw.get("period"))
        assert close(r.slope_low[i], e["slope_low"], 1e-12)
        assert close(r.slope_high[i], e["slope_high"], 1e-12)


@pytest.mark.parametrize("median", ["select", "sort"])
@pytest.mark.parametrize("lanes", [1, 8])
def test_versions_long_series(device, median, lanes):
    # 300 points: 44850 slopes, beyond the sampled bracket's threshold; integer data: ties
    rng = np.random.default_rng(7)
    y = batch(rng, 300)[:4]
    y[0] = np.round(y[0])
    r = clts.trend_test(y, device=device, median=median, lanes=lanes, items=3, wg=1)
    for i in range(len(y)):
        a = mk.original_test(y[i])
        e = ref.trend_series(y[i])
        assert close(r.slope[i], a.slope) and close(r.s[i], a.s) and close(r.z[i], a.z)
        assert close(r.slope_low[i], e["slope_low"], 1e-12)
        assert close(r.slope_high[i], e["slope_high"], 1e-12)


def test_float32(device):
    y = batch(np.random.default_rng(3), 120).astype(np.float32)
    r = clts.trend_test(y, variant="hamed_rao", device=device)
    for i in range(len(y)):
        e = ref.trend_series(y[i].astype(np.float64), "hamed_rao")
        assert r.s[i] == e["s"]
        assert abs(r.slope[i] - e["slope"]) < 1e-5 * (abs(e["slope"]) + 1e-3)
        assert abs(r.z[i] - e["z"]) < 1e-3 * (abs(e["z"]) + 1)


def test_too_few_and_status(device):
    y = np.full((3, 30), np.nan)
    y[1, :2] = [1.0, 2.0]
    y[2] = np.arange(30.0)
    r = clts.trend_test(y, device=device)
    assert r.status.tolist() == [1, 1, 0] and r.n.tolist() == [0, 2, 30]
    assert np.isnan(r.p[:2]).all() and np.isnan(r.slope[:2]).all() and r.trend.tolist()[:2] == [0, 0]
    assert r.diagnostics["n_too_few"] == 2 and r.slope[2] == 1.0


def test_bad_input(device):
    y = np.arange(20.0)
    with pytest.raises(ValueError, match="variant"):
        clts.trend_test(y, variant="sen", device=device)
    with pytest.raises(ValueError, match="period"):
        clts.trend_test(y, variant="seasonal", period=1, device=device)
    with pytest.raises(ValueError, match="period"):
        clts.trend_test(y, period=12, device=device)
    with pytest.raises(ValueError, match="half"):
        clts.trend_test(y, variant="seasonal", period=11, device=device)
    with pytest.raises(ValueError, match="alpha"):
        clts.trend_test(y, alpha=1.5, device=device)
    with pytest.raises(ValueError, match="lag"):
        clts.trend_test(y, variant="hamed_rao", lag=0, device=device)
    with pytest.raises(ValueError, match="inf"):
        clts.trend_test(np.r_[y, np.inf], device=device)
    with pytest.raises(ValueError, match="median"):
        clts.trend_test(y, median="heap", device=device)
    with pytest.raises(TypeError, match="y"):
        clts.trend_test(np.array(["a", "b", "c"]), device=device)


def test_layouts_and_wrappers(device):
    rng = np.random.default_rng(5)
    y = rng.normal(size=(4, 5, 50)) + 0.01 * np.arange(50)
    base = clts.trend_test(y, device=device)
    assert base.slope.shape == (4, 5)
    for v in (np.asfortranarray(y), y.astype(">f8"), np.repeat(y, 2, axis=-1)[..., ::2]):
        r = clts.trend_test(v, device=device)
        assert np.array_equal(r.slope, base.slope) and np.array_equal(r.p, base.p)
    r = clts.trend_test(np.moveaxis(y, -1, 0), time_axis=0, device=device)
    assert np.array_equal(r.z, base.z)
    m = clts.mann_kendall(y, variant="yue_wang", lag=3, device=device)
    assert m.diagnostics["variant"] == "yue_wang"
    s = clts.sen_slope(y[0, 0], period=5, device=device)
    assert close(s.slope, mk.seasonal_sens_slope(y[0, 0], 5).slope)
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(y[0].T, columns=list("abcde"))
    r = clts.trend_test(df, device=device)
    assert list(r.slope.index) == list("abcde") and np.allclose(r.slope, base.slope[0])


def test_threads(device):
    from concurrent.futures import ThreadPoolExecutor
    y = np.random.default_rng(9).normal(size=(8, 60))
    base = clts.trend_test(y, device=device).slope
    with ThreadPoolExecutor(4) as ex:
        outs = list(ex.map(lambda _: clts.trend_test(y, device=device).slope, range(4)))
    assert all(np.array_equal(o, base) for o in outs)


@pytest.mark.oclgrind
@pytest.mark.parametrize("variant", ["original", "hamed_rao", "seasonal"])
def test_tiny(device, variant):
    y = np.array([[1.0, 3, 2, np.nan, 5, 4, 6, 8], [2.0, 2, 1, 0, 1, -1, -2, -2]])
    kw = dict(period=2) if variant == "seasonal" else {}
    r = clts.trend_test(y, variant=variant, device=device, **kw)
    for i in range(2):
        e = ref.trend_series(y[i], variant, kw.get("period"))
        assert close(r.s[i], e["s"]) and close(r.slope[i], e["slope"], 1e-12)
        assert close(r.var_s[i], e["var_s"])


def test_xarray_and_plot(device):
    xr = pytest.importorskip("xarray")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(11)
    t = pd.date_range("2000-01-01", periods=48, freq="MS")
    cube = xr.DataArray(rng.normal(size=(3, 4, 48)) + 0.05 * np.arange(48),
                        dims=("y", "x", "time"), coords={"time": t})
    import clts.xarray as cx
    import importlib.util
    lazy = importlib.util.find_spec("dask") is not None     # Dask is an optional extra
    ds = cx.trend_test(cube.chunk({"y": 2}) if lazy else cube, variant="seasonal", period=12,
                       device=device,
                       per="year")
    r = clts.trend_test(cube.values, variant="seasonal", period=12, device=device)
    assert np.array_equal(ds["slope"].values, r.slope) and ds["trend"].dtype == np.int8
    step = np.diff(t.values).mean() / np.timedelta64(1, "D")
    # the seasonal slope is per cycle (12 steps); once, per step x 365.25 / step (12x too big)
    assert np.allclose(ds["slope_per_year"], r.slope * 365.25 / (12 * step), rtol=1e-3)
    rl = clts.trend_test(cube, device=device)
    assert rl.slope.dims == ("y", "x")
    pytest.importorskip("matplotlib")
    fig = clts.trend_test(cube.values, device=device).plot()
    assert fig.axes


@pytest.mark.oclgrind
def test_tiny_bracket(device):
    # 140 points: 9730 slopes, above the sampled bracket's threshold (4 x 2048)
    y = np.random.default_rng(12).normal(size=(1, 140)) + 0.01 * np.arange(140)
    r = clts.trend_test(y, device=device, items=1)
    e = ref.trend_series(y[0])
    assert close(r.slope[0], e["slope"], 1e-12) and close(r.slope_low[0], e["slope_low"], 1e-12)
    assert close(r.slope_high[0], e["slope_high"], 1e-12)


TREND_FIELDS = ("s", "var_s", "z", "p", "tau", "slope", "intercept", "slope_low", "slope_high",
                "status")


@pytest.mark.gpu_layout
@pytest.mark.parametrize("variant", ["original", "seasonal"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_required_subgroup_gives_the_same_bits(device, variant, dtype):
    """``subgroup=16`` (the Data Center GPU Max profile's: IGC compiles the pair kernel at SIMD16
    instead of spilling at SIMD32; a no-op where the compiler lacks
    ``cl_intel_required_subgroup_size``) with the GPU profiles' layout (a series per work-item,
    scalar pair loop): the bits of the device's own Plan, quickselect (past the sampled
    bracket's threshold) and heapsort."""
    if dtype == np.float64 and not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")
    y = batch(np.random.default_rng(21), 140).astype(dtype)
    kw = dict(period=12) if variant == "seasonal" else {}
    for median in ("select", "sort"):
        own = clts.trend_test(y, variant=variant, device=device, median=median, **kw)
        for sg in (0, 16):
            r = clts.trend_test(y, variant=variant, device=device, median=median, wg=64,
                                lanes=1, items=0, subgroup=sg, **kw)
            for name in TREND_FIELDS:
                assert np.array_equal(getattr(r, name), getattr(own, name), equal_nan=True), \
                    (median, sg, name)


def test_plan_subgroup_per_device(device):
    """Only the Data Center GPU Max profile requires SIMD16 of mk_pairs; the attribute is
    rendered only then (CPU sources unchanged); a bad value names ``subgroup``."""

    from clts.runtime.programs import render
    from clts.trend.plan import Problem, make_plan
    if device.type == "cpu":
        assert make_plan(device, Problem(100, 1)).subgroup == 0
    with pytest.raises(ValueError, match="subgroup"):
        clts.trend_test(np.arange(10.0)[None], device=device, subgroup=12)
    params = dict(real="double", median="select", lanes=1, sample=2048)
    assert "intel_reqd" not in render("trend/pairs.cl.mako", dict(params, subgroup=0))
    assert "intel_reqd_sub_group_size(16)" in render("trend/pairs.cl.mako",
                                                     dict(params, subgroup=16))
    for name, emu in gpus_over_pocl().items():
        plan = make_plan(emu, Problem(100, 1))
        assert plan.subgroup == (16 if name == "intel-max-1550" else 0), name


@pytest.mark.gpu_layout
@pytest.mark.parametrize("variant", ["original", "hamed_rao", "yue_wang", "seasonal"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_interleaved_layout_gives_the_same_bits(device, variant, dtype):
    """``interleave=1`` (the GPU profiles': the chunk time-major, the slope rows interleaved by
    work-item) gives the bits of the device's own Plan: quickselect past the sampled bracket's
    threshold, the radix select and heapsort, NaNs, ties and zero slopes, wide exponents; a series per work-item and fewer work-items than series
    (``items=3``), and a work-group that rounds them past the chunk (``wg=4``)."""
    if dtype == np.float64 and not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")
    rng = np.random.default_rng(23)
    y = batch(rng, 140, b=11).astype(dtype)
    y[6] = np.nan
    y[6, :2] = 1.0                                       # too few valid values
    y[7] = rng.integers(-2, 3, 140)                      # many ties, most slopes zero
    y[8] = 3.0                                           # every slope zero
    y[9, 3:] = np.nan                                    # three slopes
    y[10, rng.random(140) < 0.5] = np.nan                # an even count of slopes or an odd
    y[10, ::7] = -y[10, ::7] * 1e30                      # a wide range of exponents
    kw = dict(period=12) if variant == "seasonal" else {}
    for median in ("select", "sort"):
        own = clts.trend_test(y, variant=variant, device=device, median=median, **kw)
        for layout in (dict(items=0, wg=64), dict(items=3, wg=1), dict(items=0, wg=4)):
            r = clts.trend_test(y, variant=variant, device=device, median=median, lanes=1,
                                interleave=1, **layout, **kw)
            for name in TREND_FIELDS:
                assert_same_across_programs(getattr(r, name), getattr(own, name), device,
                                            (median, layout, name), precision=dtype)


@pytest.mark.oclgrind
def test_tiny_interleaved(device):
    y = np.array([[1.0, 3, 2, np.nan, 5, 4, 6, 8], [2.0, 2, 1, 0, 1, -1, -2, -2],
                  [0.0, 1, np.nan, 1, 2, 2, 3, 1]])
    r = clts.trend_test(y, device=device, interleave=1, lanes=1, items=2, wg=1)
    for i in range(3):
        e = ref.trend_series(y[i])
        assert close(r.s[i], e["s"]) and close(r.slope[i], e["slope"], 1e-12)
        assert close(r.slope_low[i], e["slope_low"], 1e-12)


def test_plan_interleave_per_device(device):
    """CPU profiles keep a row per series (sources as before the interleaved layout); the GPU
    profiles interleave; a bad value names ``interleave``."""

    from clts.runtime.programs import render
    from clts.trend.plan import Problem, make_plan
    if device.type == "cpu":
        assert make_plan(device, Problem(100, 1)).interleave == 0
    with pytest.raises(ValueError, match="interleave"):
        clts.trend_test(np.arange(10.0)[None], device=device, interleave=2)
    params = dict(real="double", median="select", lanes=8, sample=2048, subgroup=0)
    assert render("trend/pairs.cl.mako", params) == render("trend/pairs.cl.mako",
                                                           dict(params, interleave=0))
    for name, emu in gpus_over_pocl().items():
        assert make_plan(emu, Problem(100, 1)).interleave == 1, name


def test_normal_distribution_without_scipy():
    """The normal CDF and quantile the base install uses (math.erfc, statistics.NormalDist)
    against scipy's, in both tails."""
    norm = pytest.importorskip("scipy.stats").norm
    z = np.concatenate([np.linspace(-38, 38, 2001), [0.0, 1e-300, -1e-12, np.nan]])
    got, want = ref.normal_cdf(z), norm.cdf(z)
    ok = np.isfinite(want)
    assert np.isnan(got[~ok]).all()
    assert np.allclose(got[ok], want[ok], rtol=1e-12, atol=1e-300)   # scipy flushes denormals
    assert isinstance(ref.normal_cdf(1.5), float) and ref.normal_cdf(1.5) == pytest.approx(
        norm.cdf(1.5), rel=1e-15)
    for q in (1e-300, 1e-12, 0.025, 0.05, 0.5, 0.9, 0.95, 0.975, 0.995, 1 - 1e-12):
        assert ref.normal_ppf(q) == pytest.approx(norm.ppf(q), rel=1e-13, abs=1e-13)
