"""What a new process pays before its first result: kernel builds and the command line.

    python bench/startup.py [--device pocl] [--only builds,first,cli] [--repeats 5] [--n 20000]
                            [--first-repeats 3] [--calls stl,matrix_profile,...]

``builds``: the build time of each call's programs, at once and one by one, alternately in one
process (salted build options keep the disk cache out). ``first``: each algorithm's first call in a fresh process with empty kernel caches, its
programs built at once (``clts.runtime.programs.prebuild``) and one by one, alternately (pocl's
``POCL_CACHE_DIR`` and pyopencl's binary cache under ``XDG_CACHE_HOME``, both in a temporary
directory, as on a new machine: the device probe runs too, in the "imports + device"
column), the same call
again in that process (every program built), and the first call of a second fresh process
(the disk cache filled by the first). ``cli``: ``clts mp FILE.csv -m 64 -o OUT.nc`` on an
``--n``-row CSV against a fresh ``python -c`` doing the same read (pandas), compute
(``clts.matrix_profile``) and write (xarray, h5netcdf), one with numpy in and out, and
``clts --help``, round robin, warm kernel cache: the median wall and CPU (user + system) time
of each and the CLI's difference to the same work (CPU time is the steadier figure on a loaded
machine). Results go to ``bench/results/startup-<device>.md`` (a subset of ``--calls``: a file
named after them).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: one small call per algorithm (and per matrix-profile entry point); ``dev``: the device
CALLS = {
    "stl": "clts.stl(y2, 12, robust=True, device=dev)",
    "bfast_monitor": "clts.bfast_monitor(y2.T, np.arange(480.0) / 12, 30.0, freq=1.0, device=dev)",
    "matrix_profile": "clts.matrix_profile(s, 64, device=dev)",
    "mstump": "clts.mstump(np.stack([s, s[::-1].copy()]), 32, device=dev)",
    "mass": "clts.mass(s[:64].copy(), s, device=dev)",
    "stumpi": "clts.stumpi(s[:2000], 32, device=dev).update(s[2000:2100])",
    "solve_tridiagonal": "clts.solve_tridiagonal(*(rng.random((4, 64, 32)) + "
                         "np.array([0, 4, 0, 0])[:, None, None]), device=dev)",
    "tridiagonal coalesced": "clts.solve_tridiagonal(*(rng.random((4, 64, 32)) + np.array("
                             "[0, 4, 0, 0])[:, None, None]), version='thomas-coalesced', "
                             "device=dev)",
    "bfast_monitor ROC": "clts.bfast_monitor(y2.T, np.arange(480.0) / 12, 30.0, freq=1.0, "
                         "history='ROC', device=dev)",
    "ocean.tke": "clts.ocean.tke(*benchmark_inputs(2 ** 14).values(), device=dev)",
    "bfast_breaks device cube": "clts.to_numpy(clts.bfast_breaks(cla.to_device(dev.queue, "
                                "np.ascontiguousarray(y2[:, :120].T)), np.arange(120.0) / 12, "
                                "freq=12.0, device=dev))",
}

CHILD = """
import sys, time
t0 = time.perf_counter()
import numpy as np, clts
import pyopencl.array as cla
from clts.ocean.inputs import benchmark_inputs
from clts.runtime import programs
if {one_thread}:       # programs built one after the other (one build thread)
    programs.build_threads = lambda dev: 1
clts.set_options(progress=False)
dev = clts.get_device({device!r})
rng = np.random.default_rng(0)
s = np.cumsum(rng.standard_normal(4000))
y2 = (np.sin(2 * np.pi * np.arange(480) / 12) + rng.random((16, 480)))
t1 = time.perf_counter()
{call}
t2 = time.perf_counter()
{call}
t3 = time.perf_counter()
print(f"{{t1 - t0:.3f}} {{t2 - t1:.3f}} {{t3 - t2:.3f}}")
"""


def _env(cache: Path | None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
        env["POCL_CACHE_DIR"] = str(cache / "pocl")
    return env


def empty_cache(tmp: Path) -> Path:
    """A cache directory with clts's probe results (and ICD set-up) but no kernel binaries."""
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "clts"
    d = Path(tempfile.mkdtemp(dir=tmp))
    (d / "clts").mkdir()
    for f in home.glob("probe-*.json"):
        shutil.copy(f, d / "clts" / f.name)
    if (home / "icd").is_dir():
        shutil.copytree(home / "icd", d / "clts" / "icd")
    return d


