"""Layouts and tiles chosen for GPUs: each forced on the CPU devices gives results bit-identical
to the layout the CPUs keep, and the Plans under the emulated GPUs pick them (matrix profile:
local-memory tiles that leave room for four work-groups per compute unit, k-lists and partial
lists interleaved by work-item)."""
from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest

import clts
from clts.runtime import emulation
from exactness import exact_across_programs


def _pocl():
    from clts.runtime import usable
    hits = [i for i in usable() if "portable computing" in i.platform.lower()]
    if not hits:
        pytest.skip("emulation tests run on pocl; no pocl device here")
    return hits[0]


def _same(a, b):
    for name in ("P", "I"):
        x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True), name


MP_LAYOUTS = [dict(store="local", topk_store="local", wg=4, interleave=1),
              dict(store="local", topk_store="local", wg=4, interleave=1, lanes=4, groups=2,
                   tile=16),
              dict(store="local", topk_store="local", wg=8, interleave=1, groups_per_cu=4,
                   tile=8)]


@pytest.mark.gpu_layout
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("precision,layout", [("double", MP_LAYOUTS[0]),
                                              ("mixed", MP_LAYOUTS[0]),
                                              ("double", MP_LAYOUTS[1]),
                                              ("double", MP_LAYOUTS[2])])
def test_mp_interleaved_layout_bit_identical(device, k, precision, layout):
    """The interleaved local tiles and partial lists and the per-candidate top-k merges
    (forced) against the contiguous slices and per-row merges of the same plan: same bits,
    self-join and AB-join, on every device. The layout sweep runs in double; mixed precision
    (single-precision kernels) with the first layout."""
    if precision == "double" and not device.fp64:
        pytest.skip("no fp64")
    rng = np.random.default_rng(11)
    T = rng.standard_normal(700)
    T[100:130] = 1.0                          # a constant stretch: special windows
    B = rng.standard_normal(500)
    for extra in ({}, {"T_B": B}):
        kw = dict(k=k, precision=precision, device=device, progress=False, **extra)
        old = dict(layout, interleave=0, groups_per_cu=0)
        _same(clts.matrix_profile(T, 24, **kw, **layout), clts.matrix_profile(T, 24, **kw, **old))


OCLGRIND_ILV = """
import sys
sys.path.insert(0, sys.argv[1])
from test_mp import _check_k, _dist_self, _hard
import clts
from clts.mp import reference as ref
from clts.runtime import get_device
dev = get_device(sys.argv[2])
T, m, k = _hard(48, 16), 6, 3
res = clts.matrix_profile(T, m, k=k, device=dev, topk_store="local", lanes=2, groups=2, tile=4,
                          segment=8, wg=2, interleave=1, groups_per_cu=4)
_check_k(res, ref.matrix_profile(T, m, k=k), _dist_self(T, m, 2), k)
print("case ok")
"""


@pytest.mark.oclgrind
def test_mp_interleaved_tiny(device):
    """Interleaved local k-lists and partial lists on a tiny input, against the reference
    (Oclgrind: no race, uninitialised read or out-of-bounds access; one call per fresh
    process, as test_mp.test_oclgrind_top_k)."""
    import os
    import subprocess
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    if not os.environ.get("CLTS_OCLGRIND"):
        T = np.random.default_rng(3).standard_normal(80)
        kw = dict(k=2, device=device, progress=False, store="local", topk_store="local", wg=4,
                  tile=4, precision="double" if device.fp64 else "single")
        _same(clts.matrix_profile(T, 8, interleave=1, **kw),
              clts.matrix_profile(T, 8, interleave=0, **kw))
        return
    out = subprocess.run([sys.executable, "-c", OCLGRIND_ILV, here, device.slug],
                         capture_output=True, text=True, timeout=600)
    sys.stdout.write(out.stdout)
    sys.stderr.write(out.stderr)
    assert out.returncode == 0 and "case ok" in out.stdout, out.stderr[-3000:]


