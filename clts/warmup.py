"""``clts warmup``: build the kernels of the common calls ahead, in parallel.

A first call on a new machine (or after an upgrade that changed a kernel) waits for the
driver to build its kernels: seconds per algorithm on a CPU driver. :func:`warmup` runs small
calls of STL (complete and with gaps, plain and robust), the tridiagonal solver and
BFAST-Monitor in both precisions, and (in double precision) the matrix profile, mstump, MASS
and the ocean TKE step, from several threads at once, so that their builds
overlap, and leaves the binaries in the driver's disk cache for every later process. BFAST
builds per series length and history length (they are compiled in): its warm-up covers the
device probe, the profile and the common code, not every shape.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor


def _calls(dev):
    import numpy as np

    import clts
    from .ocean.inputs import benchmark_inputs
    rng = np.random.default_rng(0)
    t = np.arange(96)
    dtypes = [np.float32] + ([np.float64] if dev.fp64 else [])
    calls = []
    for dt in dtypes:
        y = (np.sin(2 * np.pi * t / 12) + rng.random((4, 96))).astype(dt)
        gaps = y.copy()
        gaps[:, 5] = np.nan
        calls += [(f"stl {np.dtype(dt)}", lambda y=y: clts.stl(y, 12, device=dev,
                                                               progress=False)),
                  (f"stl {np.dtype(dt)} gaps robust",
                   lambda g=gaps: clts.stl(g, 12, robust=True, device=dev, progress=False)),
                  (f"tridiagonal {np.dtype(dt)}", lambda dt=dt: clts.solve_tridiagonal(
                      *(rng.random((4, 64, 16)) + np.array([0, 4, 0, 0])[:, None, None]
                        ).astype(dt), device=dev)),
                  (f"bfast {np.dtype(dt)}", lambda y=y: clts.bfast_monitor(
                      y.T, np.arange(96.0) / 12, 6.0, freq=1.0, device=dev, progress=False))]
    if dev.fp64:
        s = np.cumsum(rng.standard_normal(512))
        calls += [("matrix profile", lambda: clts.matrix_profile(s, 32, device=dev,
                                                                 progress=False)),
                  ("mstump", lambda: clts.mstump(np.stack([s, s[::-1]]), 32, device=dev)),
                  ("mass", lambda: clts.mass(s[:32], s, device=dev)),
                  ("ocean tke", lambda: clts.ocean.tke(*benchmark_inputs(2 ** 12).values(),
                                                       device=dev))]
    return calls


def default_threads(dev) -> int:
    """Threads of a warm-up: :func:`clts.runtime.programs.build_threads` (the CPU count; one
    on NVIDIA's OpenCL driver and on pocl)."""
    from .runtime.programs import build_threads
    return build_threads(dev)


def warmup(device=None, *, threads=None, verbose=True) -> dict:
    """Build the kernels of the common calls on ``device`` (the default device if None) from
    ``threads`` threads (default: :func:`default_threads`). Returns ``{call: seconds}``."""
    from .options import set_options
    from .runtime import get_device
    from .runtime.programs import stats
    t0 = time.perf_counter()
    dev = get_device(device)
    calls = _calls(dev)
    builds0 = stats["builds"]
    times = {"device and profile": time.perf_counter() - t0}

    def run(item):
        name, fn = item
        s = time.perf_counter()
        with set_options(progress=False):     # its own lines say what it builds
            fn()
        return name, time.perf_counter() - s

    with ThreadPoolExecutor(max_workers=threads or default_threads(dev)) as pool:
        for name, sec in pool.map(run, calls):
            times[name] = sec
            if verbose:
                print(f"  {name:<32s} {sec:6.2f} s")
    times["total"] = time.perf_counter() - t0
    times["programs built"] = stats["builds"] - builds0
    if verbose:
        print(f"warm: {dev} ({times['programs built']} programs built, "
              f"{times['total']:.1f} s)")
    return times
