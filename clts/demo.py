"""``clts demo``: every algorithm once, on synthetic data of a realistic shape, on one device.

Prints what ran, how long it took, and a check of the result against the numpy reference on a
small slice, so a new user sees in a minute that the device works and what it is worth.
"""
from __future__ import annotations

import time

import numpy as np


def _timed(fn):
    fn()  # first call builds the kernels (cached afterwards)
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _tridiag(dev, rng, quick):
    import clts
    from clts.tridiag.reference import solve_reference
    nsys, n = (5_000 if quick else 50_000), 115
    a, c = rng.uniform(-1, 1, (2, nsys, n))
    b = 4 + rng.uniform(0, 1, (nsys, n))
    d = rng.standard_normal((nsys, n))
    res, t = _timed(lambda: clts.solve_tridiagonal(a, b, c, d, device=dev))
    x = np.asarray(res)
    err = np.max(np.abs(x[:50] - solve_reference(a[:50], b[:50], c[:50], d[:50])[0]))
    return (f"solve_tridiagonal  {nsys} systems x {n} rows, float64, method {res.method}: "
            f"{t * 1e3:.1f} ms ({nsys / t:,.0f} systems/s); max |x - reference| {err:.1e}")


def _stl(dev, rng, quick):
    import clts
    from clts.stl.reference import stl as ref
    batch, period, years = (200 if quick else 2000), 23, 36
    n = period * years
    t = np.arange(n)
    y = (np.sin(2 * np.pi * t / period) + 0.002 * t + 0.3 * rng.standard_normal((batch, n)))
    y[rng.random(y.shape) < 0.2] = np.nan  # 20 % missing (clouds)
    res, sec = _timed(lambda: clts.stl(y, period, device=dev))
    seasonal = ref(y[:3], period)[0]
    err = np.nanmax(np.abs(res.seasonal[:3] - seasonal))
    return (f"stl                {batch} series x {n} (period {period}, 20 % NaN): "
            f"{sec * 1e3:.1f} ms ({batch / sec:,.0f} series/s); max |seasonal - reference| "
            f"{err:.1e}")


def _bfast(dev, rng, quick):
    import clts
    side = 60 if quick else 200
    n_dates = 230
    dates = 2000 + np.sort(rng.uniform(0, 16, n_dates))
    t = dates[:, None, None]
    y = 0.5 + 0.2 * np.sin(2 * np.pi * t) + 0.03 * rng.standard_normal((n_dates, side, side))
    y[:, : side // 2] -= 0.4 * (t[:, 0] > 2013.5)[:, None]  # planted break in the top half
    y[rng.random(y.shape) < 0.5] = np.nan
    res, sec = _timed(lambda: clts.bfast_monitor(y, dates, 2010.0, freq=1.0, device=dev))
    hit = np.mean(res.breaks[: side // 2] >= 0)
    false = np.mean(res.breaks[side // 2:] >= 0)
    return (f"bfast_monitor      {side}x{side} pixels x {n_dates} dates (50 % NaN): "
            f"{sec * 1e3:.1f} ms ({side * side / sec:,.0f} pixels/s); planted break found in "
            f"{hit:.0%} of its pixels, alarms in the unchanged half {false:.0%}")


def _mp(dev, rng, quick):
    import clts
    n, m = (1 << 13 if quick else 1 << 15), 256
    T = np.cumsum(rng.standard_normal(n))
    T[5000:5000 + m] = T[1000:1000 + m] - T[1000] + T[5000]  # planted motif pair
    res, sec = _timed(lambda: clts.matrix_profile(T, m, device=dev))
    pairs = (n - m + 1) ** 2 / 2
    best = int(np.argmin(res.P[:, 0]))
    return (f"matrix_profile     n={n}, m={m}, float64: {sec:.2f} s ({pairs / sec:,.3g} pairs/s); "
            f"best motif at {best} <-> {int(res.I[best, 0])} (planted 1000 <-> 5000)")


def run_demo(device=None, quick=False) -> int:
    from .runtime import get_device
    dev = get_device(device)
    print(f"clts demo on {dev.info.index}: {dev} [{dev.slug}]"
          f"{' (quick sizes)' if quick else ''}")
    rng = np.random.default_rng(2026)
    for part in (_tridiag, _stl, _bfast, _mp):
        print("  " + part(dev, rng, quick), flush=True)
    return 0
