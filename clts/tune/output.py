"""Turn tuning results into a device profile (schema 1) and write it atomically.

The file says which device it is for (``device:`` vendor, exact name, type, platform) and how it
was measured (``provenance:`` date, clts version, fingerprint, driver, settings and, per entry,
the measured seconds of every candidate, the wrong ones with their reason, the unstable ones).
Updating an existing file keeps its values and provenance for entries not tuned in this run.
"""
from __future__ import annotations

import copy
import datetime as _dt
from pathlib import Path

from ..runtime import profiles


def default_path(device) -> Path:
    return profiles.user_dir() / f"{device.slug}.yaml"


def _sig(x: float) -> float:
    return float(f"{x:.4g}")


def _plain(v):
    """Values YAML's safe_dump accepts: numpy scalars -> Python, tuples -> lists."""
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    return v.item() if hasattr(v, "item") and not isinstance(v, (str, bytes)) else v


def _set(tree: dict, dotted: str, value) -> None:
    parts = dotted.split(".")
    node = tree
    for p in parts[:-1]:
        node = node.setdefault(p, {})
        if not isinstance(node, dict):
            raise ValueError(f"profile key {dotted!r}: {p!r} is a value, not a section")
    node[parts[-1]] = value


def schema_problems(entries) -> dict[str, str]:
    """{entry name: why} for entries whose profile keys are not in the generic profiles."""
    ref = profiles.schema()
    out = {}
    for e in entries:
        keys = ([f"{e.section}.{k}" for k in e.params] if hasattr(e, "params") else [e.key])
        for key in keys:
            node = ref
            for p in key.split("."):
                if not isinstance(node, dict) or p not in node:
                    out[e.name] = (f"profile key {key!r} is not in clts/devices/generic-*.yaml "
                                   "(add it there)")
                    break
                node = node[p]
            if e.name in out:
                break
    return out


def entry_provenance(res, date: str, settings) -> dict:
    out = {"date": date, "kind": res.kind, "status": res.status,
           "seconds_spent": round(res.seconds, 1)}
    if res.kind == "tunable":
        out["strategy"] = res.strategy
        out["candidates"] = res.n_space
        if res.n_rejected:
            out["rejected_by_constraint"] = res.n_rejected
        out["times"] = {c.label: _sig(c.score) for c in sorted(
            (c for c in res.candidates if c.ok), key=lambda c: c.score)}
        if res.low_occupancy:
            out["skipped_low_occupancy"] = res.low_occupancy
        if getattr(res, "sizes", None):
            out["workloads"] = _plain(res.sizes)
        if res.best is not None and getattr(res, "too_small", False):
            out["fastest_not_adopted"] = _plain(dict(res.best.params))
            out["kept"] = _plain(dict(res.kept))
        elif res.best is not None:
            out["chosen"] = _plain(dict(res.best.params))
        if res.current is not None and res.current.ok and res.best is not None \
                and not getattr(res, "too_small", False):
            out["speedup_vs_previous"] = _sig(res.current.score / res.best.score)
    else:
        out["versions"] = list(res.entry.versions)
        out["times"] = {c.label: _sig(c.score) for c in res.candidates if c.ok}
        out["winners"] = {str(v): w for v, _, w in res.rows if w is not None}
        if res.threshold is not None:
            out["threshold"] = _plain(res.threshold)
    if res.wrong:
        out["wrong"] = {c.label: c.error for c in res.wrong}
    if res.unstable:
        out["unstable"] = [c.label for c in res.unstable]
    if res.warnings:
        out["warnings"] = list(res.warnings)
    return out


def _gpu_settings(device, settings) -> dict:
    """How the workloads and candidates were sized on a GPU (``tune/sizing.py``); {} on CPUs."""
    from . import sizing
    if not sizing.is_gpu(device):
        return {}
    return {"gpu_sizing": {
        "groups_per_cu": sizing.GROUPS_PER_CU, "compute_units": int(device.compute_units),
        "simd_width": sizing.simd_width(device), "workload_bytes": [sizing.MIN_BYTES,
                                                                    sizing.max_bytes(device)],
        "min_seconds": sizing.min_seconds(device, settings)}}


def build_profile(device, results, settings, existing: dict | None = None, budget=None) -> dict:
    """Profile mapping for ``device`` with the tuned values of ``results`` merged into
    ``existing`` (a profile previously written for the same device, or None)."""
    from .._version import __version__
    date = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    data = copy.deepcopy(existing) if existing else {}
    body = {k: v for k, v in data.items() if k not in profiles.META_KEYS}
    old_prov = data.get("provenance") or {}
    for res in results:
        for key, value in res.values.items():
            _set(body, key, _plain(value))
    entries = dict(old_prov.get("entries") or {})
    for res in results:
        if res.candidates:
            entries[res.name] = entry_provenance(res, date, settings)
    prov = {
        "source": "clts-tune",
        "date": date,
        "clts_version": __version__,
        "fingerprint": device.fingerprint,
        "driver": device.driver,
        "settings": {"quick": settings.quick, "repeats": settings.repeats,
                     "noise": settings.noise, "strategy": settings.strategy,
                     **({"budget_seconds": budget} if budget is not None else {}),
                     **_gpu_settings(device, settings)},
        "timing": "median of OpenCL profiling-event kernel seconds after warm-up; "
                  "per candidate the geometric mean over the entry's workloads",
        "entries": entries,
    }
    out = {"schema": profiles.SCHEMA_VERSION,
           "device": {"vendor": device.vendor, "name": device.name, "type": device.type,
                      "platform": device.platform},
           "provenance": prov}
    out.update(body)
    return out


def write_profile(device, results, settings, path=None, budget=None) -> Path:
    """Merge ``results`` into the profile at ``path`` (default: the user config dir) and save
    it atomically after validating it against the schema."""
    path = Path(path) if path is not None else default_path(device)
    existing = None
    if path.exists():
        existing = profiles.load(path)
        spec = existing.get("device", {})
        if spec.get("name") not in (None, device.name) or spec.get("type") != device.type:
            raise ValueError(f"{path} is a profile for {spec.get('name')!r}, not for "
                             f"{device.name!r}; use -o to write elsewhere")
    return profiles.save(build_profile(device, results, settings, existing, budget), path)
