"""clts.ocean: Superbee fluxes and the TKE step against the float64 numpy reference, every code
version on every device, device arrays, layouts, threads, bad input, tiny Oclgrind cases."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import clts
from clts.ocean import reference
from clts.ocean.inputs import (NAMES, SCALED_CONSTANTS, benchmark_inputs, grid_shape,
                               scaled_inputs)

RTOL64 = 1e-10          # float64: every element, atol 0
F32_SCALE_TOL = 1e-5    # float32 on well-scaled inputs: |err| <= 1e-5 * max|reference|

_cache = {}


def bench(size):
    """Benchmark inputs and the reference's outputs (cached: the inputs are never modified)."""
    if size not in _cache:
        x = benchmark_inputs(size)
        _cache[size] = (x, reference.tke(*x.values()))
    return _cache[size]


def sb_args(x, tau=0, dt=1.0):
    return (x["tke"][..., tau], x["u"][..., tau], x["v"][..., tau], x["w"][..., tau],
            x["maskW"], x["dxt"], x["dyt"], x["dzw"], x["cost"], x["cosu"], dt)


def assert_all_close(got, want, rtol=RTOL64):
    for g, w in zip(got, want):
        g = g.get() if hasattr(g, "get") and not isinstance(g, np.ndarray) else g
        assert g.shape == w.shape and g.flags.c_contiguous
        np.testing.assert_allclose(g, w, rtol=rtol, atol=0)


# -- the reference -----------------------------------------------------------------------------

def _flux_loop(q, vel, fac, m, dx, dt, s, axis):
    """One Superbee face flux written out cell by cell (face s -> s+1 along axis)."""
    def at(a, d):
        idx = list(s)
        idx[axis] += d
        if axis == 2 and not 0 <= idx[2] < q.shape[2]:
            return 0.0
        return a[tuple(idx)]
    face = lambda d: at(m, d) * at(m, d + 1)  # noqa: E731
    rjp = (at(q, 2) - at(q, 1)) * face(1)
    rj = (at(q, 1) - at(q, 0)) * face(0)
    rjm = (at(q, 0) - at(q, -1)) * face(-1)
    v = vel[s]
    cr = (rjm if v > 0 else rjp) / (1e-20 if abs(rj) < 1e-20 else rj)
    cr = max(0.0, min(1.0, 2 * cr), min(2.0, cr))
    fv = fac * v
    return fv * (at(q, 1) + q[s]) * 0.5 - abs(fv) * ((1 - cr) + abs(fv * dt / dx) * cr) * rj * 0.5


def test_reference_superbee_matches_loops():
    x = scaled_inputs((7, 8, 5), seed=3)
    q, u, v, w, mw, dxt, dyt, dzw, cost, cosu, dt = sb_args(x, dt=0.7)
    fe, fn, ft = reference.superbee_fluxes(q, u, v, w, mw, dxt, dyt, dzw, cost, cosu, dt)
    nx, ny, nz = q.shape
    want = np.zeros((3,) + q.shape)
    for i in range(nx):
        for j in range(ny):
            for k in range(nz):
                s = (i, j, k)
                if 1 <= i <= nx - 3 and 2 <= j <= ny - 3:
                    want[0][s] = _flux_loop(q, u, 1.0, mw, cost[j] * dxt[i], dt, s, 0)
                if 2 <= i <= nx - 3 and 1 <= j <= ny - 3:
                    want[1][s] = _flux_loop(q, v, cosu[j], mw, cost[j] * dyt[j], dt, s, 1)
                if 2 <= i <= nx - 3 and 2 <= j <= ny - 3 and k <= nz - 2:
                    want[2][s] = _flux_loop(q, w, 1.0, mw, dzw[k], dt, s, 2)
    np.testing.assert_allclose(np.stack([fe, fn, ft]), want, rtol=1e-13, atol=1e-300)


def test_reference_tke_thomas_equals_a_dense_solve():
    """The reference's vertical solve against numpy.linalg.solve, column by column."""
    x = scaled_inputs((7, 7, 6), seed=4)
    ks, a, b, c, d = reference.tke_systems(x["kbot"], x["kappaM"], x["mxl"], x["forc"],
                                           x["forc_tke_surface"], x["tke"][..., 0], x["dzt"],
                                           x["dzw"], dt_tke=1.0, alpha_tke=1.0, c_eps=0.7)
    new = reference.tke(*x.values(), K_h_tke=0.0, dt_tracer=0.0)[0][..., 1]
    for ci, cj in np.ndindex(ks.shape):
        lo = ks[ci, cj]
        if lo < 0:
            continue
        A = np.diag(b[ci, cj, lo:]) + np.diag(a[ci, cj, lo + 1:], -1) + \
            np.diag(c[ci, cj, lo:-1], 1)
        sol = np.linalg.solve(A, d[ci, cj, lo:])
        sol[-1] = max(sol[-1], 0.0)             # the surface correction
        np.testing.assert_allclose(new[ci + 2, cj + 2, lo:], sol, rtol=1e-10, atol=1e-14)


