"""Is ``auto`` right? Per algorithm a grid of data shapes crossing every threshold of the device's
profile; each shape runs every forced code version and ``auto``; prints auto / best per shape.

    python bench/selection.py --device pocl [--only tridiag,stl] [--rounds 3] [--profile FILE]
    python bench/selection.py --device pocl --generic      # the generic profile of its type

Timing: the summed OpenCL kernel time of one call (clts.runtime.timing), each version measured
once per round with the versions interleaved, the minimum over ``--rounds`` rounds (a shared
host's noise only adds time). "chosen/best" compares the forced time of the version ``auto``
chose with the best forced time (``auto``'s own measured time where it mixes versions, as STL's
three LOESS calls may): the selection's cost, without a second measurement's noise. Target: ``auto`` within 10 % of the best version on at least 90 %
of the shapes and never slower than 1.5x. ``--profile FILE`` puts that profile first on the
search path (option ``profile_path``); ``--generic`` uses only the shipped generic profile of the
device's type (what an untuned device of that kind gets), to show how far it is from the tuned
one.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _tridiag_cases(rng):
    import clts
    from clts.tridiag.plan import UNROLLED_HARD_MAX
    shapes = [(3, 10**5), (8, 10**4), (16, 100), (24, 10**4), (31, 1000), (33, 1000),
              (48, 10**4), (64, 10), (115, 5000), (128, 1000), (256, 1), (256, 4096),
              (512, 2000), (1000, 1000), (1024, 10), (2048, 100), (8192, 1), (8192, 100),
              (65536, 4), (10**5, 16), (10**6, 1), (10**6, 2)]
    for n, batch in shapes:
        for layout in ("natural", "interleaved"):
            a, b, c, d = (rng.random((batch, n)) for _ in range(4))
            b += 3
            if layout == "interleaved":
                a, b, c, d = (np.ascontiguousarray(v.T) for v in (a, b, c, d))
            axis = 0 if layout == "interleaved" else -1
            versions = ["thomas", "thomas-coalesced", "flat"]
            if n <= UNROLLED_HARD_MAX:
                versions.append("thomas-unrolled")
            if n <= 1024:
                versions.append("pcr")

            def run(v, a=a, b=b, c=c, d=d, axis=axis):
                return clts.solve_tridiagonal(a, b, c, d, axis=axis, version=v)
            yield f"n={n} batch={batch} {layout}", versions, run, lambda r: r.method


def _stl_cases(rng):
    import clts
    shapes = [  # (batch, n, period, seasonal, trend, jump)
        (10**5, 48, 12, 7, 23, 1), (20000, 96, 12, 7, 23, 1), (2000, 828, 23, 25, 39, 3),
        (2000, 828, 23, 25, 39, 8), (2000, 828, 23, 25, 39, 16), (500, 828, 23, 25, 39, 20),
        (200, 2000, 24, 49, 261, 5), (50, 35064 // 4, 24, 49, 261, 27), (50, 8760, 24, 169, 261, 17),
        (1, 4096, 12, 7, 1023, 1), (1, 8192, 24, 101, 2049, 64), (1, 40000, 24, 7, 32767, 256),
        (10, 2048, 7, 7, 15, 1), (100, 2048, 7, 7, 15, 2), (1000, 512, 12, 13, 25, 4),
        (5000, 256, 12, 13, 25, 1), (10, 10000, 52, 105, 157, 11), (100, 3000, 365, 7, 549, 37),
        (4, 20000, 24, 361, 2169, 217), (20, 4000, 12, 513, 1025, 2), (300, 1200, 30, 61, 91, 6),
        (64, 1500, 10, 1001, 1025, 1)]
    for batch, n, period, seasonal, trend, jump in shapes:
        y = np.sin(2 * np.pi * np.arange(n) / period)[None] + rng.normal(size=(batch, n))
        kw = dict(seasonal=seasonal, trend=trend, seasonal_jump=max(1, jump // 2),
                  trend_jump=jump, low_pass_jump=max(1, jump // 2), inner_iter=1)

        def run(v, y=y, kw=kw, period=period):
            return clts.stl(y, period, version=v, **kw)
        yield (f"batch={batch} n={n} q={seasonal}/{trend} jump={jump}",
               ["outer", "intragroup", "flat"], run,
               lambda r: "/".join(sorted(set(r.diagnostics["loess_versions"].values()))))


def _bfast_cases(rng):
    import clts
    for n_hist, pixels, nan in [(16, 10**5, 0.2), (32, 50000, 0.5), (48, 20000, 0.3),
                                (60, 20000, 0.0), (63, 20000, 0.6), (64, 20000, 0.6),
                                (65, 10000, 0.3), (80, 10000, 0.8), (100, 10000, 0.5),
                                (128, 5000, 0.3), (200, 5000, 0.5), (256, 2000, 0.1),
                                (300, 2000, 0.9), (40, 1000, 0.5), (120, 100, 0.5),
                                (500, 1000, 0.5), (30, 200000, 0.5), (90, 40000, 0.7),
                                (70, 30000, 0.4), (150, 8000, 0.2)]:
        N = n_hist * 2
        t = np.arange(N) * 16.0
        y = (3 + np.sin(2 * np.pi * t[:, None] / 365) + 0.3 * rng.standard_normal((N, pixels)))
        y[rng.random(y.shape) < nan] = np.nan
        y = y.astype(np.float32)

        def run(v, y=y, t=t, n_hist=n_hist):
            return clts.bfast_monitor(y, t, t[n_hist], version=v, progress_bar=False)
        def which(r, n_hist=n_hist):
            from clts.bfast.plan import Problem, make_plan
            return make_plan(clts.get_device(), Problem(n_hist, r.diagnostics["n_coef"])).version
        yield (f"history={n_hist} pixels={pixels} nan={nan}", ["fused", "multi"], run, which)


def _mp_cases(rng):
    import clts
    for n, m in [(2000, 8), (2000, 64), (4000, 16), (4000, 256), (8000, 32), (8000, 512),
                 (16000, 64), (16000, 1000), (3000, 100), (6000, 10), (12000, 128),
                 (20000, 50), (1000, 4), (1500, 500), (5000, 2000), (10000, 300),
                 (7000, 7), (9000, 900), (2500, 250), (14000, 20)]:
        T = np.cumsum(rng.standard_normal(n))
        versions = ["atomic", "partial"]

        def run(v, T=T, m=m):
            kw = {} if v == "auto" else dict(merge=v)
            return clts.matrix_profile(T, m, progress=False, **kw)
        yield (f"n={n} m={m}", versions, run, lambda r: r.plan.merge)


CASES = {"tridiag": _tridiag_cases, "stl": _stl_cases, "bfast": _bfast_cases, "mp": _mp_cases}


def measure(run, versions, rounds):
    from clts.runtime import timing
    best = {v: float("inf") for v in versions + ["auto"]}
    chosen = None
    for v in versions + ["auto"]:          # warm-up: builds, pools
        r = run(v)
        if v == "auto":
            chosen = r
    for _ in range(rounds):
        for v in versions + ["auto"]:
            with timing() as t:
                run(v)
            best[v] = min(best[v], t.kernel_seconds)
    return best, chosen


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None, help="device (index / name substring / slug)")
    ap.add_argument("--only", default=",".join(CASES), help="algorithms, comma-separated")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile", help="a profile file put first on the search path")
    ap.add_argument("--generic", action="store_true",
                    help="only the generic profile of the device's type (no tuned file)")
    ap.add_argument("--max-shapes", type=int, default=0, help="first N shapes per algorithm")
    args = ap.parse_args(argv)
    import clts
    if args.profile:
        clts.set_options(profile_path=str(Path(args.profile).resolve()))
    if args.device:
        clts.set_options(device=args.device)
    from common import quiet
    quiet("clts.profiles")
    import clts
    from common import machine_line
    if args.generic:
        from clts.runtime import profiles
        profiles.search_path = lambda: []
    dev = clts.get_device()
    print(f"# auto vs best per shape: {machine_line(dev)}")
    print(f"profile: {', '.join(p.name for p in dev.profile.files)}\n")
    rng = np.random.default_rng(0)
    summary = []
    for algo in args.only.split(","):
        ratios = []
        print(f"## {algo}\n\n| shape | auto chose | best | best ms | chosen/best | auto ms |")
        print("|---|---|---|---|---|---|")
        for i, (label, versions, run, which) in enumerate(CASES[algo](rng)):
            if args.max_shapes and i >= args.max_shapes:
                break
            try:
                times, res = measure(run, versions, args.rounds)
            except Exception as exc:       # noqa: BLE001 - reported in the table
                print(f"| {label} | error: {type(exc).__name__}: {str(exc)[:80]} | | | | |")
                continue
            forced = {v: s for v, s in times.items() if v != "auto"}
            bv = min(forced, key=forced.get)
            chose = which(res)
            # the chosen version's own forced time (the same measurement the best comes from;
            # a second measurement of the same plan would add the host's noise to the ratio);
            # auto's measured time where it mixes versions (STL: one per LOESS)
            t_auto = forced.get(chose, times["auto"])
            ratio = t_auto / forced[bv] if forced[bv] > 0 else 1.0
            ratios.append(ratio)
            print(f"| {label} | {chose} | {bv} | {forced[bv] * 1e3:.3f} | {ratio:.2f} | "
                  f"{times['auto'] * 1e3:.3f} |", flush=True)
        if ratios:
            r = np.array(ratios)
            line = (f"{algo}: {len(r)} shapes, auto within 10 % of best on "
                    f"{np.mean(r <= 1.10) * 100:.0f} %, worst {r.max():.2f}x, "
                    f"geometric mean {np.exp(np.mean(np.log(r))):.3f}")
            summary.append(line)
            print(f"\n{line}\n")
    print("## summary\n")
    for line in summary:
        print("- " + line)


if __name__ == "__main__":
    main()
