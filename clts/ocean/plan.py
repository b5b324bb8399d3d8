"""Plans of the ocean kernels: code version, lanes, work-group shapes and transfers, from the
device profile.

Profile section ``ocean`` (every key has a default in ``clts/devices/generic-*.yaml``)::

    ocean:
      superbee:
        version: fused                  # what version="auto" runs: fused | tiled
        fused: {lanes: 8, wg: 0}        # cells per work-item (realN lanes), work-group (0: driver)
        tiled: {tile_z: 8, tile_y: 4, tile_x: 2}   # cells per work-group over (z, y, x)
      tke: {lanes: 8, wg: 0, advection: stored, stream: 1}  # advection: inline | stored
      transfer: copy                    # numpy arrays: copy (upload / download) | host_ptr

``lanes``: consecutive cells of the flattened grid per work-item as one realN vector (pocl
vectorises only explicit vectors: 8; the Intel CPU runtime and GPUs vectorise across
work-items: 1). ``advection``: the TKE step computes the six Superbee face fluxes of each cell
in place (``inline``: no flux arrays, each face flux computed twice) or runs the Superbee
kernel of ``ocean.superbee.version`` first and reads its three flux arrays (``stored``).
``stream``: the TKE kernels write their outputs (systems, results) with non-temporal stores
where the address is aligned to the vector (no read for ownership of the written lines).
``host_ptr`` wraps numpy inputs and outputs in buffers over their own memory
(``CL_MEM_USE_HOST_PTR``): drivers that use host memory in place (pocl) copy nothing; others
copy behind the scenes.

Every key is also a keyword of :func:`clts.ocean.superbee_fluxes` / :func:`clts.ocean.tke`.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..runtime.profiles import value_error

VERSIONS = ("fused", "tiled")
TRANSFERS = ("copy", "host_ptr")
ADVECTIONS = ("inline", "stored")
LANES = (1, 2, 4, 8, 16)
TILE_KEYS = ("tile_z", "tile_y", "tile_x")


@dataclass(frozen=True)
class SuperbeePlan:
    version: str = "fused"
    lanes: int = 1
    wg: int = 0
    tile_z: int = 8
    tile_y: int = 4
    tile_x: int = 2
    transfer: str = "copy"


@dataclass(frozen=True)
class TkePlan:
    lanes: int = 1
    wg: int = 0
    advection: str = "inline"
    stream: int = 0
    superbee: SuperbeePlan = SuperbeePlan()
    transfer: str = "copy"
    #: parameters forced on the tridiagonal solver (``clts.solve_tridiagonal`` keywords)
    solver: tuple = ()


def _int(prof, key, value, forced, lo=0):
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise value_error(prof, key, f"{key.rsplit('.', 1)[-1]} must be an integer >= {lo}, "
                          f"not {value!r}", forced)
    return value


def _choice(prof, key, value, choices, forced):
    if value not in choices:
        raise value_error(prof, key, f"{key.rsplit('.', 1)[-1]} must be one of {choices}, not "
                          f"{value!r}", forced)
    return value


def _lanes_wg(dev, prof, prefix, vals, forced):
    if vals["lanes"] not in LANES:
        raise value_error(prof, f"{prefix}.lanes", f"lanes must be one of {LANES}, not "
                          f"{vals['lanes']!r}", "lanes" in forced)
    _int(prof, f"{prefix}.wg", vals["wg"], "wg" in forced)
    if vals["wg"] > dev.max_work_group:
        raise ValueError(f"wg {vals['wg']} exceeds the device's {dev.max_work_group} "
                         f"work-items per group")


def tile_fits(dev, tile_z, tile_y, tile_x, itemsize) -> bool:
    """The tiled version's two local boxes fit the device's local memory and work-group."""
    box = (tile_z + 3) * (tile_y + 3) * (tile_x + 3) * 2 * itemsize
    return box + 64 <= dev.local_mem and tile_z * tile_y * tile_x <= dev.max_work_group


def superbee_plan(dev, itemsize: int = 8, version: str = "auto", **overrides) -> SuperbeePlan:
    """The Superbee plan from ``dev.profile`` (section ``ocean``); keywords override it
    (``lanes``, ``wg``, ``tile_z``, ``tile_y``, ``tile_x``, ``transfer``)."""
    prof = dev.profile
    over = {k: v for k, v in overrides.items() if v is not None}
    unknown = set(over) - {"lanes", "wg", "transfer"} - set(TILE_KEYS)
    if unknown:
        raise TypeError(f"unknown parameter(s) {sorted(unknown)}; accepted: lanes, wg, "
                        f"{', '.join(TILE_KEYS)}, transfer")
    if not isinstance(version, str):
        raise TypeError(f"version must be a string, not {type(version).__name__}")
    if version == "auto":
        version = _choice(prof, "ocean.superbee.version", prof.get("ocean.superbee.version"),
                          VERSIONS, False)
    elif version not in VERSIONS:
        raise ValueError(f"version must be 'auto' or one of {VERSIONS}, not {version!r}")
    vals = {k: prof.get(f"ocean.superbee.fused.{k}") for k in ("lanes", "wg")}
    vals.update({k: prof.get(f"ocean.superbee.tiled.{k}") for k in TILE_KEYS})
    vals["transfer"] = prof.get("ocean.transfer")
    vals.update(over)
    _lanes_wg(dev, prof, "ocean.superbee.fused", vals, over)
    for k in TILE_KEYS:
        _int(prof, f"ocean.superbee.tiled.{k}", vals[k], k in over, lo=1)
    _choice(prof, "ocean.transfer", vals["transfer"], TRANSFERS, "transfer" in over)
    plan = SuperbeePlan(version=version, **vals)
    if version == "tiled" and not tile_fits(dev, plan.tile_z, plan.tile_y, plan.tile_x,
                                            itemsize):
        raise ValueError(f"tile {plan.tile_z} x {plan.tile_y} x {plan.tile_x} (z, y, x) does "
                         f"not fit device {dev}: {dev.local_mem} bytes of local memory, "
                         f"{dev.max_work_group} work-items per group")
    return plan


def tke_plan(dev, itemsize: int = 8, **overrides) -> TkePlan:
    """The TKE plan from ``dev.profile`` (section ``ocean``); keywords override it: ``lanes``,
    ``wg``, ``advection``, ``stream``, ``transfer``, ``superbee=dict(...)`` (the Superbee plan's keywords
    and ``version``, for ``advection="stored"``), ``solver=dict(...)`` (keywords forced on
    ``clts.solve_tridiagonal``)."""
    prof = dev.profile
    over = {k: v for k, v in overrides.items() if v is not None}
    unknown = set(over) - {"lanes", "wg", "advection", "stream", "transfer", "solver",
                           "superbee"}
    if unknown:
        raise TypeError(f"unknown parameter(s) {sorted(unknown)}; accepted: lanes, wg, "
                        f"advection, stream, transfer, superbee, solver")
    solver = over.pop("solver", {}) or {}
    sb = over.pop("superbee", {}) or {}
    for name, d in (("solver", solver), ("superbee", sb)):
        if not isinstance(d, dict):
            raise TypeError(f"{name} must be a dict of keywords, not {type(d).__name__}")
    vals = {k: prof.get(f"ocean.tke.{k}") for k in ("lanes", "wg", "advection", "stream")}
    vals["transfer"] = prof.get("ocean.transfer")
    vals.update(over)
    _lanes_wg(dev, prof, "ocean.tke", vals, over)
    _choice(prof, "ocean.tke.advection", vals["advection"], ADVECTIONS, "advection" in over)
    _choice(prof, "ocean.tke.stream", vals["stream"], (0, 1), "stream" in over)
    _choice(prof, "ocean.transfer", vals["transfer"], TRANSFERS, "transfer" in over)
    sb = dict(sb)
    sb_plan = superbee_plan(dev, itemsize, sb.pop("version", "auto"), **sb)
    return TkePlan(superbee=sb_plan, solver=tuple(sorted(solver.items())), **vals)
