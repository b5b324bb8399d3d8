"""Offline GPU compiles: every kernel the public functions render for a GPU, compiled with the
GPU vendors' own back ends (``clts.tune.backends``: NVIDIA ptxas sm_80 / sm_90, LLVM AMDGPU
gfx908 / gfx90a, Intel IGC pvc / dg2 / tgllp, and clang's spir64 as a portable check), judged by
the resource gate (``clts.tune.gate``) and tabulated in ``docs/gpu-resources.md``.

Sources are collected on every recorded GPU description (``clts/devices/emulated``, see
``clts.runtime.emulation``) by running, on pocl under that GPU's limits and profile: ``auto`` on
realistic shapes (``clts.tune.workloads``), every code version forced with the profile's values
on tiny inputs, and a sample of the tuner's candidates. Every launch's work-group and local
memory is recorded (for the occupancy model), each built program's rendered source is kept and
compiled for the targets of the GPUs it was rendered for:

    python -m clts.tune.offline [--emulate a100,mi100,...] [--scale 0.25] [--report FILE]
                                [--record] [--no-coalescing]

``--report docs/gpu-resources.md`` writes the table, ``--record`` the per-kernel figures the
Plans read (``clts/devices/resources/<target>.yaml``); the exit status is 1 when the gate fails.
Needs ``clang-16`` and ``libclc-16``; ``scripts/gpu-toolchain.sh`` fetches ptxas and ocloc. A
compile proves that a source is valid for the target and shows its resource use; correctness
under the GPU's limits comes from the emulated runs, speed only from the device itself.
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import itertools
import logging
import os
import random
import sys
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .backends import (COMPILE_TIMEOUT, CompileResult, KernelUsage, TARGETS,  # noqa: F401
                       targets_of, compile_source, missing_tools, parse_remarks, static_local)
from . import backends
from .. import options

#: a kernel spilling more than this many bytes per lane of scratch on gfx908 is reported
SCRATCH_WARN = 0


# -- collecting the rendered sources -----------------------------------------------------------
def _candidates(tunable, dev, sample, rng):
    names = list(tunable.params)
    combos = [dict(zip(names, vals)) for vals in itertools.product(*tunable.params.values())]
    ok = []
    for p in combos:
        try:
            if tunable.constraint is None or tunable.constraint(p, dev):
                ok.append(p)
        except Exception:      # noqa: BLE001 - a constraint that cannot judge: skip the combo
            continue
    return ok if len(ok) <= sample else rng.sample(ok, sample)


@dataclass
class Collected:
    device: object
    sources: dict = field(default_factory=dict)     # source -> (template, params, {target: local mem})
    defaults: set = field(default_factory=set)      # sources of the profile's own values
    auto: dict = field(default_factory=dict)        # source -> {GPU}: built by auto, real shapes
    launches: dict = field(default_factory=dict)    # (source, kernel) -> {(GPU, wg, local bytes)}
    auto_launches: dict = field(default_factory=dict)  # (source, kernel) -> {GPU}: auto's own
    refused: list = field(default_factory=list)     # (label, message): plans refused pre-build
    failed: list = field(default_factory=list)      # (label, message): anything else
    coalescing: list = field(default_factory=list)  # coalescing.Coalescing of auto's launches


def _run_jobs(jobs, out, DeviceError):
    for label, fn in jobs:
        try:
            fn()
        except (ValueError, TypeError, DeviceError) as exc:
            out.refused.append((label, f"{type(exc).__name__}: {exc}"))
        except Exception as exc:   # noqa: BLE001 - reported, fails the check
            out.failed.append((label, f"{type(exc).__name__}: {exc}"))


def collect(dev, *, sample: int = 4, seed: int = 0, auto: bool = True,
            scale: float = 1.0, trace: bool = False) -> Collected:
    """Run every algorithm's workloads on ``dev`` (an emulated GPU): ``auto`` on realistic
    shapes (``workloads.auto_calls``; batch dimensions times ``scale``), every version forced
    with the profile's values on tiny inputs, in float64 (where the device has it) and float32,
    and up to ``sample`` candidates of every tuner entry; return the rendered source of every
    program built, which were ``auto``'s, and every launch's work-group and local memory.
    ``trace``: the coalescing tracer (``coalescing.Tracer``) watches ``auto``'s launches, as
    ``coalescing.trace_gpu`` would on a fresh device, without running those workloads twice."""
    from ..errors import DeviceError
    from ..runtime.devices import Device
    from .registry import load_all
    from . import workloads
    desc = dev.description
    gpu = desc["_name"]
    dev = Device(dev.info, description=desc)   # a fresh program cache: every source is built
    # (and seen) here; pocl builds them unoptimised: what is kept is the rendered source, the
    # launches and the traced addresses, none of which the optimiser changes (the same for
    # both builds, A100 collect), and LLVM's optimiser is most of pocl's cold build (A100
    # collect, cold caches, 2 cores: 573 CPU seconds optimised, 254 unoptimised)
    dev.state.build_options = ("-cl-opt-disable",)
    out = Collected(dev)
    x = workloads.tiny_inputs()
    rng = random.Random(seed)
    dtypes = [np.float64, np.float32] if dev.fp64 else [np.float32]
    real, defaults, candidates = [], [], []
    for dt in dtypes:
        if auto:
            real += workloads.auto_calls(dev, dt, scale)
        calls, candidate = workloads.forced_calls(dev, x, dt)
        defaults += calls
        if dt == dtypes[0] and not workloads.selection():
            for t in load_all(strict=True).tunables.values():
                for p in _candidates(t, dev, sample, rng):
                    candidates.append((f"{t.name} {p}",
                                       lambda s=t.section, p=p, c=candidate: c(s, p)))
    logs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for phase, jobs in (("auto", real), ("defaults", defaults), ("candidates", candidates)):
            dev.launch_log = logs[phase] = []
            tracer = None
            if trace and phase == "auto":
                from .coalescing import Tracer
                tracer = dev.state.launch_hook = Tracer(dev, gpu)
            _run_jobs(jobs, out, DeviceError)
            if tracer is not None:
                dev.state.launch_hook = None
                out.coalescing = list(tracer.seen.values())
            built = {prg.source for prg in list(dev.state.programs.values())}
            if phase == "auto":
                out.auto = {s: {gpu} for s in built}
            elif phase == "defaults":
                out.defaults = built
    dev.launch_log = None
    kernels = {i: (prg.source, name) for prg in list(dev.state.programs.values())
               for i, name in list(prg.made.items())}
    for phase in ("auto", "defaults"):
        for kernel, local_size, dynamic, static in logs[phase]:
            key = kernels.get(id(kernel))
            if key is not None:
                wg = int(np.prod(local_size)) if local_size else 0
                out.launches.setdefault(key, set()).add((gpu, wg, int(dynamic + static)))
                if phase == "auto":
                    out.auto_launches.setdefault(key, set()).add(gpu)
    targets = targets_of(desc)
    for prg in list(dev.state.programs.values()):
        out.sources.setdefault(prg.source, (prg.template, prg.params,
                                            {t: int(dev.local_mem) for t in targets}))
    return out


# -- compiling ---------------------------------------------------------------------------------
def merge(collections) -> Collected:
    """One collection of the unique sources of several (each source compiled once)."""
    out = Collected(None)
    for c in collections:
        for src, (tpl, params, limits) in c.sources.items():
            old = out.sources.setdefault(src, (tpl, params, {}))[2]
            for t, v in limits.items():
                old[t] = min(v, old.get(t, v))
        for src, gpus in c.auto.items():
            out.auto.setdefault(src, set()).update(gpus)
        for key, ls in c.launches.items():
            out.launches.setdefault(key, set()).update(ls)
        for key, gs in c.auto_launches.items():
            out.auto_launches.setdefault(key, set()).update(gs)
        out.refused += c.refused
        out.coalescing += c.coalescing
        out.defaults |= c.defaults
        out.failed += c.failed
    return out


#: this process's compiles, by (source digest, target, back-end options, tools): the gate's two
#: test modules compile the A100's and the MI100's forced versions alike, and GPUs that render
#: the same source for one target share its compile. In memory only, never on disk: a run from
#: empty caches still compiles every source once.
_COMPILED: dict = {}
#: per target: [compiles run, seconds they took, compiles served from _COMPILED] (the gate's
#: stage prints them: where its time goes)
STATS: dict = {}
#: seconds of wall per phase of this process's gate runs (``run``): collect, compile, coalescing
PHASES: dict = {}   # (the coalescing traces are part of the collect)


def _compile_key(source, target, params):
    extra = ()
    if TARGETS[target][0] == "ocloc":
        from ..runtime.programs import intel_gpu_options
        extra = intel_gpu_options(params or {})
    tools = (backends._clang_exe(), str(backends._libclc()), backends.ptxas(),
             backends.ptxas_shim(), backends.ocloc(), options.get("compile_timeout"))
    return (hashlib.sha256(source.encode()).hexdigest(), target, extra, tools)


def compile_all(collected: Collected, jobs: int | None = None, skip=()) -> list:
    """Compile every collected source for the targets of the GPUs it was rendered for (a
    source sized for one GPU's local memory need not fit another's); CompileResults. Targets
    whose back end is missing here (``ocloc``) are left out. A (source, target, options) this
    process compiled before is not compiled again (``_COMPILED``); the others run ``jobs`` at
    once (default: one per core), the slowest back ends first."""
    items = [(s, (tpl, params, limits[t]), t) for s, (tpl, params, limits)
             in collected.sources.items() for t in limits
             if backends.available(t) and t not in skip]
    keys = [_compile_key(s, t, params) for s, (_, params, _), t in items]
    todo = {}
    for key, (source, (_, params, _), target) in zip(keys, items):
        if key in _COMPILED or key in todo:
            STATS.setdefault(target, [0, 0.0, 0])[2] += 1
        else:
            todo[key] = (source, target, params)
    order = {"ocloc": 0, "ptxas": 1, "clang": 2}       # the slow back ends first: no long tail
    work = sorted(todo.items(), key=lambda kv: order[TARGETS[kv[1][1]][0]])
    with tempfile.TemporaryDirectory(prefix="clts-offline-") as tmp:
        def one(kv):
            key, (source, target, params) = kv
            t0 = time.perf_counter()
            return key, compile_source(source, target, Path(tmp), params), \
                time.perf_counter() - t0
        jobs = jobs or os.cpu_count() or 1
        with ThreadPoolExecutor(max(1, jobs)) as pool:
            for key, result, seconds in pool.map(one, work):
                _COMPILED[key] = result
                st = STATS.setdefault(key[1], [0, 0.0, 0])
                st[0] += 1
                st[1] += seconds
    out = []
    for key, (source, (template, params, limit), target) in zip(keys, items):
        ok, log, kernels = _COMPILED[key]
        out.append(CompileResult(template, params, target, ok, log, copy.deepcopy(kernels),
                                 local_mem=limit, default=source in collected.defaults,
                                 source=source,
                                 devices=tuple(sorted(collected.auto.get(source, ())))))
    return out


def stats_line() -> str:
    """This process's offline compiles per target: run (seconds), served from memory."""
    return "; ".join([f"{p} {s:.0f} s" for p, s in PHASES.items()]
                     + [f"{t}: {n} compiles {s:.0f} s, {h} repeats not compiled"
                        for t, (n, s, h) in sorted(STATS.items())])


