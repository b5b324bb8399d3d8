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
from ..runtime.temps import temp
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
    nx, ny, nz = shape
    real = "double" if dtype == np.float64 else "float"
    tiled = plan.version == "tiled"
    if prg is None:
        prg = build_program(dev, *_superbee_spec(plan, real, nz, vel_stride, vel_offset))
    if tiled:
        g = tuple(round_up(s, t) for s, t in zip((nz, ny, nx), (plan.tile_z, plan.tile_y,
                                                                  plan.tile_x)))
        l = (plan.tile_z, plan.tile_y, plan.tile_x)
        kern = prg.kernel("superbee_tiled")
    else:
        g, l = _cell_range(dev, nx * ny * nz, plan.lanes, plan.wg)
        kern = prg.kernel("superbee_fused")
    launch(dev, kern, g, l, *[a.data for a in arrs], dtype.type(dt), *[o.data for o in outs],
           *_dims(nx, ny, nz))


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
    from ..tridiag.run import cached_plan
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
    from ..tridiag.run import plan_temps, run_plan, shared_counter
    nx, ny, nz, T = dims
    real = "double" if dtype == np.float64 else "float"
    rt = dtype.type
    key = (id(plan), id(solver), dims, tuple(sorted(levels.items())), real)
    cache = dev.state.constant("ocean.tke_programs", dict)
    hit = cache.get(key)
    if hit is not None and hit[0] is plan and hit[1] is solver:
        prg, sb_prg, g, l, dims_args = hit[2]
    else:
        prg, sb_prg = _tke_programs(dev, plan, solver, real, T, levels, nz)
        g, l = _cell_range(dev, nx * ny * nz, plan.lanes, plan.wg)
        dims_args = _dims(nx, ny, nz)
        if len(cache) >= 256:
            cache.clear()
        # both Plans kept alive: their ids are not reused
        cache[key] = (plan, solver, (prg, sb_prg, g, l, dims_args))
    ncol, shape = nx * ny, (nx, ny, nz)
    # one system per column in the grid's own layout (ghost columns start at -1: zeros)
    a, b, c, rhs, x = (temp(dev, (ncol, nz), dtype) for _ in range(5))
    start = temp(dev, (ncol,), np.int32)
    q3 = temp(dev, shape, dtype)                    # tke[..., tau], contiguous
    solver_temps = plan_temps(dev, solver, dtype)
    stored = plan.advection == "stored"
    fluxes = [temp(dev, shape, dtype) for _ in range(3)] if stored else [x] * 3
    counter = shared_counter(dev)      # never read: TKE's systems are diagonally dominant
    dt = cst["dt_mom"]
    launch(dev, prg.kernel("tke_systems"), g, l, d["kbot"].data, d["kappaM"].data,
           d["mxl"].data, d["forc"].data, d["forc_tke_surface"].data, d["tke"].data,
           d["dzt"].data, d["dzw"].data, rt(dt), rt(cst["alpha_tke"]), rt(dt * cst["c_eps"]),
           a.data, b.data, c.data, rhs.data, start.data, q3.data, *dims_args)
    keep = [a, b, c, rhs, x, start, q3, counter] + fluxes
    keep += run_plan(dev, solver, a, b, c, rhs, x, start, counter, temps=solver_temps)
    if stored:
        run_superbee(dev, plan.superbee, dtype,
                     [q3] + [d[n] for n in ("u", "v", "w", "maskW", "dxt", "dyt", "dzw", "cost",
                                            "cosu")], fluxes, shape, cst["dt_tracer"],
                     vel_stride=T, vel_offset=levels["tau"], prg=sb_prg)
    # (fluxes: x three times where the inline version reads none)
    tke_out, dtke_out, corr = outs
    eps = cst["AB_eps"]
    launch(dev, prg.kernel("tke_step"), g, l,
           *[d[n].data for n in ("tke", "dtke", "u", "v", "w", "maskU", "maskV", "maskW", "dxt",
                                 "dxu", "dyt", "dyu", "dzw", "cost", "cosu", "kbot")],
           x.data, q3.data, *[f.data for f in fluxes], rt(dt), rt(cst["dt_tracer"]),
           rt(cst["K_h_tke"]), rt(1.5 + eps), rt(0.5 + eps), tke_out.data, dtke_out.data,
           corr.data, *dims_args)
    return keep
