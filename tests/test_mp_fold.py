"""The GPU profiles' work-group-cooperative folds of the top-k partial lists (mp.diag.fold):
lockstep reads, the rows' cleared heads, the column block's one copy of k-lists in local
memory and its size (clts.mp.plan.topk_fold_cols), pinned to one SIMD width on Intel GPUs.
Under Oclgrind: tests/test_mp.py::test_oclgrind_top_k (interleaved and contiguous partials)."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import clts
from clts.runtime import emulation


def _pocl():
    from clts.runtime import usable
    hits = [i for i in usable() if "portable computing" in i.platform.lower()]
    if not hits:
        pytest.skip("emulation tests run on pocl; no pocl device here")
    return hits[0]


def _same(r0, r1, what):
    for a in ("P", "I", "left_P", "left_I", "right_P", "right_I"):
        x, y = getattr(r0, a, None), getattr(r1, a, None)
        assert (x is None) == (y is None)
        if x is not None:
            assert np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True), (a, what)


@pytest.mark.gpu_layout
@pytest.mark.parametrize("k,precision", [(2, "double"), (4, "single")])
def test_top_k_folds_bit_identical(device, k, precision):
    """fold > 0 forced (one work-item, 8 and 64 a group; interleaved and contiguous partial
    lists; many launches, so that a work-item's rows differ from one launch to the next) gives
    exactly the lists of fold = 0, self-join and AB-join, plateau and missing values.
    k is a loop bound of the folds' source, not a branch of it: each k runs in one precision
    and each precision at one k (every fold, layout and join in each), not their product."""
    if precision == "double" and not device.fp64:
        pytest.skip("no float64")
    rng = np.random.default_rng(7)
    T = np.cumsum(rng.standard_normal(300))
    T[80:105] = 1.0
    T[170] = np.nan
    TB = np.cumsum(rng.standard_normal(220))
    base = dict(k=k, device=device, progress=False, lanes=1, groups=4, tile=8, segment=24,
                wg=4, topk_store="local", precision=precision)
    for TBx in (None, TB):
        r0 = clts.matrix_profile(T, 10, TBx, fold=0, interleave=1, **base)
        for fold, il in ((1, 1), (64, 1), (8, 0)):
            r1 = clts.matrix_profile(T, 10, TBx, fold=fold, interleave=il, **base)
            _same(r0, r1, (fold, il, TBx is None))


@pytest.mark.parametrize("name", ["intel-iris-xe", "a100"])
def test_gpu_profile_folds_bit_identical(name):
    """Under an emulated GPU's profile (its fold and the block topk_fold_cols gives it: Iris
    Xe 32 column groups of 4 columns at k = 3) the profile equals that of fold = 0."""
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    gpu = emulation.emulate(name, _pocl())
    prec = "double" if gpu.fp64 else "single"
    rng = np.random.default_rng(3)
    T = np.cumsum(rng.standard_normal(900))
    T[300] = np.nan
    kw = dict(k=3, device=gpu, progress=False, precision=prec, lanes=1, groups=4, segment=64)
    _same(clts.matrix_profile(T, 16, **kw), clts.matrix_profile(T, 16, fold=0, **kw), name)


@pytest.mark.parametrize("name", ["intel-iris-xe", "intel-arc-a770", "intel-max-1550"])
def test_fold_block_does_not_depend_on_recorded_simd(name, monkeypatch):
    """On Intel GPUs the column fold's block is cut at the sub-group size the template pins
    (FOLD_SIMD_INTEL), whatever width the recorded build had (IGC compiled the 8-group build at
    SIMD8 and the 16-group one at SIMD16: a cut that read the record flipped between them),
    and that block reaches 25 % by the model (Iris Xe float32, k = 3, band 4: 32 groups)."""
    from clts.mp import plan as mplan
    from clts.runtime import occupancy as occ
    gpu = emulation.emulate(name, _pocl())
    real = "double" if gpu.fp64 else "float"
    real_rec = occ.recorded

    def with_simd(simd):
        def fake(target, template, kernel, params=None):
            r = real_rec(target, template, kernel, params)
            return occ.KernelRecord(template, kernel, {}, r.regs if r else 128, simd=simd)
        return fake
    got = set()
    for simd in (8, 16, 32):
        monkeypatch.setattr(occ, "recorded", with_simd(simd))
        got.add(mplan.topk_fold_cols(64, 4, 3, gpu, real))
    assert len(got) == 1, got
    c = got.pop()
    o = occ.occupancy(occ.target_of(gpu), regs=128, work_group=c, simd=mplan.FOLD_SIMD_INTEL,
                      local_mem=mplan.topk_fold_local("reduce_cols_k", c, 4, 3, real))
    assert o.fraction >= occ.MIN_FRACTION, (c, o)
    if name == "intel-iris-xe":
        assert c == 32


def test_fold_template_pins_the_modelled_width():
    """The folds' source asks for the sub-group size the Plan models (where the compiler has
    cl_intel_required_subgroup_size), and its column block takes the local memory the Plan
    counts (one copy of the block's lists and three step flags)."""
    from clts.mp.diagonal import diag_spec
    from clts.mp.plan import FOLD_SIMD_INTEL, Problem, make_plan
    from clts.runtime.programs import render
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    gpu = emulation.emulate("intel-iris-xe", _pocl())
    plan = make_plan(gpu, Problem(64, "single"))
    template, params = diag_spec(gpu, plan, True, True, 3)
    assert params["FOLD"] > 0
    src = render(template, params)
    assert "#ifdef cl_intel_required_subgroup_size" in src
    assert f"intel_reqd_sub_group_size({FOLD_SIMD_INTEL})" in src
    blk = params["FOLDC"] * plan.band * 3
    assert f"__local real gl[{blk}];" in src and f"__local int gli[{blk}];" in src
