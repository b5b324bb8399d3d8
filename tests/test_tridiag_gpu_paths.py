"""The GPU profiles' coalescing paths of the tridiagonal solver, run on the CPU devices:
``flat`` with ``interleave=1`` (chunk-major work-items and aggregates; natural-layout data in
the chunked layout) and ``thomas-unrolled`` with ``transpose=1`` (natural-layout data through
the tiled transposition). Each must give the bits of the CPU path, against the LAPACK answer."""
from __future__ import annotations

import numpy as np
import pytest

from clts.tridiag import solve_tridiagonal
from clts.tridiag.reference import solve_reference

from test_tridiag import TOL, dominant, lapack, relerr


def _solve(layout, arrs, **kw):
    if layout == "natural":
        return solve_tridiagonal(*arrs, **kw)
    r = solve_tridiagonal(*(v.T for v in arrs), axis=0, **kw)
    r.x = np.asarray(r.x).T
    return r


@pytest.mark.gpu_layout
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("layout", ["natural", "interleaved"])
def test_flat_interleaved_is_the_cpu_path_bit_for_bit(device, dtype, layout):
    rng = np.random.default_rng(21)
    for n, batch, chunk in ((1000, 5, 7), (300, 40, 64), (65, 3, 32), (5, 2, 3)):
        arrs = dominant(rng, (batch, n), dtype)
        start = rng.integers(-1, n + 1, batch)
        for st in (None, start):
            kw = dict(version="flat", chunk=chunk, start=st, device=device)
            x0 = _solve(layout, arrs, interleave=0, **kw).x
            r1 = _solve(layout, arrs, interleave=1, **kw)
            assert r1.plan.params["interleave"] == 1 and r1.zero_pivots == 0
            np.testing.assert_array_equal(r1.x, x0)
            if st is None:
                assert relerr(r1.x, lapack(*arrs)) <= TOL[dtype]


@pytest.mark.gpu_layout
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_unrolled_transposed_is_the_cpu_path_bit_for_bit(device, dtype):
    rng = np.random.default_rng(22)
    # one n for both batches (a partial tile of systems after two whole ones and after one):
    # n is built into the unrolled kernel, a second n built its 6 programs again
    for n, batch in ((15, 70), (15, 33), (1, 5)):
        arrs = dominant(rng, (batch, n), dtype)
        start = rng.integers(-1, n + 1, batch)
        for st in (None, start):
            kw = dict(version="thomas-unrolled", start=st, device=device, wg=16, lanes=1)
            x0 = solve_tridiagonal(*arrs, transpose=0, **kw).x
            r1 = solve_tridiagonal(*arrs, transpose=1, **kw)
            assert r1.plan.params["transpose"] == 1
            np.testing.assert_array_equal(r1.x, x0)
            r2 = solve_tridiagonal(*arrs, transpose=1, subgroup=16, **kw)   # pvc's profile
            np.testing.assert_array_equal(r2.x, x0)
            if st is None:
                assert relerr(r1.x, lapack(*arrs)) <= TOL[dtype]


@pytest.mark.gpu_layout
def test_bad_values(device):
    a, b, c, d = dominant(np.random.default_rng(0), (2, 8))
    with pytest.raises(ValueError, match="interleave"):
        solve_tridiagonal(a, b, c, d, version="flat", interleave=2, device=device)
    with pytest.raises(ValueError, match="transpose"):
        solve_tridiagonal(a, b, c, d, version="thomas-unrolled", transpose=-1, device=device)
    with pytest.raises(ValueError, match="subgroup"):
        solve_tridiagonal(a, b, c, d, version="thomas-unrolled", subgroup=12, device=device)


@pytest.mark.oclgrind
def test_tiny_oclgrind(device):
    """The chunked gather / scatter, chunk-major scans and the transposed unrolled path on tiny
    cases (Oclgrind: races, bounds, uninitialised values); a zero pivot in system 0."""
    rng = np.random.default_rng(23)
    for layout in ("natural", "interleaved"):
        for n, batch in ((1, 3), (7, 5)):
            a, b, c, d = dominant(rng, (batch, n), np.float32)
            start = rng.integers(-1, n, batch)
            b[0, 0], start[0] = 0.0, 0
            ref = solve_reference(a, b, c, d, start)[0]
            for kw in (dict(version="flat", chunk=3, interleave=1, wg=4),
                       dict(version="thomas-unrolled", transpose=1, wg=4, lanes=1)):
                if kw["version"] == "thomas-unrolled" and layout == "interleaved":
                    continue
                r = _solve(layout, (a, b, c, d), start=start, device=device, **kw)
                assert np.isnan(r.x[0]).all() and r.zero_pivots == 1
                assert relerr(r.x[1:], ref[1:]) <= 1e-4


@pytest.mark.parametrize("name", ["a100", "h100", "mi100", "mi210", "intel-max-1550",
                                  "intel-arc-a770", "intel-iris-xe"])
def test_gpu_profiles_choose_the_coalescing_paths(name):
    """Under every emulated GPU: flat interleaved, unrolled transposed; the CPU profiles not;
    the Data Center GPU Max's TKE step and unrolled kernel require SIMD16 (IGC spills them at
    SIMD32)."""
    from clts.ocean.plan import Problem as OceanProblem
    from clts.ocean.plan import make_tke_plan
    from clts.runtime import emulation, usable
    from clts.tridiag.plan import Problem, make_plan
    hits = [i for i in usable() if "portable computing" in i.platform.lower()]
    if not hits:
        pytest.skip("emulation tests run on pocl; no pocl device here")
    gpu = emulation.emulate(name, hits[0])
    flat = make_plan(gpu, Problem(10000, 8, "natural", np.float32, False), version="flat")
    unrolled = make_plan(gpu, Problem(15, 4096, "natural", np.float32, False),
                         version="thomas-unrolled")
    assert flat.params["interleave"] == 1 and unrolled.params["transpose"] == 1
    simd16 = 16 if name == "intel-max-1550" else 0
    assert unrolled.params["subgroup"] == simd16
    assert make_tke_plan(gpu, OceanProblem(itemsize=8)).subgroup == simd16


def test_cpu_profiles_keep_their_kernels(device):
    from clts.tridiag.plan import Problem, make_plan
    if device.type != "cpu":
        pytest.skip("CPU profiles")
    assert make_plan(device, Problem(10000, 8, "natural", np.float64, False),
                     version="flat").params["interleave"] == 0
    assert make_plan(device, Problem(15, 64, "natural", np.float64, False),
                     version="thomas-unrolled").params["transpose"] == 0
