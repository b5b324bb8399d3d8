"""``bfast_monitor(type=...)``: strucchange's monitoring processes against R's
``bfast::bfastmonitor(type=...)`` (fixtures tests/data/bfast_type_*.csv, made by
bench/bfast_type_fixtures.R on bfast's ``ndvi`` series and the synthetic series with gaps of
bfast_r_input.csv), the numpy reference, and the statuses of NaN / constant / short pixels.

Tolerances as tests/test_bfast.py: float64 1e-7 relative, float32 2e-3 (breaks of float32 may
differ on knife-edge pixels: none here).
"""
from __future__ import annotations

import csv

import numpy as np
import pytest

from clts.bfast import monitor_types as mt
from clts.bfast import reference as ref
from clts.bfast.api import bfast_monitor

from bfast_r_data import DATA, column, r_cases, rel

NDVI_START = 2010 + 12 / 24          # R's start = c(2010, 13)
CASES_START = 2007.51


@pytest.fixture(scope="module")
def fixture():
    Y, T, sett, out = r_cases("bfast_type_settings.csv", "bfast_type_output.csv")
    nd = list(csv.DictReader(open(DATA / "bfast_type_ndvi.csv")))
    series = {"ndvi": (column(nd, "time"), column(nd, "value")[:, None], NDVI_START)}
    series["cases"] = (T, Y, CASES_START)
    expect = []
    for s_i, s in enumerate(sett):
        rows = [x for x in out if int(x["setting"]) == s_i]
        by = {"ndvi": [x for x in rows if x["series"] == "ndvi"],
              "cases": sorted((x for x in rows if x["series"] != "ndvi"),
                              key=lambda x: int(x["series"][4:]))}
        expect.append(dict(type=s["type"], history=s["history"], h=float(s["h"]),
                           level=float(s["level"]),
                           **{name: dict(breaks=column(r, "breaks", int).astype(int),
                                         magnitude=column(r, "magnitude"),
                                         mean=column(r, "mean"), critval=column(r, "critval"),
                                         statistic=column(r, "statistic"),
                                         hs=column(r, "history_start", int).astype(int))
                              for name, r in by.items()}))
    return series, expect


def test_critical_values_are_strucchanges(fixture):
    _, expect = fixture
    for e in expect:
        crit = mt.critval(e["type"], e["h"], e["level"], 10, 8)
        # R finds the CUSUM / RE root with optimize(tol = sqrt(eps)): 1e-8 apart
        assert abs(crit - e["ndvi"]["critval"][0]) < 5e-8, e


def test_reference_matches_r(fixture):
    """Every type and setting (RE and ME: the literal refits of strucchange's monitor)."""
    series, expect = fixture
    for e in expect:
        for name, (t, Y, start) in series.items():
            n = int(np.sum(t < start))
            ex = e[name]
            for c in range(Y.shape[1]):
                p = ref.bfast_pixel(Y[:, c], t, n, freq=1.0, hfrac=e["h"], level=e["level"],
                                    history=e["history"], type=e["type"])
                assert p["breaks"] == ex["breaks"][c], (e, name, c)
                assert p["history_start"] == ex["hs"][c]
                assert abs(p["magnitude"] - ex["magnitude"][c]) < 1e-9
                if e["type"] in ("RE", "ME"):      # the functional, R's statistic its maximum
                    assert rel(np.nanmax(p["mosum"]), ex["statistic"][c]) < 1e-7
                else:
                    assert rel(p["mean"], ex["mean"][c]) < 1e-8


#: the device runs: two per type, float64 (detailed, both histories) and float32 (R's boundary
#: tabulated); the tests share their builds. The lanes are pinned (the scalar kernels and 4
#: lanes of realN, each version and type at one of them): on Intel's CPU runtime the profile's
#: 16 lanes build a fused program 3x longer than 4 lanes and 8x longer than one (a K = 5 model
#: from empty caches: 22 / 7 / 2.7 s); each process at the profile's lanes (16 there: the lane
#: names up to .sf) runs in ``test_processes_at_the_profiles_lanes``.
RUNS = {"cusum64": dict(type="OLS-CUSUM", version="fused", dtype=np.float64, detailed=True,
                        lanes=4),
        "cusum32": dict(type="OLS-CUSUM", version="multi", dtype=np.float32, bounds="table",
                        lanes=1),
        "re64": dict(type="RE", version="fused", dtype=np.float64, detailed=True, lanes=1),
        "re32": dict(type="RE", version="multi", dtype=np.float32, bounds="table", lanes=4),
        "me64": dict(type="ME", version="multi", dtype=np.float64, detailed=True, lanes=1),
        "me32": dict(type="ME", version="fused", dtype=np.float32, lanes=4)}


