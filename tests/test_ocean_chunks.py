"""clts.ocean on grids split into slabs of x rows (clts/ocean/slabs.py): every chunking, forced
with CLTS_MAX_CHUNK, by an allocation failure or by the 32-bit cell limit, gives exactly the
bits of the whole-grid run, on every device, float32 and float64, any input layout."""
from __future__ import annotations

import numpy as np
import pytest

import clts
from clts.ocean import reference, slabs
from clts.ocean.inputs import SCALED_CONSTANTS, benchmark_inputs, scaled_inputs


@pytest.fixture
def chunk_log(monkeypatch):
    """The chunk lists of the slab runs of a test (each run appends its list)."""
    runs = []
    real = slabs._run_slabs

    def spy(dev, what, nx, chunks, *rest):
        runs.append((what, list(chunks)))
        return real(dev, what, nx, chunks, *rest)
    monkeypatch.setattr(slabs, "_run_slabs", spy)
    return runs


def sb_args(x, dt=0.5):
    return (x["tke"][..., 0], x["u"][..., 0], x["v"][..., 0], x["w"][..., 0], x["maskW"],
            x["dxt"], x["dyt"], x["dzw"], x["cost"], x["cosu"], dt)


def as_dtype(x, dtype):
    return {k: (v.astype(dtype) if v.dtype.kind == "f" else v) for k, v in x.items()}


def assert_same(got, want):
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype and g.flags.c_contiguous
        np.testing.assert_array_equal(g, w)


def whole_and_chunked(monkeypatch, call, cap):
    clts.set_options(max_chunk=None)
    whole = call()
    clts.set_options(max_chunk=cap)
    return whole, call()


# nx = 13: caps 1 and 2 (chunks no wider than the halo), 3 (uneven: 3+3+3+3+1), 7 (two
# uneven chunks), 12 (a last chunk of one row at the grid's edge); the cap sweep in float64,
# float32 with cap 3 (pocl compiles each kernel per local size, and its local size follows
# each slab's range: every cap of each precision compiled anew)
@pytest.mark.parametrize("cap,dtype", [(1, np.float64), (2, np.float64), (3, np.float64),
                                       (7, np.float64), (12, np.float64), (3, np.float32)])
def test_chunked_equals_whole(device, monkeypatch, chunk_log, dtype, cap):
    x = as_dtype(scaled_inputs((13, 9, 5), seed=cap), dtype)
    sb_whole, sb = whole_and_chunked(
        monkeypatch, lambda: clts.ocean.superbee_fluxes(*sb_args(x), device=device), cap)
    tke_whole, tk = whole_and_chunked(
        monkeypatch, lambda: clts.ocean.tke(*x.values(), device=device, **SCALED_CONSTANTS),
        cap)
    assert_same(sb, sb_whole)
    assert_same(tk, tke_whole)
    want = -(-13 // cap)
    assert [(w, len(c)) for w, c in chunk_log] == [("superbee_fluxes", want), ("tke", want)]
    # and against the float64 reference
    ref_sb = reference.superbee_fluxes(*sb_args(x))
    ref_tke = reference.tke(*x.values(), **SCALED_CONSTANTS)
    for got, ref in zip(sb + tk, ref_sb + ref_tke):
        if dtype == np.float64:
            np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-300)
        else:
            assert np.max(np.abs(got - ref)) <= 1e-5 * max(1.0, np.max(np.abs(ref)))


