"""clts.bfast_breaks with model formulas beyond trend + harmon: covariates shared by all
pixels (``regressors=``) and the intercept-only model, against R's strucchange::breakpoints on
bfast::bfastpp's data frame (fixtures tests/data/bfast_reg_*.csv, bench/bfast_regressors_fixtures.R,
strucchange 1.5-3, bfast 1.7.2), setting 5 with a covariate per pixel (NA on a few dates of one
pixel's: those values missing). Tolerances as tests/test_bfast_breaks.py: R's RSS to 1e-5."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import clts
from clts.bfast import breakpoints_reference as bref
from clts.bfast.common import trend_scaling
from clts.bfast.regressors import model_terms, parse_formula

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def rfix():
    import pandas as pd
    return (pd.read_csv(DATA / "bfast_reg_input.csv"), pd.read_csv(DATA / "bfast_reg_settings.csv"),
            pd.read_csv(DATA / "bfast_reg_output.csv", keep_default_na=False))


def _h(v):
    return int(v) if v >= 1 else float(v)


def test_r_fixture(device, rfix):
    if not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")
    inp, settings, out = rfix
    t = inp.time.values
    for _, s in settings.iterrows():
        if s.setting < 5:
            Y = inp[[f"y{p}" for p in range(6)]].values
            reg = {"xreg1": inp.cov1.values, "xreg2": inp.cov2.values}
            valid = ~np.isnan(Y)
        else:           # per pixel: y [N, 6], its covariate [N, 6]
            Y = inp[[f"yp{p}" for p in range(6)]].values
            cp = inp[[f"cp{p}" for p in range(6)]].values
            reg = {"xreg1": cp, "xreg2": inp.cov2.values}
            valid = ~np.isnan(Y) & ~np.isnan(cp)
        r = clts.bfast_breaks(Y, t, freq=1, order=int(s.order), h=_h(s.h), breaks=int(s.breaks),
                              regressors=reg, formula=s.formula, device=device, progress=False)
        K = len(parse_formula(s.formula)) + 1 + (2 * int(s.order) - 1 if s.order else 0)
        assert r.diagnostics["n_coef"] == K
        for p in range(Y.shape[1]):
            rows = out[(out.setting == s.setting) & (out.pixel == p)]
            idx = np.nonzero(valid[:, p])[0]
            assert r.nobs[p] == rows.nobs.iloc[0]
            assert r.n_breaks[p] == rows.selected.iloc[0], (s.formula, p)
            for _, row in rows.iterrows():
                m = int(row.m)
                np.testing.assert_allclose(r.rss[m, p], row.RSS, rtol=1e-5)
                np.testing.assert_allclose(r.bic[m, p], row.BIC, rtol=1e-5, atol=1e-6)
                if m:
                    got = r.all_breakpoints[m * (m - 1) // 2:m * (m + 1) // 2, p]
                    want = idx[np.array(row.breakpoints.split(), int) - 1]
                    np.testing.assert_array_equal(got, want, err_msg=f"{s.formula} pixel {p} m={m}")


def test_reference_and_float32(device, rfix):
    """The numpy reference on the same design, and float32 finds R's breaks."""
    inp, _, out = rfix
    t = inp.time.values
    Y = inp[[f"y{p}" for p in range(6)]].values
    reg = np.column_stack([inp.cov1.values, inp.cov2.values])
    f = "response ~ trend + harmon + x1 + x2"
    terms = model_terms(f, 3, True, reg, t.size)
    c, sc = trend_scaling(t, t.size)
    X = terms.design(t, 1.0, c, sc)
    r = clts.bfast_breaks(Y, t, freq=1, order=3, h=0.2, breaks=2, regressors=reg, formula=f,
                          dtype=np.float32, device=device, progress=False)
    rows = out[out.setting == 4]
    for p in range(Y.shape[1]):
        ref = bref.breakpoints_pixel(X, Y[:, p], h=0.2, breaks=2)
        assert r.n_breaks[p] == bref.select(ref) == rows[rows.pixel == p].selected.iloc[0]
        np.testing.assert_allclose(r.rss[:, p], ref["rss"], rtol=2e-3)


def test_intercept_only_is_plain(device):
    """``formula="response ~ 1"`` is ``order=0, trend=False``; a 1-D regressor is ``x1``."""
    rng = np.random.default_rng(1)
    t = 2000 + np.arange(80) / 23
    y = rng.normal(size=(80, 3)) * 0.1
    y[40:, 0] += 1.0
    a = clts.bfast_breaks(y, t, freq=1, formula="response ~ 1", device=device, progress=False)
    b = clts.bfast_breaks(y, t, freq=1, order=0, trend=False, device=device, progress=False)
    np.testing.assert_array_equal(a.all_breakpoints, b.all_breakpoints)
    np.testing.assert_array_equal(a.rss, b.rss)
    assert a.diagnostics["n_coef"] == 1 and a.breakpoints[0, 0] == 39
    x = np.linspace(0, 1, 80) ** 2
    c = clts.bfast_breaks(y, t, freq=1, order=0, regressors=x, device=device, progress=False)
    d = clts.bfast_breaks(y, t, freq=1, formula="~ trend + x1", regressors=x, device=device,
                          progress=False)
    np.testing.assert_array_equal(c.rss, d.rss)
    assert c.diagnostics["n_coef"] == 3