# -- the device against the reference ----------------------------------------------------------

@pytest.mark.parametrize("size", [2 ** 12, 2 ** 14, 2 ** 16])
def test_tke_benchmark_inputs(device, size):
    x, ref = bench(size)
    assert grid_shape(size) == x["maskW"].shape
    assert_all_close(clts.ocean.tke(*x.values(), device=device), ref)


def test_tke_benchmark_inputs_2_18(device):
    x, ref = bench(2 ** 18)
    assert_all_close(clts.ocean.tke(*x.values(), device=device), ref)


@pytest.mark.parametrize("size", [2 ** 12, 2 ** 14])       # nz = 4 and 7: lanes above and below
@pytest.mark.parametrize("lanes,advection,superbee", [
    (1, "inline", "fused"), (8, "inline", "fused"), (16, "stored", "fused"),
    (2, "stored", "tiled"), (4, "stored", "fused")])
def test_tke_code_versions(device, size, lanes, advection, superbee):
    x, ref = bench(size)
    out = clts.ocean.tke(*x.values(), device=device, lanes=lanes, advection=advection,
                         superbee={"version": superbee}, wg=16 if lanes == 8 else 0)
    assert_all_close(out, ref)


@pytest.mark.parametrize("version,params", [("fused", dict(lanes=1)), ("fused", dict(lanes=8)),
                                            ("fused", dict(lanes=4, wg=32)),
                                            ("tiled", dict(tile_z=8, tile_y=4, tile_x=2)),
                                            ("tiled", dict(tile_z=4, tile_y=1, tile_x=4))])
@pytest.mark.parametrize("size", [2 ** 12, 2 ** 16])
def test_superbee_versions(device, version, params, size):
    x, _ = bench(size)
    args = sb_args(x)
    want = reference.superbee_fluxes(*args)
    got = clts.ocean.superbee_fluxes(*args, device=device, version=version, **params)
    assert_all_close(got, want, rtol=1e-13)


@pytest.mark.parametrize("stream", [0, 1])
def test_streamed_stores(device, stream):
    """Non-temporal stores on and off, into aligned numpy outputs and device arrays."""
    import pyopencl.array as cla
    x, ref = bench(2 ** 14)
    for lanes in (1, 8):
        out = clts.ocean.tke(*x.values(), device=device, lanes=lanes, stream=stream)
        assert all(o.ctypes.data % 64 == 0 for o in out if o.flags.c_contiguous)
        assert_all_close(out, ref)
    dx = [cla.to_device(device.queue, np.ascontiguousarray(v)) for v in x.values()]
    assert_all_close(clts.ocean.tke(*dx, device=device, lanes=8, stream=stream), ref)


@pytest.mark.parametrize("advection", ["inline", "stored"])
def test_required_subgroup_gives_the_same_bits(device, advection):
    """``subgroup=16`` (the Data Center GPU Max profile's; a no-op where the compiler lacks
    ``cl_intel_required_subgroup_size``): the same results as the compiler's own choice."""
    x, ref = bench(2 ** 12)
    got = [clts.ocean.tke(*x.values(), device=device, lanes=1, advection=advection,
                          subgroup=sg) for sg in (0, 16)]
    for a, b in zip(*got):
        np.testing.assert_array_equal(a, b)
    assert_all_close(got[1], ref)
    with pytest.raises(ValueError, match="subgroup"):
        clts.ocean.tke(*x.values(), device=device, subgroup=12)


def test_time_levels_and_constants(device):
    """Other tau / taup1 / taum1 and a fourth time level; other model constants."""
    x = scaled_inputs((9, 10, 6), seed=5)
    for name in ("u", "v", "w", "tke", "dtke"):
        x[name] = np.concatenate([x[name], x[name][..., :1] * 0.5], axis=-1)
    kw = dict(tau=2, taup1=0, taum1=3, dt_tracer=0.3, dt_mom=0.7, AB_eps=0.05, alpha_tke=2.0,
              c_eps=0.5, K_h_tke=0.2)
    ref = reference.tke(*x.values(), **kw)
    assert_all_close(clts.ocean.tke(*x.values(), device=device, **kw), ref)