@pytest.mark.parametrize("cap", [2, 5])
def test_benchmark_inputs_chunked(device, monkeypatch, chunk_log, cap):
    """The benchmark's inputs (badly scaled, land columns): chunked bits = whole bits, and the
    Superbee fluxes bit-identical to the reference."""
    x = benchmark_inputs(2 ** 12)
    sb_whole, sb = whole_and_chunked(
        monkeypatch, lambda: clts.ocean.superbee_fluxes(*sb_args(x, 1.0), device=device), cap)
    tke_whole, tk = whole_and_chunked(
        monkeypatch, lambda: clts.ocean.tke(*x.values(), device=device), cap)
    assert_same(sb, sb_whole)
    assert_same(tk, tke_whole)
    assert_same(sb, reference.superbee_fluxes(*sb_args(x, 1.0)))
    assert len(chunk_log) == 2 and all(len(c) == -(-32 // cap) for _, c in chunk_log)


def test_layouts_chunked(device, monkeypatch, chunk_log):
    """Fortran-ordered and strided inputs, chunked, give the C-ordered whole run's bits."""
    x = scaled_inputs((11, 8, 4), seed=3)
    clts.set_options(max_chunk=None)
    sb_whole = clts.ocean.superbee_fluxes(*sb_args(x), device=device)
    tke_whole = clts.ocean.tke(*x.values(), device=device, **SCALED_CONSTANTS)
    fortran = {k: np.asfortranarray(v) for k, v in x.items()}
    strided = {}
    for k, v in x.items():            # every other element of a twice-as-large array
        big = np.zeros(tuple(2 * s for s in v.shape), v.dtype)
        big[tuple(slice(None, None, 2) for _ in v.shape)] = v
        strided[k] = big[tuple(slice(None, None, 2) for _ in v.shape)]
    clts.set_options(max_chunk=3)
    for y in (fortran, strided):
        assert_same(clts.ocean.superbee_fluxes(*sb_args(y), device=device), sb_whole)
        assert_same(clts.ocean.tke(*y.values(), device=device, **SCALED_CONSTANTS), tke_whole)
    assert len(chunk_log) == 4


def test_allocation_failure_retries_in_slabs(device, chunk_log):
    """Launches of the whole grid fail as on a device too small for it: the call runs again in
    halves, then quarters, ... and returns the whole run's bits."""
    from clts.runtime import faults
    x = scaled_inputs((24, 8, 4), seed=5)
    sb_whole = clts.ocean.superbee_fluxes(*sb_args(x), device=device)
    tke_whole = clts.ocean.tke(*x.values(), device=device, **SCALED_CONSTANTS)
    # one work-item per cell: the whole grid (768) and halves (16 rows with halos: 512) fail,
    # quarters (6 rows + 4 halo rows: 320) run; TKE's own Superbee launch too (a GPU profile's
    # work-group of 256 would round the quarter up to 512)
    one = dict(lanes=1, wg=0)
    with faults.inject("alloc", times=10 ** 6, min_items=400):
        sb = clts.ocean.superbee_fluxes(*sb_args(x), device=device, **one)
        tk = clts.ocean.tke(*x.values(), device=device, superbee=one, **one,
                            **SCALED_CONSTANTS)
    assert_same(sb, sb_whole)
    assert_same(tk, tke_whole)
    assert [(w, len(c)) for w, c in chunk_log] == [("superbee_fluxes", 2), ("superbee_fluxes", 4),
                                                    ("tke", 2), ("tke", 4)]


def test_cell_limit_splits(device, monkeypatch, chunk_log):
    """More cells than 32-bit indices reach (a lowered limit here): slabs under the limit."""
    x = scaled_inputs((10, 6, 3), seed=7)
    sb_whole = clts.ocean.superbee_fluxes(*sb_args(x), device=device)
    monkeypatch.setattr(slabs, "MAX_CELLS", 6 * 6 * 3)      # a slab: 2 rows + 2 x 2 halo
    assert_same(clts.ocean.superbee_fluxes(*sb_args(x), device=device), sb_whole)
    assert [len(c) for _, c in chunk_log] == [5]
    monkeypatch.setattr(slabs, "MAX_CELLS", 4 * 6 * 3)      # not even one row with its halo
    with pytest.raises(clts.DeviceError, match="halo"):
        clts.ocean.superbee_fluxes(*sb_args(x), device=device)


def test_device_arrays_are_not_split(device, monkeypatch, chunk_log):
    import pyopencl.array as cla
    x = scaled_inputs((9, 7, 3), seed=2)
    clts.set_options(max_chunk=2)
    want = clts.ocean.tke(*x.values(), device=device, **SCALED_CONSTANTS)
    d = {k: cla.to_device(device.queue, np.ascontiguousarray(v)) for k, v in x.items()}
    got = clts.ocean.tke(*d.values(), device=device, **SCALED_CONSTANTS)
    assert_same([g.get() for g in got], want)
    assert len(chunk_log) == 1          # the numpy call only


@pytest.mark.oclgrind
def test_tiny_chunked_oclgrind(device, monkeypatch):
    """Slabs on the simulator: halos, uploads at offsets, downloads of the interior rows."""
    x = scaled_inputs((7, 6, 3), seed=1)
    ref = reference.tke(*x.values(), **SCALED_CONSTANTS)
    sb_ref = reference.superbee_fluxes(*sb_args(x))
    kw = dict(lanes=2, wg=0, advection="stored", superbee=dict(version="fused", lanes=2))
    clts.set_options(max_chunk=3)
    tk = clts.ocean.tke(*x.values(), device=device, **kw, **SCALED_CONSTANTS)
    sb = clts.ocean.superbee_fluxes(*sb_args(x), device=device, lanes=2)
    for got, want in zip(tk + sb, ref + sb_ref):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300)
    clts.set_options(max_chunk=None)
    assert_same(tk, clts.ocean.tke(*x.values(), device=device, **kw, **SCALED_CONSTANTS))

