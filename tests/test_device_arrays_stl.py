"""Device-array inputs of clts.stl, clts.mstl, clts.stl_hastl, clts.trend_test, clts.mann_kendall
and clts.sen_slope: results that stay on the device, with no host transfer, map or wait inside
the call (tests/transfers.py counts them), on every test device and under the emulated H100 /
MI100 Plans; the same bits as the numpy path where the same kernels run."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import clts
from clts.trend.api import FIELDS

sys.path.insert(0, str(Path(__file__).parent))
from emulated import gpus_over_pocl  # noqa: E402
from exactness import assert_same_across_programs  # noqa: E402
from transfers import host_traffic, run_while_held  # noqa: E402

cla = pytest.importorskip("pyopencl.array")

STL_FIELDS = ("seasonal", "trend", "resid", "weights")


def cube(rng, batch=7, n=96, period=12):
    t = np.arange(n)
    y = (np.sin(2 * np.pi * t / period) + 0.02 * t
         + 0.2 * rng.standard_normal((batch, n)) + rng.standard_normal((batch, 1)))
    y[1, 30:35] = np.nan                     # a gap
    y[2, ::period] = np.nan                  # a cycle-subseries missing: a failed series
    y[3, rng.random(n) < 0.2] = np.nan
    return y


def on_device(device, a):
    d = cla.to_device(device.queue, np.ascontiguousarray(a))
    device.queue.finish()
    return d


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def need(device, dtype):
    if dtype == np.float64 and not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")


# ------------------------------------------------------------------ STL
STL_CASES = [dict(), dict(robust=True), dict(seasonal_jump=2, trend_jump=3, low_pass_jump=2,
                                              interpolation="hermite"),
             dict(version="flat"), dict(version="intragroup"), dict(version="outer"),
             dict(robust=True, outer_iter=2, fused=32)]      # the fused STL


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_stl_device_arrays(device, dtype):
    """Every LOESS version, robust, jumps: zero host traffic, device results with the numpy
    path's bits (the missing-value code path runs in both: device data are not scanned), the
    failed mask on the device and n_failed read on first access."""
    need(device, dtype)
    y = cube(np.random.default_rng(0)).astype(dtype)
    yd = on_device(device, y)
    for kw in STL_CASES:
        ref = clts.stl(y, 12, device=device, **kw)
        with host_traffic() as t:
            r = clts.stl(yd, 12, device=device, **kw)
        assert t.total == 0, t.report()
        assert all(clts.runtime.arrays.is_device_array(getattr(r, k)) for k in STL_FIELDS)
        assert r.observed is yd
        assert r.diagnostics.pending() == ["n_failed"]
        assert r.diagnostics["n_failed"] == ref.diagnostics["n_failed"] == 1
        n = r.to_numpy()
        for k in STL_FIELDS:
            assert same(getattr(n, k), getattr(ref, k)), (kw, k)
        assert same(n.diagnostics["failed"], ref.diagnostics["failed"])
        assert n.diagnostics["loess_versions"] == ref.diagnostics["loess_versions"]


def test_stl_device_complete_data_and_one_series(device):
    """Complete data (the numpy path takes its complete-data kernels, the device path the
    missing-value ones: the same bits), one series ([time] in, [time] out), R's periodic
    seasonal (a mean per cycle position: summed in another order than numpy's)."""
    rng = np.random.default_rng(1)
    y = cube(rng)[[0, 4, 5, 6]]
    yd = on_device(device, y)
    for kw in (dict(), dict(robust=True)):
        ref = clts.stl(y, 12, device=device, **kw)
        with host_traffic() as t:
            r = clts.stl(yd, 12, device=device, **kw)
        assert t.total == 0, t.report()
        for k in STL_FIELDS:
            assert same(getattr(clts.to_numpy(r), k), getattr(ref, k)), (kw, k)
    ref = clts.stl(y[0], 12, device=device)
    y0 = on_device(device, y[0])
    with host_traffic() as t:
        r = clts.stl(y0, 12, device=device)
    assert t.total == 0, t.report()
    assert r.trend.shape == (96,) and r.diagnostics["failed"].shape == ()
    for k in STL_FIELDS:
        assert same(getattr(clts.to_numpy(r), k), getattr(ref, k)), k
    assert np.isclose(r.trend_slope(), ref.trend_slope())
    yp = cube(rng)
    ref = clts.stl(yp, 12, seasonal="periodic", device=device)
    yd = on_device(device, yp)
    with host_traffic() as t:
        r = clts.stl(yd, 12, seasonal="periodic", device=device)
    assert t.total == 0, t.report()
    n = r.to_numpy()
    for k in STL_FIELDS:
        np.testing.assert_allclose(getattr(n, k), getattr(ref, k), rtol=0, atol=1e-12)


def test_stl_device_chunks_and_offsets(device):
    """Chunks (the ``max_chunk`` option) write row blocks of the device results; a device
    array at an offset (a slice of a larger one) is read where it is."""
    rng = np.random.default_rng(2)
    y = cube(rng, batch=11)
    ref = clts.stl(y, 12, robust=True, device=device)
    big = on_device(device, np.concatenate([y[:3], y]))
    with clts.set_options(max_chunk=3):
        with host_traffic() as t:
            r = clts.stl(big[3:], 12, robust=True, device=device)
            r1 = clts.stl(big[4:5], 12, robust=True, device=device)
        assert t.total == 0, t.report()
    for k in STL_FIELDS:       # chunks of 3 and one series: other batches than ref's
        assert_same_across_programs(getattr(r.to_numpy(), k), getattr(ref, k), device, k)
        assert_same_across_programs(getattr(r1.to_numpy(), k), getattr(ref, k)[1:2], device, k)


def test_stl_device_outputs(device):
    """``outputs=`` on device arrays: the components left out are None (every component is
    computed on the device, each feeding the next iteration), the others the same bits."""
    y = cube(np.random.default_rng(12))
    ref = clts.stl(y, 12, device=device)
    yd = on_device(device, y)
    with host_traffic() as t:
        r = clts.stl(yd, 12, outputs=("trend", "resid"), device=device)
    assert t.total == 0, t.report()
    assert r.seasonal is None and r.weights is None
    n = r.to_numpy()
    assert same(n.trend, ref.trend) and same(n.resid, ref.resid)
    with pytest.raises(ValueError, match="outputs"):
        clts.stl(yd, 12, outputs="level", device=device)


def test_stl_device_bad_inputs(device):
    y = on_device(device, cube(np.random.default_rng(3)))
    with pytest.raises(ValueError, match="period"):
        clts.stl(y, device=device)
    with pytest.raises(ValueError, match="C-contiguous"):
        clts.stl(y[:, ::2], 6, device=device)
    with pytest.raises(TypeError, match="dtype"):
        clts.stl(on_device(device, np.zeros((2, 48), np.int32)), 12, device=device)
    with pytest.raises(ValueError, match="time_axis"):
        clts.stl(y, 12, time_axis=0, device=device)
    with pytest.raises(TypeError, match="out="):
        clts.stl(y, 12, out={"trend": np.empty(y.shape)}, device=device)
    with pytest.raises(ValueError, match="dimension"):
        clts.stl(y.reshape(7, 8, 12), 12, device=device)
    with pytest.raises(ValueError, match="two periods"):
        clts.stl(y, 60, device=device)


def test_stl_hastl_device(device):
    y = cube(np.random.default_rng(4))
    ref = clts.stl_hastl(y, 12, 13, 21, 13, 1, 1, 1, 2, 3, 2, device=device)
    yd = on_device(device, y)
    with host_traffic() as t:
        got = clts.stl_hastl(yd, 12, 13, 21, 13, 1, 1, 1, 2, 3, 2, device=device)
    assert t.total == 0, t.report()
    for a, b in zip(got, ref):
        assert same(a.get(), b)


# ------------------------------------------------------------------ MSTL
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mstl_device_arrays(device, dtype):
    """MSTL's rounds keep the batch on the device: zero host traffic, the numpy path's bits."""
    need(device, dtype)
    rng = np.random.default_rng(5)
    t = np.arange(24 * 7 * 3.0)
    y = np.sin(2 * np.pi * t / 24) + 2 * np.cos(2 * np.pi * t / 168) + 0.01 * t
    Y = np.stack([y, 2 * y, y + rng.standard_normal(y.size)]).astype(dtype)
    Y[1, 50:60] = np.nan
    Y[2, ::24] = np.nan
    yd = on_device(device, Y)
    for kw in (dict(periods=(24, 168)), dict(periods=24, stl_kwargs=dict(robust=True)),
               dict(periods=(24, 168), iterate=3, stl_kwargs=dict(seasonal_jump=2))):
        ref = clts.mstl(Y, device=device, **kw)
        with host_traffic() as tr:
            r = clts.mstl(yd, device=device, **kw)
        assert tr.total == 0, tr.report()
        assert r.observed is yd and r.lmbda is None
        n = clts.to_numpy(r)
        for k in ("trend", "resid", "weights"):
            assert same(getattr(n, k), getattr(ref, k)), (kw, k)
        assert sorted(n.seasonal) == sorted(ref.seasonal)
        for p in ref.seasonal:
            assert same(n.seasonal[p], ref.seasonal[p]), (kw, p)
        assert n.diagnostics["n_failed"] == ref.diagnostics["n_failed"] == 1


# ------------------------------------------------------------------ trend tests
def trend_batch(rng, n=140):
    t = np.arange(float(n))
    y = np.stack([0.5 * t + 5 * np.sin(t), -0.1 * t + np.cos(3 * t), np.cos(t),
                  rng.standard_normal(n), rng.integers(-2, 3, n) * 1.0, 3.0 + 0 * t, t, t])
    y[3, rng.random(n) < 0.3] = np.nan
    y[6] = np.nan
    y[6, :2] = 1                      # too few valid values
    y[7, 3:] = np.nan                 # three values
    return y


def same_trend(r, ref):
    n = r.to_numpy()
    for k in FIELDS:
        a, b = getattr(n, k), getattr(ref, k)
        if k == "p":                  # the normal tail: the device's erf / erfc
            assert np.allclose(a, b, rtol=1e-12, atol=0, equal_nan=True), k
            assert np.asarray(a).dtype == np.asarray(b).dtype
        else:
            assert same(a, b) and type(a) is type(b), k
    assert n.diagnostics["n_too_few"] == ref.diagnostics["n_too_few"]


@pytest.mark.parametrize("variant", ["original", "hamed_rao", "yue_wang", "seasonal"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_trend_device_arrays(device, variant, dtype):
    """Every variant, the device's own layout and the interleaved one (GPUs'), fewer
    work-items than series: zero host traffic, the numpy path's values (p to 1e-12)."""
    need(device, dtype)
    if not device.fp64:
        pytest.skip("the device's statistics are float32 without cl_khr_fp64")
    y = trend_batch(np.random.default_rng(6)).astype(dtype)
    yd = on_device(device, y)
    kw = dict(period=12) if variant == "seasonal" else {}
    for layout in (dict(), dict(interleave=1, lanes=1), dict(items=3, wg=1)):
        ref = clts.trend_test(y, variant=variant, device=device, **layout, **kw)
        with host_traffic() as t:
            r = clts.trend_test(yd, variant=variant, device=device, **layout, **kw)
        assert t.total == 0, t.report()
        assert r.diagnostics.pending() == ["n_too_few"]
        same_trend(r, ref)


def test_trend_device_one_series_chunks_and_wrappers(device):
    y = trend_batch(np.random.default_rng(7))
    ref = clts.trend_test(y[0], device=device)
    y0 = on_device(device, y[0])
    with host_traffic() as t:
        r = clts.trend_test(y0, device=device)
    assert t.total == 0, t.report()
    assert r.slope.shape == ()
    same_trend(r, ref)                # Python scalars, as the numpy path's
    yd = on_device(device, y)
    with clts.set_options(max_chunk=3), host_traffic() as t:
        r = clts.trend_test(yd, variant="hamed_rao", device=device)
        mk = clts.mann_kendall(yd, variant="yue_wang", device=device)
        sen = clts.sen_slope(yd, period=4, device=device)
    assert t.total == 0, t.report()
    same_trend(r, clts.trend_test(y, variant="hamed_rao", device=device))
    same_trend(mk, clts.mann_kendall(y, variant="yue_wang", device=device))
    same_trend(sen, clts.sen_slope(y, period=4, device=device))
    with pytest.raises(ValueError, match="time_axis"):
        clts.trend_test(yd, time_axis=0, device=device)


# ------------------------------------------------------------------ the pipeline, GPUs' Plans
def test_pipeline_cube_stl_trend(device):
    """A cube on the device -> STL -> the trend test of the trend -> numpy once: no host
    traffic before the one read, the numpy pipeline's values."""
    rng = np.random.default_rng(8)
    y = cube(rng, batch=12).reshape(3, 4, 96)
    yd = on_device(device, y.reshape(12, 96))
    with host_traffic() as t:
        r = clts.stl(yd, 12, robust=True, device=device)
        tt = clts.trend_test(r.trend, device=device)
    assert t.total == 0, t.report()
    out = clts.to_numpy({"stl": r, "trend": tt})
    ref = clts.stl(y, 12, robust=True, device=device)
    assert same(out["stl"].trend.reshape(3, 4, 96), ref.trend)
    reft = clts.trend_test(ref.trend, device=device)
    assert same(out["trend"].slope.reshape(3, 4), reft.slope)
    assert same(out["trend"].h.reshape(3, 4), reft.h)


@pytest.mark.parametrize("name", ["h100", "mi100"])
def test_emulated_gpu_plans(name):
    """Under the emulated H100 / MI100 (their Plans over pocl: coalesced STL steps, the
    interleaved trend layout): zero host traffic, the same bits as numpy data there."""
    emu = gpus_over_pocl().get(name)
    if emu is None:
        pytest.skip("emulation runs on pocl")
    rng = np.random.default_rng(9)
    y = cube(rng)
    yd = on_device(emu, y)
    for kw in (dict(robust=True), dict(version="outer", seasonal_jump=2, trend_jump=3)):
        ref = clts.stl(y, 12, device=emu, **kw)
        with host_traffic() as t:
            r = clts.stl(yd, 12, device=emu, **kw)
            tt = clts.trend_test(r.trend, variant="hamed_rao", device=emu)
            m = clts.mstl(yd, (6, 12), device=emu)
        assert t.total == 0, t.report()
        for k in STL_FIELDS:
            assert same(getattr(r.to_numpy(), k), getattr(ref, k)), (name, kw, k)
        same_trend(tt, clts.trend_test(ref.trend, variant="hamed_rao", device=emu))
        mref = clts.mstl(y, (6, 12), device=emu)
        assert same(m.to_numpy().trend, mref.trend)


def test_docs_example():
    """The python block of docs/device-arrays.md runs (the default device)."""
    import re
    doc = Path(__file__).resolve().parents[1] / "docs" / "device-arrays.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(), re.S)
    assert blocks
    ns = {}
    calls, reads = blocks[0].split("slope = ")
    with host_traffic() as t:
        exec(compile(calls, "docs/device-arrays.md", "exec"), ns)
    assert t.transfers == 1 and t.total <= 2, t.report()     # the cube's upload
    exec(compile("slope = " + reads, "docs/device-arrays.md", "exec"), ns)
    assert ns["slope"].shape == (50, 60) and np.isfinite(ns["slope"]).all()
    assert ns["out"]["stl"].trend.shape == (3000, 368)


def test_empty_batch(device):
    y = on_device(device, np.zeros((0, 48)))
    with host_traffic() as t:
        r = clts.stl(y, 12, device=device)
        m = clts.mstl(y, (4, 12), device=device)
        tt = clts.trend_test(y, device=device)
    assert t.total == 0, t.report()
    assert clts.to_numpy(r).trend.shape == (0, 48) and r.diagnostics["n_failed"] == 0
    assert m.to_numpy().seasonal[4].shape == (0, 48) and m.diagnostics["n_failed"] == 0
    assert tt.to_numpy().slope.shape == (0,) and tt.diagnostics["n_too_few"] == 0


def test_threads(device):
    """Device-array calls from several threads at once (one device queue): each thread's
    results are its serial ones."""
    from concurrent.futures import ThreadPoolExecutor
    rng = np.random.default_rng(10)
    ys = [cube(rng) for _ in range(4)]
    yds = [on_device(device, y) for y in ys]

    def work(i):
        r = clts.stl(yds[i], 12, robust=bool(i % 2), device=device)
        tt = clts.trend_test(r.trend, device=device)
        return clts.to_numpy((r, tt))
    serial = [work(i) for i in range(4)]
    with ThreadPoolExecutor(4) as ex:
        got = list(ex.map(work, range(4)))
    for (r, tt), (r0, tt0) in zip(got, serial):
        assert same(r.trend, r0.trend) and same(r.resid, r0.resid)
        assert same(tt.slope, tt0.slope) and same(tt.p, tt0.p)


def test_calls_return_while_the_queue_is_blocked(device):
    """The device's queue held by a user event: the device-array calls still return (a call
    that waited for the device would never come back), the results complete once it is
    released."""
    if "nvidia" in str(device.info.platform).lower():
        pytest.skip("NVIDIA's OpenCL (580, H200) segfaulted reading these results after a "
                    "user-event barrier had held the queue; a plain pyopencl kernel + read "
                    "behind the same barrier did not: open, see docs/device-arrays.md")

    y = cube(np.random.default_rng(11))
    yd = on_device(device, y)
    ref = clts.stl(y, 12, device=device)
    clts.mstl(y, (4, 12), device=device)                 # programs built outside the block
    clts.trend_test(ref.trend, device=device)
    def calls():
        r = clts.stl(yd, 12, device=device)
        return dict(stl=r, mstl=clts.mstl(yd, (4, 12), device=device),
                    trend=clts.trend_test(r.trend, device=device))
    out = clts.to_numpy(run_while_held(device, calls))
    assert same(out["stl"].trend, ref.trend)
    assert same(out["trend"].slope, clts.trend_test(ref.trend, device=device).slope)
