"""Benchmark the matrix profile's k > 1 path: in-kernel top-k lists against k = 1 and
against the blocked path (distance-matrix rows on the device, top-k on the host), and the
`store` / `topk_store` options (a tile's best values / k-lists in private or local memory).

    python bench/bench_mp_topk.py [--device D] [--sizes 15 16] [--k 4] [--repeats 3]
                                  [--blocked-max 15] [--quick]

Random walk, m = 256, self-join, float64, wall time of the whole call (statistics, kernels,
exact re-evaluation, host merges). Every variant runs once per round, rounds interleaved (the
machine is shared: the min over rounds is the steadier figure, the median is also given).
The blocked path is forced by lowering ``clts.mp.topk.TOPK_MAX`` below k; it runs only up to
2^blocked-max (its host part is O(n^2) Python work per row). ``--quick`` (scripts/gpu-check.sh):
sizes 2^13 and 2^14, 2 repeats, the blocked path at 2^13 only. Writes
bench/results/mp-topk-<device slug>.md.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import write_result  # noqa: E402

import clts  # noqa: E402
from clts.mp import topk  # noqa: E402
from clts.runtime import get_device  # noqa: E402

M = 256


def _run(T, dev, k, blocked=False, **kw):
    old = topk.TOPK_MAX
    if blocked:
        topk.TOPK_MAX = 0
    try:
        t0 = time.perf_counter()
        r = clts.matrix_profile(T, M, k=k, device=dev, progress=False, **kw)
        return time.perf_counter() - t0, r
    finally:
        topk.TOPK_MAX = old


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default=None)
    ap.add_argument("--sizes", type=int, nargs="+", default=None,
                    help="exponents of n = 2^E (default 15 16; --quick 13 14)")
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=None, help="default 3 (--quick: 2)")
    ap.add_argument("--blocked-max", type=int, default=None, help="default 15 (--quick: 13)")
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    a = ap.parse_args()
    a.sizes = a.sizes or ([13, 14] if a.quick else [15, 16])
    a.repeats = a.repeats or (2 if a.quick else 3)
    a.blocked_max = a.blocked_max if a.blocked_max is not None else (13 if a.quick else 15)
    dev = get_device(a.device)
    k = a.k
    variants = [("k=1, store=private", dict(k=1, store="private")),
                ("k=1, store=local", dict(k=1, store="local")),
                (f"k={k} in-kernel, topk_store=private", dict(k=k, topk_store="private")),
                (f"k={k} in-kernel, topk_store=local", dict(k=k, topk_store="local")),
                (f"k={k} blocked (old path)", dict(k=k, blocked=True))]
    rows = []
    for e in a.sizes:
        n = 1 << e
        T = np.cumsum(np.random.default_rng(0).standard_normal(n))
        todo = [(name, kw) for name, kw in variants
                if not (kw.get("blocked") and e > a.blocked_max)]
        for name, kw in todo:                     # warm: builds
            _run(T[:4096], dev, **kw)
        times = {name: [] for name, _ in todo}
        ref = None
        for _ in range(a.repeats):
            for name, kw in todo:
                if kw.get("blocked") and times[name]:
                    continue                      # slow: once
                t, r = _run(T, dev, **kw)
                times[name].append(t)
                if kw["k"] == k:
                    # every k > 1 variant gives the same lists
                    if ref is None:
                        ref = r
                    else:
                        assert np.allclose(r.P, ref.P, atol=1e-8, rtol=0)
                print(f"n=2^{e} {name}: {t:.3f} s", flush=True)
        t1 = min(times["k=1, store=private"])
        for name, _ in todo:
            ts = sorted(times[name])
            rows.append({"n": f"2^{e}", "variant": name, "runs": len(ts),
                         "min s": f"{ts[0]:.3f}", "median s": f"{ts[len(ts) // 2]:.3f}",
                         "/ k=1 private (min)": f"{ts[0] / t1:.2f}"})
    notes = (f"Random walk, m = {M}, self-join, float64, plan from the device profile "
             f"(store / topk_store forced per row). k > 1 results checked equal between "
             f"variants.\n")
    path = write_result("mp-topk", dev, f"clts.matrix_profile top-k (k = {k}) on {dev}", rows,
                        notes)
    print(path.read_text())


if __name__ == "__main__":
    main()
