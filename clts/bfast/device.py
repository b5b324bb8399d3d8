"""BFAST on device-resident cubes: ``bfast_monitor`` and ``bfast_breaks`` given a
``pyopencl.array.Array`` run here, with no host transfer, map or wait inside the call.

The cube is in the numpy path's canonical layout: time-major ``[time, pixels...]``,
C-contiguous (any element offset), float32 / float64 (NaN = missing) or one of the integer
types with ``nodata`` (converted inside the kernels, never on the host). Chunks of pixels are
gathered on the device (``templates/bfast/device.cl.mako``) into the rows the kernels read;
where one chunk covers the cube and its rows need no padding the kernels read it in place.
Outputs are device arrays; with several chunks each chunk's results are copied device-to-device
into them. The steps the numpy path does on the host (the history start of a given date, the
Bai-Perron selection, the coefficients' units, ``bfast_breaks``' magnitudes) are kernels too.

Host to device: the small per-call constants (the design matrix, bfast-py's boundary, the
segment-size table) are uploaded once per device and values by a non-blocking write from a host
copy the cache keeps (``constant``); a repeat call with the same dates uploads nothing. Scalars
(nodata, critical values, sizes) are kernel arguments. Results that need the host (break dates,
the counts in ``diagnostics``) are computed on first access (``LazyFields``).
"""
from __future__ import annotations

import hashlib
import math
from collections import OrderedDict

import numpy as np

from ..runtime import launch, round_up
from ..runtime.resident import result_to_numpy
from ..runtime.faults import enter_chunk
from ..runtime.capturing import captured
from ..runtime.memory import copy, empty_device, fill, scratch
from .monitor_run import (DETAILED_KEYS, bounds_dtype, bounds_table, launch_chunk,
                          monitor_chunks, programs)

#: integer cube types and their OpenCL C names
INT_TYPES = {np.dtype(np.int8): "char", np.dtype(np.uint8): "uchar",
             np.dtype(np.int16): "short", np.dtype(np.uint16): "ushort",
             np.dtype(np.int32): "int", np.dtype(np.uint32): "uint"}
#: device constants kept per device (least recently used dropped first)
CONSTANTS_KEPT = 64


def device_axis(y, dates, time_axis):
    """The dates of a device cube ``y`` (time-major, no labels): ``dates`` must be given and
    ``time_axis`` be 0 (or None)."""
    from ..runtime.arrays import values_of
    if y.ndim < 1:
        raise ValueError("y must have a time axis")
    if time_axis is not None and (isinstance(time_axis, bool)
                                  or not isinstance(time_axis, (int, np.integer))
                                  or int(time_axis) not in (0, -y.ndim)):
        raise ValueError(f"a device array y is time-major ([time, pixels...], as the kernels "
                         f"read it): time_axis must be 0 or None, got {time_axis!r}")
    if dates is None:
        raise ValueError("dates is None: a device array carries no time labels; give dates")
    return values_of(dates)


def c_type(dtype) -> str:
    dtype = np.dtype(dtype)
    if dtype in INT_TYPES:
        return INT_TYPES[dtype]
    return "double" if dtype == np.float64 else "float"


def constant(dev, name: str, host, dtype):
    """A device copy of the small host array ``host`` as ``dtype``, made once per device and
    values: a non-blocking write from a host copy kept with it (no wait), then the same array
    for every call with the same values. Returns the pyopencl array."""
    import pyopencl.array as cla
    # a read-only host array given again (the memoised design matrix of the same dates): the
    # copy made from it last time, without hashing its bytes
    last = dev.state.constant("bfast.device_constants.last", dict)
    dt = np.dtype(dtype)
    own = isinstance(host, np.ndarray) and host.base is None and not host.flags.writeable
    if own:
        hit = last.get((name, dt))
        if hit is not None and hit[0] is host:
            return hit[1]
    h = np.ascontiguousarray(host, dtype=dt)
    key = (name, h.dtype.str, h.shape, hashlib.sha1(h.tobytes()).hexdigest())
    cache = dev.state.constant("bfast.device_constants", OrderedDict)
    with dev.state.lock:
        arr = cache.get(key)
        if arr is not None:
            cache.move_to_end(key)
            return arr
        arr = cla.to_device(dev.queue, h, async_=True)
        arr.host_copy = h           # the write reads it after this call returns
        cache[key] = arr
        while len(cache) > CONSTANTS_KEPT:
            cache.popitem(last=False)
    if own:
        last[(name, dt)] = (host, arr)
    return arr


