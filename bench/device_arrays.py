"""The STL -> trend-test pipeline on numpy data and on device arrays (docs/device-arrays.md).

    python bench/device_arrays.py [--device D] [--batch 4000] [--length 368] [--repeats 5]

Rows, each the median wall time of ``--repeats`` warm runs (float32, period 23, 10 % NaN):

- ``numpy``: ``stl(y)`` then ``trend_test(r.trend)``, numpy in and out (every call uploads
  and downloads);
- ``device, call returns``: the two calls on a device array (uploaded once, outside the
  timing) until the second call returns: the host's share, the device still running;
- ``device, to numpy``: the same until ``clts.to_numpy`` of both results is back (the whole
  pipeline with one read);
- ``device, trend slope only``: until ``tt.slope.get()`` returns (the one field a map needs).

On a CPU device the host and the device share cores, so "call returns" is the host's Python
and enqueue cost only where the driver runs kernels asynchronously. Writes
bench/results/device-arrays-<device slug>.md.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import median_time, quiet, write_result  # noqa: E402

import clts  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--batch", type=int, default=4000)
    ap.add_argument("--length", type=int, default=368)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    quiet()
    import pyopencl.array as cla
    dev = clts.get_device(args.device)
    rng = np.random.default_rng(0)
    t = np.arange(args.length)
    y = (np.sin(2 * np.pi * t / 23) + 0.01 * t
         + rng.normal(0, .1, (args.batch, args.length))).astype(np.float32)
    y[rng.random(y.shape) < 0.1] = np.nan
    yd = cla.to_device(dev.queue, y)
    kw = dict(seasonal=25, seasonal_jump=3, trend_jump=4, low_pass_jump=3, device=dev,
              progress=False)

    def numpy_path():
        r = clts.stl(y, 23, **kw)
        return clts.trend_test(r.trend, device=dev)

    def returns():
        r = clts.stl(yd, 23, **kw)
        tt = clts.trend_test(r.trend, device=dev)
        dev.queue.finish()           # outside the timed part: see below
        return tt

    def returned_only():
        t0 = time.perf_counter()
        r = clts.stl(yd, 23, **kw)
        tt = clts.trend_test(r.trend, device=dev)
        dt = time.perf_counter() - t0
        dev.queue.finish()
        return dt, r, tt

    def to_numpy():
        r = clts.stl(yd, 23, **kw)
        return clts.to_numpy({"stl": r, "trend": clts.trend_test(r.trend, device=dev)})

    def slope_only():
        r = clts.stl(yd, 23, **kw)
        return clts.trend_test(r.trend, device=dev).slope.get()

    returns()
    calls = sorted(returned_only()[0] for _ in range(args.repeats))[args.repeats // 2]
    rows = [dict(path="numpy", ms=round(1e3 * median_time(numpy_path, args.repeats), 2)),
            dict(path="device, call returns", ms=round(1e3 * calls, 2)),
            dict(path="device, to numpy", ms=round(1e3 * median_time(to_numpy, args.repeats), 2)),
            dict(path="device, trend slope only",
                 ms=round(1e3 * median_time(slope_only, args.repeats), 2))]
    path = write_result("device-arrays", dev,
                        f"STL -> trend test, {args.batch} x {args.length} float32", rows,
                        "Median wall time of warm runs; `python bench/device_arrays.py`.\n")
    print(path.read_text())


if __name__ == "__main__":
    main()
