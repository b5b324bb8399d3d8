"""Benchmark the batched matrix-profile functions against stumpy 1.14: clts.mpdist (a pairwise
MPdist matrix), clts.ostinato (the consensus motif of many series), clts.snippets.

    python bench/bench_mp_batched.py [--quick] [--device D] [--rounds R] [--only NAME]

- mpdist: the all-pairs MPdist matrix of ``ns`` random walks of n = 1000 points, m = 50
  (full: ns = 100, 5050 pairs; quick: ns = 30). clts computes the matrix in one call (half
  the pairs, mirrored); stumpy.mpdist (two stump joins per pair) loops over ``sub`` pairs and
  its time is scaled to the pair count (a loop, linear by construction); clts on the same
  ``sub`` pairs (``mpdist(X[i], X[j])`` in a loop) gives the per-call ratio too.
- ostinato: ``ns`` random walks of n points, m (full: 100 series x 2000, m = 50; quick: 20 x
  1000), stumpy.ostinato against clts.ostinato, both whole.
- snippets: k = 3 snippets of a random walk (full: n = 20000, m = 200; quick: 4000, 100), with
  the default s = m and with s = m / 2, stumpy.snippets against clts.snippets.
Rounds interleave the variants (order rotated), the median is reported with the load.
Writes bench/results/mp-batched-<device slug>.md (mp-batched-<only>-<device slug>.md with
``--only``).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import quiet, write_result  # noqa: E402

import clts  # noqa: E402
from clts.runtime import get_device  # noqa: E402


def _timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _rounds(variants, rounds):
    times = {k: [] for k in variants}
    names = list(variants)
    loads = []
    for r in range(rounds):
        for k in names[r % len(names):] + names[:r % len(names)]:
            times[k].append(_timed(variants[k]))
        loads.append(os.getloadavg()[0])
    return {k: statistics.median(v) for k, v in times.items()}, loads


def bench_mpdist(dev, ns, sub, rounds, n=1000, m=50):
    import stumpy
    X = np.cumsum(np.random.default_rng(0).standard_normal((ns, n)), axis=1)
    pairs = [(i, (i * 7 + 3) % ns) for i in range(sub)]
    npairs = ns * (ns + 1) // 2
    variants = {
        "clts matrix": lambda: clts.mpdist(X, X, m, pairwise=True, device=dev),
        "clts sub": lambda: [clts.mpdist(X[i], X[j], m, device=dev) for i, j in pairs],
        "stumpy sub": lambda: [stumpy.mpdist(X[i], X[j], m) for i, j in pairs],
    }
    D = clts.mpdist(X, X, m, pairwise=True, device=dev)     # warm-up, and the check
    ref = np.array([stumpy.mpdist(X[i], X[j], m) for i, j in pairs])
    err = float(np.max(np.abs(D[tuple(np.array(pairs).T)] - ref)))
    med, loads = _rounds(variants, rounds)
    scale = npairs / sub
    rows = [{"variant": f"clts.mpdist pairwise ({ns} series, one call)", "pairs": npairs,
             "seconds": med["clts matrix"],
             "x stumpy": med["stumpy sub"] * scale / med["clts matrix"]},
            {"variant": "clts.mpdist, one call per pair", "pairs": sub,
             "seconds": med["clts sub"], "x stumpy": med["stumpy sub"] / med["clts sub"]},
            {"variant": "stumpy.mpdist looped (scaled)", "pairs": npairs,
             "seconds": med["stumpy sub"] * scale}]
    return rows, err, loads


def bench_ostinato(dev, ns, n, m, rounds):
    import stumpy
    Ts = list(np.cumsum(np.random.default_rng(1).standard_normal((ns, n)), axis=1))
    res = {}
    variants = {"clts": lambda: res.__setitem__("clts", clts.ostinato(Ts, m, device=dev)),
                "stumpy": lambda: res.__setitem__("stumpy", stumpy.ostinato(Ts, m))}
    clts.ostinato(Ts[:3], m, device=dev)                    # warm-up: builds, numba JIT
    stumpy.ostinato(Ts[:3], m)
    med, loads = _rounds(variants, rounds)
    got, want = res["clts"], res["stumpy"]
    err = abs(float(got[0]) - float(want[0]))
    same = (int(got[1]), int(got[2])) == (int(want[1]), int(want[2]))
    rows = [{"variant": f"clts.ostinato ({ns} x {n}, m = {m})", "seconds": med["clts"],
             "x stumpy": med["stumpy"] / med["clts"]},
            {"variant": "stumpy.ostinato", "seconds": med["stumpy"]}]
    return rows, err, same, loads


def bench_snippets(dev, n, m, rounds):
    import stumpy
    T = np.cumsum(np.random.default_rng(2).standard_normal(n))
    rows, errs, loads = [], [], []
    for kw in ({}, {"percentage": 0.5}):
        res = {}
        variants = {"clts": lambda: res.__setitem__("clts", clts.snippets(T, m, 3, device=dev,
                                                                          **kw)),
                    "stumpy": lambda: res.__setitem__("stumpy", stumpy.snippets(T, m, 3, **kw))}
        clts.snippets(T[:4 * m], m, 2, device=dev, **kw)         # warm-up: builds, numba JIT
        stumpy.snippets(T[:4 * m], m, 2, **kw)
        med, ld = _rounds(variants, rounds)
        loads += ld
        errs.append(float(np.max(np.abs(res["clts"][2] - res["stumpy"][2]))))
        same = np.array_equal(res["clts"][1], res["stumpy"][1])
        s = m if not kw else int(np.ceil(kw["percentage"] * m))
        rows += [{"variant": f"clts.snippets (n = {n}, m = {m}, s = {s}, k = 3)",
                  "seconds": med["clts"], "x stumpy": med["stumpy"] / med["clts"],
                  "same snippets": str(same)},
                 {"variant": f"stumpy.snippets (s = {s})", "seconds": med["stumpy"]}]
    return rows, max(errs), loads


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--device", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", choices=("mpdist", "ostinato", "snippets"), default=None)
    a = ap.parse_args()
    quiet()
    dev = get_device(a.device)
    rows, notes = [], []
    if a.only in (None, "mpdist"):
        ns, sub = (30, 10) if a.quick else (100, 20)
        r, err, loads = bench_mpdist(dev, ns, sub, a.rounds)
        rows += r
        notes.append(f"mpdist: n = 1000, m = 50; largest |clts - stumpy| over the checked "
                     f"pairs {err:.2g}; load {min(loads):.2f}-{max(loads):.2f}")
        print(notes[-1])
    if a.only in (None, "ostinato") and hasattr(clts, "ostinato"):
        ns, n = (20, 1000) if a.quick else (100, 2000)
        r, err, same, loads = bench_ostinato(dev, ns, n, 50, a.rounds)
        rows += r
        notes.append(f"ostinato: |radius - stumpy's| {err:.2g}, same (series, window): "
                     f"{same}; load {min(loads):.2f}-{max(loads):.2f}")
        print(notes[-1])
    if a.only in (None, "snippets") and hasattr(clts, "snippets"):
        n, m = (4000, 100) if a.quick else (20000, 200)
        r, err, loads = bench_snippets(dev, n, m, a.rounds)
        rows += r
        notes.append(f"snippets: largest |profile - stumpy's| {err:.2g}; load "
                     f"{min(loads):.2f}-{max(loads):.2f}")
        print(notes[-1])
    path = write_result("mp-batched" + (f"-{a.only}" if a.only else ""), dev, "Batched matrix-profile functions against stumpy",
                        rows, "\n".join(f"- {s}" for s in notes) + "\n")
    print(path.read_text())


if __name__ == "__main__":
    main()
