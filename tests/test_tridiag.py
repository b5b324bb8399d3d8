"""clts.solve_tridiagonal: every code version on every device against the float64 numpy
reference (clts.tridiag.reference) and LAPACK dgtsv (scipy)."""
from __future__ import annotations

import numpy as np
import pytest

import clts
from clts.tridiag import VERSIONS, solve_tridiagonal
from clts.tridiag.reference import solve_reference, thomas_numpy

dgtsv = pytest.importorskip("scipy.linalg.lapack").dgtsv

TOL = {np.float64: 1e-10, np.float32: 1e-4}
SIZES = (1, 2, 3, 15, 115, 1000)


def dominant(rng, shape, dtype=np.float64):
    a = rng.uniform(-1, 1, shape)
    c = rng.uniform(-1, 1, shape)
    b = (np.abs(a) + np.abs(c) + rng.uniform(0.5, 2, shape)) * rng.choice([-1, 1], shape)
    d = rng.standard_normal(shape)
    return [v.astype(dtype) for v in (a, b, c, d)]


def lapack(a, b, c, d):
    """dgtsv on each system of [batch, n] arrays (a[0], c[n-1] ignored)."""
    a, b, c, d = (np.asarray(v, np.float64).reshape(-1, v.shape[-1]) for v in (a, b, c, d))
    out = np.empty_like(b)
    for s in range(b.shape[0]):
        if b.shape[1] == 1:
            out[s] = d[s] / b[s]
            continue
        _, _, _, x, info = dgtsv(a[s, 1:], b[s], c[s, :-1], d[s])
        assert info == 0
        out[s] = x
    return out


def relerr(x, ref):
    """Largest per-system ||x - ref||_inf / ||ref||_inf."""
    x = np.asarray(x, np.float64).reshape(-1, ref.shape[-1])
    ref = ref.reshape(-1, ref.shape[-1])
    scale = np.maximum(np.abs(ref).max(axis=1), np.finfo(np.float64).tiny)
    return float((np.abs(x - ref).max(axis=1) / scale).max())


def usable(method, n, dtype=np.float64):
    """thomas-unrolled builds one program per n (seconds each on pocl): keep its sizes few."""
    if method != "thomas-unrolled":
        return True
    return n <= (115 if dtype == np.float64 else 15)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("method", VERSIONS)
def test_every_version_dominant(device, method, dtype):
    rng = np.random.default_rng(hash((method, np.dtype(dtype).name)) % 2**32)
    for n in SIZES:
        if not usable(method, n, dtype):
            continue
        batch = 9 if n < 1000 else 3
        a, b, c, d = dominant(rng, (batch, n), dtype)
        # unrolled: 2 lanes at n = 15 (its rows read in blocks of 2 on every device, whatever
        # the profile's lanes), 1 lane at n = 115 (115 rows x 2 lanes in blocks: 9 s a build
        # on Intel's CPU runtime, 1.8 s with 1 lane)
        kw = {"lanes": 2 if n == 15 else 1} if method == "thomas-unrolled" and n >= 15 else {}
        r = solve_tridiagonal(a, b, c, d, version=method, device=device, **kw)
        assert r.method == method
        assert r.x.dtype == dtype and r.x.shape == (batch, n)
        assert r.zero_pivots == 0
        ref = lapack(a, b, c, d)
        assert relerr(r.x, ref) <= TOL[dtype], (n, relerr(r.x, ref))
        assert relerr(solve_reference(a, b, c, d)[0], ref) <= 1e-12


@pytest.mark.parametrize("method", VERSIONS)
def test_interleaved_and_batch_axes(device, method):
    """axis=0 (interleaved, read in place), a middle axis, and a 3-D batch."""
    rng = np.random.default_rng(7)
    n = 15
    a, b, c, d = dominant(rng, (4, n, 5))            # system axis in the middle
    ref = lapack(*[np.moveaxis(v, 1, -1) for v in (a, b, c, d)]).reshape(4, 5, n)
    r = solve_tridiagonal(a, b, c, d, axis=1, version=method, device=device)
    assert r.x.shape == (4, n, 5)
    assert relerr(np.moveaxis(r.x, 1, -1), ref) <= 1e-10
    t = [np.ascontiguousarray(np.moveaxis(v, 1, 0)) for v in (a, b, c, d)]   # [n, 4, 5]
    r0 = solve_tridiagonal(*t, axis=0, version=method, device=device)
    assert r0.plan.layout == "interleaved"
    assert relerr(np.moveaxis(r0.x, 0, -1), ref) <= 1e-10
    r1 = solve_tridiagonal(*[np.moveaxis(v, 1, -1) for v in (a, b, c, d)], version=method,
                           device=device)
    assert r1.plan.layout == "natural"
    assert relerr(r1.x, ref) <= 1e-10