def problems(results) -> list[str]:
    """Compile errors, and kernels whose static local memory exceeds the local memory of the
    emulated device their source was rendered for."""
    out = []
    for r in results:
        if not r.ok:
            errs = [ln for ln in r.log.splitlines() if "error" in ln][:3]
            out.append(f"{r.template} {r.target}: compile error: {' | '.join(errs)} "
                       f"(parameters {_short(r.params)})")
        for k in r.kernels:
            if k.lds > r.local_mem:
                out.append(f"{r.template} {k.name}: {k.lds} bytes of local memory > "
                           f"{r.local_mem} (parameters {_short(r.params)})")
    return out


def compiler_warnings(results) -> list[str]:
    """clang's warnings, one line per compile that had any (kernels build without warnings:
    a driver prints them on a user's first run)."""
    out = []
    for r in results:
        lines = backends.warnings_of(r.log, r.target)
        if lines:
            out.append(f"{r.template} {r.target}: {lines[0]} ({len(lines)} warnings; "
                       f"parameters {_short(r.params)})")
    return out


def _short(params) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items()))


def report(results, heavy: bool = False) -> str:
    """One line per kernel and parameter set on gfx908, worst scratch first (``heavy``: only
    kernels with scratch or more than 128 VGPRs, i.e. at most 2 waves per SIMD)."""
    rows = []
    for r in results:
        if r.target != "gfx908":
            continue
        for k in r.kernels:
            if heavy and not (k.scratch or k.vgprs > 128):
                continue
            rows.append((k.scratch, k.vgprs, r.template, k.name, k.occupancy, k.lds, r.params))
    rows.sort(key=lambda t: (-t[0], -t[1], t[2], t[3]))
    seen, lines = set(), [f"{'template':28s} {'kernel':22s} {'VGPRs':>5s} {'scratch B':>9s} "
                          f"{'waves/SIMD':>10s} {'LDS B':>6s}  parameters"]
    for scratch, vgprs, tpl, name, occ, lds, params in rows:
        key = (tpl, name, vgprs, scratch, occ, lds)
        if key in seen:
            continue
        seen.add(key)
        lines.append(f"{tpl:28s} {name:22s} {vgprs:5d} {scratch:9d} {occ:10d} {lds:6d}  "
                     f"{_short(params)[:150]}")
    return "\n".join(lines)


