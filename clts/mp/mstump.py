"""``clts.mstump``: the multi-dimensional matrix profile (mSTOMP, stumpy.mstump's conventions)
of a (d, n) array on the device (mdiag.cl.mako, plan in mstump_plan.py), after Yeh, Kavantzas
and Keogh, "Matrix Profile VI: Meaningful Multidimensional Motif Discovery" (ICDM 2017). Each
dimension's windows come from the 1-D profile's preparation (series.py); the diagonals are
cut into bands and segments as for the 1-D kernels (diagonal.py); each winner is re-evaluated
exactly (exact.py). ``normalize=False`` (stumpy.maamp's conventions): p = 2 the same kernel
on plain dot products, other p exact distance profiles (mass.py). See docs/matrix-profile.md,
"Multi-dimensional profile"."""
from __future__ import annotations

import math

import numpy as np

from .. import options
from ..runtime import get_device, launch, round_up
from ..runtime.launch import fixed_local
from .local_size import ITEM_LOCAL
from ..runtime.arrays import native, values_of
from ..runtime.memory import copy, scratch
from ..runtime.programs import built, prebuild
from ..runtime.replay import Recorder, run_recorded
from .replay import RECORD_AFTER
from .exact import _better, _pair_dist, exact_spec
from .mass import _check_p, distance_profiles
from .mass_plan import call_precision
from .mstump_plan import Problem, make_mstump_plan
from .series import Side, _sreal, prep_spec, stats_spec
from ..timeaxis import check_fits
from ..vocabulary import renamed

#: bytes of the partial row / column profiles of one launch (bands per launch are cut to fit)
PARTIAL_BYTES = 64 << 20
#: the most dimensions the kernel sorts in registers (a sorting network of ~d log^2 d / 4
#: comparators, unrolled)
MAX_DIM = 32
#: the most dimensions of a float64 build that gets the profile's ``waves`` (gfx908, waves 3:
#: no scratch up to 12 dimensions, with or without constant windows, forced dimensions,
#: plain distances; 128 B of scratch at 16; float32 none up to 32)
WAVES_MAX_DIM64 = 12
#: work-group of the ill-conditioned windows' rows (``mscan_rows``)
SCAN_WG = 64
#: distances per block of exact rows of a p != 2 profile (rows x d x windows, float64)
PNORM_ELEMENTS = 1 << 22


def _series_2d(T, time_axis=None, m=None):
    """``T`` as [d, n] float64: stumpy's layout, or [n, d] read with ``time_axis=0``. Without
    ``time_axis``, an ``m`` longer than the rows that fits the columns is a ValueError naming
    ``time_axis=0`` (docs/api-conventions.md, "Where time is")."""
    a = native(values_of(T))
    if a.dtype.kind not in "fiub":
        raise TypeError(f"T must hold real numbers, got dtype {a.dtype}")
    if time_axis is not None and (isinstance(time_axis, bool)
                                  or not isinstance(time_axis, (int, np.integer))):
        raise TypeError(f"time_axis must be an int, got {time_axis!r}")
    if a.ndim == 1:
        a = a[None, :]
        if time_axis is not None and time_axis not in (0, -1):
            raise ValueError(f"time_axis {time_axis} out of range for a 1-D T")
    elif a.ndim == 2 and time_axis is not None:
        if not -2 <= time_axis < 2:
            raise ValueError(f"time_axis {time_axis} out of range for T with 2 dimensions")
        if time_axis % 2 == 0:
            a = a.T
    if a.ndim != 2:
        raise ValueError(f"T must be 2-D (d dimensions, n values), got shape {a.shape}")
    if time_axis is None and m is not None and isinstance(m, (int, np.integer)):
        check_fits(a.shape, 1, lambda n: n >= m, f"m={int(m)}", name="T")
    return np.asarray(a, np.float64)


def _include(include, d):
    if include is None:
        return []
    inc = np.atleast_1d(np.asarray(include))
    if inc.dtype.kind not in "iu" or inc.ndim != 1:
        raise TypeError("include must be a list of dimension indices (ints)")
    inc = [int(x) for x in inc]
    if any(x < 0 or x >= d for x in inc) or len(set(inc)) != len(inc):
        raise ValueError(f"include must hold distinct dimensions in [0, {d}), got {inc}")
    return inc


