"""Benchmark clts.mass (batched pattern search) and clts.stumpi (streaming) against stumpy and
mass-ts.

    python bench/bench_mp_search.py [--quick] [--device D] [--rounds R]

- Batched MASS: ``ns`` random walks of n = 10^4 points (full: ns = 10^4, quick: 10^3), one
  query of m = 100, every distance profile. clts computes all of them in one call (float64);
  stumpy.mass and mass_ts.mass2 (FFT, one series per call) loop over a subset of ``sub``
  series, and their time is scaled to ns (their loops are linear in ns by construction);
  clts on the same subset gives the like-for-like ratio too. Rounds interleave the variants
  (order rotated), the median of rounds is reported with the load.
- Streaming: a series of 10^4 points, m = 100, egress; ``appends`` points appended one at a
  time (``update(x)``), the profile read at the end (inside the timing), with stumpy.stumpi
  and clts.stumpi: by default (points wait until read or ``lazy_points`` pending, then one
  block), applied per point (``lazy_points=1``: the host path, the sliding dot product as a
  filter, exact distances for what it leaves undecided), per point on the device
  (``host_points=0``: one distance profile per point), and in blocks of 100 points on the
  device (update(array): the far windows by an AB-join on the diagonal kernel, the near ones
  by distance profiles). Microseconds per appended point. Then the cost rule of
  ``mp.stream.host_points``: per point, blocks of b points on the host against the device.
Writes bench/results/mp-search-<device slug>.md.
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

N, M = 10_000, 100


def _timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def bench_mass(dev, ns, sub, rounds):
    import stumpy
    try:
        import mass_ts
    except ImportError:
        mass_ts = None
    T = np.cumsum(np.random.default_rng(0).standard_normal((ns, N)), axis=1)
    Q = T[ns // 2, 4000:4000 + M].copy()
    S = T[:sub]
    variants = {
        "clts all": lambda: clts.mass(Q, T, device=dev, progress=False),
        "clts sub": lambda: clts.mass(Q, S, device=dev, progress=False),
        "stumpy sub": lambda: [stumpy.mass(Q, s) for s in S],
    }
    if mass_ts is not None:
        variants["mass-ts sub"] = lambda: [mass_ts.mass2(s, Q) for s in S]
    # warm-up (builds, numba JIT) and a check against stumpy on the subset
    D = clts.mass(Q, S, device=dev, progress=False)
    ref = np.array([stumpy.mass(Q, s) for s in S[:8]])
    err = float(np.max(np.abs(D[:8] - ref)))
    for f in variants.values():
        if f is not variants["clts all"]:
            f()
    times = {k: [] for k in variants}
    names = list(variants)
    loads = []
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for k in order:
            times[k].append(_timed(variants[k]))
        loads.append(os.getloadavg()[0])
    med = {k: statistics.median(v) for k, v in times.items()}
    scale = ns / sub
    rows = [{"variant": "clts.mass (one call)", "series": ns, "seconds": med["clts all"],
             "x stumpy": med["stumpy sub"] * scale / med["clts all"],
             "x mass-ts": (med["mass-ts sub"] * scale / med["clts all"]
                           if "mass-ts sub" in med else float("nan"))}]
    rows.append({"variant": "clts.mass on the subset", "series": sub,
                 "seconds": med["clts sub"],
                 "x stumpy": med["stumpy sub"] / med["clts sub"],
                 "x mass-ts": (med["mass-ts sub"] / med["clts sub"] if "mass-ts sub" in med
                               else float("nan"))})
    rows.append({"variant": "stumpy.mass looped (scaled)", "series": ns,
                 "seconds": med["stumpy sub"] * scale})
    if "mass-ts sub" in med:
        rows.append({"variant": "mass_ts.mass2 looped (scaled)", "series": ns,
                     "seconds": med["mass-ts sub"] * scale})
    return rows, err, loads


def bench_stream(dev, appends, rounds):
    import stumpy
    rng = np.random.default_rng(1)
    T = np.cumsum(rng.standard_normal(N))
    new = rng.standard_normal(appends)
    B = 100

    def one(make, block):
        s = make()
        t = time.perf_counter()
        if block:
            for a in range(0, appends, B):
                s.update(new[a:a + B])
        else:
            for x in new:
                s.update(x)
        s.P_                                       # lazy variants apply their points here
        return (time.perf_counter() - t) / appends, s

    variants = {"stumpy.stumpi": (lambda: stumpy.stumpi(T, M, egress=True), False),
                "clts.stumpi (read at the end)": (
                    lambda: clts.stumpi(T, M, egress=True, device=dev), False),
                "clts.stumpi, applied per point (host)": (
                    lambda: clts.stumpi(T, M, egress=True, device=dev, lazy_points=1), False),
                "clts.stumpi, device per point": (
                    lambda: clts.stumpi(T, M, egress=True, device=dev, host_points=0,
                                        lazy_points=1), False),
                f"clts.stumpi, blocks of {B} (device)": (
                    lambda: clts.stumpi(T, M, egress=True, device=dev, host_points=0), True)}
    for make, _ in variants.values():          # warm-up: builds and numba JIT
        make().update(new[0])
    times = {k: [] for k in variants}
    last = {}
    names = list(variants)
    loads = []
    for r in range(rounds):
        for k in names[r % len(names):] + names[:r % len(names)]:
            t, last[k] = one(*variants[k])
            times[k].append(t)
        loads.append(os.getloadavg()[0])
    s, c = last["stumpy.stumpi"], last["clts.stumpi, applied per point (host)"]
    fin = np.isfinite(s.P_)
    err = float(np.max(np.abs(s.P_[fin] - c.P_[fin])))
    med = {k: statistics.median(v) for k, v in times.items()}
    rows = [{"variant": k, "appends": appends, "us per point": med[k] * 1e6,
             "x stumpi": med["stumpy.stumpi"] / med[k]} for k in names]
    return rows, err, loads


def bench_rule(dev, rounds, sizes=(4, 16, 64, 256)):
    """Per point: blocks of b points through the host path and through the device."""
    rng = np.random.default_rng(2)
    T = np.cumsum(rng.standard_normal(N))
    new = rng.standard_normal(4 * max(sizes))

    def per_point(b, hp):
        s = clts.stumpi(T, M, egress=True, device=dev, host_points=hp, lazy_points=1)
        s.update(new[:1])                          # warm-up (the host path builds its
        s.update(new[1:b])                         # state from one point)
        total = max(256, 2 * b)
        t = time.perf_counter()
        for a in range(b, b + total, b):
            s.update(new[a:a + b])
        return (time.perf_counter() - t) / total

    times = {(b, w): [] for b in sizes for w in ("host", "device")}
    loads = []
    for r in range(rounds):
        for b in sizes:
            for w in (("host", "device") if r % 2 == 0 else ("device", "host")):
                times[b, w].append(per_point(b, 10 ** 9 if w == "host" else 0))
        loads.append(os.getloadavg()[0])
    med = {k: statistics.median(v) for k, v in times.items()}
    return [{"block of b points": b, "host us per point": med[b, "host"] * 1e6,
             "device us per point": med[b, "device"] * 1e6,
             "device / host": med[b, "device"] / med[b, "host"]} for b in sizes], loads


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--device", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", choices=("mass", "stream"), default=None)
    ap.add_argument("--appends", type=int, default=None,
                    help="points appended per streaming variant (default 10^4, quick 10^3)")
    args = ap.parse_args()
    quiet()
    dev = get_device(args.device)
    ns, sub = (1000, 200) if args.quick else (10_000, 500)
    appends = args.appends or (1000 if args.quick else 10_000)
    rows, notes = [], ""
    if args.only in (None, "mass"):
        mrows, merr, mload = bench_mass(dev, ns, sub, args.rounds)
        rows += mrows + [{}]
        notes += (f"Batched MASS: n = {N}, m = {M}, float64; stumpy / mass-ts timed on {sub} "
                  f"series and scaled; median of {args.rounds} interleaved rounds; load per "
                  f"round {', '.join(f'{x:.1f}' for x in mload)}; max |clts - stumpy| = "
                  f"{merr:.1e}.\n\n")
    if args.only in (None, "stream"):
        srows, serr, sload = bench_stream(dev, appends, args.rounds)
        rrows, rload = bench_rule(dev, args.rounds)
        rows += srows + [{}] + rrows
        notes += (f"Streaming: n = {N}, m = {M}, egress, {appends} appends; load per round "
                  f"{', '.join(f'{x:.1f}' for x in sload)}; max |P clts - P stumpi| = "
                  f"{serr:.1e}. Cost rule (blocks of b on the host / on the device): load per "
                  f"round {', '.join(f'{x:.1f}' for x in rload)}; mp.stream.host_points of "
                  f"this device: {clts.stumpi(np.zeros(M), M, device=dev)._plan.host_points}."
                  "\n")
    name = "mp-search" if args.only is None else f"mp-search-{args.only}"
    path = write_result(name, dev, "Pattern search and streaming: clts against stumpy "
                        "and mass-ts", rows, notes)
    print(path.read_text())


if __name__ == "__main__":
    main()