def spills(results, defaults_only=False, target="gfx908") -> list[tuple]:
    """(template, kernel, VGPRs, scratch bytes, parameters) of every kernel using scratch on
    ``target`` (of the sources rendered with a profile's own values only, with
    ``defaults_only``)."""
    out = []
    for r in results:
        if (defaults_only and not r.default) or r.target != target:
            continue
        for k in r.kernels:
            if k.scratch > SCRATCH_WARN:
                out.append((r.template, k.name, k.vgprs, k.scratch, r.params))
    return out


def _collect_one(name, sample, seed, scale, auto, calls=None, trace=False):
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    if calls:                   # a child process: the parent's --calls
        options.set_options(gpu_gate_calls=calls)
    from ..runtime import emulation
    col = collect(emulation.emulate(name), sample=sample, seed=seed, scale=scale, auto=auto,
                  trace=trace)
    col.device = None
    return col


def collect_all(names, *, sample=1, scale=1.0, jobs=1, auto=True, trace=False) -> list:
    """``collect`` under each emulated GPU ``names``, ``jobs`` of them at once (processes)."""
    calls = options.get("gpu_gate_calls")
    args = [(n, sample, i, scale, auto, calls, trace) for i, n in enumerate(names)]
    if jobs <= 1 or len(names) == 1:
        return [_collect_one(*a) for a in args]
    import multiprocessing as mp
    with ProcessPoolExecutor(min(jobs, len(names)), mp_context=mp.get_context("spawn")) as pool:
        return list(pool.map(_collect_one, *zip(*args)))


