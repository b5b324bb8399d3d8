"""Shared benchmark helpers: the device's copy bandwidth and markdown tables.

Every benchmark quotes its GB/s against ``copy_bandwidth(dev)`` measured in the same run.
"""
from __future__ import annotations

import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"


def copy_kernel(dev, n_doubles: int = 1 << 25, width: int = 8):
    """(run, bytes): one launch of the copy kernel (bytes read + written per launch), to time
    next to another kernel round by round (a shared machine's bandwidth drifts)."""
    import pyopencl.array as cla

    from clts.runtime import launch

    n = min(n_doubles, dev.max_alloc // 8 // 2)
    n -= n % 8
    real = "double" if dev.fp64 else "float"
    dtype = np.float64 if dev.fp64 else np.float32
    src = cla.to_device(dev.queue, np.ones(n, dtype))
    dst = cla.empty_like(src)
    k = dev.program("runtime/copy.cl.mako", real=real, width=width).kernel("copy")
    return (lambda: launch(dev, k, n // width, None, src.data, dst.data),
            2 * n * src.dtype.itemsize)


def copy_bandwidth(dev, n_doubles: int = 1 << 25, repeats: int = 7) -> float:
    """Best copy bandwidth (bytes read + written per second, in GB/s) over lane widths 1/4/8,
    median of ``repeats`` timed launches each, via OpenCL profiling events."""
    from clts.runtime import timing

    best = 0.0
    for width in (1, 4, 8):
        run, nbytes = copy_kernel(dev, n_doubles, width)
        run()
        dev.queue.finish()
        times = []
        for _ in range(repeats):
            with timing(dev) as t:
                run()
            times.append(t.kernel_seconds)
        best = max(best, nbytes / statistics.median(times) / 1e9)
    return best


def median_time(fn, repeats: int = 5, warmup: int = 1) -> float:
    """Median wall time of ``fn()`` in seconds."""
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def quiet(logger: str = "clts") -> None:
    """A benchmark's output stays its table: no progress bars, no library log lines below
    ERROR from ``logger``, no warnings."""
    import logging
    import warnings
    import clts
    clts.set_options(progress=False)
    logging.getLogger(logger).setLevel(logging.ERROR)
    warnings.simplefilter("ignore")


def machine_line(dev=None) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    s = f"{platform.node()} {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, load {load:.2f}"
    if dev is not None:
        s += f"; device {dev.slug} ({dev.platform} / {dev.name}, driver {dev.driver})"
    return s


def markdown_table(rows: list[dict]) -> str:
    if not rows:
        return "(no rows)\n"
    cols = list(rows[0])
    for r in rows[1:]:
        cols += [c for c in r if c not in cols]

    def fmt(v):
        if isinstance(v, float):
            if v != v:
                return "-"
            return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"
        return str(v)
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(fmt(r.get(c, "")) for c in cols) + " |" for r in rows]
    return "\n".join(out) + "\n"


def write_result(name: str, dev, title: str, rows: list[dict], notes: str = "") -> Path:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}-{dev.slug}.md"
    text = (f"# {title}\n\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
            f"{machine_line(dev)}\n\n{markdown_table(rows)}\n{notes}")
    path.write_text(text)
    return path
