"""Offline GPU compiles: every kernel the public functions render for a GPU, compiled with clang
for AMD (amdgcn gfx908), NVIDIA (nvptx64 sm_80) and Intel (spir64), with a resource report.

Sources are collected by running tiny workloads of every algorithm, every code version forced,
with the profile defaults and with a sample of the tuner's candidates, on an emulated GPU (see
``clts.runtime.emulation``): the Plans decide under that GPU's limits and profile, the programs
are built and run on pocl, and each built program's rendered source is kept. Each source is then
compiled as OpenCL C 1.2 (the version NVIDIA's driver accepts) for the three targets:

    python -m clts.tune.offline [--emulate a100,mi100,...] [--sample N] [--keep DIR]

prints one line per kernel on gfx908 (VGPRs, scratch bytes per lane, occupancy in waves per
SIMD, LDS bytes) and every compile error or local-memory excess. Needs Debian's ``clang-16`` and
``libclc-16`` (``scripts/setup.sh test`` installs them). A compile proves that a source is valid
for the target and shows its resource use; correctness under the GPU's limits comes from the
emulated runs, speed only from the device itself.
"""
from __future__ import annotations

import argparse
import itertools
import logging
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import options


def _clang() -> str:
    """The compiler (option ``clang``, ``CLTS_CLANG``)."""
    return options.get("clang")


def _libclc() -> Path:
    """libclc's bitcode directory (option ``libclc``, ``CLTS_LIBCLC``)."""
    return Path(options.get("libclc"))
#: target name -> (triple, cpu flag, libclc bitcode or None, output kind)
TARGETS = {
    "gfx908": ("amdgcn-amd-amdhsa", "-mcpu=gfx908", "amdgcn--amdhsa.bc"),
    "sm_80": ("nvptx64-nvidia-nvcl", "-march=sm_80", "nvptx64--nvidiacl.bc"),
    "spir64": ("spir64", None, None),
}
#: what the real drivers declare (clang's nvptx target does not declare int64 atomics)
EXTENSIONS = "+cl_khr_fp64,+cl_khr_int64_base_atomics,+cl_khr_int64_extended_atomics"
#: a kernel spilling more than this many bytes per lane of scratch on gfx908 is reported
SCRATCH_WARN = 0


def missing_tools() -> str | None:
    """Why the offline compiles cannot run here, or None."""
    if shutil.which(_clang()) is None:
        return f"{_clang()} not found (apt-get install clang-16 libclc-16)"
    for name in ("amdgcn--amdhsa.bc", "nvptx64--nvidiacl.bc"):
        if not (_libclc() / name).is_file():
            return f"{_libclc() / name} not found (apt-get install libclc-16)"
    return None


# -- collecting the rendered sources -----------------------------------------------------------
def _tiny_inputs():
    rng = np.random.default_rng(11)
    t = np.arange(96)
    y = np.sin(2 * np.pi * t / 12)[None] + rng.normal(size=(3, 96))
    y[1, 5:9] = np.nan
    a, c, d = (rng.random((12, 40)) for _ in range(3))
    b = 3 + rng.random((12, 40))
    T = np.cumsum(rng.standard_normal(200))
    N, M = 60, 16
    tb = np.arange(N) * 16.0
    cube = 3 + np.sin(2 * np.pi * tb[:, None] / 365) + 0.3 * rng.standard_normal((N, M))
    cube[rng.random((N, M)) < 0.2] = np.nan
    return dict(y=y, tri=(a, b, c, d), T=T, cube=cube, tb=tb)


_TRIDIAG = {"thomas": "thomas", "coalesced": "thomas-coalesced", "unrolled": "thomas-unrolled",
            "pcr": "pcr", "flat": "flat"}


