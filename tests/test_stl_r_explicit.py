"""clts.stl(r_defaults=True) with some of R's stl arguments given: a given degree or jump is
kept (1 included: R's s.degree = 1 is seasonal_deg=1, which R's defaults once replaced by 0),
the rest take R's defaults. Fixtures: bench/stl_r_explicit_fixtures.R (R 4.2.2)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import clts

pd = pytest.importorskip("pandas")
FIX = Path(__file__).parent / "data" / "stl_r_explicit.csv"
ARGS = {"s_degree": "seasonal_deg", "t_degree": "trend_deg", "l_degree": "low_pass_deg",
        "s_jump": "seasonal_jump", "t_jump": "trend_jump", "l_jump": "low_pass_jump"}


def cases():
    return list(pd.read_csv(FIX).groupby("case", sort=False))


@pytest.mark.parametrize("name,g", cases(), ids=[c[0] for c in cases()])
def test_given_arguments_are_r_s(device, name, g):
    row = g.iloc[0]
    kw = {ours: int(row[theirs]) for theirs, ours in ARGS.items() if not np.isnan(row[theirs])}
    x = g.x.to_numpy()
    r = clts.stl(x, int(row.period), seasonal=int(row.s_window), r_defaults=True,
                 device=device, **kw)
    scale = np.ptp(x)
    for a, col in ((r.seasonal, "seasonal"), (r.trend, "trend"), (r.resid, "remainder")):
        assert np.abs(a - g[col].to_numpy()).max() < 1e-9 * scale, col
    for ours, v in kw.items():
        assert r.diagnostics["params"][ours] == v
