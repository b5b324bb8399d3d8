"""Plans of the ocean kernels: code version, lanes, work-group shapes and transfers, from the
device profile.

Profile section ``ocean`` (every key has a default in ``clts/devices/generic-*.yaml``)::

    ocean:
      superbee:
        version: fused                  # what version="auto" runs: fused | tiled
        fused: {lanes: 8, wg: 0, tile: 0}   # cells per work-item (realN lanes), work-group (0: driver)
        tiled: {tile_z: 8, tile_y: 4, tile_x: 2}   # cells per work-group over (z, y, x)
      tke: {lanes: 8, wg: 0, advection: stored, stream: 1, subgroup: 0, tile: 0}  # advection: inline | stored
      transfer: copy                    # numpy arrays: copy (upload / download) | host_ptr

``lanes``: consecutive cells of the flattened grid per work-item as one realN vector (pocl
vectorises only explicit vectors: 8; the Intel CPU runtime and GPUs vectorise across
work-items: 1). ``advection``: the TKE step computes the six Superbee face fluxes of each cell
in place (``inline``: no flux arrays, each face flux computed twice) or runs the Superbee
kernel of ``ocean.superbee.version`` first and reads its three flux arrays (``stored``).
``inline_max_itemsize`` (generic GPU profile 4, CPUs 8): inline advection only for reals of at
most this many bytes, else stored, unless ``advection`` is forced. The float64 step with inline
advection takes 158 registers on sm_80 (ptxas) and 160 VGPRs on gfx908, 12.5 % and 10 %
occupancy; stored, 89 and 63 (25 % and 40 %), and the Superbee kernel 84 / 84; float32 inline
114 / 83 (25 % / 30 %). With ``tile`` (below): float64 inline 132 / 125, stored 72 / 63 (37.5 % /
40 %), float32 inline 90 / 75.
``subgroup`` (0: the compiler picks): the sub-group size the TKE step kernel requires where the
compiler knows ``intel_reqd_sub_group_size`` (Intel GPUs). IGC compiles the float64 step at SIMD32
and spills it at 128 GRF on Data Center GPU Max (640 B stored, 11,648 B inline advection); at
SIMD16 neither spills (offline compile, pvc), so that profile requires 16.
``tile`` (generic GPU profile 1, CPUs 0): the TKE kernels stage the time-level arrays through a
local-memory tile per work-group (codegen.Tile): the group reads the T x wg consecutive values
of its cells with T coalesced loads per work-item and each work-item takes its levels from
local memory; ``tke_step`` writes tke and dtke back the same way. Unstaged, adjacent
work-items read one level T values apart (6-7 segments of 128 bytes per float64 warp access
where 2 do). Only with ``lanes`` 1 and a fixed ``wg``, and where the tile fits the device's
local memory (``tile_bytes``); a profile's 1 is dropped where it does not apply, a forced 1 is
an error there. ``superbee.fused.tile`` (the same values) does the same for the velocities the
Superbee kernel of the stored advection reads at level tau of [x, y, z, T] arrays
(``codegen.superbee_tile``, ``superbee_tile_bytes``: 4 x wg values); 3-D velocities are never
staged. Registers of that kernel, float64, sm_80: 84 untiled, 56 tiled (25 % -> 50 %).
``stream``: the TKE kernels write their outputs (systems, results) with non-temporal stores
where the address is aligned to the vector (no read for ownership of the written lines).
``host_ptr`` wraps numpy inputs and outputs in buffers over their own memory
(``CL_MEM_USE_HOST_PTR``): drivers that use host memory in place (pocl) copy nothing; others
copy behind the scenes.

Every key is also a keyword of :func:`clts.ocean.superbee_fluxes` / :func:`clts.ocean.tke`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..runtime.plans import (LANE_WIDTHS, PlanBase, PlanValueError, check_choice, check_int,
                             check_subgroup, check_work_group, read_tunables, validated)

VERSIONS = ("fused", "tiled")
TRANSFERS = ("copy", "host_ptr")
ADVECTIONS = ("inline", "stored")
LANES = LANE_WIDTHS
TILE_KEYS = ("tile_z", "tile_y", "tile_x")
#: profile key of each Superbee / TKE plan field
SUPERBEE_KEYS = {"lanes": "ocean.superbee.fused.lanes", "wg": "ocean.superbee.fused.wg",
                 "tile": "ocean.superbee.fused.tile",
                 **{k: f"ocean.superbee.tiled.{k}" for k in TILE_KEYS},
                 "transfer": "ocean.transfer"}
TKE_KEYS = {**{k: f"ocean.tke.{k}" for k in ("lanes", "wg", "advection", "stream", "subgroup",
                                              "tile")},
            "transfer": "ocean.transfer"}


def _check_lanes_wg(plan, dev):
    check_choice(plan, "lanes", LANES)
    check_int(plan, "wg", lo=0, note=" (0: the driver picks)")
    check_work_group(plan, dev, "wg")
    check_choice(plan, "transfer", TRANSFERS)


@dataclass(frozen=True)
class Problem:
    """What one call's Plans depend on beyond the device: the bytes of a value (4 or 8) and
    the time levels of the TKE arrays (the last axis, T)."""

    itemsize: int = 8
    levels: int = 3


@dataclass(frozen=True)
class SuperbeePlan(PlanBase):
    version: str
    lanes: int
    wg: int
    tile_z: int
    tile_y: int
    tile_x: int
    transfer: str
    #: 1: the fused kernel stages level tau of [x, y, z, T] velocities (TKE's stored advection)
    #: through a local-memory tile of wg cells (lanes 1); 3-D velocities need none
    tile: int = 0

    def validate(self, dev, itemsize: int = 8):
        """Raise ``PlanValueError`` (a ValueError naming the field) for a bad value, and a
        ``ValueError`` where the tiled version's tile does not fit ``dev``."""
        if self.version not in VERSIONS:
            raise PlanValueError("version", f"must be 'auto' or one of {VERSIONS}, not "
                                            f"{self.version!r}")
        _check_lanes_wg(self, dev)
        check_int(self, "tile", lo=0, hi=1)
        if self.tile:
            why = superbee_tile_unfit(dev, self, itemsize)
            if why:
                raise PlanValueError("tile", why)
        for k in TILE_KEYS:
            check_int(self, k)
        if self.version == "tiled" and not tile_fits(dev, self.tile_z, self.tile_y,
                                                     self.tile_x, itemsize):
            raise ValueError(f"tile {self.tile_z} x {self.tile_y} x {self.tile_x} (z, y, x) "
                             f"does not fit device {dev}: {dev.local_mem} bytes of local "
                             f"memory, {dev.max_work_group} work-items per group")
        return self


