"""Ocean search spaces for clts-tune: the TKE step's lanes / work-group / advection mode, the
Superbee versions' parameters and the version ``auto`` runs.

Every candidate runs through ``clts.ocean.tke`` / ``clts.ocean.superbee_fluxes`` with its
parameters forced, on the pyhpc-benchmarks inputs (float64), and is checked against the numpy
float64 reference (``reference.py``) over the whole arrays."""
from __future__ import annotations

import numpy as np

from ..tune import Tunable, register
from ..tune.sizing import grow_pow2, rate
from . import reference
from .api import superbee_fluxes, tke
from .inputs import benchmark_inputs
from .plan import tile_fits

_RTOL = 1e-9


def _tke_workload(size: int) -> dict:
    x = benchmark_inputs(size)
    return {"inputs": x, "ref": reference.tke(*x.values())}


def _superbee_workload(size: int) -> dict:
    x = benchmark_inputs(size)
    args = (x["tke"][..., 0], x["u"][..., 0], x["v"][..., 0], x["w"][..., 0], x["maskW"],
            x["dxt"], x["dyt"], x["dzw"], x["cost"], x["cosu"], 1.0)
    args = tuple(np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a for a in args)
    return {"args": args, "ref": reference.superbee_fluxes(*args)}


def _close(result, w) -> bool:
    return all(np.allclose(np.asarray(r), e, rtol=_RTOL, atol=0) for r, e in zip(result, w["ref"]))


#: host bytes per grid cell of the TKE step's inputs and outputs, and of Superbee's
_TKE_CELL, _SUPERBEE_CELL = 200, 64


def _cells(quick, device, cell_bytes):
    """2^16 (quick) / 2^18 cells on a CPU; on a GPU the power of two that fills it (a cell per
    work-item) and holds the workload byte minimum (2^19 for TKE, 2^20 for Superbee)."""
    return grow_pow2(device, 1 << (16 if quick else 18), cell_bytes)


def _tke_sizes(quick, device=None):
    return [{"cells": _cells(quick, device, _TKE_CELL)}]


def _superbee_sizes(quick, device=None):
    return [{"cells": _cells(quick, device, _SUPERBEE_CELL)}]


def _superbee_workloads(quick, device=None):
    return [_superbee_workload(s["cells"]) for s in _superbee_sizes(quick, device)]


def _wg_ok(p, device):
    return p.get("wg", 0) <= device.max_work_group


register(Tunable(
    name="ocean.tke", section="ocean.tke",
    params={"lanes": [1, 2, 4, 8, 16], "wg": [0, 16, 64, 256], "advection": ["inline", "stored"],
            "stream": [0, 1]},
    workloads=lambda quick, device=None: [_tke_workload(s["cells"])
                                          for s in _tke_sizes(quick, device)],
    sizes=_tke_sizes,
    run=lambda d, p, w: tke(*w["inputs"].values(), device=d, **p), check=_close,
    constraint=_wg_ok,
    description="TKE step: cells per work-item (realN lanes), work-group size (0: the driver's), "
                "Superbee fluxes computed in the step kernel or stored by the superbee kernel, "
                "non-temporal stores of the outputs"))

register(Tunable(
    name="ocean.superbee.fused", section="ocean.superbee.fused",
    params={"lanes": [1, 2, 4, 8, 16], "wg": [0, 16, 64, 256]},
    workloads=_superbee_workloads, sizes=_superbee_sizes,
    run=lambda d, p, w: superbee_fluxes(*w["args"], device=d, version="fused", **p),
    check=_close, constraint=_wg_ok,
    description="fused Superbee: cells per work-item (realN lanes), work-group size"))

register(Tunable(
    name="ocean.superbee.tiled", section="ocean.superbee.tiled",
    params={"tile_z": [4, 8, 16, 32], "tile_y": [1, 2, 4, 8], "tile_x": [1, 2, 4]},
    workloads=_superbee_workloads, sizes=_superbee_sizes,
    run=lambda d, p, w: superbee_fluxes(*w["args"], device=d, version="tiled", **p),
    check=_close,
    constraint=lambda p, d: tile_fits(d, p["tile_z"], p["tile_y"], p["tile_x"], 8),
    work_group=lambda p: p["tile_z"] * p["tile_y"] * p["tile_x"],
    occupancy=lambda p, d: rate(d, p["tile_z"] * p["tile_y"] * p["tile_x"],
                                (p["tile_z"] + 3) * (p["tile_y"] + 3) * (p["tile_x"] + 3) * 16),
    description="tiled Superbee: cells per work-group (z, y, x); the (tile+3)^3 boxes of tracer "
                "and mask in local memory"))

register(Tunable(
    name="ocean.superbee.version", section="ocean.superbee",
    params={"version": ["fused", "tiled"]},
    workloads=_superbee_workloads, sizes=_superbee_sizes,
    run=lambda d, p, w: superbee_fluxes(*w["args"], device=d, **p),
    check=_close,
    description="the Superbee version auto runs (each with the profile's parameters; tune "
                "ocean.superbee.fused / .tiled first)"))