def test_float32_well_scaled(device):
    x = scaled_inputs((24, 20, 10), seed=6)
    ref = reference.tke(*x.values(), **SCALED_CONSTANTS)
    x32 = {k: v.astype(np.float32) if v.dtype.kind == "f" else v for k, v in x.items()}
    out = clts.ocean.tke(*x32.values(), device=device, **SCALED_CONSTANTS)
    for o, r in zip(out, ref):
        assert o.dtype == np.float32
        assert np.abs(o - r).max() <= F32_SCALE_TOL * np.abs(r).max()
    args = sb_args(x32, dt=0.5)
    got = clts.ocean.superbee_fluxes(*args, device=device)
    want = reference.superbee_fluxes(*sb_args(x, dt=0.5))
    for g, w in zip(got, want):
        assert g.dtype == np.float32
        assert np.abs(g - w).max() <= F32_SCALE_TOL * np.abs(w).max()


# -- device arrays, layouts, threads -----------------------------------------------------------

def test_device_arrays_in_and_out(device):
    import pyopencl.array as cla
    x, ref = bench(2 ** 14)
    q = device.queue
    dx = {k: cla.to_device(q, np.ascontiguousarray(v)) for k, v in x.items()}
    out = clts.ocean.tke(*dx.values(), device=device)
    assert all(isinstance(o, cla.Array) for o in out)
    assert_all_close(out, ref)
    # inputs untouched on the device
    np.testing.assert_array_equal(dx["tke"].get(), x["tke"])
    # a mix: numpy metric arrays with device fields, int32 kbot
    mixed = dict(dx, dxt=x["dxt"], cosu=x["cosu"], kbot=cla.to_device(q, x["kbot"].astype(np.int32)))
    assert_all_close(clts.ocean.tke(*mixed.values(), device=device), ref)
    sb = clts.ocean.superbee_fluxes(*[cla.to_device(q, np.ascontiguousarray(a))
                                      if isinstance(a, np.ndarray) else a
                                      for a in sb_args(x)], device=device)
    assert all(isinstance(o, cla.Array) for o in sb)
    assert_all_close(sb, reference.superbee_fluxes(*sb_args(x)), rtol=1e-13)


def test_transfers_agree(device):
    x, ref = bench(2 ** 12)
    for transfer in ("copy", "host_ptr"):
        assert_all_close(clts.ocean.tke(*x.values(), device=device, transfer=transfer), ref)
        assert_all_close(clts.ocean.superbee_fluxes(*sb_args(x), device=device,
                                                    transfer=transfer),
                         reference.superbee_fluxes(*sb_args(x)), rtol=1e-13)


@pytest.mark.parametrize("max_chunk", [None, "7"])
def test_tke_out_reuses_results(device, monkeypatch, max_chunk):
    """out= (the whole grid and in slabs of x rows; both transfers; a misaligned out array
    goes through a device copy): the same results, written into the given arrays."""
    if max_chunk:
        monkeypatch.setenv("CLTS_MAX_CHUNK", max_chunk)
    x, ref = bench(2 ** 12)
    first = clts.ocean.tke(*x.values(), device=device)
    for transfer in ("copy", "host_ptr"):
        out = tuple(np.full_like(a, np.nan) for a in first)
        got = clts.ocean.tke(*x.values(), device=device, transfer=transfer, out=out)
        assert all(g is o for g, o in zip(got, out))
        assert_all_close(got, ref)
    raw = np.empty(first[0].nbytes + 128, np.uint8)      # 8 bytes off a 64-byte boundary
    off = (-raw.ctypes.data) % 64 + 8
    odd = raw[off:off + first[0].nbytes].view(first[0].dtype).reshape(first[0].shape)
    got = clts.ocean.tke(*x.values(), device=device, out=(odd,) + tuple(
        np.empty_like(a) for a in first[1:]))
    assert got[0] is odd
    assert_all_close(got, ref)
    with pytest.raises(ValueError, match="overlaps input tke"):
        clts.ocean.tke(*x.values(), device=device, out=(x["tke"],) + first[1:])
    with pytest.raises(ValueError, match=r"out\[2\] must be"):
        clts.ocean.tke(*x.values(), device=device, out=first[:2] + (first[2].T.copy()[:3],))
    with pytest.raises(TypeError, match="tuple of 3"):
        clts.ocean.tke(*x.values(), device=device, out=first[0])
    want = reference.superbee_fluxes(*sb_args(x))
    fl = clts.ocean.superbee_fluxes(*sb_args(x), device=device)
    out = tuple(np.full_like(a, np.nan) for a in fl)
    got = clts.ocean.superbee_fluxes(*sb_args(x), device=device, out=out)
    assert all(g is o for g, o in zip(got, out))
    assert_all_close(got, want, rtol=1e-13)
    args = list(sb_args(x))
    args[0] = np.array(args[0])                  # a writeable C-ordered q
    with pytest.raises(ValueError, match="overlaps input q"):
        clts.ocean.superbee_fluxes(*args, device=device, out=(args[0],) + fl[1:])


