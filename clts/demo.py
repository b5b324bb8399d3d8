"""``clts demo``: what the library is for, in a minute, with figures.

1. A synthetic but realistic NDVI cube: 16-day composites over 16 years (23 a year), a
   phenological cycle whose amplitude and greening trend vary over the map, clouds as NaN
   (moving patches, more in winter), and forest clearings planted in the monitoring period.
2. STL of every pixel (period 23) -> a map of the trend's slope (NDVI per year).
3. BFAST-Monitor of every pixel (monitoring from 2017) -> maps of break date and magnitude.
4. The matrix profile of a real recorded series shipped with statsmodels (yearly sunspot
   numbers 1700-2008) -> its top motifs and discord.

It prints where the figures are and how long each step took on which device, nothing else.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

PER_YEAR = 23          # 16-day composites
YEARS = 16
FIRST_YEAR = 2005
MONITOR_FROM = "2017-01-01"


def ndvi_cube(side: int, seed: int = 2026):
    """(ndvi [time, y, x] float32 with NaN, dates datetime64[D], clearing mask, clearing
    dates) of a ``side`` x ``side`` scene."""
    rng = np.random.default_rng(seed)
    n = PER_YEAR * YEARS
    start = np.datetime64(f"{FIRST_YEAR}-01-01")
    year_idx = np.repeat(np.arange(YEARS), PER_YEAR)
    doy = np.tile(np.arange(PER_YEAR) * 16, YEARS)
    dates = (start.astype("datetime64[Y]") + year_idx.astype("timedelta64[Y]")).astype(
        "datetime64[D]") + doy.astype("timedelta64[D]")
    t_year = year_idx + doy / 365.25
    yy, xx = np.mgrid[0:side, 0:side] / max(side - 1, 1)
    base = 0.25 + 0.35 * (1 - yy)                     # greener north
    amp = 0.15 + 0.25 * xx                            # stronger seasons east
    trend = 0.006 * np.sin(np.pi * yy) - 0.004 * xx   # greening middle, browning east
    phase = 2 * np.pi * (doy / 365.25 - 0.55)         # peak in July
    season = np.clip(np.cos(phase), -0.6, 1.0)
    ndvi = (base[None] + amp[None] * season[:, None, None]
            + trend[None] * (t_year - YEARS / 2)[:, None, None]
            + 0.025 * rng.standard_normal((n, side, side)))
    # clearings: rectangles that lose most of their vegetation on a date in 2017-2020
    cleared = np.zeros((side, side), bool)
    when = np.full((side, side), np.datetime64("NaT"), "datetime64[D]")
    for _ in range(max(3, side // 12)):
        h, w = rng.integers(side // 12 + 2, side // 5 + 3, 2)
        y0, x0 = rng.integers(0, side - h), rng.integers(0, side - w)
        k = int(rng.integers(PER_YEAR * 12, n - PER_YEAR // 2))
        region = (slice(y0, y0 + h), slice(x0, x0 + w))
        ndvi[(slice(k, None),) + region] = (0.6 * ndvi[(slice(k, None),) + region] - 0.12)
        cleared[region] = True
        when[region] = dates[k]
    # clouds: moving blobs, more often in the cold season; a few bad whole scenes
    cloud_p = 0.35 + 0.3 * (np.cos(phase) < 0)
    for i in range(n):
        if rng.random() < 0.04:
            ndvi[i] = np.nan
            continue
        cy, cx, r = rng.random(3) * [side, side, side * 0.8]
        blob = (np.hypot(np.arange(side)[:, None] - cy, np.arange(side)[None] - cx) < r)
        if rng.random() < cloud_p[i]:
            ndvi[i][blob] = np.nan
    return ndvi.astype(np.float32), dates, cleared, when


def _save(fig, path: Path) -> Path:
    import matplotlib.pyplot as plt
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _slope_map(slope, path):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.2, 5))
    v = float(np.nanmax(np.abs(slope))) or 1.0
    im = ax.imshow(slope, cmap="BrBG", vmin=-v, vmax=v, interpolation="nearest")
    fig.colorbar(im, ax=ax, label="NDVI per year")
    ax.set_title("STL trend slope (green: greening, brown: browning)")
    ax.set_xticks([])
    ax.set_yticks([])
    fig.tight_layout()
    return _save(fig, path)


def run_demo(device=None, quick=False, out_dir="clts-demo") -> int:
    import logging
    import matplotlib
    matplotlib.use("Agg")
    from .options import set_options
    log = logging.getLogger("clts")
    level = log.level
    log.setLevel(logging.ERROR)      # profile notes are not the demo (setLevel: it clears
    # logging's per-logger cache of enabled levels, which a plain assignment would leave stale)
    try:
        with set_options(progress=False):
            return _run(device, quick, out_dir)
    finally:
        log.setLevel(level)      # the caller's logging as it was (a test process goes on)


def _run(device, quick, out_dir) -> int:
    import clts
    from .runtime import get_device
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        print(f"clts demo: --out-dir {out} is a file; give a folder for the figures",
              file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    dev = get_device(device)
    print(f"clts demo on {dev.slug} ({dev}); figures in {out.resolve()}/ (a first run's times "
          "include building the kernels)")

    side = 48 if quick else 120
    t0 = time.perf_counter()
    ndvi, dates, cleared, _ = ndvi_cube(side)
    t_make = time.perf_counter() - t0
    cloud = float(np.isnan(ndvi).mean())
    print(f"  NDVI cube: {len(dates)} dates (16-day composites {dates[0]} .. {dates[-1]}) x "
          f"{side} x {side} pixels, {cloud:.0%} cloud: made in {t_make:.1f} s")

    t0 = time.perf_counter()
    r = clts.stl(ndvi, PER_YEAR, time_axis=0, device=dev, progress=False)
    slope = r.trend_slope() * PER_YEAR
    t_stl = time.perf_counter() - t0
    p1 = _slope_map(slope, out / "ndvi_trend_slope.png")
    print(f"  STL of {side * side:,} pixels (period {PER_YEAR}): {t_stl:.2f} s -> {p1.name}")

    t0 = time.perf_counter()
    b = clts.bfast_monitor(ndvi, dates, np.datetime64(MONITOR_FROM), freq=365.25, device=dev,
                           progress=False)
    t_bfast = time.perf_counter() - t0
    hit = float(np.mean(b.breaks[cleared] >= 0)) if cleared.any() else 0.0
    false = float(np.mean(b.breaks[~cleared] >= 0))
    p2 = _save(b.plot(title=f"BFAST-Monitor from {MONITOR_FROM[:4]}: planted clearings found in "
                            f"{hit:.0%} of their pixels, alarms elsewhere {false:.0%}"),
               out / "ndvi_breaks.png")
    print(f"  BFAST-Monitor of {side * side:,} pixels from {MONITOR_FROM}: {t_bfast:.2f} s "
          f"-> {p2.name}")

    import pandas as pd
    from statsmodels.datasets import sunspots
    data = sunspots.load_pandas().data
    series = pd.Series(data["SUNACTIVITY"].to_numpy(dtype=float),
                       index=pd.to_datetime(data["YEAR"].astype(int).astype(str)))
    m = 11
    t0 = time.perf_counter()
    mp = clts.matrix_profile(series, m, device=dev, progress=False)
    t_mp = time.perf_counter() - t0
    p3 = _save(mp.plot(max_motifs=2, title=f"Yearly sunspot numbers {series.index[0].year}-"
                                           f"{series.index[-1].year}: matrix profile, m = {m} "
                                           "years"), out / "sunspots_motifs.png")
    print(f"  matrix profile of the sunspot record ({len(series)} years, m={m}): {t_mp:.2f} s "
          f"-> {p3.name}")
    return 0
