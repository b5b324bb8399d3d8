"""Device arrays against numpy data for the functions that came last to the device: mstl with a
Box-Cox lambda, aamp with p != 2, the trend test's transform and multi-variable variants,
mstump, a stumpi sequence (docs/device-arrays.md).

    python bench/device_arrays_rest.py [--device D] [--scale 1] [--repeats 5] [--only TEXT]

Rows: the median wall time of ``--repeats`` warm runs (numpy and device runs alternating) of
each call with numpy in and numpy out
(``numpy``: every call uploads and reads back) and on device arrays uploaded once outside the
timing, until ``clts.to_numpy`` of the result is back (``device``: the whole call and its one
read). ``--scale`` multiplies the batch sizes; ``--only`` runs the rows whose name holds the
text (printed only). Writes
bench/results/device-arrays-rest-<device slug>.md.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import quiet, write_result  # noqa: E402

import clts  # noqa: E402


def cases(rng, s):
    t = np.arange(24 * 14.0)
    Y = (5 + np.sin(2 * np.pi * t / 24) + np.cos(2 * np.pi * t / 168) + 0.001 * t
         + 0.1 * rng.random((200 * s, t.size)))
    T = np.cumsum(rng.standard_normal(2000 * s))
    ser = np.cumsum(rng.standard_normal((2000 * s, 200)), axis=1)
    mul = 0.01 * np.arange(60.0) + rng.standard_normal((2000 * s, 4, 60))
    Tm = np.cumsum(rng.standard_normal((3, 2000 * s)), axis=1)
    Tb = np.cumsum(rng.standard_normal((3, 20000 * s)), axis=1)
    Ts = np.cumsum(rng.standard_normal(5000 * s + 100))
    return [
        (f"mstl {Y.shape[0]} x {Y.shape[1]}, periods (24, 168), no lmbda (for reference)",
         lambda y, d: clts.mstl(y, (24, 168), device=d), Y),
        (f"mstl {Y.shape[0]} x {Y.shape[1]}, periods (24, 168), lmbda 0.5",
         lambda y, d: clts.mstl(y, (24, 168), lmbda=0.5, device=d), Y),
        (f"aamp {T.size}, m 64, p 1", lambda y, d: clts.aamp(y, 64, p=1, device=d), T),
        (f"trend_test {ser.shape[0]} x {ser.shape[1]}, pre_whitening",
         lambda y, d: clts.trend_test(y, variant="pre_whitening", device=d), ser),
        (f"trend_test {ser.shape[0]} x {ser.shape[1]}, correlated_seasonal 12",
         lambda y, d: clts.trend_test(y, variant="correlated_seasonal", period=12, device=d),
         ser),
        (f"trend_test {mul.shape[0]} x 4 x 60, multivariate",
         lambda y, d: clts.trend_test(y, variant="multivariate", device=d), mul),
        (f"trend_test {mul.shape[0]} x 4 x 60, correlated_multivariate",
         lambda y, d: clts.trend_test(y, variant="correlated_multivariate", device=d), mul),
        (f"mstump 3 x {Tm.shape[1]}, m 50", lambda y, d: clts.mstump(y, 50, device=d), Tm),
        (f"mstump 3 x {Tb.shape[1]}, m 50", lambda y, d: clts.mstump(y, 50, device=d), Tb),
        (f"stumpi {Ts.size - 100}, m 50, 20 updates of 1 point, 4 of 20, read",
         lambda y, d: _stumpi_run(y, d), Ts),
    ]


def _stumpi_run(x, dev):
    """stumpi over all but the last 100 points of ``x``, then 20 one-point updates and 4
    20-point ones (device slices of ``x`` for device input), the profile read."""
    n = x.shape[0] - 100
    s = clts.stumpi(x[:n], 50, device=dev)
    for i in range(20):
        s.update(x[n + i:n + i + 1])
    for i in range(4):
        s.update(x[n + 20 + 20 * i:n + 40 + 20 * i])
    return s.P_, s.I_, s.left_I_


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--only", default=None)
    args = ap.parse_args(argv)
    quiet()
    import pyopencl.array as cla
    dev = clts.get_device(args.device)
    rows = []
    for name, call, x in cases(np.random.default_rng(0), args.scale):
        if args.only and args.only not in name:
            continue
        xd = cla.to_device(dev.queue, np.ascontiguousarray(x))
        dev.queue.finish()
        # numpy and device runs alternate (a shared machine's load drifts)
        ts = {"n": [], "d": []}
        clts.to_numpy(call(x, dev))
        clts.to_numpy(call(xd, dev))
        for _ in range(args.repeats):
            for key, arg in (("n", x), ("d", xd)):
                t0 = time.perf_counter()
                clts.to_numpy(call(arg, dev))
                ts[key].append(time.perf_counter() - t0)
        tn, td = (float(np.median(ts[k])) for k in "nd")
        rows.append(dict(call=name, numpy_ms=round(1e3 * tn, 1), device_ms=round(1e3 * td, 1),
                         ratio=round(tn / td, 2)))
        print(rows[-1], flush=True)
    if args.only:           # a part of the table: printed, the results file kept
        return
    path = write_result("device-arrays-rest", dev, "Device arrays vs numpy data (float64)", rows,
                        "Median wall time of warm runs, the device column until the result "
                        "is read back; `python bench/device_arrays_rest.py`.\n")
    print(path.read_text())


if __name__ == "__main__":
    main()