@dataclass
class Run:
    collected: Collected
    results: list
    table: list
    violations: list
    coalescing: list = field(default_factory=list)
    itemsize: dict = field(default_factory=dict)    # (template, kernel, target) -> bytes


def run(names=None, *, sample=1, scale=1.0, jobs=None, coalescing=True) -> Run:
    """Collect under every emulated GPU, compile with every back end here, judge (gate.py)."""
    from ..runtime import emulation
    from . import gate
    names = names or emulation.names()
    jobs = jobs or os.cpu_count() or 1
    t0 = time.perf_counter()
    # the coalescing traces ride on the collector's auto runs (one run of those workloads)
    col = merge(collect_all(names, sample=sample, scale=scale, jobs=jobs, trace=coalescing))
    t1 = time.perf_counter()
    # SPIR is a portable front-end check only: IGC compiles the Intel GPUs' sources for real
    res = compile_all(col, jobs=jobs, skip=("spir64",) if backends.available("pvc") else ())
    t2 = time.perf_counter()
    PHASES["gate collect"], PHASES["gate compile"] = t1 - t0, t2 - t1
    table = gate.rows(res, col)
    coal, sizes = [], {}
    if coalescing:
        from . import coalescing as co
        coal = col.coalescing
        sizes = co.apply(coal, table)
    return Run(col, res, table, gate.violations(table, itemsize=sizes), coal, sizes)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m clts.tune.offline", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    from ..runtime import emulation
    ap.add_argument("--emulate", default=",".join(emulation.names()),
                    help="recorded GPU descriptions to render under (comma-separated)")
    ap.add_argument("--sample", type=int, default=1, help="tuner candidates per tuner entry")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="batch size of auto's realistic shapes, as a fraction")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--keep", type=Path, help="write every collected source to this folder")
    ap.add_argument("--report", type=Path, help="write the markdown resource table here")
    ap.add_argument("--record", action="store_true",
                    help="write the per-kernel figures to clts/devices/resources/<target>.yaml")
    ap.add_argument("--no-coalescing", action="store_true", help="skip the address traces")
    ap.add_argument("--calls", default="",
                    help="only the workloads whose label starts with one of these (comma-"
                         "separated: stl, bfast, mp, mstump, tridiag, superbee, tke, trend, "
                         "mass, stumpi; sets CLTS_GPU_GATE_CALLS); no tuner candidates then")
    args = ap.parse_args(argv)
    if args.calls:
        options.set_options(gpu_gate_calls=args.calls)
    why = missing_tools()
    if why:
        print(f"offline compiles skipped: {why}", file=sys.stderr)
        return 2
    missing = backends.vendor_tools_missing()
    if missing:
        print(f"vendor back ends missing: {', '.join(missing)} (scripts/gpu-toolchain.sh); "
              "their targets stop at clang or are left out", file=sys.stderr)
    from . import gate, resources_report
    names = [n for n in args.emulate.split(",") if n]
    r = run(names, sample=args.sample, scale=args.scale, jobs=args.jobs,
            coalescing=not args.no_coalescing)
    col, res = r.collected, r.results
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        for i, (src, (tpl, _, _)) in enumerate(col.sources.items()):
            (args.keep / f"{tpl.replace('/', '__')}-{i}.cl").write_text(src)
    per = {t: sum(1 for x in res if x.target == t) for t in TARGETS}
    print(f"{len(col.sources)} unique sources ({len(col.auto)} built by auto) under "
          f"{', '.join(names)}; compiles per target: "
          f"{', '.join(f'{t}: {n}' for t, n in per.items() if n)}; "
          f"{sum(x.ok for x in res)} of {len(res)} compiled")
    if args.report:
        cmd = "python -m clts.tune.offline " + " ".join(argv if argv is not None else sys.argv[1:])
        args.report.write_text(resources_report.markdown(r.table, r.violations, r.coalescing,
                                                         cmd.strip()))
        print(f"wrote {args.report}")
    if args.record:
        for p in gate.record(r.table):
            print(f"wrote {p}")
    for label, msg in col.failed:
        print(f"FAILED {label}: {msg}")
    bad = [v for v in r.violations if v.allowed_by is None]
    seen = set()
    for v in bad:
        line = f"{v.check}: {v.row.kernel} ({v.row.template}) on {v.row.target}: {v.message}"
        if line not in seen:
            seen.add(line)
            print("GATE", line)
    every = set(names) == set(emulation.names()) and not args.calls
    for e in gate.stale(r.table, itemsize=r.itemsize) if every else []:
        print(f"STALE allow-list entry (excuses nothing now): {e['kernel']} {e['checks']}")
    return 1 if bad or col.failed else 0


if __name__ == "__main__":
    sys.exit(main())
