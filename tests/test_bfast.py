"""clts.bfast_monitor against its numpy reference, R/strucchange fixtures and the bfast 0.7 package.

Fixtures: tests/data/bfast_r_*.csv (bench/bfast_r_fixtures.py, R strucchange) and
tests/data/bfast_py_fixture.npz (bench/bfast_py_fixtures.py, the bfast 0.7 Python backend).
Tolerances: float64 1e-7 relative (fixtures give 1e-5 slack for bfast's float32 outputs),
float32 1e-3 relative to the data scale; float32 breaks may differ on a few knife-edge pixels.
"""
from __future__ import annotations


import numpy as np
import pytest

import clts
from clts.bfast import reference as ref
from clts.bfast.api import bfast_monitor

from bfast_r_data import DATA, column, r_cases, rel
VERSIONS = [("fused", 1), ("fused", 8), ("multi", 4)]
#: the lanes of test_r_fixture per (version, dtype), which the tests that force a version take
#: too: their programs (K = 8, not detailed) are the R fixture's, not builds of the profile's
#: lanes (16 for the fused version on Intel's CPU runtime, its longest builds: docs/
#: performance.md, "BFAST's fused lanes by regressors"); the chunk and layout tests take them
#: as well. The float32 bfast 0.7 fixture keeps the profile's plan (``version="auto"``, its
#: lanes); each process at the profile's lanes: tests/test_bfast_types.py.
FIXTURE_LANES = {("fused", np.float64): 8, ("multi", np.float64): 4,
                 ("fused", np.float32): 4, ("multi", np.float32): 1}


def _lanes(version, dtype=np.float64):
    return FIXTURE_LANES[version, np.dtype(dtype).type]


# ------------------------------------------------------------------ the bfast 0.7 package
@pytest.fixture(scope="module")
def bfast_py():
    return dict(np.load(DATA / "bfast_py_fixture.npz"))


@pytest.mark.parametrize("version,lanes", VERSIONS)
def test_bfast_py_fixture_float64(device, bfast_py, version, lanes):
    d = bfast_py
    r = bfast_monitor(d["y"], d["dates"], d["start"], k=int(d["k"]), freq=float(d["freq"]),
                      hfrac=float(d["hfrac"]), level=float(d["level"]), convention="bfast-py",
                      nodata=int(d["nodata"]), dtype=np.float64, device=device,
                      version=version, lanes=lanes)
    # pixel (0, 2) is a constant series: its MOSUM is rounding noise / rounding noise, on which
    # the bfast package reports a break at the first date; clts sees a history fitted exactly
    # (zero variance) and data that never leave it: no break
    keep = np.ones(r.breaks.shape, bool)
    keep[0, 2] = False
    assert r.status[0, 2] == 3 and r.breaks[0, 2] == -1
    np.testing.assert_array_equal(r.breaks[keep], d["breaks"][keep])
    np.testing.assert_array_equal(r.valids, d["valids"])
    assert rel(r.means[keep], d["means"][keep]) < 1e-5
    assert rel(r.magnitudes, d["magnitudes"]) < 1e-5
    assert r.break_dates.dtype.kind == "M"
    hit = r.breaks >= 0
    np.testing.assert_array_equal(r.break_dates[hit], d["dates"][r.diagnostics["n_history_dates"] + r.breaks[hit]])
    assert np.isnat(r.break_dates[~hit]).all()


def test_bfast_py_fixture_float32(device, bfast_py):
    d = bfast_py
    r = bfast_monitor(d["y"], list(d["dates"].astype(object)), d["start"].item(),
                      convention="bfast-py", nodata=int(d["nodata"]), device=device)
    assert r.means.dtype == np.float32
    assert r.status[0, 2] == 3 and r.breaks[0, 2] == -1
    assert np.mean(r.breaks != d["breaks"]) <= 0.02
    same = r.breaks == d["breaks"]
    assert rel(r.magnitudes[same], d["magnitudes"][same], scale=100.0) < 1e-3