def program(dev, *, real, in_type, has_nodata, K=1, q=0, fit=None):
    """The device-path program (``bfast/device.cl.mako``); ``q``: the last q of the K columns
    per pixel. ``fit`` None: the steps' build (gathers, first valid dates, coefficients, the
    criteria and selection); a breakpoints Plan: the per-pixel fit kernels (``bp_post``,
    ``bp_start``, ``bp_magnitudes``), fitted to the device by its ``fit_params``: sub-group size
    and register mode on Intel GPUs (at SIMD32 and 128 GRF IGC spills their K x K systems), waves
    per SIMD on AMD GPUs."""
    acc = "double" if dev.fp64 else real
    extra = {"q": int(q)} if q else {}
    if fit is not None:
        extra.update(fit.fit_params())
    return dev.program("bfast/device.cl.mako", real=real, acc=acc, in_type=in_type,
                       has_nodata=int(bool(has_nodata)), K=int(K),
                       kernels="steps" if fit is None else "fit", **extra)


def acc_dtype(dev, dtype):
    """The precision of the kernels that replace host float64 steps."""
    return np.dtype(np.float64) if dev.fp64 else np.dtype(dtype)


def nodata_value(cube_dtype, nodata):
    """``nodata`` as the kernels compare it: rounded to a float cube's type (numpy compares a
    float32 cube with a Python float in float32), 0 without one."""
    if nodata is None:
        return 0.0
    if np.dtype(cube_dtype).kind == "f":
        return float(np.dtype(cube_dtype).type(nodata))
    return float(nodata)


def element_offset(a) -> int:
    return int(a.offset) // a.dtype.itemsize


def empty(dev, shape, dtype):
    """A result array: a fresh device array (never a pool's buffer that a later call could
    be handed while the result still holds it)."""
    return empty_device(dev.queue, dev.context, tuple(map(int, shape)), dtype)


def temp(dev, shape, dtype):
    """A temporary of queued kernels, from the device's scratch pool (kept with the result
    until it is read)."""
    return scratch(dev, tuple(map(int, shape)), np.dtype(dtype))


def copy_columns(dev, dst, src, a, m, rows):
    """Device-to-device: columns ``[0, m)`` of ``src`` ``[rows, >= m]`` (row length
    ``src.shape[-1]``) into columns ``[a, a + m)`` of ``dst`` ``[rows, M]``."""
    import pyopencl as cl
    isz = dst.dtype.itemsize
    ls, ld = src.shape[-1] if src.ndim > 1 else src.size, dst.shape[-1] if dst.ndim > 1 else dst.size
    if rows == 1:
        copy(dev, dst.base_data, src.base_data, m * isz, src_offset=src.offset,
             dst_offset=dst.offset + a * isz)
        return
    captured(None)          # a copy: not made again by a capture's replay
    cl.enqueue_copy(dev.queue, dst.base_data, src.base_data,
                    src_origin=(src.offset, 0, 0), dst_origin=(dst.offset + a * isz, 0, 0),
                    region=(m * isz, rows, 1), src_pitches=(ls * isz, 0),
                    dst_pitches=(ld * isz, 0))


def for_chunks(chunks, body):
    """``body(a, b)`` for each chunk, with the chunk recorded for an error that names it; no
    host wait between chunks (their kernels run in order on the device queue)."""
    total = chunks[-1][1] if chunks else 0
    for i, (a, b) in enumerate(chunks):
        enter_chunk(i, a, b, len(chunks), total)
        body(a, b)


