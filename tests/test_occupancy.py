"""The occupancy model against the vendors' published limits and the figures of the issue that
asked for it (ptxas / AMDGPU compiles of today's kernels)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from clts.runtime import occupancy as occ


def test_nvidia_register_and_block_granularity():
    # 229 registers (bfast_roc on sm_80): 7,424 registers per warp -> 8 warps of 64 = 12.5 %
    o = occ.occupancy("sm_80", regs=229, work_group=128)
    assert (o.resident, o.max_resident, o.limiter) == (8, 64, "registers")
    assert o.fraction == pytest.approx(0.125)
    # 158 registers: 12 warps fit, but whole 256-wide groups (8 warps) only once: 12.5 %
    assert occ.occupancy("sm_80", regs=158, work_group=256).resident == 8
    assert occ.occupancy("sm_80", regs=158, work_group=128).resident == 12
    # 32 registers: the 64-warp limit; tiny groups: the 32-block limit
    assert occ.occupancy("sm_90", regs=32, work_group=256).fraction == 1.0
    o = occ.occupancy("sm_80", regs=16, work_group=32)
    assert (o.resident, o.limiter) == (32, "groups")
    with pytest.raises(ValueError, match="regs"):
        occ.occupancy("sm_80", regs=300, work_group=32)


def test_nvidia_shared_memory_per_sm_and_reserved_kib():
    # diag_topk: a 64-wide group taking ~48 KiB: 3 per A100 SM (164 KiB, 1 KiB reserved each)
    o = occ.occupancy("sm_80", regs=64, work_group=64, local_mem=48 * 1024)
    assert (o.groups, o.resident, o.limiter) == (3, 6, "local memory")
    assert round(100 * o.fraction) == 9
    # the H100's 228 KiB: 4 such groups
    assert occ.occupancy("sm_90", regs=64, work_group=64, local_mem=48 * 1024).groups == 4


def test_amd_waves_from_vgprs_and_lds():
    # gfx908: 256 VGPRs per lane, granule 4, at most 10 waves per SIMD, 4 SIMDs
    assert [occ.waves_per_simd(occ.limits("gfx908"), v) for v in (24, 64, 128, 234, 256)] == \
        [10, 4, 2, 1, 1]
    # gfx90a: 512 unified VGPRs + AGPRs, granule 8, at most 8 waves
    assert [occ.waves_per_simd(occ.limits("gfx90a"), v) for v in (24, 64, 128, 234, 256)] == \
        [8, 8, 4, 2, 2]
    o = occ.occupancy("gfx908", regs=234, work_group=64)        # bfast_roc: 10 %
    assert (o.resident, o.max_resident, o.fraction) == (4, 40, 0.1)
    # diag_topk: one 64-wide group taking all 64 KiB of LDS: 1 wave per CU (2.5 %)
    o = occ.occupancy("gfx908", regs=40, work_group=64, local_mem=65536)
    assert (o.resident, o.limiter) == (1, "local memory") and o.fraction == 0.025
    # diag k=1: 18,432 B per 64-wide group: 3 groups, 3 waves
    assert occ.occupancy("gfx908", regs=40, work_group=64, local_mem=18432).resident == 3
    # multi-wave groups: at most 16 per CU (barriers); a 256-wide group is 4 waves
    assert occ.occupancy("gfx908", regs=24, work_group=128).groups == 16
    assert occ.occupancy("gfx908", regs=24, work_group=256).resident == 40
    # SGPRs: 800 per SIMD in units of 16
    assert occ.waves_per_simd(occ.limits("gfx908"), 24, sgprs=102) == 7


def test_intel_grf_modes():
    assert occ.occupancy("pvc", regs=128, work_group=256).fraction == 1.0
    o = occ.occupancy("pvc", regs=256, grf=256, work_group=256)
    assert o.fraction == 0.5 and o.limiter == "registers"
    assert occ.occupancy("tgllp", regs=128, work_group=64, local_mem=32768).groups == 2
    with pytest.raises(ValueError, match="grf"):
        occ.occupancy("tgllp", regs=256, grf=256, work_group=64)


def test_intel_model_as_the_occupancy_calculator():
    """Intel's GPU Occupancy Calculator: threads per group at IGC's SIMD width, SLM rounded
    up to the allocation sizes, the work-group limit, and 32 barrier registers for groups that
    synchronise."""
    # pvc: 64 threads per Xe-core; wg 128 at SIMD32 = 4 threads, 16 groups: 100 %
    o = occ.occupancy("pvc", regs=128, work_group=128, simd=32)
    assert (o.resident, o.groups, o.fraction) == (64, 16, 1.0)
    # wg 64 at SIMD32 (2 threads): 32 groups without a barrier, 32 barrier registers with one
    assert occ.occupancy("pvc", regs=128, work_group=64, simd=32).groups == 32
    o = occ.occupancy("pvc", regs=128, work_group=32, simd=32, barrier=True)
    assert o.groups == 32 and o.limiter == "barriers" and o.fraction == 0.5
    # SLM: 18,432 B rounds up to 32 KiB, 4 groups of 2 threads on pvc's 128 KiB: 12.5 %
    o = occ.occupancy("pvc", regs=128, work_group=64, simd=32, local_mem=18432, barrier=True)
    assert (o.groups, o.limiter, o.resident) == (4, "local memory", 8)
    # Max also allocates 48 KiB: two groups of 40 KiB
    assert occ.occupancy("pvc", regs=128, work_group=256, simd=16, local_mem=40960).groups == 2
    # dg2: 128 KiB SLM and 128 groups per Xe-core; tgllp: 112 groups, 64 KiB
    assert occ.occupancy("dg2", regs=128, work_group=16, simd=16).fraction == 1.0
    assert occ.occupancy("dg2", regs=128, work_group=256, simd=16, local_mem=65536).groups == 2
    assert occ.occupancy("tgllp", regs=128, work_group=16, simd=16).fraction == 1.0
    # the budget that keeps 4 groups is an allocation size
    assert occ.max_local_mem("pvc", work_group=64, groups=3) == 32768


def test_max_local_mem_keeps_groups_resident():
    lim = occ.limits("gfx908")
    budget = occ.max_local_mem(lim, work_group=64, regs=40, groups=4)
    assert budget == 16384
    assert occ.occupancy(lim, regs=40, work_group=64, local_mem=budget).groups == 4
    # NVIDIA: the reserved KiB counts
    b = occ.max_local_mem("sm_80", work_group=64, regs=64, groups=4)
    assert occ.occupancy("sm_80", regs=64, work_group=64, local_mem=b).groups == 4
    assert occ.occupancy("sm_80", regs=64, work_group=64, local_mem=b + 1).groups == 3
    # registers allow fewer groups than asked: the budget is for those
    assert occ.max_local_mem(lim, work_group=256, regs=128, groups=4) == 65536 // 2


def test_best_picks_first_candidate_reaching_the_minimum():
    cands = [(64, 40, 64, 65536), (32, 40, 64, 16384), (16, 40, 64, 4096)]
    choice, o = occ.best("gfx908", cands, minimum=0.1)
    assert choice == 32 and o.groups == 4
    choice, o = occ.best("gfx908", cands[:1])
    assert choice == 64 and o.fraction == 0.025
    with pytest.raises(ValueError):
        occ.best("gfx908", [])


def test_target_of_devices():
    def info(name, vendor, type="gpu"):
        return SimpleNamespace(info=SimpleNamespace(name=name, vendor=vendor, type=type),
                               description=None)
    assert occ.target_of(info("NVIDIA H100 80GB HBM3", "NVIDIA Corporation")) == "sm_90"
    assert occ.target_of(info("NVIDIA A100-SXM4-40GB", "NVIDIA Corporation")) == "sm_80"
    assert occ.target_of(info("gfx90a:sramecc+:xnack-", "Advanced Micro Devices, Inc.")) == "gfx90a"
    assert occ.target_of(info("Intel(R) Data Center GPU Max 1550", "Intel(R) Corporation")) == "pvc"
    assert occ.target_of(info("Intel(R) Arc(TM) A770 Graphics", "Intel(R) Corporation")) == "dg2"
    assert occ.target_of(info("pthread-AMD EPYC", "AuthenticAMD", "cpu")) is None
    emu = SimpleNamespace(info=None, description={"offline_target": {"cpu": "gfx908"}})
    assert occ.target_of(emu) == "gfx908"
    assert occ.limits_for(emu).cu_waves == 40
    with pytest.raises(ValueError, match="target"):
        occ.limits("sm_70")


def test_emulated_gpus_have_a_target():
    from clts.runtime import emulation
    for name in emulation.names():
        desc = emulation.load(name)
        dev = SimpleNamespace(info=SimpleNamespace(name=desc["name"], vendor=desc["vendor"],
                                                   type="gpu"), description=desc)
        assert occ.target_of(dev) in occ.LIMITS, name


def test_recorded_figures_match_by_parameters(tmp_path, monkeypatch):
    (tmp_path / "gfx908.yaml").write_text(
        "kernels:\n"
        "  - {template: t.cl.mako, kernel: k, params: {LOCAL: 1, TILE: 32}, regs: 40}\n"
        "  - {template: t.cl.mako, kernel: k, params: {LOCAL: 0, TILE: 32}, regs: 90, spill: 8}\n")
    monkeypatch.setattr(occ, "resources_dir", lambda: tmp_path)
    occ.clear_records()
    try:
        assert occ.recorded("gfx908", "t.cl.mako", "k", {"LOCAL": 0}).regs == 90
        assert occ.recorded("gfx908", "t.cl.mako", "k", {"LOCAL": 1, "TILE": 32}).regs == 40
        assert occ.recorded("gfx908", "t.cl.mako", "k", {}).regs == 90   # conservative
        assert occ.recorded("gfx908", "t.cl.mako", "other") is None
        assert occ.recorded("sm_80", "t.cl.mako", "k") is None
        o = occ.kernel_occupancy("gfx908", "t.cl.mako", "k", {"LOCAL": 1}, work_group=64)
        assert o.resident == 24
        assert occ.kernel_occupancy("gfx908", "t.cl.mako", "nope", {}, work_group=64) is None
    finally:
        occ.clear_records()
