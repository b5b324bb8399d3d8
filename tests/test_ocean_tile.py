"""clts.ocean.tke with ``tile=1`` (``ocean.tke.tile``, the GPU profiles' choice): the time-level
arrays staged through a local-memory tile per work-group give the untiled results bit for bit,
on every device, both precisions, grids that are no multiple of the work-group, other time
levels; the Plan applies the profile's tile only where it can; a tiny Oclgrind case."""
from __future__ import annotations

import logging
import re

import numpy as np
import pytest

import clts
from clts.ocean import reference
from clts.ocean.inputs import SCALED_CONSTANTS, scaled_inputs
from clts.ocean.plan import Problem, make_tke_plan, tile_bytes
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


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("advection", ["inline", "stored"])
@pytest.mark.parametrize("shape,wg", [((9, 11, 7), 64), ((13, 6, 5), 16), ((7, 8, 3), 24)])
def test_tile_is_bit_identical(device, dtype, advection, shape, wg):
    """693 / 390 / 168 cells: the last work-group is partial; wg 24 is no power of two."""
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
