"""What a new series length or window length costs the matrix profile: the programs each call
builds (docs/performance.md, "Matrix profile: a new window length builds nothing").

    python bench/mp_new_length.py [--device pocl] [--windows 20,37,64,100,150] [--verbose]
        [--which self,ab,topk,aamp,stimp,scrump,mpdist,ostinato,mass,match,stumpi,snippets]

In one process, each function at 5 series lengths (window 50) and at 5 window lengths
(length 3,000; ``--windows``: others), each call once: the wall time and the programs it
built (a wrapper around ``clts.runtime.programs._build``; ``--verbose`` names each program
and the parameters in which it differs from the previous build of its template). The first
call of each function builds its programs; every later one should build none. Run it with
an empty ``POCL_CACHE_DIR`` to see pocl's compiles at the first enqueue in the wall times:
with ``POCL_CACHE_DIR`` set, each line also counts the work-group functions pocl compiled
(the new ``.so`` files in its cache; ``--verbose`` names the kernel and local size).
"""
from __future__ import annotations

import argparse
import os
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


def pocl_binaries() -> set:
    """The work-group functions in pocl's kernel cache (one ``.so`` per kernel, local size
    and grid kind), or an empty set without ``POCL_CACHE_DIR``."""
    root = os.environ.get("POCL_CACHE_DIR")
    if not root:
        return set()
    return {str(p.relative_to(root)) for p in Path(root).rglob("*.so")}


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
        "mass": lambda n, m: clts.mass(U[:m], T[:n], device=dev),
        "match": lambda n, m: clts.match(U[:m], T[:n], device=dev),
        "stumpi": lambda n, m: _stream(clts.stumpi(T[:n], m, device=dev), U[:8]),
        "snippets": lambda n, m: clts.snippets(T[:n], 2 * m, 2, device=dev),
    }


def _stream(s, points):
    for t in points:
        s.update(t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="pocl")
    ap.add_argument("--which", default="self,ab,topk,aamp,stimp,scrump,mpdist,ostinato,"
                                       "mass,match,stumpi,snippets")
    ap.add_argument("--windows", default=",".join(map(str, WINDOWS)))
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    dev = clts.get_device(a.device)
    fns = calls(dev)
    last = {}
    totals = {}
    for name in a.which.split(","):
        seq = [(n, 50) for n in LENGTHS] + [(3000, int(m)) for m in a.windows.split(",")]
        counts, wgs = [], []
        for n, m in seq:
            so0 = pocl_binaries()
            b0, t0 = len(BUILT), time.perf_counter()
            fns[name](n, m)
            dt = time.perf_counter() - t0
            new = BUILT[b0:]
            so = sorted(pocl_binaries() - so0)
            counts.append(len(new))
            wgs.append(len(so))
            print(f"{name:9s} n {n:5d} m {m:4d}: {dt:6.3f} s, {len(new)} programs built, "
                  f"{len(so)} pocl work-group compiles", flush=True)
            for p in so if a.verbose else ():
                parts = Path(p).parts      # <hash>/<hash>/<kernel>/<local size>-.../<kernel>.so
                print(f"    pocl: {parts[-3]} {parts[-2]}")
            for tpl, prm in new if a.verbose else ():
                old = last.get(tpl)
                diff = {k: v for k, v in prm.items() if old is None or old.get(k) != v}
                print(f"    {tpl} {diff if old is not None else '(first)'}")
                last[tpl] = prm
        totals[name] = (counts[0], sum(counts[1:]), wgs[0], sum(wgs[1:]))
    print("function  first call, later 9 calls (programs built; pocl work-group compiles)")
    for name, (first, later, wfirst, wlater) in totals.items():
        print(f"{name:9s} {first:3d} {later:3d}; {wfirst:3d} {wlater:3d}")


if __name__ == "__main__":
    main()
