"""``clts.bfast_decompose`` (R's bfast(), batched) against R's bfast() looped over pixels, on the
same pixels.

Workload: 10,000 pixels x 300 dates (16-day, 23 a year, no missing values: R's bfast needs
stl's complete series), NDVI-like: a season of random phase, a slow trend, noise, and in half
the pixels a level shift at a random date; h = 0.15, R's defaults otherwise (max.iter 10, BIC).
R is too slow for all pixels: it runs on the first ``--r-pixels`` pixels (bench/
bfast_decompose_r_timing.R) and its time is extrapolated linearly to the whole batch (per pixel,
the work does not depend on the others); its trend / season breakpoints and iteration counts are
checked against clts's on those pixels.

    python bench/bench_bfast_decompose.py [--device pocl] [--pixels 10000] [--r-pixels 20]
        [--season harmonic] [--type OLS-MOSUM] [--quick]

``--type``: bfast's test (the dates are R's time(Yt) from 2000, which RE and ME depend on).

``--quick``: one timed clts run, R on 5 pixels.
"""
from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_line, quiet, write_result  # noqa: E402

HERE = Path(__file__).resolve().parent
FREQ = 23


def workload(M, N=300, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(N)
    y = (0.5 + 0.2 * np.sin(2 * np.pi * t[:, None] / FREQ + rng.uniform(0, 6, M))
         + 0.0003 * t[:, None] + 0.03 * rng.standard_normal((N, M)))
    on = rng.random(M) < 0.5
    y += on * (t[:, None] >= rng.integers(60, N - 60, M)) * rng.uniform(-0.3, 0.3, M)
    return y


def run_r(y, cols, season, h, max_iter, type="OLS-MOSUM"):
    """(seconds, [(trend bps, season bps, iterations)]) of R's bfast on pixels ``cols``; None
    with the reason where R cannot run here."""
    if shutil.which("Rscript") is None:
        return None, "Rscript not found on PATH"
    with tempfile.TemporaryDirectory() as tmp:
        inp, outp = Path(tmp) / "in.csv", Path(tmp) / "out.csv"
        np.savetxt(inp, y[:, cols], delimiter=",", comments="", fmt="%.10g",
                   header=",".join(f"p{c}" for c in cols))
        p = subprocess.run(["Rscript", str(HERE / "bfast_decompose_r_timing.R"), str(inp),
                            str(outp), str(FREQ), season, str(h), str(max_iter), type],
                           capture_output=True, text=True)
        if p.returncode != 0:
            tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
            return None, f"Rscript failed (bfast installed?): {tail}"
        with open(outp) as f:
            rows = list(csv.DictReader(f))

    def ints(s):
        return [int(v) for v in s.split()] if s not in ("", "NA") else []
    return (float(rows[0]["seconds"]),
            [(ints(r["trend_bp"]), ints(r["season_bp"]), int(r["iterations"])) for r in rows]), ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default=None)
    ap.add_argument("--pixels", type=int, default=10000)
    ap.add_argument("--r-pixels", type=int, default=None, help="default 20 (--quick: 5)")
    ap.add_argument("--season", default="harmonic", choices=("harmonic", "dummy", "none"))
    ap.add_argument("--type", default="OLS-MOSUM", choices=("OLS-MOSUM", "OLS-CUSUM", "RE", "ME"))
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    a.r_pixels = a.r_pixels or (5 if a.quick else 20)
    quiet()
    import clts
    dev = clts.get_device(a.device)
    y = workload(a.pixels)
    M = y.shape[1]
    kw = dict(h=0.15, season=a.season, max_iter=10, type=a.type, device=dev, progress=False,
              dates=2000 + np.arange(y.shape[0]) / FREQ)
    clts.bfast_decompose(y, FREQ, **kw)                # builds every kernel, warms the pools
    load0 = os.getloadavg()[0]
    times = []
    for _ in range(1 if a.quick else 2):
        t0 = time.perf_counter()
        r = clts.bfast_decompose(y, FREQ, **kw)
        times.append(time.perf_counter() - t0)
    t_clts = min(times)
    sub = list(range(a.r_pixels))
    got, why = run_r(y, sub, a.season, 0.15, 10, a.type)
    load1 = os.getloadavg()[0]
    rows = [dict(what=f"clts.bfast_decompose (season={a.season}, type={a.type})", pixels=M, seconds=t_clts,
                 ms_per_pixel=1e3 * t_clts / M, speedup="1", agree="-")]
    if got is not None:
        t_r, res = got
        agree = sum([b + 1 for b in r.trend_breaks[:, c] if b >= 0] == tb
                    and [b + 1 for b in r.season_breaks[:, c] if b >= 0] == sb
                    and int(r.iterations[c]) == it for c, (tb, sb, it) in zip(sub, res))
        r_all = t_r / len(sub) * M
        rows.append(dict(what=f"R bfast() looped (measured on {len(sub)}, extrapolated)",
                         pixels=M, seconds=r_all, ms_per_pixel=1e3 * t_r / len(sub),
                         speedup=f"{r_all / t_clts:.0f}x", agree=f"{agree}/{len(sub)}"))
    counts = np.bincount(r.iterations.ravel())
    notes = (f"{M:,} x 300 float64, freq 23, h = 0.15, season = {a.season}, max_iter = 10, "
             f"BIC; half the pixels with a level shift. Pixels with a trend break: "
             f"{int(np.sum(r.n_trend_breaks > 0))}, a season break: "
             f"{int(np.sum(r.n_season_breaks > 0))}; iterations (1, 2, ...): "
             f"{', '.join(str(int(c)) for c in counts[1:])}. Load average {load0:.2f} before "
             f"the clts runs, {load1:.2f} after R (2 cores shared). clts: best of "
             f"{len(times)} full run(s) ({', '.join(f'{x:.2f}' for x in times)} s), kernels "
             f"built before. Command: python bench/bench_bfast_decompose.py --device {dev.slug} "
             f"--season {a.season} --type {a.type} --pixels {M}{' --quick' if a.quick else ''}\n"
             + (f"R anchor skipped: {why}.\n" if got is None else ""))
    tag = "" if a.type == "OLS-MOSUM" else "-" + a.type.lower()
    path = write_result(f"bfast-decompose-{a.season}{tag}", dev,
                        "R's bfast() batched: clts.bfast_decompose vs R looped", rows, notes)
    print(machine_line(dev))
    print(path.read_text())


if __name__ == "__main__":
    main()
