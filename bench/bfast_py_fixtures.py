"""Run the ``bfast`` 0.7 package on a seed-fixed synthetic cube; write its outputs as a test fixture.

The bfast package needs numpy < 1.24, so it lives in its own environment:

    python3 -m venv /tmp/bfastenv
    /tmp/bfastenv/bin/pip install numpy==1.23.5 scipy==1.10.1 scikit-learn==1.2.2 pandas==1.5.3 \
        matplotlib pyopencl setuptools wheel
    /tmp/bfastenv/bin/pip install numpy==1.23.5        # others may have pulled a newer one
    /tmp/bfastenv/bin/pip install --no-build-isolation --no-deps bfast==0.7
    /tmp/bfastenv/bin/python bench/bfast_py_fixtures.py

Writes ``tests/data/bfast_py_fixture.npz`` (int16 cube with nodata -32768, planted breaks, dates,
parameters, and the package's breaks / means / magnitudes / valids from its Python backend).
This script imports only numpy and bfast (not clts), so it is an independent reference.
"""
from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "bfast_py_fixture.npz"
NODATA = -32768


def synthetic(seed=5, rows=12, cols=16, n_dates=230, nan_frac=0.5):
    """Landsat-like int16 NDMI cube: season + trend + noise, planted drops, clouds (nodata)."""
    rng = np.random.default_rng(seed)
    start = dt.datetime(2004, 1, 1)
    days = np.sort(rng.choice(np.arange(0, 9 * 365), size=n_dates, replace=False))
    dates = [start + dt.timedelta(days=int(d)) for d in days]
    t = days / 365.0
    M = rows * cols
    amp = rng.uniform(200, 900, M)
    phase = rng.uniform(0, 2 * np.pi, M)
    base = rng.uniform(2000, 6000, M)
    slope = rng.normal(0, 40, M)
    noise = rng.uniform(50, 300, M)
    y = (base + slope * t[:, None] + amp * np.sin(2 * np.pi * t[:, None] + phase)
         + 0.3 * amp * np.cos(4 * np.pi * t[:, None] + phase)
         + noise * rng.standard_normal((n_dates, M)))
    # planted breaks in half the pixels, at a random time in the monitoring period (2010-2012)
    has_break = rng.random(M) < 0.5
    t_break = rng.uniform(6.0, 8.8, M)
    drop = rng.uniform(800, 3000, M)
    y -= (has_break & (t[:, None] >= t_break))[...] * drop
    y = np.round(y).astype(np.int16)
    mask = rng.random((n_dates, M)) < nan_frac
    y[mask] = NODATA
    # edge pixels: all missing; too few values; constant series
    y[:, 0] = NODATA
    y[:, 1] = NODATA
    y[rng.choice(n_dates, 6, replace=False), 1] = 3000
    y[:, 2] = 4000
    return y.reshape(n_dates, rows, cols), dates


def main():
    from bfast import BFASTMonitor
    y, dates = synthetic()
    start = dt.datetime(2010, 1, 1)
    params = dict(freq=365, k=3, hfrac=0.25, trend=True, level=0.05)
    model = BFASTMonitor(start, backend="python", **params)
    model.fit(y, dates, nan_value=NODATA)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        OUT, y=y, dates=np.array(dates, dtype="datetime64[D]"),
        start=np.datetime64(start.date()), nodata=NODATA,
        freq=params["freq"], k=params["k"], hfrac=params["hfrac"], level=params["level"],
        trend=params["trend"],
        breaks=np.asarray(model.breaks), means=np.asarray(model.means, np.float64),
        magnitudes=np.asarray(model.magnitudes, np.float64), valids=np.asarray(model.valids))
    b = np.asarray(model.breaks)
    print(f"wrote {OUT}: {b.size} pixels, breaks found {(b >= 0).sum()}, none {(b == -1).sum()}, "
          f"-2 {(b == -2).sum()}; numpy {np.__version__}, python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
