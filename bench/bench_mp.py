"""Benchmark clts.matrix_profile against stumpy.stump and pyscamp's CPU build.

    python bench/bench_mp.py [--quick] [--device D ...] [--precision double|mixed|single]
                             [--sizes 14,15,16,17] [--m 256] [--no-anchors] [--no-stumpy]
                             [--no-pyscamp] [--no-m-sweep] [--progress]

The issue's scale case (a day of 10 Hz data, against SCAMP, about 10 minutes of both cores):

    python bench/bench_mp.py --device pocl --sizes 20 --no-stumpy --no-m-sweep --progress

Random walk, m = 256, n = 2^14 .. 2^17 (quick: 2^14, 2^15; --sizes: other exponents; from
2^18 one timed run per size without a warm-up run, and one anchor run): self-join k = 1, pairs/s =
(n - m + 1)^2 / 2 / t with t the wall time of the whole call (statistics, diagonal kernel,
exact re-evaluation, transfers), best of repeats. Anchors in the same run, wall time: stumpy.stump
(numba, all cores; JIT warmed on a small input first) and pyscamp.selfjoin (SCAMP CPU build,
FORCE_NO_CUDA=1 pip install pyscamp), when installed, each measured right after clts at the same
n. "x anchor" = anchor time / clts time (wall); "(cpu)" = the same ratio of CPU seconds of the
process (all threads), which other jobs on a shared machine disturb less. "kernel GB/s" counts
the 3 column values (df, dg, 1/norm) the diagonal kernel loads per pair, against the device's copy kernel measured
in the same run (a notional figure: the kernel is compute bound). Also: time against m
(64 .. 2048) at n = 2^16 (--m-sweep-n), every m once per round, rounds interleaved, best of
rounds; and ``matrix_profile.estimate`` against the measured time at the largest n, twice: from
a fresh calibration taken at the start of the run (recalibrate=True), and right before the
largest n is run (the calibration refined by the runs recorded at the smaller sizes: the
benchmark opts in with the option ``mp_record_runs``), with the calibration's own seconds; on a
CPU device also against the run's idle-machine seconds (clts.mp.estimate.idle_seconds: what the
estimate predicts, and what a machine shared with other jobs still shows).
Against pyscamp also max abs(P - pyscamp) (SCAMP returns float32 distances) and the share of
equal indices. --progress shows the progress bar (with the estimate) for runs from 2^18.
Writes bench/results/mp-<device slug>.md (other --sizes: mp-n<E>-...-<device slug>.md).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import copy_bandwidth, write_result  # noqa: E402

import clts  # noqa: E402

# the runs at the smaller sizes refine the estimate of the largest (opt-in, see docstring)
clts.set_options(mp_record_runs=True)
from clts.runtime import get_device, timing, usable  # noqa: E402
from clts.mp.estimate import _cpu_cores  # noqa: E402

M = 256


def walk(n, seed=0):
    return np.cumsum(np.random.default_rng(seed).standard_normal(n))


def _cpu():
    import resource
    r = resource.getrusage(resource.RUSAGE_SELF)     # all threads of this process
    return r.ru_utime + r.ru_stime


IDLE = {}      # n -> idle-machine seconds of clts's best run (CPU devices)


def best_time(fn, repeats, with_cpu=False, cores=None, key=None):
    """Best wall time of ``repeats`` calls (and the CPU seconds of that call); with ``key``,
    the idle-machine seconds of each call's best (clts.mp.estimate.idle_seconds, ``cores``)
    go to IDLE[key]."""
    from clts.mp.estimate import idle_seconds
    best, best_cpu = np.inf, np.inf
    out = None
    for _ in range(repeats):
        c0, s0 = _cpu(), time.thread_time()
        t0 = time.perf_counter()
        out = fn()
        t = time.perf_counter() - t0
        c = _cpu() - c0
        if key is not None:
            i = idle_seconds(t, c, time.thread_time() - s0, cores)
            IDLE[key] = min(IDLE.get(key, np.inf), i)
        if t < best:
            best, best_cpu = t, c
    return (best, best_cpu, out) if with_cpu else (best, out)


def pairs(n, m=None):
    l = n - (M if m is None else m) + 1
    return l * l / 2


def anchors(use=("stumpy", "pyscamp")):
    found = {}
    try:
        if "stumpy" in use:
            import stumpy
            stumpy.stump(walk(600), 32)          # JIT warm-up
            found["stumpy"] = lambda T, m: stumpy.stump(T, m)
    except ImportError:
        pass
    try:
        if "pyscamp" in use:
            import pyscamp
            pyscamp.selfjoin(walk(600), 32)
            # SCAMP's CPU build computes in float64 only; every core
            found["pyscamp"] = lambda T, m: pyscamp.selfjoin(T, m, threads=os.cpu_count() or 1)
    except ImportError:
        pass
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--device", action="append", help="device index/name/slug (repeatable); "
                    "default: every working device")
    ap.add_argument("--precision", default="double")
    ap.add_argument("--sizes", default=None, metavar="E,E,...",
                    help="exponents of n = 2^E (default 14,15,16,17; --quick 14,15)")
    ap.add_argument("--m", type=int, default=256, help="window length (default 256)")
    ap.add_argument("--no-anchors", action="store_true")
    ap.add_argument("--no-stumpy", action="store_true", help="leave stumpy out (2^20: ~30 min)")
    ap.add_argument("--no-pyscamp", action="store_true")
    ap.add_argument("--no-m-sweep", action="store_true")
    ap.add_argument("--progress", action="store_true",
                    help="progress bar (with the estimate) on the runs from 2^18")
    ap.add_argument("--m-sweep-n", type=int, default=16, metavar="E",
                    help="series length 2^E of the time-against-m sweep (default 16)")
    args = ap.parse_args()
    globals()["M"] = args.m
    clts.set_options(progress=False)
    exps = [int(e) for e in args.sizes.split(",")] if args.sizes else \
        [14, 15] if args.quick else [14, 15, 16, 17]
    sizes = [1 << e for e in exps]
    big = 1 << 18                       # from here: one run, no warm-up
    reps = 2 if args.quick else 3
    devs = [get_device(d) for d in args.device] if args.device else \
        [get_device(i) for i in usable() if not i.simulator]
    anc = {} if args.no_anchors else anchors(
        [a for a, off in (("stumpy", args.no_stumpy), ("pyscamp", args.no_pyscamp)) if not off])
    anchor_t = {}

    def anchor(name, n, T):
        # measured next to the first device's run of the same n (the machine is shared: times
        # taken minutes apart are not comparable), reused for the other devices
        if (name, n) not in anchor_t:
            anchor_t[(name, n)] = best_time(lambda: anc[name](T, M),
                                            1 if n >= (1 << 16) else reps, with_cpu=True)
            t, c = anchor_t[(name, n)][:2]
            print(f"{name:8s} n=2^{n.bit_length() - 1}: {t:.3f} s (cpu {c:.3f} s) "
                  f"{pairs(n) / t:.3g} pairs/s", flush=True)
        return anchor_t[(name, n)][:2]
    load0 = os.getloadavg()[0]
    for dev in devs:
        bw = copy_bandwidth(dev)
        rows = []
        clts.matrix_profile(walk(3000), M, device=dev, precision=args.precision)   # build
        t_cal = time.perf_counter()
        est_cal = clts.matrix_profile.estimate(sizes[-1], M, dev, precision=args.precision,
                                               recalibrate=True)
        t_cal = time.perf_counter() - t_cal
        est_ref = None
        t_last = None
        for n in sizes:
            T = walk(n, 1)
            if n == sizes[-1]:
                est_ref = clts.matrix_profile.estimate(n, M, dev, precision=args.precision)
            if n < big:
                clts.matrix_profile(T, M, device=dev, precision=args.precision)    # warm
            with clts.set_options(progress=args.progress and n >= big):
                t, c, res = best_time(lambda: clts.matrix_profile(T, M, device=dev,
                                                                  precision=args.precision),
                                      reps if n < big else 1, with_cpu=True,
                                      cores=_cpu_cores(dev), key=n)
            t_last = (n, t)
            pps = pairs(n) / t
            row = {"n": f"2^{n.bit_length() - 1}", "m": M, "clts s": t, "pairs/s": pps,
                   "pairs/cpu-s": pairs(n) / c,
                   "kernel GB/s": pps * 24 / 1e9, "% copy": 100 * pps * 24 / 1e9 / bw}
            for name in anc:
                ta, ca = anchor(name, n, T)
                row[f"{name} s"] = ta
                row[f"x {name}"] = ta / t
                row[f"x {name} (cpu)"] = ca / c
            if "stumpy" in anc and n <= (1 << 15):
                s = anc["stumpy"](T, M)
                row["max abs(P - stumpy)"] = float(np.max(np.abs(res.P[:, 0]
                                                              - s[:, 0].astype(float))))
            if "pyscamp" in anc:
                sp, si = anchor_t[("pyscamp", n)][2]
                row["max abs(P - pyscamp)"] = float(np.max(np.abs(res.P[:, 0] - sp)))
                row["I = pyscamp %"] = 100 * float(np.mean(res.I[:, 0] == si))
            rows.append(row)
            print(dev.slug, row, flush=True)
        notes = ""
        if not args.no_m_sweep:
            notes = m_sweep(dev, args, reps)
        # estimate against the measured time at the largest n
        n, t = t_last
        both = [(est_cal, f"calibration taken at the start of this run ({t_cal:.1f} s)")]
        if len(sizes) > 1:
            both.append((est_ref, "calibration + the runs at the smaller n"))
        erow = [{"n": f"2^{n.bit_length() - 1}", "measured s": t, "estimate s": e,
                 "error %": 100 * (e - t) / t, "from": how} for e, how in both]
        if _cpu_cores(dev):         # what a loaded machine still shows of the idle time
            for r in erow:
                r["measured idle s"] = IDLE[n]
                r["error % (idle)"] = 100 * (r["estimate s"] - IDLE[n]) / IDLE[n]
        print(dev.slug, erow, flush=True)
        load = os.getloadavg()[0]
        notes = (f"\nPrecision {args.precision}; copy bandwidth {bw:.1f} GB/s; load average "
                 f"{load0:.2f} at the start, {load:.2f} at the end (other jobs share the cores: "
                 "ratios in the same run are the figure to read).\n" + notes
                 + "\n## estimate() against the measured time\n\n"
                 + __import__("common").markdown_table(erow))
        name = "mp" if exps == [14, 15, 16, 17] else "mp-n" + "-".join(map(str, exps))
        path = write_result(name, dev, f"Matrix profile self-join, random walk, m = {M}", rows,
                            notes)
        print("wrote", path)


def m_sweep(dev, args, reps):
    """Time against m: every m once per round, rounds interleaved, best of rounds."""
    n = 1 << args.m_sweep_n
    T = walk(n, 2)
    ms = (64, 256, 1024, 2048)
    times = {m: [] for m in ms}
    for m in ms:
        clts.matrix_profile(T, m, device=dev, precision=args.precision)
    for r in range(max(reps, 3)):
        for m in ms[r % len(ms):] + ms[:r % len(ms)]:
            c0 = _cpu()
            with timing(dev) as tk:
                t0 = time.perf_counter()
                clts.matrix_profile(T, m, device=dev, precision=args.precision)
                t = time.perf_counter() - t0
            times[m].append((t, tk.kernel_seconds, _cpu() - c0))
    mrows = []
    for m in ms:
        t, kern, _ = min(times[m])
        mrows.append({"n": f"2^{args.m_sweep_n}", "m": m, "clts s": t,
                      "kernels s": kern, "cpu s": min(x[2] for x in times[m]),
                      "pairs/s": pairs(n, m) / t})
    tref = [r for r in mrows if r["m"] == 256][0]
    for r in mrows:
        r["t / t(m=256)"] = r["clts s"] / tref["clts s"]
        r["cpu / cpu(m=256)"] = r["cpu s"] / tref["cpu s"]
    print(dev.slug, mrows, flush=True)
    return (f"\n## Time against m (n = 2^{args.m_sweep_n})\n\n"
            + __import__("common").markdown_table(mrows))


if __name__ == "__main__":
    main()
