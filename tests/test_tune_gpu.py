"""clts-tune on GPUs, under emulated GPU descriptions on pocl (nothing is timed or built):
workloads grow to fill the device, no work-group below the SIMD width is a candidate, the
occupancy rating skips what the resource gate would fail, and an entry whose best time is launch
overhead keeps its previous value. On CPUs the workloads and candidate spaces are today's
(``tests/data/tune-cpu-spaces.json``, the lists before GPU sizing existed).
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

import clts
from clts.runtime import emulation
from clts.tune import Tunable, load_all, sizing
from clts.tune import cli
from clts.tune.engine import Settings, Tuner
from clts.tune.output import build_profile
from clts.tune.timer import FakeTimer

CPU = json.loads((Path(__file__).parent / "data" / "tune-cpu-spaces.json").read_text())
GPUS = ("h100", "mi100", "intel-arc-a770", "intel-iris-xe")


def _pocl():
    from clts.runtime import usable
    hits = [i for i in usable() if "portable computing" in i.platform.lower()]
    if not hits:
        pytest.skip("emulation tests run on pocl; no pocl device here")
    return hits[0]


@pytest.fixture(scope="module")
def registry():
    return load_all(strict=True)


@pytest.fixture(params=GPUS)
def gpu(request):
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    return emulation.emulate(request.param, _pocl())


def test_cpu_workloads_and_spaces_are_unchanged(registry, device):
    if device.type == "gpu":
        pytest.skip("a CPU test")
    assert set(registry.tunables) == set(CPU)
    tuner = Tuner(device)
    for name, e in registry.tunables.items():
        want = CPU[name]
        assert tuner.space(e) == want["params"] == e.params, name
        for quick, key in ((True, "quick"), (False, "full")):
            assert sizing.sizes(e, quick, device) == want[key], (name, key)
            assert sizing.sizes(e, quick, None) == want[key], (name, key)
        assert sizing.min_seconds(device) == 0.0


def test_gpu_workloads_fill_the_device(registry, gpu):
    fill = sizing.fill_items(gpu, 64)
    assert fill == 4 * gpu.compute_units * 64
    grew = []
    for name, e in registry.tunables.items():
        for quick, key in ((True, "quick"), (False, "full")):
            got, cpu = sizing.sizes(e, quick, gpu), CPU[name][key]
            assert len(got) == len(cpu) and got[0].keys() == cpu[0].keys(), name
            for g, c in zip(got, cpu):            # never smaller than the CPU's
                assert all(g[k] >= c[k] for k in c), (name, g, c)
            if quick and got != cpu:
                grew.append(name)
    # every entry whose kernels took microseconds on the H100 with the CPU sizes grows
    for name in ("tridiag.thomas", "tridiag.coalesced", "tridiag.unrolled", "tridiag.pcr",
                 "tridiag.flat", "mp.diag", "mp.mass", "stl.outer", "bfast.fused",
                 "bfast.multi", "bfast.roc", "bfast.breakpoints", "ocean.tke",
                 "ocean.superbee.fused", "trend.pairs"):
        assert name in grew, name
    thomas = sizing.sizes(registry.tunables["tridiag.thomas"], True, gpu)[0]
    assert thomas["batch"] >= min(fill, sizing.max_bytes(gpu) // (115 * 40))
    bfast = sizing.sizes(registry.tunables["bfast.fused"], True, gpu)[0]
    assert bfast["pixels"] >= min(fill, sizing.max_bytes(gpu) // (256 * 12))
    # within the byte limit of one workload
    assert thomas["batch"] * thomas["n"] * 40 <= sizing.max_bytes(gpu)


def test_h100_sizes(registry):
    h100 = emulation.emulate("h100", _pocl())
    s = {n: sizing.sizes(e, True, h100) for n, e in registry.tunables.items()}
    assert s["tridiag.thomas"][0] == {"batch": 4 * 132 * 64, "n": 115}
    assert s["mp.diag"] == [{"n": 1 << 14, "m": 256}]
    assert s["mp.topk"] == CPU["mp.topk"]["quick"]          # already hundreds of ms there
    assert s["bfast.fused"] == [{"pixels": 4 * 132 * 64, "N": 256, "n": 128}]
    assert s["ocean.superbee.fused"] == [{"cells": 1 << 20}]


def test_no_sub_warp_work_group_is_a_candidate(registry, gpu):
    simd = sizing.simd_width(gpu)
    assert simd == gpu.simd_width > 1
    tuner = Tuner(gpu)
    for name, e in registry.tunables.items():
        cands, _ = tuner.candidates(e)
        assert cands, name
        for p in cands:
            for k in e.wg_params:
                if k in p:
                    assert p[k] == 0 or simd <= p[k] <= gpu.max_work_group, (name, p)
            if e.work_group is not None:
                assert e.work_group(p) >= simd, (name, p)
    # where the CPU list had only sub-warp sizes, the GPU gets warp-sized ones
    assert tuner.space(registry.tunables["mp.diag"])["wg"] == [simd, 2 * simd]


def test_occupancy_rating_skips_what_the_gate_fails(registry):
    mi100 = emulation.emulate("mi100", _pocl())
    tuner = Tuner(mi100)
    e = registry.tunables["mp.diag"]
    cands, _ = tuner.candidates(e)
    low = tuner.low_occupancy["mp.diag"]
    assert low and all("store=local" in lab for lab in low)
    assert all(e.occupancy(p, mi100) is None or e.occupancy(p, mi100) >= 0.25 for p in cands)
    # a CPU is never rated
    cpu = Tuner(clts.get_device(_pocl()))
    cpu.candidates(e)
    assert cpu.low_occupancy["mp.diag"] == []


def _entry(rates=None):
    return Tunable(name="t.gpu", section="t.small", params={"wg": [4, 32, 64], "lanes": [1, 4]},
                   workloads=lambda quick, device=None: [0], run=lambda d, p, w: w,
                   check=lambda r, w: r == w,
                   occupancy=(lambda p, d: rates.get(p["wg"])) if rates else None)


def test_occupancy_rating_keeps_all_when_all_are_low():
    h100 = emulation.emulate("h100", _pocl())
    tuner = Tuner(h100)
    cands, rej = tuner.candidates(_entry({32: 0.5, 64: 0.1}))
    assert {p["wg"] for p in cands} == {32} and rej == 2
    assert tuner.low_occupancy["t.gpu"] == ["wg=64,lanes=1", "wg=64,lanes=4"]
    cands, _ = tuner.candidates(_entry({32: 0.1, 64: 0.1}))
    assert {p["wg"] for p in cands} == {32, 64}


@pytest.mark.parametrize("seconds,decided", [(20e-6, False), (80e-6, True)])
def test_guard_keeps_the_previous_value_when_launch_overhead_decides(seconds, decided,
                                                                     monkeypatch):
    h100 = emulation.emulate("h100", _pocl())
    monkeypatch.setitem(h100.profile.values, "t", {"small": {"wg": 64, "lanes": 4}})
    table = {"wg=32,lanes=1": seconds, "wg=32,lanes=4": 2 * seconds,
             "wg=64,lanes=1": 1.5 * seconds, "wg=64,lanes=4": 3 * seconds}
    settings = Settings(repeats=3, max_rounds=1)
    res = Tuner(h100, timer=FakeTimer(table), settings=settings).tune_tunable(_entry())
    assert res.best.params == {"wg": 32, "lanes": 1}
    if decided:
        assert res.status == "ok" and res.values == {"t.small.wg": 32, "t.small.lanes": 1}
        return
    assert res.too_small and res.status == "too small to decide"
    assert res.values == {"t.small.wg": 64, "t.small.lanes": 4}      # the previous value
    assert any("launch overhead" in w for w in res.warnings)
    prof = build_profile(h100, [res], settings)
    entry = prof["provenance"]["entries"]["t.gpu"]
    assert entry["status"] == "too small to decide"
    assert entry["kept"] == {"wg": 64, "lanes": 4}
    assert entry["fastest_not_adopted"] == {"wg": 32, "lanes": 1} and "chosen" not in entry
    assert prof["t"]["small"] == {"wg": 64, "lanes": 4}
    assert prof["provenance"]["settings"]["gpu_sizing"]["simd_width"] == 32
    # the same times on a CPU are decided (no guard there)
    cpu = clts.get_device(_pocl())
    res = Tuner(cpu, timer=FakeTimer(table), settings=settings).tune_tunable(_entry())
    assert not res.too_small and res.status == "ok"


def test_provenance_records_workload_sizes():
    e = _entry()
    e.sizes = lambda quick, device=None: [{"batch": 8 if quick else 64, "n": 5}]
    table = {"wg=4,lanes=1": 1e-3, "wg=4,lanes=4": 2e-3, "wg=32,lanes=1": 3e-3,
             "wg=32,lanes=4": 4e-3, "wg=64,lanes=1": 5e-3, "wg=64,lanes=4": 6e-3}
    settings = Settings(repeats=3, max_rounds=1, quick=True)
    res = Tuner(timer=FakeTimer(table), settings=settings).tune_tunable(e)
    assert res.sizes == [{"batch": 8, "n": 5}] and res.best.params == {"wg": 4, "lanes": 1}
    cpu = clts.get_device(_pocl())
    prof = build_profile(cpu, [res], settings)
    assert prof["provenance"]["entries"]["t.gpu"]["workloads"] == [{"batch": 8, "n": 5}]
    assert "gpu_sizing" not in prof["provenance"]["settings"]


def test_dry_run_lists_gpu_workloads(capsys):
    base = clts.get_device(_pocl())
    clts.set_options(emulate="h100")
    assert cli.main(["--dry-run", "--quick", "--device", base.slug, "--only",
                     "tridiag.thomas,bfast.fused"]) == 0
    out = capsys.readouterr().out
    assert "batch=33792 n=115" in out and "pixels=33792 N=256" in out
    clts.set_options(emulate=None)
    assert cli.main(["--dry-run", "--quick", "--device", base.slug, "--only",
                     "tridiag.thomas"]) == 0
    assert "batch=4000 n=115; batch=40 n=1000" in capsys.readouterr().out


def test_unrolled_sweeps_only_sizes_auto_can_unroll(registry):
    """NVIDIA's driver took 190 s to build thomas-unrolled at n = 128 in the H100's quick sweep,
    a size no GPU profile unrolls (float64 n x 8 <= tridiag.unrolled.max_bytes)."""
    gpu = Tuner(emulation.emulate("h100", _pocl()), settings=Settings(quick=True))
    cpu = Tuner(clts.get_device(_pocl()), settings=Settings(quick=True))
    for name in ("tridiag.unrolled_below_n", "tridiag.unrolled_interleaved_below_n"):
        e = registry.crossovers[name]
        assert cpu.sweep_values(e) == e.quick_values == [8, 32, 128]
        assert gpu.sweep_values(e) == [8]                  # generic-gpu: 96 bytes, n <= 12
        assert Tuner(gpu.device).sweep_values(e) == [4, 8]
    e = registry.crossovers["tridiag.flat_min_n"]
    assert gpu.sweep_values(e) == e.quick_values           # the others sweep as before