def _calls(dev, x, dt):
    """(label, callable) of every algorithm and code version with the profile's values, and
    ``call(section, params)`` running one tuner candidate."""
    import clts
    a, b, c, d = (v.astype(dt) for v in x["tri"])
    y, T, cube = x["y"].astype(dt), x["T"], x["cube"].astype(dt)
    prec = "double" if dt == np.float64 else "single"

    def stl(version, **params):
        return clts.stl(y, 12, seasonal_jump=2, trend_jump=3, robust=True, outer_iter=1,
                        device=dev, version=version, loess_params=params or None)

    def tri(method, layout="natural", **params):
        if layout == "interleaved":
            return clts.solve_tridiagonal(a.T, b.T, c.T, d.T, axis=0, version=method,
                                          device=dev, **params)
        return clts.solve_tridiagonal(a, b, c, d, version=method, device=dev, **params)

    def mp(k=1, **params):
        return clts.matrix_profile(T, 10, k=k, device=dev, precision=prec, progress=False,
                                   **params)

    def bfast(version, history="all", **params):
        return clts.bfast_monitor(cube, x["tb"], x["tb"][40], device=dev, version=version,
                                  history=history, progress_bar=False, **params)

    def breaks(**params):
        return clts.bfast_breaks(cube, x["tb"], order=1, h=8, breaks=3, dtype=dt, device=dev,
                                 magnitudes=False, progress=False, **params)

    calls = [(f"stl {v}", lambda v=v: stl(v)) for v in ("auto", "outer", "intragroup", "flat")]
    calls += [(f"tridiag {m} {l}", lambda m=m, l=l: tri(m, l))
              for m in ("auto",) + tuple(_TRIDIAG.values()) for l in ("natural", "interleaved")]
    calls += [(f"mp k={k} {kw}", lambda k=k, kw=kw: mp(k, **kw)) for k in (1, 3)
              for kw in ({}, {"store": "local", "topk_store": "local"},
                         {"store": "private", "topk_store": "private"}, {"merge": "partial"})]
    calls += [(f"bfast {v} {h}", lambda v=v, h=h: bfast(v, h)) for v in ("auto", "fused", "multi")
              for h in ("all", "ROC")]
    calls += [("bfast BP", lambda: bfast("auto", "BP")), ("bfast_breaks", breaks)]

    def trend(variant="original", **params):
        return clts.trend_test(y, variant=variant, period=12 if variant == "seasonal" else None,
                               device=dev, **params)
    calls += [(f"trend {v} {m}", lambda v=v, m=m: trend(v, median=m))
              for v in ("original", "hamed_rao", "yue_wang", "seasonal")
              for m in ("select", "sort")]

    def mass(normalize=True, p=2.0, **params):
        return clts.mass(T[5:15], T[None].repeat(2, 0), normalize=normalize, p=p, device=dev,
                         precision=prec, progress=False, **params)

    calls += [(f"mass normalize={z} p={p}", lambda z=z, p=p: mass(z, p))
              for z, p in ((True, 2.0), (False, 2.0), (False, 1.0), (False, 3.0),
                           (False, float("inf")))]

    def candidate(section, params):
        algo, _, sub = section.partition(".")
        if algo == "stl":
            return stl(sub, **params)
        if algo == "tridiag":
            tri(_TRIDIAG[sub], "natural", **params)
            return tri(_TRIDIAG[sub], "interleaved", **params)
        if section == "mp.mass":
            mass(True, 2.0, **params)
            return mass(False, 3.0, **params)
        if algo == "mp":
            return mp(3 if "topk_store" in params else 1, **params)
        if algo == "trend":
            return trend(**params)
        if algo == "bfast":
            if sub == "roc":
                return bfast("auto", "ROC", roc_wg=params["wg"])
            if sub == "breakpoints":
                return breaks(**params)
            return bfast(sub, **params)
        raise ValueError(f"no tiny workload for tuner section {section!r}")
    return calls, candidate


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
    refused: list = field(default_factory=list)     # (label, message): plans refused pre-build
    failed: list = field(default_factory=list)      # (label, message): anything else


