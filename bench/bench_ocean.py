"""Benchmark clts.ocean.tke (the pyhpc-benchmarks TKE routine) against numpy and numba.

    python bench/bench_ocean.py [--quick] [--device D] [--sizes 16,18,20,22] [--rounds R]
                                [--pyhpc DIR] [--chunks N]

Problem sizes 2^16 ... 2^22 as the benchmark defines them (nx = ny = ceil(2 size^(1/3)),
nz = ceil(size^(1/3) / 4)), its random inputs (seed 17). Every round runs, one after the other:
the numpy float64 reference routine (clts.ocean.reference.tke), a single-threaded numba version
(bench/ocean_numba.py, when numba is installed), clts with numpy arrays in and out (the whole
call: transfers, kernels, results back), clts on device arrays uploaded once (the call and a
queue.finish; the convention of pyhpc-benchmarks' GPU backends), and the device copy kernel.
Reported: medians over rounds, speed-ups as the median of the per-round ratios (the machine is
shared: its speed drifts), every kernel's time (OpenCL profiling events, median) with its GB/s
(bytes it must move, below) against the copy kernel's GB/s of the same round.
``--pyhpc DIR``: a checkout of pyhpc-benchmarks; its own numpy and numba routines are timed in
the same rounds and every output of clts is compared with theirs (np.allclose, their check).
Writes bench/results/ocean-<device slug>.md.

``--chunks N`` times large-grid splitting instead (clts/ocean/slabs.py): per size, each round
runs clts.ocean.tke and clts.ocean.superbee_fluxes with numpy arrays whole, split into N slabs
of x rows (option ``max_chunk = ceil(nx / N)``) pipelined over two buffer sets, and the same
slabs with one buffer set (each slab's upload, kernels and download one after another); ratios
are medians of per-round ratios. Writes bench/results/ocean-chunks-<device slug>.md.

Bytes per cell (float64, T = 3 time levels): tke_systems reads kappaM, mxl, forc and the
tke block (48) and writes a, b, c, d, tke[tau] (40): 88; the solver reads a, b, c, d and writes
x: 40; tke_step reads tke, dtke, u, v, w (120), maskU, maskV, maskW (24), x and tke[tau] (16)
and writes tke, dtke (48): 208; with stored advection the superbee kernel reads tke[tau],
u, v, w, maskW (88) and writes three fluxes (24): 112, and tke_step reads the fluxes (24)
instead of u, v, w (72): 160.
"""
from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import copy_kernel, markdown_table, write_result  # noqa: E402

import clts  # noqa: E402
from clts.ocean import reference  # noqa: E402
from clts.ocean.inputs import benchmark_inputs, grid_shape  # noqa: E402
from clts.runtime import get_device, timing  # noqa: E402

try:
    from ocean_numba import tke_numba  # noqa: E402
except ImportError:  # pragma: no cover
    tke_numba = None

BYTES = {"tke_systems": 88, "solve": 40, "superbee": 112, "tke_step": 208,
         "tke_step (stored)": 160}


def load_pyhpc(path):
    """The pyhpc-benchmarks TKE routines (numpy, numba when importable) from a checkout."""
    base = Path(path) / "benchmarks" / "turbulent_kinetic_energy"
    out = {}
    for name in ("numpy", "numba"):
        f = base / f"tke_{name}.py"
        if not f.exists():
            continue
        spec = importlib.util.spec_from_file_location(f"pyhpc_tke_{name}", f)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod     # numba's cache finds the module's globals by name
        try:
            spec.loader.exec_module(mod)
        except ImportError:
            continue
        out[f"pyhpc {name}"] = mod.integrate_tke
    return out


def kernel_names(n_events, advection):
    names = ["tke_systems"] + ["solve"] * (n_events - (3 if advection == "stored" else 2))
    if advection == "stored":
        names.append("superbee")
    names.append("tke_step" if advection == "inline" else "tke_step (stored)")
    return names


