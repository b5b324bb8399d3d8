"""The launches of the ocean routines on device arrays: the Superbee kernel, the TKE step around
its vertical solve (the solver Plan run directly, its Plans and programs cached per device,
every temporary allocated before the first launch), the work-item ranges and grid arguments.
Internal to ``clts.ocean`` (api.py checks the arguments and stages numpy data)."""
from __future__ import annotations

import numpy as np

from ..runtime import launch, round_up
from ..runtime.launch import fixed_local
from ..runtime.plans import cached_under_profile
from ..runtime.programs import build_program, built, prebuild
from ..runtime.temps import temp, temps
from ..tridiag.run import cached_plan, plan_temps, run_plan, shared_counter
from .plan import make_tke_plan


def _superbee_spec(plan, real, nz, vel_stride=1, vel_offset=0):
    tile = (plan.tile_x, plan.tile_y, plan.tile_z) if plan.version == "tiled" else (0, 0, 0)
    return "ocean/superbee.cl.mako", dict(
        real=real, lanes=plan.lanes, COLS2=int(plan.lanes <= nz), tile_x=tile[0],
        tile_y=tile[1], tile_z=tile[2], VS=int(vel_stride), VO=int(vel_offset),
        tile=plan.wg if _velocity_tile(plan, vel_stride) else 0)


def _velocity_tile(plan, vel_stride) -> bool:
    """The fused kernel stages [x, y, z, T] velocities through the tile (ocean.superbee.fused.tile)."""
    return bool(plan.tile) and plan.version == "fused" and vel_stride > 1


def run_superbee(dev, plan, dtype, arrs, outs, shape, dt, vel_stride=1, vel_offset=0,
                 prg=None):
    """Launch the Superbee kernel of ``plan`` on device arrays (q, u, v, w, maskW, dxt, dyt,
    dzw, cost, cosu) writing (fe, fn, ft); velocities read as ``vel[cell * vel_stride +
    vel_offset]``; ``prg``: its program, when the caller has it at hand."""
    if prg is None:
        real = "double" if dtype == np.float64 else "float"
        prg = build_program(dev, *_superbee_spec(plan, real, shape[2], vel_stride, vel_offset))
    kern, g, l, dims = _superbee_launch(dev, plan, prg, shape)
    launch(dev, kern, g, l, *[a.data for a in arrs], dtype.type(dt), *[o.data for o in outs],
           *dims)


def _superbee_launch(dev, plan, prg, shape):
    """(kernel, global size, local size, grid arguments) of ``plan``'s Superbee launch on a
    grid of ``shape`` (nx, ny, nz) from its program ``prg``."""
    nx, ny, nz = shape
    if plan.version == "tiled":
        g = tuple(round_up(s, t) for s, t in zip((nz, ny, nx), (plan.tile_z, plan.tile_y,
                                                                  plan.tile_x)))
        return prg.kernel("superbee_tiled"), g, (plan.tile_z, plan.tile_y, plan.tile_x), \
            _dims(nx, ny, nz)
    g, l = _cell_range(dev, nx * ny * nz, plan.lanes, plan.wg)
    return prg.kernel("superbee_fused"), g, l, _dims(nx, ny, nz)


