"""The GPU builds of clts.mstump forced on this device: the cooperative re-evaluation of the
winners (``coop``: pair_dist_coop, also under clts.matrix_profile), the sub-group size
(``subgroup``, Intel GPUs) and the waves per SIMD (``waves``, AMD GPUs) of the diagonal
kernel; their profile values against the occupancy model."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

import clts
from clts.mp import exact
from clts.mp.mstump_plan import min_waves
from clts.mp.series import _vw
from clts.runtime import occupancy

#: include / discords / plain-distance paths (p = 2 runs the diagonal kernel)
PATHS = [{}, {"include": [2], "discords": True}, {"normalize": False},
         {"normalize": False, "include": [0, 3]}]
GPU = dict(lanes=1, groups=1, segment=40, wg=64, interleave=1, fold=64)


def _series():
    T = np.cumsum(np.random.default_rng(8).standard_normal((4, 300)), axis=1)
    T[1, 40:70] = 2.0           # constant windows
    T[2, 150] = np.nan          # missing windows
    T[3, 200:230] *= 1e-9       # small-scale windows
    return T


def _precisions(device):
    return ("double", "single") if device.fp64 else ("single",)


def _ulps(P0, P1, prec, m):
    """Largest |P1 - P0| in units of the sum's rounding bound (m eps |P|, eps of prec)."""
    eps = np.finfo(np.float64 if prec == "double" else np.float32).eps
    fin = np.isfinite(P0)
    return np.max(np.abs(P1[fin] - P0[fin]) / (m * eps * np.maximum(np.abs(P0[fin]), 1.0)),
                  initial=0)


@pytest.mark.gpu_layout
@pytest.mark.parametrize("kw", PATHS[1::2], ids=["incdisc", "nonorm-inc"])
def test_coop_pairs(device, kw):
    """coop = the device's lanes (8 on CPUs) is the CPU path bit for bit: the work-items of a
    pair sum what wdist's vector lanes sum, in the same order; other widths (the GPUs' 32)
    only reorder the sum of m squares: the same I and P within the sum's rounding bound.
    The pair kernels' source changes with coop, the precision and normalize only (forced
    dimensions and discords change only mexact's sort, which coop leaves as it is): one path
    of each normalize, with forced dimensions, on the GPU layout's winners, which
    test_subgroup_and_waves shows are the CPU layouts' bit for bit on every path. The widths
    sweep in the first precision; the other runs the lanes' width and the GPUs' 32."""
    T, m = _series(), 13
    for prec in _precisions(device):
        P0, I0 = clts.mstump(T, m, device=device, precision=prec, coop=0, **GPU, **kw)
        P1, I1 = clts.mstump(T, m, device=device, precision=prec, coop=_vw(device), **GPU, **kw)
        assert np.array_equal(P0, P1) and np.array_equal(I0, I1), prec
        for coop in (1, 32, 64) if prec == _precisions(device)[0] else (32,):
            P2, I2 = clts.mstump(T, m, device=device, precision=prec, coop=coop, **GPU, **kw)
            assert np.array_equal(I0, I2) and np.array_equal(np.isinf(P0), np.isinf(P2))
            assert _ulps(P0, P2, prec, m) <= 2, (prec, coop)


@pytest.mark.gpu_layout
def test_coop_under_matrix_profile(device, monkeypatch):
    """The 1-D profile's winners (self-join, AB-join, k = 1 and 3) through pair_dist_coop at
    the device's lanes: bit for bit the CPU path."""
    rng = np.random.default_rng(4)
    T = np.cumsum(rng.standard_normal(400))
    T[90:120] = 1.0
    T[300] = np.nan
    TB = np.cumsum(rng.standard_normal(250))
    for prec in _precisions(device):
        for TBx in (None, TB):
            for k in (1, 3):
                want = clts.matrix_profile(T, 15, TBx, k=k, device=device, progress=False,
                                           precision=prec)
                with monkeypatch.context() as mp:
                    mp.setattr(exact, "pair_coop", lambda dev, plan=None: _vw(device))
                    got = clts.matrix_profile(T, 15, TBx, k=k, device=device, progress=False,
                                              precision=prec)
                for a in ("P", "I", "left_P", "left_I", "right_P", "right_I"):
                    x, y = getattr(want, a, None), getattr(got, a, None)
                    assert (x is None) == (y is None)
                    if x is not None:
                        assert np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True), a