def _first(name: str, device: str, tmp: Path, one_thread: bool) -> list[float]:
    """[imports + device, first call, again, next process's first call] of ``name``."""
    cache = empty_cache(tmp)
    code = CHILD.format(device=device, call=CALLS[name], one_thread=one_thread)
    out = []
    for _ in range(2):       # the second process finds the first one's binaries on disk
        r = subprocess.run([sys.executable, "-c", code], env=_env(cache),
                           capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(f"{name}: {r.stderr}")
        out.append([float(v) for v in r.stdout.split()[-3:]])
    shutil.rmtree(cache, ignore_errors=True)
    return out[0] + [out[1][1]]


def first_calls(device: str, tmp: Path, repeats: int, names) -> list[str]:
    """Each call's first-call figures, medians of ``repeats`` runs, with the programs built
    at once (``clts.runtime.programs.prebuild``) and one by one, run alternately."""
    variants = {"at once": False, "one by one": True}
    rows = ["| call | builds | imports + device (s) | first call, empty cache (s) | again (s) "
            "| next process, first call (s) |", "|---|---|---:|---:|---:|---:|"]
    for name in names:
        runs = {k: [] for k in variants}
        for _ in range(repeats):
            for k, one in variants.items():
                runs[k].append(_first(name, device, tmp, one))
        for k in variants:
            med = [statistics.median(col) for col in zip(*runs[k])]
            rows.append(f"| {name} | {k} | " + " | ".join(f"{v:.2f}" for v in med) + " |")
            print(rows[-1], flush=True)
    return rows


def builds(device: str, repeats: int, names) -> list[str]:
    """The build time of each call's programs in this process, at once (``prebuild``) and one
    by one, alternately; every round builds them afresh (a ``-D`` salt in the build options
    keeps the driver's disk cache out). Only the builds: pocl's launch-time compile is not in
    it. Medians of ``repeats`` rounds."""
    import numpy as np

    import clts
    from clts.ocean.inputs import benchmark_inputs
    from clts.runtime import devices, programs
    clts.set_options(progress=False)
    dev = clts.get_device(device)
    rng = np.random.default_rng(0)
    import pyopencl.array as cla
    ns = dict(np=np, clts=clts, cla=cla, benchmark_inputs=benchmark_inputs, rng=rng,
              s=np.cumsum(rng.standard_normal(4000)),
              y2=np.sin(2 * np.pi * np.arange(480) / 12) + rng.random((16, 480)))
    real_build = programs._build
    rows = ["| call | programs | at once (s) | one by one (s) | ratio |", "|---|---:|---:|---:|---:|"]
    salt = iter(range(1 << 30))
    for name in names:
        specs = []

        def record(d, template, params, options, specs=specs):
            specs.append((template, params, options))
            return real_build(d, template, params, options)
        programs._build = record
        try:
            exec(CALLS[name], dict(ns, dev=devices.Device(dev.info)))
        finally:
            programs._build = real_build
        t = {"at once": [], "one by one": []}
        for _ in range(repeats):
            for k in t:
                fresh = devices.Device(dev.info)
                n = next(salt)
                salted = [(a, b, tuple(c) + (f"-DCLTS_BENCH_SALT={n}",)) for a, b, c in specs]
                t0 = time.perf_counter()
                if k == "at once":
                    programs.prebuild(fresh, salted)
                for spec in salted:
                    programs.build_program(fresh, *spec)
                t[k].append(time.perf_counter() - t0)
        a, b = (statistics.median(v) for v in t.values())
        rows.append(f"| {name} | {len(specs)} | {a:.2f} | {b:.2f} | {b / a:.2f} |")
        print(rows[-1], flush=True)
    return rows


PY = """
import pandas as pd, xarray as xr, clts
df = pd.read_csv({src!r}, index_col=0)
r = clts.matrix_profile(df["x"].to_numpy(), 64, progress=False, device={device!r})
t = df.index.to_numpy()[:len(r.P)]
xr.Dataset({{"profile": ("time", r.P.reshape(-1)), "index": ("time", r.I.reshape(-1)),
            "left_index": ("time", r.left_I), "right_index": ("time", r.right_I)}},
           coords={{"time": t}}).to_netcdf({out!r}, engine="h5netcdf")
"""

#: the least a Python process does: numpy in and out, no pandas / xarray / netCDF
PY_MIN = """
import numpy as np, clts
y = np.loadtxt({src!r}, delimiter=",", skiprows=1, usecols=1)
r = clts.matrix_profile(y, 64, progress=False, device={device!r})
np.savez({out!r}, P=r.P, I=r.I, left_I=r.left_I, right_I=r.right_I)
"""


def _timed(cmd: list[str]) -> tuple[float, float]:
    """(wall, CPU = user + system of the child and its threads) seconds of ``cmd``."""
    import resource
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=_env(None), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode:
        raise SystemExit(f"{' '.join(cmd[:4])}: {r.stderr}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cli(device: str, tmp: Path, n: int, repeats: int) -> list[str]:
    import numpy as np
    src = tmp / "series.csv"
    y = np.cumsum(np.random.default_rng(0).standard_normal(n))
    with open(src, "w") as f:
        f.write("time,x\n" + "".join(f"{i},{v:.17g}\n" for i, v in enumerate(y)))
    py = sys.executable
    cmds = {
        "clts mp (CLI)": [py, "-m", "clts.cli", "mp", str(src), "-m", "64", "-o",
                          str(tmp / "cli.nc"), "--device", device, "--no-progress",
                          "--overwrite"],
        "python -c (same work: pandas, clts, xarray)": [
            py, "-c", PY.format(src=str(src), out=str(tmp / "py.nc"), device=device)],
        "python -c (numpy in and out)": [
            py, "-c", PY_MIN.format(src=str(src), out=str(tmp / "py.npz"), device=device)],
        "clts --help": [py, "-m", "clts.cli", "--help"],
    }
    times = {k: [] for k in cmds}
    for i in range(repeats + 1):           # the first round fills the kernel cache
        for k, c in cmds.items():
            (tmp / "py.nc").unlink(missing_ok=True)
            t = _timed(c)
            if i:
                times[k].append(t)
    med = {k: [statistics.median(x) for x in zip(*v)] for k, v in times.items()}
    rows = ["| command | median wall (s) | median CPU (s) | runs (wall) |", "|---|---:|---:|---|"]
    rows += [f"| {k} | {med[k][0]:.2f} | {med[k][1]:.2f} | "
             f"{' '.join(f'{w:.2f}' for w, _ in times[k])} |" for k in cmds]
    a, b = med["clts mp (CLI)"], med["python -c (same work: pandas, clts, xarray)"]
    rows.append(f"| CLI - same work | {a[0] - b[0]:+.2f} | {a[1] - b[1]:+.2f} | |")
    print("\n".join(rows), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="pocl")
    ap.add_argument("--only", default="builds,first,cli")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--first-repeats", type=int, default=3)
    ap.add_argument("--calls", default=",".join(CALLS), help="first calls to time")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    parts = [f"# Start-up costs on {args.device}", "",
             f"`python bench/startup.py {' '.join(sys.argv[1:])}`, load {load:.1f} "
             f"({os.cpu_count()} CPUs)", ""]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if "builds" in args.only:
            parts += ["## Builds at once and one by one (one process, alternately)", ""]
            parts += builds(args.device, args.first_repeats, args.calls.split(",")) + [""]
        if "first" in args.only:
            parts += ["## First calls", ""] + first_calls(args.device, tmp, args.first_repeats,
                                                       args.calls.split(",")) + [""]
        if "cli" in args.only:
            parts += [f"## `clts mp` on {args.n} rows against a fresh Python process", ""]
            parts += cli(args.device, tmp, args.n, args.repeats) + [""]
    name = f"startup-{args.device.split()[0].lower()}"
    if set(args.calls.split(",")) != set(CALLS):       # a subset: a file of its own
        name += "-" + re.sub(r"[^a-z0-9]+", "-", args.calls.lower()).strip("-")
    out = ROOT / "bench" / "results" / f"{name}.md"
    out.write_text("\n".join(parts))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
