"""clts.bfast_monitor with per-pixel covariates (``regressors`` shaped like ``y`` plus a last
axis of q) against R's bfastmonitor fitted one pixel at a time on each pixel's own data frame
(fixtures tests/data/bfast_preg_*.csv from bench/bfast_pixel_regressors_fixtures.R: the four
types, histories all / ROC / BP, NA covariates dropped by na.omit), and the statuses of
degenerate per-pixel designs."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import clts

DATA = Path(__file__).resolve().parent / "data"
#: the GPU profiles' layouts (one pixel per work-item, K work-items per matrix, date-major
#: scratch, R's boundary tabulated), forced on the CPU
ROWS = dict(version="multi", lanes=1, matrix="rows", scratch="time", bounds="table", wg=32,
            roc_wg=32)
#: the fused lanes per fixture setting: each setting builds a program of its own (its model,
#: history and process), so pinning the lanes costs no build; half the settings run the scalar
#: kernel, half 4 lanes of realN (the per-pixel columns are read by one vector load whatever
#: the lanes, no lane names; each process at the profile's lanes: tests/test_bfast_types.py).
#: The profile's 16 lanes (Intel's CPU runtime) built setting 0's program in 22 s from empty
#: caches, 4 lanes in 7 s, one in 2.7 s. tests/test_bfast_pixel_regressors_device.py builds
#: the same programs.
LANES = {0: 4, 1: 1, 2: 1, 3: 4, 4: 1, 5: 4}


@pytest.fixture(scope="module")
def rfix():
    import pandas as pd
    return pd.read_csv(DATA / "bfast_preg_input.csv"), pd.read_csv(DATA / "bfast_preg_output.csv")


def _run(inp, rows, device, dtype=np.float64, **kw):
    t = inp.time.values
    Y = inp[[f"y{p}" for p in range(8)]].values.astype(dtype)
    XR = inp[[f"x{p}" for p in range(8)]].values                    # shaped like y
    r0 = rows.iloc[0]
    return clts.bfast_monitor(Y, t, 2008.0, k=int(r0.order), freq=1.0, formula=r0.formula,
                              regressors={"xreg": XR}, type=r0.type, history=r0.history, detailed=True,
                              device=device, progress=False, dtype=dtype, **kw)


def _check(r, rows, t, tol):
    np.testing.assert_array_equal(r.breaks, rows.breaks.values)
    np.testing.assert_array_equal(r.status, 0)
    np.testing.assert_allclose(r.magnitudes, rows.magnitude.values, rtol=tol, atol=tol * 0.1)
    stat = np.nanmax(np.abs(r.mosum), axis=0)
    np.testing.assert_allclose(stat, rows.statistic.values, rtol=tol)
    assert r.diagnostics["critval"] == pytest.approx(rows.critval.values[0], rel=1e-7)
    if r.history_start is not None:
        np.testing.assert_allclose(t[r.history_start], rows.history_start.values, atol=1e-9)


def test_r_fixture(device, rfix):
    """Every setting, float64: breaks and history starts equal, magnitudes and statistics
    to 1e-6 (the fused version at the lanes of ``LANES``)."""
    if not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")
    inp, out = rfix
    for s, rows in out.groupby("setting"):
        _check(_run(inp, rows, device, lanes=LANES[s]), rows, inp.time.values, 1e-6)


@pytest.mark.parametrize("setting", [1, 5])
def test_r_fixture_gpu_layout(device, rfix, setting):
    """The GPU layouts (the multi version's rows kernels, date-major scratch) on the history
    "ROC" and the ME settings, float32 (ME's estimates in double where the device has it)."""
    inp, out = rfix
    rows = out[out.setting == setting]
    r = _run(inp, rows, device, np.float32, **ROWS)
    np.testing.assert_array_equal(r.breaks, rows.breaks.values)
    np.testing.assert_allclose(r.magnitudes, rows.magnitude.values, rtol=2e-3, atol=2e-4)


def test_degenerate_pixels(device):
    """Per-pixel designs that the pixel's dates make singular get status 2 (never a break);
    a covariate missing at every history date leaves no history (status 1); the others are
    those of the same covariate given as shared (4 lanes: the per-pixel call is the program of
    the fixture's first setting)."""
    rng = np.random.default_rng(4)
    N, P = 120, 6
    t = 2000 + np.arange(N) / 12
    x = rng.normal(size=N).cumsum()
    y = (1 + np.sin(2 * np.pi * t) + 0.2 * x)[:, None] + 0.05 * rng.normal(size=(N, P))
    xp = np.repeat(x[:, None], P, axis=1)
    xp[:, 1] = 3.0                      # constant: the intercept's column
    xp[:, 2] = 5 + 2 * t                # the trend's column
    xp[t < 2007, 3] = np.nan            # no history value left
    y[t >= 2008, 4] += 2.0
    r = clts.bfast_monitor(y, t, 2007.0, k=1, freq=1.0, regressors=xp[..., None],
                           device=device, progress=False, detailed=True, lanes=4)
    assert r.status.tolist() == [0, 2, 2, 1, 0, 0]
    assert r.breaks[1] == r.breaks[2] == r.breaks[3] == -2
    shared = clts.bfast_monitor(y[:, [0, 4, 5]], t, 2007.0, k=1, freq=1.0, regressors=x,
                                device=device, progress=False, detailed=True, lanes=4)
    np.testing.assert_array_equal(r.breaks[[0, 4, 5]], shared.breaks)
    np.testing.assert_allclose(r.magnitudes[[0, 4, 5]], shared.magnitudes, rtol=1e-4)
    # the coefficients in the covariate's own units (unscaled per pixel on the host)
    np.testing.assert_allclose(r.coef[:, [0, 4, 5]], shared.coef, rtol=1e-6, atol=1e-9)
    assert np.isnan(r.coef[:, 1]).all()
    assert r.breaks[4] >= 0


def test_layouts_and_forms(device):
    """Time last (``time_axis=-1``), the covariate a dict entry shaped like ``y`` next to a
    shared one, any memory layout: the same results (4 lanes); a device cube says what it
    takes."""
    rng = np.random.default_rng(5)
    N = 100
    t = 2000 + np.arange(N) / 12
    xp = rng.normal(size=(N, 2, 3)).cumsum(0)
    w = np.sin(t / 3)
    y = 2 + np.sin(2 * np.pi * t)[:, None, None] + 0.3 * xp + 0.1 * w[:, None, None] \
        + 0.05 * rng.normal(size=(N, 2, 3))
    y[t >= 2006, 0, 1] -= 1.5
    a = clts.bfast_monitor(y, t, 2005.5, k=1, freq=1.0, regressors={"w": w, "z": xp},
                           device=device, progress=False, lanes=4)
    yl = np.asfortranarray(np.moveaxis(y, 0, -1))
    b = clts.bfast_monitor(yl, t, 2005.5, k=1, freq=1.0, time_axis=-1,
                           regressors={"w": w, "z": np.moveaxis(xp, 0, -1).copy(order="F")},
                           device=device, progress=False, lanes=4)
    np.testing.assert_array_equal(a.breaks, b.breaks)
    np.testing.assert_allclose(a.magnitudes, b.magnitudes, rtol=1e-6)
    assert a.breaks[0, 1] >= 0 and a.diagnostics["n_coef"] == 6
    # a 2-D array shaped like y is [dates, q] (17 shared covariates: too many), with the hint
    with pytest.raises(ValueError, match=r"x\[\.\.\., None\]"):
        clts.bfast_monitor(np.zeros((N, 17)), t, 2005.5, k=1, freq=1.0,
                           regressors=np.zeros((N, 17)))
    import pyopencl.array as cla
    yd = cla.to_device(device.queue, np.ascontiguousarray(y, np.float32))
    with pytest.raises(TypeError, match="host cube"):
        clts.bfast_monitor(yd, t, 2005.5, k=1, freq=1.0, regressors=xp[..., None],
                           device=device)