# ------------------------------------------------------------------ R strucchange
@pytest.fixture(scope="module")
def r_fixture():
    Y, T, sett, out = r_cases("bfast_r_settings.csv", "bfast_r_output.csv")
    expect = []
    for s_i, s in enumerate(sett):
        rows = [x for x in out if int(x["setting"]) == s_i]
        expect.append(dict(history=s["history"], level=float(s["level"]), h=float(s["h"]),
                           start=float(s["start"]), breaks=column(rows, "breaks", int).astype(int),
                           hs=column(rows, "history_start", int).astype(int),
                           magnitude=column(rows, "magnitude"), mean=column(rows, "mean")))
    return Y, T, expect


@pytest.mark.parametrize("version,lanes,dtype", [(v, n, d) for (v, d), n in FIXTURE_LANES.items()])
def test_r_fixture(device, r_fixture, version, lanes, dtype):
    Y, T, expect = r_fixture
    tol = 1e-7 if dtype == np.float64 else 2e-3
    for e in expect:
        r = bfast_monitor(Y.astype(dtype), T, e["start"], k=3, freq=1.0, hfrac=e["h"],
                          level=e["level"], history=e["history"], device=device,
                          version=version, lanes=lanes)
        np.testing.assert_array_equal(r.breaks, e["breaks"], err_msg=str(e["history"]))
        if e["history"] == "ROC":
            np.testing.assert_array_equal(r.history_start, e["hs"])
        assert rel(r.magnitudes, e["magnitude"], scale=0.1) < tol
        assert rel(r.means, e["mean"]) < tol * 10


def test_reference_matches_r_fixture(r_fixture):
    Y, T, expect = r_fixture
    for e in expect[:2]:
        n = int(np.sum(T < e["start"]))
        for c in range(Y.shape[1]):
            p = ref.bfast_pixel(Y[:, c], T, n, freq=1.0, hfrac=e["h"], level=e["level"],
                                history=e["history"])
            assert p["breaks"] == e["breaks"][c]
            assert p["history_start"] == e["hs"][c]
            assert abs(p["magnitude"] - e["magnitude"][c]) < 1e-9


# ------------------------------------------------------------------ the numpy reference
def _cube(seed, M=48, N=120, n_hist=70, nan=0.55, dtype=np.float64):
    rng = np.random.default_rng(seed)
    t = np.sort(rng.choice(np.arange(10, 23 * 12 * 16, 16), N, replace=False)).astype(np.float64)
    y = (3 + 0.001 * t[:, None] + np.sin(2 * np.pi * t[:, None] / 365 + rng.uniform(0, 6, M))
         + 0.3 * rng.standard_normal((N, M)))
    brk = rng.integers(n_hist, N, M)
    y -= (np.arange(N)[:, None] >= brk) * rng.uniform(0, 3, M) * (rng.random(M) < 0.6)
    y[rng.random((N, M)) < nan] = np.nan
    return y.astype(dtype), t, t[n_hist]


@pytest.mark.parametrize("version,lanes", VERSIONS)
@pytest.mark.parametrize("convention,history", [("r", "all"), ("r", "ROC"), ("bfast-py", "all")])
def test_reference_random_float64(device, version, lanes, convention, history):
    y, t, start = _cube(1 + lanes)
    r = bfast_monitor(y, t, start, convention=convention, history=history, device=device,
                      version=version, lanes=lanes, detailed=True)
    e = ref.bfast_monitor(y, t, start, convention=convention, history=history)
    np.testing.assert_array_equal(r.breaks, e["breaks"])
    np.testing.assert_array_equal(r.valids, e["valids"])
    assert rel(r.means, e["means"]) < 1e-7
    assert rel(r.magnitudes, e["magnitudes"]) < 1e-7
    if history == "ROC":
        np.testing.assert_array_equal(r.history_start, e["history_start"])
    ok = r.breaks > -2
    for j, p in enumerate(e["pixels"]):
        if not ok[j]:
            assert np.isnan(r.sigma[j])
            continue
        assert abs(r.sigma[j] - p["sigma"]) <= 1e-8 * p["sigma"]
        assert rel(r.coef[:, j], p["coef"], scale=1e-3) < 1e-6
        assert rel(r.prediction[:, j], p["prediction"]) < 1e-8
        assert rel(r.mosum[:, j], p["mosum"]) < 1e-7
        assert rel(r.bounds[:, j], p["bounds"]) < 1e-12


