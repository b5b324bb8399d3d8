"""BFAST-Monitor benchmark: Gieseke et al.'s Table I shapes, clts versions against the bfast 0.7 package.

    python bench/bench_bfast.py [--quick] [--device SUBSTRING] [--no-anchors] [--shapes D4,Peru]
                                [--type OLS-CUSUM] [--convention r]

Cubes are seed-fixed synthetic int16 (Landsat-like, nodata -32768) with Gieseke et al.'s NaN
fractions; k = 3, 16-day dates, float32 computation, convention "bfast-py" so that every
implementation does the same work. Times are wall times of the whole call (upload, on-device
nodata conversion, kernels, download), best of repeats run round-robin across versions. GFlops^Sp counts Gieseke et al.'s
specification flops per pixel (Fig. 12): 4nK^2 (masked Gram) + 6K^3 (inversion) + 4nK + 2K^2
(beta) + 2NK (predictions) + 3N (residuals, filter) + 4n (sigma, window) + 9(N - n) (MOSUM,
boundary, break, mean). "%copy" = cube bytes read / wall time against the device's copy
bandwidth measured in the same run. Anchors (bfast 0.7, its own venv at $BFAST_PYTHON, default
/tmp/bfastenv/bin/python, see bench/bfast_py_fixtures.py): the OpenCL backend on the same
device, and the Python backend on a pixel subset (its rate is per pixel).
``--type`` picks strucchange's monitoring processes (R's ``type``, comma-separated, timed
round-robin); any but the OLS-MOSUM alone runs with convention "r" and without anchors (bfast
0.7 has the OLS-MOSUM only), its results in bench/results/bfast-<types>-r-<device>.md;
``--convention r`` runs the OLS-MOSUM as R does; ``--r-pixels P`` (convention r) times R's
``bfastmonitor(type=)`` looped over P pixels (bench/bfast_type_r_timing.R): "x R" = its seconds
a pixel / ours. ``--covariate shared,pixel`` adds one covariate to the model (a random walk
per date shared by all pixels, or one per pixel and date: ``regressors`` shaped like the
cube), timed round-robin against each other with convention "r" (K = 9).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from common import copy_bandwidth, markdown_table, write_result  # noqa: E402

import clts  # noqa: E402
from clts.runtime import get_device, timing, usable  # noqa: E402

SHAPES = {  # M, N, n, NaN fraction (Gieseke et al.'s Table I; Peru (Small)-like)
    "D1": (16384, 1024, 512, 0.50), "D2": (16384, 512, 256, 0.50),
    "D3": (32768, 512, 256, 0.50), "D4": (32768, 256, 128, 0.50),
    "D5": (65536, 256, 128, 0.50), "D6": (16384, 1024, 256, 0.75),
    "Peru": (111556, 235, 113, 0.69),
}
NODATA = -32768
K = 8


def spec_flops(M, N, n):
    return M * (4 * n * K * K + 6 * K ** 3 + 4 * n * K + 2 * K * K + 2 * N * K + 3 * N + 4 * n
                + 9 * (N - n))


def make_cube(M, N, n, nan, seed=0):
    rng = np.random.default_rng(seed)
    dates = np.datetime64("2000-01-01") + (np.arange(N) * 16).astype("timedelta64[D]")
    t = np.arange(N) * 16.0 / 365.0
    y = np.empty((N, M), np.int16)
    step = 8192
    for a in range(0, M, step):
        b = min(M, a + step)
        m = b - a
        v = (5000 + 30 * t[:, None] + 800 * np.sin(2 * np.pi * t[:, None] + rng.uniform(0, 6, m))
             + 150 * rng.standard_normal((N, m)))
        brk = rng.integers(n, N, m)
        v -= (np.arange(N)[:, None] >= brk) * 1500 * (rng.random(m) < 0.3)
        v = np.round(v)
        v[rng.random((N, m)) < nan] = NODATA
        y[:, a:b] = v
    return y, dates, dates[n]


def time_calls(fns, dev, repeats):
    """Best (min) wall and kernel time of each of ``fns``, run round-robin so that load from
    other processes hits all of them alike."""
    res = {k: f() for k, f in fns.items()}
    walls = {k: [] for k in fns}
    kern = {k: [] for k in fns}
    for _ in range(repeats):
        for k, f in fns.items():
            with timing(dev) as t:
                t0 = time.perf_counter()
                res[k] = f()
                w = time.perf_counter() - t0
            walls[k].append(w)
            kern[k].append(t.kernel_seconds)
    return {k: (min(walls[k]), min(kern[k]), res[k]) for k in fns}


def anchor(path, backend, dev, pixels=0):
    py = os.environ.get("BFAST_PYTHON", "/tmp/bfastenv/bin/python")
    if not Path(py).exists():
        return None
    sub = "portable" if "pocl" in dev.slug else ("intel" if "intel" in dev.slug else dev.name)
    env = dict(os.environ)
    try:
        from clts.runtime import icd
        vd = icd.ensure_vendor_dir()
        if vd:
            env["OCL_ICD_VENDORS"] = vd
    except Exception:
        pass
    r = subprocess.run([py, str(HERE / "bfast_anchor_run.py"), str(path), backend, sub,
                        str(pixels)], capture_output=True, text=True, env=env, timeout=1800)
    if r.returncode != 0:
        print(f"  anchor {backend} failed: {r.stderr[-500:]}", file=sys.stderr)
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def r_timing(y, n, N, types, pixels):
    """{type: (R's seconds a pixel, its breaks)} of bfast::bfastmonitor(type=) on the first
    ``pixels`` pixels (bench/bfast_type_r_timing.R; the 16-day dates as decimal years)."""
    import csv
    time_ = 2000 + np.arange(N) * 16.0 / 365.0
    vals = y[:, :pixels].astype(np.float64)
    vals[y[:, :pixels] == NODATA] = np.nan
    with tempfile.TemporaryDirectory() as td:
        src, dst = Path(td) / "in.csv", Path(td) / "out.csv"
        with open(src, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["time"] + [f"p{i}" for i in range(vals.shape[1])])
            for i in range(N):
                w.writerow([f"{time_[i]:.17g}"] + ["NA" if np.isnan(v) else f"{v:.17g}" for v in vals[i]])
        r = subprocess.run(["Rscript", str(HERE / "bfast_type_r_timing.R"), str(src),
                            f"{time_[n]:.17g}", ",".join(types), str(dst)],
                           capture_output=True, text=True, timeout=3600)
        if r.returncode != 0:
            print(f"  R failed: {r.stderr[-500:]}", file=sys.stderr)
            return {}
        rows = list(csv.DictReader(open(dst)))
    out = {}
    for ty in types:
        sel = [x for x in rows if x["type"] == ty]
        out[ty] = (float(sel[0]["seconds"]), np.array([int(x["breaks"]) for x in sel]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="an eighth of the pixels, fewer repeats")
    ap.add_argument("--device", action="append", help="device substring (default: all)")
    ap.add_argument("--no-anchors", action="store_true")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--type", default="OLS-MOSUM",
                    help="monitoring processes (R's type), comma-separated: OLS-MOSUM, "
                    "OLS-CUSUM, RE, ME; several are timed round-robin with convention r")
    ap.add_argument("--convention", default="bfast-py", choices=("bfast-py", "r"))
    ap.add_argument("--covariate", default="",
                    help="comma-separated: none, shared (one covariate per date), pixel (one "
                    "per pixel and date); timed round-robin with convention r")
    ap.add_argument("--r-pixels", type=int, default=0,
                    help="with convention r: time R's bfastmonitor(type=) on this many pixels "
                    "(bench/bfast_type_r_timing.R) and compare its breaks")
    args = ap.parse_args()
    types = args.type.split(",")
    if any(ty not in ("OLS-MOSUM", "OLS-CUSUM", "RE", "ME") for ty in types):
        ap.error(f"--type: OLS-MOSUM, OLS-CUSUM, RE or ME, got {args.type}")
    covs = args.covariate.split(",") if args.covariate else [None]
    if any(c not in (None, "none", "shared", "pixel") for c in covs):
        ap.error(f"--covariate: none, shared or pixel, got {args.covariate}")
    convention = "r" if types != ["OLS-MOSUM"] or args.covariate else args.convention
    if convention != "bfast-py":
        args.no_anchors = True          # the anchors compute the bfast 0.7 convention
    infos = [i for i in usable() if not i.simulator]
    if args.device:
        infos = [i for i in infos if any(s.lower() in (i.slug + i.name + i.platform).lower()
                                         for s in args.device)]
    repeats = 3 if args.quick else 5
    for info in infos:
        dev = get_device(info)
        bw = copy_bandwidth(dev)
        print(f"{dev.slug}: copy bandwidth {bw:.1f} GB/s; load {os.getloadavg()[0]:.2f}", flush=True)
        rows = []
        for name in args.shapes.split(","):
            M, N, n, nan = SHAPES[name]
            if args.quick:
                M //= 8
            y, dates, start = make_cube(M, N, n, nan)
            flops = spec_flops(M, N, n)
            rng = np.random.default_rng(1)
            regs = {None: None, "none": None,
                    "shared": rng.standard_normal(N).cumsum() if "shared" in covs else None,
                    "pixel": (rng.standard_normal((N, M, 1), np.float32).cumsum(0)
                              if "pixel" in covs else None)}

            def call(ty, version, cov=None):
                return lambda: clts.bfast_monitor(y, dates, start, nodata=NODATA, device=dev,
                                                  convention=convention, version=version,
                                                  type=ty, progress=False,
                                                  regressors=regs[cov])
            runs = [(ty, v, c) for ty in types for v in ("fused", "multi", "auto")
                    for c in covs]
            results = time_calls({tv: call(*tv) for tv in runs}, dev, repeats)
            anc_cl = anc_py = None
            if not args.no_anchors:
                with tempfile.TemporaryDirectory() as td:
                    p = Path(td) / "cube.npz"
                    np.savez(p, y=y, dates=dates, start=start, nodata=NODATA)
                    anc_cl = anchor(p, "opencl", dev)
                    anc_py = anchor(p, "python", dev, pixels=300 if args.quick else 1500)
            r_anchor = (r_timing(y, n, N, types, args.r_pixels)
                        if args.r_pixels and convention == "r" else {})
            for ty, version, cov in runs:
                wall, kern, res = results[ty, version, cov]
                best = min(results[ty, v, cov][0] for v in ("fused", "multi"))
                plan = res.plan
                row = {"shape": name, "M": M, "N": N, "n": n, "NaN": f"{nan:.0%}", "type": ty,
                       **({"covariate": cov} if args.covariate else {}),
                       "version": f"{version} ({plan.version}, lanes {plan.lanes}, wg {plan.wg})",
                       "wall ms": wall * 1e3, "kernel ms": kern * 1e3,
                       "Mpx/s": M / wall / 1e6, "GFlops^Sp": flops / wall / 1e9,
                       "%copy": 100 * y.nbytes / wall / 1e9 / bw}
                if version == "auto":
                    row["auto/best"] = wall / best
                if ty in r_anchor:
                    secs, rb = r_anchor[ty]
                    row["x R"] = secs / (wall / M)
                    row["same breaks as R"] = f"{np.mean(rb == res.breaks.ravel()[:rb.size]):.1%}"
                if anc_cl:
                    row["x bfast-opencl"] = anc_cl["seconds"] / wall
                    row["same breaks as bfast-opencl"] = f"{np.mean(np.array(anc_cl['breaks']) == res.breaks.ravel()):.1%}"
                if anc_py:
                    row["x bfast-python"] = (anc_py["seconds"] / anc_py["pixels"]) / (wall / M)
                    k = anc_py["pixels"]
                    row["same breaks as bfast-python"] = f"{np.mean(np.array(anc_py['breaks']) == res.breaks.ravel()[:k]):.1%}"
                rows.append(row)
            if anc_cl:
                print(f"  {name}: bfast-opencl {M / anc_cl['seconds'] / 1e3:.1f} kpx/s", flush=True)
            if anc_py:
                print(f"  {name}: bfast-python {anc_py['pixels'] / anc_py['seconds'] / 1e3:.2f} kpx/s",
                      flush=True)
            for r in rows[-len(runs):]:
                print("  " + ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                                       for k, v in r.items()), flush=True)
        notes = ("Command: `python bench/bench_bfast.py" + (" --quick" if args.quick else "")
                 + ("" if types == ["OLS-MOSUM"] else f" --type {args.type}")
                 + (f" --r-pixels {args.r_pixels}" if args.r_pixels else "")
                 + (f" --covariate {args.covariate}" if args.covariate else "")
                 + (" --convention r" if types == ["OLS-MOSUM"] and convention == "r" else "")
                 + f"`. float32, type {args.type} (round-robin), convention {convention}, k=3, "
                 "int16 cube "
                 "with nodata converted on "
                 f"the device. Copy bandwidth {bw:.1f} GB/s (bench/common.copy_bandwidth). "
                 "x bfast-* = their time / ours for the same pixels (python backend timed on a "
                 "subset, per pixel).\n")
        tag = ("bfast" if types == ["OLS-MOSUM"] and convention == "bfast-py"
               else f"bfast-{'-'.join(ty.lower() for ty in types)}-{convention}")
        if args.covariate:
            tag += "-covariate-" + "-".join(c for c in covs if c)
        path = write_result(tag, dev, f"BFAST-Monitor (clts.bfast_monitor, {args.type}) vs bfast 0.7",
                            rows, notes)
        print(markdown_table(rows))
        print("wrote", path)


if __name__ == "__main__":
    main()
