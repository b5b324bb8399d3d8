"""A first call builds the programs it needs from several threads at once
(``clts.runtime.programs.prebuild``): the call itself then builds only what depends on data
it computes first, and its results equal a call on a device whose programs were built one by
one."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import clts
from clts.mp import flags
from clts.ocean.inputs import benchmark_inputs
from clts.runtime import devices as devmod, programs

rng = np.random.default_rng(5)
S = np.cumsum(rng.standard_normal(700))
Y = np.sin(2 * np.pi * np.arange(120) / 12) + rng.random((6, 120))
TRI = rng.random((4, 5, 40)) + np.array([0, 4, 0, 0])[:, None, None]
TKE = benchmark_inputs(2 ** 12)

#: name: (call on a device, templates only the call itself builds, templates prebuilt)
CALLS = {
    "matrix_profile": (lambda d: clts.matrix_profile(S, 16, device=d, progress=False).P,
                       set(), {"mp/stats.cl.mako", "mp/prep.cl.mako", "mp/diag_top1.cl.mako",
                              "mp/exact.cl.mako"}),
    "mstump": (lambda d: clts.mstump(np.stack([S, S[::-1]]), 16, device=d)[0],
               {"mp/mdiag.cl.mako"}, {"mp/stats.cl.mako", "mp/prep.cl.mako", "mp/exact.cl.mako"}),
    "bfast_monitor ROC": (lambda d: clts.bfast_monitor(
        Y.T, np.arange(120.0) / 12, 6.0, freq=1.0, history="ROC", device=d,
        progress=False).breaks, set(), None),
    "tridiagonal coalesced": (lambda d: clts.solve_tridiagonal(
        *TRI, version="thomas-coalesced", device=d).x, set(),
        {"tridiag/thomas.cl.mako", "tridiag/transpose.cl.mako"}),
    "ocean.tke stored": (lambda d: clts.ocean.tke(*TKE.values(), device=d,
                                                  advection="stored")[0], set(), None),
}


def _skip_on_nvidia(device):
    if "nvidia" in f"{device.info.platform} {device.info.vendor}".lower():
        pytest.skip("one build thread on NVIDIA's driver (docs/devices.md, known problems)")


@pytest.mark.parametrize("name", list(CALLS))
def test_first_call_builds_at_once(device, name, monkeypatch):
    _skip_on_nvidia(device)
    call, own, ahead = CALLS[name]
    built = {"ahead": set(), "call": set()}
    real_build = programs._build

    def recording(dev, template, params, options):
        side = "ahead" if threading.current_thread().name.startswith("clts-build") else "call"
        built[side].add(template)
        return real_build(dev, template, params, options)
    monkeypatch.setattr(programs, "_build", recording)
    monkeypatch.setattr(programs, "build_threads", lambda dev: 2)   # also on one-CPU runners
    fresh = devmod.Device(device.info)                 # nothing built yet
    got = call(fresh)
    assert built["call"] == own, f"{name}: built by the call, not ahead: {built['call'] - own}"
    assert len(built["ahead"]) >= 2
    if ahead is not None:
        assert built["ahead"] == ahead
    monkeypatch.setattr(programs, "build_threads", lambda dev: 1)   # one by one, this thread
    built["ahead"].clear()
    want = call(devmod.Device(device.info))
    assert not built["ahead"]
    np.testing.assert_array_equal(got, want)


def test_prebuild_skips_what_is_built(device, monkeypatch):
    """A second prebuild of the same programs builds nothing, nor does the call after it."""
    _skip_on_nvidia(device)
    fresh = devmod.Device(device.info)
    specs = [("mp/exact.cl.mako", dict(flags.TEMPLATE, NORMALIZE=1, lanes=1,
                                       real="double" if fresh.fp64 else "float")),
             ("tridiag/transpose.cl.mako", dict(tile=0, tile_y=1))]
    monkeypatch.setattr(programs, "build_threads", lambda dev: 2)
    n = programs.stats["builds"]
    programs.prebuild(fresh, specs)
    assert programs.stats["builds"] == n + 2
    programs.prebuild(fresh, specs)
    assert programs.stats["builds"] == n + 2
    assert fresh.program(specs[1][0], **specs[1][1]) is not None
    assert programs.stats["builds"] == n + 2
