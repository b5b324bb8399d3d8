"""Benchmark clts.mstump (multi-dimensional matrix profile) against stumpy.mstump.

    python bench/bench_mstump.py [--quick] [--device D] [--rounds R] [--plans] [--plain]

d = 8 random walks of n = 2^14 points (quick: 2^12), m = 64, float64, self-join, both
libraries in the same process; stumpy is warmed up (its JIT) on a small input first. Rounds
interleave the variants (order rotated); the median of rounds is reported with the load
average it was taken under. ``--plans`` adds clts with other (lanes, groups, segment) plans.
Writes bench/results/mstump-<device slug>.md. ``--plain``: instead, clts.mstump(normalize=False)
against stumpy.maamp (plain Euclidean, p = 2) on d = 8 random walks of n = 2^13 (quick: 2^11),
written to bench/results/mstump-plain-<device slug>.md.
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

D, M = 8, 64
PLANS = [dict(lanes=4, groups=1), dict(lanes=8, groups=1), dict(lanes=8, groups=2),
         dict(lanes=4, groups=1, segment=4096)]


def _timed(fn, keep=None, key=None):
    t = time.perf_counter()
    out = fn()
    if keep is not None:
        keep[key] = out
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--device", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--plans", action="store_true")
    ap.add_argument("--plain", action="store_true")
    a = ap.parse_args()
    quiet()
    import stumpy
    dev = get_device(a.device)
    if a.plain:
        return plain(a, dev, stumpy)
    n = 1 << (12 if a.quick else 14)
    T = np.cumsum(np.random.default_rng(0).standard_normal((D, n)), axis=1)
    stumpy.mstump(T[:, :300], M)
    clts.mstump(T[:, :300], M, device=dev)
    variants = {"clts": lambda: clts.mstump(T, M, device=dev),
                "stumpy": lambda: stumpy.mstump(T, M)}
    if a.plans:
        for p in PLANS:
            clts.mstump(T[:, :300], M, device=dev, **p)
            variants["clts " + " ".join(f"{k}={v}" for k, v in p.items())] = \
                lambda p=p: clts.mstump(T, M, device=dev, **p)
    last = {}
    times, loads = _rounds(variants, a.rounds, last)    # the comparison: the last round's
    names = list(variants)
    P, I = last["clts"]
    Ps, Is = last["stumpy"]
    agree = float(np.mean(I == Is))
    err = float(np.max(np.abs(P - Ps)))
    med = {k: statistics.median(v) for k, v in times.items()}
    rows = [{"variant": k, "median s": med[k], "stumpy / variant": med["stumpy"] / med[k],
             "rounds": len(times[k])} for k in names]
    notes = (f"d = {D}, n = {n}, m = {M}, float64; load average during the runs "
             f"{min(loads):.1f} .. {max(loads):.1f}; indices equal to stumpy's on "
             f"{100 * agree:.3f} % of (k, i), max |P - P_stumpy| = {err:.2e}.\n")
    path = write_result("mstump", dev, "Multi-dimensional matrix profile: clts.mstump against "
                        "stumpy.mstump", rows, notes)
    print(path.read_text())


def _rounds(variants, rounds, last=None):
    """Times of each variant, rounds interleaved (order rotated), and the load averages;
    ``last`` (a dict) receives each variant's result of the last round."""
    names = list(variants)
    times = {k: [] for k in names}
    loads = []
    for r in range(rounds):
        for k in names[r % len(names):] + names[:r % len(names)]:
            times[k].append(_timed(variants[k], last, k))
            loads.append(os.getloadavg()[0])
            print(f"round {r} {k}: {times[k][-1]:.2f} s (load {loads[-1]:.1f})", flush=True)
    return times, loads


def plain(a, dev, stumpy):
    """clts.mstump(normalize=False) against stumpy.maamp (p = 2)."""
    n = 1 << (11 if a.quick else 13)
    T = np.cumsum(np.random.default_rng(0).standard_normal((D, n)), axis=1)
    stumpy.maamp(T[:, :300], M)
    clts.mstump(T[:, :300], M, normalize=False, device=dev)
    variants = {"clts normalize=False": lambda: clts.mstump(T, M, normalize=False, device=dev),
                "stumpy.maamp": lambda: stumpy.maamp(T, M)}
    last = {}
    times, loads = _rounds(variants, a.rounds, last)
    P, I = last["clts normalize=False"]
    Ps, Is = last["stumpy.maamp"]
    med = {k: statistics.median(v) for k, v in times.items()}
    rows = [{"variant": k, "median s": med[k], "stumpy / variant": med["stumpy.maamp"] / med[k],
             "rounds": len(times[k])} for k in variants]
    notes = (f"d = {D}, n = {n}, m = {M}, float64, plain Euclidean (p = 2); load average during "
             f"the runs {min(loads):.1f} .. {max(loads):.1f}; indices equal to stumpy's on "
             f"{100 * float(np.mean(I == Is)):.3f} % of (k, i), max |P - P_stumpy| = "
             f"{float(np.max(np.abs(P - Ps))):.2e}.\n")
    path = write_result("mstump-plain", dev, "Multi-dimensional plain matrix profile: "
                        "clts.mstump(normalize=False) against stumpy.maamp", rows, notes)
    print(path.read_text())


if __name__ == "__main__":
    main()