@pytest.mark.gpu_layout
@pytest.mark.parametrize("kw", PATHS, ids=["plain", "incdisc", "nonorm", "nonorm-inc"])
def test_subgroup_and_waves(device, kw):
    """The GPU layout (one diagonal per work-item: row bests stored at once, int offsets) is
    the CPU layout's result bit for bit; subgroup (intel_reqd_sub_group_size where the
    compiler has it) and waves (amdgpu_waves_per_eu on AMD GPUs) change only what the
    compiler may do: the same result again. The first path runs in both precisions, with
    the hints (attributes of the kernel that no path's code reads); the others (what they
    change, the sorting network and the plain distances' units, is the same source in
    either precision) in the first precision."""
    T = _series()
    has_sg = "cl_intel_required_subgroup_size" in getattr(device.info, "extensions", "")
    for prec in _precisions(device) if kw == PATHS[0] else _precisions(device)[:1]:
        P0, I0 = clts.mstump(T, 12, device=device, precision=prec, **GPU, **kw)
        for cpu in ({"segment": 40}, {"lanes": 1, "groups": 2, "segment": 40}):
            Pc, Ic = clts.mstump(T, 12, device=device, precision=prec, **cpu, **kw)
            assert np.array_equal(P0, Pc) and np.array_equal(I0, Ic), (prec, cpu)
        if kw != PATHS[0]:
            continue
        for extra in ({"waves": 3}, {"subgroup": 16, "waves": 2}) if has_sg else \
                ({"waves": 3}, {"subgroup": 16}):
            P1, I1 = clts.mstump(T, 12, device=device, precision=prec, **GPU, **extra, **kw)
            assert np.array_equal(P0, P1) and np.array_equal(I0, I1), (prec, extra)


@pytest.mark.gpu_layout
def test_bad_values(device):
    T = _series()
    for name, bad in (("subgroup", 12), ("subgroup", True), ("waves", -1), ("waves", 11),
                      ("coop", 3), ("coop", 128), ("coop", True)):
        with pytest.raises(ValueError, match=name):
            clts.mstump(T, 12, device=device, **{name: bad})


def test_profiles_follow_the_occupancy_model():
    """The shipped GPU profiles' values: MI100 fits the kernel to the fewest waves per SIMD
    that keep a quarter of the CU's waves (occupancy.MIN_FRACTION), the Max GPU asks SIMD16,
    GPUs re-evaluate the winners with 32 work-items a pair (a warp reads one window), CPUs
    with one (pair_dist, as before)."""
    root = Path(clts.__file__).parent / "devices"

    def read(name):
        return yaml.safe_load((root / name).read_text())["mp"]

    assert read("amd-mi100.yaml")["mstump"]["waves"] == min_waves(occupancy.limits("gfx908")) == 3
    assert min_waves(occupancy.limits("gfx90a")) == 2
    assert read("intel-gpu-max.yaml")["mstump"]["subgroup"] == 16
    assert read("generic-gpu.yaml")["exact"]["coop"] == 32
    for name in ("generic-cpu.yaml", "generic-accelerator.yaml"):
        assert read(name)["exact"]["coop"] == 0
        assert read(name)["mstump"]["subgroup"] == read(name)["mstump"]["waves"] == 0


@pytest.mark.parametrize("name,waves,subgroup", [("mi100", 3, 0), ("mi210", 0, 0),
                                                 ("a100", 0, 0), ("intel-max-1550", 0, 16)])
def test_plans_under_emulated_gpus(name, waves, subgroup):
    """What auto builds under the emulated GPUs: the GPU layout, the hint of its vendor, the
    cooperative re-evaluation."""
    from clts.mp.mstump_plan import Problem, make_mstump_plan
    from clts.runtime import emulation, usable
    hits = [i for i in usable() if "portable computing" in i.platform.lower()]
    if not hits:
        pytest.skip("emulation tests run on pocl; no pocl device here")
    gpu = emulation.emulate(name, hits[0])
    p = make_mstump_plan(gpu, Problem("double"))
    assert (p.lanes, p.groups, p.waves, p.subgroup, p.coop) == (1, 1, waves, subgroup, 32)
    assert exact.pair_coop(gpu) == 32
