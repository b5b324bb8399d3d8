"""How far is the generic profile of a device's type from the device's tuned profile?

    python bench/generic_vs_tuned.py [--device pocl] [--rounds 7] [--quick]

One representative workload per algorithm runs on the same device twice: once with the
effective profile (the shipped or user-tuned file) and once with only the generic profile of the
device type (what an untuned device of that kind gets), alternating round by round in one
process; wall time of the whole numpy-in, numpy-out call, minimum over rounds. Prints
generic / tuned per workload.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def workloads(rng):
    import clts
    a, c, d = rng.standard_normal((3, 50_000, 115))
    b = 4 + np.abs(a) + np.abs(c)
    t = np.arange(828)
    y = np.sin(2 * np.pi * t / 23) + 0.1 * rng.standard_normal((2000, 828))
    dates = 2000 + np.arange(256) / 23
    cube = (np.sin(2 * np.pi * dates)[:, None] + 0.1 * rng.standard_normal((256, 32_768))
            ).astype(np.float32)
    T = np.cumsum(rng.standard_normal(1 << 15))
    return [
        ("tridiagonal 50,000 x 115 float64", lambda dev: clts.solve_tridiagonal(a, b, c, d,
                                                                               device=dev)),
        ("STL 2000 x 828, period 23, jumps 3/4/3",
         lambda dev: clts.stl(y, 23, seasonal=25, seasonal_jump=3, trend_jump=4,
                              low_pass_jump=3, device=dev)),
        ("BFAST-Monitor 32,768 x 256 float32",
         lambda dev: clts.bfast_monitor(cube, dates, dates[128], freq=1, device=dev)),
        ("matrix profile n = 2^15, m = 128", lambda dev: clts.matrix_profile(T, 128,
                                                                            device=dev)),
    ]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--rounds", type=int, default=None, help="default 7 (--quick: 3)")
    ap.add_argument("--quick", action="store_true", help="3 rounds (scripts/gpu-check.sh)")
    args = ap.parse_args(argv)
    args.rounds = args.rounds or (3 if args.quick else 7)
    from common import quiet
    quiet()
    import clts
    from clts.runtime import devices, profiles
    from common import machine_line
    tuned = clts.get_device(args.device)
    generic = devices.Device(tuned.info)
    generic._profile = profiles.effective_profile(generic, paths=[])
    print(f"# generic vs tuned profile: {machine_line(tuned)}")
    print(f"tuned: {', '.join(p.name for p in tuned.profile.files)}; generic: "
          f"{', '.join(p.name for p in generic.profile.files)}; {args.rounds} rounds, "
          "minimum wall time of the numpy call\n")
    print("| workload | tuned ms | generic ms | generic / tuned |\n|---|---|---|---|")
    for name, run in workloads(np.random.default_rng(0)):
        best = {"tuned": np.inf, "generic": np.inf}
        run(tuned), run(generic)                      # builds
        for _ in range(args.rounds):
            for label, dev in (("tuned", tuned), ("generic", generic)):
                t0 = time.perf_counter()
                run(dev)
                best[label] = min(best[label], time.perf_counter() - t0)
        print(f"| {name} | {best['tuned'] * 1e3:.1f} | {best['generic'] * 1e3:.1f} | "
              f"{best['generic'] / best['tuned']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