def collect(dev, *, sample: int = 4, seed: int = 0) -> Collected:
    """Run every algorithm's tiny workloads on ``dev`` (an emulated GPU): every version with the
    profile's values in float64 (where the device has it) and float32, and up to ``sample``
    candidates of every tuner entry; return the rendered source of every program built."""
    from ..errors import DeviceError
    from ..runtime.devices import Device
    from .registry import load_all
    dev = Device(dev.info, description=dev.description)   # a fresh program cache: every
    # source is built (and seen) here
    out = Collected(dev)
    x = _tiny_inputs()
    rng = random.Random(seed)
    dtypes = [np.float64, np.float32] if dev.fp64 else [np.float32]
    defaults, candidates = [], []
    for dt in dtypes:
        calls, candidate = _calls(dev, x, dt)
        defaults += calls
        if dt == dtypes[0]:
            for t in load_all(strict=True).tunables.values():
                for p in _candidates(t, dev, sample, rng):
                    candidates.append((f"{t.name} {p}",
                                       lambda s=t.section, p=p, c=candidate: c(s, p)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for jobs in (defaults, candidates):
            for label, fn in jobs:
                try:
                    fn()
                except (ValueError, TypeError, DeviceError) as exc:
                    out.refused.append((label, f"{type(exc).__name__}: {exc}"))
                except Exception as exc:   # noqa: BLE001 - reported, fails the check
                    out.failed.append((label, f"{type(exc).__name__}: {exc}"))
            if jobs is defaults:
                out.defaults = {prg.source for prg in list(dev.state.programs.values())}
    for prg in list(dev.state.programs.values()):
        target = _target_of(dev)
        out.sources.setdefault(prg.source, (prg.template, prg.params, {target: int(dev.local_mem)}))
    return out


def _target_of(dev) -> str:
    triple = (getattr(dev, "description", None) or {}).get("offline_target", {}).get("triple")
    for name, (t, _, _) in TARGETS.items():
        if t == triple:
            return name
    raise ValueError(f"device {dev} names no offline target (amdgcn, nvptx64 or spir64)")


# -- compiling ---------------------------------------------------------------------------------
@dataclass
class KernelUsage:
    name: str
    vgprs: int = 0
    sgprs: int = 0
    scratch: int = 0
    occupancy: int = 0
    lds: int = 0


@dataclass
class CompileResult:
    template: str
    params: dict
    target: str
    ok: bool
    log: str = ""
    kernels: list = field(default_factory=list)    # KernelUsage (gfx908 only)
    local_mem: int = 0                              # the emulated device's local memory
    default: bool = True                            # rendered with a profile's own values


_REMARK = re.compile(r"remark:\s+(?:Function Name: (\S+)|\s*([A-Za-z ]+?)(?: \[[^\]]*\])?: (\d+))")


def parse_remarks(text: str) -> list[KernelUsage]:
    """The per-kernel figures of clang's ``-Rpass-analysis=kernel-resource-usage`` remarks."""
    out, cur = [], None
    keys = {"VGPRs": "vgprs", "SGPRs": "sgprs", "ScratchSize": "scratch",
            "Occupancy": "occupancy", "LDS Size": "lds"}
    for m in _REMARK.finditer(text):
        if m.group(1):
            cur = KernelUsage(m.group(1))
            out.append(cur)
        elif cur is not None:
            k = keys.get(m.group(2).strip())
            if k:
                setattr(cur, k, int(m.group(3)))
    return out


#: seconds one compile may take; beyond it the source is reported as too slow to compile
COMPILE_TIMEOUT = 120


def compile_source(source: str, target: str, workdir: Path) -> tuple[bool, str, str]:
    """(compiled, clang's messages, the PTX / LLVM / GCN assembly)."""
    triple, cpu, clc = TARGETS[target]
    src = workdir / f"k{abs(hash((source, target)))}.cl"
    src.write_text(source)
    cmd = [_clang(), "-x", "cl", "-cl-std=CL1.2", "-Xclang", "-finclude-default-header",
           "-Xclang", f"-cl-ext={EXTENSIONS}", "-nogpulib", "-O2", "-S",
           "-Wno-linker-warnings", "-target", triple]
    if cpu:
        cmd.append(cpu)
    if clc:
        cmd += ["-Xclang", "-mlink-builtin-bitcode", "-Xclang", str(_libclc() / clc)]
    if target == "gfx908":
        cmd.append("-Rpass-analysis=kernel-resource-usage")
    if target == "spir64":
        cmd.append("-emit-llvm")
    out = src.with_suffix(".out")
    cmd += [str(src), "-o", str(out)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return False, f"error: compile timed out after {COMPILE_TIMEOUT} s", ""
    asm = out.read_text(errors="replace") if p.returncode == 0 and out.exists() else ""
    for f in (src, out):
        f.unlink(missing_ok=True)
    return p.returncode == 0, p.stderr, asm


def merge(collections) -> Collected:
    """One collection of the unique sources of several (each source compiled once)."""
    out = Collected(None)
    for c in collections:
        for src, (tpl, params, limits) in c.sources.items():
            old = out.sources.setdefault(src, (tpl, params, {}))[2]
            for t, v in limits.items():
                old[t] = min(v, old.get(t, v))
        out.refused += c.refused
        out.defaults |= c.defaults
        out.failed += c.failed
    return out


_PTX_SHARED = re.compile(r"\.shared\s+\.align\s+\d+\s+\.b8\s+(\w+?)_\$_\w+\[(\d+)\]")
_LL_LOCAL = re.compile(r"^@(\w+)\.[\w.]+ = .*?addrspace\(3\) global (.+?) (?:undef|zeroinitializer|poison)",
                       re.M)
_LL_SIZES = {"double": 8, "float": 4, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "half": 2,
             "ptr": 8}


def _ll_size(t: str) -> int:
    t = t.strip()
    m = re.fullmatch(r"\[(\d+) x (.+)\]", t) or re.fullmatch(r"<(\d+) x (.+)>", t)
    if m:
        return int(m.group(1)) * _ll_size(m.group(2))
    return _LL_SIZES.get(t, 8)


def static_local(asm: str, target: str) -> dict:
    """Bytes of statically declared local memory per kernel, from PTX or LLVM IR."""
    out: dict = {}
    if target == "sm_80":
        for name, size in _PTX_SHARED.findall(asm):
            out[name] = out.get(name, 0) + int(size)
    elif target == "spir64":
        for name, t in _LL_LOCAL.findall(asm):
            out[name] = out.get(name, 0) + _ll_size(t)
    return out


def compile_all(collected: Collected, jobs: int = 2) -> list:
    """Compile every collected source for the targets of the GPUs it was rendered for (a
    source sized for one GPU's local memory need not fit another's); CompileResults."""
    items = [(s, (tpl, params, limits[t]), t) for s, (tpl, params, limits)
             in collected.sources.items() for t in limits]
    with tempfile.TemporaryDirectory(prefix="clts-offline-") as tmp:
        def one(item):
            source, (template, params, limit), target = item
            ok, log, asm = compile_source(source, target, Path(tmp))
            r = CompileResult(template, params, target, ok, log, local_mem=limit,
                              default=source in collected.defaults)
            if ok and target == "gfx908":
                r.kernels = parse_remarks(log)
            elif ok:
                r.kernels = [KernelUsage(k, lds=v) for k, v in static_local(asm, target).items()]
            return r
        with ThreadPoolExecutor(max(1, jobs)) as pool:
            return list(pool.map(one, items))


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
        lines = [ln.split("warning:", 1)[1].strip() for ln in r.log.splitlines()
                 if "warning:" in ln]
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


def spills(results, defaults_only=False) -> list[tuple]:
    """(template, kernel, VGPRs, scratch bytes, parameters) of every kernel using scratch (of
    the sources rendered with a profile's own values only, with ``defaults_only``)."""
    out = []
    for r in results:
        if defaults_only and not r.default:
            continue
        for k in r.kernels:
            if k.scratch > SCRATCH_WARN:
                out.append((r.template, k.name, k.vgprs, k.scratch, r.params))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m clts.tune.offline", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    from ..runtime import emulation
    ap.add_argument("--emulate", default=",".join(emulation.names()),
                    help="recorded GPU descriptions to render under (comma-separated)")
    ap.add_argument("--sample", type=int, default=4, help="tuner candidates per tuner entry")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--keep", type=Path, help="write every collected source to this folder")
    args = ap.parse_args(argv)
    why = missing_tools()
    if why:
        print(f"offline compiles skipped: {why}", file=sys.stderr)
        return 2
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    cols = []
    for name in [n for n in args.emulate.split(",") if n]:
        dev = emulation.emulate(name)
        col = collect(dev, sample=args.sample)
        cols.append(col)
        print(f"{name} ({dev.name}; profile "
              f"{', '.join(p.name for p in dev.profile.files)}): {len(col.sources)} sources, "
              f"{len(col.refused)} plans refused before any build")
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            for i, (src, (tpl, _, _)) in enumerate(col.sources.items()):
                (args.keep / f"{name}-{tpl.replace('/', '__')}-{i}.cl").write_text(src)
    col = merge(cols)
    res = compile_all(col, jobs=args.jobs)
    probs = problems(res) + [f"{l}: {m}" for l, m in col.failed]
    per = {t: sum(1 for r in res if r.target == t) for t in TARGETS}
    print(f"{len(col.sources)} unique sources, compiled for the GPUs they were rendered for "
          f"({', '.join(f'{t}: {n}' for t, n in per.items())}): "
          f"{sum(r.ok for r in res)} of {len(res)} compiled")
    print(report([r for r in res if r.target == "gfx908"]))
    for p in probs:
        print("PROBLEM:", p)
    bad = len(probs)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