def _cell_range(dev, ncells, lanes, wg):
    """(global, local) of a cell-parallel kernel: one work-item per ``lanes`` cells (the
    kernels return at once past the last cell). ``wg`` 0 leaves the local size to the driver,
    except where the driver compiles a kernel per local size (pocl): there it picks it from
    the range, so that every grid, slab and lane count compiled each kernel again at its first
    enqueue; ``fixed_local``'s power-of-two buckets instead."""
    n = -(-ncells // lanes)
    if wg:
        return (round_up(n, wg),), (wg,)
    return fixed_local(dev, (n,))


def _magic(d: int) -> np.uint64:
    """ceil(2^64 / d): the kernels' quotient n // d = mul_hi(n, magic) (0 for d = 1)."""
    return np.uint64(0 if d == 1 else -(-(1 << 64) // d))


def _dims(nx, ny, nz):
    return (np.int32(nx), np.int32(ny), np.int32(nz), _magic(ny), _magic(nz))


def _solver_plan(dev, nz, ncol, dtype, solver: dict):
    """The tridiagonal plan ``clts.solve_tridiagonal(..., start=, **solver)`` makes for ``ncol``
    columns of ``nz`` levels in the natural layout (made once per shape: ``cached_plan``)."""
    for old, new in (("method", "version"), ("prefetch", "prefetch_items")):
        if old in solver:
            solver[new] = solver.pop(old)
    return cached_plan(dev, nz, ncol, "natural", dtype, True, **solver)


def _cached_tke_plan(dev, problem, overrides):
    """``make_tke_plan(dev, problem, **overrides)``, made once per device, problem, keywords
    and state of the profile's ``ocean`` section (a tuner or a test may change it in memory)."""
    key = (problem, repr(sorted(overrides.items())) if overrides else "")
    return cached_under_profile(dev, "ocean.tke_plans", key, "ocean",
                                lambda: make_tke_plan(dev, problem, **overrides))


def _tke_programs(dev, plan, solver, real, T, levels, nz):
    """The TKE step's program and the stored advection's Superbee program (None for the
    inline version); on a first call built with the solver's at once."""
    spec = ("ocean/tke.cl.mako", dict(
        real=real, lanes=plan.lanes, COLS2=int(plan.lanes <= nz), stream=plan.stream, T=T,
        TAU=levels["tau"], TAUP1=levels["taup1"], TAUM1=levels["taum1"],
        advection=plan.advection, subgroup=plan.subgroup, tile=plan.wg if plan.tile else 0))
    sb = ([_superbee_spec(plan.superbee, real, nz, T, levels["tau"])]
          if plan.advection == "stored" else [])
    if not built(dev, *spec):
        from ..tridiag.programs import plan_specs
        prebuild(dev, [spec] + plan_specs(dev, solver) + sb)
    return build_program(dev, *spec), (build_program(dev, *sb[0]) if sb else None)


def run_tke(dev, plan, dtype, d, outs, dims, levels, cst, solver):
    """Enqueue the TKE step on device arrays ``d`` (by name) writing ``outs``, the vertical
    solves with the tridiagonal Plan ``solver`` (of nx * ny columns); returns the temporaries
    to keep alive until the queue has run them. Every temporary is allocated before the first
    launch (no host work between the kernels but their enqueues)."""
    nx, ny, nz, T = dims
    real = "double" if dtype == np.float64 else "float"
    rt = dtype.type
    key = (id(plan), id(solver), dims, tuple(sorted(levels.items())), real)
    cache = dev.state.constant("ocean.tke_programs", dict)
    hit = cache.get(key)
    if hit is not None and hit[0] is plan and hit[1] is solver:
        systems, step, sb, g, l, dims_args = hit[2]
    else:
        prg, sb_prg = _tke_programs(dev, plan, solver, real, T, levels, nz)
        systems, step = prg.kernel("tke_systems"), prg.kernel("tke_step")
        sb = (_superbee_launch(dev, plan.superbee, sb_prg, (nx, ny, nz))
              if plan.advection == "stored" else None)
        g, l = _cell_range(dev, nx * ny * nz, plan.lanes, plan.wg)
        dims_args = _dims(nx, ny, nz)
        if len(cache) >= 256:
            cache.clear()
        # both Plans kept alive: their ids are not reused
        cache[key] = (plan, solver, (systems, step, sb, g, l, dims_args))
    ncol, shape = nx * ny, (nx, ny, nz)
    # one system per column in the grid's own layout (ghost columns start at -1: zeros)
    # and q3 = tke[..., tau], contiguous; the stored advection's three fluxes
    stored = plan.advection == "stored"
    a, b, c, rhs, x, q3, *fluxes = temps(dev, [(ncol, nz)] * 5 + [shape] * (4 if stored else 1),
                                         dtype)
    start = temp(dev, (ncol,), np.int32)
    solver_temps = plan_temps(dev, solver, dtype)
    fluxes = fluxes or [x] * 3
    counter = shared_counter(dev)      # never read: TKE's systems are diagonally dominant
    dt = cst["dt_mom"]
    launch(dev, systems, g, l, d["kbot"].data, d["kappaM"].data,
           d["mxl"].data, d["forc"].data, d["forc_tke_surface"].data, d["tke"].data,
           d["dzt"].data, d["dzw"].data, rt(dt), rt(cst["alpha_tke"]), rt(dt * cst["c_eps"]),
           a.data, b.data, c.data, rhs.data, start.data, q3.data, *dims_args)
    keep = [a, b, c, rhs, x, start, q3, counter] + fluxes
    keep += run_plan(dev, solver, a, b, c, rhs, x, start, counter, temps=solver_temps)
    if stored:                           # run_superbee's launch, its geometry cached above
        sb_kern, sb_g, sb_l, sb_dims = sb
        launch(dev, sb_kern, sb_g, sb_l, q3.data,
               *[d[n].data for n in ("u", "v", "w", "maskW", "dxt", "dyt", "dzw", "cost",
                                     "cosu")], rt(cst["dt_tracer"]),
               *[f.data for f in fluxes], *sb_dims)
    # (fluxes: x three times where the inline version reads none)
    tke_out, dtke_out, corr = outs
    eps = cst["AB_eps"]
    launch(dev, step, g, l,
           *[d[n].data for n in ("tke", "dtke", "u", "v", "w", "maskU", "maskV", "maskW", "dxt",
                                 "dxu", "dyt", "dyu", "dzw", "cost", "cosu", "kbot")],
           x.data, q3.data, *[f.data for f in fluxes], rt(dt), rt(cst["dt_tracer"]),
           rt(cst["K_h_tke"]), rt(1.5 + eps), rt(0.5 + eps), tke_out.data, dtke_out.data,
           corr.data, *dims_args)
    return keep
