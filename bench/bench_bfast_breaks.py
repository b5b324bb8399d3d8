"""Batched Bai-Perron breakpoints (``clts.bfast_breaks``) against R's strucchange::breakpoints
looped over pixels and ruptures' Dynp, on the same pixels.

Workload: 10,000 pixels x 300 dates (16-day, 23 a year), season order 3 + trend (K = 8),
10 % missing, 0-3 level shifts a pixel; h = 0.15, up to 5 breaks, BIC, float64.
R and ruptures are too slow for all pixels: they run on the first ``--r-pixels`` /
``--rpt-pixels`` pixels and their time is extrapolated linearly to the whole batch (per pixel,
the work does not depend on the others); their breakpoints are checked against clts's on those
pixels. ruptures gets each pixel's valid values and the linear-model cost (CostLinear) with
min_size = h, and is asked for the selected number of breaks only (one ``predict``).
The device figure: useful floating-point operations of the RSS-triangle kernel (Gentleman's
rotations: 11 K + 5 K (K - 1) / 2 + 3 flops and K divisions a row) against the device's double
FMA peak measured in the same run by a chain-of-FMA kernel.

    python bench/bench_bfast_breaks.py [--device pocl] [--pixels 10000] [--r-pixels 40] [--quick]

``--quick`` (scripts/gpu-check.sh): the same clts workload timed once, R on 8 pixels and
ruptures on 2 (their per-pixel rates, so the comparison stands on fewer pixels).
"""
from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_line, quiet, write_result  # noqa: E402

HERE = Path(__file__).resolve().parent


def workload(M, N=300, seed=0):
    rng = np.random.default_rng(seed)
    t = 2000 + np.arange(N) / 23.0
    y = (0.5 + 0.2 * np.sin(2 * np.pi * t[:, None] + rng.uniform(0, 6, M))
         + 0.03 * rng.standard_normal((N, M)))
    for k in range(3):
        on = rng.random(M) < 0.5
        y += on * (t[:, None] >= rng.uniform(t[30], t[-30], M)) * rng.uniform(-0.3, 0.3, M)
    y[rng.random((N, M)) < 0.1] = np.nan
    return t, y


def fma_peak(dev, iters=4096):
    """Double FMA GFLOP/s of the device: a chain of 8 independent FMA streams of double8."""
    import pyopencl as cl
    src = """#pragma OPENCL EXTENSION cl_khr_fp64 : enable
    __kernel void peak(__global double8* o, const int n) {
        double8 a = (double8)(get_global_id(0)) * 1e-9, b = (double8)(0.999999), c = (double8)(1e-7);
        double8 a1 = a + 1, a2 = a + 2, a3 = a + 3, a4 = a + 4, a5 = a + 5, a6 = a + 6, a7 = a + 7;
        for (int i = 0; i < n; ++i) {
            a = fma(a, b, c); a1 = fma(a1, b, c); a2 = fma(a2, b, c); a3 = fma(a3, b, c);
            a4 = fma(a4, b, c); a5 = fma(a5, b, c); a6 = fma(a6, b, c); a7 = fma(a7, b, c);
        }
        o[get_global_id(0)] = a + a1 + a2 + a3 + a4 + a5 + a6 + a7;
    }"""
    prg = cl.Program(dev.context, src).build()
    n_items = 4096
    out = cl.Buffer(dev.context, cl.mem_flags.WRITE_ONLY, n_items * 64)
    k = prg.peak
    best = 0.0
    for _ in range(4):
        t0 = time.perf_counter()
        k(dev.queue, (n_items,), None, out, np.int32(iters))
        dev.queue.finish()
        dt = time.perf_counter() - t0
        best = max(best, n_items * iters * 8 * 8 * 2 / dt / 1e9)
    return best


def useful_flops(y, K, h=0.15):
    """Flops of the RSS rows the dynamic programmes read: starts at the first value and after
    h..n-h values, each to the last date."""
    N, M = y.shape
    per_row = 11 * K + 5 * K * (K - 1) // 2 + 3
    total = 0
    valid = ~np.isnan(y)
    for p in range(M):
        d = np.nonzero(valid[:, p])[0]
        n = d.size
        hh = int(np.floor(n * h))
        starts = np.r_[d[0], d[hh:n - hh + 1]]
        total += int(np.sum(N - starts))
    return total * per_row


class RUnavailable(Exception):
    """R cannot run here (no Rscript on PATH, or the script failed: strucchange missing)."""


def run_r(t, y, cols):
    """(seconds, breakpoints per pixel) of R's strucchange on pixels ``cols``; RUnavailable
    where R cannot run here."""
    import shutil
    if shutil.which("Rscript") is None:
        raise RUnavailable("Rscript not found on PATH (Debian: apt-get install r-base-core "
                           "r-cran-strucchange)")
    with tempfile.TemporaryDirectory() as tmp:
        inp, outp = Path(tmp) / "in.csv", Path(tmp) / "out.csv"
        body = np.column_stack([t, y[:, cols]])
        np.savetxt(inp, body, delimiter=",", comments="", fmt="%.10g",
                   header="time," + ",".join(f"p{c}" for c in cols))
        p = subprocess.run(["Rscript", str(HERE / "bfast_bp_r_timing.R"), str(inp), str(outp)],
                           capture_output=True, text=True)
        if p.returncode != 0:
            tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise RUnavailable(f"Rscript failed: {tail}")
        with open(outp) as f:
            rows = list(csv.DictReader(f))
    bps = [[int(v) for v in r["breakpoints"].split()] if r["breakpoints"] not in ("", "NA")
           else [] for r in rows]
    return float(rows[0]["seconds"]), bps


