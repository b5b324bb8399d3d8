"""``clts-tune --report FILE``: one markdown report a device owner can send back.

After tuning (or alone, with ``--only none``), the report holds the device as OpenCL describes it
(and how it differs from a recorded description of the same device, if clts has one), the
effective profile with the file each value came from, the device's copy bandwidth, and one
fixed workload per algorithm through the public functions: kernel time, the bytes the
algorithm must move at least as a percentage of the copy bandwidth measured in the same run,
and the time of the anchor library (statsmodels, scipy, stumpy) on the same data where it is
installed. Figures from different devices are comparable because every bandwidth is quoted
against that device's own copy kernel.
"""
from __future__ import annotations

import datetime as _dt
import statistics
import time

import numpy as np

from .._version import __version__

#: timed repeats of every workload (median of the kernel times; the first run builds)
REPEATS = 5


def copy_gbs(dev, n: int = 1 << 24) -> float:
    """Bytes read + written per second (GB/s) of the plain copy kernel, 4-wide, median of
    REPEATS launches."""
    import pyopencl.array as cla

    from ..runtime import launch, timing
    real, dt = ("double", np.float64) if dev.fp64 else ("float", np.float32)
    n = min(n, dev.max_alloc // 16)
    n -= n % 4
    src = cla.to_device(dev.queue, np.ones(n, dt))
    dst = cla.empty(dev.queue, n, dt)
    k = dev.program("runtime/copy.cl.mako", real=real, width=4).kernel("copy")
    times = []
    for _ in range(REPEATS + 1):
        with timing(dev) as t:
            launch(dev, k, n // 4, None, src.data, dst.data)
        times.append(t.kernel_seconds)
    return 2 * n * src.dtype.itemsize / statistics.median(times[1:]) / 1e9


def _kernel_seconds(fn):
    from ..runtime import timing
    fn()
    times = []
    for _ in range(REPEATS):
        with timing() as t:
            fn()
        times.append(t.kernel_seconds)
    return statistics.median(times)


def _wall(fn, repeats=3):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _workloads(dev, quick):
    """(name, shape, run, minimal bytes or None, anchor seconds for the same data or None,
    anchor name)."""
    import clts
    rng = np.random.default_rng(0)
    dt = np.float64 if dev.fp64 else np.float32
    out = []

    # tridiagonal: a, b, c, d read and x written once
    nsys, n = (10000, 115) if quick else (50000, 115)
    a, c, d = (rng.random((nsys, n)).astype(dt) for _ in range(3))
    b = (3 + rng.random((nsys, n))).astype(dt)

    def scipy_tridiag(k=200):
        from scipy.linalg import solve_banded
        ab = np.zeros((3, n))
        t0 = time.perf_counter()
        for i in range(k):
            ab[0, 1:], ab[1], ab[2, :-1] = c[i, :-1], b[i], a[i, 1:]
            solve_banded((1, 1), ab, d[i])
        return (time.perf_counter() - t0) * nsys / k
    out.append(("tridiagonal (auto)", f"{nsys} x {n}", lambda: clts.solve_tridiagonal(a, b, c, d),
                5 * a.nbytes, scipy_tridiag, "scipy.linalg.solve_banded (per system, scaled)"))

    # STL: the configuration of Serykh et al.'s NDVI data (2000 x 828, period 23, jumps 3/4/3);
    # minimal bytes: 20 arrays of batch x time per inner iteration (their model)
    B, N = (400, 828) if quick else (2000, 828)
    y = (np.sin(2 * np.pi * np.arange(N) / 23)[None] + rng.normal(size=(B, N))).astype(dt)
    kw = dict(seasonal=25, trend=39, low_pass=25, seasonal_jump=3, trend_jump=4, low_pass_jump=3,
              inner_iter=2, outer_iter=0)

    def statsmodels_stl(k=20):
        from statsmodels.tsa.seasonal import STL
        t0 = time.perf_counter()
        for row in y[:k].astype(np.float64):
            STL(row, 23, seasonal=25, trend=39, low_pass=25, seasonal_jump=3, trend_jump=4,
                low_pass_jump=3).fit(inner_iter=2, outer_iter=0)
        return (time.perf_counter() - t0) * B / k
    out.append(("STL (auto)", f"{B} x {N}, period 23", lambda: clts.stl(y, 23, **kw),
                2 * 20 * y.nbytes, statsmodels_stl, "statsmodels STL (per series, scaled)"))

    # BFAST-Monitor: the cube read twice (fused version: two passes)
    M, T = (5000, 200) if quick else (20000, 200)
    tt = np.arange(T) * 16.0
    cube = (3 + np.sin(2 * np.pi * tt[:, None] / 365) + 0.3 * rng.standard_normal((T, M)))
    cube[rng.random(cube.shape) < 0.3] = np.nan
    cube = cube.astype(dt)
    out.append(("BFAST-Monitor (auto)", f"{T} dates x {M} pixels",
                lambda: clts.bfast_monitor(cube, tt, tt[100], progress_bar=False),
                2 * cube.nbytes, None, ""))

    # matrix profile: pairs per second (no bandwidth bound)
    nT, m = (1 << 12, 64) if quick else (1 << 14, 128)
    Ts = np.cumsum(rng.standard_normal(nT))

    def stumpy_mp():
        import stumpy
        stumpy.stump(Ts[:1024], m)          # JIT compile outside the timing
        return _wall(lambda: stumpy.stump(Ts, m), 1)
    out.append(("matrix profile (k = 1)", f"n = {nT}, m = {m}",
                lambda: clts.matrix_profile(Ts, m, progress=False), None, stumpy_mp,
                "stumpy.stump (CPU, numba)"))
    return out


def _device_section(dev) -> list[str]:
    from ..runtime import emulation
    i = dev.info
    lines = ["## Device", "", "| field | value |", "|---|---|"]
    rows = [("platform / name", f"{i.platform} / {i.name}"), ("vendor", i.vendor),
            ("type", i.type), ("driver", i.driver), ("OpenCL", f"{i.version}; {i.opencl_c_version}"),
            ("compute units", i.compute_units), ("local memory", i.local_mem),
            ("max work-group", i.max_work_group),
            ("max work-item sizes", " x ".join(map(str, i.max_work_item_sizes))),
            ("max allocation", i.max_alloc), ("global memory", i.global_mem),
            ("fp64 / int64 atomics", f"{i.fp64} / {i.int64_atomics}"),
            ("fingerprint", i.fingerprint)]
    lines += [f"| {k} | {v} |" for k, v in rows]
    lines += ["", f"extensions: {' '.join(sorted(i.extensions))}", ""]
    for name in emulation.names():
        desc = emulation.load(name)
        if desc["name"] == i.name and desc["type"] == i.type:
            diff = [f"{k}: recorded {desc[k]}, this device {getattr(i, k)}"
                    for k in ("local_mem", "max_work_group", "compute_units", "max_alloc",
                              "global_mem") if desc[k] != getattr(i, k)]
            lines.append(f"recorded description `{name}` matches this device by name; "
                         + ("differences: " + "; ".join(diff) if diff else "same limits") + ".")
            lines.append("")
    return lines


def _profile_section(dev) -> list[str]:
    prof = dev.profile
    lines = ["## Profile", "", "files merged: " + ", ".join(f"`{p}`" for p in prof.files), "",
             "| key | value | from |", "|---|---|---|"]
    for k, v in sorted(prof.flat().items()):
        lines.append(f"| {k} | {v} | {prof.source_of(k).rsplit('/', 1)[-1]} |")
    return lines + [""]


def write_report(dev, path, *, quick=False, anchors=True) -> str:
    """Measure and write the report for ``dev`` to ``path``; returns the markdown."""
    import platform
    bw = copy_gbs(dev)
    lines = [f"# clts report: {dev.name}", "",
             f"{_dt.datetime.now(_dt.timezone.utc).isoformat(timespec='seconds')}, host "
             f"{platform.node()} ({platform.machine()}), clts {__version__}"
             f"{', quick workloads' if quick else ''}", ""]
    lines += _device_section(dev) + _profile_section(dev)
    lines += ["## Benchmarks", "",
              f"Copy bandwidth (copy kernel, bytes read + written): **{bw:.1f} GB/s**. "
              f"Kernel time: median of {REPEATS} calls (OpenCL profiling events). % of copy: "
              "the bytes the algorithm must move at least, per kernel second, against that copy "
              "bandwidth. Anchor: the reference library on the same data (host wall time).", "",
              "| workload | shape | kernel ms | GB/s | % of copy | wall ms | anchor | anchor s | "
              "speed-up (wall) |", "|---|---|---|---|---|---|---|---|---|"]
    for name, shape, run, nbytes, anchor, aname in _workloads(dev, quick):
        try:
            s = _kernel_seconds(run)
        except Exception as exc:       # noqa: BLE001 - reported in the table
            lines.append(f"| {name} | {shape} | failed: {type(exc).__name__}: "
                         f"{str(exc)[:100]} | | | | | | |")
            continue
        wall = _wall(run)
        gbs = f"{nbytes / s / 1e9:.1f}" if nbytes else "-"
        pct = f"{100 * nbytes / s / 1e9 / bw:.0f} %" if nbytes else "-"
        a_s, sp = "-", "-"
        if anchors and anchor is not None:
            try:
                a = anchor()
                a_s, sp = f"{a:.3g}", f"{a / wall:.1f}x"
            except ImportError:
                a_s = "not installed"
        lines.append(f"| {name} | {shape} | {s * 1e3:.3g} | {gbs} | {pct} | {wall * 1e3:.3g} | "
                     f"{aname or '-'} | {a_s} | {sp} |")
    text = "\n".join(lines) + "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return text