def _run(y, t, start, run, device, **kw):
    kw = dict(RUNS[run], **kw)
    return bfast_monitor(y.astype(kw.pop("dtype")), t, start, device=device, **kw)


@pytest.mark.parametrize("run", list(RUNS))
def test_device_matches_r(device, fixture, run):
    series, expect = fixture
    type, dtype = RUNS[run]["type"], RUNS[run]["dtype"]
    tol = 1e-7 if dtype == np.float64 else 2e-3
    for e in expect:
        if e["type"] != type or (type == "RE" and e["h"] != 0.25) \
                or (dtype == np.float32 and e["history"] != "all" and type != "ME"):
            continue
        for name, (t, Y, start) in series.items():
            ex = e[name]
            r = _run(Y, t, start, run, device, k=3, freq=1.0, hfrac=e["h"], level=e["level"],
                     history=e["history"])
            np.testing.assert_array_equal(r.breaks, ex["breaks"], err_msg=f"{e} {name}")
            np.testing.assert_array_equal(r.status, 0)
            assert rel(r.magnitudes, ex["magnitude"], scale=0.1) < tol
            if type in ("RE", "ME") and r.mosum is not None:   # R's statistic: the largest
                assert rel(np.nanmax(r.mosum, axis=0), ex["statistic"]) < tol * 10
            if type not in ("RE", "ME"):
                assert rel(r.means, ex["mean"]) < tol * 10
            assert abs(r.diagnostics["critval"] - ex["critval"][0]) < 5e-8


def test_process_and_boundary_are_rs(device, fixture):
    """The ndvi OLS-CUSUM process and boundary (history "all") at each valid monitoring date."""
    series, _ = fixture
    t, Y, start = series["ndvi"]
    proc = list(csv.DictReader(open(DATA / "bfast_type_process.csv")))
    r = _run(Y, t, start, "cusum64", device, freq=1.0)
    ok = ~np.isnan(r.mosum[:, 0])
    assert rel(r.mosum[ok, 0], column(proc, "process")) < 1e-9
    assert rel(r.bounds[ok, 0], column(proc, "boundary")) < 1e-7     # R's critval: 1e-8


def test_re_depends_on_the_scale_as_rs(device, fixture):
    """strucchange's RE monitoring divides by sigma twice: the data times 10, the process / 10
    (R: ndvi * 10 breaks at 2010.833 instead of 2010.5)."""
    series, _ = fixture
    t, Y, start = series["ndvi"]
    a = _run(Y, t, start, "re64", device, freq=1.0)
    b = _run(Y * 10, t, start, "re64", device, freq=1.0)
    assert rel(b.mosum * 10, a.mosum) < 1e-9
    assert a.break_dates[0] == pytest.approx(2010.5)
    assert b.break_dates[0] == pytest.approx(2010 + 20 / 24)


@pytest.mark.parametrize("run", list(RUNS))
def test_reference_and_statuses(device, run):
    """Random gappy pixels, and NaN / too short / constant / +-inf pixels, against the reference."""
    type, dtype = RUNS[run]["type"], RUNS[run]["dtype"]
    rng = np.random.default_rng(3)
    N, n, M = 90, 55, 15
    t = np.arange(N) * 16.0 + 3
    y = 4 + np.sin(2 * np.pi * t / 365)[:, None] + 0.2 * rng.standard_normal((N, M))
    y[rng.random((N, M)) < 0.3] = np.nan
    y[n + 10:, :5] += 2.0                       # breaks
    y[:, 8] = np.nan                            # 8 all missing: status 1
    y[:, 9] = np.nan
    y[[2, 30, 60, 70], 9] = 1.0                 # 9 fewer values than coefficients: status 1
    y[:, 10] = 6.0                              # 10 constant: an exact fit, status 3, no break
    y[:, 11] = 6.0
    y[n + 4:, 11] = 7.0                         # 11 constant, then a jump: status 3, break
    y[n + 2, 12] = np.inf                       # 12 +-inf: status 4
    y[:, 13] = np.nan
    y[n:, 13] = 1.0                             # 13 no history: status 1
    y[:n - 20, 14] = np.nan                     # 14 20 history values: ME's window of 5 < K
    #                                             (status 1), the others test it
    y = y.astype(dtype)
    with pytest.warns(RuntimeWarning, match="inf"):
        r = _run(y, t, t[n], run, device)
    e = ref.bfast_monitor(y, t, t[n], type=type)
    np.testing.assert_array_equal(r.status, e["status"])
    np.testing.assert_array_equal(r.status[8:], [1, 1, 3, 3, 4, 1, int(type == "ME")])
    np.testing.assert_array_equal(r.breaks, e["breaks"])
    assert (r.breaks[:5] >= 0).all() and r.breaks[10] == -1 and r.breaks[11] == 4
    np.testing.assert_array_equal(r.breaks[[8, 9, 12, 13]], -2)
    assert (r.breaks[14] == -2) == (type == "ME")
    np.testing.assert_array_equal(r.valids, e["valids"])
    tol = 1e-9 if dtype == np.float64 else 1e-3
    ok = r.status == 0
    # ME's windows here are 9 values for 8 coefficients: the normal equations (the kernels)
    # square their condition number, the reference solves by SVD; 3e-4 apart (R's series: 3e-12)
    assert rel(r.means[ok], e["means"][ok]) < (2e-3 if type == "ME" else tol * 100)
    assert rel(r.magnitudes[ok], e["magnitudes"][ok], scale=1.0) < tol
    assert np.isnan(r.means[~ok]).all()


