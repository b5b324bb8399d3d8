"""clts.bfast_decompose(keep_iterations=True) against R's bfast()$output: every iteration's
trend, season and remainder, trend / season breakpoints and their intervals (fixtures
tests/data/bfast_decompose_iterations_*.csv from bench/bfast_decompose_iterations_fixtures.R,
bfast 1.7.2: harvest with the three seasonal models, the ndvi example, and a synthetic series
whose season break comes and goes for ten iterations). Tolerance as tests/test_bfast_decompose.py
(1e-9 of the series' range)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import clts
from test_bfast_decompose import _ci, _fp64, _ints

pd = pytest.importorskip("pandas")
DATA = Path(__file__).resolve().parent / "data"


def _cases():
    cs = pd.read_csv(DATA / "bfast_decompose_iterations_cases.csv", keep_default_na=False,
                     na_values=["NA"])
    ser = pd.read_csv(DATA / "bfast_decompose_iterations_series.csv")
    return [(name, cs[cs.case == name], ser[ser.case == name]) for name in cs.case.unique()]


CASES = _cases()


@pytest.mark.parametrize("name,rows,ser", CASES, ids=[c[0] for c in CASES])
def test_iterations_match_r(device, name, rows, ser):
    _fp64(device)
    first = rows.iloc[0]
    y = ser[ser.iteration == 1].y.to_numpy()
    br = None if pd.isna(first.breaks) else int(first.breaks)
    r = clts.bfast_decompose(y, int(first.freq), h=float(first.h), season=first.season,
                             max_iter=int(first.max_iter), breaks=br, confint=0.95,
                             keep_iterations=True, device=device, progress=False)
    tol = 1e-9 * np.ptp(y)
    assert int(r.iterations) == first.iterations == len(r.output)
    for row, e in zip(rows.itertuples(), r.output):
        g = ser[ser.iteration == row.iteration]
        what = f"{name} iteration {row.iteration}"
        assert bool(e.ran)
        assert [b + 1 for b in e.trend_breaks if b >= 0] == _ints(row.trend_bp), what
        assert [b + 1 for b in e.season_breaks if b >= 0] == _ints(row.season_bp), what
        assert int(e.n_trend_breaks) == len(_ints(row.trend_bp)), what
        np.testing.assert_allclose(e.trend, g.Tt.to_numpy(), rtol=0, atol=tol, err_msg=what)
        np.testing.assert_allclose(e.seasonal, g.St.to_numpy(), rtol=0, atol=tol, err_msg=what)
        np.testing.assert_allclose(e.remainder, y - g.Tt.to_numpy() - g.St.to_numpy(), rtol=0,
                                   atol=2 * tol, err_msg=what)
        for lo, up, col in ((e.trend_ci_lower, e.trend_ci_upper, row.trend_ci),
                            (e.season_ci_lower, e.season_ci_upper, row.season_ci)):
            got = [(int(a), int(b)) for a, b in zip(lo, up) if a >= 0 or b >= 0]
            assert got == _ci(col), what
    last = r.output[-1]
    for f in ("trend", "seasonal", "remainder", "trend_breaks", "season_breaks",
              "trend_ci_lower", "season_ci_upper"):
        np.testing.assert_array_equal(getattr(last, f), getattr(r, f), err_msg=f)


def test_pixels_stopping_at_different_iterations(device):
    """A batch whose pixels run 3, 1 and 3 iterations and a pixel not analysed: each entry
    holds the pixels that ran it (``ran``), NaN / -1 elsewhere, equal to those pixels alone;
    without keep_iterations no output; a bad keep_iterations is a TypeError."""
    _fp64(device)
    name, rows, ser = CASES[0]                 # harvest, harmonic: 3 iterations
    y3 = ser[ser.iteration == 1].y.to_numpy()
    t = np.arange(y3.size)
    rng = np.random.default_rng(5)
    flat = 0.5 + 0.2 * np.sin(2 * np.pi * t / 23) + 0.02 * rng.normal(size=y3.size)
    step = flat - 0.3 * (t > 100)
    Y = np.column_stack([y3, flat, step, np.full(y3.size, np.nan)])
    kw = dict(h=0.15, season="harmonic", device=device, progress=False)
    r = clts.bfast_decompose(Y, 23, keep_iterations=True, **kw)
    counts = r.iterations.tolist()
    assert counts[0] == 3 and r.status[3] == 1 and len(r.output) == max(counts)
    for i, e in enumerate(r.output):
        assert e.ran.tolist() == [c > i for c in counts]
        for p in np.nonzero(~e.ran)[0]:
            assert np.isnan(e.trend[:, p]).all() and e.n_trend_breaks[p] == -1
            assert (e.trend_breaks[:, p] == -1).all()
    for p in range(3):
        alone = clts.bfast_decompose(Y[:, p], 23, keep_iterations=True, **kw)
        assert len(alone.output) == counts[p]
        for a, e in zip(alone.output, r.output):
            np.testing.assert_allclose(e.trend[:, p], a.trend, rtol=0, atol=1e-12)
            assert e.trend_breaks[:, p].tolist() == a.trend_breaks.tolist()
    assert clts.bfast_decompose(Y, 23, **kw).output is None
    with pytest.raises(TypeError, match="keep_iterations"):
        clts.bfast_decompose(Y, 23, keep_iterations="yes", **kw)
