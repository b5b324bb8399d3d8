"""clts.ocean.tke with ``tile=1`` (``ocean.tke.tile``, the GPU profiles' choice): the time-level
arrays staged through a local-memory tile per work-group give the untiled results bit for bit,
on one CPU driver (``gpu_layout``: no CPU profile tiles) and on GPUs, both precisions, grids
that are no multiple of the work-group, other time levels; the Plan applies the profile's tile
only where it can; a tiny Oclgrind case. The same for the Superbee kernel of the stored
advection, ``superbee={"tile": 1}`` (``ocean.superbee.fused.tile``: level tau of the
[x, y, z, T] velocities staged)."""
from __future__ import annotations

import logging
import re
import types

import numpy as np
import pytest

import clts
from clts.ocean import reference
from clts.ocean.inputs import SCALED_CONSTANTS, scaled_inputs
from clts.ocean.plan import (Problem, make_superbee_plan, make_tke_plan, superbee_tile_bytes,
                             superbee_tile_unfit, tile_bytes)
from clts.runtime import emulation


def _pocl():
    from clts.runtime import usable
    hits = [i for i in usable() if "portable computing" in i.platform.lower()]
    if not hits:
        pytest.skip("emulation tests run on pocl; no pocl device here")
    return hits[0]


def _inputs(shape, dtype, seed=0, levels=3):
    x = scaled_inputs(shape, seed=seed)
    if levels > 3:
        for name in ("u", "v", "w", "tke", "dtke"):
            x[name] = np.concatenate([x[name], x[name][..., :levels - 3] * 0.5], axis=-1)
    return {k: v.astype(dtype) if v.dtype.kind == "f" else v for k, v in x.items()}


def _same(a, b):
    for p, q in zip(a, b):
        np.testing.assert_array_equal(p, q)


#: (shape, work-group, dtype) of the tile cases: the work-group sweep in float64 (the tile's
#: size is built into the program), float32 with one of them
TILE_CASES = [((9, 11, 7), 64, np.float64), ((13, 6, 5), 16, np.float64),
              ((7, 8, 3), 24, np.float64), ((7, 8, 3), 24, np.float32)]


@pytest.mark.gpu_layout
@pytest.mark.parametrize("advection", ["inline", "stored"])
@pytest.mark.parametrize("shape,wg,dtype", TILE_CASES)
def test_tile_is_bit_identical(device, dtype, advection, shape, wg):
    """693 / 390 / 168 cells: the last work-group is partial; wg 24 is no power of two.
    Float32 with wg 24 only (``TILE_CASES``)."""
    x = _inputs(shape, dtype, seed=shape[0])
    kw = dict(device=device, lanes=1, wg=wg, advection=advection, **SCALED_CONSTANTS)
    untiled = clts.ocean.tke(*x.values(), tile=0, **kw)
    _same(clts.ocean.tke(*x.values(), tile=1, **kw), untiled)
    if dtype == np.float64:
        ref = reference.tke(*x.values(), **SCALED_CONSTANTS)
        for got, want in zip(untiled, ref):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=0)


def test_tile_other_time_levels_and_device_arrays(device):
    """A fourth time level, tau / taup1 / taum1 permuted; device arrays in and out; slabs."""
    import pyopencl.array as cla
    x = _inputs((8, 9, 6), np.float64, seed=5, levels=4)
    kw = dict(device=device, lanes=1, wg=32, tau=2, taup1=0, taum1=3, **SCALED_CONSTANTS)
    untiled = clts.ocean.tke(*x.values(), tile=0, **kw)
    _same(clts.ocean.tke(*x.values(), tile=1, **kw), untiled)
    dx = [cla.to_device(device.queue, np.ascontiguousarray(v)) for v in x.values()]
    _same([o.get() for o in clts.ocean.tke(*dx, tile=1, **kw)], untiled)
    clts.set_options(max_chunk="3")          # slabs of 3 x rows
    _same(clts.ocean.tke(*x.values(), tile=1, **kw), untiled)


