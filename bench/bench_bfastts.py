"""``clts.bfastts`` (numpy, host) against R's ``bfast::bfastts`` on the same matrix.

Workload: ``--pixels`` pixels x 300 dates, 20 % NaN: Landsat-like dates (8 or 16 days apart,
2 of 3 kept, over about 10 years, two on one day) to the daily grid ("irregular"), and MODIS
composite days (one in six missing) to the 16-day grid; R's bfastts
takes the whole [dates, pixels] matrix in one call (its ``A[matches, ] = data``), so it is not
looped. Both take the median of ``--repeat`` runs; R's time is measured inside R
(``system.time``), without the process start. The values are checked equal.

    python bench/bench_bfastts.py [--pixels 10000] [--repeat 5]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

R_SCRIPT = r"""
suppressMessages(library(bfast))
a <- commandArgs(trailingOnly = TRUE)
d <- as.Date(readLines(a[1]))
v <- matrix(readBin(a[2], "double", n = as.integer(a[3]) * length(d)), nrow = length(d))
t <- replicate(as.integer(a[4]), system.time(bfastts(v, d, type = a[6]))[["elapsed"]])
x <- bfastts(v, d, type = a[6])
writeBin(as.vector(x), paste0(a[5], ".bin"))
cat(median(t), nrow(x), "\n")
"""


def workload(M, tp, seed=0):
    """(dates, values [dates, pixels]): Landsat-like dates for "irregular", MODIS composite
    days (1, 17, ..., 353 of each year, one in six missing) for "16-day"; 20 % NaN."""
    rng = np.random.default_rng(seed)
    if tp == "irregular":
        steps = rng.choice([8, 16], 450)
        d = np.datetime64("2010-01-05") + np.cumsum(steps).astype("timedelta64[D]")
        d = np.sort(rng.choice(d, 299, replace=False))
        d = np.sort(np.append(d, d[100]))                     # two acquisitions on one day
    else:
        years = np.arange(2003, 2019).astype("datetime64[Y]").astype("datetime64[D]")
        d = (years[:, None] + np.arange(0, 353, 16)).ravel()
        keep = rng.random(d.size) > 1 / 6
        keep[[0, -1]] = True
        d = d[keep][:300]
    v = rng.random((d.size, M))
    v[rng.random(v.shape) < 0.2] = np.nan
    return d, v


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pixels", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    import clts
    res = {}
    for tp in ("irregular", "16-day"):
        d, v = workload(a.pixels, tp)
        ts = []
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            r = clts.bfastts(v, d, tp)
            ts.append(time.perf_counter() - t0)
        res[tp] = (float(np.median(ts)), r, d, v)
        print(f"clts.bfastts {tp}: {a.pixels} pixels x {d.size} dates -> {r.values.shape[0]} "
              f"points: {res[tp][0] * 1e3:.1f} ms (median of {a.repeat})")
    if shutil.which("Rscript") is None:
        print("R: not installed, skipped")
        return
    for tp, (secs_clts, r, d, v) in res.items():
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / "d.txt").write_text("\n".join(str(x) for x in d) + "\n")
            v.ravel(order="F").astype("<f8").tofile(tmp / "v.bin")
            (tmp / "b.R").write_text(R_SCRIPT)
            out = subprocess.run(["Rscript", str(tmp / "b.R"), str(tmp / "d.txt"),
                                  str(tmp / "v.bin"), str(a.pixels), str(a.repeat),
                                  str(tmp / "out"), tp], capture_output=True, text=True,
                                 env=dict(os.environ))
            if out.returncode:
                print("R failed:", out.stderr[-2000:])
                continue
            secs, n = out.stdout.split()
            x = np.fromfile(tmp / "out.bin", "<f8").reshape(int(n), -1, order="F")
            same = np.array_equal(x, r.values, equal_nan=True)
            print(f"R bfastts {tp}: {float(secs) * 1e3:.1f} ms (median, system.time); "
                  f"clts {float(secs) / secs_clts:.1f}x faster; values equal: {same}")


if __name__ == "__main__":
    main()
