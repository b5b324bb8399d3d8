"""The per-pixel fit kernels of ``bfast_breaks`` on device cubes (``bp_post``, ``bp_start``,
``bp_magnitudes`` in ``templates/bfast/device.cl.mako``) take their fit to the device from the
breakpoints Plan (``fit_params``): the sub-group size and, from ``FIT_LARGE_GRF_FROM``
regressors on, the register mode of Intel GPUs; the waves per SIMD of AMD GPUs up to
``FIT_WAVES_MAX_K`` regressors (profile ``bfast.breakpoints.waves``, MI100 4). A value the
caller forces reaches them too; the attributes are no-ops on CPUs (the same bits)."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import clts
from clts.bfast.breakpoints_plan import (FIT_LARGE_GRF_FROM, FIT_WAVES_MAX_K, Problem,
                                         make_plan)
from clts.runtime import emulation, programs
from emulated import gpus_over_pocl
from test_bfast_device import _breaks_cube, _to_device

TPL = "bfast/device.cl.mako"


@pytest.fixture(autouse=True)
def _quiet():
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)


def test_waves_per_regressors():
    mi100 = emulation.emulate("mi100")
    for K in range(1, 10):
        want = 4 if K <= FIT_WAVES_MAX_K else 0
        for itemsize in (4, 8):
            plan = make_plan(mi100, Problem(200, K, itemsize))
            assert plan.waves == want, (K, itemsize)
            assert plan.fit_params() == ({"WAVES": 4} if want else {}), K
    assert make_plan(mi100, Problem(200, 8, 8), waves=4).waves == 4      # forced: kept
    assert make_plan(mi100, Problem(200, 4, 8), waves=0).fit_params() == {}
    for name in ("a100", "h100", "mi210", "intel-arc-a770", "intel-iris-xe"):
        assert make_plan(emulation.emulate(name), Problem(200, 4, 8)).waves == 0, name
    for bad in (-1, 11, 2.5, True):
        with pytest.raises(ValueError, match="waves"):
            make_plan(mi100, Problem(200, 4, 8), waves=bad)


def test_large_grf_of_the_fit_kernels():
    """Intel's Data Center GPU Max: 256 GRF for the fit kernels from 7 regressors on (either
    precision: they accumulate in float64), for bp_rss from 8 (float64) / 13 (float32)."""
    emu = emulation.emulate("intel-max-1550")
    assert FIT_LARGE_GRF_FROM == 7
    for K in (2, 6, 7, 8, 12):
        for itemsize in (4, 8):
            plan = make_plan(emu, Problem(274, K, itemsize))
            fit = 256 if K >= 7 else 0
            assert plan.fit_grf == fit, (K, itemsize)
            assert plan.fit_params() == dict({"SG": 16}, **({"grf": 256} if fit else {}))
    assert make_plan(emu, Problem(274, 7, 8)).grf == 0          # bp_rss: from 8
    assert make_plan(emu, Problem(274, 2, 8), grf=256).fit_grf == 256      # forced: taken
    assert make_plan(emu, Problem(274, 8, 8), grf=0).fit_params() == {"SG": 16}


def test_sources(device):
    """The attributes are rendered only where a Plan asks for them, inside the guards of the
    compilers that know them; the steps' build has none of the fit kernels, nor they its."""
    base = dict(real="double", acc="double", in_type="float", has_nodata=1, K=4, kernels="fit")
    plain = programs.render(TPL, base)
    assert "amdgpu_waves_per_eu" not in plain and "intel_reqd_sub_group_size" not in plain
    steps = programs.render(TPL, dict(base, kernels="steps"))
    for name in ("bp_post", "bp_start", "bp_magnitudes"):
        assert f"void {name}(" in plain and f"void {name}(" not in steps
    for name in ("gather_raw", "gather_real", "first_valid", "coef_post", "bp_select"):
        assert f"void {name}(" in steps and f"void {name}(" not in plain
    cpu = make_plan(device, Problem(200, 4, 8))
    if device.type == "cpu":
        assert cpu.fit_params() == {}
    amd = programs.render(TPL, dict(base, **make_plan(emulation.emulate("mi100"),
                                                       Problem(200, 4, 8)).fit_params()))
    assert amd.count("#ifdef __AMDGCN__\n__attribute__((amdgpu_waves_per_eu(4)))\n#endif\n"
                     "__kernel void bp_") == 2                  # bp_post, bp_magnitudes
    intel = programs.render(TPL, dict(base, K=8, **make_plan(emulation.emulate("intel-max-1550"),
                                                              Problem(274, 8, 8)).fit_params()))
    assert intel.count("__attribute__((intel_reqd_sub_group_size(16)))\n#endif\n"
                       "__kernel void bp_") == 2
    assert "build parameters grf=256" in intel


def _record(monkeypatch):
    """The fit parameters of every device-path program a call asks for."""
    from clts.bfast import device as dv
    seen = []
    real = dv.program

    def program(dev, **kw):
        prg = real(dev, **kw)
        fit = kw.get("fit")
        seen.append(fit.fit_params() if fit is not None else None)
        return prg
    monkeypatch.setattr(dv, "program", program)
    return seen


def test_device_cube_on_mi100_same_bits(monkeypatch):
    """bfast_breaks of a device cube on the emulated MI100 (K = 4: the hint taken) builds its
    fit kernels with WAVES = 4, its other kernels without; the results are the bits of pocl's
    own Plan with the hint forced off."""
    gpus = gpus_over_pocl()
    if "mi100" not in gpus:
        pytest.skip("pocl is not usable here")
    mi100 = gpus["mi100"]
    y, t = _breaks_cube(3, N=90, M=13)
    kw = dict(freq=1, order=1, breaks=3, progress=False, device=mi100)     # K = 4
    seen = _record(monkeypatch)
    r = clts.to_numpy(clts.bfast_breaks(_to_device(mi100, y), t, **kw))
    assert {"WAVES": 4} in seen and None in seen, seen
    assert all(s in ({"WAVES": 4}, None) for s in seen), seen
    seen.clear()
    off = clts.to_numpy(clts.bfast_breaks(_to_device(mi100, y), t, waves=0, **kw))
    assert {"WAVES": 4} not in seen and {} in seen, seen
    for name in ("n_breaks", "breakpoints", "rss", "nobs", "status", "magnitudes", "bic"):
        np.testing.assert_array_equal(getattr(r, name), getattr(off, name), err_msg=name)


def test_forced_subgroup_reaches_the_fit_kernels(device, monkeypatch):
    """A forced ``subgroup`` fits bp_rss and the fit kernels alike (a no-op on CPU drivers
    without cl_intel_required_subgroup_size; Intel's CPU runtime has it: the same bits)."""
    y, t = _breaks_cube(4, N=80, M=9)
    kw = dict(freq=1, order=1, breaks=2, progress=False, device=device)
    own = clts.to_numpy(clts.bfast_breaks(_to_device(device, y), t, **kw))
    seen = _record(monkeypatch)
    sg = clts.to_numpy(clts.bfast_breaks(_to_device(device, y), t, subgroup=16, **kw))
    assert {"SG": 16} in seen, seen
    for name in ("n_breaks", "breakpoints", "rss", "nobs", "status", "magnitudes"):
        np.testing.assert_array_equal(getattr(sg, name), getattr(own, name), err_msg=name)
