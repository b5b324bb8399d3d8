"""BFAST's K x K matrices held by K work-items per pixel (``matrix="rows"``, the GPUs' choice:
the multi version's Gram kernel and the history="ROC" kernel's Givens pipeline) against one
work-item per pixel (``matrix="pixel"``, the CPUs'): the same bits, and the Plans choose them
per device from the profile."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import clts
from clts.runtime import emulation
from exactness import assert_same_across_programs

FIELDS = ("breaks", "means", "magnitudes", "valids", "status", "history_start", "mosum",
          "sigma", "coef")


def _cube(seed, M=45, N=150, n_hist=80, dtype=np.float64):
    rng = np.random.default_rng(seed)
    t = np.arange(N, dtype=np.float64) * 16 + 10
    y = (3 + 0.001 * t[:, None] + np.sin(2 * np.pi * t[:, None] / 365 + rng.uniform(0, 6, M))
         + 0.3 * rng.standard_normal((N, M)))
    y -= (np.arange(N)[:, None] >= rng.integers(n_hist, N, M)) * rng.uniform(0, 3, M)
    # unstable early histories (the ROC test cuts them), gaps, a pixel with few values
    y[: n_hist // 3] += (rng.random(M) < 0.5) * rng.uniform(1, 3, M)
    y[rng.random((N, M)) < 0.15] = np.nan
    y[: n_hist - 5, 3] = np.nan
    y[:, 4] = 2.0                    # an exact fit
    return y.astype(dtype), t, t[n_hist]


def _same(a, b, history, device):
    for name in FIELDS:
        if history != "ROC" and name == "history_start":
            continue
        assert_same_across_programs(getattr(a, name), getattr(b, name), device, name)


#: (version, history, dtype, k, wg, scratch). Every version, history and precision at K = 8,
#: work-groups of 8 pixels, time-major scratch; the other work-group shapes (of one pixel,
#: wg < K; not a multiple of K) and the pixel-major scratch with both histories of the multi
#: version, one precision each: the fused version's "rows" code is the Rec-CUSUM kernel of
#: history="ROC" (its own program holds no K x K matrix), the same program as the multi
#: version's for one K, precision, work-group and scratch; the group shapes index alike in
#: both precisions.
ROWS_CASES = [(v, h, d, 3, 64, "time") for v in ("multi", "fused") for h in ("all", "ROC")
              for d in (np.float64, np.float32)] + [
    ("multi", "all", np.float64, 1, 12, "pixel"), ("multi", "ROC", np.float32, 1, 12, "pixel"),
    ("multi", "all", np.float32, 2, 5, "time"), ("multi", "ROC", np.float64, 2, 5, "time")]


@pytest.mark.gpu_layout
@pytest.mark.parametrize("version,history,dtype,k,wg,scratch", ROWS_CASES)
def test_bfast_rows_bit_identical(device, version, history, dtype, k, wg, scratch):
    """K work-items per pixel (rows) against one (pixel): same bits in several chunks, for
    work-groups of several pixels, of one (wg < K) and not a multiple of K (``ROWS_CASES``)."""
    if dtype == np.float64 and not device.fp64:
        pytest.skip("no fp64")
    y, t, start = _cube(11, dtype=dtype)
    kw = dict(device=device, version=version, lanes=1, history=history, detailed=True,
              k=k, scratch=scratch, wg=wg, roc_wg=wg, progress=False,
              chunk_bytes=y.shape[0] * 2 * y.dtype.itemsize * 20)
    a = clts.bfast_monitor(y, t, start, matrix="rows", **kw)
    b = clts.bfast_monitor(y, t, start, matrix="pixel", **kw)
    assert a.plan.matrix == "rows" and b.plan.matrix == "pixel"
    _same(a, b, history, device)


def test_bfast_rows_nodata_integer_cube(device):
    """An integer cube with a nodata value, lanes > 1 for the sweep (rows kernels are scalar)."""
    y, t, start = _cube(12)
    yi = np.where(np.isnan(y), -9999, np.round(y * 1000)).astype(np.int16)
    kw = dict(device=device, version="multi", lanes=4, history="ROC", nodata=-9999,
              progress=False)
    a = clts.bfast_monitor(yi, t, start, matrix="rows", **kw)
    b = clts.bfast_monitor(yi, t, start, matrix="pixel", **kw)
    for name in ("breaks", "means", "magnitudes", "history_start", "status"):
        assert_same_across_programs(getattr(a, name), getattr(b, name), device, name)


@pytest.mark.oclgrind
def test_bfast_rows_tiny(device):
    y, t, start = _cube(4, M=5, N=40, n_hist=24, dtype=np.float32)
    kw = dict(device=device, history="ROC", version="multi", lanes=1, wg=8, roc_wg=8,
              progress=False)
    a = clts.bfast_monitor(y, t, start, matrix="rows", **kw)
    b = clts.bfast_monitor(y, t, start, matrix="pixel", **kw)
    for name in ("breaks", "means", "magnitudes", "history_start"):
        assert_same_across_programs(getattr(a, name), getattr(b, name), device, name)


def _pocl():
    from clts.runtime import usable
    hits = [i for i in usable() if "portable computing" in i.platform.lower()]
    if not hits:
        pytest.skip("emulation tests run on pocl; no pocl device here")
    return hits[0]


@pytest.mark.parametrize("name", ["a100", "h100", "mi100", "mi210", "intel-max-1550"])
def test_bfast_plan_rows_on_gpus(name, device):
    from clts.bfast.plan import Problem, make_plan
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    assert make_plan(emulation.emulate(name, _pocl()), Problem(80, 8)).matrix == "rows"
    if device.info.type == "cpu":
        assert make_plan(device, Problem(80, 8)).matrix == "pixel"
    with pytest.raises(ValueError, match="matrix"):
        make_plan(device, Problem(80, 8), matrix="columns")


@pytest.mark.gpu_layout
@pytest.mark.parametrize("lanes,history,dtype", [
    (1, "all", np.float64), (1, "ROC", np.float32), (4, "all", np.float32),
    (4, "ROC", np.float64)])
def test_bfast_bounds_table_bit_identical(device, lanes, history, dtype):
    """R's boundary tabulated once (bounds="table", GPUs) against evaluated per date in the
    sweep (bounds="inline", CPUs), with the sub-group hint (ignored where unknown): each lanes
    with each history and with each precision, and each history with each precision (every
    pair of the three, not every triple: a program each)."""
    if dtype == np.float64 and not device.fp64:
        pytest.skip("no fp64")
    y, t, start = _cube(13, dtype=dtype)
    kw = dict(device=device, version="multi", lanes=lanes, history=history, detailed=True,
              progress=False, chunk_bytes=y.shape[0] * 2 * y.dtype.itemsize * 16)
    a = clts.bfast_monitor(y, t, start, bounds="table", subgroup=16, **kw)
    b = clts.bfast_monitor(y, t, start, bounds="inline", **kw)
    assert a.plan.bounds == "table" and b.plan.bounds == "inline"
    _same(a, b, history, device)


@pytest.mark.oclgrind
def test_bfast_bounds_table_tiny(device):
    y, t, start = _cube(5, M=5, N=40, n_hist=24, dtype=np.float32)
    kw = dict(device=device, version="multi", lanes=1, wg=8, progress=False)
    a = clts.bfast_monitor(y, t, start, bounds="table", **kw)
    b = clts.bfast_monitor(y, t, start, bounds="inline", **kw)
    for name in ("breaks", "means", "magnitudes"):
        assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name


def test_bfast_plan_bounds_subgroup():
    from clts.bfast.plan import Problem, make_plan
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    pocl = _pocl()
    assert make_plan(emulation.emulate("mi100", pocl), Problem(80, 8)).bounds == "table"
    assert make_plan(emulation.emulate("intel-max-1550", pocl), Problem(80, 8)).subgroup == 16
    assert make_plan(emulation.emulate("a100", pocl), Problem(80, 8)).subgroup == 0
    gpu = emulation.emulate("a100", pocl)
    with pytest.raises(ValueError, match="bounds"):
        make_plan(gpu, Problem(80, 8), bounds="lookup")
    with pytest.raises(ValueError, match="subgroup"):
        make_plan(gpu, Problem(80, 8), subgroup=12)
