"""Chunked numpy calls: transfers overlapping compute (pipelined) against the same chunks run
one after another (sequential), and the unchunked call.

    python bench/out_of_core.py [--device pocl] [--chunks 2,4] [--rounds 7] [--zero-copy 0,1]

For STL, the tridiagonal solver and BFAST-Monitor (the workloads of ``generic_vs_tuned.py``),
the batch is cut into about each of ``--chunks`` chunk counts with the option ``max_chunk`` (the
rows give the count run), and each round times, in
turn, the unchunked call, the chunked call pipelined and the chunked call sequential
(option ``pipeline=False``); rows give the minimum wall time over rounds and
the median over rounds of the per-round ratio sequential / pipelined (> 1: the overlap pays).
``--zero-copy 0`` runs with the option ``zero_copy=False``: every chunk is copied with real OpenCL
transfers, as on a discrete GPU. ``kernels ms`` is the kernel time of the sequential chunked
call (OpenCL profiling); ``not kernels`` the share of its wall time outside kernels, the most
an overlap can hide; ``copies during kernels`` (OpenCL transfers only) the share of the
transfers' time, by profiling events of one pipelined call, during which a kernel ran: 0 %
means the driver ran them one after another whatever the queues. Results go to ``bench/results/out-of-core-<device>.md``.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def workloads(rng, only=None):
    """(name, batch size, call(dev), check(a, b)) of the three chunked algorithms."""
    from generic_vs_tuned import workloads as wl
    cases = {name.split()[0]: run for name, run in wl(rng)}
    named = [("tridiagonal 50,000 x 115 float64", 50_000, cases["tridiagonal"],
              lambda r: r.x),
             ("STL 2000 x 828, period 23, jumps 3/4/3", 2000, cases["STL"],
              lambda r: r.seasonal),
             ("BFAST-Monitor 32,768 x 256 float32", 32_768, cases["BFAST-Monitor"],
              lambda r: r.means)]
    return [c for c in named if only is None or any(o in c[0].lower() for o in only)]


def _union(intervals):
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def overlapped(copy_events, kernel_events) -> float:
    """Share of the copies' time (OpenCL profiling) during which a kernel was running."""
    def spans(events):
        return _union((e.profile.start, e.profile.end) for e in events
                      if e.profile.end > e.profile.start)
    copies, kernels = spans(copy_events), spans(kernel_events)
    total = sum(b - a for a, b in copies)
    both = sum(max(0, min(b, d) - max(a, c)) for a, b in copies for c, d in kernels)
    return both / total if total else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--chunks", default="2,4", help="chunk counts to cut each batch into")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--zero-copy", default="0,1", help="zero_copy option values to run (0, 1)")
    ap.add_argument("--only", default=None, help="comma-separated workload name parts")
    ap.add_argument("--slots", type=int, default=2)
    args = ap.parse_args(argv)
    from common import quiet
    quiet()
    import clts
    from clts.runtime import pipeline, timing
    from common import machine_line, write_result
    dev = clts.get_device(args.device)
    only = args.only.lower().split(",") if args.only else None
    cases = workloads(np.random.default_rng(0), only)
    real = pipeline.run_pipelined
    seen, copies = [], []

    def counted(device, chunks, *, upload, download, **kw):   # chunk count, copy events; --slots
        seen.append(len(chunks))
        kw["slots"] = args.slots

        def up(*a):
            events = upload(*a) or []
            copies.extend(events)
            return events

        def down(*a):
            items = download(*a) or []
            copies.extend(e for e in items if not callable(e))
            return items
        return real(device, chunks, upload=up, download=down, **kw)
    for mod in ("clts.stl.chunks", "clts.tridiag.api", "clts.bfast.monitor_run"):
        sys.modules[mod].run_pipelined = counted
    print(f"# out of core: {machine_line(dev)}; {args.slots} slots\n")
    rows = []
    for zc, n_chunks, (name, batch, run, pick) in [
            (zc, int(c), case) for zc in args.zero_copy.split(",") for case in cases
            for c in args.chunks.split(",")]:
        clts.set_options(zero_copy=zc != "0")

        def call(chunked, piped):
            clts.set_options(max_chunk=-(-batch // n_chunks) if chunked else None,
                             pipeline=piped)
            t0 = time.perf_counter()
            with timing(dev) as t:
                r = run(dev)
            return time.perf_counter() - t0, t.kernel_seconds, r

        ref = pick(call(False, True)[2])
        for chunked, piped in ((True, True), (True, False)):       # builds, checks
            got = pick(call(chunked, piped)[2])
            if not np.array_equal(np.asarray(got), np.asarray(ref), equal_nan=True):
                raise SystemExit(f"{name}: chunked result differs from unchunked")
        walls = {"whole": [], "piped": [], "seq": []}
        kern, ratios = [], []
        for _ in range(args.rounds):
            walls["whole"].append(call(False, True)[0])
            w_p = call(True, True)[0]
            w_s, k_s, _ = call(True, False)
            walls["piped"].append(w_p)
            walls["seq"].append(w_s)
            kern.append(k_s)
            ratios.append(w_s / w_p)
        # OpenCL transfers: the share of their time during which a kernel ran (pipelined)
        overlap = float("nan")
        if zc == "0":
            copies.clear()
            clts.set_options(pipeline=True, max_chunk=-(-batch // n_chunks))
            with timing(dev) as t:
                run(dev)
            overlap = overlapped(copies, t.events)
        clts.set_options(pipeline=True, max_chunk=None)
        seq, k = min(walls["seq"]), min(kern)
        row = {"workload": name, "transfers": "OpenCL copies" if zc == "0" else "default",
               "chunks": seen[-1], "unchunked ms": min(walls["whole"]) * 1e3,
               "sequential ms": seq * 1e3, "pipelined ms": min(walls["piped"]) * 1e3,
               "seq / piped": statistics.median(ratios),
               "piped / unchunked": min(walls["piped"]) / min(walls["whole"]),
               "kernels ms": k * 1e3, "not kernels": f"{max(0.0, 1 - k / seq):.0%}",
               "copies during kernels": "-" if overlap != overlap else f"{overlap:.0%}"}
        rows.append(row)
        print(" | ".join(f"{v:.3g}" if isinstance(v, float) else str(v)
                         for v in row.values()), flush=True)
    path = write_result("out-of-core", dev, "Out of core: chunks pipelined vs "
                        f"sequential ({args.slots} slots)", rows,
                        notes=f"Command: `python bench/out_of_core.py --device {args.device} "
                        f"--chunks {args.chunks} --rounds {args.rounds} --slots {args.slots}`; minimum wall over "
                        "rounds, ratio = median of per-round ratios.\n")
    print(f"\nwritten to {path}")


if __name__ == "__main__":
    main()
