"""A new series length, period, LOESS window or jump costs STL no build: every size is a kernel
argument (the templates are specialised on structure only: precision, degrees, code version,
lanes, work-group sizes, weights, missing values), and on pocl, which compiles a kernel's
work-group function per local size at its first enqueue, the STL launches use a local size that
does not depend on their range (``runtime.launch.fixed_local``)."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

import clts
from clts.runtime import programs

launch_mod = importlib.import_module("clts.runtime.launch")

#: (length, period, windows and jumps) of the later calls; the first call's structure (jumps
#: above 1, the same batch) is theirs
LATER = [(131, 12, {}), (131, 7, {}),
         (200, 7, dict(seasonal=11, trend=17, low_pass=9, seasonal_jump=3, trend_jump=4,
                       low_pass_jump=3)),
         (333, 24, dict(seasonal=9))]
FIRST = (96, 12, {})
#: later calls whose ranges stay in the first's local-size buckets (runtime.launch.fixed_local)
NEAR = [(97, 12, {}), (97, 7, {}),
        (100, 7, dict(seasonal=11, trend=17, low_pass=9, seasonal_jump=3, trend_jump=4,
                      low_pass_jump=3))]
JUMPS = dict(seasonal_jump=2, trend_jump=2, low_pass_jump=2)


def _y(rng, n, period, missing, batch=10):
    t = np.arange(n)
    y = np.sin(2 * np.pi * t / period) + 0.01 * t + 0.3 * rng.normal(size=(batch, n))
    if missing:
        y[rng.random(y.shape) < 0.08] = np.nan
    return y


def _builds(device):
    return programs.stats["builds"], len(device.state.programs)


def _calls(device, extra, missing, seed=0):
    rng = np.random.default_rng(seed)
    seen = []
    for n, period, kw in [FIRST] + LATER:
        kw = dict(JUMPS, **kw, **extra)
        r = clts.stl(_y(rng, n, period, missing), period=period, device=device, progress=False,
                     **kw)
        assert np.isfinite(r.trend).all()
        seen.append(_builds(device))
    return seen


# the LOESS version forced: ``auto`` picks it from the size (flat below the parallelism
# threshold, then outer), a change of code whose programs are built once per version
@pytest.mark.parametrize("extra", [
    {"version": "outer"}, {"version": "outer", "robust": True}, {"version": "intragroup"},
    {"version": "flat", "robust": True}, {"fused": 64, "robust": True},
    {"mapping": "coalesced", "version": "outer"},
    {"mapping": "coalesced", "version": "flat", "interleave": 1},
    {"version": "outer", "seasonal_deg": 2, "trend_deg": 0}])
@pytest.mark.parametrize("missing", [False, True])
def test_new_length_period_window_builds_nothing(device, extra, missing):
    seen = _calls(device, extra, missing)
    assert seen[1:] == [seen[0]] * len(LATER), seen


@pytest.mark.parametrize("name", ["a100", "mi100"])
def test_gpu_plans_build_nothing_and_keep_local_sizes(name):
    """The GPU profiles' plans (fused STL, coalesced steps, tiled moving averages, grouped
    packed positions) over pocl: no build for a later size, and every launch with a local size
    (pocl compiles one per kernel and local size), the same for a nearby size (the local sizes
    change only by powers of two of the range: test_fixed_local). The one exception is by
    design: the fused kernel's work-group (a template constant: its reduction row and
    ``reqd_work_group_size``) is doubled from the profile's until the occupancy floor is met,
    and the local memory a series needs grows with its length; a length past such a step builds
    the fused program with the next power of two once (on MI100 between 200 and 333 values)."""
    from emulated import gpus_over_pocl
    dev = gpus_over_pocl().get(name)
    if dev is None:
        pytest.skip("pocl is not usable here")
    dev = clts.get_device(dev)
    sizes = []

    def hook(kernel, global_size, local_size, args):
        sizes[-1].add((kernel.function_name, local_size))
    dev.state.launch_hook = hook
    try:
        for fused in (None, 0):
            rng = np.random.default_rng(1)
            before = None
            for i, (n, period, kw) in enumerate([FIRST] + NEAR + LATER):
                sizes.append(set())
                clts.stl(_y(rng, n, period, True), period=period, device=dev, progress=False,
                         robust=True, fused=fused, **dict(JUMPS, **kw))
                if before is None:
                    before = set(dev.state.programs)
                    first = sizes[-1]
                    assert all(local is not None for _, local in first)
                else:
                    new = set(dev.state.programs) - before
                    assert all(key[0] == "stl/fused.cl.mako" for key in new), new
                    if i <= len(NEAR):
                        other = {(k, loc) for k, loc in sizes[-1] ^ first if k != "stl_fused"}
                        assert not other, other
    finally:
        dev.state.launch_hook = None


def test_fixed_local(device):
    per_size = "portable computing" in device.cl_device.platform.name.lower()
    seen = set()
    for g in (1, 63, 64, 65, 1000, 5000, 123457, 10 ** 7):
        got_g, got_l = launch_mod.fixed_local(device, g)
        if per_size:
            size = got_l[0]
            assert size >= launch_mod.FIXED_LOCAL and size & (size - 1) == 0
            assert size <= min(4096, device.max_work_group)
            assert got_g[0] >= g and got_g[0] % size == 0 and got_g[0] - g < size
            seen.add(size)
        else:
            assert (got_g, got_l) == ((g,), None)
    if per_size:
        # a handful of buckets over seven orders of magnitude; nearby ranges share one
        assert len(seen) <= 8
        assert launch_mod.fixed_local(device, 240 * 64)[1] == launch_mod.fixed_local(
            device, 241 * 64)[1]
        assert launch_mod.fixed_local(device, 10 ** 7)[1] == launch_mod.fixed_local(
            device, 3 * 10 ** 7)[1]
    got_g, got_l = launch_mod.fixed_local(device, (130, 7))
    if per_size:
        assert got_l[1] == 1 and got_g[1] == 7 and got_g[0] % got_l[0] == 0
    got_g, got_l = launch_mod.fixed_local(device, 1000, 1)
    if per_size:
        assert (got_g, got_l) == ((1000,), (1,))
    assert launch_mod.fixed_local(device, (0, 3))[0] == (0, 3)
