"""Benchmark clts.allc (time-series chains) and clts.floss (streaming segmentation) against
stumpy (numba JIT on, warmed up before timing).

    python bench/bench_mp_chains.py [--quick] [--device D] [--rounds R]

- Chains: the all-chain set of a random walk of n = 100,000 points (quick: 20,000), m = 50,
  from the left / right indices of clts.matrix_profile (not timed): stumpy.allc (a Python loop
  over the windows) against clts.allc (links, pointer doubling, one sort) and the compat
  wrapper (the same plus stumpy's set order). The chains are checked equal.
- Streaming segmentation: a series of n = 10,000 points, m = 100, L = 100, then ``appends``
  points (full: 5,000, quick: 1,000): stumpy.floss with ``update(x)`` per point and
  ``cac_1d_`` read after each (its only mode); clts.floss read after every point (one device
  call per point), every 100 points, and once at the end (one block: far windows by an AB-join,
  near ones by a self-join's right profile). Microseconds per appended point, the initial
  state (the profile, the idealised arc curve) outside the timing. The final right index is
  checked equal to stumpy's (up to ties within rounding).
Rounds interleave the variants; the median is reported with the load average.
Writes bench/results/mp-chains-<device slug>.md.
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
import clts.compat.stumpy as cs  # noqa: E402
from clts.runtime import get_device  # noqa: E402


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def bench_chains(dev, n, rounds):
    import stumpy
    T = np.cumsum(np.random.default_rng(1).standard_normal(n))
    r = clts.matrix_profile(T, 50, device=dev)
    IL, IR = r.left_I.astype(np.int64), r.right_I.astype(np.int64)
    times = {"stumpy.allc": [], "clts.allc": [], "compat allc (stumpy's order)": []}
    for _ in range(rounds):
        ts, (S0, C0) = _timed(lambda: stumpy.allc(IL, IR))
        tc, (S1, C1) = _timed(lambda: clts.allc((IL, IR)))
        tp, (S2, C2) = _timed(lambda: cs.allc(IL, IR))
        times["stumpy.allc"].append(ts)
        times["clts.allc"].append(tc)
        times["compat allc (stumpy's order)"].append(tp)
    assert np.array_equal(C0, C1) and np.array_equal(C0, C2)
    assert all(np.array_equal(a, b) for a, b in zip(S0, S2))
    base = statistics.median(times["stumpy.allc"])
    rows = []
    for name, ts in times.items():
        t = statistics.median(ts)
        rows.append({"work": f"all-chain set, n = {n:,}", "variant": name,
                     "ms": f"{t * 1e3:.1f}", "vs stumpy": f"{base / t:.1f}x",
                     "chains": len(S0), "longest": len(C0)})
    return rows


def bench_floss(dev, appends, rounds):
    import stumpy
    n, m, L = 10_000, 100, 100
    T = np.cumsum(np.random.default_rng(2).standard_normal(n + appends))
    mp = cs.stump(T[:n], m, device=dev)
    from stumpy.floss import _iac
    iac = _iac(n - m + 1, bidirectional=False, n_iter=10, n_samples=1000)
    # warm-up: numba's compilation, clts's kernel builds
    w = stumpy.floss(mp, T[:n], m, L, custom_iac=iac.copy())
    for x in T[n:n + 3]:
        w.update(x)
        w.cac_1d_
    w = cs.floss(mp, T[:n], m, L, custom_iac=iac, device=dev)
    w.update(T[n:n + 200])
    w.cac_1d_
    for x in T[n:n + 3]:
        w.update(x)
        w.cac_1d_

    def stumpy_run():
        f = stumpy.floss(mp, T[:n], m, L, custom_iac=iac.copy())
        t = time.perf_counter()
        for x in T[n:]:
            f.update(x)
            f.cac_1d_
        return time.perf_counter() - t, f.I_

    def clts_run(every):
        f = cs.floss(mp, T[:n], m, L, custom_iac=iac, device=dev)
        t = time.perf_counter()
        for s in range(n, n + appends, every):
            if every == 1:
                f.update(T[s])
            else:
                f.update(T[s:s + every])
            f.cac_1d_
        return time.perf_counter() - t, f.I_

    variants = {"stumpy.floss, cac read per point": stumpy_run,
                "clts.floss, cac read per point": lambda: clts_run(1),
                "clts.floss, cac read per 100 points": lambda: clts_run(100),
                "clts.floss, one block": lambda: clts_run(appends)}
    times = {k: [] for k in variants}
    idx = {}
    for _ in range(rounds):
        for name, fn in variants.items():
            t, I = fn()
            times[name].append(t)
            idx[name] = I
    ref = idx["stumpy.floss, cac read per point"]
    base = statistics.median(times["stumpy.floss, cac read per point"])
    rows = []
    for name, ts in times.items():
        t = statistics.median(ts)
        rows.append({"work": f"floss n = {n:,}, m = {m}, {appends:,} appends", "variant": name,
                     "us / point": f"{t / appends * 1e6:.0f}", "vs stumpy": f"{base / t:.1f}x",
                     "right index = stumpy's": f"{np.mean(idx[name] == ref) * 100:.2f} %"})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--device", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    quiet()
    dev = get_device(a.device)
    load0 = os.getloadavg()[0]
    rows = bench_chains(dev, 20_000 if a.quick else 100_000, a.rounds)
    rows += bench_floss(dev, 1_000 if a.quick else 5_000, a.rounds)
    load1 = os.getloadavg()[0]
    for r in rows:
        print(r)
    name = "mp-chains-quick" if a.quick else "mp-chains"
    path = write_result(name, dev, "Chains and streaming segmentation: clts against stumpy",
                        rows, f"\nLoad average {load0:.1f} at the start, {load1:.1f} at the end "
                              f"(2 cores, shared); median of {a.rounds} rounds.\n")
    print(path)


if __name__ == "__main__":
    main()
