"""BFAST on device-resident cubes (``pyopencl.array.Array`` in, device arrays out): the same
results as the numpy path, and no host transfer, map or wait inside the call (tests/transfers.py
counts them). The first call on new dates may write its small constants (design matrix,
boundary, segment table) with non-blocking writes; a repeat call transfers nothing."""
from __future__ import annotations

import numpy as np
import pytest

import clts
from emulated import gpus_over_pocl
from transfers import host_traffic

MONITOR_FIELDS = ("breaks", "break_dates", "means", "magnitudes", "valids", "status",
                  "history_start", "mosum", "bounds", "prediction", "coef", "sigma")


def _cube(seed=0, N=150, M=21, n_hist=100, dtype=np.float64):
    rng = np.random.default_rng(seed)
    t = np.arange(N) * 16.0 + 3
    y = 3 + np.sin(2 * np.pi * t[:, None] / 365) + 0.3 * rng.standard_normal((N, M))
    y -= (np.arange(N)[:, None] >= rng.integers(n_hist, N, M)) * rng.uniform(0, 3, M)
    y[:40, : M // 2] += (np.arange(40)[:, None] < 20) * 3.0      # a break in the history (BP)
    y[rng.random((N, M)) < 0.1] = np.nan
    return y.astype(dtype), t, t[n_hist]


def _to_device(dev, a):
    import pyopencl.array as cla
    d = cla.to_device(dev.queue, np.ascontiguousarray(a))
    dev.queue.finish()
    return d


def _device_call(fn, *args, **kw):
    """fn(*args) twice under the traffic counter: (result of the second call, both counts)."""
    with host_traffic() as first:
        fn(*args, **kw)
    with host_traffic() as again:
        r = fn(*args, **kw)
    return r, first, again


def _assert_quiet(first, again):
    # the first call: at most non-blocking writes of its constants; a repeat: nothing
    assert first.waits == 0 and first.maps == 0, first.report()
    assert all(k == "transfer" and "write" in n for k, n, _ in first.calls), first.report()
    assert again.total == 0, again.report()


def _same_monitor(a, b):
    bn = clts.to_numpy(b)
    for name in MONITOR_FIELDS:
        x, z = getattr(a, name), getattr(bn, name)
        assert (x is None) == (z is None), name
        if x is None:
            continue
        if name != "break_dates":
            assert not isinstance(z, np.ndarray) or z.dtype == np.asarray(x).dtype, name
        assert np.array_equal(np.asarray(x), np.asarray(z), equal_nan=True), name
    assert a.diagnostics == bn.diagnostics


CASES = [(np.float64, "all", None), (np.float64, "ROC", None), (np.float64, "BP", None),
         (np.float64, "date", None), (np.float32, "ROC", None), (np.float32, "BP", None),
         (np.int16, "ROC", -9999), (np.uint8, "date", 255)]


@pytest.mark.parametrize("dtype,history,nodata", CASES)
@pytest.mark.parametrize("chunked", [False, True])
def test_monitor_device_same_as_numpy_without_host_traffic(device, dtype, history, nodata,
                                                           chunked):
    y, t, start = _cube(1)
    if nodata is not None:
        scale = 100 if dtype == np.int16 else 20
        y = np.where(np.isnan(y), nodata, np.clip(np.round(y * scale), 0, 254)).astype(dtype)
    hist = t[12] if history == "date" else history
    # one plan for both (4 lanes, a pixel group of one: the chunked case's): the chunked and
    # the one-piece calls share their programs and local sizes
    kw = dict(device=device, k=1, history=hist, nodata=nodata, progress=False, detailed=True,
              lanes=4, wg=1)
    if chunked:     # several chunks: gathered, then copied into the outputs on the device
        kw.update(chunk_bytes=y.shape[0] * 16 * 6)
    a = clts.bfast_monitor(y, t, start, **kw)
    yd = _to_device(device, y)
    b, first, again = _device_call(clts.bfast_monitor, yd, t, start, **kw)
    _assert_quiet(first, again)
    assert isinstance(b.breaks, type(yd)) and b.breaks.shape == a.breaks.shape
    assert isinstance(b.coef, type(yd)) and b.coef.shape == a.coef.shape
    _same_monitor(a, b)


def test_monitor_device_reads_in_place_and_views(device):
    """One chunk whose rows need no padding is read in place; a view with an offset, a 3-D
    cube and magnitudes=False work as well."""
    import pyopencl.array as cla
    y, t, start = _cube(2, M=32)
    kw = dict(device=device, k=2, progress=False, lanes=4)
    a = clts.bfast_monitor(y, t, start, **kw)
    yd = _to_device(device, y)
    b, first, again = _device_call(clts.bfast_monitor, yd, t, start, **kw)
    _assert_quiet(first, again)
    _same_monitor(a, b)
    big = _to_device(device, np.concatenate([y[:1], y]))
    view = big[1:]                  # an element offset
    assert view.offset and view.flags.c_contiguous
    _same_monitor(a, clts.bfast_monitor(view, t, start, **kw))
    y3 = y.reshape(y.shape[0], 4, 8)
    a3 = clts.bfast_monitor(y3, t, start, magnitudes=False, **kw)
    b3 = clts.bfast_monitor(cla.to_device(device.queue, y3), t, start, magnitudes=False, **kw)
    assert b3.breaks.shape == (4, 8) and b3.magnitudes is None
    _same_monitor(a3, b3)


@pytest.mark.parametrize("gpu", ["h100", "mi100"])
def test_monitor_device_under_emulated_gpus(gpu):
    """The GPU Plans (time-major scratch, "rows" matrices, tabulated bounds, discrete-memory
    transfers for numpy input) over pocl: the device path moves nothing either."""
    emu = gpus_over_pocl().get(gpu)
    if emu is None:
        pytest.skip("no pocl device here")
    y, t, start = _cube(3, dtype=np.float32)
    for history in ("all", "ROC", "BP"):
        kw = dict(device=emu, k=1, history=history, progress=False, detailed=True)
        a = clts.bfast_monitor(y, t, start, **kw)
        b, first, again = _device_call(clts.bfast_monitor, _to_device(emu, y), t, start, **kw)
        _assert_quiet(first, again)
        _same_monitor(a, b)


def test_monitor_device_argument_errors(device):
    import pyopencl.array as cla
    y, t, start = _cube(4)
    yd = _to_device(device, y)
    with pytest.raises(ValueError, match="time_axis"):
        clts.bfast_monitor(yd, t, start, device=device, time_axis=1)
    with pytest.raises(ValueError, match="dates"):
        clts.bfast_monitor(yd, None, start, device=device)
    with pytest.raises(TypeError, match="out="):
        clts.bfast_monitor(yd, t, start, device=device, out={})
    with pytest.raises(TypeError, match="dtype"):
        clts.bfast_monitor(cla.to_device(device.queue, np.zeros(y.shape, np.int64)), t, start,
                           device=device, nodata=-1)
    with pytest.raises(ValueError, match="C-contiguous"):
        clts.bfast_monitor(_to_device(device, np.concatenate([y, y], 1))[:, ::2], t, start,
                           device=device)


def test_monitor_device_result_fields_lazy(device):
    """break_dates and diagnostics are read from the device on first access; to_numpy gives
    numpy arrays everywhere and keeps the original's device arrays."""
    y, t, start = _cube(5)
    dates = np.datetime64("2000-01-01") + t.astype("timedelta64[D]")
    yd = _to_device(device, y)
    with host_traffic() as tr:
        r = clts.bfast_monitor(yd, dates, dates[100], device=device, k=1, progress=False)
    assert tr.total <= 2 and tr.waits == 0
    with host_traffic() as tr:
        bd = r.break_dates
    assert tr.transfers == 1 and bd.dtype.kind == "M"
    assert r.diagnostics["n_history_dates"] == 100
    n = r.to_numpy()
    assert isinstance(n.breaks, np.ndarray) and not isinstance(r.breaks, np.ndarray)
    assert not hasattr(n, "_keep") or n.__dict__.get("_keep") is None


# ------------------------------------------------------------------------- bfast_breaks
def _breaks_cube(seed=1, N=100, M=19, dtype=np.float64):
    rng = np.random.default_rng(seed)
    t = 2000 + np.arange(N) / 23
    y = np.sin(2 * np.pi * t)[:, None] + 0.1 * rng.standard_normal((N, M))
    y[t >= 2002, ::2] += 1.0
    y[t >= 2003.5, ::3] -= 1.5
    y[rng.random((N, M)) < 0.1] = np.nan
    y[:, 5] = np.nan                         # a pixel without values (status 1)
    return y.astype(dtype), t


EXACT = ("n_breaks", "breakpoints", "break_dates", "rss", "nobs", "h", "status",
         "all_breakpoints", "ci_lower", "ci_upper")


def _same_breaks(a, b, rtol):
    bn = clts.to_numpy(b)
    for name in EXACT:
        x, z = getattr(a, name), getattr(bn, name)
        assert (x is None) == (z is None), name
        if x is not None:
            assert np.array_equal(np.asarray(x), np.asarray(z), equal_nan=True), name
    # BIC / LWZ: the device's log and pow against numpy's (a few ulps); magnitudes: the
    # segment fits by Cholesky in float64 against numpy's LU
    for name in ("bic", "lwz", "magnitudes"):
        x, z = getattr(a, name), getattr(bn, name)
        if x is None:
            assert z is None
            continue
        assert z.dtype == np.float64
        assert np.array_equal(np.isnan(x), np.isnan(z)), name
        scale = np.max(np.abs(x[np.isfinite(x)]), initial=1.0)
        np.testing.assert_allclose(z, x, rtol=rtol, atol=rtol * scale, err_msg=name)
    assert a.diagnostics == bn.diagnostics


@pytest.mark.parametrize("dtype,kw", [
    (np.float64, {}), (np.float32, dict(dtype=np.float32)),
    (np.float64, dict(criterion="LWZ", order=1, confint=0.9)),
    (np.int16, dict(order=2)), (np.float64, dict(order=1, chunk_bytes=100 * 101 * 4 * 8))])
def test_breaks_device_same_as_numpy_without_host_traffic(device, dtype, kw):
    if not device.fp64:
        pytest.skip("the comparison's tolerances are float64's")
    y, t = _breaks_cube()
    if dtype == np.int16:
        y = np.where(np.isnan(y), 0, np.round(100 * y)).astype(np.int16)
    kw = dict(kw, device=device, freq=1, progress=False)
    a = clts.bfast_breaks(y, t, **kw)
    yd = _to_device(device, y)
    b, first, again = _device_call(clts.bfast_breaks, yd, t, **kw)
    _assert_quiet(first, again)
    assert isinstance(b.n_breaks, type(yd)) and isinstance(b.magnitudes, type(yd))
    _same_breaks(a, b, 1e-9)


@pytest.mark.parametrize("gpu", ["h100", "mi100"])
def test_breaks_device_under_emulated_gpus(gpu):
    emu = gpus_over_pocl().get(gpu)
    if emu is None:
        pytest.skip("no pocl device here")
    y, t = _breaks_cube(2, M=9)
    kw = dict(device=emu, freq=1, order=1, progress=False)
    a = clts.bfast_breaks(y, t, **kw)
    b, first, again = _device_call(clts.bfast_breaks, _to_device(emu, y), t, **kw)
    _assert_quiet(first, again)
    _same_breaks(a, b, 1e-9)


def test_device_calls_from_threads(device):
    """Device calls from several threads at once (one device queue, a shared constant cache):
    each equals the numpy path. k=1 at the plan of ``test_monitor_device_same_as_numpy_...``
    (its programs), k=2 at lanes 1 (three more programs, the cheapest builds)."""
    from concurrent.futures import ThreadPoolExecutor
    y, t, start = _cube(6)
    kws = [dict(history=h, k=k, lanes=4 if k == 1 else 1, wg=1, detailed=True)
           for h in ("all", "ROC", "BP") for k in (1, 2)]
    want = [clts.bfast_monitor(y, t, start, device=device, progress=False, **kw) for kw in kws]
    yd = _to_device(device, y)
    with ThreadPoolExecutor(4) as ex:
        got = list(ex.map(lambda kw: clts.bfast_monitor(yd, t, start, device=device,
                                                        progress=False, **kw).to_numpy(), kws))
    for a, b in zip(want, got):
        _same_monitor(a, b)


def test_breaks_device_edge_cases(device):
    """The exact fits (RSS floor), the rank-deficient design (columns dropped, with the
    warning), a rank-deficient pixel (status 4), h = n / 2 and BP history of a constant pixel:
    the device path gives the numpy path's results and diagnostics."""
    import warnings
    from pathlib import Path

    import pandas as pd
    if not device.fp64:
        pytest.skip("the comparison's tolerances are float64's")
    data = Path(__file__).parent / "data"
    inp = pd.read_csv(data / "bfast_bp_edge_input.csv")
    for _, s in pd.read_csv(data / "bfast_bp_edge_settings.csv").iterrows():
        d = inp[inp.case == s.case]
        t, y = d.time.to_numpy(), d.y.to_numpy(np.float64)[:, None]
        kw = dict(freq=float(s.freq), order=int(s.order), trend=bool(s.trend),
                  h=float(s.h) if s.h < 1 else int(s.h), breaks=int(s.breaks), device=device,
                  progress=False)
        for dtype in (np.float64, np.float32):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                a = clts.bfast_breaks(y, t, dtype=dtype, **kw)
                b = clts.bfast_breaks(_to_device(device, y), t, dtype=dtype, **kw)
            _same_breaks(a, b, 1e-9)
    rng = np.random.default_rng(4)
    t = 2000 + np.arange(460) / 23
    y = np.sin(2 * np.pi * t)[:, None] + 0.1 * rng.standard_normal((460, 2))
    y[np.arange(460) % 23 != 5, 0] = np.nan
    y[np.arange(460) % 23 > 10, 1] = np.nan
    kw = dict(freq=1.0, order=1, h=0.3, device=device, progress=False)
    a = clts.bfast_breaks(y, t, **kw)
    b, first, again = _device_call(clts.bfast_breaks, _to_device(device, y), t, **kw)
    _assert_quiet(first, again)
    assert b.status.get().tolist() == [4, 0]
    _same_breaks(a, b, 1e-9)
    yy = np.stack([np.full(t.size, 3.0), y[:, 1]], axis=1)       # BP history of a constant
    kw = dict(freq=1, history="BP", device=device, progress=False)
    _same_monitor(clts.bfast_monitor(yy, t, 2016.0, **kw),
                  clts.bfast_monitor(_to_device(device, yy), t, 2016.0, **kw))