class LazyFields:
    """Result classes' fields computed on first access (a host read, after the device has
    finished): ``_lazy`` maps a field name to a function giving its value. ``to_numpy()``
    gives a copy whose device arrays are numpy arrays (``clts.to_numpy(result)``)."""

    def __getattribute__(self, name):
        lazy = object.__getattribute__(self, "__dict__").get("_lazy")
        if lazy and name in lazy:
            make = lazy.get(name)
            if make is not None:        # another thread may have computed it meanwhile
                value = make()
                object.__setattr__(self, name, value)
                lazy.pop(name, None)
                return value
        return object.__getattribute__(self, name)

    def __setattr__(self, name, value):
        lazy = object.__getattribute__(self, "__dict__").get("_lazy")
        if lazy:
            lazy.pop(name, None)        # a value set replaces the one to be computed
        object.__setattr__(self, name, value)

    def _set_lazy(self, name, make):
        self.__dict__.pop(name, None)
        self.__dict__.setdefault("_lazy", {})[name] = make

    def to_numpy(self):
        """A copy of the result whose device arrays are numpy arrays (waits for the device);
        fields computed on access are computed first."""
        for name in list(self.__dict__.get("_lazy", {})):
            getattr(self, name)
        # the kept temporaries are not read back (runtime.resident.result_to_numpy, as every
        # other result): they include the input cube and the device's shared constants, whose
        # events other threads' calls append to (reading them from several threads failed on
        # Intel's runtime with INVALID_EVENT_WAIT_LIST)
        return result_to_numpy(self)