@pytest.mark.parametrize("layout", ["natural", "interleaved"])
@pytest.mark.parametrize("method", VERSIONS)
def test_start_mask(device, method, layout):
    rng = np.random.default_rng(11)
    n, batch = 15, 21
    a, b, c, d = dominant(rng, (batch, n))
    start = rng.integers(-3, n + 3, batch)
    start[:4] = [0, n - 1, n, -1]
    # garbage above the start row must not leak in
    for v in (a, b, c, d):
        v[np.arange(n)[None, :] < start[:, None]] = np.nan
    ref, bad = solve_reference(a, b, c, d, start)
    assert not bad.any()
    if layout == "natural":
        x = solve_tridiagonal(a, b, c, d, version=method, start=start, device=device).x
    else:
        x = solve_tridiagonal(a.T, b.T, c.T, d.T, axis=0, version=method, start=start,
                              device=device).x.T
    assert np.all(x[2:4] == 0)                       # land
    for s in range(batch):
        lo = start[s]
        if 0 <= lo < n:
            assert np.all(x[s, :lo] == 0)
            sub = lapack(*(v[s:s + 1, lo:] for v in (a, b, c, d)))
            assert relerr(x[s:s + 1, lo:], sub) <= 1e-10
    assert relerr(x, ref) <= 1e-10


@pytest.mark.parametrize("method", VERSIONS)
def test_zero_pivot_gives_nan_for_that_system_only(device, method):
    rng = np.random.default_rng(3)
    n, batch = 15, 10
    a, b, c, d = dominant(rng, (batch, n))
    b[2, 0] = 0.0                                    # first pivot zero
    a[6, 1] = c[6, 0] = b[6, 0] = b[6, 1] = 1.0      # rows 0 and 1 equal: singular
    a[6, 2] = 0.0
    r = solve_tridiagonal(a, b, c, d, version=method, device=device)
    assert np.isnan(r.x[[2, 6]]).all()
    ok = [s for s in range(batch) if s not in (2, 6)]
    assert np.isfinite(r.x[ok]).all()
    assert relerr(r.x[ok], lapack(*(v[ok] for v in (a, b, c, d)))) <= 1e-10
    assert r.zero_pivots == 2
    assert r.diagnostics["zero_pivots"] == 2


@pytest.mark.parametrize("method", VERSIONS)
def test_not_dominant(device, method):
    """Systems that are not diagonally dominant (as the TKE routine makes): same answer as the
    float64 reference Thomas and close to pivoting LAPACK. n = 115 as in
    test_every_version_dominant[f64]: the same programs (n is built into thomas's kernel)."""
    rng = np.random.default_rng(5)
    n, batch = 115 if method != "thomas-unrolled" else 15, 12
    a = -rng.uniform(0, 1, (batch, n))
    c = -rng.uniform(0, 1, (batch, n))
    b = 1 + rng.uniform(0, 0.5, (batch, n))          # |a| + |c| may exceed b
    d = rng.standard_normal((batch, n))
    r = solve_tridiagonal(a, b, c, d, version=method, device=device)
    ref = solve_reference(a, b, c, d)[0]
    assert relerr(r.x, ref) <= 1e-7
    assert relerr(r.x, lapack(a, b, c, d)) <= 1e-7


@pytest.mark.parametrize("method", ["thomas", "thomas-coalesced", "flat"])
def test_long_systems(device, method):
    """n = 10^5 (odd) and 2^17 (power of two), both dtypes."""
    rng = np.random.default_rng(9)
    for n, dtype in ((100_001, np.float64), (1 << 17, np.float32)):
        a, b, c, d = dominant(rng, (2, n), dtype)
        r = solve_tridiagonal(a, b, c, d, version=method, device=device)
        assert relerr(r.x, lapack(a, b, c, d)) <= TOL[dtype]


