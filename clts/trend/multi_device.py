"""The transform and multi-variable variants of the trend test (clts/trend/multi.py) on device
arrays: every step on the device, nothing transferred, mapped or waited for.

* multivariate / regional: the variables interleaved time-major by ``mk_interleave``, then the
  seasonal pair kernel and ``mk_finish`` with a season a variable (the numpy path's test, on the
  same layout).
* correlated multivariate / correlated seasonal / partial: the pair kernel's test for Sen's slope
  (the interleaved variables, the series' seasons, variable 0), the complete time steps
  compacted by ``mk_complete``, ``mk_cross``' integers, then ``mk_correlated``: Gamma, Var(S)
  summed in numpy's order, rho, Z, the significance and the too-few fields, in place.
* pre-whitening / trend-free pre-whitening: the pair kernel's test of the series (Sen's slope),
  ``mk_whiten`` (the valid values whitened by their lag-1 autocorrelation), the pair kernel's
  test of the whitened series, and ``mk_prewhite`` (Sen's fields of the series, the constant
  series' fixed values). The lag-1 autocorrelation's lag-0 sum is numpy's for up to 11 values
  and its mean numpy's pairwise sum; numpy forms the lag-1 sum (and the lag-0 sum above 11
  values) with a BLAS dot, whose order of additions is the library's: there the whitened values
  may differ from numpy input's in their last bits (docs/device-arrays.md).

Kernels: ``templates/trend/multi.cl.mako`` (and the other variants' pair / finish / cross
kernels)."""
from __future__ import annotations

import numpy as np

from ..runtime import launch
from ..runtime.arrays import device_input
from ..runtime.launch import fixed_local
from ..runtime.resident import device_rows
from ..runtime.plans import plan_once
from . import multi
from .plan import Problem, make_plan
from .reference import MIN_VALID, OK, TOO_FEW, normal_ppf


def cpu_sums(dev):
    """Whether the sums go through a volatile (templates/trend/multi.cl.mako, ``add``): on CPUs,
    for Intel's CPU compiler; a GPU's Plans emulated over pocl build the GPU's source, as the
    resource gate compiles it (pocl keeps the additions in order either way)."""
    return dev.type != "gpu"


def sum_depth(n):
    """At least the depth of numpy's pairwise-sum recursion over any ``n`` or fewer values: the
    pending left halves ``numpy_sum`` (templates/trend/multi.cl.mako) keeps per series. A block
    of L > 128 values splits into h = L // 2 rounded down to 8 and L - h <= L // 2 + 8 values;
    L -> L // 2 + 8 never decreases with L, so its steps down to 128 bound every length below
    ``n`` too."""
    d = 0
    while n > 128:
        n = n // 2 + 8
        d += 1
    return d


def device_input_multi(y, dev, variant, time_axis):
    """The device array of ``variant``: [batch, time] / [time] (series variants) or [batch,
    variables, time] / [variables, time] (multi-variable ones), checked, at offset 0; and the
    batch shape of the result."""
    multi_axis = variant in multi.MULTI_VARIANTS
    ndims = (2, 3) if multi_axis else (1, 2)
    device_input(y, "y", dev, ndim=ndims)
    if time_axis is not None and time_axis not in (-1, y.ndim - 1):
        raise ValueError("device arrays have time on the last axis: time_axis must be the "
                         f"last axis, got {time_axis!r}")
    if multi_axis:
        C = y.shape[-2]
        if variant == "partial" and C != 2:
            raise ValueError(f"variant='partial' takes two variables (the tested one and the "
                             f"covariate) on the axis before time, got {C}")
        shape = tuple(y.shape[:-2])
    else:
        shape = tuple(y.shape[:-1])
    rows = y.reshape(-1, y.shape[-1] * (y.shape[-2] if multi_axis else 1))
    return device_rows(rows, 0, rows.shape[0]), shape


