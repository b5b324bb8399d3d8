"""clts.stl(seasonal="periodic") against R's stl(s.window = "periodic") (fixtures written by
bench/stl_periodic_r_fixtures.R) and against the numpy reference with missing values."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import clts
from clts.stl import reference as ref

pd = pytest.importorskip("pandas")
FIX = Path(__file__).parent / "data" / "stl_periodic_r.csv"


def cases():
    d = pd.read_csv(FIX)
    return [(name, g) for name, g in d.groupby("case", sort=False)]


def settings(row):
    kw = dict(robust=bool(row.robust), r_defaults=not bool(row.statsmodels_jumps))
    if not np.isnan(row.t_window):
        kw["trend"] = int(row.t_window)
    if not np.isnan(row.t_degree):
        kw["trend_deg"] = int(row.t_degree)
    return kw


@pytest.mark.parametrize("name,g", cases(), ids=[c[0] for c in cases()])
def test_matches_r(device, name, g):
    row = g.iloc[0]
    x = g.x.to_numpy()
    r = clts.stl(x, int(row.period), seasonal="periodic", device=device, **settings(row))
    scale = np.ptp(x)
    for a, col in ((r.seasonal, "seasonal"), (r.trend, "trend"), (r.resid, "remainder")):
        assert np.abs(a - g[col].to_numpy()).max() < 1e-9 * scale, col
    P = int(row.period)
    assert np.allclose(r.seasonal[:P], r.seasonal[P:2 * P], rtol=0, atol=1e-12 * scale)
    assert r.diagnostics["params"]["periodic"]


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-9), (np.float32, 1e-4)])
def test_missing_values_reference(device, dtype, tol):
    rng = np.random.default_rng(3)
    t = np.arange(96)
    y = np.sin(2 * np.pi * t / 12) + 0.05 * t + rng.normal(0, .3, (3, t.size))
    y[rng.random(y.shape) < 0.2] = np.nan
    y[1, 10:30] = np.nan
    r = clts.stl(y.astype(dtype), 12, seasonal="periodic", device=device)
    s, tr, e, _ = ref.stl(y, 12, seasonal="periodic")
    scale = np.nanmax(np.ptp(np.nan_to_num(y), axis=-1))
    assert np.abs(r.seasonal - s).max() < tol * scale
    assert np.abs(r.trend - tr).max() < tol * scale
    assert np.array_equal(np.isnan(r.resid), np.isnan(y))


def test_bad_string(device):
    with pytest.raises(ValueError, match="seasonal"):
        clts.stl(np.zeros(48), 12, seasonal="periodical", device=device)


@pytest.mark.oclgrind
def test_tiny(device):
    t = np.arange(16.0)
    r = clts.stl(np.sin(np.pi * t / 2) + 0.1 * t, 4, seasonal="periodic", device=device)
    s, tr, _, _ = ref.stl(np.sin(np.pi * t / 2) + 0.1 * t, 4, seasonal="periodic")
    assert np.abs(r.seasonal - s).max() < 1e-9 and np.abs(r.trend - tr).max() < 1e-9