def test_auto_and_forced_parameters(device):
    rng = np.random.default_rng(2)
    a, b, c, d = dominant(rng, (37, 115))
    ref = thomas_numpy(a, b, c, d)
    r = solve_tridiagonal(a, b, c, d, device=device)
    assert r.method in VERSIONS
    assert relerr(r.x, ref) <= 1e-10
    # one build per (lanes, private, block), each path at its cheapest lane count: global
    # scratch (private_max=0: scalar on one lane, vector rows on more, contiguous per
    # work-item on CPUs) and private c'/d', each read row by row and in blocks (the register
    # transposition), at 1 and 2 lanes; 16 lanes once, row by row (the lane names .sa-.sf).
    # Chains pinned, not the profile's: the code per chain is the same for every lane count
    # (test_chains_and_streamed_x sweeps chains), and 8 or 16 lanes x 4 chains cost pocl
    # 13-34 s a build (its register transposition of lanes x lanes rows per array and chain).
    # 16 lanes in blocks (the transposition with the lane names, 4-12 s a build on pocl even
    # with one chain) run in test_chains_and_streamed_x[f32], 4 lanes in blocks there, 8
    # below. wg 1, 3 (a partial last work-group) and 16 (shrunk to the 10 work-items); pocl
    # compiles a kernel per work-group size, so each build runs with one.
    for lanes, wg, priv, block in ((1, 1, 0, 1), (1, 3, 128, 1), (2, 16, 0, 1), (2, 3, 0, 0),
                                   (2, 1, 128, 1), (2, 16, 128, 0), (16, 3, 0, 0)):
        r = solve_tridiagonal(a, b, c, d, version="thomas", lanes=lanes, wg=wg,
                              chains=2 if lanes <= 4 else 1, private_max=priv,
                              block=block, device=device)
        assert r.plan.params["lanes"] == lanes
        assert r.plan.cp_private == (128 if priv else 0)
        assert relerr(r.x, ref) <= 1e-10
    # natural layout: next blocks prefetched (2 lanes: the build above, prefetch 1 as forced
    # here or the profile's; 8 lanes x 1 chain, 2 work-items ahead)
    for lanes, wg, pf in ((2, 1, 1), (8, 3, 2)):
        r = solve_tridiagonal(a, b, c, d, version="thomas", lanes=lanes, wg=wg, block=1,
                              chains=2 if lanes <= 4 else 1, private_max=128,
                              prefetch_items=pf, device=device)
        assert relerr(r.x, ref) <= 1e-10
    # thomas-coalesced: the tiled transposition and the one without local memory run the
    # same interleaved build (4 lanes); 16 lanes (2 prefetched lines a row in float64) on
    # interleaved data read in place
    for tile in (8, 0):
        r = solve_tridiagonal(a, b, c, d, version="thomas-coalesced", tile=tile, tile_y=2,
                              lanes=4, device=device)
        assert relerr(r.x, ref) <= 1e-10
    r = solve_tridiagonal(a.T, b.T, c.T, d.T, axis=0, version="thomas-coalesced", lanes=16,
                          prefetch_items=3, device=device)
    assert relerr(r.x.T, ref) <= 1e-10
    r = solve_tridiagonal(a, b, c, d, version="flat", chunk=7, device=device)
    assert relerr(r.x, ref) <= 1e-10
    r = solve_tridiagonal(a, b, c, d, version="pcr", wg=32, device=device)   # 4 rows/work-item
    assert relerr(r.x, ref) <= 1e-10
    again = solve_tridiagonal(a, b, c, d, plan=r.plan, device=device)       # a Plan runs as is
    assert again.method == "pcr" and relerr(again.x, ref) <= 1e-10
    with pytest.raises(ValueError, match="plan is for"):
        solve_tridiagonal(a[:3], b[:3], c[:3], d[:3], plan=r.plan, device=device)
    import dataclasses                                # ... after the same check as make_plan's
    with pytest.raises(ValueError, match="wg"):
        solve_tridiagonal(a, b, c, d, device=device, plan=dataclasses.replace(
            r.plan, params=dict(r.plan.params, wg=device.max_work_group + 1)))


