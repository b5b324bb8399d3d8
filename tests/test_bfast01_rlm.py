"""clts.bfast01(reg="rlm") (R's ``bfast01(reg = "rlm")``: both models fitted by MASS::rlm)
against R on the series of the least-squares fixtures and three outlier-heavy ones (fixtures
tests/data/bfast01_rlm_*.csv from bench/bfast01_rlm_fixtures.R, bfast 1.7.2, MASS 7.3, sfsmisc
1.1): the break, decisions, rlm coefficients, RSS and BIC, the classification (R's
bfast01classify with f.robftest's p-value: bench/bfast01_rlm_lib.R) and the interval; and the
batched IRLS (clts.bfast.rlm) against its plain one-series reference."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import clts
from clts.bfast.rlm import masked_median, rlm_fit, rlm_reference

from test_bfast01 import check_pixel, fixture_runs

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def rfix():
    import pandas as pd
    return (pd.read_csv(DATA / "bfast01_rlm_input.csv"),
            pd.read_csv(DATA / "bfast01_settings.csv"),
            pd.read_csv(DATA / "bfast01_rlm_output.csv"))


def test_r_fixture(device, rfix):
    for s, rows, tests, order, r, d, Y, t in fixture_runs(device, rfix, reg="rlm"):
        assert r.diagnostics["rlm_not_converged"] == 0 and r.diagnostics["reg"] == "rlm"
        for p, (name, row) in enumerate(rows.items()):
            what = f"setting {s.setting} {name}"
            check_pixel(r, d, row, Y, t, p, order, tests, what)
            if r.breaks[p] == 1:
                np.testing.assert_allclose(r.magnitude[p], row.magnitude, rtol=1e-6,
                                           atol=1e-12, err_msg=what)
            else:
                assert np.isnan(r.magnitude[p]), what


def test_irls_against_reference():
    """The batched IRLS equals the one-series reference (coefficients, scale, iterations) on
    gapped pixels with outliers, one group and two groups sharing the scale, a shared and a
    per-pixel design; the masked median equals numpy's."""
    rng = np.random.default_rng(38)
    N, P = 90, 7
    t = np.linspace(-1, 1, N)
    X = np.column_stack([np.ones(N), t, np.sin(3 * t)])
    y = X @ rng.normal(size=(3, P)) + 0.1 * rng.standard_t(2, size=(N, P))
    y[rng.random((N, P)) < 0.2] -= 1.0                     # outliers
    valid = rng.random((N, P)) > 0.15
    valid[:, 3] = True
    y[:, 4] = 2.0 + t                         # exact: a scale of rounding size, any count
    cut = rng.integers(30, 60, P)
    seg1 = valid & (np.arange(N)[:, None] <= cut[None, :])
    XP = np.broadcast_to(X[:, None, :], (N, P, 3)) * rng.uniform(0.5, 2, (1, P, 1))
    for design in (X, XP):
        for groups in ([valid], [seg1, valid & ~seg1]):
            f = rlm_fit(design, np.where(valid, y, np.nan), groups)
            for p in range(P):
                rows = np.nonzero(valid[:, p])[0]
                Xp = design if design.ndim == 2 else design[:, p]
                gi = [np.searchsorted(rows, np.nonzero(g[:, p])[0]) for g in groups]
                c, e, s, done, it = rlm_reference(Xp[rows], y[rows, p], gi)
                np.testing.assert_allclose(f.coef[:, p], c, rtol=1e-9, atol=1e-12)
                np.testing.assert_allclose(f.resid[rows, p], e, rtol=1e-8, atol=1e-12)
                if p != 4:
                    assert f.converged[p] == done and f.iterations[p] == it
                    np.testing.assert_allclose(f.scale[p], s, rtol=1e-9)
    assert f.scale[4] < 1e-12
    a = rng.normal(size=(11, 5))
    m = rng.random((11, 5)) > 0.3
    m[:, 0] = False
    want = [np.nan] + [np.median(a[m[:, j], j]) for j in range(1, 5)]
    np.testing.assert_allclose(masked_median(a, m), want)


def test_statuses_and_arguments(device):
    """reg="rlm" keeps bfast01's statuses (constant, all-NaN, short, non-finite pixels) and
    layouts; a bad reg is a ValueError naming it; an outlier-free pixel's rlm fit is close to
    least squares while a cloud-dropped one's is not pulled down."""
    rng = np.random.default_rng(3)
    t = 2000 + np.arange(120) / 23
    y = 0.5 + 0.1 * np.sin(2 * np.pi * t)[:, None, None] + 0.01 * rng.normal(size=(120, 2, 3))
    y[60:, 0, 0] += 0.3
    y[:, 0, 1] = 0.7
    y[:, 0, 2] = np.nan
    y[:70, 1, 0] = np.nan
    y[5, 1, 1] = np.inf
    y[::6, 1, 2] -= 0.4                                  # clouds
    kw = dict(freq=1, device=device, progress=False)
    r = clts.bfast01(np.asfortranarray(y), t, reg="rlm", **kw)
    o = clts.bfast01(y, t, **kw)
    assert r.status.tolist() == [[0, 5, 1], [2, 3, 0]] == o.status.tolist()
    assert r.breaks.tolist() == o.breaks.tolist()
    assert (r.breakpoint == o.breakpoint).all()
    level = [c.coef0[0, 1, 2] + c.coef0[1, 1, 2] * t[60] for c in (r, o)]   # mid-series
    assert abs(level[0] - 0.5) < 0.01 < 0.05 < abs(level[1] - 0.5)
    np.testing.assert_allclose(r.coef1[:, 1:, 0, 0], o.coef1[:, 1:, 0, 0], atol=0.01)
    c = clts.bfast01(y[:, 0, 0], t, reg="rlm", **kw)
    np.testing.assert_allclose(c.coef1, r.coef1[:, :, 0, 0], rtol=1e-9)
    for bad in ("RLM", "huber", None, 1):
        with pytest.raises(ValueError, match="reg"):
            clts.bfast01(y, t, reg=bad, **kw)
