"""What a new series length costs clts.stl, and the kernel time of the local sizes it launches
with (docs/performance.md, "STL: a new length builds nothing").

    python bench/stl_new_length.py lengths [--device pocl]
    python bench/stl_new_length.py local [--device pocl] [--configs A,Af,Ag,B,C,S,M]
                                         [--locals driver,b8,64] [--calls 9]

``lengths``: one process calls stl on 64 series of several lengths, periods and windows (each
twice), printing the wall time and the programs built per call; run it with an empty
``POCL_CACHE_DIR`` to see pocl's compiles at the first enqueue. ``local``: in one process,
alternating calls, the kernel time per call (sum of the profiling intervals; per kernel and in
all, medians) with the driver's local size (``driver``: as before ``fixed_local``) against
``fixed_local``'s buckets (``b8``: about 8 groups per compute unit, the default) and a fixed
local size (``64``: that size whatever the range). Configurations: bench_stl.py's A, B, C;
``f`` float32, ``g`` 5 % missing values; S 8 x 2,000 and M 300 x 240, period 12, robust.
"""
from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import clts  # noqa: E402
from bench_stl import CONFIGS, data  # noqa: E402
from clts.runtime import programs  # noqa: E402

launch_mod = importlib.import_module("clts.runtime.launch")
MORE = dict(CONFIGS, S=(8, 2000, 12, dict(robust=True)), M=(300, 240, 12, dict(robust=True)))


def lengths(dev):
    rng = np.random.default_rng(0)
    for n, period, kw in [(240, 12, {}), (241, 12, {}), (300, 12, {}), (300, 7, {}),
                          (300, 12, dict(seasonal=15)), (300, 12, dict(robust=True)),
                          (360, 12, dict(robust=True))]:
        y = np.sin(np.arange(n) * 2 * np.pi / period) + rng.normal(size=(64, n)) * 0.1
        for again in (False, True):
            b0, t0 = programs.stats["builds"], time.perf_counter()
            clts.stl(y, period=period, device=dev, progress=False, **kw)
            print(f"n {n} period {period} {kw}{' again' if again else ''}: "
                  f"{time.perf_counter() - t0:.3f} s, {programs.stats['builds'] - b0} programs "
                  f"built", flush=True)


def local_sizes(dev, configs, sizes, calls):
    orig = launch_mod.compiles_per_local_size

    def use(size):
        if size == "driver":
            launch_mod.compiles_per_local_size = lambda d: False
        else:   # "64": that size whatever the range; "b8": buckets of 8 groups per unit
            launch_mod.compiles_per_local_size = orig
            launch_mod.GROUPS_PER_UNIT = int(size[1:]) if size.startswith("b") else 0
            if not size.startswith("b"):
                launch_mod.FIXED_LOCAL = int(size)

    for name in configs:
        base = name.rstrip("fg")
        B, N, P, kw = MORE[base]
        y = data(B, N, P)
        if "g" in name[len(base):]:
            y[np.random.default_rng(3).random(y.shape) < 0.05] = np.nan
        y = y.astype(np.float32 if "f" in name[len(base):] else np.float64)
        for size in sizes:          # builds and pocl's compiles first
            use(size)
            clts.stl(y, period=P, device=dev, progress=False, **kw)
        raw = launch_mod._enqueue      # bound by the first launch (the warm-up)
        per = {s: {} for s in sizes}
        total = {s: [] for s in sizes}
        seen = []

        def record(queue, kernel, *args, **kwargs):
            ev = raw(queue, kernel, *args, **kwargs)
            seen.append((kernel.function_name, ev))
            return ev
        launch_mod._enqueue = record
        try:
            for r in range(calls):
                for size in (sizes if r % 2 == 0 else sizes[::-1]):
                    use(size)
                    seen.clear()
                    with launch_mod.timing(dev) as t:
                        clts.stl(y, period=P, device=dev, progress=False, **kw)
                    total[size].append(t.kernel_seconds * 1e3)
                    call = {}
                    for kn, ev in seen:
                        call[kn] = call.get(kn, 0) + (ev.profile.end - ev.profile.start) * 1e-6
                    for kn, v in call.items():
                        per[size].setdefault(kn, []).append(v)
        finally:
            launch_mod._enqueue = raw
            launch_mod.compiles_per_local_size = orig
        print(f"{name} {B} x {N}, median ms per call over {calls} calls: "
              f"{' | '.join(sizes)}")
        for kn in sorted(per[sizes[0]], key=lambda k: -np.median(per[sizes[0]][k])):
            print(f"  {kn:20s}" + "".join(f" {np.median(per[s].get(kn, [0])):9.1f}"
                                          for s in sizes))
        print(f"  {'all kernels':20s}" + "".join(f" {np.median(total[s]):9.1f}" for s in sizes),
              flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("lengths", "local"))
    ap.add_argument("--device", default="pocl")
    ap.add_argument("--configs", default="A,Af,Ag,B,C,S,M")
    ap.add_argument("--locals", default="driver,b8")
    ap.add_argument("--calls", type=int, default=9)
    a = ap.parse_args()
    dev = clts.get_device(a.device)
    if a.what == "lengths":
        lengths(dev)
    else:
        local_sizes(dev, a.configs.split(","), a.locals.split(","), a.calls)


if __name__ == "__main__":
    main()
