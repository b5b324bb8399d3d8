"""clts.bfast01 (one break or none, R's bfast::bfast01, with bfast01classify's typology) against
R on its own NDVI example series and synthetic series with gaps (fixtures
tests/data/bfast01_*.csv from bench/bfast01_fixtures.R, bfast 1.7.2 with strucchange 1.5-3):
the break, the tests' statistics and decisions, both models' RSS, BIC and coefficients, and
the classification flags, p-values and rates. Tolerances: R's RSS / BIC / coefficients / rates
to 1e-6 relative (its lm fits), its p-values to 1e-5 relative (1e-94 included)."""
from __future__ import annotations

import importlib
import math
from pathlib import Path

import numpy as np
import pytest

import clts
from clts.bfast.bfast01 import betainc_reg, mosum_pvalue

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def rfix():
    import pandas as pd
    return (pd.read_csv(DATA / "bfast01_input.csv"), pd.read_csv(DATA / "bfast01_settings.csv"),
            pd.read_csv(DATA / "bfast01_output.csv"))


def _true(v):
    return str(v).upper() == "TRUE"


def _num(text):
    return np.array([float(v) for v in text.split()])


def _r_basis(c, order, t0, freq=23):
    """R's coefficients (intercept, trend index 1..N, cos_1.., sin_1..) in clts's basis
    (intercept, trend per year, sin_1, cos_1, ..)."""
    a, b = c[0], c[1]
    out = [a + b * (1 - freq * t0), b * freq]
    for j in range(order):
        out += [c[2 + order + j], c[2 + j]]
    return np.array(out)


def fixture_runs(device, rfix, **extra):
    """Per setting of a bfast01 fixture: (setting, row of each series by name, tests, order,
    clts's run with confint, its drylands run, Y, t)."""
    if not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")
    inp, settings, out = rfix
    t = inp.time.values
    names = [c for c in inp.columns if c != "time"]
    Y = inp[names].values
    for _, s in settings.iterrows():
        tests = s.test.split()
        kw = dict(freq=1, order=int(s.order), formula=s.formula, test=tests,
                  aggregate=s["aggregate"], bandwidth=float(s.bandwidth), pct_stable=0.25,
                  device=device, progress=False, **extra)
        r = clts.bfast01(Y, t, confint=True, **kw)
        d = clts.bfast01(Y, t, typology="drylands", **kw)
        order = int(s.order) if "harmon" in s.formula else 0
        rows = {name: out[(out.setting == s.setting) & (out.series == name)].iloc[0]
                for name in names}
        yield s, rows, tests, order, r, d, Y, t


def test_r_fixture(device, rfix):
    for s, rows, tests, order, r, d, Y, t in fixture_runs(device, rfix):
        for p, (name, row) in enumerate(rows.items()):
            check_pixel(r, d, row, Y, t, p, order, tests, f"setting {s.setting} {name}")
            np.testing.assert_allclose(r.mosum_p[p], row.mosum_p, rtol=1e-6)


def check_pixel(r, d, row, Y, t, p, order, tests, what):
    """Pixel ``p`` of ``r`` (standard typology, confint) and ``d`` (drylands) against R's row
    of a bfast01 fixture (bench/bfast01_fixtures.R's columns)."""
    idx = np.nonzero(~np.isnan(Y[:, p]))[0]
    assert r.status[p] == 0 and r.nobs[p] == row.nobs, what
    assert r.breakpoint[p] == idx[row.breakpoint - 1], what
    assert r.breaks[p] == row.breaks, what
    np.testing.assert_allclose(r.mosum[p], row.mosum, rtol=1e-6, err_msg=what)
    assert r.tests["OLS-MOSUM"][p] == _true(row.test_mosum), what
    if "BIC" in tests:
        assert r.tests["BIC"][p] == _true(row.test_bic), what
    np.testing.assert_allclose(r.rss[:, p], [row.rss0, row.rss1], rtol=1e-6, err_msg=what)
    np.testing.assert_allclose(r.bic[:, p], [row.bic0, row.bic1], rtol=1e-6, err_msg=what)
    np.testing.assert_allclose(r.coef0[:, p], _r_basis(_num(row.coef0), order, t[0]),
                               rtol=1e-6, atol=1e-9, err_msg=what)
    c1 = _num(row.coef1).reshape(2, -1)
    for g in range(2):
        np.testing.assert_allclose(r.coef1[g, :, p], _r_basis(c1[g], order, t[0]),
                                   rtol=1e-6, atol=1e-9, err_msg=what)
    std = _num(row["std"].replace("NA", "nan"))
    dry = _num(row.dry.replace("NA", "nan"))
    assert r.flag_type[p] == std[0] and r.flag_significance[p] == std[1], what
    assert r.flag_pct_stable[p] == std[6], what
    got = [r.p_segment1[p], r.p_segment2[p], r.pct_segment1[p], r.pct_segment2[p]]
    np.testing.assert_allclose(got, std[2:6], rtol=1e-5, err_msg=what)
    assert d.flag_type[p] == dry[0], what
    assert d.flag_subtype[p] == (-1 if np.isnan(dry[1]) else dry[1]), what
    assert d.flag_significance[p] == dry[2], what
    # R's interval in values (its lower end may lie before the first: clipped, as clts)
    lo, _, hi = (idx[np.clip(int(v), 1, idx.size) - 1] for v in row.confint.split())
    assert (r.ci_lower[p], r.ci_upper[p]) == (lo, hi), what