def _small_cube(M, broken, seed):
    """M float32 pixels of 80 dates 16 days apart, a yearly season, a drop of 1 eight dates
    into the monitoring period (which starts at date n = 50) in the first ``broken`` pixels,
    15 % missing. Returns (t, y, n)."""
    rng = np.random.default_rng(seed)
    N, n = 80, 50
    t = np.arange(N) * 16.0 + 3
    y = 2 + np.sin(2 * np.pi * t / 365)[:, None] + 0.1 * rng.standard_normal((N, M))
    y[n + 8:, :broken] -= 1.0
    y[rng.random((N, M)) < 0.15] = np.nan
    return t, y.astype(np.float32), n


@pytest.mark.parametrize("type", ["OLS-MOSUM", "OLS-CUSUM", "RE", "ME"])
def test_processes_at_the_profiles_lanes(device, type):
    """Each process at the fused version's lanes of the device's profile (what a call without
    ``lanes=`` builds: 16 lanes of realN on Intel's CPU runtime, the lane names .sa-.sf of the
    sweep both versions share), on the smallest model (k=1, float32, no detailed outputs: the
    cheapest builds): the reference's breaks, statuses and magnitudes."""
    t, y, n = _small_cube(20, 8, seed=11)
    e = ref.bfast_monitor(y, t, t[n], k=1, type=type)
    r = bfast_monitor(y, t, t[n], k=1, type=type, version="fused", device=device,
                      progress=False)
    assert r.plan.lanes == device.profile.get("bfast.fused.lanes")
    np.testing.assert_array_equal(r.status, e["status"])
    np.testing.assert_array_equal(r.breaks, e["breaks"])
    ok = r.status == 0
    assert rel(r.magnitudes[ok], e["magnitudes"][ok], scale=1.0) < 1e-3


def test_bad_arguments(device):
    y = np.random.default_rng(0).normal(size=(60, 2))
    t = np.arange(60.0)
    for ty in ("Rec-CUSUM", "fluctuation", "ols-cusum", None):
        with pytest.raises(ValueError, match="type"):
            bfast_monitor(y, t, 40.0, freq=23, type=ty, device=device)
    with pytest.raises(ValueError, match="convention"):
        bfast_monitor(y, t, 40.0, freq=23, type="OLS-CUSUM", convention="bfast-py",
                      device=device)
    with pytest.raises(ValueError, match="level"):
        bfast_monitor(y, t, 40.0, freq=23, type="OLS-CUSUM", level=1.5, device=device)
    with pytest.raises(ValueError, match="level"):     # ME: level / K below the table's 0.001
        bfast_monitor(y, t, 40.0, freq=23, type="ME", level=0.005, device=device)
    with pytest.raises(ValueError, match="hfrac"):
        bfast_monitor(y, t, 40.0, freq=23, type="OLS-CUSUM", hfrac=0.0, device=device)
    with pytest.raises(ValueError, match="hfrac"):
        bfast_monitor(y, t, 40.0, freq=23, type="ME", hfrac=0.3, device=device)
    # R's CUSUM takes any end (period) and level in (0, 1): the MOSUM table does not bind it
    r = _run(y, t, 40.0, "cusum64", device, freq=23, level=0.2, period=3)     # its program
    assert r.diagnostics["critval"] == pytest.approx(mt.crossing_critval(0.2))


