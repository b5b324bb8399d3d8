"""BFAST with a covariate per pixel: a host cube against a device cube whose covariates are
device arrays too (docs/device-arrays.md, docs/bfast.md).

    python bench/bfast_pixel_regressors_device.py [--device D] [--pixels 4096] [--dates 256]
                                                  [--repeats 5] [--what monitor,breaks]

float32, 10 % NaN, 16-day dates, k = order = 3 with the trend and one covariate per pixel
(a random walk shaped like the cube): K = 9 columns. Rows per function:

- ``host cube``: numpy cube and covariates in, numpy results out (the covariates centred and
  scaled on the host, uploaded chunk by chunk with the cube);
- ``device cube, to numpy``: cube and covariates already on the device (uploaded once,
  outside the timing), the call and ``clts.to_numpy`` of its result (the device centres and
  scales, one read at the end);
- ``device cube, call returns``: the same until the call returns (the host's share).

Best of ``--repeats`` warm runs, the paths taken in turn (round-robin: a loaded machine slows
all alike); the machine's load average is printed. Writes
bench/results/bfast-pixel-regressors-device-<device slug>.md.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import quiet, write_result  # noqa: E402

import clts  # noqa: E402


def cube(M, N, seed=0):
    rng = np.random.default_rng(seed)
    t = 2000 + np.arange(N) * 16 / 365.25
    x = rng.standard_normal((N, M)).cumsum(0).astype(np.float32)
    y = (3 + np.sin(2 * np.pi * t)[:, None] + 0.2 * x + 0.1 * rng.standard_normal((N, M)))
    y[N * 3 // 4:, : M // 3] -= 1.0
    y[rng.random((N, M)) < 0.1] = np.nan
    return t, y.astype(np.float32), x[:, :, None]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--pixels", type=int, default=4096)
    ap.add_argument("--dates", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--what", default="monitor,breaks")
    args = ap.parse_args(argv)
    quiet()
    import pyopencl.array as cla
    dev = clts.get_device(args.device)
    M, N = args.pixels, args.dates
    t, y, x = cube(M, N)
    yd, xd = cla.to_device(dev.queue, y), cla.to_device(dev.queue, x)
    dev.queue.finish()
    start = t[N // 2]
    fns = {"monitor": lambda yy, xx: clts.bfast_monitor(yy, t, start, k=3, freq=1.0,
                                                        regressors=xx, device=dev,
                                                        dtype=np.float32, progress=False),
           "breaks": lambda yy, xx: clts.bfast_breaks(yy, t, order=3, freq=1.0, h=0.15,
                                                      breaks=3, regressors=xx, device=dev,
                                                      dtype=np.float32, progress=False)}
    rows = []
    for what in args.what.split(","):
        fn = fns[what]

        def host():
            return fn(y, x)

        def device_numpy():
            return clts.to_numpy(fn(yd, xd))

        def device_returns():
            t0 = time.perf_counter()
            r = fn(yd, xd)
            dt = time.perf_counter() - t0
            dev.queue.finish()
            return dt, r

        a, b = host(), device_numpy()           # warm (kernel builds), and the same breaks
        key = "breaks" if what == "monitor" else "all_breakpoints"
        same = bool(np.array_equal(np.asarray(getattr(a, key)), getattr(b, key)))
        best = {"host cube": np.inf, "device cube, to numpy": np.inf,
                "device cube, call returns": np.inf}
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            host()
            best["host cube"] = min(best["host cube"], time.perf_counter() - t0)
            t0 = time.perf_counter()
            device_numpy()
            best["device cube, to numpy"] = min(best["device cube, to numpy"],
                                                time.perf_counter() - t0)
            best["device cube, call returns"] = min(best["device cube, call returns"],
                                                    device_returns()[0])
        for path, s in best.items():
            rows.append(dict(function=f"bfast_{what}", path=path, ms=round(1e3 * s, 1),
                             **{"x host": round(best["host cube"] / s, 2),
                                "same breaks": same}))
    load = os.getloadavg()
    path = write_result("bfast-pixel-regressors-device", dev,
                        f"BFAST, one covariate per pixel, {M} x {N} float32, K = 9", rows,
                        f"Best of {args.repeats} warm runs, round-robin; load average "
                        f"{load[0]:.2f} / {load[1]:.2f}; "
                        "`python bench/bfast_pixel_regressors_device.py`.\n")
    print(path.read_text())


if __name__ == "__main__":
    main()