@pytest.mark.parametrize("version", ["fused", "multi"])
def test_reference_random_float32_int16_nodata_time_axis(device, version):
    y, t, start = _cube(7, M=60)
    yi = np.where(np.isnan(y), -9999, np.round(y * 1000)).astype(np.int16)
    cube = np.moveaxis(yi.reshape(len(t), 6, 10), 0, 2)          # [rows, cols, time]
    r = bfast_monitor(cube, t, start, nodata=-9999, time_axis=2, device=device, version=version,
                      lanes=_lanes(version, np.float32))
    assert r.breaks.shape == (6, 10) and r.means.dtype == np.float32
    yf = np.where(yi == -9999, np.nan, yi.astype(np.float64))
    e = ref.bfast_monitor(yf, t, start)
    b, eb = r.breaks.ravel(), e["breaks"].ravel()
    assert np.mean(b != eb) <= 0.05
    same = b == eb
    assert rel(r.magnitudes.ravel()[same], e["magnitudes"].ravel()[same], scale=100.0) < 1e-3
    np.testing.assert_array_equal(r.valids.ravel(), e["valids"].ravel())


def test_chunked_equals_unchunked(device, monkeypatch):
    y, t, start = _cube(3, M=70)
    kw = dict(device=device, history="ROC", detailed=True, version="fused", lanes=8)  # the
    whole = bfast_monitor(y, t, start, **kw)       # programs of test_reference_random_float64
    clts.set_options(max_chunk=16)
    parts = bfast_monitor(y, t, start, **kw)
    for name in ("breaks", "means", "magnitudes", "valids", "history_start", "mosum", "coef"):
        np.testing.assert_array_equal(getattr(parts, name), getattr(whole, name), err_msg=name)


def test_cache_sized_chunks_equal_one_piece(device):
    """bfast.chunk_bytes caps a chunk's cube + scratch (the profile's value on a CPU; forced
    here): 70 pixels of N values in chunks of a work-group, identical to no cap."""
    y, t, start = _cube(4, M=70)
    kw = dict(device=device, version="fused", lanes=_lanes("fused"))     # test_r_fixture's
    whole = bfast_monitor(y, t, start, chunk_bytes=0, **kw)
    assert whole.plan.chunk_bytes == 0
    per = y.shape[0] * 2 * y.dtype.itemsize
    parts = bfast_monitor(y, t, start, chunk_bytes=per, **kw)   # 1 pixel: a group
    assert parts.plan.chunk_bytes == per
    for name in ("breaks", "means", "magnitudes", "valids", "status"):
        np.testing.assert_array_equal(getattr(parts, name), getattr(whole, name), err_msg=name)
    with pytest.raises(ValueError, match="chunk_bytes"):
        bfast_monitor(y, t, start, device=device, chunk_bytes=-1)


