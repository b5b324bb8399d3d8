"""Soak: 1,000 mixed public calls of varied shapes; no growth of device buffers or host memory
after a warm-up (a leak of one buffer or array per call would show at once). Prints the figures.
"""
from __future__ import annotations

import gc
import os
import random

import numpy as np

import clts

CALLS = int(os.environ.get("CLTS_SOAK_CALLS", "1000"))
#: the figures of each run (printed at the end of the test run)
REPORT = []


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _device_buffers() -> int:
    import pyopencl as cl
    return sum(1 for o in gc.get_objects() if isinstance(o, cl.MemoryObjectHolder))


def _pool_bytes(dev) -> int:
    pool = dev.state.pools.get("scratch")
    return 0 if pool is None else int(pool.held_blocks + pool.active_blocks)


def _calls(dev, rng):
    t12 = np.arange(240)
    dates = 2000 + np.arange(90) / 23

    def stl():
        B, N = rng.choice([1, 4, 12]), rng.choice([48, 96])
        y = np.sin(2 * np.pi * t12[:N] / 12) + 0.2 * rng.standard_normal((B, N))
        y[rng.random(y.shape) < 0.1] = np.nan
        return clts.stl(y, 12, device=dev).trend

    def bfast():
        M = rng.choice([1, 9, 24])
        y = np.sin(2 * np.pi * dates)[:, None] + 0.1 * rng.standard_normal((90, M))
        return clts.bfast_monitor(y, dates, dates[60], freq=1, device=dev).breaks

    def mp():
        T = np.cumsum(rng.standard_normal(rng.choice([100, 200])))
        r = clts.matrix_profile(T, 16, k=int(rng.choice([1, 2])), device=dev)
        return clts.discords(r, 1)[0] if r.P.shape[1] == 1 else r.P

    def tridiag():
        nsys, n = rng.choice([1, 50, 300]), rng.choice([4, 31, 64])
        a, c, d = (rng.standard_normal((nsys, n)) for _ in range(3))
        return clts.solve_tridiagonal(a, 4 + rng.random((nsys, n)), c, d, device=dev).x

    return [stl, bfast, mp, tridiag]


def test_soak_no_growth(device):
    rng = np.random.default_rng(99)
    calls = _calls(device, rng)
    order = random.Random(5)
    warm = max(CALLS // 5, 40)
    for i in range(warm):                        # every shape and program built
        calls[i % len(calls)]()
    gc.collect()
    rss0, bufs0, pool0 = _rss_mib(), _device_buffers(), _pool_bytes(device)
    for _ in range(CALLS - warm):
        order.choice(calls)()
    gc.collect()
    rss1, bufs1, pool1 = _rss_mib(), _device_buffers(), _pool_bytes(device)
    line = (f"soak on {device.slug}: {CALLS} calls; host RSS {rss0:.0f} -> {rss1:.0f} MiB, "
            f"live device buffers {bufs0} -> {bufs1}, pooled blocks {pool0} -> {pool1}")
    REPORT.append(line)
    print(line)
    assert bufs1 <= bufs0 + 8
    assert pool1 <= pool0 + 8
    assert rss1 - rss0 < 64
