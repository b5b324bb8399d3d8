"""The matrix profile's and the trend test's helper launches on pocl: the driver's local size
against ``runtime.launch.fixed_local``'s power-of-two buckets (docs/performance.md, "Matrix
profile and trend: no compile per size").

    python bench/mp_local_size.py [--device pocl] [--calls 7] [--sizes]

In one process, alternating calls, the median wall time of whole calls (numpy in, numpy out)
with the driver's local size (``driver``: as before) and with ``fixed_local`` (``b8``: the
trend test's buckets; the matrix profile's one size per kernel, clts/mp/local_size.py). ``--sizes``
first times calls at new lengths (n, n + 1, n + 37, ...) in each mode: with the driver's local
size, pocl compiles the helper kernels again at their first enqueue for every new range; run it
with an empty ``POCL_CACHE_DIR`` (one mode per process: ``--mode driver`` / ``--mode b8``).
"""
from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import clts  # noqa: E402
from clts.runtime import get_device  # noqa: E402

launch_mod = importlib.import_module("clts.runtime.launch")
ORIG = launch_mod.compiles_per_local_size


def mode(name):
    launch_mod.compiles_per_local_size = (lambda d: False) if name == "driver" else ORIG


def calls(dev, n):
    rng = np.random.default_rng(0)
    T = np.cumsum(rng.standard_normal(n))
    U = np.cumsum(rng.standard_normal(n // 2))
    Y = rng.standard_normal((4000, 120))
    return {
        f"self-join n={n} m=50": lambda: clts.matrix_profile(T, 50, device=dev),
        f"self-join top-3 n={n}": lambda: clts.matrix_profile(T, 50, k=3, device=dev),
        f"AB-join {n} x {n // 2}": lambda: clts.matrix_profile(T, 50, U, device=dev),
        f"aamp p=1 n={n // 4}": lambda: clts.aamp(T[: n // 4], 50, p=1.0, device=dev),
        "trend_test 4000 x 120": lambda: clts.trend_test(Y, device=dev),
    }


def timed(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="pocl")
    ap.add_argument("--calls", type=int, default=7)
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--sizes", action="store_true")
    ap.add_argument("--mode", default="driver", choices=["driver", "b8"])
    a = ap.parse_args()
    dev = get_device(a.device)
    if a.sizes:
        mode(a.mode)
        for n in (a.n, a.n + 1, a.n + 37, a.n + 500, a.n + 3001):
            T = np.cumsum(np.random.default_rng(n).standard_normal(n))
            first = timed(lambda: clts.matrix_profile(T, 50, device=dev))
            again = timed(lambda: clts.matrix_profile(T, 50, device=dev))
            print(f"{a.mode}: self-join n={n}: first {first:.3f} s, again {again:.3f} s")
        return
    work = calls(dev, a.n)
    for m in ("driver", "b8"):          # both warm: every local size compiled once
        mode(m)
        for f in work.values():
            f()
    times = {(name, m): [] for name in work for m in ("driver", "b8")}
    for _ in range(a.calls):
        for m in ("driver", "b8"):
            mode(m)
            for name, f in work.items():
                times[name, m].append(timed(f))
    mode("b8")
    print(f"device {dev}; medians of {a.calls} alternating calls, ms")
    print("| call | driver's local size | fixed_local buckets | ratio |")
    print("|---|---:|---:|---:|")
    for name in work:
        d = statistics.median(times[name, "driver"]) * 1e3
        b = statistics.median(times[name, "b8"]) * 1e3
        print(f"| {name} | {d:.1f} | {b:.1f} | {b / d:.2f} |")


if __name__ == "__main__":
    main()
