"""bfast_monitor's options beyond "all" / "ROC" with order 3: history="BP" (bfast's history_break:
Bai-Perron on the history, h = 6 K, BIC), a start date / time, ROC at its own level (level as a
pair), the formulas response ~ trend (k=0) and response ~ harmon (trend=False), orders 1 and 8, against R (bench/bfast_bp_fixtures.py runs bench/bfast_r_fixtures.R with
tests/data/bfast_bp_monitor_settings.csv) and the numpy reference. Tolerances as test_bfast.py:
float64 1e-7 relative."""
from __future__ import annotations


import numpy as np
import pytest

import clts
from clts.bfast import reference as ref

from bfast_r_data import column, r_cases, rel


@pytest.fixture(scope="module")
def fixture():
    Y, T, sett, out = r_cases("bfast_bp_monitor_settings.csv", "bfast_bp_monitor_output.csv")
    expect = []
    for s_i, s in enumerate(sett):
        rows = [x for x in out if int(x["setting"]) == s_i]
        h = s["history"]
        order, f = int(s["order"]), s["formula"].replace(" ", "")
        k, trend = (0, True) if f == "response~trend" else (order, f != "response~harmon")
        expect.append(dict(history=h if h in ("ROC", "BP", "all") else float(h), k=k, trend=trend,
                           level=(float(s["level"]), float(s["level_roc"])), h=float(s["h"]),
                           start=float(s["start"]), breaks=column(rows, "breaks").astype(int),
                           hs=column(rows, "history_start").astype(int),
                           magnitude=column(rows, "magnitude"), mean=column(rows, "mean")))
    return Y, T, expect


@pytest.mark.parametrize("version,lanes", [("fused", 8), ("multi", 1)])
def test_r_fixture(device, fixture, version, lanes):
    if not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")
    Y, T, expect = fixture
    for e in expect:
        # the fused kernel's Gram matrix and Cholesky factor are unrolled over K = 2 + 2 k
        # columns (18 at harmonic order 8): in vectors of 8 lanes Intel's CPU runtime took
        # 101 s to build that one (2 s with one lane, pocl 4 s); the vector code is the same
        # at every K, checked here at K <= 8
        n_lanes = 1 if version == "fused" and e["trend"] + 1 + 2 * e["k"] > 8 else lanes
        r = clts.bfast_monitor(Y, T, e["start"], k=e["k"], trend=e["trend"], freq=1.0,
                               hfrac=e["h"], level=e["level"],
                               history=e["history"], device=device, version=version,
                               lanes=n_lanes, progress=False)
        np.testing.assert_array_equal(r.breaks, e["breaks"], err_msg=str(e["history"]))
        if e["history"] != "all":
            np.testing.assert_array_equal(r.history_start, e["hs"], err_msg=str(e["history"]))
        assert rel(r.magnitudes, e["magnitude"], scale=0.1) < 1e-7
        assert rel(r.means, e["mean"]) < 1e-6
    # the BP settings have pixels whose history is too short for h = 6 K: not tested, status 1
    bp = clts.bfast_monitor(Y, T, expect[0]["start"], freq=1.0, history="BP", device=device,
                            progress=False)
    short = expect[0]["breaks"] == -2
    assert short.any() and (bp.status[short] == 1).all()


def test_reference_matches_r_fixture(fixture):
    Y, T, expect = fixture
    for e in expect:
        n = int(np.sum(T < e["start"]))
        for c in range(Y.shape[1]):
            p = ref.bfast_pixel(Y[:, c], T, n, k=e["k"], trend=e["trend"], freq=1.0,
                                hfrac=e["h"], level=e["level"][0],
                                level_roc=e["level"][1], history=e["history"])
            assert p["breaks"] == e["breaks"][c]
            if e["history"] != "all":
                assert p["history_start"] == e["hs"][c]


def test_history_dates_and_errors(device):
    rng = np.random.default_rng(4)
    dates = np.arange("2000-01-01", "2010-01-01", 16, dtype="datetime64[D]")
    y = 2 + np.sin(2 * np.pi * np.arange(dates.size) / 23)[:, None] \
        + 0.1 * rng.standard_normal((dates.size, 5))
    y[rng.random(y.shape) < 0.2] = np.nan
    a = clts.bfast_monitor(y, dates, "2008-01-01", history="2003-01-01", device=device,
                           progress=False)
    b = clts.bfast_monitor(y, dates, "2008-01-01", history=np.datetime64("2003-01-01"),
                           device=device, progress=False)
    e = ref.bfast_monitor(y, dates, np.datetime64("2008-01-01"),
                          history=np.datetime64("2003-01-01"))
    np.testing.assert_array_equal(a.breaks, b.breaks)
    np.testing.assert_array_equal(a.breaks, e["breaks"])
    np.testing.assert_array_equal(a.history_start, e["history_start"])
    assert (dates[a.history_start] >= np.datetime64("2003-01-01")).all()
    with pytest.raises(ValueError, match="history"):
        clts.bfast_monitor(y, dates, "2008-01-01", history="2009-01-01", device=device)
    with pytest.raises(ValueError, match="history"):
        clts.bfast_monitor(y, dates, "2008-01-01", history="BIC", device=device)
    with pytest.raises(ValueError, match="level"):
        clts.bfast_monitor(y, dates, "2008-01-01", level=(0.05, 0.05, 0.05), device=device)
    for typ in ("MOSUM", "Rec-CUSUM"):
        with pytest.raises(ValueError, match="type"):
            clts.bfast_monitor(y, dates, "2008-01-01", type=typ, device=device)
    with pytest.raises(ValueError, match="k=0 and trend=False"):
        clts.bfast_monitor(y, dates, "2008-01-01", k=0, trend=False, device=device)


@pytest.mark.oclgrind
def test_tiny_bp(device):
    rng = np.random.default_rng(5)
    N = 84                          # monthly, 60 history dates (Oclgrind: the BP scan is O(N^2))
    t = 2000 + np.arange(N) / 12
    y = np.sin(2 * np.pi * t)[:, None] * 0.1 + 0.02 * rng.standard_normal((N, 3))
    y += (t[:, None] < 2002.5) * np.array([0.3, 0.0, -0.2])
    r = clts.bfast_monitor(y, t, 2005.0, k=1, freq=1.0, history="BP", device=device,
                           lanes=2, wg=2, progress=False)
    e = ref.bfast_monitor(y, t, 2005.0, k=1, freq=1.0, history="BP")
    np.testing.assert_array_equal(r.history_start, e["history_start"])
    np.testing.assert_array_equal(r.breaks, e["breaks"])
