"""Per-pixel covariates given as device arrays with a device cube (``clts.bfast.pixel_device``):
``bfast_monitor`` on R's fixtures (tests/data/bfast_preg_*.csv, as
tests/test_bfast_pixel_regressors.py: the four types, histories all / ROC / BP, NA covariates)
and ``bfast_breaks`` on the data of tests/test_bfast_regressors.py's per-pixel test, equal to
the host cube's results, with no host transfer, map or wait on a repeat call
(tests/transfers.py). Sizes, models and lanes are those of the host tests (a device cube with
regressors takes no detailed outputs, so its monitoring programs are not the host tests' own
detailed ones: the cheap lanes of ``LANES`` and three settings keep them few).

The device path differs from the host cube's in how the covariates are read, centred and laid
out (``pixel_regressors.cl.mako``, ``device.cl.mako``) and in the history's kernels (ROC, BP),
not in the monitoring process (``clts/bfast/device.py`` has no step of its own per process): the
fixture's settings of the three histories and both formulas (0, 1, 2) run here, those of the
other processes (CUSUM, RE, ME: 3, 4, 5) against R in
tests/test_bfast_pixel_regressors.py::test_r_fixture, each process on device arrays in
tests/test_bfast_types.py::test_types_under_an_emulated_gpu_and_on_device_arrays (over pocl) and
ME's GPU layout on device covariates in ``test_monitor_gpu_layout_device`` below."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import clts
from test_bfast_pixel_regressors import LANES
from transfers import host_traffic

DATA = Path(__file__).resolve().parent / "data"
ROWS = dict(version="multi", lanes=1, matrix="rows", scratch="time", bounds="table", wg=32,
            roc_wg=32)


def _dev(device, a):
    import pyopencl.array as cla
    return cla.to_device(device.queue, np.ascontiguousarray(a))


def _quiet_repeat(fn, *args, **kw):
    """fn(*args) once, then again under the traffic counter: (second result, its count)."""
    fn(*args, **kw)
    with host_traffic() as tr:
        r = fn(*args, **kw)
    return r, tr


@pytest.fixture(scope="module")
def rfix():
    import pandas as pd
    return pd.read_csv(DATA / "bfast_preg_input.csv"), pd.read_csv(DATA / "bfast_preg_output.csv")


def _monitor_pair(device, inp, rows, dtype, **kw):
    t = inp.time.values
    Y = inp[[f"y{p}" for p in range(8)]].values.astype(dtype)
    XR = inp[[f"x{p}" for p in range(8)]].values
    r0 = rows.iloc[0]
    kw = dict(k=int(r0.order), freq=1.0, formula=r0.formula, type=r0.type, history=r0.history,
              device=device, progress=False, dtype=dtype, **kw)
    host = clts.bfast_monitor(Y, t, 2008.0, regressors={"xreg": XR}, **kw)
    yd, xd = _dev(device, Y), _dev(device, XR)
    dev, tr = _quiet_repeat(clts.bfast_monitor, yd, t, 2008.0, regressors={"xreg": xd}, **kw)
    return host, dev, tr


#: the fixture's settings run on device arrays: histories all / ROC / BP, with and without a
#: trend (the module docstring says where the other processes run)
DEVICE_SETTINGS = (0, 1, 2)


def test_monitor_r_fixture_device(device, rfix):
    """The settings of ``DEVICE_SETTINGS``, float64, at the host test's lanes: the device cube's
    breaks, history starts and statuses those of the host cube and R's, magnitudes the host
    cube's to 1e-9; a repeat call moves nothing."""
    if not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")
    inp, out = rfix
    t = inp.time.values
    for s in DEVICE_SETTINGS:
        rows = out[out.setting == s]
        host, d, tr = _monitor_pair(device, inp, rows, np.float64, lanes=LANES[s])
        assert tr.total == 0, tr.report()
        d = d.to_numpy()
        np.testing.assert_array_equal(d.breaks, rows.breaks.values, err_msg=str(s))
        np.testing.assert_array_equal(d.breaks, host.breaks)
        np.testing.assert_array_equal(d.status, host.status)
        np.testing.assert_allclose(d.magnitudes, host.magnitudes, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(d.magnitudes, rows.magnitude.values, rtol=1e-6, atol=1e-7)
        if host.history_start is not None:
            np.testing.assert_array_equal(d.history_start, host.history_start)
            np.testing.assert_allclose(t[d.history_start], rows.history_start.values, atol=1e-9)


@pytest.mark.parametrize("setting", [1, 5])
def test_monitor_gpu_layout_device(device, rfix, setting):
    """The GPU layouts (rows kernels, date-major scratch), float32: as the host cube."""
    inp, out = rfix
    host, d, tr = _monitor_pair(device, inp, out[out.setting == setting], np.float32, **ROWS)
    assert tr.total == 0, tr.report()
    np.testing.assert_array_equal(d.breaks.get(), host.breaks)
    np.testing.assert_allclose(d.magnitudes.get(), host.magnitudes, rtol=1e-5, atol=1e-6)


def test_monitor_device_forms_and_degenerate(device):
    """An integer cube with nodata, two chunks, a covariate constant (status 2) or missing at
    every history date (status 1), NaN covariate values: the host cube's results (the model
    and lanes of the fixture's first setting: its program). numpy per-pixel covariates
    with a device cube, device ones with a host cube (bfast01 too), a misshapen device array:
    errors naming what they take."""
    if not device.fp64:
        pytest.skip("the model of the float64 fixture test")
    rng = np.random.default_rng(4)
    N, P = 120, 6
    t = 2000 + np.arange(N) / 12
    x = rng.normal(size=N).cumsum()
    y = (1 + np.sin(2 * np.pi * t) + 0.2 * x)[:, None] + 0.05 * rng.normal(size=(N, P))
    xp = np.repeat(x[:, None], P, axis=1) + 0.1 * rng.normal(size=(N, P))
    xp[:, 1] = 3.0
    xp[t < 2007, 3] = np.nan
    xp[[5, 70], 0] = np.nan
    y[t >= 2008, 4] += 2.0
    yi = np.where(rng.random((N, P)) < 0.05, -1, np.round(y * 100)).astype(np.int16)
    yf = np.where(yi == -1, np.nan, yi.astype(np.float64))
    kw = dict(k=1, freq=1.0, formula="response ~ trend + harmon + z", type="OLS-MOSUM",
              history="all", progress=False, device=device, lanes=LANES[0])
    host = clts.bfast_monitor(yf, t, 2007.0, regressors={"z": xp}, **kw)
    assert host.status.tolist()[1:4] == [2, 0, 1]
    for extra in ({}, dict(chunk_bytes=N * 8 * 4, wg=1)):       # one, two chunks
        d = clts.bfast_monitor(_dev(device, yi), t, 2007.0, regressors={"z": _dev(device, xp)},
                               nodata=-1, dtype=np.float64, **kw, **extra)
        np.testing.assert_array_equal(d.status.get(), host.status)
        np.testing.assert_array_equal(d.breaks.get(), host.breaks)
        np.testing.assert_allclose(d.magnitudes.get(), host.magnitudes, rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(d.valids.get(), host.valids)
    yd = _dev(device, y)
    with pytest.raises(TypeError, match="device arrays"):
        clts.bfast_monitor(yd, t, 2007.0, k=1, freq=1.0, regressors=xp[..., None],
                           device=device)
    with pytest.raises(TypeError, match="device cube"):
        clts.bfast_monitor(y, t, 2007.0, k=1, freq=1.0, regressors=_dev(device, xp[..., None]),
                           device=device)
    with pytest.raises(TypeError, match="device cube"):
        clts.bfast01(y, t, freq=1.0, order=1, regressors={"z": _dev(device, xp)},
                     device=device)
    with pytest.raises(ValueError, match="shaped like y"):
        clts.bfast_monitor(yd, t, 2007.0, k=1, freq=1.0,
                           regressors=_dev(device, xp[:-1, :, None]), device=device)


def _breaks_data():
    """The host tests' per-pixel data, with NaN covariates in pixel 1."""
    from test_bfast_regressors import pixel_breaks_data
    t, y, x = pixel_breaks_data()
    x[[3, 40, 41], 1] = np.nan
    return t, y, x


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_breaks_device(device, dtype):
    """bfast_breaks: breakpoints, RSS, statuses (the constant covariate's pixel 4) and the
    magnitudes of the host cube, the NaN covariate values missing; no host traffic on a repeat
    call; a dict of a device column and a shared numpy one; the confidence intervals (host,
    on first access) those of the host cube."""
    if dtype == np.float64 and not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")
    t, y, x = _breaks_data()
    kw = dict(freq=1, order=1, breaks=3, progress=False, device=device, dtype=dtype)
    host = clts.bfast_breaks(y, t, regressors=x[:, :, None], **kw)
    d, tr = _quiet_repeat(clts.bfast_breaks, _dev(device, y.astype(dtype)), t,
                          regressors=_dev(device, x[:, :, None]), **kw)
    assert tr.total == 0, tr.report()
    d = d.to_numpy()
    assert d.status.tolist() == [0] * 6 + [4]
    np.testing.assert_array_equal(d.nobs, host.nobs)
    np.testing.assert_array_equal(d.all_breakpoints, host.all_breakpoints)
    np.testing.assert_array_equal(d.n_breaks, host.n_breaks)
    tol = 1e-9 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(d.rss, host.rss, rtol=tol)
    np.testing.assert_allclose(d.magnitudes, host.magnitudes, rtol=tol, atol=tol * 1e-3)
    w = np.sin(t / 3)
    mixed = clts.bfast_breaks(_dev(device, y.astype(dtype)), t,
                              regressors={"a": _dev(device, x), "w": w}, confint=0.9, **kw)
    want = clts.bfast_breaks(y, t, regressors={"a": x, "w": w}, confint=0.9, **kw)
    np.testing.assert_array_equal(mixed.all_breakpoints.get(), want.all_breakpoints)
    np.testing.assert_allclose(mixed.magnitudes.get(), want.magnitudes, rtol=tol, atol=tol * 1e-3)
    np.testing.assert_array_equal(mixed.ci_lower, want.ci_lower)
    np.testing.assert_array_equal(mixed.ci_upper, want.ci_upper)


def test_breaks_device_chunks(device):
    """Three chunks of pixels (each chunk's covariate columns gathered on the device): the
    one-chunk results."""
    t, y, x = _breaks_data()
    y3, x3 = np.tile(y, (1, 3)), np.tile(x, (1, 3))[:, :, None]
    dtype = np.float64 if device.fp64 else np.float32
    kw = dict(freq=1, order=1, breaks=3, progress=False, device=device, dtype=dtype)
    one = clts.bfast_breaks(_dev(device, y3.astype(dtype)), t, regressors=_dev(device, x3),
                            **kw).to_numpy()
    three = clts.bfast_breaks(_dev(device, y3.astype(dtype)), t, regressors=_dev(device, x3),
                              chunk_bytes=1, **kw).to_numpy()
    assert one.status.tolist() == ([0] * 6 + [4]) * 3
    np.testing.assert_array_equal(three.all_breakpoints, one.all_breakpoints)
    np.testing.assert_array_equal(three.status, one.status)
    np.testing.assert_allclose(three.magnitudes, one.magnitudes, rtol=1e-12)


def test_breaks_device_gpu_plans(device):
    """The GPU profiles' breakpoint kernels (split rotation, scan; those the host per-pixel test
    builds) over pocl read the device-made columns: the host cube's results."""
    if "pocl" not in device.slug or not device.fp64:
        pytest.skip("the GPU profiles run over pocl")
    from emulated import gpus_over_pocl
    t, y, x = _breaks_data()
    kw = dict(freq=1, order=1, breaks=3, progress=False)
    for name, emu in gpus_over_pocl().items():
        if name not in ("h100", "mi210"):
            continue
        a = clts.bfast_breaks(y, t, regressors=x[:, :, None], device=emu, **kw)
        b = clts.bfast_breaks(_dev(emu, y), t, regressors=_dev(emu, x[:, :, None]), device=emu,
                              **kw).to_numpy()
        np.testing.assert_array_equal(b.all_breakpoints, a.all_breakpoints, err_msg=name)
        np.testing.assert_array_equal(b.status, a.status, err_msg=name)
        np.testing.assert_allclose(b.rss, a.rss, rtol=1e-12, err_msg=name)
        np.testing.assert_allclose(b.magnitudes, a.magnitudes, rtol=1e-9, atol=1e-12,
                                   err_msg=name)
