"""The same ordinary calls timed under two source trees of clts, alternating rounds in fresh
processes: does a change keep the CPU drivers' speed? (numpy in, numpy out, warm calls).

    git worktree add --detach /tmp/before <commit>
    python bench/revisions.py --before /tmp/before --after . --devices pocl,intel --rounds 5

Each round runs every call once to warm up, then takes the best of ``--repeats``; the table
gives each side's median over the rounds and their ratio. Run it on a quiet machine: calls of
a few milliseconds move by 10 % with the load.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CALLS = {
    "stl 512x368 robust": "clts.stl(y, 23, robust=True, device=dev, progress=False)",
    "bfast_monitor 274x32x64": "clts.bfast_monitor(cube, tb, tb[180], device=dev, progress=False)",
    "matrix_profile 2^14 m=128 k=1": "clts.matrix_profile(T, 128, device=dev, progress=False)",
    "matrix_profile 2^14 m=128 k=3": "clts.matrix_profile(T, 128, k=3, device=dev, progress=False)",
    "mstump d=4 n=4096": "clts.mstump(X, 64, device=dev)",
    "trend_test 512x368": "clts.trend_test(y, device=dev)",
    "bfast_breaks 274x64x8": "clts.bfast_breaks(bc, tb, freq=23.0, device=dev, progress=False)",
    "solve_tridiagonal 20000x115": "clts.solve_tridiagonal(a, b, c, d, device=dev)",
}

_CHILD = """
import json, sys, time
import numpy as np
import clts
dev, repeats = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
y = np.sin(2 * np.pi * np.arange(368) / 23)[None] + rng.normal(size=(512, 368))
y[0, 10:14] = np.nan
tb = np.arange(274) * 16.0
cube = 3 + np.sin(2 * np.pi * tb[:, None, None] / 365) + 0.3 * rng.standard_normal((274, 32, 64))
bc = cube[:, :, :8].copy()
T = np.cumsum(rng.standard_normal(2 ** 14))
X = np.cumsum(rng.standard_normal((4, 4096)), axis=1)
a, c, d = (rng.random((20000, 115)) for _ in range(3))
b = 3 + rng.random((20000, 115))
out = {}
for name, code in json.loads(sys.argv[3]).items():
    f = eval("lambda: " + code)
    f()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    out[name] = best
print(json.dumps(out))
"""


def _round(tree: str, device: str, repeats: int) -> dict:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
    res = subprocess.run([sys.executable, "-c", _CHILD, device, str(repeats), json.dumps(CALLS)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="source tree of the earlier clts")
    ap.add_argument("--after", default=".", help="source tree of the later clts")
    ap.add_argument("--devices", default="pocl", help="comma-separated device specs")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    devices = [d for d in args.devices.split(",") if d]
    times: dict = {}
    t0 = time.time()
    for _ in range(args.rounds):
        for side, tree in (("before", args.before), ("after", args.after)):
            for dv in devices:
                for name, t in _round(tree, dv, args.repeats).items():
                    times.setdefault((dv, name, side), []).append(t)
    head = "| call |" + "".join(f" {d} before ms | {d} after ms | after / before |"
                                for d in devices)
    print(head)
    print("|---|" + "---:|---:|---:|" * len(devices))
    for name in CALLS:
        row = f"| {name} |"
        for dv in devices:
            b = statistics.median(times[(dv, name, "before")])
            a = statistics.median(times[(dv, name, "after")])
            row += f" {b * 1e3:.1f} | {a * 1e3:.1f} | {a / b:.2f} |"
        print(row)
    print(f"\n{args.rounds} rounds, best of {args.repeats} warm calls each, medians; "
          f"{time.time() - t0:.0f} s; load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