@pytest.mark.parametrize("name", ["mi100", "a100", "intel-iris-xe"])
@pytest.mark.parametrize("k", [1, 3])
def test_mp_plan_leaves_four_groups_per_cu(name, k):
    """Under the emulated MI100 / A100 / Iris Xe the Plan's local-memory tile leaves room for at least
    four work-groups per compute unit (it used to fill an MI100 CU with one 64-wide group for
    k = 3, three for k = 1), and on the A100 the results are those of the old single-group
    tile. (The A100's builds cost pocl a third of the others'; the MI100's and Iris Xe's plans
    of local stores run against the reference in
    test_emulation.test_matrix_profile_default_and_local_stores, the interleaved layout with
    four groups per CU bit for bit in test_mp_interleaved_layout_bit_identical.)"""
    from clts.mp.tiles import local_tile as _local_tile, topk_tile as _topk_tile
    from clts.mp.plan import Problem, make_plan
    from clts.runtime import occupancy as occ
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    gpu = emulation.emulate(name, _pocl())
    # the local tile (the GPU profiles' topk_store; the occupancy model may pick "window")
    plan = make_plan(gpu, Problem(64, "double"), topk_store="local")
    assert plan.groups_per_cu == 4 and plan.interleave == 1
    if k == 1:
        L, per = _local_tile(gpu, plan), plan.lanes * 8
    else:
        L, local = _topk_tile(gpu, plan, k)
        assert local
        per = k * 12 + 8
    group_bytes = plan.wg * (L + plan.band) * per
    # registers of the offline compiles (ptxas sm_80: 80 / 56; gfx908: 65 / 45 VGPRs) leave
    # more groups than four; local memory is the limit the tile decides
    o = occ.occupancy(occ.limits_for(gpu), regs=88 if k > 1 else 58, work_group=plan.wg,
                      local_mem=group_bytes)
    assert L >= 1 and o.groups >= 4, o
    if name != "a100":
        return
    T = np.random.default_rng(5).standard_normal(1500)
    kw = dict(k=k, device=gpu, progress=False)
    _same(clts.matrix_profile(T, 64, **kw),
          clts.matrix_profile(T, 64, groups_per_cu=0, interleave=0, **kw))


#: (emulated GPU, k) whose local tile cannot reach 25 %: one row and the band's own slots of
#: k = 3 lists take more than a 25 % share (MI100 / MI200: one wave per 64-wide group; Iris Xe)
MP_BELOW_QUARTER = {("mi100", 3), ("mi210", 3), ("intel-iris-xe", 3)}


@pytest.mark.parametrize("name", ["a100", "h100", "mi100", "mi210", "intel-max-1550",
                                  "intel-arc-a770", "intel-iris-xe"])
@pytest.mark.parametrize("k", [1, 3])
def test_mp_plan_tile_reaches_quarter_occupancy(name, k):
    """Under every emulated GPU the Plan's local tile is the largest at which the occupancy
    model, with the kernel's recorded registers and SIMD width, reaches occupancy.MIN_FRACTION
    (25 %, the gate's bound) - smaller tiles than the four-groups share on MI100 / MI200 (k = 1),
    A100 / H100 (k = 3) and the Intel GPUs - and where none does, keeps the four-groups tile."""
    from clts.mp.tiles import local_tile as _local_tile, topk_tile as _topk_tile
    from clts.mp.plan import Problem, fit_tile, make_plan
    from clts.runtime import occupancy as occ
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    gpu = emulation.emulate(name, _pocl())
    prec = "double" if gpu.fp64 else "single"
    plan = make_plan(gpu, Problem(64, prec), topk_store="local")
    rs = 8 if plan.kernel_real == "double" else 4
    if k == 1:
        L, per, tpl, kern = _local_tile(gpu, plan), plan.lanes * 8, "mp/diag_top1.cl.mako", "diag"
    else:
        L, local = _topk_tile(gpu, plan, k)
        assert local
        per, tpl, kern = k * (rs + 4) + rs, "mp/diag_topk.cl.mako", "diag_topk"

    def occupancy(rows):
        return occ.kernel_occupancy(gpu, tpl, kern, dict(K=k, LOCAL=1, real=plan.kernel_real),
                                    work_group=plan.wg,
                                    local_mem=plan.wg * (rows + plan.band) * per)
    o = occupancy(L)
    assert L >= 1 and o.groups >= plan.groups_per_cu == 4, o
    if (name, k) in MP_BELOW_QUARTER:
        assert occupancy(1).fraction < occ.MIN_FRACTION
        # the four-groups share (fit_tile without the occupancy cut): no shorter tile for nothing
        assert L == fit_tile(gpu, per, plan.band, plan.wg, plan.tile, 4)
    else:
        assert o.fraction >= occ.MIN_FRACTION, o
        if L < plan.tile:
            assert occupancy(L + 1).fraction < occ.MIN_FRACTION or \
                plan.wg * (L + 1 + plan.band) * per > occ.max_local_mem(
                    occ.limits_for(gpu), work_group=plan.wg, groups=4)

    if k > 1:   # the column fold's block (Iris Xe: 32 column groups, two SIMD16 threads)
        from clts.mp.diagonal import diag_spec
        from clts.mp.plan import topk_fold_local
        fc = diag_spec(gpu, plan, True, True, k)[1]["FOLDC"]
        of = occ.kernel_occupancy(gpu, "mp/diag_topk.cl.mako", "reduce_cols_k",
                                  dict(K=k, real=plan.kernel_real, FOLD=plan.fold),
                                  work_group=fc, local_mem=topk_fold_local(
                                      "reduce_cols_k", fc, plan.band, k, plan.kernel_real))
        assert fc >= 1 and of.fraction >= occ.MIN_FRACTION, (fc, of)