def test_auto_thresholds_forced_by_keyword(device):
    """Every tridiag.auto threshold and size limit of the profile is also a keyword."""
    rng = np.random.default_rng(12)
    a, b, c, d = dominant(rng, (37, 15))
    ref = thomas_numpy(a, b, c, d)
    never = dict(flat_max_batch=0, pcr_max_batch=0, unrolled_below_n=0,
                 unrolled_interleaved_below_n=0, coalesced_min_n=2**31 - 1,
                 coalesced_interleaved_min_n=2**31 - 1)
    cases = [(dict(never), "thomas"),
             (dict(never, flat_min_n=15, flat_max_batch=38), "flat"),
             (dict(never, flat_min_n=16, flat_max_batch=38), "thomas"),
             (dict(never, pcr_max_batch=38, pcr_max_n=15), "pcr"),
             (dict(never, pcr_max_batch=38, pcr_max_n=14), "thomas"),
             (dict(never, unrolled_below_n=16, unrolled_max_n=15, unrolled_max_bytes=0),
              "thomas-unrolled"),
             (dict(never, unrolled_below_n=16, unrolled_max_n=15, unrolled_max_bytes=120),
              "thomas-unrolled"),
             # 15 float64 rows are 120 bytes of registers: over the cap, the transposed path
             (dict(never, unrolled_below_n=16, unrolled_max_n=15, unrolled_max_bytes=119),
              "thomas-coalesced"),
             (dict(never, unrolled_below_n=16, unrolled_max_n=14), "thomas"),
             (dict(never, coalesced_min_n=15), "thomas-coalesced")]
    for kw, expect in cases:
        r = solve_tridiagonal(a, b, c, d, device=device, **kw)
        assert r.method == expect, kw
        assert relerr(r.x, ref) <= 1e-10
    inter = [v.T for v in (a, b, c, d)]
    for kw, expect in [(dict(never, coalesced_interleaved_min_n=15), "thomas-coalesced"),
                       (dict(never, coalesced_interleaved_min_n=16), "thomas"),
                       (dict(never, coalesced_interleaved_min_n=0,
                             coalesced_interleaved_max_n=16), "thomas-coalesced"),
                       (dict(never, coalesced_interleaved_min_n=0,
                             coalesced_interleaved_max_n=15), "thomas"),
                       (dict(never, unrolled_interleaved_below_n=16, unrolled_max_bytes=0),
                        "thomas-unrolled"),
                       (dict(never, unrolled_interleaved_below_n=16, unrolled_max_bytes=119),
                        "thomas")]:
        r = solve_tridiagonal(*inter, axis=0, device=device, **kw)
        assert r.method == expect, kw
        assert relerr(r.x.T, ref) <= 1e-10
    with pytest.raises(TypeError, match="version='auto' only"):
        solve_tridiagonal(a, b, c, d, version="thomas", flat_min_n=1, device=device)
    with pytest.raises(ValueError, match="coalesced_min_n must be an integer"):
        solve_tridiagonal(a, b, c, d, coalesced_min_n=-1, device=device)
    with pytest.raises(TypeError, match="unknown parameter"):
        solve_tridiagonal(a, b, c, d, max_rows=3, device=device)


@pytest.mark.parametrize("method", VERSIONS)
def test_device_arrays_stay_on_device(device, method):
    import pyopencl.array as cla
    rng = np.random.default_rng(4)
    n, batch = 15, 19
    host = dominant(rng, (batch, n))
    start = rng.integers(0, 4, batch).astype(np.int32)
    ref = solve_reference(*host, start)[0]
    q = device.queue
    dv = [cla.to_device(q, v) for v in host]
    out = cla.empty(q, (batch, n), np.float64)
    r = solve_tridiagonal(*dv, version=method, start=cla.to_device(q, start), out=out,
                          device=device)
    assert r.x is out
    assert relerr(out.get(), ref) <= 1e-10
    dt = [cla.to_device(q, np.ascontiguousarray(v.T)) for v in host]    # interleaved
    r = solve_tridiagonal(*dt, axis=0, version=method, start=start, device=device)
    assert isinstance(r.x, cla.Array)
    assert relerr(r.x.get().T, ref) <= 1e-10
    for v, h in zip(dv, host):                        # inputs untouched
        assert np.array_equal(v.get(), h)


@pytest.mark.parametrize("method", VERSIONS)
def test_chunked_batches(device, method, monkeypatch):
    clts.set_options(max_chunk=5)
    rng = np.random.default_rng(6)
    a, b, c, d = dominant(rng, (23, 15))
    start = rng.integers(0, 15, 23)
    ref = solve_reference(a, b, c, d, start)[0]
    b[17, 0] = 0.0
    start[17] = 0
    ref[17] = np.nan
    for axis in (-1, 0):
        args = (a, b, c, d) if axis == -1 else (a.T, b.T, c.T, d.T)
        r = solve_tridiagonal(*args, axis=axis, version=method, start=start, device=device)
        x = r.x if axis == -1 else r.x.T
        assert np.isnan(x[17]).all()
        ok = np.arange(23) != 17
        assert relerr(x[ok], ref[ok]) <= 1e-10
        assert r.zero_pivots == 1