@dataclass(frozen=True)
class TkePlan(PlanBase):
    lanes: int
    wg: int
    advection: str
    stream: int
    superbee: SuperbeePlan
    transfer: str
    #: parameters forced on the tridiagonal solver (``clts.solve_tridiagonal`` keywords)
    solver: tuple
    #: the sub-group size the step kernel requires on Intel GPUs (0: the compiler picks)
    subgroup: int = 0
    #: 1: the time-level arrays staged through a local-memory tile of wg cells (lanes 1)
    tile: int = 0

    def validate(self, dev, itemsize: int = 8, levels: int = 3):
        """Raise ``PlanValueError`` (a ValueError naming the field) for a bad value; the
        Superbee plan is checked too."""
        _check_lanes_wg(self, dev)
        check_choice(self, "advection", ADVECTIONS)
        check_int(self, "stream", lo=0, hi=1)
        check_subgroup(self.subgroup)
        check_int(self, "tile", lo=0, hi=1)
        if self.tile:
            why = tile_unfit(dev, self, itemsize, levels)
            if why:
                raise PlanValueError("tile", why)
        if not isinstance(self.superbee, SuperbeePlan):
            raise TypeError(f"superbee must be a SuperbeePlan, got "
                            f"{type(self.superbee).__name__}")
        self.superbee.validate(dev, itemsize)
        return self


def tile_fits(dev, tile_z, tile_y, tile_x, itemsize) -> bool:
    """The tiled version's two local boxes fit the device's local memory and work-group. The
    run path and the tuner's constraint both use it."""
    box = (tile_z + 3) * (tile_y + 3) * (tile_x + 3) * 2 * itemsize
    return box + 64 <= dev.local_mem and tile_z * tile_y * tile_x <= dev.max_work_group


def tile_bytes(wg: int, levels: int, itemsize: int, advection: str) -> int:
    """Local memory of the TKE tile per work-group (the step's, the larger of the two)."""
    from .codegen import step_tile
    return step_tile(wg, levels, 0, advection).total * itemsize


def tile_unfit(dev, plan, itemsize: int, levels: int) -> str:
    """Why ``plan`` cannot stage through the tile on ``dev`` ('' where it can)."""
    if plan.lanes != 1:
        return f"1 needs lanes=1 (one cell per work-item), got lanes={plan.lanes}"
    if isinstance(plan.wg, bool) or not isinstance(plan.wg, int) or plan.wg < 1:
        return "1 needs a fixed work-group (wg >= 1), got wg=0 (the driver's)"
    need = tile_bytes(plan.wg, levels, itemsize, plan.advection)
    if need > dev.local_mem:
        return (f"1 needs {need} bytes of local memory per work-group (wg {plan.wg}, "
                f"{levels} levels), more than the {dev.local_mem} of device {dev}")
    return ""