def run_size(dev, size, rounds, pyhpc, params):
    import pyopencl.array as cla
    x = benchmark_inputs(size)
    nx, ny, nz = grid_shape(size)
    cells = nx * ny * nz
    q = dev.queue
    dx = {k: cla.to_device(q, np.ascontiguousarray(v.astype(np.int32) if k == "kbot" else v))
          for k, v in x.items()}
    ref = reference.tke(*x.values())
    advection = clts.ocean.make_tke_plan(dev, clts.ocean.Problem(), **params).advection

    # correctness in the same run: clts (both ways) against the reference, pyhpc against clts
    out_np = clts.ocean.tke(*x.values(), device=dev, **params)
    out_dev = [o.get() for o in clts.ocean.tke(*dx.values(), device=dev, **params)]
    worst = max(float(np.max(np.abs(o - r) / np.maximum(np.abs(r), 1e-300)))
                for outs in (out_np, out_dev) for o, r in zip(outs, ref))
    checks = {}
    for name, fn in pyhpc.items():
        theirs = fn(*[v.copy() for v in x.values()])
        checks[name] = all(np.allclose(o, t) for o, t in zip(out_np, theirs))

    copy_run, copy_bytes = copy_kernel(dev)
    contenders = {"numpy reference": lambda: reference.tke(*x.values())}
    if tke_numba is not None:
        tke_numba(*x.values())                              # compile / load the cache
        contenders["numba (1 thread)"] = lambda: tke_numba(*x.values())
    for name, fn in pyhpc.items():
        contenders[name] = (lambda f=fn: f(*[v.copy() for v in x.values()]))

    def clts_numpy():
        clts.ocean.tke(*x.values(), device=dev, **params)

    def clts_device():
        clts.ocean.tke(*dx.values(), device=dev, **params)
        q.finish()
    contenders["clts numpy in/out"] = clts_numpy
    contenders["clts device arrays"] = clts_device
    clts_numpy()
    clts_device()

    times = {k: [] for k in contenders}
    kern, copy_gbs = [], []
    for _ in range(rounds):
        for name, fn in contenders.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
        with timing(dev) as t:
            clts.ocean.tke(*dx.values(), device=dev, **params)
        kern.append([(e.profile.end - e.profile.start) * 1e-9 for e in t.events])
        with timing(dev) as t:
            copy_run()
        copy_gbs.append(copy_bytes / t.kernel_seconds / 1e9)

    med = {k: statistics.median(v) for k, v in times.items()}

    def speedup(base, mine):
        return statistics.median(b / m for b, m in zip(times[base], times[mine]))
    row = {"size": f"2^{int(np.log2(size))}", "grid": f"{nx}x{ny}x{nz}",
           **{f"{k} ms": v * 1e3 for k, v in med.items()},
           "kernels ms": statistics.median(sum(k) for k in kern) * 1e3,
           "max rel err vs ref": worst}
    for base in [k for k in contenders if not k.startswith("clts")]:
        for mine in ("clts numpy in/out", "clts device arrays"):
            row[f"x {base} ({mine.split()[1]})"] = speedup(base, mine)
    for name, ok in checks.items():
        row[f"allclose {name}"] = "yes" if ok else "NO"

    names = kernel_names(len(kern[0]), advection)
    per = {}
    for rnd, cg in zip(kern, copy_gbs):
        for name, secs in zip(names, rnd):
            per.setdefault(name, []).append(secs)
    krows = []
    for name in dict.fromkeys(names):
        n = names.count(name)            # the solver's events of one round are summed
        secs_round = [sum(per[name][i * n:(i + 1) * n]) for i in range(rounds)]
        gbs = [BYTES[name] * cells / s / 1e9 for s in secs_round]
        krows.append({"size": row["size"], "kernel": name,
                      "ms": statistics.median(secs_round) * 1e3,
                      "GB/s": statistics.median(gbs),
                      "% copy": statistics.median(g / c * 100 for g, c in zip(gbs, copy_gbs)),
                      "copy GB/s": statistics.median(copy_gbs)})
    return row, krows


