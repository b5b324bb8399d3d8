"""What a new series length or window length costs the matrix profile: the programs each call
builds (docs/performance.md, "Matrix profile: a new window length builds nothing").

    python bench/mp_new_length.py [--device pocl] [--windows 20,37,64,100,150] [--verbose]
                                  [--which self,ab,topk,aamp,stimp,scrump,mpdist,ostinato]

In one process, each function at 5 series lengths (window 50) and at 5 window lengths
(length 3,000; ``--windows``: others), each call once: the wall time and the programs it
built (a wrapper around ``clts.runtime.programs._build``; ``--verbose`` names each program
and the parameters in which it differs from the previous build of its template). The first
call of each function builds its programs; every later one should build none. Run it with
an empty ``POCL_CACHE_DIR`` to see pocl's compiles at the first enqueue in the wall times.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import clts  # noqa: E402
from clts.runtime import programs  # noqa: E402

BUILT = []
_orig = programs._build


def _counting(device, template, params, options):
    BUILT.append((template, dict(params)))
    return _orig(device, template, params, options)


programs._build = _counting

LENGTHS = (1000, 1537, 2048, 3001, 4500)
WINDOWS = (20, 37, 64, 100, 150)


def calls(dev):
    rng = np.random.default_rng(0)
    T = np.cumsum(rng.standard_normal(max(LENGTHS)))
    U = np.cumsum(rng.standard_normal(max(LENGTHS)))
    return {
        "self": lambda n, m: clts.matrix_profile(T[:n], m, device=dev, progress=False),
        "ab": lambda n, m: clts.matrix_profile(T[:n], m, U[:n // 2 + m], device=dev,
                                               progress=False),
        "topk": lambda n, m: clts.matrix_profile(T[:n], m, k=3, device=dev, progress=False),
        "aamp": lambda n, m: clts.aamp(T[:n], m, device=dev),
        "stimp": lambda n, m: clts.stimp(T[:n], m, m + 4, 2, percentage=1.0,
                                         device=dev).update_all(),
        "scrump": lambda n, m: clts.scrump(T[:n], m, percentage=0.1, pre_scrump=True,
                                           device=dev).update(),
        "mpdist": lambda n, m: clts.mpdist(T[:n], U[:n], m, device=dev),
        "ostinato": lambda n, m: clts.ostinato([T[:n], U[:n], T[n // 3:n] * 2], m, device=dev),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="pocl")
    ap.add_argument("--which", default="self,ab,topk,aamp,stimp,scrump,mpdist,ostinato")
    ap.add_argument("--windows", default=",".join(map(str, WINDOWS)))
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    dev = clts.get_device(a.device)
    fns = calls(dev)
    last = {}
    totals = {}
    for name in a.which.split(","):
        seq = [(n, 50) for n in LENGTHS] + [(3000, int(m)) for m in a.windows.split(",")]
        counts = []
        for n, m in seq:
            b0, t0 = len(BUILT), time.perf_counter()
            fns[name](n, m)
            new = BUILT[b0:]
            counts.append(len(new))
            print(f"{name:9s} n {n:5d} m {m:4d}: {time.perf_counter() - t0:6.3f} s, "
                  f"{len(new)} programs built", flush=True)
            for tpl, prm in new if a.verbose else ():
                old = last.get(tpl)
                diff = {k: v for k, v in prm.items() if old is None or old.get(k) != v}
                print(f"    {tpl} {diff if old is not None else '(first)'}")
                last[tpl] = prm
        totals[name] = (counts[0], sum(counts[1:]))
    print("function  first call, later 9 calls (programs built)")
    for name, (first, later) in totals.items():
        print(f"{name:9s} {first:3d} {later:3d}")


if __name__ == "__main__":
    main()