def test_mp_cpu_profiles_keep_contiguous_layout(device):
    """CPUs keep a slice per work-item and the whole local budget (profile keys 0)."""
    from clts.mp.plan import Problem, make_plan
    if device.info.type != "cpu":
        pytest.skip("CPU profiles")
    p = make_plan(device, Problem(64, "double"))
    assert p.interleave == 0 and p.groups_per_cu == 0


def test_mp_layout_fields_checked():
    from clts.mp.plan import Problem, make_plan
    gpu = emulation.emulate("mi100", _pocl())
    with pytest.raises(ValueError, match="interleave"):
        make_plan(gpu, Problem(), interleave=2)
    with pytest.raises(ValueError, match="groups_per_cu"):
        make_plan(gpu, Problem(), groups_per_cu=-1)


def _bfast_cube(seed, M=45, N=150, n_hist=80, dtype=np.float64):
    rng = np.random.default_rng(seed)
    t = np.arange(N, dtype=np.float64) * 16 + 10
    y = (3 + 0.001 * t[:, None] + np.sin(2 * np.pi * t[:, None] / 365 + rng.uniform(0, 6, M))
         + 0.3 * rng.standard_normal((N, M)))
    y -= (np.arange(N)[:, None] >= rng.integers(n_hist, N, M)) * rng.uniform(0, 3, M)
    y[rng.random((N, M)) < 0.15] = np.nan
    return y.astype(dtype), t, t[n_hist]


BFAST_FIELDS = ("breaks", "means", "magnitudes", "valids", "status", "history_start", "mosum",
                "sigma")


#: (version, lanes, dtype) of the time-major scratch cases: both versions one pixel a
#: work-item in both precisions, the vector lanes (the lane sweep) in float32 only (they are the
#: same template with the other real type); each with history "all" and "ROC".
#: test_bfast_time_major_ties_and_overflow runs a subset of the same programs
BFAST_TM = [("fused", 1, np.float64), ("fused", 1, np.float32), ("multi", 1, np.float64),
            ("multi", 1, np.float32), ("fused", 4, np.float32), ("multi", 8, np.float32)]


