"""BFAST-Monitor's false alarms on white noise are R's: the same series flagged, at the same
date, for 13, 7 and 3 years of monitoring after the whole history (R's bfastmonitor steps with
strucchange, bench/bfast_noise_fixtures.py). The rate is the method's: 59 % of stable series get
a break when monitoring is longer than the history, 0-6 % when it is shorter."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import clts

DATA = Path(__file__).resolve().parent / "data" / "bfast_r_noise_breaks.csv"


def _noise():
    """bench/bfast_noise_fixtures.py's series (the same seed and rounding)."""
    return np.round(np.random.default_rng(5).normal(0.0, 1.0, (100, 460)), 6)


@pytest.mark.parametrize("version", ["fused", "multi"])
def test_noise_breaks_are_r_s(device, version):
    rows = np.loadtxt(DATA, delimiter=",", skiprows=1)
    y = _noise().T                                        # [time, series]
    t = 2000 + np.arange(y.shape[0]) / 23
    for start in np.unique(rows[:, 0]):
        want = rows[rows[:, 0] == start]
        want = want[np.argsort(want[:, 1]), 2].astype(int)
        r = clts.bfast_monitor(y, t, start, freq=1, device=device, version=version,
                               progress=False)
        got = np.asarray(r.breaks)
        assert (got != want).sum() <= 1, (start, np.flatnonzero(got != want))
        assert abs(np.mean(got >= 0) - np.mean(want >= 0)) <= 0.01
    rate = {s: np.mean(rows[rows[:, 0] == s, 2] >= 0) for s in (2007.0, 2017.0)}
    assert rate[2007.0] > 0.5 and rate[2017.0] < 0.05      # long monitoring: many false alarms
