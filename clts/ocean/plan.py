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

from ..runtime.plans import LANE_WIDTHS, read_tunables

VERSIONS = ("fused", "tiled")
TRANSFERS = ("copy", "host_ptr")
ADVECTIONS = ("inline", "stored")
LANES = LANE_WIDTHS
TILE_KEYS = ("tile_z", "tile_y", "tile_x")
#: profile key of each Superbee / TKE plan field
SUPERBEE_KEYS = {"lanes": "ocean.superbee.fused.lanes", "wg": "ocean.superbee.fused.wg",
                 **{k: f"ocean.superbee.tiled.{k}" for k in TILE_KEYS},
                 "transfer": "ocean.transfer"}
TKE_KEYS = {**{k: f"ocean.tke.{k}" for k in ("lanes", "wg", "advection", "stream")},
            "transfer": "ocean.transfer"}


@dataclass(frozen=True)
class SuperbeePlan:
    version: str
    lanes: int
    wg: int
    tile_z: int
    tile_y: int
    tile_x: int
    transfer: str


@dataclass(frozen=True)
class TkePlan:
    lanes: int
    wg: int
    advection: str
    stream: int
    superbee: SuperbeePlan
    transfer: str
    #: parameters forced on the tridiagonal solver (``clts.solve_tridiagonal`` keywords)
    solver: tuple


def _lanes_wg(t):
    t.int_in("lanes", choices=LANES)
    t.int_in("wg", 0, t.device.max_work_group)      # 0: the driver picks


def tile_fits(dev, tile_z, tile_y, tile_x, itemsize) -> bool:
    """The tiled version's two local boxes fit the device's local memory and work-group. The
    run path and the tuner's constraint both use it."""
    box = (tile_z + 3) * (tile_y + 3) * (tile_x + 3) * 2 * itemsize
    return box + 64 <= dev.local_mem and tile_z * tile_y * tile_x <= dev.max_work_group


def superbee_plan(dev, itemsize: int = 8, version: str = "auto", **overrides) -> SuperbeePlan:
    """The Superbee plan from ``dev.profile`` (section ``ocean``); keywords override it
    (``lanes``, ``wg``, ``tile_z``, ``tile_y``, ``tile_x``, ``transfer``)."""
    t = read_tunables(dev, SUPERBEE_KEYS, overrides)
    if not isinstance(version, str):
        raise TypeError(f"version must be a string, not {type(version).__name__}")
    if version == "auto":
        v = read_tunables(dev, {"version": "ocean.superbee.version"}, {})
        version = v.choice("version", VERSIONS)
    elif version not in VERSIONS:
        raise ValueError(f"version must be 'auto' or one of {VERSIONS}, not {version!r}")
    _lanes_wg(t)
    for k in TILE_KEYS:
        t.int_in(k, 1)
    t.choice("transfer", TRANSFERS)
    plan = SuperbeePlan(version=version, **t.values)
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
    over = {k: v for k, v in overrides.items() if v is not None}
    solver = over.pop("solver", {}) or {}
    sb = over.pop("superbee", {}) or {}
    t = read_tunables(dev, TKE_KEYS, over, extra=("solver", "superbee"))
    for name, d in (("solver", solver), ("superbee", sb)):
        if not isinstance(d, dict):
            raise TypeError(f"{name} must be a dict of keywords, not {type(d).__name__}")
    _lanes_wg(t)
    t.choice("advection", ADVECTIONS)
    t.choice("stream", (0, 1))
    t.choice("transfer", TRANSFERS)
    sb = dict(sb)
    sb_plan = superbee_plan(dev, itemsize, sb.pop("version", "auto"), **sb)
    return TkePlan(superbee=sb_plan, solver=tuple(sorted(solver.items())), **t.values)