# ------------------------------------------------------------------ edge cases
@pytest.mark.parametrize("version", ["fused", "multi"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_edge_cases(device, version, dtype):
    N, n = 80, 50
    t = np.arange(N) * 16.0 + 5
    rng = np.random.default_rng(0)
    base = 5 + np.sin(2 * np.pi * t / 365)
    cols = []
    cols.append(np.full(N, np.nan))                                   # 0 all missing
    few = np.full(N, np.nan); few[[3, 9, 20, 30, 33, 60, 70]] = 1.0   # 1 fewer values than K
    cols.append(few)
    first = base + 0.01 * rng.standard_normal(N); first[n:] -= 5      # 2 break at first date
    cols.append(first)
    last = base + 0.01 * rng.standard_normal(N); last[N - 1] -= 50    # 3 break at the last date
    cols.append(last)
    step = np.full(N, 7.0); step[n + 3:] = 9.0; step[n:n + 3] = np.nan  # 4 constant, then a jump
    cols.append(step)
    nomon = base + 0.01 * rng.standard_normal(N); nomon[n:] = np.nan  # 5 no monitoring values
    cols.append(nomon)
    y = np.stack(cols, axis=1).astype(dtype)
    r = bfast_monitor(y, t, t[n], device=device, version=version, history="ROC",
                      lanes=_lanes(version, dtype))
    e = ref.bfast_monitor(y, t, t[n], history="ROC")
    np.testing.assert_array_equal(r.breaks, [-2, -2, 0, N - 1 - n, 3, -1])
    np.testing.assert_array_equal(r.breaks, e["breaks"])
    np.testing.assert_array_equal(r.status, [1, 1, 0, 0, 3, 0])     # 4: an exact fit
    np.testing.assert_array_equal(r.status, e["status"])
    assert np.isnan(r.means[4])
    np.testing.assert_array_equal(r.valids, [0, 7, N, N, N - 3, n])
    assert np.isnan(r.means[:2]).all() and np.isnan(r.magnitudes[:2]).all()
    assert np.isnan(r.means[5]) and np.isnan(r.magnitudes[5])
    assert abs(r.magnitudes[4] - 2.0) < 1e-4
    py = bfast_monitor(y, t, t[n], device=device, version=version, convention="bfast-py",
                       lanes=_lanes(version, dtype))
    assert py.breaks[0] == -2 and py.breaks[1] == -2 and py.breaks[5] == -2
    assert py.means[0] == 0 and py.magnitudes[5] == 0


# ------------------------------------------------------------------ errors
def test_bad_input(device):
    y, t, start = _cube(0, M=4)
    with pytest.raises(ValueError, match="k"):
        bfast_monitor(y, t, start, k=11, device=device)
    with pytest.raises(ValueError, match="level"):
        bfast_monitor(y, t, start, level=0.2, device=device)
    with pytest.raises(ValueError, match="level"):
        bfast_monitor(y, t, start, level=0.0123, convention="bfast-py", device=device)
    with pytest.raises(ValueError, match="hfrac"):
        bfast_monitor(y, t, start, hfrac=0.3, device=device)
    with pytest.raises(ValueError, match="start_monitor"):
        bfast_monitor(y, t, t[-1] + 100, device=device)
    with pytest.raises(ValueError, match="start_monitor"):
        bfast_monitor(y, t, t[0] - 1, device=device)
    with pytest.raises(ValueError, match="dates"):
        bfast_monitor(y, t[:-1], start, device=device)
    with pytest.raises(ValueError, match="increasing"):
        bfast_monitor(y, t[::-1], start, device=device)
    with pytest.raises(TypeError, match="dtype"):
        bfast_monitor(y > 0, t, start, device=device)
    with pytest.raises(ValueError, match="convention"):
        bfast_monitor(y, t, start, convention="python", device=device)
    with pytest.raises(ValueError, match="history"):
        bfast_monitor(y, t, start, history="BIC", device=device)
    with pytest.raises(ValueError, match="period"):
        bfast_monitor(y, t, start, period=3, device=device)
    with pytest.raises(TypeError, match="start_monitor"):
        bfast_monitor(y, np.array(["2001-01-01"] * 0 + [f"{2000 + i // 12}-{i % 12 + 1:02d}-01" for i in range(len(t))], dtype="datetime64[D]"), 2005.0, device=device)
    with pytest.raises(ValueError, match="version"):
        bfast_monitor(y, t, start, version="gpu", device=device)


def test_public_export():
    assert clts.bfast_monitor is bfast_monitor


# ------------------------------------------------------------------ tiny case
# Under Oclgrind too (races, uninitialised reads, out of bounds). Its uninitialised-value checker
# misreads unaligned vloadN (a row stride that is no multiple of the lanes): rows are padded to a
# multiple of the lanes, which also aligns every vector load on real devices.
@pytest.mark.oclgrind
@pytest.mark.parametrize("version,lanes", [("fused", 4), ("multi", 1)])
def test_tiny_odd_sizes(device, version, lanes):
    y, t, start = _cube(5, M=6, N=41, n_hist=24, nan=0.3)
    r = bfast_monitor(y, t, start, device=device, version=version, lanes=lanes, wg=2,
                      history="ROC", roc_wg=2)
    e = ref.bfast_monitor(y, t, start, history="ROC")
    np.testing.assert_array_equal(r.breaks, e["breaks"])
    assert rel(r.magnitudes, e["magnitudes"]) < 1e-7


@pytest.mark.oclgrind
@pytest.mark.parametrize("version", ["fused", "multi"])
def test_tiny_detailed_with_exact_fits_and_inf(device, version):
    """The detailed outputs, zero-variance and non-finite pixels in a tiny cube."""
    y, t, start = _exact_cube(np.float64)
    y = np.concatenate([y[:, :3], _cube(5, M=3, N=120, n_hist=60, nan=0.2)[0]], 1)
    y = np.ascontiguousarray(y)
    y[7, 4] = np.inf
    with pytest.warns(RuntimeWarning, match="non_finite|inf"):
        r = bfast_monitor(y, t, start, freq=1.0, device=device, version=version, lanes=2,
                          wg=2, detailed=True)
    e = ref.bfast_monitor(y, t, start, freq=1.0)
    np.testing.assert_array_equal(r.status, e["status"])
    assert r.status[4] == 4 and (r.status[:3] == 3).all()
    assert np.isfinite(r.mosum[:, 5]).any()


# ------------------------------------------------------------------ exact fits, inf, scale
def _exact_cube(dtype):
    """Noise-free pixels (a history fitted exactly) and their copies with a drop at date 70."""
    N, n = 120, 60
    t = 2000 + np.arange(N) / 23.0
    cols = [np.full(N, 5.0), np.full(N, 255.0), 0.5 + 0.2 * np.sin(2 * np.pi * t),
            0.5 + 0.01 * (t - 2000) + 0.2 * np.cos(2 * np.pi * t)]
    drops = [c.copy() for c in cols]
    for c in drops:
        c[70:] -= 0.25 * np.abs(c[0])
    return np.stack(cols + drops, 1).astype(dtype), t, t[n]


@pytest.mark.parametrize("version", ["fused", "multi"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_exact_fit_is_no_break_until_the_data_leave_it(device, version, dtype):
    """A noise-free history (constant, saturated, exact harmonic) has sigma = rounding noise;
    its MOSUM is noise / noise and crossed the boundary at random. Now: status 3, no break
    while the data follow the fit, a break at the first date they leave it (the sigma -> 0
    limit of the test), in the kernels and the reference."""
    y, t, start = _exact_cube(dtype)
    for hist in ("all", "ROC"):
        r = bfast_monitor(y, t, start, freq=1.0, device=device, version=version, history=hist,
                          lanes=_lanes(version, dtype))
        e = ref.bfast_monitor(y, t, start, freq=1.0, history=hist)
        np.testing.assert_array_equal(r.status, [3] * 8)
        np.testing.assert_array_equal(r.breaks, [-1] * 4 + [70 - 60] * 4)
        np.testing.assert_array_equal(e["breaks"], r.breaks)
        np.testing.assert_array_equal(e["status"], r.status)
        assert np.isnan(r.means).all() and r.diagnostics["zero_variance"] == 8
        np.testing.assert_allclose(r.magnitudes[4:], -0.25 * np.abs(y[0, :4]), rtol=1e-4)
    u8 = np.full((120, 3), 255, np.uint8)
    u8[80:, 2] = 200
    r = bfast_monitor(u8, t, start, freq=1.0, device=device, version=version,
                      lanes=_lanes(version, np.float32))
    np.testing.assert_array_equal(r.breaks, [-1, -1, 20])


@pytest.mark.parametrize("version", ["fused", "multi"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_inf_marks_the_pixel_failed_and_is_counted(device, version, dtype):
    y, t, start = _cube(3, M=6)
    y = y.astype(dtype)
    y[5, 1] = np.inf           # history
    y[-3, 4] = -np.inf         # monitoring
    kw = dict(device=device, version=version, lanes=_lanes(version, dtype))
    with pytest.warns(RuntimeWarning, match="2 pixel"):
        r = bfast_monitor(y, t, start, **kw)
    assert r.breaks[1] == -2 and r.breaks[4] == -2 and r.status[1] == r.status[4] == 4
    assert r.diagnostics["non_finite"] == 2 and np.isnan(r.means[[1, 4]]).all()
    e = ref.bfast_monitor(y, t, start)
    np.testing.assert_array_equal(e["status"], r.status)
    clean = bfast_monitor(np.delete(y, [1, 4], axis=1), t, start, **kw)
    np.testing.assert_array_equal(np.delete(r.breaks, [1, 4]), clean.breaks)


@pytest.mark.parametrize("version", ["fused", "multi"])
@pytest.mark.parametrize("dtype,scale", [(np.float64, 1e300), (np.float64, 1e-300),
                                         (np.float32, 1e30), (np.float32, 1e-30)])
def test_breaks_do_not_depend_on_the_scale_of_the_data(device, version, dtype, scale):
    """Squares of residuals near the largest float overflowed and lost real breaks."""
    y, t, start = _cube(4, M=16)
    kw = dict(device=device, version=version, lanes=_lanes(version, dtype))
    base = bfast_monitor(y.astype(dtype), t, start, **kw)
    big = bfast_monitor((y * scale).astype(dtype), t, start, **kw)
    assert (base.breaks >= 0).sum() >= 4
    np.testing.assert_array_equal(big.breaks, base.breaks)
    np.testing.assert_allclose(big.magnitudes / scale, base.magnitudes, rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(big.means, base.means, rtol=1e-3, atol=1e-6)


def test_time_axis_out_of_range_and_big_endian(device):
    y, t, start = _cube(5, M=6)
    with pytest.raises(ValueError, match="time_axis 2 out of range"):
        bfast_monitor(y, t, start, time_axis=2, device=device)
    with pytest.raises(TypeError, match="time_axis"):
        bfast_monitor(y, t, start, time_axis=0.5, device=device)
    kw = dict(device=device, version="fused", lanes=_lanes("fused"))     # test_r_fixture's
    base = bfast_monitor(y, t, start, **kw)
    for other in (y.astype(y.dtype.newbyteorder(">")), np.asfortranarray(y),
                  np.ascontiguousarray(y.T).T):
        r = bfast_monitor(other, t, start, **kw)
        np.testing.assert_array_equal(r.breaks, base.breaks)
        np.testing.assert_array_equal(r.means, base.means)
    r = bfast_monitor(np.ascontiguousarray(y.T), t, start, time_axis=-1, **kw)
    np.testing.assert_array_equal(r.breaks, base.breaks)



@pytest.mark.parametrize("history,version", [("all", "fused"), ("ROC", "multi"), ("BP", "fused")])
def test_new_start_date_builds_nothing(device, history, version):
    """The history length and the number of dates are kernel arguments: after a first call,
    a call with another start date (another history length) or another series length renders
    and builds no program, and gives what the reference gives."""
    from clts.runtime import programs
    y, t, _ = _cube(11, M=16, N=96, n_hist=50)
    kw = dict(history=history, device=device, version=version, progress=False,
              lanes=_lanes(version))
    bfast_monitor(y[:88], t[:88], t[50], **kw)
    before = dict(programs.stats)
    for n_hist, N in ((44, 88), (58, 88), (50, 96)):
        r = bfast_monitor(y[:N], t[:N], t[n_hist], **kw)
        e = ref.bfast_monitor(y[:N], t[:N], t[n_hist], history=history)
        np.testing.assert_array_equal(r.breaks, e["breaks"])
        np.testing.assert_array_equal(r.valids, e["valids"])
    assert programs.stats["builds"] == before["builds"]
    assert programs.stats["renders"] == before["renders"]