def run_chunks(dev, size, rounds, nchunks, params):
    """Whole grid against N slabs (pipelined, and one after another) in the same rounds."""

    from clts.ocean import slabs
    x = benchmark_inputs(size)
    nx, ny, nz = grid_shape(size)
    cap = -(-nx // nchunks)
    sb = (x["tke"][..., 0], x["u"][..., 0], x["v"][..., 0], x["w"][..., 0], x["maskW"],
          x["dxt"], x["dyt"], x["dzw"], x["cost"], x["cosu"], 1.0)
    calls = {"tke": lambda: clts.ocean.tke(*x.values(), device=dev, **params),
             "superbee": lambda: clts.ocean.superbee_fluxes(*sb, device=dev)}
    modes = {"whole": (None, slabs.SLOTS), "slabs": (cap, slabs.SLOTS), "serial": (cap, 1)}
    saved = (clts.get_options()["max_chunk"], slabs.SLOTS)

    def run(name, mode):
        cap, slots = modes[mode]
        clts.set_options(max_chunk=cap)
        slabs.SLOTS = slots
        t0 = time.perf_counter()
        out = calls[name]()
        return time.perf_counter() - t0, out

    rows = []
    try:
        for name in calls:
            want = run(name, "whole")[1]
            for mode in ("slabs", "serial"):                  # the bits, in the same run
                same = all(np.array_equal(a, b, equal_nan=True)
                           for a, b in zip(run(name, mode)[1], want))
                if not same:
                    raise SystemExit(f"{name}: {mode} differs from the whole grid")
            times = {m: [] for m in modes}
            for _ in range(rounds):
                for mode in modes:
                    times[mode].append(run(name, mode)[0])
            med = {m: statistics.median(v) for m, v in times.items()}
            ratio = lambda a, b: statistics.median(p / q for p, q in zip(times[a], times[b]))  # noqa: E731
            rows.append({"routine": name, "size": f"2^{int(np.log2(size))}",
                         "grid": f"{nx}x{ny}x{nz}", "slabs": f"{nchunks} x {cap} rows",
                         **{f"{m} ms": v * 1e3 for m, v in med.items()},
                         "slabs / whole": ratio("slabs", "whole"),
                         "serial / slabs": ratio("serial", "slabs"), "bits": "identical"})
    finally:
        clts.set_options(max_chunk=saved[0])
        slabs.SLOTS = saved[1]
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--quick", action="store_true", help="sizes 2^16 and 2^18, 3 rounds")
    ap.add_argument("--sizes", default=None, help="comma-separated log2 sizes (16,18,20,22)")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--pyhpc", default=None, help="a pyhpc-benchmarks checkout to compare with")
    ap.add_argument("--param", action="append", default=[],
                    help="force a tke parameter, e.g. --param lanes=8 (repeatable)")
    ap.add_argument("--chunks", type=int, default=None,
                    help="time large-grid splitting into this many slabs instead (see above)")
    args = ap.parse_args(argv)
    dev = get_device(args.device)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else (
        [16, 18] if args.quick else [16, 18, 20, 22])
    rounds = args.rounds or (3 if args.quick else 7)
    params = {}
    for p in args.param:
        k, v = p.split("=", 1)
        params[k] = int(v) if v.lstrip("-").isdigit() else v
    if args.chunks:
        rows = []
        for s in ([int(s) for s in args.sizes.split(",")] if args.sizes else [20]):
            rows += run_chunks(dev, 1 << s, rounds, args.chunks, params)
            print(markdown_table(rows[-2:]), flush=True)
        notes = (f"numpy arrays in and out, float64, the benchmark's inputs; {rounds} rounds, "
                 "medians; ratios are medians of per-round ratios. `whole`: one piece (on CPU "
                 "devices with `transfer: host_ptr` the numpy memory is used in place); `slabs`:"
                 " the grid in slabs of x rows with 2-row halos (input slabs used in place "
                 "with `host_ptr`, else copied; outputs copied out), the next slab's upload "
                 "overlapping this one's kernels; `serial`: the same slabs one after another "
                 f"(one buffer set). transfer: {clts.ocean.make_tke_plan(dev, clts.ocean.Problem(), **params).transfer}.\n")
        path = write_result("ocean-chunks", dev, "clts.ocean on grids split into slabs", rows,
                            notes)
        print(notes)
        print(f"wrote {path}")
        return
    pyhpc = load_pyhpc(args.pyhpc) if args.pyhpc else {}
    rows, krows = [], []
    for s in sizes:
        r, k = run_size(dev, 1 << s, rounds if s < 22 else max(3, rounds // 2), pyhpc, params)
        rows.append(r)
        krows += k
        print(markdown_table([r]), flush=True)
    plan = clts.ocean.make_tke_plan(dev, clts.ocean.Problem(), **params)
    notes = (f"plan: lanes {plan.lanes}, wg {plan.wg}, advection {plan.advection}, transfer "
             f"{plan.transfer}; float64; {rounds} rounds (2^22: fewer).\n\n"
             "`x A (numpy)` / `x A (device)`: A's time over clts's (numpy arrays in and out / "
             "device arrays), median of per-round ratios.\n\n## Kernels\n\n"
             + markdown_table(krows))
    path = write_result("ocean", dev, "clts.ocean.tke: the pyhpc-benchmarks TKE routine", rows,
                        notes)
    print(notes)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