def run(dev, y2, variant, P, alpha, conf_level, C, plan_overrides, keep, run_device):
    """Every field (device arrays [B]) of ``variant`` on the rows ``y2`` ([B, N] or, multi-
    variable, [B, C * N]); returns (fields, plan). ``run_device``: the trend test's own device
    run of plain rows (api._run_device), passed in to keep the modules' imports one way."""
    import pyopencl.array as cla
    q = dev.queue
    dt = y2.dtype
    stat = np.dtype(np.float64 if dev.fp64 else np.float32)
    B = y2.shape[0]
    N = y2.shape[1] // C
    real = "double" if dt == np.float64 else "float"
    prg = dev.program("trend/multi.cl.mako", real=real,
                      stat="double" if stat == np.float64 else "float", min_valid=MIN_VALID,
                      ok=OK, too_few=TOO_FEW, cpu_sums=cpu_sums(dev))
    i32, i64 = np.int32, np.int64

    def core(rows, period, slopes=True):
        plan = plan_once(dev, "trend", make_plan, Problem(rows.shape[1], period),
                         **plan_overrides)
        return run_device(dev, plan, rows, "original", alpha, None, conf_level, keep,
                           slopes), plan

    def interleaved():
        flat = cla.empty(q, (B, N * C), dt)
        launch(dev, prg.kernel("mk_interleave"), *fixed_local(dev, B * C * N), y2.data,
               i32(C), i32(N), i64(B * C * N), flat.data)
        keep.append(flat)
        return flat

    zq = stat.type(normal_ppf(1 - alpha / 2))

    def correlated(src, Cv, Ns, period, partial, out):
        xc = cla.empty(q, (max(B * Cv * Ns, 1),), dt)
        nv = cla.empty(q, (max(B, 1),), np.int32)
        launch(dev, prg.kernel("mk_complete"), *fixed_local(dev, B), src.data, i32(N),
               i32(Cv), i32(Ns), i32(period), i32(B), xc.data, nv.data)
        K = cla.empty(q, (max(B * Cv * Cv, 1),), np.int64)
        RR = cla.empty(q, (max(B * Cv * Cv, 1),), np.int64)
        S = cla.empty(q, (max(B * Cv, 1),), np.int64)
        cross = dev.program("trend/cross.cl.mako", real=real).kernel("mk_cross")
        launch(dev, cross, *fixed_local(dev, max(B * Cv * Cv, 1)),
               xc.data, nv.data, i32(Ns), i32(Cv),
               i32(B), K.data, RR.data, S.data)
        gam = cla.empty(q, (max(B * (Cv * Cv + sum_depth(Cv * Cv)), 1),), stat)
        launch(dev, prg.kernel("mk_correlated"), *fixed_local(dev, B), K.data, RR.data,
               S.data, nv.data, i32(Cv), i32(B), i32(partial), zq, gam.data,
               *(out[k].data for k in FIELDS))
        keep.extend([xc, nv, K, RR, S, gam])

    if variant in ("multivariate", "regional", "correlated_multivariate"):
        out, plan = core(interleaved(), C)
        if variant == "correlated_multivariate":
            correlated(y2, C, N, 0, 0, out)
    elif variant == "partial":
        v0 = cla.empty(q, (B, N), dt)
        launch(dev, prg.kernel("mk_take"), *fixed_local(dev, B * N), y2.data, i64(C * N),
               i32(N), i64(B * N), v0.data)
        keep.append(v0)
        out, plan = core(v0, 1)
        correlated(y2, 2, N, 0, 1, out)
    elif variant == "correlated_seasonal":
        out, plan = core(y2, P)
        correlated(y2, P, -(-N // P), P, 0, out)
    else:           # pre-whitening: the test on the whitened series, Sen's on the series
        sen, plan = core(y2, 1)
        N1 = max(N - 1, 1)
        w = cla.empty(q, (B, N1), dt)
        xs = cla.empty(q, (max(B * (N + sum_depth(N)), 1),), stat)
        flat = cla.empty(q, (max(B, 1),), np.uint8)
        launch(dev, prg.kernel("mk_whiten"), *fixed_local(dev, B), y2.data, i32(N), i32(N1),
               i32(B), sen["slope"].data, i32(variant == "trend_free_pre_whitening"), xs.data,
               w.data, flat.data)
        out, _ = core(w, 1, False)      # S only: no slopes of the whitened values
        launch(dev, prg.kernel("mk_prewhite"), *fixed_local(dev, B), i32(B), flat.data,
               *(sen[k].data for k in ("slope", "intercept", "slope_low", "slope_high", "n")),
               *(out[k].data for k in FIELDS))
        keep.extend([w, xs, flat, sen])
    return out, plan


#: the fields in the kernels' order (api.FIELDS)
FIELDS = ("trend", "h", "p", "z", "tau", "s", "var_s", "slope", "intercept", "slope_low",
          "slope_high", "n", "status")