def test_statuses_and_shapes(device):
    """Constant, all-NaN, short and non-finite pixels; a [time, 2, 3] cube; Fortran order."""
    rng = np.random.default_rng(3)
    t = 2000 + np.arange(120) / 23
    y = 0.5 + 0.1 * np.sin(2 * np.pi * t)[:, None, None] + 0.01 * rng.normal(size=(120, 2, 3))
    y[60:, 0, 0] += 0.3
    y[:, 0, 1] = 0.7                       # constant: an exact fit, no test statistic
    y[:, 0, 2] = np.nan                    # nothing
    y[:70, 1, 0] = np.nan                  # 50 values < 2 trim (2 x 40)
    y[5, 1, 1] = np.inf
    r = clts.bfast01(np.asfortranarray(y), t, freq=1, device=device, progress=False)
    assert r.breaks.shape == (2, 3) and r.coef1.shape == (2, 8, 2, 3)
    assert r.status.tolist() == [[0, 5, 1], [2, 3, 0]] and r.diagnostics["exact_fit"] == 1
    assert r.breaks[0, 0] == 1 and r.break_date[0, 0] == pytest.approx(t[59])
    assert r.breaks[0, 1] == 0 and np.isnan(r.mosum[0, 1])
    assert (r.breaks[[0, 1, 1], [2, 0, 1]] == -1).all()
    assert (r.flag_type[[0, 1, 1], [2, 0, 1]] == -1).all()
    assert r.flag_type[0, 1] == -1 and r.flag_significance[0, 1] == -1   # flat, exact
    assert np.isnan(r.coef0[:, 1, 0]).all()
    c = clts.bfast01(y[:, 0, 0], t, freq=1, device=device, progress=False)
    assert c.breaks.shape == () and int(c.breakpoint) == r.breakpoint[0, 0]


def _exact_cube():
    """Pixels fitted exactly by the chosen model (a gapped constant, a season, a trend, a
    noise-free step in level) beside a noisy break and a noisy half before a constant one."""
    rng = np.random.default_rng(12)
    t = 2000 + np.arange(120) / 23
    season = 0.1 * np.sin(2 * np.pi * t)
    y = np.empty((120, 6))
    y[:, 0] = 0.5 + season + 0.01 * rng.normal(size=120) + 0.2 * (t > t[70])
    y[:, 1] = 0.7
    y[::7, 1] = np.nan
    y[:, 2] = 0.5 + season
    y[:, 3] = 0.3 + 0.02 * (t - 2000)
    y[:, 4] = 0.4 + season + 0.2 * (t > t[59])
    y[:, 5] = 0.6 + 0.05 * rng.normal(size=120) * (t <= t[59])
    return t, y