def superbee_tile_bytes(wg: int, itemsize: int) -> int:
    """Local memory of the Superbee velocity tile per work-group (independent of T)."""
    from .codegen import superbee_tile
    return superbee_tile(wg, 3, 0).total * itemsize


def superbee_tile_unfit(dev, plan, itemsize: int) -> str:
    """Why the Superbee ``plan`` cannot stage its velocities through the tile ('' where it
    can)."""
    if plan.lanes != 1:
        return f"1 needs lanes=1 (one cell per work-item), got lanes={plan.lanes}"
    if isinstance(plan.wg, bool) or not isinstance(plan.wg, int) or plan.wg < 1:
        return "1 needs a fixed work-group (wg >= 1), got wg=0 (the driver's)"
    need = superbee_tile_bytes(plan.wg, itemsize)
    if need > dev.local_mem:
        return (f"1 needs {need} bytes of local memory per work-group (wg {plan.wg}), more "
                f"than the {dev.local_mem} of device {dev}")
    return ""


def make_superbee_plan(device, problem: Problem, **overrides) -> SuperbeePlan:
    """The Superbee plan from ``device.profile`` (section ``ocean``) for ``problem``; keywords
    override it (``version``, ``lanes``, ``wg``, ``tile``, ``tile_z``, ``tile_y``, ``tile_x``,
    ``transfer``)."""
    dev, itemsize = device, problem.itemsize
    version = overrides.pop("version", "auto")
    t = read_tunables(dev, SUPERBEE_KEYS, overrides)
    if not isinstance(version, str):
        raise TypeError(f"version must be a string, not {type(version).__name__}")
    keys = dict(SUPERBEE_KEYS)
    if version == "auto":
        keys["version"] = "ocean.superbee.version"
        version = read_tunables(dev, {"version": keys["version"]}, {})["version"]
    elif version not in VERSIONS:
        raise ValueError(f"version must be 'auto' or one of {VERSIONS}, not {version!r}")
    plan = SuperbeePlan(version=version, **t.values)
    if "tile" not in t.forced and plan.tile == 1 and superbee_tile_unfit(dev, plan, itemsize):
        plan = replace(plan, tile=0)          # the profile's tile where it does not apply
    return validated(plan, dev, keys, t.forced, itemsize=itemsize)


def make_tke_plan(device, problem: Problem, **overrides) -> TkePlan:
    """The TKE plan from ``device.profile`` (section ``ocean``) for ``problem``; keywords
    override it: ``lanes``,
    ``wg``, ``advection``, ``stream``, ``subgroup``, ``tile``, ``transfer``, ``superbee=dict(...)`` (the Superbee plan's keywords
    and ``version``, for ``advection="stored"``), ``solver=dict(...)`` (keywords forced on
    ``clts.solve_tridiagonal``)."""
    dev, itemsize = device, problem.itemsize
    over = {k: v for k, v in overrides.items() if v is not None}
    solver = over.pop("solver", {}) or {}
    sb = over.pop("superbee", {}) or {}
    t = read_tunables(dev, dict(TKE_KEYS, inline_max_itemsize="ocean.tke.inline_max_itemsize"),
                      over, extra=("solver", "superbee"))
    imax = t.values.pop("inline_max_itemsize")
    if isinstance(imax, bool) or not isinstance(imax, int) or imax < 0:
        raise ValueError(f"inline_max_itemsize must be an int >= 0, got {imax!r}")
    if "advection" not in t.forced and t.values["advection"] == "inline" and itemsize > imax:
        t.values["advection"] = "stored"        # registers: see the module docstring
    for name, d in (("solver", solver), ("superbee", sb)):
        if not isinstance(d, dict):
            raise TypeError(f"{name} must be a dict of keywords, not {type(d).__name__}")
    sb = dict(sb)
    sb_plan = make_superbee_plan(dev, problem, **sb)
    plan = TkePlan(superbee=sb_plan, solver=tuple(sorted(solver.items())), **t.values)
    if "tile" not in t.forced and plan.tile == 1 and tile_unfit(dev, plan, itemsize,
                                                                problem.levels):
        plan = replace(plan, tile=0)          # the profile's tile where it does not apply
    return validated(plan, dev, TKE_KEYS, t.forced, itemsize=itemsize, levels=problem.levels)
