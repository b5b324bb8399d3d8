"""The fused BFAST-Monitor kernel's waves per SIMD on AMD GPUs (profile ``bfast.fused.waves``,
MI100 3): the OLS processes build with ``amdgpu_waves_per_eu`` (inside ``#ifdef __AMDGCN__``,
so other drivers compile what they did), ME and RE without it (the hint would spill their
per-date K x K state); results the same bits as without the hint."""
from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np
import pytest

import clts
from clts.bfast import monitor_run
from clts.bfast.plan import Problem, make_plan
from clts.runtime import get_device, programs

sys.path.insert(0, str(Path(__file__).parent))
from emulated import gpus_over_pocl  # noqa: E402


#: the fused template's parameters of a MOSUM call with the hint (the source check)
MOSUM_PARAMS = dict(K=4, TM=1, convention="r", detailed=False, dof_sub=4, ereal="double",
                    has_nodata=False, history="all", in_type="double", lanes=1,
                    magnitudes=True, process="mosum", real="double", tol="1e-10",
                    zv_tol="1e-14", BT=0, WAVES=3)


@pytest.fixture(scope="module")
def mi100():
    gpus = gpus_over_pocl()
    if "mi100" not in gpus:
        pytest.skip("pocl is not usable here")
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    return gpus["mi100"]


def test_plan_field(mi100):
    assert make_plan(mi100, Problem(50, 8), version="fused").waves == 3
    assert make_plan(mi100, Problem(50, 8), version="fused", waves=0).waves == 0
    assert make_plan(mi100, Problem(50, 9), version="fused").waves == 0     # above WAVES_MAX_K
    assert make_plan(mi100, Problem(50, 9), version="fused", waves=3).waves == 3   # forced
    for bad in (-1, 11, 2.5, True):
        with pytest.raises(ValueError, match="waves"):
            make_plan(mi100, Problem(50, 8), version="fused", waves=bad)
    assert make_plan(get_device("pocl"), Problem(50, 8), version="fused").waves == 0   # CPUs


def test_hint_by_process(mi100, monkeypatch):
    """The fused program each call builds (or finds built: the parameters are recorded at
    ``build_program``, with the device's per-call program memo emptied first)."""
    seen = []
    real_build = monitor_run.build_program

    def build(dev, template, params):
        if template == "bfast/fused.cl.mako":
            seen.append((params.get("process"), params.get("WAVES", 0)))
        return real_build(dev, template, params)
    monkeypatch.setattr(monitor_run, "build_program", build)
    mi100.state.constant("bfast.programs", dict).clear()
    rng = np.random.default_rng(3)
    N, M = 90, 40
    t = np.arange(N) * 16.0 + 10
    y = 2 + np.sin(2 * np.pi * t[:, None] / 365) + 0.2 * rng.standard_normal((N, M))
    y[rng.random((N, M)) < 0.1] = np.nan
    for type_, waves in (("OLS-MOSUM", 3), ("OLS-CUSUM", 3), ("ME", 0)):
        kw = dict(device=mi100, version="fused", type=type_, progress=False)
        a = clts.bfast_monitor(y, t, t[60], **kw)
        b = clts.bfast_monitor(y, t, t[60], waves=0, **kw)
        assert a.plan.waves == 3 and b.plan.waves == 0
        for name in ("breaks", "means", "magnitudes", "mosum"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert (("mosum", 3) in seen and ("cusum", 3) in seen and ("me", 0) in seen
            and not any(w for p, w in seen if p in ("me", "re"))), seen
    src = programs.render("bfast/fused.cl.mako", MOSUM_PARAMS)
    assert "amdgpu_waves_per_eu(3)" in src and "#ifdef __AMDGCN__" in src