def test_exact_fits(device, monkeypatch):
    """An exact fit is status 5 with flags that no layout changes: rounding-level slopes and
    jumps read as 0, a flat segment untested (-1 flags, 0 %); one pixel at a time, a Fortran
    cube, the pixels reversed, host blocks of 2 pixels with device chunks of one block: the
    same decisions, breaks and flags."""
    t, y = _exact_cube()
    kw = dict(freq=1, pct_stable=0.5, device=device, progress=False)
    r = clts.bfast01(y, t, **kw)
    assert r.status.tolist() == [0, 5, 5, 5, 5, 0] and r.diagnostics["exact_fit"] == 4
    assert r.breaks.tolist()[1:5] == [0, 0, 0, 1] and r.breakpoint[4] == 59
    assert r.flag_type.tolist()[1:5] == [-1, -1, 1, -1]      # flat, flat, up, flat steps
    assert r.flag_significance.tolist()[1:5] == [-1, -1, 0, -1]
    assert r.flag_pct_stable.tolist()[1:5] == [3, 3, 0, 3]
    assert (r.pct_segment1[[1, 2]] == 0).all() and r.pct_segment2[4] == 0
    assert np.isnan(r.p_segment1[[1, 2]]).all() and np.isnan(r.mosum[1:4]).all()
    assert r.magnitude[4] == pytest.approx(0.2, rel=1e-9)
    fields = ("breaks", "breakpoint", "status", "flag_type", "flag_significance",
              "flag_pct_stable", "pct_segment1", "pct_segment2")
    alone = [clts.bfast01(y[:, p], t, **kw) for p in range(6)]
    cube = clts.bfast01(np.asfortranarray(y.reshape(120, 2, 3)), t, **kw)
    rev = clts.bfast01(y[:, ::-1], t, **kw)
    monkeypatch.setattr(importlib.import_module("clts.bfast.bfast01"), "BLOCK", 2)
    small = clts.bfast01(y, t, chunk_bytes=1, **kw)
    for f in fields:
        want = np.asarray(getattr(r, f))
        got = {"alone": np.array([getattr(a, f) for a in alone]),
               "cube": np.asarray(getattr(cube, f)).reshape(6),
               "reversed": np.asarray(getattr(rev, f))[::-1], "blocks": getattr(small, f)}
        for name, g in got.items():
            if f.startswith("pct"):     # rounding of the noisy pixels' rates aside
                np.testing.assert_allclose(g, want, rtol=1e-9, atol=0, err_msg=f"{f} {name}")
            else:
                np.testing.assert_array_equal(g, want, err_msg=f"{f} {name}")


@pytest.mark.oclgrind
def test_tiny(device):
    """Three gapped pixels of 40 dates (Oclgrind's size): a constant one (exact fit), a step
    and a season with noise; breaks=1's kernels, the classification."""
    rng = np.random.default_rng(13)
    t = 2000 + np.arange(40) / 12
    y = 0.5 + 0.1 * np.sin(2 * np.pi * t)[:, None] + 0.01 * rng.normal(size=(40, 3))
    y[:, 0] = 0.7
    y[20:, 1] += 0.3
    y[rng.random((40, 3)) < 0.1] = np.nan
    r = clts.bfast01(y, t, freq=1, order=1, trim=8, test="BIC", device=device,
                     progress=False, lanes=1, interleave=4, wg=4, dp_wg=2)
    assert r.status.tolist() == [5, 0, 0] and r.breaks.tolist() == [0, 1, 0]
    assert r.flag_type[0] == -1 and r.break_date[1] == pytest.approx(t[19])


def test_regressors_and_dates(device):
    """A covariate joins both models; datetime64 dates give the same decisions (rates per
    year, the trend per day)."""
    rng = np.random.default_rng(4)
    n = 150
    dates = np.datetime64("2001-01-01") + np.arange(n) * 16
    t = np.arange(n) * 16 / 365.25
    x = rng.normal(size=n).cumsum()
    y = (0.5 + 0.02 * t + 0.1 * np.sin(2 * np.pi * t) + 0.05 * x)[:, None] \
        + 0.01 * rng.normal(size=(n, 3))
    y[80:, 0] -= 0.1
    r = clts.bfast01(y, dates, order=1, freq=365.25, regressors={"rain": x}, device=device,
                     progress=False)
    assert r.coef_names == ["intercept", "trend", "sin1", "cos1", "rain"]
    np.testing.assert_allclose(r.coef0[4, 1:], 0.05, atol=0.01)
    assert r.breaks.tolist() == [1, 0, 0] and r.breakpoint[0] == 79
    np.testing.assert_allclose(r.coef0[1, 1:] * 365.25, 0.02, atol=0.005)   # per day
    s = clts.bfast01(y, 2001 + t, freq=1, order=1, regressors={"rain": x}, device=device,
                     progress=False)
    assert s.breaks.tolist() == r.breaks.tolist()
    np.testing.assert_allclose(s.pct_segment1, r.pct_segment1, rtol=1e-9)
    np.testing.assert_allclose(s.p_segment1, r.p_segment1, rtol=1e-6)


