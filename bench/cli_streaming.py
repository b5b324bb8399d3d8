"""Does a Zarr input larger than memory stream through the command line?

    python bench/cli_streaming.py [--device pocl] [--gb 6] [--cap-gb 1.5] [--stl-gb 1]
                                  [--stl-cap-gb 0.9] [--dir /tmp] [--keep]

Writes a synthetic NDVI cube (16-day composites, a seasonal cycle, noise, 10 % clouds as NaN,
float32 [time, y, x], chunks of whole series) of about ``--gb`` GB as Zarr, runs
``clts bfast`` on it (and ``clts stl`` on a ``--stl-gb`` cube) in a child process whose memory
is capped below the input (``--cap-gb``), and reports the input size, the cap, the child's peak
resident memory, wall time and pixels per second. Results go to
``bench/results/cli-streaming-<device>.md``; the cubes and outputs are deleted afterwards.

The cap: a memory cgroup (v2 ``memory.max``, or v1 ``memory.limit_in_bytes``) made under the
cgroup this process runs in when that is writable (the child is killed if it goes over), else
none (the peak RSS against the input size is still reported). The peak comes from the
kernel's accounting of the child (``wait4``'s ``ru_maxrss``).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PER_YEAR = 23                         # 16-day composites


def cube(ny: int, nx: int, years: int = 12, chunk_y: int = 32, chunk_x: int | None = None):
    """A lazy (Dask) NDVI-like DataArray [time, y, x] float32, each chunk of whole series
    generated on its own (seeded by its position): nothing of full size is ever in memory."""
    import dask.array as dsa
    import pandas as pd
    import xarray as xr
    n = PER_YEAR * years
    chunk_x = chunk_x or nx
    t = np.arange(n)
    season = np.cos(2 * np.pi * t / PER_YEAR).astype(np.float32)

    def block(block_info=None):
        (t0, t1), (y0, y1), (x0, x1) = block_info[None]["array-location"]
        rng = np.random.default_rng([y0, x0])
        shape = (t1 - t0, y1 - y0, x1 - x0)
        v = (0.5 + 0.2 * season[t0:t1, None, None]
             + 0.03 * rng.standard_normal(shape, dtype=np.float32))
        v[rng.random(shape, dtype=np.float32) < 0.1] = np.nan
        v[t1 - t1 // 5:, : (y1 - y0) // 4] -= 0.3          # a clearing in the last years
        return v.astype(np.float32)

    data = dsa.map_blocks(block, dtype=np.float32,
                          chunks=((n,), _split(ny, chunk_y), _split(nx, chunk_x)))
    dates = pd.date_range("2005-01-01", periods=n, freq="16D")
    return xr.DataArray(data, dims=("time", "y", "x"), name="ndvi",
                        coords={"time": dates, "y": np.arange(ny) * 30.0,
                                "x": np.arange(nx) * 30.0}, attrs={"units": "1"})


def _split(n, c):
    return tuple(min(c, n - i) for i in range(0, n, c))


def write_cube(path, ny, nx, **kw):
    """:func:`cube` written to the Zarr store ``path`` chunk by chunk; returns its bytes
    (uncompressed) and its DataArray."""
    da = cube(ny, nx, **kw)
    da.to_dataset().to_zarr(path, mode="w", zarr_format=2)
    return da.size * da.dtype.itemsize, da


def run_child(argv, cap_bytes=None, env=None):
    """Runs ``argv`` (a list) in a child process, in a memory cgroup of ``cap_bytes`` when one
    can be made; returns (exit status, peak RSS bytes, seconds, stderr text, capped)."""
    group = _cgroup(cap_bytes) if cap_bytes else None
    t0 = time.perf_counter()
    pre = None
    if group is not None:
        procs = group / "cgroup.procs"
        pre = lambda: procs.write_text(str(os.getpid()))        # noqa: E731
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=env, preexec_fn=pre)
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    secs = time.perf_counter() - t0
    if group is not None:
        try:
            group.rmdir()
        except OSError:
            pass
    return proc.returncode, usage.ru_maxrss * 1024, secs, err, group is not None


def _cgroup(cap_bytes):
    """A new memory cgroup of ``cap_bytes`` under this process's own, or None."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, ctrl, rel = line.split(":", 2)
        if ctrl == "" and Path("/sys/fs/cgroup/cgroup.controllers").exists():
            base, limit = Path("/sys/fs/cgroup") / rel.lstrip("/"), "memory.max"
        elif "memory" in ctrl.split(","):
            base, limit = Path("/sys/fs/cgroup/memory") / rel.lstrip("/"), \
                "memory.limit_in_bytes"
        else:
            continue
        g = base / f"clts-bench-{os.getpid()}"
        try:
            g.mkdir(exist_ok=True)
            (g / limit).write_text(str(int(cap_bytes)))
            if limit == "memory.limit_in_bytes" and (g / "memory.memsw.limit_in_bytes").exists():
                (g / "memory.memsw.limit_in_bytes").write_text(str(int(cap_bytes)))
            return g
        except OSError:
            try:
                g.rmdir()
            except OSError:
                pass
    return None