@pytest.mark.parametrize("gpu", ["h100"])
def test_types_under_an_emulated_gpu_and_on_device_arrays(gpu):
    """The GPU plan (time-major scratch, tabulated boundary) over pocl, numpy and device-array
    input: the same breaks as the reference for each type."""
    import pyopencl.array as cla
    from emulated import gpus_over_pocl
    emu = gpus_over_pocl().get(gpu)
    if emu is None:
        pytest.skip("no pocl device here")
    t, y, n = _small_cube(6, 3, seed=7)
    for type in ("OLS-CUSUM", "RE", "ME"):
        kw = dict(device=emu, k=1, type=type, progress=False, detailed=True)
        a = bfast_monitor(y, t, t[n], **kw)
        yd = cla.to_device(emu.queue, y)
        b = bfast_monitor(yd, t, t[n], **kw)
        e = ref.bfast_monitor(y, t, t[n], k=1, type=type)
        np.testing.assert_array_equal(a.breaks, e["breaks"], err_msg=type)
        np.testing.assert_array_equal(b.breaks.get(), a.breaks)
        np.testing.assert_array_equal(b.status.get(), a.status)
        assert rel(b.means.get(), a.means) < 1e-6
        assert rel(a.means, e["means"]) < 1e-3


def test_cli_type(tmp_path, capsys):
    """``clts bfast --type``: the CLI passes the process on (NetCDF in and out)."""
    import xarray as xr
    import clts.xarray as cx
    from clts import cli
    from clts.runtime import usable
    dev = usable()[0].index
    rng = np.random.default_rng(2)
    t = np.arange("2000-01-01", "2010-01-01", 16, dtype="datetime64[D]")
    y = 5 + np.sin(np.arange(t.size) * 2 * np.pi * 16 / 365)[:, None, None] \
        + rng.normal(0, 0.1, (t.size, 2, 3))
    y[-40:, 0] += 1.0
    da = xr.DataArray(y, dims=("time", "y", "x"), coords={"time": t}, name="ndvi")
    src, out = tmp_path / "c.nc", tmp_path / "b.nc"
    da.to_dataset().to_netcdf(src)          # whichever NetCDF back end imports
    assert cli.main(["bfast", str(src), "--var", "ndvi", "--start-monitor", "2008-01-01",
                     "--type", "OLS-CUSUM", "-o", str(out), "--device", str(dev),
                     "--no-progress"]) == 0
    res = xr.open_dataset(out).load()
    ref = cx.bfast_monitor(da, "2008-01-01", type="OLS-CUSUM", device=dev)
    np.testing.assert_array_equal(res["breaks"].values, ref["breaks"].values)
    assert (res["breaks"].values[0] >= 0).all()
    with pytest.raises(SystemExit):
        cli.main(["bfast", str(src), "--start-monitor", "2008-01-01", "--type", "CUSUM",
                  "-o", str(out)])


@pytest.mark.parametrize("type", ["RE", "ME"])
def test_estimates_with_a_covariate_are_rs(device, type):
    """RE / ME with ``formula`` + ``regressors``: R's basis takes the covariate as given and
    the critical value strucchange's nreg = K (fixture: bench/bfast_type_fixtures.R on the
    series of bfast_mreg_input.csv)."""
    mi = list(csv.DictReader(open(DATA / "bfast_mreg_input.csv")))
    out = list(csv.DictReader(open(DATA / "bfast_type_mreg_output.csv")))
    T, xreg = column(mi, "time"), column(mi, "xreg")
    Y = np.stack([column(mi, f"y{p}") for p in range(8)], 1)
    # each (type, formula) its own program: the scalar kernel for one, 4 lanes for the other
    for form, order, lanes in (("response ~ trend + harmon + xreg", 1, 1),
                               ("response ~ harmon + xreg", 3, 4)):
        rows = [x for x in out if x["type"] == type and x["formula"] == form]
        r = bfast_monitor(Y, T, 2008.0, freq=1.0, k=order, formula=form,
                          regressors={"xreg": xreg}, type=type, detailed=True, device=device,
                          lanes=lanes)
        np.testing.assert_array_equal(r.breaks, column(rows, "breaks", int).astype(int))
        assert rel(np.nanmax(r.mosum, axis=0), column(rows, "statistic")) < 1e-9
        assert abs(r.diagnostics["critval"] - float(rows[0]["critval"])) < 5e-8