def test_layouts_and_inputs_unmodified(device):
    """Fortran order, strided views, big-endian and int64 kbot give the C-order result;
    inputs are never modified and outputs are fresh C-ordered arrays."""
    x, ref = bench(2 ** 12)
    before = {k: v.copy() for k, v in x.items()}
    odd = {}
    for i, (k, v) in enumerate(x.items()):
        if i % 3 == 0:
            odd[k] = np.asfortranarray(v)
        elif i % 3 == 1 and v.dtype.kind == "f":
            odd[k] = v.astype(v.dtype.newbyteorder(">"))
        else:
            big = np.zeros((2,) + v.shape, v.dtype)
            big[1] = v
            odd[k] = big[1]
    odd["tke"] = np.repeat(x["tke"], 2, axis=0)[::2]          # strided view
    out = clts.ocean.tke(*odd.values(), device=device)
    assert_all_close(out, ref)
    assert all(o is not v for o in out for v in odd.values())
    for k, v in x.items():
        np.testing.assert_array_equal(v, before[k])
    args = [np.asfortranarray(a) if isinstance(a, np.ndarray) else a for a in sb_args(x)]
    assert_all_close(clts.ocean.superbee_fluxes(*args, device=device),
                     reference.superbee_fluxes(*sb_args(x)), rtol=1e-13)


@pytest.mark.parametrize("max_chunk", [None, "5"])   # "5": grids in slabs of 5 x rows
def test_thread_safety(device, monkeypatch, max_chunk):
    if max_chunk:
        clts.set_options(max_chunk=max_chunk)
    # the grids of the other tests (pocl picks each launch's local size from its range and
    # compiles a kernel per local size: another grid compiles again)
    sizes = [2 ** 12, 2 ** 14, 2 ** 12, 2 ** 14]
    data = [bench(s) for s in sizes]
    results, errors = [None] * len(sizes), []

    def work(i):
        try:
            x, _ = data[i]
            for _ in range(2):
                results[i] = (clts.ocean.tke(*x.values(), device=device),
                              clts.ocean.superbee_fluxes(*sb_args(x), device=device))
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(sizes))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for (x, ref), (t_out, s_out) in zip(data, results):
        assert_all_close(t_out, ref)
        assert_all_close(s_out, reference.superbee_fluxes(*sb_args(x)), rtol=1e-13)


# -- errors ------------------------------------------------------------------------------------

def test_bad_input(device):
    x, _ = bench(2 ** 12)

    def call(**change):
        args = dict(x)
        kw = {k: change.pop(k) for k in list(change) if k not in args}
        args.update(change)
        return clts.ocean.tke(*args.values(), device=device, **kw)
    with pytest.raises(ValueError, match="maskU"):
        call(maskU=x["maskU"][:-1])
    with pytest.raises(ValueError, match="dzw"):
        call(dzw=x["dzw"][:-1])
    with pytest.raises(ValueError, match="tke must be a 4-D"):
        call(tke=x["tke"][..., 0])
    with pytest.raises(ValueError, match="nz >= 2"):
        small = {k: (v[:, :, :1] if v.ndim >= 3 else v[:1] if k in ("dzt", "dzw") else v)
                 for k, v in x.items()}
        clts.ocean.tke(*small.values(), device=device)
    with pytest.raises(ValueError, match="different levels"):
        call(taup1=0)
    with pytest.raises(ValueError, match="taum1"):
        call(taum1=3)
    with pytest.raises(TypeError, match="tau must be an int"):
        call(tau=0.0)
    with pytest.raises(TypeError, match="kbot must be an integer"):
        call(kbot=x["kbot"].astype(float))
    with pytest.raises(TypeError, match="mxl"):
        call(mxl=x["mxl"].astype(complex))
    with pytest.raises(TypeError, match="K_h_tke"):
        call(K_h_tke="2000")
    with pytest.raises(TypeError, match="unknown parameter"):
        call(lane=8)
    with pytest.raises(ValueError, match="lanes"):
        call(lanes=3)
    with pytest.raises(ValueError, match="advection"):
        call(advection="none")
    with pytest.raises(ValueError, match="version"):
        clts.ocean.superbee_fluxes(*sb_args(x), device=device, version="fast")
    with pytest.raises(ValueError, match="does not fit"):
        clts.ocean.superbee_fluxes(*sb_args(x), device=device, version="tiled", tile_z=4096)
    with pytest.raises(ValueError, match="q must be a 3-D"):
        clts.ocean.superbee_fluxes(x["tke"], *sb_args(x)[1:], device=device)
    with pytest.raises(ValueError, match="cosu"):
        args = list(sb_args(x))
        args[9] = args[9][:3]
        clts.ocean.superbee_fluxes(*args, device=device)