def _gib(b):
    return f"{b / 2**30:.2f} GiB"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--gb", type=float, default=6.0, help="bfast input, GB (uncompressed)")
    ap.add_argument("--cap-gb", type=float, default=1.5, help="memory cap of bfast, GB")
    ap.add_argument("--stl-gb", type=float, default=1.0, help="stl input, GB (0: no stl)")
    ap.add_argument("--stl-cap-gb", type=float, default=0.9, help="memory cap of stl, GB")
    ap.add_argument("--years", type=int, default=12)
    ap.add_argument("--chunk-y", type=int, default=16, help="rows of 1024 pixels per chunk")
    ap.add_argument("--stl-chunk-y", type=int, default=4, help="... of the stl input (STL "
                    "needs about 15x a chunk's bytes)")
    ap.add_argument("--dir", default=None, help="where the cubes go (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the files")
    args = ap.parse_args(argv)
    from clts.runtime import get_device
    dev = get_device(args.device)
    n = PER_YEAR * args.years
    nx = 1024
    work = Path(tempfile.mkdtemp(prefix="clts-stream-", dir=args.dir))
    rows = []
    py = [sys.executable, "-m", "clts.cli"]
    env = dict(os.environ, PYTHONPATH=str(ROOT), CLTS_NO_PROGRESS="1")
    try:
        jobs = [("bfast", args.gb, args.cap_gb, args.chunk_y, ["--start-monitor", "2013-01-01"])]
        if args.stl_gb > 0:
            jobs.append(("stl", args.stl_gb, args.stl_cap_gb, args.stl_chunk_y,
                         ["--period", str(PER_YEAR)]))
        for cmd, gb, cap_gb, cy, extra in jobs:
            cap = int(cap_gb * 1e9)
            ny = max(cy, int(gb * 1e9 / (n * nx * 4)) // cy * cy)
            src = work / f"{cmd}-in.zarr"
            t0 = time.perf_counter()
            nbytes, _ = write_cube(src, ny, nx, years=args.years, chunk_y=cy)
            t_write = time.perf_counter() - t0
            disk = sum(f.stat().st_size for f in src.rglob("*") if f.is_file())
            out = work / f"{cmd}-out.zarr"
            load = os.getloadavg()[0]
            rc, peak, secs, err, capped = run_child(
                py + [cmd, str(src), "--var", "ndvi", "-o", str(out), "--device", dev.slug,
                      "--no-progress"] + extra, cap, env)
            if rc != 0:
                print(err, file=sys.stderr)
            base_rc, base, _, _, _ = run_child([sys.executable, "-c",
                                                "import clts, clts.cli, xarray, zarr, "
                                                "pyopencl; clts.get_device("
                                                f"{dev.slug!r})"], None, env)
            chunk = n * cy * nx * 4
            rows.append([cmd, f"{n} x {ny} x {nx}", _gib(nbytes), _gib(disk),
                         f"{chunk / 2**20:.0f} MiB",
                         _gib(cap) + ("" if capped else " (not enforced)"),
                         _gib(peak), _gib(base), f"{peak / nbytes:.3f}",
                         f"{secs:.1f}", f"{ny * nx / secs / 1e3:.0f}", f"{t_write:.1f}",
                         f"{load:.2f}", "ok" if rc == 0 else f"exit {rc}"])
            print(" | ".join(rows[-1]), flush=True)
            shutil.rmtree(src, ignore_errors=True)
            shutil.rmtree(out, ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    header = ["command", "time x y x x", "input (float32)", "on disk (Zarr)", "chunk",
              "memory cap", "peak RSS", "baseline RSS", "peak / input", "wall s",
              "kpixels/s", "write s", "load (1 min)", "status"]
    text = [f"# `clts` on a Zarr input larger than its memory cap ({dev})", "",
            "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    text += ["| " + " | ".join(r) + " |" for r in rows]
    text += ["", f"Command: `python bench/cli_streaming.py --device {args.device or dev.slug} "
             f"--gb {args.gb:g} --cap-gb {args.cap_gb:g} --stl-gb {args.stl_gb:g} "
             f"--stl-cap-gb {args.stl_cap_gb:g}`. "
             "The child runs `python -m clts.cli bfast|stl IN.zarr --var ndvi -o OUT.zarr "
             "--device ...` in a memory cgroup of the cap (killed if it goes over); peak RSS "
             "is the child's `ru_maxrss`; baseline RSS: a child that only imports clts, "
             "xarray, zarr, pyopencl and opens the device. 2 CPU cores shared with other "
             "work; load = 1-minute load average before the run."]
    from common import RESULTS
    path = RESULTS / f"cli-streaming-{dev.slug}.md"
    path.write_text("\n".join(text) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