def run_ruptures(t, y, cols, X, r):
    import ruptures as rpt
    out = []
    t0 = time.perf_counter()
    for c in cols:
        ok = ~np.isnan(y[:, c])
        d = np.nonzero(ok)[0]
        n = d.size
        hh = int(np.floor(n * 0.15))
        m = int(r.n_breaks[c])
        algo = rpt.Dynp(custom_cost=rpt.costs.CostLinear(), min_size=hh, jump=1)
        algo.fit(np.column_stack([y[ok, c], X[ok]]))
        out.append([int(d[b - 1]) for b in algo.predict(n_bkps=m)[:-1]] if m > 0 else [])
    return time.perf_counter() - t0, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default=None)
    ap.add_argument("--pixels", type=int, default=10000)
    ap.add_argument("--r-pixels", type=int, default=None, help="default 40 (--quick: 8)")
    ap.add_argument("--rpt-pixels", type=int, default=None, help="default 4 (--quick: 2)")
    ap.add_argument("--quick", action="store_true",
                    help="one timed clts run, the anchors on fewer pixels")
    a = ap.parse_args()
    a.r_pixels = a.r_pixels or (8 if a.quick else 40)
    a.rpt_pixels = a.rpt_pixels or (2 if a.quick else 4)
    quiet()
    import clts
    from clts.bfast.common import design_matrix, trend_scaling
    dev = clts.get_device(a.device)
    t, y = workload(a.pixels)
    M = y.shape[1]
    kw = dict(freq=1.0, order=3, h=0.15, breaks=5, magnitudes=False, device=dev, progress=False)
    clts.bfast_breaks(y[:, :256], t, **kw)                      # build, warm the pools
    load0 = os.getloadavg()[0]
    times = []
    for _ in range(1 if a.quick else 2):
        t0 = time.perf_counter()
        r = clts.bfast_breaks(y, t, **kw)
        times.append(time.perf_counter() - t0)
    t_clts = min(times)
    peak = fma_peak(dev)
    flops = useful_flops(y, 8)
    sub = list(range(a.r_pixels))
    try:
        got_r, skipped_r = run_r(t, y, sub), ""
    except RUnavailable as exc:
        got_r, skipped_r = None, f"R anchor skipped: {exc}"
        print(skipped_r, flush=True)
    c, s = trend_scaling(t, t.size)
    X = design_matrix(t, 3, 1.0, True, c, s)
    subr = list(range(a.rpt_pixels))
    t_rpt, bps_rpt = run_ruptures(t, y, subr, X, r)
    agree_rpt = sum(list(r.breakpoints[:len(b), c]) == b for c, b in zip(subr, bps_rpt))
    load1 = os.getloadavg()[0]
    rpt_all = t_rpt / len(subr) * M
    rows = [
        dict(what="clts.bfast_breaks", pixels=M, seconds=t_clts, ms_per_pixel=1e3 * t_clts / M,
             speedup="1", agree="-")]
    if got_r is not None:
        t_r, bps_r = got_r
        agree_r = sum(list(r.breakpoints[:len(b), c]) == b and r.n_breaks[c] == len(b)
                      for c, b in zip(sub, bps_r))
        r_all = t_r / len(sub) * M
        rows.append(dict(what=f"R strucchange::breakpoints (measured on {len(sub)}, "
                              "extrapolated)", pixels=M, seconds=r_all,
                         ms_per_pixel=1e3 * t_r / len(sub), speedup=f"{r_all / t_clts:.0f}x",
                         agree=f"{agree_r}/{len(sub)}"))
    rows += [
        dict(what=f"ruptures Dynp CostLinear (measured on {len(subr)}, extrapolated)",
             pixels=M, seconds=rpt_all, ms_per_pixel=1e3 * t_rpt / len(subr),
             speedup=f"{rpt_all / t_clts:.0f}x", agree=f"{agree_rpt}/{len(subr)}"),
    ]
    gflops = flops / t_clts / 1e9
    notes = (f"10,000 x 300 float64, K = 8, h = 0.15, breaks = 5, BIC; 10 % missing. "
             f"Load average {load0:.2f} before the clts runs, {load1:.2f} after the anchors "
             f"(2 cores shared). clts: best of {len(times)} full run(s) ({', '.join(f'{x:.2f}' for x in times)} s). "
             f"RSS-triangle kernel: {flops / 1e9:.1f} GFLOP useful, {gflops:.1f} GFLOP/s = "
             f"{100 * gflops / peak:.0f} % of the device's measured double FMA peak "
             f"({peak:.0f} GFLOP/s; the rotations' K divisions a row are not FMAs). "
             f"Command: python bench/bench_bfast_breaks.py --device {dev.slug}"
             f"{' --quick' if a.quick else ''}\n"
             + (f"{skipped_r}.\n" if skipped_r else ""))
    path = write_result("bfast-breaks", dev, "Bai-Perron breakpoints: clts vs R and ruptures",
                        rows, notes)
    print(machine_line(dev))
    print(path.read_text())


if __name__ == "__main__":
    main()