def test_pvalues():
    """The incomplete beta against scipy's; the OLS-MOSUM table at its points."""
    sp = pytest.importorskip("scipy.special")
    a = np.array([0.5, 1.0, 2.5, 50.0, 130.0, 3.0])
    b = np.array([0.5, 0.5, 3.0, 0.5, 0.5, 200.0])
    for x in (1e-6, 0.01, 0.3, 0.5, 0.9, 0.999):
        np.testing.assert_allclose(betainc_reg(a, b, x), sp.betainc(a, b, x), rtol=1e-10)
    F = np.array([0.01, 1.0, 10.0, 400.0])
    df = 120.0
    np.testing.assert_allclose(betainc_reg(df / 2, 0.5, df / (df + F)),
                               sp.fdtrc(1, df, F), rtol=1e-9)
    assert mosum_pvalue(1.4448, 0.3) == pytest.approx(0.05)
    assert mosum_pvalue(0.0, 0.15) == 1.0 and mosum_pvalue(9.0, 0.15) == 0.01
    assert math.isnan(float(mosum_pvalue(np.nan, 0.15)))


@pytest.mark.parametrize("kw, msg", [
    (dict(test="Rec-CUSUM"), "not implemented"), (dict(test=["BIC", "BIC"]), "test"),
    (dict(level=1.5), "level"), (dict(aggregate="most"), "aggregate"),
    (dict(bandwidth=0), "bandwidth"), (dict(typology="wet"), "typology"),
    (dict(pct_stable=-1), "pct_stable"), (dict(trim=-3), "trim"), (dict(trim=12.5), "trim"),
    (dict(alpha=True), "alpha"),
])
def test_bad_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        clts.bfast01(np.zeros((60, 2)), np.arange(60.0) / 12, freq=1, **kw)


def test_per_pixel_regressors(device):
    """A covariate per pixel: each pixel as bfast01 on its own with that covariate shared;
    a NaN covariate value is a missing value."""
    rng = np.random.default_rng(7)
    N, M = 140, 4
    t = 2000 + np.arange(N) / 23
    x = rng.normal(size=(N, M)).cumsum(axis=0) / 3
    y = 0.5 + 0.02 * (t - 2000)[:, None] + 0.3 * x + 0.01 * rng.normal(size=(N, M))
    y[70:, :2] -= 0.1
    x[[5, 6], 3] = np.nan
    r = clts.bfast01(y, t, freq=1, order=1, regressors=x[:, :, None], device=device,
                     progress=False)
    assert r.coef_names[-1] == "x1" and r.nobs.tolist() == [N, N, N, N - 2]
    for p in range(M):
        one = clts.bfast01(y[:, p], t, freq=1, order=1, regressors=x[:, p], device=device,
                           progress=False)
        assert r.breaks[p] == one.breaks and r.breakpoint[p] == one.breakpoint
        assert r.flag_type[p] == one.flag_type
        np.testing.assert_allclose(r.coef1[:, :, p], one.coef1, rtol=1e-7, atol=1e-10)
        np.testing.assert_allclose(r.mosum[p], one.mosum, rtol=1e-9)
        np.testing.assert_allclose(r.p_segment1[p], one.p_segment1, rtol=1e-7)


def test_threads_and_layouts(device):
    """Six threads (bfast01, bfast_breaks with per-pixel covariates) equal the serial calls;
    big-endian and strided inputs equal native ones."""
    import threading
    rng = np.random.default_rng(8)
    N, M = 120, 6
    t = 2000 + np.arange(N) / 23
    x = rng.normal(size=(N, M)).cumsum(axis=0) / 3
    y = 0.5 + 0.2 * x + 0.1 * np.sin(2 * np.pi * t)[:, None] + 0.01 * rng.normal(size=(N, M))
    y[60:, ::2] += 0.1
    calls = {
        "bfast01": lambda: clts.bfast01(y, t, freq=1, device=device, progress=False).breakpoint,
        "pp": lambda: clts.bfast_breaks(y, t, freq=1, order=1, regressors=x[:, :, None],
                                        device=device, progress=False).all_breakpoints}
    serial = {k: f() for k, f in calls.items()}
    errors = []

    def worker():
        try:
            for k, f in calls.items():
                np.testing.assert_array_equal(f(), serial[k])
        except Exception as exc:        # noqa: BLE001 - reported below
            errors.append(repr(exc))
    threads = [threading.Thread(target=worker) for _ in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    big = np.zeros((N, 2 * M), ">f8")[:, ::2]
    big[...] = y
    a = clts.bfast01(big, t, freq=1, regressors=x.astype(">f8")[:, :, None], device=device,
                     progress=False)
    b = clts.bfast01(y, t, freq=1, regressors=x[:, :, None], device=device, progress=False)
    np.testing.assert_array_equal(a.breakpoint, b.breakpoint)
    np.testing.assert_array_equal(a.coef1, b.coef1)