def test_release_scratch(device):
    from clts.tridiag import release_scratch
    rng = np.random.default_rng(13)
    host = dominant(rng, (5, 2000))
    r = solve_tridiagonal(*host, version="thomas", private_max=0, device=device)
    release_scratch(device)
    release_scratch()
    assert relerr(r.x, lapack(*host)) <= 1e-10


def test_inputs_not_modified_and_out(device):
    rng = np.random.default_rng(8)
    host = dominant(rng, (6, 15))
    copies = [v.copy() for v in host]
    out = np.empty((6, 15))
    r = solve_tridiagonal(*host, out=out, device=device)
    assert r.x is out
    for v, w in zip(host, copies):
        assert np.array_equal(v, w)
    assert relerr(out, lapack(*host)) <= 1e-10
    # ignored entries: a[..., 0] and c[..., -1] may hold anything
    host[0][:, 0] = np.nan
    host[2][:, -1] = np.inf
    for m in VERSIONS:
        assert relerr(solve_tridiagonal(*host, version=m, device=device).x, out) <= 1e-10


def test_bad_input(device):
    z = np.ones((3, 4))
    with pytest.raises(ValueError, match="same shape"):
        solve_tridiagonal(z, z, z, np.ones((3, 5)), device=device)
    with pytest.raises(ValueError, match="axis"):
        solve_tridiagonal(z, z, z, z, axis=2, device=device)
    with pytest.raises(ValueError, match="version"):
        solve_tridiagonal(z, z, z, z, version="lu", device=device)
    with pytest.raises(TypeError, match="complex"):
        solve_tridiagonal(z, z, z, z + 1j, device=device)
    with pytest.raises(TypeError, match="integer"):
        solve_tridiagonal(z, z, z, z, start=np.zeros(3), device=device)
    with pytest.raises(ValueError, match="batch shape"):
        solve_tridiagonal(z, z, z, z, start=np.zeros(4, int), device=device)
    with pytest.raises(ValueError, match="n <= 512"):
        solve_tridiagonal(*[np.ones((1, 600))] * 4, version="thomas-unrolled", device=device)
    with pytest.raises(TypeError, match="unknown parameter"):
        solve_tridiagonal(z, z, z, z, tile_size=3, device=device)
    with pytest.raises(ValueError, match="lanes"):
        solve_tridiagonal(z, z, z, z, version="thomas", lanes=3, device=device)
    with pytest.raises(ValueError, match="out must have shape"):
        solve_tridiagonal(z, z, z, z, out=np.empty((4, 3)), device=device)
    with pytest.raises(ValueError, match="at least one dimension"):
        solve_tridiagonal(1.0, 2.0, 3.0, 4.0, device=device)
    # integers are solved in float64; empty batches come back empty
    r = solve_tridiagonal(np.zeros((2, 3), int), np.full((2, 3), 2), np.zeros((2, 3), int),
                          np.ones((2, 3), int), device=device)
    assert r.x.dtype == np.float64 and np.allclose(r.x, 0.5)
    assert solve_tridiagonal(*[np.ones((0, 5))] * 4, device=device).x.shape == (0, 5)


@pytest.mark.oclgrind
@pytest.mark.parametrize("method", VERSIONS)
def test_tiny_oclgrind(device, method):
    """Tiny cases every kernel runs on (also under Oclgrind: races, bounds, uninitialised)."""
    rng = np.random.default_rng(12)
    for layout in ("natural", "interleaved"):
        for n, batch in ((1, 3), (5, 11)):
            a, b, c, d = dominant(rng, (batch, n), np.float32)
            start = rng.integers(-1, n, batch)
            b[0, 0] = 0.0
            start[0] = 0
            ref = solve_reference(a, b, c, d, start)[0]
            kw = dict(version=method, start=start, device=device, wg=4)
            if method == "thomas-coalesced":
                kw.update(tile=4, tile_y=2, lanes=2, prefetch_items=2)
            if method == "thomas":
                # global scratch for n = 1; private c'/d' and x staged + streamed for n = 5
                kw.update(lanes=2, block=1, prefetch_items=1, chains=2, private_max=0 if n == 1 else 16,
                          stream=int(n > 1))
            if layout == "natural":
                r = solve_tridiagonal(a, b, c, d, **kw)
                x = r.x
            else:
                r = solve_tridiagonal(a.T, b.T, c.T, d.T, axis=0, **kw)
                x = r.x.T
            assert np.isnan(x[0]).all() and r.zero_pivots == 1
            assert relerr(x[1:], ref[1:]) <= 1e-4