@pytest.mark.parametrize("version,lanes,dtype", BFAST_TM)
@pytest.mark.gpu_layout
@pytest.mark.parametrize("history", ["all", "ROC"])
def test_bfast_time_major_scratch_bit_identical(device, version, lanes, history, dtype):
    """The time-major residual scratch (GPUs) against the pixel-major one (CPUs), in several
    chunks: on CPU devices the same bits for the sweep, the median and the ROC kernel. A GPU
    compiler may contract a residual's multiply and the window's subtraction into one fused
    multiply-add in one program and not in the other (OpenCL C's FP_CONTRACT is on by default;
    NVIDIA's driver did so for the multi-kernel sweep of history "all" on an H100), so on GPUs
    the counts and codes stay equal and the real fields agree within ``_layout_tolerance``.
    The lane sweep (fused 4, multi 8) runs in float32 only (``BFAST_TM``)."""
    if dtype == np.float64 and not device.fp64:
        pytest.skip("no fp64")
    y, t, start = _bfast_cube(3, dtype=dtype)
    kw = dict(device=device, version=version, lanes=lanes, history=history, detailed=True,
              chunk_bytes=y.shape[0] * 2 * y.dtype.itemsize * 16)
    a = clts.bfast_monitor(y, t, start, scratch="time", **kw)
    b = clts.bfast_monitor(y, t, start, scratch="pixel", **kw)
    assert a.plan.scratch == "time" and b.plan.scratch == "pixel"
    for name in BFAST_FIELDS:
        if history != "ROC" and name == "history_start":
            continue
        x, z = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        if exact_across_programs(device) or x.dtype.kind != "f":
            assert np.array_equal(x, z, equal_nan=True), name
        else:
            assert np.array_equal(np.isnan(x), np.isnan(z)), name
            rtol, atol = _layout_tolerance(x, y.shape[0])
            np.testing.assert_allclose(x, z, rtol=rtol, atol=atol, err_msg=name)


def _layout_tolerance(x, n_dates):
    """(rtol, atol): the difference the two scratch layouts may show on a GPU, atol relative to
    the field's largest value: one rounding per residual that the fused multiply-add skips, summed over a
    MOSUM window / the monitoring period (at most ``n_dates`` of them), four times over."""
    rtol = 4 * n_dates * float(np.finfo(x.dtype).eps)
    return rtol, rtol * np.max(np.abs(x[np.isfinite(x)]), initial=1.0)


@pytest.mark.oclgrind
def test_bfast_time_major_tiny(device):
    y, t, start = _bfast_cube(4, M=5, N=40, n_hist=24, dtype=np.float32)
    kw = dict(device=device, history="ROC", version="fused", lanes=1)
    a = clts.bfast_monitor(y, t, start, scratch="time", **kw)
    b = clts.bfast_monitor(y, t, start, scratch="pixel", **kw)
    for name in ("breaks", "means", "magnitudes", "history_start"):
        assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name


def _bfast_hostile(kind, dtype):
    """Monitoring residuals with ties (integer data, a constant and an alternating pixel) or
    near the largest float (residuals overflow), with gaps."""
    rng = np.random.default_rng(9)
    N, M = 96, 21
    t = np.arange(N) * 16.0 + 3
    if kind == "ties":
        y = np.round(3 + 2 * np.sin(2 * np.pi * t[:, None] / 365) + rng.standard_normal((N, M)))
        y[:, 0] = 5.0
        y[:, 1] = np.where(np.arange(N) % 2, 1.0, -1.0)
    else:
        big = 1e300 if dtype == np.float64 else 3e38
        y = big * (0.5 + 0.1 * rng.standard_normal((N, M)))
        y[:, :4] *= -1
    y[rng.random((N, M)) < 0.2] = np.nan
    return y.astype(dtype), t, t[56]


