"""Build time from empty caches and warm run time of BFAST-Monitor's fused version by the
number of design columns K (harmonic order k, trend on: K = 2k + 2) and lanes (pixels per
work-item).

    python bench/bfast_fused_lanes.py --device intel --K 4,8,12,18 --lanes 1,2,4,8,16 \
        [--pixels 100000] [--dates 276] [--skip-over 150]

Each (K, lanes) runs in a child process with fresh ``XDG_CACHE_HOME`` and ``POCL_CACHE_DIR``
(no cached binary): "first" is the wall time of a first call on one work-group's worth of
pixels (the build, or pocl's compile at the first launch, plus a negligible run), "warm" the
best of three later calls on the full cube (float32, 16-day dates, history = the first half).
``--skip-over S`` skips the larger lane counts of a K once a build took more than S seconds.
``--alternate`` instead times the warm calls of every (K, lanes) in one process, the lanes of
a K alternately, 5 rounds, best (less noise from other load than separate processes).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time


def child(dev_name, k, lanes, pixels, dates):
    import numpy as np

    import clts
    from clts.runtime import get_device

    dev = get_device(dev_name)
    rng = np.random.default_rng(1)
    t = 2000 + np.arange(dates) * 16 / 365.25
    y = (0.3 + 0.1 * np.sin(2 * np.pi * t)[:, None]
         + 0.02 * rng.standard_normal((dates, pixels))).astype(np.float32)
    y[rng.random(y.shape) < 0.1] = np.nan
    sm = float(t[dates // 2])
    kw = dict(k=k, freq=1, version="fused", lanes=lanes, device=dev, progress=False)
    t0 = time.perf_counter()
    clts.bfast_monitor(y[:, :lanes * 16], t, sm, **kw)
    first = time.perf_counter() - t0
    warm = []
    for _ in range(3):
        t0 = time.perf_counter()
        r = clts.bfast_monitor(y, t, sm, **kw)
        warm.append(time.perf_counter() - t0)
    h = hashlib.sha1()
    for name in ("breaks", "means", "magnitudes"):
        h.update(np.ascontiguousarray(getattr(r, name, None) if hasattr(r, name) else r[name]))
    print(json.dumps(dict(first=first, warm=min(warm), crc=h.hexdigest()[:10])))


def alternate(dev_name, Ks, lanes_list, pixels, dates, history, rounds=5):
    import numpy as np

    import clts
    from clts.runtime import get_device

    dev = get_device(dev_name)
    rng = np.random.default_rng(1)
    t = 2000 + np.arange(dates) * 16 / 365.25
    y = (0.3 + 0.1 * np.sin(2 * np.pi * t)[:, None]
         + 0.02 * rng.standard_normal((dates, pixels))).astype(np.float32)
    sm = float(t[dates // 2])
    print(f"# {dev_name}, {pixels} pixels x {dates} dates, float32, history={history!r}, "
          f"warm, best of {rounds} alternating rounds; load {os.getloadavg()}")
    print("| K | " + " | ".join(f"lanes {w} s" for w in lanes_list) + " |")
    print("|---|" + "---|" * len(lanes_list))
    for K in Ks:
        kw = dict(k=(K - 2) // 2, freq=1, version="fused", device=dev, progress=False,
                  history=history)
        for w in lanes_list:
            clts.bfast_monitor(y, t, sm, lanes=w, **kw)
        best = {w: float("inf") for w in lanes_list}
        for _ in range(rounds):
            for w in lanes_list:
                t0 = time.perf_counter()
                clts.bfast_monitor(y, t, sm, lanes=w, **kw)
                best[w] = min(best[w], time.perf_counter() - t0)
        print(f"| {K} | " + " | ".join(f"{best[w]:.3f}" for w in lanes_list) + " |", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="intel")
    ap.add_argument("--K", default="4,8,12,18")
    ap.add_argument("--lanes", default="1,2,4,8,16")
    ap.add_argument("--pixels", type=int, default=100_000)
    ap.add_argument("--dates", type=int, default=276)
    ap.add_argument("--skip-over", type=float, default=150.0)
    ap.add_argument("--history", default="all")
    ap.add_argument("--alternate", action="store_true")
    ap.add_argument("--child", nargs=2, type=int)
    a = ap.parse_args()
    if a.alternate:
        return alternate(a.device, list(map(int, a.K.split(","))),
                         list(map(int, a.lanes.split(","))), a.pixels, a.dates, a.history)
    if a.child:
        return child(a.device, a.child[0], a.child[1], a.pixels, a.dates)
    print(f"# {a.device}, {a.pixels} pixels x {a.dates} dates, float32; load {os.getloadavg()}")
    print("| K | lanes | first call (build) s | warm s |")
    print("|---|---|---|---|")
    for K in map(int, a.K.split(",")):
        skip = False
        for lanes in map(int, a.lanes.split(",")):
            if skip:
                print(f"| {K} | {lanes} | (skipped) | |", flush=True)
                continue
            env = dict(os.environ, XDG_CACHE_HOME=tempfile.mkdtemp(),
                       POCL_CACHE_DIR=tempfile.mkdtemp())
            out = subprocess.run([sys.executable, __file__, "--device", a.device, "--pixels",
                                  str(a.pixels), "--dates", str(a.dates), "--child",
                                  str((K - 2) // 2), str(lanes)],
                                 env=env, capture_output=True, text=True)
            if out.returncode:
                print(f"| {K} | {lanes} | failed: {out.stderr.strip()[-200:]} | |", flush=True)
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"| {K} | {lanes} | {r['first']:.1f} | {r['warm']:.3f} | <!-- results sha1 {r['crc']} -->",
                  flush=True)
            skip = r["first"] > a.skip_over


if __name__ == "__main__":
    main()