@pytest.mark.parametrize("name", ["a100", "mi100", "intel-max-1550", "intel-arc-a770"])
def test_gpu_profiles_tile_and_give_the_same_bits(name):
    """Under emulated GPUs (on pocl) auto stages through the tile, and its results are those
    of the same Plan untiled."""
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    gpu = emulation.emulate(name, _pocl())
    dtype = np.float64 if gpu.fp64 else np.float32
    assert make_tke_plan(gpu, Problem(np.dtype(dtype).itemsize)).tile == 1
    x = _inputs((10, 9, 11), dtype, seed=2)
    auto = clts.ocean.tke(*x.values(), device=gpu, **SCALED_CONSTANTS)
    _same(auto, clts.ocean.tke(*x.values(), device=gpu, tile=0, **SCALED_CONSTANTS))


def test_plan_applies_the_tile_only_where_it_can(device):
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    if device.type == "cpu":                      # CPU profiles: off
        assert make_tke_plan(device, Problem()).tile == 0
    gpu = emulation.emulate("a100", _pocl())
    assert make_tke_plan(gpu, Problem(8)).tile == 1
    # the profile's tile is dropped where it does not apply, a forced one is an error
    assert make_tke_plan(gpu, Problem(8), lanes=4).tile == 0
    assert make_tke_plan(gpu, Problem(8), wg=0).tile == 0
    assert make_tke_plan(gpu, Problem(8, levels=4000)).tile == 0    # over local memory
    with pytest.raises(ValueError, match="tile.*lanes=1"):
        make_tke_plan(gpu, Problem(8), lanes=4, tile=1)
    with pytest.raises(ValueError, match="tile.*wg >= 1"):
        make_tke_plan(device, Problem(8), lanes=1, wg=0, tile=1)
    with pytest.raises(ValueError, match="tile.*local memory"):
        make_tke_plan(gpu, Problem(8, levels=4000), tile=1)
    with pytest.raises(ValueError, match="tile"):
        make_tke_plan(gpu, Problem(8), tile=2)
    x = _inputs((6, 6, 3), np.float64)
    with pytest.raises(ValueError, match="tile"):
        clts.ocean.tke(*x.values(), device=device, lanes=8, tile=1)


@pytest.mark.parametrize("advection", ["inline", "stored"])
@pytest.mark.parametrize("real,itemsize", [("double", 8), ("float", 4)])
def test_tile_bytes_are_the_rendered_local_array(advection, real, itemsize):
    from clts.runtime.programs import render
    for wg, T in ((256, 3), (24, 5)):
        src = render("ocean/tke.cl.mako", dict(
            real=real, lanes=1, COLS2=1, stream=0, T=T, TAU=1, TAUP1=0, TAUM1=2,
            advection=advection, subgroup=0, tile=wg))
        sizes = [int(n) for n in re.findall(r"__local real tl\[(\d+)\]", src)]
        assert len(sizes) == 2 and max(sizes) * itemsize == tile_bytes(wg, T, itemsize,
                                                                       advection)


@pytest.mark.oclgrind
def test_tile_tiny_oclgrind(device):
    """Barriers, local-memory races and uninitialised reads of the tile: a partial last group,
    both advections."""
    dtype = np.float64 if device.fp64 else np.float32
    x = _inputs((6, 7, 3), dtype, seed=1)
    ref = reference.tke(*x.values(), **SCALED_CONSTANTS)
    for advection in ("inline", "stored"):
        out = clts.ocean.tke(*x.values(), device=device, lanes=1, wg=16, tile=1,
                             advection=advection, superbee={"version": "fused", "lanes": 1},
                             **SCALED_CONSTANTS)
        for got, want in zip(out, ref):
            np.testing.assert_allclose(got, want, rtol=1e-9 if dtype == np.float64 else 1e-4,
                                       atol=0 if dtype == np.float64 else
                                       1e-5 * np.abs(want).max())


def _sb(wg, tile, lanes=1):
    return {"version": "fused", "lanes": lanes, "wg": wg, "tile": tile}


@pytest.mark.gpu_layout
@pytest.mark.parametrize("shape,wg,dtype", [((9, 11, 7), 64, np.float64),
                                            ((7, 8, 3), 24, np.float64),
                                            ((7, 8, 3), 24, np.float32)])