# ------------------------------------------------------------------------- bfast_monitor
def run_monitor(dev, plan, y, N, n, K, X, bounds_t, tpl, *, dtype, crit, hfrac, nodata,
                roc_bounds, max_items=None, hs=None, xp=None):
    """``bfast_monitor``'s kernels over device cube ``y`` ``[N, M]`` (flattened view of the
    caller's array); ``hs``: device int32 history starts (given or Bai-Perron), else None.
    ``xp``: per-pixel regressors (``pixel_device.prepare``; ``tpl["q"]`` of them).
    Returns (dict of device outputs named as ``monitor_run.run_host``'s, arrays to keep
    alive)."""
    M = int(y.shape[1]) if y.ndim > 1 else 1
    W = plan.lanes
    rs = dtype.itemsize
    detailed = tpl["detailed"]
    roc_hist = tpl["history"] == "ROC"
    chunks = monitor_chunks(dev, plan, M, N, n, K, tpl, y.dtype.itemsize, rs, max_items)
    kp = programs(dev, plan, tpl, dtype, hs is not None)
    Xd = constant(dev, "bfast.X", X, dtype)
    Bd = constant(dev, "bfast.bounds", bounds_t, bounds_dtype(tpl, dtype))
    keep = [y, Xd, Bd]
    Xroc = None
    if kp.roc:
        Xroc = constant(dev, "bfast.X", X, kp.roc_dtype)
        keep.append(Xroc)
    out = {"breaks": empty(dev, (M,), np.int32), "means": empty(dev, (M,), dtype),
           "valids": empty(dev, (M,), np.int32), "status": empty(dev, (M,), np.int32)}
    if tpl["magnitudes"]:
        out["mags"] = empty(dev, (M,), dtype)
    if detailed:
        out.update(coef=empty(dev, (K, M), dtype), sigma=empty(dev, (M,), dtype),
                   mosum=empty(dev, (N - n, M), dtype), bounds=empty(dev, (N - n, M), dtype),
                   pred=empty(dev, (N, M), dtype))
    hs_full = None
    if roc_hist:
        # the Rec-CUSUM kernel writes the padded rows of the last chunk too: room for them
        hs_full = hs if hs is not None else empty(dev, (round_up(M, W),), np.int32)
        out["hist_start"] = hs_full[:M]
    if not chunks:
        return out, keep
    cmax = max(b - a for a, b in chunks)
    cpad = round_up(max(cmax, 1), W)

    def buf(nbytes):
        a = scratch(dev, (max(int(nbytes), 1),), np.uint8)
        keep.append(a)              # used by queued kernels: kept until the result is read
        return a.data
    sc = buf(cpad * N * rs)
    roc_scratch = buf(cpad * N * 8) if kp.roc else None
    gd = betad = btab = None
    if plan.version == "multi":
        gd = buf((K * (K + 1) // 2 + K + 2) * cmax * rs)
        betad = buf((K + 1) * cmax * rs)
    if kp.bt:
        btab = buf((n + 1) * (N - n + 1) * rs)
        bounds_table(dev, plan, kp, n, N, dtype, crit, btab)    # in order before the chunks
    single = len(chunks) == 1
    in_place = single and M % W == 0 and y.offset == 0
    gather = None if in_place else program(dev, real=tpl["real"], in_type=tpl["in_type"],
                                           has_nodata=False).kernel("gather_raw")
    off = element_offset(y)
    keys1 = ("breaks", "means", "mags", "valids", "status")

    def chunk(a, b):
        m = b - a
        mp = round_up(m, W)
        if in_place:
            yd = y.data
        else:
            ya = temp(dev, (N * mp + W,), y.dtype)
            keep.append(ya)
            launch(dev, gather, (round_up(mp, 64), N), (64, 1), y.base_data, np.int64(off),
                   np.int32(M), np.int32(a), np.int32(m), np.int32(mp), np.int32(W), ya.data)
            yd = ya.data
        if single:
            o = out
        else:
            o = {k: temp(dev, out[k].shape[:-1] + (m,), out[k].dtype) for k in out
                 if k != "hist_start"}
            keep.extend(o.values())
        hsd = None
        if roc_hist:
            if single:
                hsd = hs_full.data
            else:
                hc = temp(dev, (mp,), np.int32)
                keep.append(hc)
                if hs is not None:
                    copy(dev, hc.data, hs_full.data, mp * 4, src_offset=a * 4)
                hsd = hc.data
        mags = o["mags"] if "mags" in o else temp(dev, (1,), dtype)
        keep.append(mags)
        tail = [o[k].data if k != "mags" else mags.data for k in keys1]
        det = [o[k].data for k in DETAILED_KEYS] if detailed else []
        xpd = xpr = None
        if xp is not None:      # the chunk's columns in the fit's and the ROC test's precision
            rows = xp.shape[0]
            xpd = gather_xp(dev, xp, a, m, mp, rows, bounds_dtype(tpl, dtype), keep).data
            if kp.roc:
                xpr = gather_xp(dev, xp, a, m, mp, rows, kp.roc_dtype, keep).data
        launch_chunk(dev, plan, kp, yd, m, mp, Xd.data, Bd.data,
                     Xroc.data if Xroc is not None else None, hsd, tail, det, sc, roc_scratch,
                     gd, betad, btab, dtype=dtype, crit=crit, hfrac=hfrac, nodata=nodata,
                     roc_bounds=roc_bounds, XP=xpd, XProc=xpr)
        if not single:
            for k, v in o.items():
                copy_columns(dev, out[k], v, a, m, 1 if v.ndim == 1 else v.shape[0])
            if roc_hist and hs is None:
                copy_columns(dev, hs_full, hc, a, m, 1)

    for_chunks(chunks, chunk)
    return out, keep


def first_valid_starts(dev, y, nodata, tpl, hs, n, N, given):
    """History starts of ``bfast_monitor`` as the result reports them: the first valid date at
    or after the start (a given start date) or the start itself, -1 for none / N."""
    M = int(y.shape[1]) if y.ndim > 1 else 1
    res = empty(dev, (M,), np.int32)
    if M == 0:
        return res
    k = program(dev, real=tpl["real"], in_type=tpl["in_type"],
                has_nodata=tpl["has_nodata"]).kernel("first_valid")
    launch(dev, k, round_up(max(M, 1), 64), 64, y.base_data, np.int64(element_offset(y)),
           np.int32(M), hs.data, res.data, np.int32(n), np.int32(N), np.int32(bool(given)),
           _real(tpl["real"])(nodata))
    return res


def coef_post(dev, out, tpl, K, N, M, trend, center, scale):
    """Detailed results: coefficients in the time axis's units, NaN where nothing was fitted."""
    if M == 0:
        return
    k = program(dev, real=tpl["real"], in_type=tpl["in_type"], has_nodata=False,
                K=K).kernel("coef_post")
    at = acc_dtype(dev, np.float64 if tpl["real"] == "double" else np.float32).type
    launch(dev, k, round_up(max(M, 1), 64), 64, out["coef"].data, out["sigma"].data,
           out["pred"].data, out["status"].data, np.int32(M), np.int32(N),
           np.int32(bool(trend)), at(center), at(scale))


def _real(real):
    return np.float64 if real == "double" else np.float32


def fill_int(dev, size, value):
    """A device int32 array of ``size`` entries all ``value`` (a fill: nothing transferred)."""
    return fill(dev, temp(dev, (max(int(size), 1),), np.int32), value)


# ------------------------------------------------------------------------- breakpoints
def run_breakpoints(dev, plan, y, X, h, breaks, dtype, *, nodata=None, rows=None,
                    k_check=None, rank_check=False, xp=None):
    """``breakpoints.run_breakpoints`` on device cube ``y`` ``[N', M]`` (its first ``rows``
    dates; integer types with ``nodata``), the values converted to ``dtype`` on the device;
    then the pixels with h <= ``k_check`` (the design's columns before any were dropped) and,
    with ``rank_check``, those whose valid dates make ``X`` rank-deficient marked failed, and
    the RSS floor (``out["floor"]``). ``xp``: per-pixel regressors after ``X``'s columns
    (``pixel_device.prepare``; every pixel rank-checked). Returns (dict of device outputs,
    BREAKS, arrays to keep)."""
    from ..runtime.faults import with_smaller_chunks
    from .breakpoints import max_breaks
    N = int(rows if rows is not None else y.shape[0])
    M = int(y.shape[1]) if y.ndim > 1 else 1
    from .breakpoints_reference import RANK_TOL
    q = 0 if xp is None else xp.shape[0] // (int(y.shape[0]) + 2)
    K = X.shape[1] + q
    kc = K if k_check is None else int(k_check)
    BREAKS = max(1, min(int(breaks), max_breaks(h, N, kc)))
    NB = BREAKS * (BREAKS + 1) // 2
    acc = acc_dtype(dev, dtype)
    out = {"nobs": empty(dev, (M,), np.int32), "h": empty(dev, (M,), np.int32),
           "bmax": empty(dev, (M,), np.int32), "status": empty(dev, (M,), np.int32),
           "rss": empty(dev, (BREAKS + 1, M), dtype), "bp": empty(dev, (NB, M), np.int32),
           "floor": empty(dev, (M,), acc)}
    keep = [y]
    if M == 0:
        return out, BREAKS, keep
    keep += with_smaller_chunks(
        lambda mi: _bp_chunks(dev, plan, y, N, M, X, h, BREAKS, dtype, nodata, out, mi, xp, q),
        device=dev, what="bfast_breaks")
    Xa = constant(dev, "bfast.X", X, acc)
    keep.append(Xa)
    k = program(dev, real="double" if dtype == np.float64 else "float", in_type=c_type(y.dtype),
                has_nodata=nodata is not None, K=K, q=q, fit=plan).kernel("bp_post")
    launch(dev, k, round_up(M, 64), 64, y.base_data, np.int64(element_offset(y)), np.int32(M),
           np.int32(N), Xa.data, *((xp.data,) if q else ()), out["status"].data, out["h"].data, out["nobs"].data,
           out["bmax"].data, out["rss"].data, out["bp"].data, np.int32(BREAKS + 1),
           np.int32(NB), np.int32(kc), np.int32(bool(rank_check)),
           acc.type(RANK_TOL[dtype.itemsize] ** 2), acc.type(np.finfo(dtype).eps),
           dtype.type(nodata_value(y.dtype, nodata)), out["floor"].data)
    return out, BREAKS, keep


def _bp_chunks(dev, plan, y, N, M, X, h, BREAKS, dtype, nodata, out, max_items, xp=None, q=0):
    from .breakpoints import chunk_ranges, kernels, launch_chunk, segment_table
    K = X.shape[1] + q
    T = N * (N + 1) // 2
    rs = dtype.itemsize
    G = plan.interleave
    chunks = chunk_ranges(dev, plan, N, M, K, BREAKS, dtype, max_items, q)
    Xd = constant(dev, "bfast.X", X, dtype)
    hsd = constant(dev, "bfast.segments", segment_table(h, N), np.int32)
    keep = [Xd, hsd]
    kern = kernels(dev, plan, K, N, BREAKS, dtype, q)
    real = "double" if dtype == np.float64 else "float"
    gather = program(dev, real=real, in_type=c_type(y.dtype),
                     has_nodata=nodata is not None).kernel("gather_real")
    cmax = max(b - a for a, b in chunks)
    cpad = round_up(cmax, G)

    def buf(nbytes):
        a = scratch(dev, (max(int(nbytes), 1),), np.uint8)
        keep.append(a)
        return a.data
    tri = buf(cpad * T * rs)
    cost = buf(BREAKS * N * cpad * rs)
    arg = buf(BREAKS * N * cpad * 4)
    vidx = buf(N * cpad * 4)
    keys = ("nobs", "h", "bmax", "status", "rss", "bp")
    single = len(chunks) == 1
    off = element_offset(y)
    nd = nodata_value(y.dtype, nodata)

    def chunk(a, b):
        m = b - a
        mp = round_up(m, G)
        yc = temp(dev, (N, mp), dtype)
        keep.append(yc)
        launch(dev, gather, (round_up(mp, 64), N), (64, 1), y.base_data, np.int64(off),
               np.int32(M), np.int32(a), np.int32(m), np.int32(mp), dtype.type(nd), yc.data)
        if single:
            o = out
        else:
            o = {k: temp(dev, out[k].shape[:-1] + (m,), out[k].dtype) for k in keys}
            keep.extend(o.values())
        xpd = None
        if q:           # the chunk's per-pixel columns [N q, mp] in the kernels' precision
            xpd = gather_xp(dev, xp, a, m, mp, N * q, dtype, keep).data
        launch_chunk(dev, plan, kern, yc.data, m, mp, Xd.data, hsd.data, tri, cost, arg, vidx,
                     [o[k].data for k in keys], xpd)
        if not single:
            for k, v in o.items():
                copy_columns(dev, out[k], v, a, m, 1 if v.ndim == 1 else v.shape[0])

    for_chunks(chunks, chunk)
    return keep


def select(dev, out, K, dtype, criterion, in_type="float"):
    """BIC and LWZ ``[B + 1, M]`` (the device's float64 where it has it; an RSS below the
    pixel's floor read as the floor), the selected number of breaks (-1 failed) and its
    breakpoints ``[B, M]`` (-1 padded): device arrays."""
    rss = out["rss"]
    B = rss.shape[0] - 1
    M = rss.shape[1]
    acc = acc_dtype(dev, dtype)
    res = dict(sel=empty(dev, (M,), np.int32), bp=empty(dev, (B, M), np.int32),
               bic=empty(dev, (B + 1, M), acc), lwz=empty(dev, (B + 1, M), acc))
    if M:
        k = program(dev, real="double" if dtype == np.float64 else "float", in_type=in_type,
                    has_nodata=False, K=K).kernel("bp_select")
        launch(dev, k, round_up(M, 64), 64, rss.data, out["nobs"].data, out["status"].data,
               out["bp"].data, np.int32(M), np.int32(B), np.int32(criterion == "LWZ"),
               acc.type(math.log(2 * math.pi)), out["floor"].data, res["sel"].data, res["bp"].data,
               res["bic"].data, res["lwz"].data)
    return res


def history_starts(dev, y, n, X, nodata, xp=None):
    """``bfast_monitor(history="BP")`` on device cube ``y``: per pixel the date where the
    stable history starts (``breakpoints.history_starts``), N where the test cannot run; a
    device int32 array padded to ``M + 8`` entries (the monitor's lanes), and arrays to keep.
    ``xp``: per-pixel regressors (``pixel_device.prepare``): every pixel rank-checked, a
    singular one starts at 0."""
    from .breakpoints import independent_columns, max_breaks
    from .breakpoints_plan import Problem as BreakpointsProblem, make_plan as make_bp_plan
    N = int(y.shape[0])
    M = int(y.shape[1]) if y.ndim > 1 else 1
    q = 0 if xp is None else xp.shape[0] // (N + 2)
    K = X.shape[1] + q
    dtype = np.dtype(np.float64 if dev.fp64 else np.float32)
    real = "double" if dtype == np.float64 else "float"
    hs = fill_int(dev, M + 8, N)
    h = 6 * K
    B = max_breaks(h, n, K)
    if B == 0 or M == 0:
        return hs, [y]
    plan = make_bp_plan(dev, BreakpointsProblem(n, K, dtype.itemsize))
    Xr = X[:n][:, independent_columns(X[:n], dtype)]      # the rank the history's design has
    out, _, keep = run_breakpoints(dev, plan, y, Xr, h, B, dtype, nodata=nodata, rows=n,
                                   k_check=K, rank_check=bool(q), xp=xp)
    s = select(dev, out, Xr.shape[1] + q, dtype, "BIC", c_type(y.dtype))
    keep += list(out.values()) + list(s.values())
    k = program(dev, real=real, in_type=c_type(y.dtype),
                has_nodata=nodata is not None, K=Xr.shape[1] + q if q else K,
                q=q, fit=plan).kernel("bp_start")
    launch(dev, k, round_up(M, 64), 64, y.base_data, np.int64(element_offset(y)), np.int32(M),
           s["sel"].data, s["bp"].data, np.int32(n), np.int32(N),
           dtype.type(nodata_value(y.dtype, nodata)), hs.data,
           *((out["status"].data,) if q else ()))
    return hs, keep


def magnitudes(dev, plan, y, X, sel, bps, dtype, nodata, xp=None):
    """``bfast_breaks``' magnitudes ``[B, M]`` on the device (float64 where it has it), by the
    kernel that breakpoints Plan ``plan`` fits to the device; ``xp``: per-pixel regressors
    after ``X``'s columns (``pixel_device.prepare``)."""
    N = int(y.shape[0])
    M = int(y.shape[1]) if y.ndim > 1 else 1
    q = 0 if xp is None else xp.shape[0] // (N + 2)
    K = X.shape[1] + q
    B = bps.shape[0]
    acc = acc_dtype(dev, dtype)
    mags = empty(dev, (B, M), acc)
    Xd = constant(dev, "bfast.X", X, acc)
    if M:
        k = program(dev, real="double" if dtype == np.float64 else "float",
                    in_type=c_type(y.dtype), has_nodata=nodata is not None,
                    K=K, q=q, fit=plan).kernel("bp_magnitudes")
        launch(dev, k, round_up(M, 64), 64, y.base_data, np.int64(element_offset(y)),
               np.int32(M), np.int32(N), Xd.data, *((xp.data,) if q else ()), sel.data, bps.data, np.int32(B),
               dtype.type(nodata_value(y.dtype, nodata)), mags.data)
    return mags, [Xd]


def preg_program(dev, real, acc, src_dtype, out_dtype):
    """The per-pixel regressors' program (``bfast/pixel_regressors.cl.mako``)."""
    return dev.program("bfast/pixel_regressors.cl.mako", real=real, acc=acc,
                       src_t=c_type(src_dtype), out_t=c_type(out_dtype))


def gather_xp(dev, xp, a, m, mp, rows, out_dtype, keep):
    """Rows ``[0, rows)`` of ``xp`` (columns ``a .. a + m``) as a temporary ``[rows, mp]`` of
    ``out_dtype``, zeros after column m (the kernels' chunk layout)."""
    out_dtype = np.dtype(out_dtype)
    dst = temp(dev, (rows, mp), out_dtype)
    keep.append(dst)
    if rows and mp:
        k = preg_program(dev, c_type(out_dtype), c_type(xp.dtype), xp.dtype, out_dtype) \
            .kernel("preg_gather")
        launch(dev, k, (round_up(mp, 64), rows), (64, 1), xp.data, np.int32(xp.shape[1]),
               np.int32(a), np.int32(m), np.int32(mp), dst.data)
    return dst
