"""STL fused per series (Plan ``fused`` > 0): one work-group per series runs whole inner
iterations in local memory and the robustness weights of its outer iteration, one launch per
outer iteration (``templates/stl/fused.cl.mako``). A robust call (15 outer iterations) is 16
launches, a plain call one, against seven or more per inner iteration for the separate kernels.

It takes series that fit a work-group's local memory (:func:`local_bytes`) and linear
interpolation between jumped fits; the Plan falls back to the separate kernels otherwise.
"""
from __future__ import annotations

import numpy as np

from ..runtime.launch import prepare
from ..runtime.plans import local_memory_budget
from .params import QUAD_DET_TOL

#: local memory the fused kernel declares itself besides its arguments: the radix select's
#: histogram (256 uints), its counters, and the reduction row of wg reals
_STATIC = 256 * 4 + 64


def local_bytes(N: int, P: int, itemsize: int, wg: int, complete: bool) -> int:
    """Bytes of local memory one work-group of the fused kernel uses for series of ``N``
    values with period ``P``: five rows of reals (trend, weights, seasonal fits with their
    ends, the first moving average, the smoothers' input; the second moving average shares
    the trend's row), the valid positions with missing values, the select's histogram and
    reduction row."""
    K = -(-N // P)
    reals = 5 * N + 3 * P + 3
    ints = 1 if complete else N + P * K + P + 2
    return reals * itemsize + ints * 4 + _STATIC + wg * itemsize


def fits(dev, N: int, P: int, itemsize: int, wg: int, complete: bool = False) -> bool:
    """Whether the fused kernel's work-group of ``wg`` fits ``dev`` for such series (work-group
    and work-item limits, local memory; the missing-value layout, the larger, when
    ``complete`` is False)."""
    sizes = list(getattr(dev, "max_work_item_sizes", None) or [dev.max_work_group])
    return (0 < wg <= int(dev.max_work_group or 1) and wg <= sizes[0]
            and local_bytes(N, P, itemsize, wg, complete) <= local_memory_budget(dev))


def occupied(dev, N: int, P: int, itemsize: int, wg: int, complete: bool = False) -> bool:
    """Whether a GPU keeps at least ``occupancy.MIN_FRACTION`` of its warps / waves / threads
    resident with such groups, by the occupancy model of its family (local memory per group,
    the kernel's recorded registers where the offline compiles recorded them): the GPU gate's
    floor. True on CPUs and devices without a model."""
    from ..runtime import occupancy
    lim = occupancy.limits_for(dev)
    if lim is None:
        return True
    rec = occupancy.recorded(lim.target, "stl/fused.cl.mako", "stl_fused", {"wg": wg})
    # Intel: the SIMD width IGC picked where recorded, else its widest (IGC compiles this
    # kernel SIMD32: half the hardware threads per group of SIMD16)
    simd = getattr(rec, "simd", None) or (32 if lim.family == "intel" else None)
    o = occupancy.occupancy(lim, regs=rec.regs if rec else 0, work_group=wg,
                            local_mem=local_bytes(N, P, itemsize, wg, complete), barrier=True,
                            simd=simd)
    return o.fraction >= occupancy.MIN_FRACTION


def choose_wg(dev, N: int, P: int, itemsize: int, wg: int, complete: bool, forced: bool):
    """The fused kernel's work-group for such series: ``wg`` (forced: as given, if it fits), or
    the profile's ``wg`` doubled until a GPU's occupancy floor is met (more work-items share
    the same local memory); 0 where no size both fits and meets it."""
    if forced:
        return wg if fits(dev, N, P, itemsize, wg, complete) else 0
    while fits(dev, N, P, itemsize, wg, complete):
        if occupied(dev, N, P, itemsize, wg, complete):
            return wg
        wg *= 2
    return 0


def params(runner, wg: int) -> dict:
    """The template parameters of the fused program of ``runner`` (a call's ``_Runner``)."""
    p = runner.p
    return dict(wg=wg, complete=runner.complete, sdeg=p["seasonal_deg"], tdeg=p["trend_deg"],
                ldeg=p["low_pass_deg"], quad_tol=repr(QUAD_DET_TOL))


def run(runner, wg: int, y, s, t, rw_out=None, passes=None, failed_out=None, row0=0,
        keep=None, hand=None):
    """Enqueue the fused STL of the rows of the device array ``y`` into ``s``, ``t`` (and the
    robustness weights into ``rw_out``); returns the failed-series mask (read back after the
    launches are enqueued). ``passes``: receives one event per outer iteration. With
    ``failed_out`` (a device array of bytes over the whole batch) nothing is read back: the
    mask goes to ``failed_out[row0:row0 + batch]`` (returns None); ``keep``: a list that
    receives the call's temporaries (device results hold them until read); ``hand``: a list
    that receives the call's recording instead of the Runner (``Runner.run``)."""
    import pyopencl as cl

    from ..runtime.memory import scratch
    from ..runtime.pipeline import device_marker
    dev, dt, p = runner.dev, runner.dtype, runner.p
    B, N, P = y.shape[0], runner.N, p["period"]
    K = -(-N // P)
    i32 = np.int32
    # a device call of a shape run before: the recorded launches (``runtime.replay``)
    rkey, slots = runner.recording(y, s, t, rw_out, passes, failed_out, row0)
    if rkey is not None and runner._recorder.replay(rkey, slots, keep, hand):
        return None
    rw = rw_out if rw_out is not None else scratch(dev, (max(B, 1), N), dt)
    failed = failed_out if failed_out is not None else scratch(dev, (max(B, 1),), np.uint8)
    lm = cl.LocalMemory((5 * N + 3 * P + 3) * dt.itemsize)
    li = cl.LocalMemory(4 * (1 if runner.complete else N + P * K + P + 2))
    prg = runner._prog("fused", **params(runner, wg))
    outer = p["outer_iter"]

    def one(first, use_w, robust):
        return prepare(dev, prg, "stl_fused", B * wg, wg, y.data, t.data, s.data, rw.data,
                       failed.data, i32(row0 if failed_out is not None else 0), i32(N),
                       i32(P), i32(K), i32(p["seasonal"]), i32(p["trend"]),
                       i32(p["low_pass"]), i32(p["seasonal_jump"]), i32(p["trend_jump"]),
                       i32(p["low_pass_jump"]), i32(p["inner_iter"]), i32(first), i32(use_w),
                       i32(robust), lm, li)
    launches, seq = {}, []
    for k in range(outer + 1):
        key = (k == 0, k > 0, k < outer)
        go = launches.get(key)
        if go is None:
            go = launches[key] = one(*key)
        go()
        seq.append(go)
        if passes is not None:
            passes.extend(device_marker(dev))
    if keep is not None and rw is not rw_out:
        keep.append(rw)
    if rkey is not None:
        runner._recorder.add(dev, rkey, seq, [rw] if rw is not rw_out else [], slots,
                             hand=hand)
    if failed_out is not None:
        return None
    return failed.get()[:B].astype(bool)