@pytest.mark.gpu_layout
@pytest.mark.parametrize("version,lanes,dtype", BFAST_TM[:5])
@pytest.mark.parametrize("history", ["all", "ROC"])
@pytest.mark.parametrize("kind", ["ties", "huge"])
def test_bfast_time_major_ties_and_overflow(device, version, lanes, history, dtype, kind):
    """The date-indexed scratch's radix median, window pointer and ROC sums on tied residuals
    (even and odd counts) and on residuals that overflow: the CPU path's bits. ``detailed``
    as in test_bfast_time_major_scratch_bit_identical, so that these cases run its programs
    (the dates are kernel arguments; detailed adds the stores of the detailed fields, the
    median and the sums are the same code); the time-major kernels without the detailed
    fields run in test_bfast_time_major_tiny / _tiny_multi, on every driver."""
    if dtype == np.float64 and not device.fp64:
        pytest.skip("no fp64")
    y, t, start = _bfast_hostile(kind, dtype)
    kw = dict(device=device, version=version, lanes=lanes, history=history, progress=False,
              detailed=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        a = clts.bfast_monitor(y, t, start, scratch="time", **kw)
        b = clts.bfast_monitor(y, t, start, scratch="pixel", **kw)
    for name in ("breaks", "means", "magnitudes", "valids", "status") + (
            ("history_start",) if history == "ROC" else ()):
        x, z = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        if x.dtype.kind != "f" or device.info.platform.startswith("Portable"):
            assert np.array_equal(x, z, equal_nan=True), name
        else:   # Intel's CPU runtime: means 1 ulp apart since the date counts became arguments
            assert np.array_equal(np.isnan(x), np.isnan(z)), name
            rtol, atol = _layout_tolerance(x, y.shape[0])
            np.testing.assert_allclose(x, z, rtol=rtol, atol=atol, err_msg=name)


@pytest.mark.oclgrind
def test_bfast_time_major_tiny_multi(device):
    if not device.fp64:
        pytest.skip("no fp64")
    y, t, start = _bfast_hostile("ties", np.float64)
    y, t, start = y[:40, :5], t[:40], t[24]
    kw = dict(device=device, history="all", version="multi", lanes=1, wg=8, progress=False)
    a = clts.bfast_monitor(y, t, start, scratch="time", **kw)
    b = clts.bfast_monitor(y, t, start, scratch="pixel", **kw)
    for name in ("breaks", "means", "magnitudes", "valids"):
        assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name


@pytest.mark.parametrize("name", ["mi100", "a100", "intel-max-1550"])
def test_bfast_plan_time_major_on_gpus(name, device):
    from clts.bfast.plan import Problem, make_plan
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    assert make_plan(emulation.emulate(name, _pocl()), Problem(80, 8)).scratch == "time"
    if device.info.type == "cpu":
        assert make_plan(device, Problem(80, 8)).scratch == "pixel"
    with pytest.raises(ValueError, match="scratch"):
        make_plan(device, Problem(80, 8), scratch="column")


@pytest.mark.parametrize("kw,dtype", [(dict(), np.float64), (dict(), np.float32),
                                      (dict(robust=True, seasonal_deg=0, trend_deg=2),
                                       np.float64),
                                      (dict(seasonal_jump=3, trend_jump=5), np.float64)])
@pytest.mark.gpu_layout
def test_stl_flat_moment_major_partials_bit_identical(device, dtype, kw):
    """The flat LOESS's partial moments moment-major (GPUs) against per work-item (CPUs), with
    missing values: same bits on pocl. Intel's CPU compiler builds the two layouts' kernels
    with different roundings (1 ulp apart in float64, deterministic; the CPUs keep layout 0,
    so their results are today's; the robust fits carry it to ~200 ulps). The sweep of the
    fit's options in float64, float32 with the defaults."""
    if dtype == np.float64 and not device.fp64:
        pytest.skip("no fp64")
    rng = np.random.default_rng(8)
    y = (np.sin(np.arange(150) * 2 * np.pi / 12)[None, :] + 0.2 * rng.standard_normal((7, 150)))
    y[rng.random(y.shape) < 0.05] = np.nan
    y = y.astype(dtype)
    a, b = (clts.stl(y, 12, seasonal=13, device=device, version="flat", progress=False,
                     interleave=v, chunk=4, **kw) for v in (1, 0))
    exact = "portable computing" in device.info.platform.lower()
    for name in ("seasonal", "trend", "resid"):
        x, z = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        if exact:
            assert np.array_equal(x, z, equal_nan=True), name
        else:
            eps = np.finfo(dtype).eps
            # the robustness iterations carry the 1-ulp differences on (~200 ulps seen)
            np.testing.assert_allclose(x, z, rtol=0, atol=1e3 * eps * np.nanmax(np.abs(y)),
                                       err_msg=name)


def test_stl_flat_interleave_profile():
    from clts.stl.plan import read_choices
    gpu = emulation.emulate("a100", _pocl())
    assert read_choices(gpu, None)["interleave"] == 1
    with pytest.raises(ValueError, match="interleave"):
        read_choices(gpu, {"interleave": 2})


@pytest.mark.oclgrind
def test_stl_flat_moment_major_tiny(device):
    y = np.sin(np.arange(40) * 2 * np.pi / 6)[None, :] + 0.1 * np.arange(80).reshape(2, 40)
    y = y.astype(np.float64 if device.fp64 else np.float32)
    a, b = (clts.stl(y, 6, device=device, version="flat", progress=False,
                     interleave=v, chunk=2) for v in (1, 0))
    if "portable computing" in device.info.platform.lower():
        assert np.array_equal(a.trend, b.trend) and np.array_equal(a.seasonal, b.seasonal)
    else:       # Intel's CPU compiler: 1 ulp apart (test_stl_flat_moment_major_partials...)
        tol = 1e3 * np.finfo(y.dtype).eps * np.abs(y).max()
        np.testing.assert_allclose(a.trend, b.trend, rtol=0, atol=tol)
        np.testing.assert_allclose(a.seasonal, b.seasonal, rtol=0, atol=tol)


@pytest.mark.parametrize("name", ["mi100", "a100"])
def test_tke_stored_advection_where_registers_demand(name, device):
    """GPUs: float64 TKE steps take stored advection (inline: 158-160 registers), float32 keep
    inline; a forced advection is kept; CPU profiles unchanged."""
    from clts.ocean.plan import Problem as OceanProblem
    from clts.ocean.plan import make_tke_plan
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    gpu = emulation.emulate(name, _pocl())
    assert make_tke_plan(gpu, OceanProblem(8)).advection == "stored"
    assert make_tke_plan(gpu, OceanProblem(4)).advection == "inline"
    assert make_tke_plan(gpu, OceanProblem(8), advection="inline").advection == "inline"
    if device.info.type == "cpu":
        assert make_tke_plan(device, OceanProblem(8)).advection == make_tke_plan(device, OceanProblem(4)).advection
    with pytest.raises(ValueError, match="inline_max_itemsize"):
        make_tke_plan(gpu, OceanProblem(8), inline_max_itemsize=-1)


@pytest.mark.parametrize("name,dtype,n,want", [
    ("mi100", np.float64, 11, "thomas-unrolled"), ("mi100", np.float64, 15, "thomas-coalesced"),
    ("mi100", np.float32, 15, "thomas-unrolled"), ("a100", np.float64, 24, "thomas-unrolled"),
    ("a100", np.float64, 28, "thomas-coalesced")])
def test_tridiag_unrolled_only_where_registers_fit(name, dtype, n, want):
    """GPUs unroll a system only while n x itemsize <= tridiag.unrolled.max_bytes (registers),
    else the transposed coalesced path; its result is the reference's."""
    from clts.tridiag import reference as tref
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    gpu = emulation.emulate(name, _pocl())
    rng = np.random.default_rng(2)
    a, c, d = (rng.standard_normal((5000, n)).astype(dtype) for _ in range(3))
    b = (4 + rng.random((5000, n))).astype(dtype)
    r = clts.solve_tridiagonal(a, b, c, d, device=gpu)
    assert r.plan.method == want
    x, _ = tref.solve_reference(a, b, c, d)
    assert np.max(np.abs(r.x - x)) < 1e3 * np.finfo(dtype).eps
    r0 = clts.solve_tridiagonal(a, b, c, d, device=gpu, unrolled_max_bytes=0)
    assert r0.plan.method == "thomas-unrolled"


#: the top-k window layout (topk_store="window") forced: (tile, wg, fold, groups)
MP_WINDOWS = [dict(tile=1, wg=4, fold=0, groups=4), dict(tile=32, wg=64, fold=64, groups=4),
              dict(tile=3, wg=8, fold=8, groups=1), dict(tile=5, wg=2, fold=0, groups=3)]


#: (k, precision, the MP_WINDOWS it runs): every window at k = 3 in both precisions; the k
#: sweep (1, 2, 4) in double, two windows each, so that each window also runs at another k
MP_WINDOW_CASES = [(3, "double", (0, 1, 2, 3)), (3, "single", (0, 1, 2, 3)),
                   (1, "double", (2, 3)), (2, "double", (1, 3)), (4, "double", (0, 2))]


@pytest.mark.gpu_layout
@pytest.mark.parametrize("k,precision,windows", MP_WINDOW_CASES)
def test_mp_topk_window_bit_identical(device, k, precision, windows):
    """topk_store="window" (the band's column k-lists in registers, the tile's entry floors read
    by the work-group together; the GPU profiles' choice where the occupancy model rates it
    higher) forced on this device: the profile of the device's own (CPU) layout at the same
    segment, bit for bit, self-join (rows, columns) and AB-join with both sides, a constant
    stretch and a missing value, floor tiles of 1-32 rows, 2-64 work-items a group (more than
    the launch's bands too), folds 0 and > 0, bands of 1, 3 and 4 (every window at k = 3 in
    both precisions, the k sweep in double: ``MP_WINDOW_CASES``)."""
    if precision == "double" and not device.fp64:
        pytest.skip("no fp64")
    rng = np.random.default_rng(11)
    T = np.cumsum(rng.standard_normal(420))
    T[90:120] = 1.0
    T[300] = np.nan
    TB = np.cumsum(rng.standard_normal(260))
    kw = dict(k=k, precision=precision, device=device, progress=False, segment=64)
    for extra in ({}, {"T_B": TB, "both": True}):
        r0 = clts.matrix_profile(T, 12, **kw, **extra)
        for w in (MP_WINDOWS[i] for i in windows):
            r1 = clts.matrix_profile(T, 12, **kw, **extra, topk_store="window", lanes=1,
                                     interleave=1, **w)
            for a in ("P", "I", "left_P", "left_I", "right_P", "right_I", "P_B", "I_B"):
                x, y = getattr(r0, a, None), getattr(r1, a, None)
                assert (x is None) == (y is None)
                if x is not None:
                    assert np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True), (a, w)


