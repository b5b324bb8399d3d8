"""Pinned staging (clts.runtime.staging) against the host's own copy speed, in one run.

    python bench/staging.py [--mb 128] [--rounds 7] [--threads 1,2] [--emulate h100]
                            [--device DEV] [--no-workloads] [--full] [--profile FILE]

On a GPU (``--device``) the transfers are the real ones. Without one, the discrete-GPU transfer
path runs on pocl under an emulated GPU's Plans (``--emulate``, default the H100: its profile
stages through pinned memory): uploads and downloads of ``--mb`` MB between numpy and a device
buffer through the pinned pieces, with 1, 2, ... copy threads (``copy_threads``), against the
best multi-threaded ``np.copyto`` of the same bytes (numpy to numpy, 1 .. max threads, parts
of the same size), rounds interleaved (a shared machine's speed drifts). Two figures per
direction:

- *host side*: the staging with a DMA that costs the host nothing (each DMA replaced by a
  marker: a GPU's copy engine runs beside the host's copies). This is what the host threads
  deliver, and what decides the speed on a GPU, whose link (53.7 GB/s on an H100) is faster
  than the host's copies. A DRAM-to-DRAM np.copyto and one into pinned-sized pieces used in
  turn (the staging's own access pattern: the pieces stay in cache) are both measured; the
  best of them is the reference;
- *end to end*: with pocl's DMA, itself a memcpy on the same CPU cores (a second copy of every
  byte, competing with the staging threads for the 2 cores here): a lower bound on a CPU.

Then, with ``--workloads`` (the default), the table's workloads numpy in / numpy out at small
scale on the same device: wall time with pinned staging (1 and the most copy threads) and
straight from pageable memory, kernel time, and the bytes that cross the link.

On a shared machine the best of interleaved rounds is the figure (the medians, in brackets,
show the load); GB per CPU second (process time, the driver's threads included) does not
depend on the load: it shows what the staging's threads and hand-offs cost beside a bare copy.
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _copyto(pool, dst, src, threads):
    """np.copyto of ``src`` into ``dst`` by ``threads`` threads (parts of equal size)."""
    n = src.size
    step = -(-n // threads)
    if threads == 1:
        np.copyto(dst, src)
        return
    futs = [pool.submit(np.copyto, dst[s:s + step], src[s:s + step]) for s in range(0, n, step)]
    for f in futs:
        f.result()


def _copyto_pieces(pool, pieces, src, threads):
    """np.copyto of ``src`` into the pinned-sized ``pieces`` used in turn, one piece per task,
    ``threads`` pieces copied at once (the staging's own access pattern and hand-offs: the
    pieces stay in cache)."""
    from collections import deque
    per = pieces[0].size
    running = deque()
    for k, p0 in enumerate(range(0, src.size, per)):
        part = src[p0:p0 + per]
        dst = pieces[k % len(pieces)][:part.size]
        if threads == 1:
            np.copyto(dst, part)
            continue
        if len(running) >= threads:
            running.popleft().result()
        running.append(pool.submit(np.copyto, dst, part))
    for f in running:
        f.result()


class _NoDMA:
    """Every ``pyopencl.enqueue_copy`` becomes a marker: the staging's host side alone."""

    def __enter__(self):
        import pyopencl as cl
        self.real = cl.enqueue_copy

        def marker(queue, *args, wait_for=None, **kw):
            return cl.enqueue_marker(queue, wait_for=wait_for)
        cl.enqueue_copy = marker
        return self

    def __exit__(self, *exc):
        import pyopencl as cl
        cl.enqueue_copy = self.real
        return False