def test_allocation_failure_is_a_device_error(device):
    from clts.errors import DeviceError
    from clts.runtime import faults
    x, ref = bench(2 ** 12)
    with faults.inject("alloc", times=10 ** 6):
        with pytest.raises(DeviceError, match="could not allocate.*global memory"):
            clts.ocean.tke(*x.values(), device=device)
        with pytest.raises(DeviceError, match="could not allocate"):
            clts.ocean.superbee_fluxes(*sb_args(x), device=device)
    assert_all_close(clts.ocean.tke(*x.values(), device=device), ref)


def test_profile_keys_and_plans(device):
    from clts.ocean import Problem, make_superbee_plan, make_tke_plan
    p = make_tke_plan(device, Problem())
    assert p.lanes == device.profile.get("ocean.tke.lanes")
    # float64 (itemsize 8): inline advection only up to ocean.tke.inline_max_itemsize bytes
    # (GPU profiles: 4), else stored
    adv = device.profile.get("ocean.tke.advection")
    if adv == "inline" and device.profile.get("ocean.tke.inline_max_itemsize") < 8:
        adv = "stored"
    assert p.advection == adv
    assert make_tke_plan(device, Problem(itemsize=4)).advection == device.profile.get("ocean.tke.advection")
    assert make_superbee_plan(device, Problem()).version == device.profile.get("ocean.superbee.version")
    assert make_tke_plan(device, Problem(), lanes=2, solver={"version": "thomas"}).lanes == 2
    x, ref = bench(2 ** 12)
    assert_all_close(clts.ocean.tke(*x.values(), device=device,
                                    plan=make_tke_plan(device, Problem(), lanes=4)), ref)
    out = clts.ocean.tke(*x.values(), device=device, solver={"version": "thomas"})
    assert_all_close(out, ref)
    # a Plan given as plan= goes through the same check as make_plan's
    import dataclasses
    with pytest.raises(ValueError, match="lanes"):
        clts.ocean.tke(*x.values(), device=device,
                       plan=dataclasses.replace(make_tke_plan(device, Problem()), lanes=3))
    with pytest.raises(ValueError, match="tile_y"):
        clts.ocean.superbee_fluxes(*sb_args(x), device=device,
                                   plan=dataclasses.replace(make_superbee_plan(device, Problem()), tile_y=0))


# -- Oclgrind ----------------------------------------------------------------------------------

@pytest.mark.oclgrind
@pytest.mark.parametrize("lanes", [1, 2, 8])
def test_tiny_oclgrind(device, lanes):
    """Tiny grids: the vector path, the cell-by-cell ends, lanes above and below nz. Oclgrind
    21.10's uninitialised-value checker crashes on LLVM shuffles that gather lanes from three
    vectors (the time-level swizzles of lanes >= 4), so the TKE step runs with lanes <= 2 and
    the Superbee kernels with up to 8 lanes on [x, y, z] arrays."""
    tke_lanes = min(lanes, 2)
    for shape, seed in (((6, 7, 3), 0), ((7, 6, 2), 1)):
        x = scaled_inputs(shape, seed=seed)
        ref = reference.tke(*x.values(), **SCALED_CONSTANTS)
        for advection, sb in (("inline", {}), ("stored", {"version": "fused", "lanes": tke_lanes}),
                              ("stored", {"version": "tiled", "tile_z": 2, "tile_y": 2,
                                          "tile_x": 2})):
            out = clts.ocean.tke(*x.values(), device=device, lanes=tke_lanes, wg=0,
                                 advection=advection, superbee=sb, **SCALED_CONSTANTS)
            assert_all_close(out, ref, rtol=1e-9)
        args = sb_args(x, dt=0.5)
        want = reference.superbee_fluxes(*args)
        for version in ("fused", "tiled"):
            kw = dict(lanes=lanes) if version == "fused" else dict(tile_z=2, tile_y=2, tile_x=2)
            got = clts.ocean.superbee_fluxes(*args, device=device, version=version, **kw)
            assert_all_close(got, want, rtol=1e-12)


def test_names_are_the_benchmark_order():
    assert NAMES[0] == "u" and NAMES[-2:] == ("tke", "dtke") and len(NAMES) == 21
