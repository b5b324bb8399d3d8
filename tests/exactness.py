"""Where two programs (or two work-group layouts) of one computation give the same bits.

pocl compiles what clts writes as it is written (its vectoriser needs explicit vector types),
and Oclgrind interprets it: one computation's programs give the same bits there, and the
tests assert them. A GPU compiler may contract a multiply and an add into one fused
multiply-add in one program and not in another (FP_CONTRACT is on by default in OpenCL C).
Intel's CPU runtime vectorises across work-items itself: on a CPU with AVX-512 its results
matched bit for bit, on an AVX2 CPU (an AMD EPYC, 2026-11-29) a work-item's result depended on
the program and on the batch it ran in (BFAST means 9 float32 ulps apart between its "rows"
and "pixel" programs, STL chunked and unchunked, trend layouts), within OpenCL's accuracy
bounds. There the tests compare within a tolerance instead."""
from __future__ import annotations

import functools

import numpy as np

from clts.runtime.programs import real_pocl


@functools.lru_cache(maxsize=1)
def _host_avx512() -> bool:
    try:
        with open("/proc/cpuinfo") as f:
            return " avx512f" in f.read()
    except OSError:
        return False


def exact_across_programs(device) -> bool:
    """Whether ``device`` gives one computation's programs and layouts the same bits."""
    if getattr(device.info, "simulator", False):
        return True
    if device.type != "cpu":
        return False
    return real_pocl(device) or _host_avx512()


def assert_same_across_programs(a, b, device, name="", terms=256, precision=None):
    """``a`` and ``b`` (numpy arrays from two programs of one computation) bit for bit where
    :func:`exact_across_programs`; else the same NaNs, integers equal and reals within
    ``terms`` roundings of the largest value (a sum of ``terms`` terms rounded otherwise), in
    ``precision`` (the dtype the computation ran in; default the arrays')."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, name
    if exact_across_programs(device) or a.dtype.kind != "f":
        assert np.array_equal(a, b, equal_nan=True), name
        return
    assert np.array_equal(np.isnan(a), np.isnan(b)), name
    eps = float(np.finfo(precision or a.dtype).eps)
    top = np.max(np.abs(a[np.isfinite(a)]), initial=1.0)
    np.testing.assert_allclose(a, b, rtol=terms * eps, atol=terms * eps * top, err_msg=name)