#: test_chains_and_streamed_x's (lanes, chains, stream, fixed_n) per dtype. float64 sweeps
#: the paths (one line = 8 items): odd chains on one lane (scalar staging; interleaved rows
#: not whole lines), blocks with chains staged and streamed, fixed n, stream off, and rows of
#: whole lines from several vectors (2 x 4 and 4 x 2 lanes, streamed per chain). float32 (one
#: line = 16 items) runs what depends on the line, and one vector a line: x staged and
#: streamed out as real16 lines and interleaved rows of whole lines, at 16 lanes in blocks
#: (the register transposition with the lane names .sa-.sf, 4-12 s a build on pocl; there
#: 8 lanes x 2 chains cost 5 s more, and each further case 1-3 s per layout for the same
#: code: float64 at 8 lanes x 1 chain ran what float32's 16 lanes run).
CHAIN_CASES = {np.float64: ((1, 3, 1, 0), (2, 4, 1, 1), (4, 2, 0, 1), (4, 2, 1, 1)),
               np.float32: ((16, 1, 1, 0),)}


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_chains_and_streamed_x(device, dtype):
    """thomas with several vector chains per work-item and x written by non-temporal stores
    (staged per work-item on the natural layout, whole aligned rows on the interleaved one),
    n built into the kernel or not (CHAIN_CASES):
    batches that leave a partial last work-item, rows that are and are not line-aligned, a
    start mask and a zero pivot. Both batches have one n, so that they run the same
    programs (a second n, with n and the private array length built into the kernels, built
    them all again)."""
    rng = np.random.default_rng(21)
    line = 64 // np.dtype(dtype).itemsize
    for nsys, n in ((101, 115), (6 * line, 115)):     # odd batch; rows of whole lines
        a, b, c, d = dominant(rng, (nsys, n), dtype)
        start = rng.integers(-1, n // 2, nsys)
        b[3, max(start[3], 0)] = 0                     # a zero pivot in one system
        ref = solve_reference(a, b, c, d, start)[0]
        for lanes, chains, stream, fixed in CHAIN_CASES[dtype]:
            kw = dict(version="thomas", lanes=lanes, chains=chains, stream=stream, wg=2,
                      private_max=128, fixed_n=fixed, start=start, device=device)
            nat = solve_tridiagonal(a, b, c, d, block=1, prefetch_items=1, **kw)
            inter = solve_tridiagonal(a.T, b.T, c.T, d.T, axis=0, prefetch_items=2, **kw)
            for x, r in ((nat.x, nat), (inter.x.T, inter)):
                assert r.plan.params["chains"] == chains and r.plan.stream == bool(stream)
                assert r.plan.cp_private == 128
                assert r.zero_pivots == 1 and np.isnan(x[3]).all()
                ok = np.arange(nsys) != 3
                assert relerr(x[ok], ref[ok]) <= TOL[dtype]
    with pytest.raises(ValueError, match="chains"):
        solve_tridiagonal(a, b, c, d, version="thomas", chains=9, device=device)
    with pytest.raises(ValueError, match="stream"):
        solve_tridiagonal(a, b, c, d, version="thomas", stream=2, device=device)
    with pytest.raises(ValueError, match="fixed_n"):
        solve_tridiagonal(a, b, c, d, version="thomas", fixed_n=3, device=device)


def test_private_arrays_bounded_per_work_group(device):
    """Private c'/d' arrays that would overflow a CPU driver's stack go to global scratch
    (pocl segfaulted on wg 128 x 16 lanes x 1024 rows before the bound)."""
    from clts.tridiag.plan import PRIVATE_GROUP_BYTES, Problem, make_plan
    big = make_plan(device, Problem(1024, 4096, "interleaved", np.float64, False),
                    version="thomas-coalesced", wg=128, lanes=16, private_max=1024)
    assert big.cp_private == 0
    small = make_plan(device, Problem(115, 4096, "natural", np.float64, False),
                      version="thomas", wg=4, lanes=4, private_max=1024)
    assert small.cp_private >= 115
    assert 2 * small.cp_private * 8 * 4 * 4 <= PRIVATE_GROUP_BYTES


def test_interleaved_prefetch_capped_for_long_systems(device):
    """Interleaved layout: the work-items P ahead whose rows are prefetched are capped so their
    rows stay within PREFETCH_ROWS_BYTES (at least one ahead); a caller's prefetch_items= is kept."""
    from clts.tridiag.plan import PREFETCH_ROWS_BYTES, Problem, make_plan

    def problem(n):
        return Problem(n, 4096, "interleaved", np.float64, False)
    kw = dict(version="thomas-coalesced")
    kw8 = dict(kw, lanes=8, chains=1)                         # the profile's prefetch, capped
    fit = PREFETCH_ROWS_BYTES // (4 * 8 * 115 * 8)            # work-items of 8 x 115 rows
    prof = int(device.profile.get("tridiag.coalesced.prefetch_items"))
    plan = make_plan(device, problem(115), **kw8)
    assert plan.params["prefetch_items"] == (max(1, min(prof, fit)) if prof else 0)
    long = make_plan(device, problem(100_000), **kw8)
    assert long.params["prefetch_items"] == (1 if prof else 0)
    forced = make_plan(device, problem(100_000), lanes=8, chains=1, prefetch_items=6, **kw)
    assert forced.params["prefetch_items"] == 6


def test_natural_prefetch_only_for_short_blocks(device):
    """The profile's natural-layout prefetch is dropped when one work-item's block is long
    (the hardware prefetchers follow long systems); a caller's prefetch_items= is kept."""
    from clts.tridiag.plan import PREFETCH_BLOCK_BYTES, Problem, make_plan

    def problem(n):
        return Problem(n, 4096, "natural", np.float64, False)
    long_n = PREFETCH_BLOCK_BYTES // 8 + 1
    assert make_plan(device, problem(long_n), version="thomas",
                     lanes=1).params["prefetch_items"] == 0
    forced = make_plan(device, problem(long_n), version="thomas", lanes=1, prefetch_items=2)
    assert forced.params["prefetch_items"] == 2
    short = make_plan(device, problem(15), version="thomas", lanes=4)
    assert short.params["prefetch_items"] == int(device.profile.get("tridiag.thomas.prefetch_items"))


def test_prefetch_is_a_deprecated_alias_of_prefetch_items(device):
    """prefetch= (the old name, rows ahead on the interleaved layout) still runs, as
    prefetch_items= (work-items ahead), with a DeprecationWarning naming the new keyword."""
    rng = np.random.default_rng(5)
    a, b, c, d = (rng.standard_normal((64, 20)) for _ in range(4))
    b += 8.0
    new = solve_tridiagonal(a, b, c, d, version="thomas", prefetch_items=2, device=device)
    with pytest.warns(DeprecationWarning, match="prefetch_items="):
        old = solve_tridiagonal(a, b, c, d, version="thomas", prefetch=2, device=device)
    assert old.plan.params["prefetch_items"] == new.plan.params["prefetch_items"] == 2
    np.testing.assert_array_equal(old.x, new.x)


def test_zero_pivot_counters_across_slabs(device):
    """Device-array solves take their zero-pivot counters from slabs of zeros made once per
    COUNTER_SLAB calls: more calls than a slab, results read after all of them, each counts
    its own systems' zero pivots (0, 1 or 2 by call)."""
    import pyopencl.array as cla
    from clts.tridiag.run import COUNTER_SLAB
    rng = np.random.default_rng(3)
    a, c, d = rng.standard_normal((3, 4, 9))
    b = 4 + np.abs(a) + np.abs(c)
    da, dc, dd = (cla.to_device(device.queue, v) for v in (a, c, d))
    bs = []
    for k in range(3):
        bk = b.copy()
        bk[:k, 0] = 0                       # k systems with a zero first pivot
        bs.append(cla.to_device(device.queue, bk))
    results = [solve_tridiagonal(da, bs[i % 3], dc, dd, device=device)
               for i in range(COUNTER_SLAB + 5)]
    assert [r.zero_pivots for r in results] == [i % 3 for i in range(COUNTER_SLAB + 5)]