def _checks(m, d, n, include, discords, normalize, hint="", max_dim=MAX_DIM):
    """The arguments of a call checked (``hint``: a note on the dimensions' error):
    (forced dimensions, discords, normalize)."""
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)):
        raise TypeError(f"m must be an int, got {type(m).__name__}")
    if m < 3:
        raise ValueError(f"m must be >= 3, got {m}")
    if d > max_dim:
        raise ValueError(f"T has {d} dimensions; clts.mstump sorts at most {MAX_DIM} per pair "
                         f"in registers (split the dimensions or choose fewer){hint}")
    if n < m:
        raise ValueError(f"T has {n} values per dimension, fewer than m={m}")
    inc = _include(include, d)
    if not isinstance(discords, (bool, np.bool_)):
        raise TypeError(f"discords must be a bool, got {type(discords).__name__}")
    if not isinstance(normalize, (bool, np.bool_)):
        raise TypeError(f"normalize must be a bool, got {type(normalize).__name__}")
    return inc, bool(discords), bool(normalize)


@renamed()
def mstump(T, m, include=None, discords=False, normalize=True, p=2.0, *, precision=None,
           device=None, plan=None, time_axis=None, **plan_overrides):
    """Multi-dimensional matrix profile of ``T`` (d dimensions x n values), with
    stumpy.mstump's conventions (self-join; ``normalize=False``: stumpy.maamp's).

    For each window i and each k = 0 .. d-1, ``P[k, i]`` is the smallest, over windows j
    outside the exclusion zone ``|i - j| <= ceil(m / 4)``, of the mean of the k+1 smallest of
    the d per-dimension distances of (i, j) (z-normalised Euclidean, or with
    ``normalize=False`` the Minkowski distance of order ``p``); ``I[k, i]`` is that j (the
    smallest on ties; -1 where P is inf).

    Parameters
    ----------
    T : array_like, shape (d, n)
        One row per dimension (numpy in any layout or byte order, pandas, xarray); NaN / inf
        mark missing values (windows holding one are never neighbours, P = inf). A
        ``pyopencl.array.Array`` ([d, n] or [n], C-contiguous) gives P and I as device arrays,
        computed on the device throughout: no host transfer or wait (docs/device-arrays.md).
    m : int
        Window length (>= 3).
    include : sequence of int, optional
        Dimensions always among the k+1 (in the given order; the others sorted after them).
    discords : bool
        Take the k+1 largest distances instead of the smallest (stumpy's ``discords``).
    normalize : bool
        z-normalised distances (default; constant windows: 0 between two, sqrt(m) otherwise)
        or plain ones (no constant-window rule), as :func:`clts.matrix_profile`.
    p : float
        Order of the plain distance (``normalize=False``): >= 1 or inf, default 2 (ignored
        when normalising, as in stumpy). p = 2 runs the diagonal kernel; other p exact
        distance profiles (:func:`clts.mass`, O(d n^2 m)), as :func:`clts.aamp`.
    precision : {"double", "single"}, optional
        float64 (default where the device has it) or float32 throughout.
    device : clts.Device or str, optional
    plan : clts.mp.mstump_plan.MstumpPlan, optional
    time_axis : int, optional
        The axis of ``T`` that is time: default 1 (-1), stumpy's [d, n]; 0 reads [n, d]
        (time down the rows, as a pandas frame). Without it, an ``m`` longer than the rows
        that fits the columns is a ValueError naming ``time_axis=0``.
    **plan_overrides
        ``lanes``, ``groups``, ``segment``, ``wg``, ``interleave``, ``fold``, ``subgroup``,
        ``waves`` (profile section ``mp.mstump``), ``coop`` (``mp.exact.coop``).

    Returns
    -------
    P : numpy.ndarray, shape (d, n - m + 1), float64
    I : numpy.ndarray, shape (d, n - m + 1), int64
        (device arrays for a device ``T``; P float32 on a device without float64)

    Examples
    --------
    >>> import numpy as np, clts
    >>> T = np.cumsum(np.random.default_rng(1).standard_normal((3, 300)), axis=1)
    >>> P, I = clts.mstump(T, 20)
    >>> P.shape, bool(np.all(np.diff(P, axis=0) >= -1e-12))
    ((3, 281), True)
    """
    from ..runtime.arrays import is_device_array
    if is_device_array(T):
        return _mstump_device(T, m, include, discords, normalize, p, precision, device, plan,
                              time_axis, plan_overrides)
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)):
        raise TypeError(f"m must be an int, got {type(m).__name__}")
    m = int(m)
    if m < 3:
        raise ValueError(f"m must be >= 3, got {m}")
    T2 = _series_2d(T, time_axis, m)
    d, n = T2.shape
    hint = (" (if T is [time, dimensions] give time_axis=0)"
            if time_axis is None and n <= MAX_DIM and d >= m else "")
    inc, discords, normalize = _checks(m, d, n, include, discords, normalize, hint)
    pnorm = _check_p(p)[0]
    dev = get_device(device)
    precision = call_precision(dev, precision)
    p = make_mstump_plan(dev, Problem(precision), plan=plan, **plan_overrides)
    order = inc + [q for q in range(d) if q not in inc]
    l = n - m + 1
    ez = int(math.ceil(m / 4))
    if not normalize and pnorm != 2.0:
        # no O(1) update for the distance: exact rows from distance profiles, as clts.aamp
        P = np.full((d, l), np.inf)
        I = np.full((d, l), -1, np.int64)
        S, To = np.arange(l), T2[order]
        rows = max(1, PNORM_ELEMENTS // (d * l))
        for b in range(0, l, rows):
            _profile_rows(dev, p, To, m, ez, S[b:b + rows], P, I, len(inc), discords,
                          normalize, pnorm, symmetric=False)
        return P, I
    # T uploaded once in its own precision (float32 stays float32: the scaling of a float32
    # device array is the same), then the device-array computation; P and I read back
    import pyopencl.array as cla
    tin = np.float32 if (_input_dtype(T) == np.float32 or not dev.fp64) else np.float64
    Td = cla.to_device(dev.queue, np.ascontiguousarray(T2, tin))
    P, I = _znorm_device(dev, p, Td, order, m, len(inc), discords, normalize)
    return P.get().astype(np.float64), I.get()


def _profile_rows(dev, p, T, m, ez, S, P, I, ninc, discords, normalize=True, pnorm=2.0,
                  symmetric=True):
    """The rows of windows ``S`` in full from exact distance profiles (``mass``), and with
    ``symmetric`` ``S`` as a candidate neighbour of every other window (the matrix is
    symmetric). For the windows too ill-conditioned for the O(1) update (in some dimension;
    the kernel left their pairs out), and for every row of a p != 2 profile. In place."""
    d, n = T.shape
    l = n - m + 1
    X = np.stack([distance_profiles(np.stack([T[q, s:s + m] for s in S]), T[q],
                                    normalize=normalize, p=pnorm, precision=p.precision,
                                    device=dev, progress=False).reshape(len(S), l)
                  for q in range(d)], axis=1).astype(np.float64)       # [s, dim, j]
    for a, s in enumerate(S):
        X[a, :, max(0, s - ez):s + ez + 1] = np.inf
    rest = np.sort(X[:, ninc:], axis=1)
    if discords:
        rest = rest[:, ::-1]
    C = np.cumsum(np.concatenate([X[:, :ninc], rest], axis=1), axis=1) \
        / np.arange(1, d + 1)[None, :, None]                               # [s, k, j]
    # the rows of S
    jb = np.argmin(C, axis=2)
    vb = np.take_along_axis(C, jb[:, :, None], axis=2)[:, :, 0]
    P[:, S], I[:, S] = _better(P[:, S], I[:, S], vb.T, np.where(np.isfinite(vb), jb, -1).T)
    if not symmetric:
        return
    # S as the neighbour of every window
    sb = np.argmin(C, axis=0)                                              # [k, j]
    vb = np.take_along_axis(C, sb[None], axis=0)[0]
    P[:], I[:] = _better(P, I, vb, np.where(np.isfinite(vb), S[sb], -1))


def _input_dtype(T):
    """The dtype ``T`` holds (float64 for lists and the like)."""
    return np.dtype(getattr(values_of(T), "dtype", np.float64))


def _stack(dev, arrays, dtype, width):
    """The device arrays ``arrays`` (one per dimension, at least ``width`` values each) copied
    into one [d, width] device array (device-to-device copies)."""
    item = np.dtype(dtype).itemsize
    out = scratch(dev, (len(arrays), width), dtype)
    for q, a in enumerate(arrays):
        copy(dev, out.base_data, a.base_data, width * item, dst_offset=out.offset + q * width * item,
             src_offset=a.offset)
    return out


def _rows(dev, T, order):
    """The rows ``order`` of the device array ``T`` [d, n] (at offset 0), each a device array
    of its own at offset 0: T itself for one dimension, else copies (device-to-device, a
    replay makes them again from the next call's T; sub-buffers would be views of this one)."""
    d, n = (int(v) for v in T.shape)
    if d == 1:
        return [T.reshape(n)]
    item = T.dtype.itemsize
    rows = []
    for k in order:
        r = scratch(dev, n, T.dtype)
        copy(dev, r.base_data, T.base_data, n * item, dst_offset=r.offset,
             src_offset=k * n * item)
        rows.append(r)
    return rows


def _znorm_device(dev, p, T, order, m, ninc, discords, normalize):
    """The profile of the device array ``T`` [d, n] (dimensions ``order``, the ``ninc`` forced
    ones first) with z-normalised distances, or plain Euclidean ones (``normalize=False``,
    p = 2), on the device from end to end: each dimension's scaling, window statistics and
    flags (series.py's ``Side`` on the device row), the diagonal kernel and its reductions
    (the winners I), the winners re-evaluated exactly per dimension (``pair_dist``) then
    sorted and averaged (``mexact``), the windows too ill-conditioned for the O(1) update (in
    some dimension) as rows and columns of exact distances (``mscan_rows`` / ``mscan_cols``:
    the kernel left their pairs out). Returns P (float64 where the device has it) and I
    (int64), [d, l] device arrays; nothing is read back or waited for."""
    import pyopencl.array as cla
    from ..runtime.faults import enter_chunk
    from ..runtime.programs import build_program
    from .diagonal import _descriptors, _filled, _special
    from .series import scale_on_device
    d, n = (int(v) for v in T.shape)
    l = n - m + 1
    ez = int(math.ceil(m / 4))
    D, R = p.band, p.segment
    kr = np.float64 if p.kernel_real == "double" else np.float32
    q = dev.queue
    oreal = "double" if dev.fp64 else "float"
    mspec = exact_spec(dev, p, normalize)
    # sub-group size (Intel) / waves per SIMD (AMD) of the diagonal kernel and the scans: only
    # where set; waves not on float64 builds of more than WAVES_MAX_DIM64 dimensions
    waves = p.waves if p.kernel_real == "float" or d <= WAVES_MAX_DIM64 else 0
    fit = {k: v for k, v in (("MSG", p.subgroup), ("MWAVES", waves)) if v}
    mspec = (mspec[0], dict(mspec[1], MDIM=d, NINC=ninc, DISCORDS=int(bool(discords)),
                            MWG=SCAN_WG, **fit,
                            oreal=oreal, ureal="double" if np.dtype(
                                _sreal(p, T.dtype)) == np.float64 else "float"))
    # a first call builds the statistics, preparation and exact-distance programs at once
    # (the diagonal kernel's depends on nothing the device computes: built when launched)
    if not built(dev, *mspec):
        prebuild(dev, [stats_spec(dev, p, normalize), prep_spec(dev, p, normalize, T.dtype),
                       exact_spec(dev, p, normalize), mspec])
    sides = []
    for row in _rows(dev, T, order):
        s = Side(dev, row, m, p, normalize, 0, scale=scale_on_device(dev, p, normalize, row))
        s.mark_ill(p, p.segment)
        sides.append(s)
    mprg = build_program(dev, *mspec)
    er = sides[0].er
    fl = _stack(dev, [s.fl for s in sides], np.int32, l)
    cols = [s.upload(dev, True) for s in sides]
    NW = int(cols[0]["mu"].shape[0])
    dA = {key: _stack(dev, [c[key] for c in cols], kr, NW + (m if key == "T" else 0))
          for key in cols[0]}
    anyf = scratch(dev, l, np.int32)
    launch(dev, mprg.kernel("mflags"), *fixed_local(dev, round_up(l, 64), ITEM_LOCAL), np.int32(l),
           np.int32(NW), fl.data, anyf.data, dA["r"].data)
    sc = _stack(dev, [s.scale for s in sides], sides[0].scale.dtype, 4)
    gV = _filled(dev, d * l, kr, np.inf)
    gI = _filled(dev, d * l, np.int32, -1)
    kstart = ez + 1
    nb = -(-(l - kstart) // D) if l > kstart else 0
    if nb:
        per_band = d * (2 * R + D) * (np.dtype(kr).itemsize + 4)
        chunk = max(1, min(1 << 14, PARTIAL_BYTES // per_band, dev.max_alloc // 4 // per_band))
        cap = options.get("max_chunk")
        if cap:
            chunk = max(1, min(chunk, cap))
        launches, dd, offs = _descriptors(dev, sides[0], l, l, True, D, R, 0, nb, kstart, chunk,
                                          1)
        nwmax = round_up(max(len(x) for _, x in launches), p.wg)  # nws: the interleave stride
        rPV = scratch(dev, nwmax * d * R, kr)
        rPI = scratch(dev, nwmax * d * R, np.int32)
        cPV = scratch(dev, nwmax * d * (R + D), kr)
        cPI = scratch(dev, nwmax * d * (R + D), np.int32)
        # z-normalised: the constant-window convention in every dimension (which dimensions
        # hold a constant window is known on the device only; the others' results are the
        # same); plain distances: NORMALIZE=0 and each dimension's unit
        const = (1 << d) - 1 if normalize else 0
        plain = {} if normalize else {"NORMALIZE": 0}
        tuning = {k: v for k, v in (("subgroup", p.subgroup), ("waves", waves)) if v}
        if p.lanes == 1 and p.groups == 1 and d * NW < 2 ** 31:
            tuning["OFF32"] = 1     # int offsets in the row loop (fewer 64-bit addresses live)
        unit = ()
        if not normalize:
            u = scratch(dev, d, kr)
            launch(dev, mprg.kernel("munits"), *fixed_local(dev, 64, ITEM_LOCAL), sc.data, u.data)
            unit = (u.data,)
        prg = dev.program("mp/mdiag.cl.mako", real=p.kernel_real, lanes=p.lanes,
                          groups=p.groups, segment=R, DIM=d, NINC=ninc,
                          DISCORDS=int(discords), CONST=const, interleave=p.interleave,
                          fold=p.fold, **plain, **tuning)
        nws = (np.int32(nwmax),) if p.interleave else ()
        kern, red_r, red_c = (prg.kernel(k) for k in ("mdiag", "mreduce_rows", "mreduce_cols"))
        ndesc = int(offs[-1])
        for li, (s0, dsub) in enumerate(launches):
            nw, off = len(dsub), int(offs[li])
            enter_chunk(li, off, off + nw, len(launches), ndesc)
            launch(dev, kern, round_up(nw, p.wg), p.wg, dd.data, np.int32(off), np.int32(nw),
                   np.int32(s0), np.int32(m), np.int32(l), np.int32(NW), dA["T"].data,
                   dA["mu"].data, dA["df"].data, dA["dg"].data, dA["r"].data, *unit,
                   rPV.data, rPI.data, cPV.data, cPI.data, *nws)
            head = (dd.data, np.int32(off), np.int32(nw), np.int32(s0))
            ncols = (nw - 1) * D + R + D
            if p.fold:      # a work-group per row / per 32 column groups of D columns
                rows = (R * p.fold, p.fold)
                ngroups = -(-(-(-ncols // D)) // min(32, p.fold))
                colsz = (ngroups * p.fold, p.fold)
            else:           # a work-item per row / column
                rows, colsz = (round_up(R, 64), None), (round_up(ncols, 64), None)
            launch(dev, red_r, *rows, *head, np.int32(l),
                   rPV.data, rPI.data, gV.data, gI.data, *nws)
            launch(dev, red_c, *colsz, *head,
                   np.int32(int(dsub[0, 0])), np.int32(ncols), np.int32(l),
                   cPV.data, cPI.data, gV.data, gI.data, *nws)
    # the winners' distances in every dimension, exactly (pairs k l + i: row i, column I[k, i])
    ia = scratch(dev, d * l, np.int32)
    launch(dev, mprg.kernel("mrows"), *fixed_local(dev, round_up(d * l, 64), ITEM_LOCAL),
           np.int32(d * l),
           np.int32(l), ia.data)
    X = _stack(dev, [_pair_dist(dev, p, s, s, ia, gI, n=d * l) for s in sides], er, d * l)
    odt = np.float64 if dev.fp64 else np.float32
    # results: fresh device arrays, never pool blocks a later call could reuse
    P = cla.empty(q, (d, l), odt)
    I = cla.empty(q, (d, l), np.int64)
    launch(dev, mprg.kernel("mexact"), *fixed_local(dev, round_up(d * l, 64), ITEM_LOCAL),
           np.int32(l),
           X.data, gI.data, sc.data, P.data, I.data)
    if normalize:
        # the ill-conditioned windows (in some dimension): rows and columns of exact distances
        Td = _stack(dev, [s.Td for s in sides], er, int(sides[0].Td.shape[0]))
        mu = _stack(dev, [s.mu for s in sides], er, l)
        ss = _stack(dev, [s.ss for s in sides], er, l)
        idx, count = _special(dev, _Flags(anyf, l, sides[0].prg))
        args = (count.data, np.int32(m), np.int32(l), np.int32(ez), np.int32(Td.shape[1]),
                idx.data, Td.data, mu.data, ss.data, fl.data, P.data, I.data)
        groups = max(1, min(l, 4 * dev.info.compute_units))
        launch(dev, mprg.kernel("mscan_rows"), groups * SCAN_WG, SCAN_WG, *args)
        launch(dev, mprg.kernel("mscan_cols"), *fixed_local(dev, round_up(l, 64), ITEM_LOCAL),
               *args)
    return P, I


class _Flags:
    """The window flags ``fl`` of ``l`` windows in the shape ``diagonal._special`` reads."""

    def __init__(self, fl, l, prg):
        self.fl, self.l, self.prg = fl, l, prg


def _mstump_device(T, m, include, discords, normalize, p, precision, device, plan, time_axis,
                   plan_overrides):
    """:func:`mstump` of a device array ``T`` ([d, n] or [n], time last): ``(P, I)`` as device
    arrays, nothing read back or waited for: z-normalised and plain p = 2 distances by
    :func:`_znorm_device` (the numpy path's computation after its upload: the same bits),
    plain distances with other p by :func:`_maamp_device`. The arrays' dtype sets the
    precision unless ``precision`` names it."""
    from ..runtime.arrays import device_input
    dev = get_device(device)
    device_input(T, "T", dev, ndim=(1, 2))
    if time_axis not in (None, -1, T.ndim - 1):
        raise ValueError(f"device arrays are [d, n] or [n]: time_axis must be the last axis, "
                         f"got {time_axis!r}")
    own = "double" if np.dtype(T.dtype) == np.float64 else "single"
    if precision is not None and precision != own:
        raise TypeError(f"precision={precision!r} with {T.dtype} device arrays: the call "
                        f"computes in the arrays' precision ({own!r}); convert with .astype "
                        "on the device")
    plan = make_mstump_plan(dev, Problem(own), plan=plan, **plan_overrides)
    if not normalize and _check_p(p)[0] != 2.0:
        return _maamp_device(dev, T, m, include, discords, _check_p(p)[0], own, plan.subgroup)
    T2 = T.reshape(1, -1) if T.ndim == 1 else T
    d, n = (int(v) for v in T2.shape)
    inc, discords, normalize = _checks(m, d, n, include, discords, normalize)
    order = inc + [k for k in range(d) if k not in inc]
    m = int(m)
    if T2.offset:       # a view: its own copy (not recorded: the copy is pyopencl's)
        return _znorm_device(dev, plan, T2.copy(), order, m, len(inc), discords, normalize)
    return _recorded(dev, (plan, d, n, m, tuple(order), len(inc), discords, normalize,
                           np.dtype(T2.dtype).str, options.get("max_chunk")), T2,
                     lambda: dict(zip("PI", _znorm_device(dev, plan, T2, order, m, len(inc),
                                                          discords, normalize))))


def _recorder():
    return Recorder(after=RECORD_AFTER)


def _recorded(dev, key, T, make):
    """``(P, I)`` of a device-array call: ``make()``'s launches, fills and copies, or from a
    shape's third call on those of its second call made again with this call's ``T``
    (``runtime.replay.run_recorded``: the temporaries, window statistics and descriptors of
    the recording reused, nothing planned or allocated but the results). Not on a
    simulator."""
    if dev.info.simulator:
        key = None
    out = run_recorded(dev, dev.state.constant("mstump.recorder", _recorder), key,
                       {"T": T.base_data}, make, [])
    return out["P"], out["I"]


def _maamp_device(dev, T, m, include, discords, pnorm, precision, subgroup=0):
    """:func:`mstump` with ``normalize=False`` and p != 2 on a device array: per block of rows
    (PNORM_ELEMENTS distances), each dimension's windows gathered and their distance profiles
    computed by ``mass``' kernels into one block buffer [d, rows, l], then ``maamp_rows``
    (``templates/mp/aamp.cl.mako``, built for the call's dimensions, forced ones and
    direction: a sorting network in registers; Intel GPUs at the plan's sub-group size)
    sorts, sums and keeps the best of each row: the host path's ``_profile_rows`` on the same
    distances. Nothing is read back or waited for."""
    import pyopencl.array as cla
    from ..runtime.resident import device_rows
    from .mass import _device_profiles
    T2 = T.reshape(1, -1) if T.ndim == 1 else T
    d, n = (int(v) for v in T2.shape)
    inc, discords, _ = _checks(m, d, n, include, discords, False)
    m = int(m)
    order = inc + [q for q in range(d) if q not in inc]
    l = n - m + 1
    ez = int(math.ceil(m / 4))
    dt = np.dtype(T.dtype)
    q = dev.queue
    odt = np.dtype(np.float64 if dev.fp64 else np.float32)
    prg = dev.program("mp/aamp.cl.mako", real="double" if dt == np.float64 else "float",
                      out_double=int(dev.fp64), DIM=d, NINC=len(inc),
                      DISCORDS=int(bool(discords)), SG=int(subgroup))
    P = cla.empty(q, (d, l), odt)
    I = cla.empty(q, (d, l), np.int64)
    Tc = T2 if T2.offset == 0 else T2.copy()        # the windows' kernel reads it whole
    rows_of = [device_rows(T2, k, k + 1).reshape(n) for k in order]
    rows = max(1, min(l, PNORM_ELEMENTS // (d * l)))
    Qb = cla.empty(q, (rows, m), dt)
    Db = cla.empty(q, (rows, l), dt)
    X = cla.empty(q, (d * rows * l,), dt)
    i32 = np.int32
    for s0 in range(0, l, rows):
        nr = min(rows, l - s0)
        Q, D = Qb[:nr], Db[:nr]
        for k, src in enumerate(order):
            launch(dev, prg.kernel("aamp_windows"),
                   *fixed_local(dev, round_up(nr * m, 64), ITEM_LOCAL),
                   Tc.data,
                   i32(src * n + s0), i32(nr), i32(m), Q.data)
            _device_profiles(dev, Q, rows_of[k], False, pnorm, precision, None, None, {},
                             out=D)
            copy(dev, X.base_data, D.base_data, nr * l * dt.itemsize,
                 dst_offset=X.offset + k * nr * l * dt.itemsize, src_offset=D.offset)
        launch(dev, prg.kernel("maamp_rows"), *fixed_local(dev, round_up(nr, 64), ITEM_LOCAL),
               X.data, i32(nr), i32(l), i32(s0), i32(ez), i32(l), P.data, I.data)
    return P, I