def test_mp_topk_window_needs_one_lane():
    from clts.mp.plan import Plan, PlanValueError
    p = Plan(lanes=4, groups=2, tile=8, segment=64, wg=4, merge="partial", store="private",
             topk_store="window", precision="double", block_rows=256, unroll=1)
    with pytest.raises(PlanValueError, match="topk_store"):
        p.validate()


@pytest.mark.parametrize("name", ["a100", "h100", "mi100", "mi210", "intel-max-1550",
                                  "intel-arc-a770", "intel-iris-xe"])
def test_mp_topk_store_by_occupancy_model(name):
    """Under every emulated GPU the Plan's top-k layout is the one of "local" (its tile cut by
    the model) and "window" the occupancy model rates higher with the recorded figures, and
    never a build whose recorded figures spill (the window at SIMD32 on pvc); forced, kept."""
    from clts.mp.plan import Problem, make_plan, topk_window_local
    from clts.mp.tiles import topk_tile as _topk_tile
    from clts.runtime import occupancy as occ
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    gpu = emulation.emulate(name, _pocl())
    prec = "double" if gpu.fp64 else "single"
    plan = make_plan(gpu, Problem(64, prec))
    assert make_plan(gpu, Problem(64, prec), topk_store="local").topk_store == "local"
    common = dict(K=3, real=plan.kernel_real, lanes=1, groups=plan.groups, wg=plan.wg)
    tpl = "mp/diag_topk.cl.mako"
    win = occ.recorded(occ.target_of(gpu), tpl, "diag_topk", dict(common, WINDOW=1, LOCAL=0))
    assert win is not None and win.params.get("WINDOW") == 1
    if win.spill:
        assert plan.topk_store == "local"
        return
    assert plan.topk_store == "window"
    ow = occ.kernel_occupancy(gpu, tpl, "diag_topk", dict(common, WINDOW=1, LOCAL=0),
                              work_group=plan.wg,
                              local_mem=topk_window_local(plan.tile, plan.band, plan.wg,
                                                          plan.kernel_real))
    loc = make_plan(gpu, Problem(64, prec), topk_store="local")
    L, _ = _topk_tile(gpu, loc, 3)
    rs = 8 if plan.kernel_real == "double" else 4
    ol = occ.kernel_occupancy(gpu, tpl, "diag_topk", dict(common, LOCAL=1), work_group=plan.wg,
                              local_mem=plan.wg * (L + plan.band) * (3 * (rs + 4) + rs))
    assert ow.fraction >= ol.fraction, (ow, ol)

