"""The GPU resource gate: every compiled kernel judged against its GPU's limits.

``rows(results, collected)`` turns the offline compiles (``clts.tune.offline``) into one row per
kernel, target and launch geometry (registers, spills, scratch, local memory, work-group,
theoretical occupancy from ``clts.runtime.occupancy`` and its limiter). ``violations(rows)``
lists what fails, each with the allow-list entry that excuses it, if any:

- ``compile``: a compile error (never excused); ``compile_time``: a back end that does not
  finish within ``backends.COMPILE_TIMEOUT`` (excusable: a driver would take as long);
- ``local``: local memory above the GPU's limit (never excused);
- ``spill``: spills or scratch (NVIDIA stack frame, AMD scratch, Intel spill / private memory)
  in a kernel ``auto`` builds on realistic shapes or a forced version with the profile's values
  (tuner candidates may spill: the tuner measures them and a spilling one loses);
- ``occupancy``: below ``MIN_OCCUPANCY`` of the warps / waves / hardware threads per SM / CU /
  Xe-core, for kernels ``auto`` builds (Intel: at the SIMD width and GRF mode IGC picked, with
  the barrier registers bounding groups that synchronise, ``clts.runtime.occupancy``);
- ``coalescing``: more 128-byte segments per warp access than ``MAX_SEGMENTS`` allows, for
  kernels ``auto`` builds (``clts.tune.coalescing``);
- ``untraced``: a kernel ``auto`` launched whose global accesses the coalescing tracer did not
  see at all (no site found or reached, its instrumented copy did not build, or no traced
  launch): its coalescing is unknown, not perfect (``coalescing.apply`` marks the row).

The allow-list, ``clts/devices/resources/gpu-allowlist.yaml``, names kernel, check, targets (optional) and
template parameters (optional), with a reason and a measured or modelled argument; an entry that
excuses nothing is itself reported (``stale``) so fixed kernels leave the list.
``record(rows)`` writes the per-kernel figures the Plans read at run time
(``clts/devices/resources/<target>.yaml``, see ``clts.runtime.occupancy.recorded``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .. import options
from ..runtime import occupancy as occ

MIN_OCCUPANCY = occ.MIN_FRACTION
#: most 128-byte segments per warp access, by element size in bytes
MAX_SEGMENTS = {8: 4, 4: 2}
CHECKS = ("compile", "local", "spill", "occupancy", "coalescing", "compile_time", "untraced")


def max_segments(size: int) -> int:
    """The most 128-byte segments a warp access of ``size``-byte elements may touch:
    ``MAX_SEGMENTS`` (4 for other sizes), and for vector accesses (``vloadN`` / ``vstoreN``,
    N elements a lane) twice the segments 32 lanes' contiguous vectors fill: a warp's
    double8 loads move 2 KB, 16 segments at best."""
    return max(MAX_SEGMENTS.get(size, 4), 2 * -(-32 * size // 128))


def allowlist_path() -> Path:
    return Path(__file__).resolve().parents[1] / "devices" / "resources" / "gpu-allowlist.yaml"


def load_allowlist(path: Path | None = None) -> list[dict]:
    path = path or allowlist_path()
    if not path.is_file():
        return []
    with open(path, encoding="utf-8") as f:
        data = yaml.safe_load(f) or {}
    out = []
    for i, e in enumerate(data.get("allow", [])):
        missing = [k for k in ("kernel", "checks", "reason", "argument") if not e.get(k)]
        if missing:
            raise ValueError(f"{path}: entry {i} ({e.get('kernel')}) lacks {', '.join(missing)}")
        bad = set(e["checks"]) - set(CHECKS[2:])
        if bad:
            raise ValueError(f"{path}: entry {i} ({e['kernel']}): unknown or unexcusable "
                             f"check(s) {sorted(bad)}")
        out.append(e)
    return out


@dataclass
class Row:
    template: str
    kernel: str
    target: str
    params: dict
    auto: bool                 # built by ``auto`` on realistic shapes
    default: bool              # rendered with a profile's own values (auto or forced)
    ok: bool = True
    regs: int = 0
    sgprs: int = 0
    spill: int = 0
    scratch: int = 0
    lds: int = 0               # static (compiler) or launch (static + arguments), the larger
    local_limit: int = 0
    wg: int = 0                # 0: the driver picks (modelled as one warp / wave)
    simd: int = 0
    grf: int = 0
    barrier: bool = False      # Intel: a work-group barrier in IGC's code
    occupancy: object = None   # occupancy.Occupancy
    gpus: tuple = ()
    segments: float | None = None
    log: str = ""
    source: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def key(self):
        return (self.template, self.kernel, self.target)


def _regs(k, target: str) -> int:
    if target == "gfx90a":
        return -(-k.vgprs // 4) * 4 + k.agprs
    if target == "gfx908":
        return max(k.vgprs, k.agprs)
    return k.vgprs


def _targets_of_gpu(gpu, cache={}):      # noqa: B006 - a per-process memo
    """The offline targets of the recorded GPU ``gpu`` (None where it is not one)."""
    if gpu not in cache:
        from ..runtime import descriptions
        from . import backends
        try:
            cache[gpu] = tuple(backends.targets_of(descriptions.load(gpu)))
        except Exception:       # noqa: BLE001 - not a recorded description
            cache[gpu] = None
    return cache[gpu]


def rows(results, collected) -> list[Row]:
    """One row per compiled kernel and launch geometry (auto's launches where it has any): on
    each target the geometries of the GPUs of that target (a source that two GPUs render
    alike is launched by each with its own work-group and local memory), or every recorded
    geometry where none of them launched it."""
    out = []
    for r in results:
        if not r.ok:
            # the kernel column of a failed compile names the template (allow-list: kernel)
            out.append(Row(r.template, r.template, r.target, r.params, bool(r.devices),
                           r.default, ok=False, log=r.log))
            continue
        lim = occ.LIMITS.get(r.target)
        for k in r.kernels:
            launches = sorted(collected.launches.get((r.source, k.name), ())) or [(None, 0, 0)]
            own = [g for g in launches
                   if g[0] is None or r.target in (_targets_of_gpu(g[0]) or (r.target,))]
            launches = own or launches
            geoms = sorted({(wg, local) for _, wg, local in launches})
            for wg, local in geoms:
                row = Row(r.template, k.name, r.target, r.params, bool(r.devices), r.default,
                          regs=_regs(k, r.target), sgprs=k.sgprs, spill=k.spill,
                          scratch=k.scratch, lds=max(k.lds, local), local_limit=r.local_mem,
                          wg=wg, simd=k.simd, grf=k.grf, gpus=r.devices, source=r.source,
                          barrier=getattr(k, "barrier", False))
                gpus = getattr(collected, "auto_launches", {}).get((r.source, k.name))
                if gpus:
                    row.extra["auto_gpus"] = tuple(sorted(gpus))   # GPUs auto launched it on
                if lim is not None and row.regs:
                    width = k.simd or lim.lanes
                    try:
                        row.occupancy = occ.occupancy(
                            lim, regs=min(row.regs, 255) if lim.family == "nvidia" else row.regs,
                            work_group=wg or width, local_mem=row.lds, sgprs=k.sgprs,
                            grf=k.grf or 128, simd=k.simd or None, barrier=row.barrier)
                    except ValueError as exc:
                        row.extra["occupancy_error"] = str(exc)
                out.append(row)
    return out


def _matches(entry, row: Row, check: str) -> bool:
    if check not in entry["checks"] or entry["kernel"] != row.kernel:
        return False
    if entry.get("template") and entry["template"] != row.template:
        return False
    if entry.get("targets") and row.target not in entry["targets"]:
        return False
    return all(row.params.get(p) == v for p, v in (entry.get("params") or {}).items())


@dataclass
class Violation:
    check: str
    row: Row
    message: str
    allowed_by: dict | None = None


def _message(check, row) -> str:
    o = row.occupancy
    if check == "spill":
        return f"{row.spill} B spilled, {row.scratch} B scratch/stack ({row.regs} registers)"
    if check == "occupancy":
        return f"occupancy {o} at {row.regs} registers, work-group {row.wg or 'driver'}, " \
               f"{row.lds} B local"
    if check == "coalescing":
        return f"{row.segments:.1f} segments of 128 B per warp access"
    if check == "untraced":
        return f"coalescing not measured: {row.extra.get('untraced')}"
    if check == "compile_time":
        return "the back end did not finish: " + row.log.strip().splitlines()[-1][:120]
    if check == "local":
        return f"{row.lds} B local memory > {row.local_limit}"
    errs = [ln for ln in row.log.splitlines() if "error" in ln][:3]
    return "compile error: " + " | ".join(errs)


def violations(table, allow=None, itemsize=None) -> list[Violation]:
    """Every failed check of ``table`` (rows), with the allow-list entry excusing it or None."""
    allow = load_allowlist() if allow is None else allow
    out = []
    for row in table:
        failed = []
        if not row.ok:
            # a back end that does not finish in COMPILE_TIMEOUT: excusable (a driver would
            # take as long on the user's first run; the tuner's constraints should drop it)
            failed.append("compile_time" if "timed out" in row.log else "compile")
        elif row.lds > row.local_limit > 0:
            failed.append("local")
        if row.ok and (row.auto or row.default) and (row.spill or row.scratch):
            failed.append("spill")
        lim = occ.LIMITS.get(row.target)
        if (row.ok and row.auto and row.occupancy is not None and lim is not None
                and row.occupancy.fraction < MIN_OCCUPANCY):
            failed.append("occupancy")
        if row.ok and row.auto and row.segments is not None:
            size = row.extra.get("itemsize") or (itemsize or {}).get(row.key, 8)
            if row.segments > max_segments(size):
                failed.append("coalescing")
        if row.ok and row.auto and row.extra.get("untraced"):
            failed.append("untraced")
        for check in failed:
            entry = next((e for e in allow if _matches(e, row, check)), None)
            out.append(Violation(check, row, _message(check, row), entry))
    return out


def stale(table, allow=None, itemsize=None) -> list[dict]:
    """Allow-list entries that excuse none of today's violations."""
    allow = load_allowlist() if allow is None else allow
    used = {id(v.allowed_by) for v in violations(table, allow, itemsize) if v.allowed_by is not None}
    return [e for e in allow if id(e) not in used]


def _scalar_params(params) -> dict:
    return {k: v for k, v in sorted(params.items())
            if isinstance(v, (int, float, str, bool)) and not (isinstance(v, str) and len(v) > 40)}


def record(table, folder: Path | None = None) -> list[Path]:
    """Write each target's per-kernel figures (the profile's values and auto's sources) to
    ``clts/devices/resources/<target>.yaml``; returns the files written."""
    folder = folder or occ.resources_dir()
    folder.mkdir(parents=True, exist_ok=True)
    per: dict = {}
    for row in table:
        if not row.ok or not (row.auto or row.default) or row.target not in occ.LIMITS:
            continue
        rec = {"template": row.template, "kernel": row.kernel, "params": _scalar_params(row.params),
               "regs": row.regs, "spill": row.spill + row.scratch, "local_mem": row.lds}
        if row.sgprs:
            rec["sgprs"] = row.sgprs
        if row.grf:
            rec["grf"], rec["simd"] = row.grf, row.simd
        if row.barrier:
            rec["barrier"] = True
        key = (row.template, row.kernel, repr(rec["params"]))
        old = per.setdefault(row.target, {}).get(key)
        if old is None or rec["regs"] > old["regs"]:
            per[row.target][key] = rec
    if options.get("gpu_gate_calls"):   # a run over some workloads (tune.workloads) updates the records, drops none
        # (the full run, scripts/gpu-gate.sh --report, rewrites them)
        for target, recs in per.items():
            path = folder / f"{target}.yaml"
            old = (yaml.safe_load(path.read_text()) or {}).get("kernels", []) \
                if path.exists() else []
            for rec in old or []:
                recs.setdefault((rec["template"], rec["kernel"], repr(rec["params"])), rec)
    written = []
    for target, recs in sorted(per.items()):
        path = folder / f"{target}.yaml"
        lines = [f"# {target}: registers, spill + scratch bytes and local memory per kernel from the",
                 "# offline compiles (python -m clts.tune.offline --record); read by",
                 "# clts.runtime.occupancy.recorded. Generated: do not edit.",
                 f"target: {target}", "kernels:"]
        lines += ["  - " + yaml.safe_dump(recs[k], default_flow_style=True, sort_keys=False,
                                          width=10**6).strip() for k in sorted(recs)]
        path.write_text("\n".join(lines) + "\n")
        written.append(path)
    return written


def draft_allowlist(violations, reason="layout / tile change still to do") -> list:
    """Allow-list entries (one per kernel and check, all targets it fails on) for the
    violations no entry excuses yet, with their figures as the argument: a starting point to
    edit, never to paste unread."""
    groups: dict = {}
    for v in violations:
        if v.allowed_by is not None or v.check in ("compile", "local"):  # never excused
            continue
        g = groups.setdefault((v.row.kernel, v.check), {"template": v.row.template,
                                                        "targets": set(), "figures": set()})
        g["targets"].add(v.row.target)
        g["figures"].add(f"{v.row.target}: {v.message}")
    out = []
    for (kernel, check), g in sorted(groups.items()):
        figs = sorted(g["figures"])
        out.append({"kernel": kernel, "template": g["template"], "checks": [check],
                    "targets": sorted(g["targets"]), "reason": reason,
                    "argument": "; ".join(figs[:6]) + (f"; ... ({len(figs)} in all)"
                                                       if len(figs) > 6 else "")})
    return out