def test_scaling_invariance(device):
    """A covariate in other units (x 1e4 + 300) gives the same breaks and RSS."""
    rng = np.random.default_rng(2)
    t = 2000 + np.arange(100) / 23
    x = rng.normal(size=100).cumsum()
    y = (0.5 * x + np.sin(2 * np.pi * t))[:, None] + 0.05 * rng.normal(size=(100, 4))
    y[50:, :2] += 0.5
    a = clts.bfast_breaks(y, t, freq=1, order=1, regressors=x, device=device, progress=False)
    b = clts.bfast_breaks(y, t, freq=1, order=1, regressors=x * 1e4 + 300, device=device,
                          progress=False)
    np.testing.assert_array_equal(a.all_breakpoints, b.all_breakpoints)
    np.testing.assert_allclose(a.rss, b.rss, rtol=1e-8)
    np.testing.assert_allclose(a.magnitudes, b.magnitudes, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("kw, msg", [
    (dict(formula="response ~ trend + foo"), "foo"),
    (dict(formula="response ~ trend * harmon"), "not a term"),
    (dict(formula="response ~ trend - 1"), "intercept"),
    (dict(formula="y ~ trend"), "response"),
    (dict(formula=3), "string"),
    (dict(formula="~ harmon", order=0), "order=0"),
    (dict(regressors=np.ones((5, 2))), "rows"),
    (dict(regressors=np.ones((60, 3, 2))), "per pixel"),
    (dict(regressors=np.ones(60)), "constant"),
    (dict(regressors=np.r_[np.inf, np.arange(59.0)]), "finite"),
    (dict(regressors={"trend": np.arange(60.0)}), "usable name"),
    (dict(regressors={"a": np.arange(5.0)}), "one value per date"),
])
def test_bad_model(kw, msg):
    y = np.zeros((60, 2))
    err = TypeError if msg == "string" else ValueError
    with pytest.raises(err, match=msg):
        clts.bfast_breaks(y, np.arange(60.0) / 12, freq=1, **kw)


def test_collinear_regressor_dropped(device):
    """A regressor that is the trend again is dropped with a warning, as a harmonic is."""
    t = 2000 + np.arange(60) / 12
    y = np.sin(2 * np.pi * t)[:, None] + np.r_[np.zeros(30), np.ones(30)][:, None]
    with pytest.warns(UserWarning, match="rank-deficient"):
        r = clts.bfast_breaks(y, t, freq=1, order=1, regressors={"tt": 2 * t + 1},
                              device=device, progress=False)
    assert r.diagnostics["dropped_columns"] == ["tt"]
    assert r.n_breaks[0] == 1


def test_xarray_formula_sizes(device):
    """clts.xarray.bfast_breaks sizes its break axes from the formula's columns."""
    xr = pytest.importorskip("xarray")
    import clts.xarray as cx
    t = 2000 + np.arange(100) / 23
    y = np.random.default_rng(0).normal(size=(100, 3)) * 0.1
    y[50:, 0] += 1
    da = xr.DataArray(y, dims=("time", "x"), coords={"time": t})
    ds = cx.bfast_breaks(da, freq=1, formula="response ~ 1", h=10, breaks=8, device=device)
    want = clts.bfast_breaks(y, t, freq=1, formula="response ~ 1", h=10, breaks=8,
                             device=device, progress=False)
    assert ds.sizes["break"] == 8
    np.testing.assert_array_equal(ds.n_breaks.values, want.n_breaks)


def pixel_breaks_data():
    """(dates, y [100, 7], a covariate per pixel [100, 7]): breaks in pixels 0-2, 10 % NaN in y,
    pixel 6's covariate constant (rank-deficient with the intercept)."""
    rng = np.random.default_rng(5)
    N, M = 100, 7
    t = 2000 + np.arange(N) / 23
    x = rng.normal(size=(N, M)).cumsum(axis=0)
    y = 0.3 * np.sin(2 * np.pi * t)[:, None] + 0.4 * x + 0.05 * rng.normal(size=(N, M))
    y[50:, :3] += 0.3
    y[rng.random((N, M)) < 0.1] = np.nan
    x[:, 6] = 2.0
    return t, y, x


def test_per_pixel_regressors(device):
    """Covariates per pixel: y's shape + (q,) or a dict of arrays shaped like y, any time axis;
    the same covariate in every pixel is the shared one; each pixel equals the reference on
    its own design (split / scan kernels of the GPU profiles too, over pocl); a pixel whose
    covariate is constant is rank-deficient (status 4); a device cube is a TypeError."""
    from emulated import gpus_over_pocl
    from clts.bfast.common import design_matrix
    t, y, x = pixel_breaks_data()
    N, M = y.shape
    kw = dict(freq=1, order=1, breaks=3, progress=False)
    r = clts.bfast_breaks(y, t, regressors=x[:, :, None], device=device, **kw)
    assert r.status.tolist() == [0] * 6 + [4]
    rt = clts.bfast_breaks(np.ascontiguousarray(y.T), t, time_axis=1,
                           regressors={"rain": np.ascontiguousarray(x.T)}, device=device, **kw)
    np.testing.assert_array_equal(rt.all_breakpoints, r.all_breakpoints)
    c, sc = trend_scaling(t, N)
    X = design_matrix(t, 1, 1.0, True, c, sc)
    for p in range(6):
        ref = bref.breakpoints_pixel(np.column_stack([X, x[:, p]]), y[:, p], h=0.15, breaks=3)
        assert r.n_breaks[p] == bref.select(ref)
        np.testing.assert_allclose(r.rss[:, p], ref["rss"], rtol=1e-9)
    same = clts.bfast_breaks(y, t, regressors=np.repeat(x[:, :1, None], M, axis=1),
                             device=device, **kw)
    shared = clts.bfast_breaks(y, t, regressors=x[:, 0], device=device, **kw)
    np.testing.assert_array_equal(same.all_breakpoints, shared.all_breakpoints)
    np.testing.assert_allclose(same.rss, shared.rss, rtol=1e-12)
    np.testing.assert_allclose(same.magnitudes, shared.magnitudes, rtol=1e-9, atol=1e-12)
    if "pocl" in device.slug:        # GPU profiles (split rotation kernel, scan) over pocl
        for name, emu in gpus_over_pocl().items():
            if name in ("h100", "mi210", "intel-max-1550"):
                g = clts.bfast_breaks(y, t, regressors=x[:, :, None], device=emu, **kw)
                np.testing.assert_array_equal(g.all_breakpoints, r.all_breakpoints, err_msg=name)
                np.testing.assert_allclose(g.rss, r.rss, rtol=1e-9, err_msg=name)
    with pytest.raises(ValueError, match="per pixel"):
        clts.bfast_breaks(y, t, regressors=x[:, :, None, None], device=device, **kw)


def test_nan_regressor_is_a_missing_value(device):
    """A NaN covariate value makes that value of y missing (R's na.omit of the frame)."""
    rng = np.random.default_rng(6)
    N = 90
    t = 2000 + np.arange(N) / 23
    x = rng.normal(size=N).cumsum()
    y = (0.3 * x)[:, None] + 0.05 * rng.normal(size=(N, 3))
    y[45:, 0] += 0.5
    xn = x.copy()
    xn[[3, 40, 41]] = np.nan
    a = clts.bfast_breaks(y, t, freq=1, order=1, regressors=xn, device=device, progress=False)
    y2 = y.copy()
    y2[[3, 40, 41]] = np.nan
    b = clts.bfast_breaks(y2, t, freq=1, order=1, regressors=x, device=device, progress=False)
    np.testing.assert_array_equal(a.nobs, [N - 3] * 3)
    np.testing.assert_array_equal(a.all_breakpoints, b.all_breakpoints)
    np.testing.assert_allclose(a.rss, b.rss, rtol=1e-9)


def test_device_cube_shared_regressors(device):
    """A device cube takes shared covariates (the same breaks and magnitudes as the host
    cube); per-pixel ones are refused, naming the host cube."""
    import pyopencl.array as cla
    rng = np.random.default_rng(10)
    N, M = 120, 8
    t = 2000 + np.arange(N) / 23
    x = rng.normal(size=N).cumsum()
    y = 0.3 * x[:, None] + 0.05 * rng.normal(size=(N, M))
    y[60:, :4] += 0.4
    kw = dict(freq=1, order=1, device=device, progress=False)
    a = clts.bfast_breaks(y, t, regressors=x, **kw)
    yd = cla.to_device(device.queue, np.ascontiguousarray(y))
    b = clts.bfast_breaks(yd, t, regressors=x, **kw)
    np.testing.assert_array_equal(a.all_breakpoints, b.all_breakpoints.get())
    np.testing.assert_allclose(a.magnitudes, b.magnitudes.get(), rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="host cube"):
        clts.bfast_breaks(yd, t, regressors=np.repeat(x[:, None, None], M, axis=1), **kw)
