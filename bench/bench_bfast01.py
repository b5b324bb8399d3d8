"""``clts.bfast01`` (one break or none, with bfast01classify's typology) against R's
``bfast::bfast01`` + ``bfast01classify`` looped over pixels.

Workload: ``--pixels`` pixels (default 2,000) x 276 dates (16-day, 23 a year, 2000..2012),
season order 3 + trend (K = 8, trim 40), 10 % missing; half the pixels with a break in trend
or level, the others a plain trend; OLS-MOSUM test, pct_stable 0.25, float64. R runs on the
first ``--r-pixels`` pixels (default 40) and its time is extrapolated linearly (per pixel the
work does not depend on the others); its decisions, breaks and types are checked against
clts's on those pixels. ``--test`` picks the tests (R's ``bfast01(test =)``, e.g. ``supF supLM
OLS-CUSUM``; results then in ``bfast01-<tests>-<device>.md``). ``--reg rlm``: both models by
R's ``MASS::rlm`` (``bfast01(reg = "rlm")``; R classifies with ``bench/bfast01_rlm_lib.R``'s
``bfast01classify``, bfast 1.7.2's stopping on rlm fits; results in ``bfast01-rlm-<device>.md``).

    python bench/bench_bfast01.py [--device pocl] [--pixels 2000] [--r-pixels 40] [--test ..]
                                  [--reg rlm]
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


def workload(M, N=276, seed=0):
    rng = np.random.default_rng(seed)
    t = 2000 + np.arange(N) / 23.0
    u = (t - t[0]) / (t[-1] - t[0])
    y = (0.5 + 0.1 * np.sin(2 * np.pi * t[:, None] + rng.uniform(0, 6, M))
         + rng.uniform(-0.2, 0.2, M) * u[:, None] + 0.03 * rng.standard_normal((N, M)))
    at = rng.uniform(0.2, 0.8, M)
    on = rng.random(M) < 0.5
    y += on * (u[:, None] >= at) * (rng.uniform(-0.15, 0.15, M)
                                    + rng.uniform(-0.4, 0.4, M) * (u[:, None] - at))
    y[rng.random((N, M)) < 0.1] = np.nan
    return t, y


def run_r(t, y, cols, tests=("OLS-MOSUM",), reg="lm"):
    if shutil.which("Rscript") is None:
        return None, "Rscript not found on PATH (bfast from the bfast2/bfast source)"
    with tempfile.TemporaryDirectory() as tmp:
        inp, outp = Path(tmp) / "in.csv", Path(tmp) / "out.csv"
        np.savetxt(inp, np.column_stack([t, y[:, cols]]), delimiter=",", comments="",
                   fmt="%.10g", header="time," + ",".join(f"p{c}" for c in cols))
        p = subprocess.run(["Rscript", str(HERE / "bfast01_r_timing.R"), str(inp), str(outp),
                            ",".join(tests), reg], capture_output=True, text=True)
        if p.returncode != 0:
            tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
            return None, f"Rscript failed: {tail}"
        with open(outp) as f:
            return list(csv.DictReader(f)), ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default=None)
    ap.add_argument("--pixels", type=int, default=2000)
    ap.add_argument("--r-pixels", type=int, default=40)
    ap.add_argument("--quick", action="store_true",
                    help="one timed run and R on 5 pixels (scripts/gpu-check.sh)")
    ap.add_argument("--test", nargs="+", default=["OLS-MOSUM"],
                    help="bfast01's tests (aggregate all), default OLS-MOSUM")
    ap.add_argument("--reg", choices=("lm", "rlm"), default="lm",
                    help="bfast01's fits (R's reg), default lm")
    a = ap.parse_args()
    if a.quick:
        a.r_pixels = min(a.r_pixels, 5)
    quiet()
    import clts
    dev = clts.get_device(a.device)
    t, y = workload(a.pixels)
    M = y.shape[1]
    kw = dict(freq=1.0, pct_stable=0.25, test=a.test, reg=a.reg, device=dev, progress=False)
    clts.bfast01(y[:, :64], t, **kw)                        # build, warm the pools
    load0 = os.getloadavg()[0]
    times = []
    for _ in range(1 if a.quick else 2):
        t0 = time.perf_counter()
        r = clts.bfast01(y, t, **kw)
        times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    clts.bfast_breaks(y, t, order=3, freq=1.0, h=40, breaks=1, magnitudes=False, device=dev,
                      progress=False)
    t_bp = time.perf_counter() - t0
    t_clts = min(times)
    sub = list(range(min(a.r_pixels, M)))
    rows_r, skipped = run_r(t, y, sub, a.test, a.reg)
    load1 = os.getloadavg()[0]
    rows = [dict(what=f"clts.bfast01 (+ classify){', reg rlm' if a.reg == 'rlm' else ''}", pixels=M, seconds=t_clts,
                 ms_per_pixel=1e3 * t_clts / M, speedup="1", agree="-")]
    if rows_r is not None:
        t_r = float(rows_r[0]["seconds"])
        agree = sum(int(q["breaks"]) == r.breaks[c] and int(q["breakpoint"]) == r.breakpoint[c]
                    and int(q["type"]) == r.flag_type[c] for c, q in zip(sub, rows_r))
        r_all = t_r / len(sub) * M
        rows.append(dict(what=f"R bfast01{'(reg = rlm)' if a.reg == 'rlm' else ''} + "
                              f"bfast01classify (measured on {len(sub)}, "
                              "extrapolated)", pixels=M, seconds=r_all,
                         ms_per_pixel=1e3 * t_r / len(sub), speedup=f"{r_all / t_clts:.0f}x",
                         agree=f"{agree}/{len(sub)}"))
    notes = (f"{M:,} x {t.size} float64, K = 8, trim 40, {' + '.join(a.test)}, 10 % missing. Load average "
             f"{load0:.2f} before the clts runs, {load1:.2f} after R (2 cores shared). clts: best "
             f"of {len(times)} runs ({', '.join(f'{x:.2f}' for x in times)} s), of which the "
             f"device breakpoints (bfast_breaks, h = 40, breaks = 1) {t_bp:.2f} s; the rest is "
             f"the host fits, tests and classification (numpy, float64). Command: python "
             f"bench/bench_bfast01.py --device {dev.slug} --pixels {M}"
             + ("" if a.test == ["OLS-MOSUM"] else f" --test {' '.join(a.test)}")
             + ("" if a.reg == "lm" else f" --reg {a.reg}") + "\n"
             + (f"R anchor skipped: {skipped}.\n" if skipped else ""))
    name = "bfast01" if a.test == ["OLS-MOSUM"] else "bfast01-" + "-".join(a.test).lower()
    if a.reg == "rlm":
        name += "-rlm"
    path = write_result(name, dev, "bfast01: clts vs R looped", rows, notes)
    print(machine_line(dev))
    print(path.read_text())


if __name__ == "__main__":
    main()