def link(dev, mb, rounds, thread_counts):
    """The staging table: GB/s per direction and thread count, and % of np.copyto."""
    from concurrent.futures import ThreadPoolExecutor

    import pyopencl.array as cla

    from clts.runtime import staging
    nbytes = mb << 20
    rng = np.random.default_rng(0)
    src = rng.standard_normal(nbytes // 8)
    back = np.empty_like(src)
    other = np.empty_like(src)
    other[:] = 0                                     # pages in
    back[:] = 0
    d = cla.empty(dev.queue, src.shape, src.dtype)
    q = dev.state.queue_for_copies()
    top = max(thread_counts)
    pool = ThreadPoolExecutor(max(2, top))
    cases = {}

    def put(t, dma):
        def run():
            with staging.PinnedRing(dev, threads=t) as ring:
                events = ring.write(q, d.data, src, 0)
            for e in events:
                e.wait()
        return run if dma else (lambda: _no_dma(run))

    def get(t, dma):
        def run():
            with staging.PinnedRing(dev, threads=t) as ring:
                ring.read(q, d.data, back, 0)
        return run if dma else (lambda: _no_dma(run))

    pieces = [np.zeros(staging.PIECE_BYTES // 8) for _ in range(top + staging.DEPTH)]
    refs = []
    for t in range(1, top + 1):
        cases[("np.copyto", t)] = lambda t=t: _copyto(pool, other, src, t)
        cases[("np.copyto into pieces in turn", t)] = lambda t=t: _copyto_pieces(
            pool, pieces, src, t)
        refs += [("np.copyto", t), ("np.copyto into pieces in turn", t)]
    for t in sorted({1, top}):      # a fresh destination: the page faults a new result pays
        cases[("np.copyto into a fresh np.empty", t)] = lambda t=t: _copyto(
            pool, np.empty_like(src), src, t)
    for t in thread_counts:
        cases[("upload, host side", t)] = put(t, False)
        cases[("upload, end to end", t)] = put(t, True)
        cases[("download, host side", t)] = get(t, False)
        cases[("download, end to end", t)] = get(t, True)
    # the bare DMA of the same bytes: from pageable numpy memory, from a pinned array
    import pyopencl as cl
    pin = staging._allocate(dev, nbytes)
    cases[("DMA from pageable numpy", 0)] = lambda: cl.enqueue_copy(q, d.data, src).wait()
    cases[("DMA from pinned", 0)] = lambda: cl.enqueue_copy(q, d.data, pin).wait()
    for run in cases.values():                        # warm: pools, pieces, threads
        run()
    best = {k: np.inf for k in cases}
    allt = {k: [] for k in cases}
    cpu = {k: [] for k in cases}
    for _ in range(rounds):
        for k, run in cases.items():
            c0, t0 = time.process_time(), time.perf_counter()
            run()
            dt = time.perf_counter() - t0
            cpu[k].append(time.process_time() - c0)
            best[k] = min(best[k], dt)
            allt[k].append(dt)
    same = bool(np.array_equal(back, src))
    gbs = {k: nbytes / v / 1e9 for k, v in best.items()}
    med = {k: nbytes / np.median(v) / 1e9 for k, v in allt.items()}
    per_cpu = {k: nbytes / max(np.median(v), 1e-9) / 1e9 for k, v in cpu.items()}
    ref_k = max(refs, key=lambda k: gbs[k])
    ref = gbs[ref_k]
    print(f"\n{mb} MB float64, best of {rounds} interleaved rounds (median in brackets); "
          f"best np.copyto {ref:.1f} GB/s ({ref_k[0]}, {ref_k[1]} thread(s)); round trip same "
          f"bits: {'yes' if same else 'NO'}\n")
    print("| transfer | copy threads | GB/s best (median) | % of best np.copyto | "
          "GB per CPU second (median) |")
    print("|---|---|---|---|---|")
    for (name, t) in cases:
        print(f"| {name} | {t or '-'} | {gbs[(name, t)]:.1f} ({med[(name, t)]:.1f}) | "
              f"{100 * gbs[(name, t)] / ref:.0f} % | {per_cpu[(name, t)]:.1f} |")
    pool.shutdown()
    return gbs, ref


def residual(dev, mb, rounds, thread_counts):
    """STL's last step, host side (no DMA: a GPU's copy engine runs beside): seasonal and
    trend (``mb`` MB each, float32) downloaded through the ring, the residual y - s - t either
    as a pass over the batch after both are in, or by each copy thread over the trend piece
    it just copied out (``then``, while the piece is in cache)."""
    import pyopencl.array as cla

    import clts
    from clts.runtime import staging
    n = (mb << 20) // 4
    rng = np.random.default_rng(2)
    y, s0, t0 = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    ds, dt = cla.to_device(dev.queue, s0), cla.to_device(dev.queue, t0)
    S, T, R = (np.zeros(n, np.float32) for _ in range(3))
    q = dev.state.queue_for_copies()

    def resid(a, b):
        np.subtract(y[a:b], S[a:b], out=R[a:b])
        R[a:b] -= T[a:b]

    def run(t, landing, dma=False):
        with clts.set_options(copy_threads=t), staging.PinnedRing(dev, threads=t) as ring:
            with _NoDMA() if not dma else contextlib.nullcontext():
                ring.read(q, ds.data, S)
                ring.read(q, dt.data, T, then=resid if landing else None)
            if not landing:
                staging.in_parts(n, resid, R.nbytes)
    cases = {(w, t): (lambda t=t, w=w: run(t, w == "as the trend lands"))
             for t in thread_counts for w in ("a pass after", "as the trend lands")}
    best = {k: np.inf for k in cases}
    for _ in range(rounds + 1):                       # the first round warms
        for k, go in cases.items():
            t1 = time.perf_counter()
            go()
            best[k] = min(best[k], time.perf_counter() - t1)
            R[:] = 0
    run(max(thread_counts), True, dma=True)           # with the data: the same residual
    ok = bool(np.array_equal(R, y - s0 - t0))
    print(f"\nSTL's residual, host side: seasonal + trend {mb} MB each downloaded, best of "
          f"{rounds}; residual = y - s - t: {'yes' if ok else 'NO'}\n")
    print("| residual | copy threads | ms | GB/s of the two downloads |")
    print("|---|---|---|---|")
    for (w, t), v in best.items():
        print(f"| {w} | {t} | {v * 1e3:.1f} | {2 * (mb << 20) / v / 1e9:.1f} |")


def _no_dma(run):
    with _NoDMA():
        run()


class _LinkBytes:
    """Counts the bytes of host memory every ``pyopencl.enqueue_copy`` moves (either way)."""

    def __enter__(self):
        import pyopencl as cl
        self.real, self.nbytes = cl.enqueue_copy, 0

        def counted(queue, dest, src, **kw):
            for a in (dest, src):
                if isinstance(a, np.ndarray):
                    self.nbytes += a.nbytes
            return self.real(queue, dest, src, **kw)
        cl.enqueue_copy = counted
        return self

    def __exit__(self, *exc):
        import pyopencl as cl
        cl.enqueue_copy = self.real
        return False


def workloads(dev, rounds, thread_counts, full=False, gpu=False, profile=None):
    """The table's workloads, numpy in / numpy out (small, or ``full``: the GPU table's
    sizes): the bytes that cross the link (counted), kernel time and span, wall time per
    transfer way; on a GPU also the issue's goal, 1.5 x bytes / 54 GB/s + kernel span."""
    import clts
    from clts.ocean.inputs import benchmark_inputs
    from clts.runtime import timing
    rng = np.random.default_rng(1)
    B, M, R, X = (100_000, 500_000, 20_000, 2 ** 20) if full else (500, 16_384, 20_000, 2 ** 16)
    t = np.arange(828)
    y = (np.sin(2 * np.pi * t / 23) + 0.1 * rng.standard_normal((B, 828))).astype(np.float32)
    dates = 2000 + np.arange(256) / 23
    cube = (np.sin(2 * np.pi * dates)[:, None] + 0.1 * rng.standard_normal((256, M))
            ).astype(np.float32)
    cube[rng.random(cube.shape) < 0.2] = np.nan
    cube16 = np.where(np.isnan(cube), -9999, cube * 1000).astype(np.int16)
    a, c, d = rng.standard_normal((3, R, 115))
    b = 4 + np.abs(a) + np.abs(c)
    x = benchmark_inputs(X)
    stl_kw = dict(seasonal=25, seasonal_jump=3, trend_jump=4, low_pass_jump=3, device=dev)
    cases = [
        (f"STL {B:,} x 828 float32", lambda: clts.stl(y, 23, **stl_kw)),
        (f"STL {B:,} x 828, outputs=('trend',)",
         lambda: clts.stl(y, 23, outputs=("trend",), **stl_kw)),
        (f"BFAST {M:,} x 256 float32",
         lambda: clts.bfast_monitor(cube, dates, dates[128], freq=1, device=dev)),
        (f"BFAST {M:,} x 256 int16",
         lambda: clts.bfast_monitor(cube16, dates, dates[128], nodata=-9999, freq=1,
                                    device=dev)),
        (f"tridiagonal {R:,} x 115 float64",
         lambda: clts.solve_tridiagonal(a, b, c, d, device=dev)),
        (f"TKE 2^{X.bit_length() - 1}", lambda: clts.ocean.tke(*x.values(), device=dev)),
    ]
    modes = [("pageable", None)] + [("pinned", t) for t in thread_counts]
    print("\n| numpy call | MB over the link | kernels ms | span ms | "
          + " | ".join(f"wall ms, {m}" + (f" {t} thr" if t else "") for m, t in modes)
          + (" | goal ms (1.5 x MB / 54 GB/s + span) |" if gpu else " |"))
    print("|---|---|---|---|" + "---|" * (len(modes) + gpu))
    for name, run in cases:
        walls = {m: np.inf for m in modes}
        kern = span = np.inf
        for mode in modes:                            # warm: builds, pools
            with clts.set_options(staging=mode[0], copy_threads=mode[1]):
                run()
        with clts.set_options(staging="pinned"), _LinkBytes() as link_bytes:
            run()
        for _ in range(rounds):
            for mode in modes:
                with clts.set_options(staging=mode[0], copy_threads=mode[1]):
                    t0 = time.perf_counter()
                    with timing(dev) as tm:
                        run()
                    walls[mode] = min(walls[mode], time.perf_counter() - t0)
                    kern = min(kern, tm.kernel_seconds)
                    span = min(span, tm.span_seconds)
        mb = link_bytes.nbytes / 1e6
        goal = f" | {1.5 * mb / 54e3 * 1e3 + span * 1e3:.1f} |" if gpu else " |"
        print(f"| {name} | {mb:.0f} | {kern * 1e3:.1f} | {span * 1e3:.1f} | "
              + " | ".join(f"{walls[m] * 1e3:.1f}" for m in modes) + goal, flush=True)
        if profile:
            _profile(profile, name, run)


def _profile(path, name, run, calls=3):
    """Where the calling thread's time goes in ``calls`` calls (pinned staging, the default
    copy threads), appended to ``path``: pyinstrument's call tree where it imports, else
    cProfile's top functions by own time."""
    import clts
    with clts.set_options(staging="pinned"), open(path, "a") as f:
        f.write(f"\n===== {name}: {calls} calls\n")
        try:
            from pyinstrument import Profiler
        except ImportError:
            Profiler = None
        if Profiler is not None:
            prof = Profiler(interval=0.0002)
            prof.start()
            for _ in range(calls):
                run()
            prof.stop()
            f.write(prof.output_text(unicode=False, color=False, show_all=False))
            return
        import cProfile
        import io
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(calls):
            run()
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(30)
        f.write(out.getvalue())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None, help="a real device (a GPU); default: pocl "
                    "under --emulate")
    ap.add_argument("--emulate", default="h100")
    ap.add_argument("--mb", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", default=None,
                    help="copy thread counts, comma-separated (default 1 and the CPUs, <= 16)")
    ap.add_argument("--no-workloads", action="store_true")
    ap.add_argument("--full", action="store_true",
                    help="the workloads at the GPU table's sizes (a GPU: 1.7 GB for STL)")
    ap.add_argument("--profile", metavar="FILE",
                    help="also append where each workload's calling thread spends its time "
                    "(pyinstrument, else cProfile) to FILE")
    args = ap.parse_args(argv)
    from common import machine_line, quiet
    quiet()
    import clts
    from clts.runtime import staging
    if args.device:
        dev = clts.get_device(args.device)
    else:
        from clts.runtime.emulation import emulate
        dev = emulate(args.emulate, "pocl")
    threads = ([int(t) for t in args.threads.split(",")] if args.threads
               else sorted({1, staging.copy_threads()}))
    print(f"# pinned staging: {machine_line(dev)}; staging {staging.staging_mode(dev)}, "
          f"pieces of {staging.PIECE_BYTES >> 20} MB (>= {staging.PART_BYTES >> 20} MB), copy "
          f"threads + {staging.DEPTH} per ring, one task per piece")
    link(dev, args.mb, args.rounds, threads)
    residual(dev, args.mb, args.rounds, threads)
    if not args.no_workloads:
        workloads(dev, max(3, args.rounds // 2), threads, args.full, bool(args.device),
                  args.profile)


if __name__ == "__main__":
    main()