def test_superbee_velocity_tile_is_bit_identical(device, dtype, shape, wg):
    """TKE's stored advection: the Superbee kernel with the velocity tile gives the untiled
    fluxes, hence the same TKE bits (partial last group; wg 24 no power of two; 4 levels).
    Float32 with wg 24 only; the TKE step's own work-group 64, as in test_tile_is_bit_identical
    (the untiled TKE program and local size of its 64 case)."""
    x = _inputs(shape, dtype, seed=shape[1], levels=4 if wg == 24 else 3)
    kw = dict(device=device, lanes=1, wg=64, advection="stored", tile=0, **SCALED_CONSTANTS)
    if wg == 24:
        kw.update(tau=3, taup1=0, taum1=1)
    untiled = clts.ocean.tke(*x.values(), superbee=_sb(wg, 0), **kw)
    _same(clts.ocean.tke(*x.values(), superbee=_sb(wg, 1), **kw), untiled)


def test_superbee_tile_on_gpu_profiles_only_where_it_applies(device):
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    if device.type == "cpu":
        assert make_superbee_plan(device, Problem()).tile == 0
    gpu = emulation.emulate("a100", _pocl())
    assert make_superbee_plan(gpu, Problem(8)).tile == 1
    assert make_tke_plan(gpu, Problem(8)).superbee.tile == 1
    assert make_superbee_plan(gpu, Problem(8), lanes=4).tile == 0
    assert make_superbee_plan(gpu, Problem(8), wg=0).tile == 0
    with pytest.raises(ValueError, match="tile.*lanes=1"):
        make_superbee_plan(gpu, Problem(8), lanes=4, tile=1)
    small = types.SimpleNamespace(local_mem=superbee_tile_bytes(256, 8) - 8)
    assert "local memory" in superbee_tile_unfit(small, make_superbee_plan(gpu, Problem(8)), 8)
    with pytest.raises(ValueError, match="tile"):
        make_superbee_plan(gpu, Problem(8), tile=2)
    # 3-D velocities (superbee_fluxes itself) need no tile: the same source as untiled
    from clts.ocean.launches import _superbee_spec
    plan = make_superbee_plan(gpu, Problem(8))
    assert _superbee_spec(plan, "double", 8)[1]["tile"] == 0
    assert _superbee_spec(plan, "double", 8, 3, 1)[1]["tile"] == plan.wg


@pytest.mark.parametrize("name", ["a100", "mi100"])
def test_gpu_profiles_stage_superbee_velocities_with_the_same_bits(name):
    """Float64 under emulated GPUs (stored advection: inline_max_itemsize 4): auto's Superbee
    stages the velocities, and its results are those of the same Plans untiled."""
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    gpu = emulation.emulate(name, _pocl())
    plan = make_tke_plan(gpu, Problem(8))
    assert plan.advection == "stored" and plan.superbee.tile == 1
    x = _inputs((10, 9, 11), np.float64, seed=4)
    auto = clts.ocean.tke(*x.values(), device=gpu, **SCALED_CONSTANTS)
    _same(auto, clts.ocean.tke(*x.values(), device=gpu, superbee={"tile": 0},
                               **SCALED_CONSTANTS))


def test_superbee_tile_bytes_are_the_rendered_local_array():
    from clts.runtime.programs import render
    for real, itemsize in (("double", 8), ("float", 4)):
        for wg, T in ((256, 3), (24, 5)):
            src = render("ocean/superbee.cl.mako", dict(
                real=real, lanes=1, COLS2=1, tile_x=0, tile_y=0, tile_z=0, VS=T, VO=1,
                tile=wg))
            (n,) = [int(n) for n in re.findall(r"__local real tl\[(\d+)\]", src)]
            assert n * itemsize == superbee_tile_bytes(wg, itemsize)
            assert f"reqd_work_group_size({wg}, 1, 1)" in src


@pytest.mark.oclgrind
def test_superbee_tile_tiny_oclgrind(device):
    """Barrier, local-memory races and uninitialised reads of the velocity tile: a partial
    last group."""
    dtype = np.float64 if device.fp64 else np.float32
    x = _inputs((6, 7, 3), dtype, seed=1)
    ref = reference.tke(*x.values(), **SCALED_CONSTANTS)
    out = clts.ocean.tke(*x.values(), device=device, lanes=1, wg=16, tile=0, advection="stored",
                         superbee=_sb(16, 1), **SCALED_CONSTANTS)
    for got, want in zip(out, ref):
        np.testing.assert_allclose(got, want, rtol=1e-9 if dtype == np.float64 else 1e-4,
                                   atol=0 if dtype == np.float64 else 1e-5 * np.abs(want).max())
