"""Plans of the ocean kernels: code version, work-group shapes and transfers, from the profile.

Profile section ``ocean`` (every key has a default in ``clts/devices/generic-*.yaml``)::

    ocean:
      superbee:
        version: fused                       # what version="auto" runs: fused | tiled
        fused: {wg_z: 0, wg_y: 1, wg_x: 1}   # local size over (z, y, x) cells; wg_z 0: driver's
        tiled: {tile_z: 8, tile_y: 4, tile_x: 4}   # cells per work-group over (z, y, x)
      tke: {wg_z: 0, wg_y: 1, wg_x: 1}       # local size of the TKE kernels (0: driver's)
      transfer: copy                         # numpy arrays: copy (upload / download) | host_ptr

``host_ptr`` wraps numpy inputs and outputs in buffers over their own memory
(``CL_MEM_USE_HOST_PTR``): on CPU drivers that use the host memory in place (pocl) no copy is
made; elsewhere the driver copies behind the scenes.

Every key is also a keyword of :func:`clts.ocean.superbee_fluxes` / :func:`clts.ocean.tke`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..runtime.profiles import value_error

VERSIONS = ("fused", "tiled")
TRANSFERS = ("copy", "host_ptr")
WG_KEYS = ("wg_z", "wg_y", "wg_x")
TILE_KEYS = ("tile_z", "tile_y", "tile_x")


@dataclass(frozen=True)
class SuperbeePlan:
    version: str = "fused"
    wg_z: int = 0
    wg_y: int = 1
    wg_x: int = 1
    tile_z: int = 8
    tile_y: int = 4
    tile_x: int = 4
    transfer: str = "copy"

    @property
    def local_size(self):
        """Local size (z, y, x) of the kernel; None lets the driver choose."""
        if self.version == "tiled":
            return (self.tile_z, self.tile_y, self.tile_x)
        return None if self.wg_z == 0 else (self.wg_z, self.wg_y, self.wg_x)


@dataclass(frozen=True)
class TkePlan:
    wg_z: int = 0
    wg_y: int = 1
    wg_x: int = 1
    transfer: str = "copy"
    #: parameters forced on the tridiagonal solver (``clts.solve_tridiagonal`` keywords)
    solver: tuple = ()

    @property
    def local_size(self):
        return None if self.wg_z == 0 else (self.wg_z, self.wg_y, self.wg_x)


def _int(prof, key, value, forced, lo=0):
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise value_error(prof, key, f"{key.rsplit('.', 1)[-1]} must be an integer >= {lo}, "
                          f"not {value!r}", forced)
    return value


def _check_wg(dev, prof, prefix, vals, forced):
    for k in WG_KEYS:
        _int(prof, f"{prefix}.{k}", vals[k], k in forced, lo=0 if k == "wg_z" else 1)
    if vals["wg_z"] and vals["wg_z"] * vals["wg_y"] * vals["wg_x"] > dev.max_work_group:
        raise ValueError(f"work-group {vals['wg_z']} x {vals['wg_y']} x {vals['wg_x']} exceeds "
                         f"the device's {dev.max_work_group} work-items")


def _transfer(prof, value, forced):
    if value not in TRANSFERS:
        raise value_error(prof, "ocean.transfer", f"transfer must be one of {TRANSFERS}, not "
                          f"{value!r}", forced)
    return value


def tile_fits(dev, tile_z, tile_y, tile_x, itemsize) -> bool:
    """The tiled version's two local boxes fit the device's local memory and work-group."""
    box = (tile_z + 3) * (tile_y + 3) * (tile_x + 3) * 2 * itemsize
    return box + 64 <= dev.local_mem and tile_z * tile_y * tile_x <= dev.max_work_group


def superbee_plan(dev, itemsize: int = 8, version: str = "auto", **overrides) -> SuperbeePlan:
    """The Superbee plan from ``dev.profile`` (section ``ocean``); keywords override it."""
    prof = dev.profile
    over = {k: v for k, v in overrides.items() if v is not None}
    unknown = set(over) - set(WG_KEYS) - set(TILE_KEYS) - {"transfer"}
    if unknown:
        raise TypeError(f"unknown parameter(s) {sorted(unknown)}; accepted: "
                        f"{', '.join(WG_KEYS + TILE_KEYS)}, transfer")
    if not isinstance(version, str):
        raise TypeError(f"version must be a string, not {type(version).__name__}")
    if version == "auto":
        version = prof.get("ocean.superbee.version")
        if version not in VERSIONS:
            raise value_error(prof, "ocean.superbee.version",
                              f"version must be one of {VERSIONS}, not {version!r}")
    elif version not in VERSIONS:
        raise ValueError(f"version must be 'auto' or one of {VERSIONS}, not {version!r}")
    vals = {k: prof.get(f"ocean.superbee.fused.{k}") for k in WG_KEYS}
    vals.update({k: prof.get(f"ocean.superbee.tiled.{k}") for k in TILE_KEYS})
    vals["transfer"] = prof.get("ocean.transfer")
    vals.update(over)
    _check_wg(dev, prof, "ocean.superbee.fused", vals, over)
    for k in TILE_KEYS:
        _int(prof, f"ocean.superbee.tiled.{k}", vals[k], k in over, lo=1)
    _transfer(prof, vals["transfer"], "transfer" in over)
    plan = SuperbeePlan(version=version, **vals)
    if version == "tiled" and not tile_fits(dev, plan.tile_z, plan.tile_y, plan.tile_x,
                                            itemsize):
        raise ValueError(f"tile {plan.tile_z} x {plan.tile_y} x {plan.tile_x} (z, y, x) does "
                         f"not fit device {dev}: {dev.local_mem} bytes of local memory, "
                         f"{dev.max_work_group} work-items per group")
    return plan


def tke_plan(dev, **overrides) -> TkePlan:
    """The TKE plan from ``dev.profile`` (section ``ocean``); keywords override it
    (``solver=dict(...)`` forces parameters of the tridiagonal solve)."""
    prof = dev.profile
    over = {k: v for k, v in overrides.items() if v is not None}
    unknown = set(over) - set(WG_KEYS) - {"transfer", "solver"}
    if unknown:
        raise TypeError(f"unknown parameter(s) {sorted(unknown)}; accepted: "
                        f"{', '.join(WG_KEYS)}, transfer, solver")
    vals = {k: prof.get(f"ocean.tke.{k}") for k in WG_KEYS}
    vals["transfer"] = prof.get("ocean.transfer")
    solver = over.pop("solver", {}) or {}
    if not isinstance(solver, dict):
        raise TypeError(f"solver must be a dict of solve_tridiagonal keywords, not "
                        f"{type(solver).__name__}")
    vals.update(over)
    _check_wg(dev, prof, "ocean.tke", vals, over)
    _transfer(prof, vals["transfer"], "transfer" in over)
    return TkePlan(solver=tuple(sorted(solver.items())), **vals)


def with_params(plan, **kw):
    return replace(plan, **kw)
