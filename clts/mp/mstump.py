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

from ..runtime import get_device, launch, round_up
from ..runtime.launch import fixed_local
from ..runtime.arrays import native, values_of
from ..runtime.programs import built, prebuild
from . import flags
from .diagonal import _work_lists
from .exact import _better, _pair_dist, exact_spec
from .mass import _check_p, distance_profiles
from .mass_plan import call_precision
from .mstump_plan import Problem, make_mstump_plan
from .series import Side, _well_scaled, prep_spec, stats_spec
from ..timeaxis import check_fits

#: bytes of the partial row / column profiles of one launch (bands per launch are cut to fit)
PARTIAL_BYTES = 64 << 20
#: the most dimensions the kernel sorts in registers (a sorting network of ~d log^2 d / 4
#: comparators, unrolled)
MAX_DIM = 32
#: the most dimensions of a float64 build that gets the profile's ``waves`` (gfx908, waves 3:
#: no scratch up to 12 dimensions, with or without constant windows, forced dimensions,
#: plain distances; 128 B of scratch at 16; float32 none up to 32)
WAVES_MAX_DIM64 = 12
#: ill-conditioned windows per block of exact rows
ILL_BLOCK = 64
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
        ``pyopencl.array.Array`` ([d, n] or [n], C-contiguous) gives P and I as device arrays:
        on the device throughout for ``normalize=False`` with p != 2, else read once and P
        and I written back (docs/device-arrays.md).
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
    if d > MAX_DIM:
        hint = (" (if T is [time, dimensions] give time_axis=0)"
                if time_axis is None and n <= MAX_DIM and d >= m else "")
        raise ValueError(f"T has {d} dimensions; clts.mstump sorts at most {MAX_DIM} per pair "
                         f"in registers (split the dimensions or choose fewer){hint}")
    if n < m:
        raise ValueError(f"T has {n} values per dimension, fewer than m={m}")
    inc = _include(include, d)
    if not isinstance(discords, (bool, np.bool_)):
        raise TypeError(f"discords must be a bool, got {type(discords).__name__}")
    if not isinstance(normalize, (bool, np.bool_)):
        raise TypeError(f"normalize must be a bool, got {type(normalize).__name__}")
    normalize, discords = bool(normalize), bool(discords)
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
    # a first call builds the statistics and exact-distance programs at once (the diagonal
    # kernel's depends on the windows' flags, known after the statistics)
    # the series' type as Side uploads it (prep.cl.mako's input)
    tin = np.float32 if p.exact_real == "float" and not dev.fp64 else np.float64
    if not built(dev, *stats_spec(dev, p, normalize)) or \
            not built(dev, *prep_spec(dev, p, normalize, tin)):
        prebuild(dev, [stats_spec(dev, p, normalize), prep_spec(dev, p, normalize, tin),
                       exact_spec(dev, p, normalize)])
    scaled = [_well_scaled(T2[q], None, normalize, precision) for q in order]
    sides = [Side(dev, a, m, p, normalize, 0) for a, _, _ in scaled]
    units = np.array([u for _, _, u in scaled])
    ill = np.zeros(l, bool)
    for s in sides:
        s.mark_ill(p, p.segment)
        ill |= (s.flags & flags.ILL) != 0
    idx = _device_indices(dev, p, sides, m, l, ez, len(inc), discords, ill, normalize, units)
    P, I = _exact(dev, p, sides, idx, len(inc), discords, units)
    S = np.nonzero(ill)[0]
    for b in range(0, len(S), ILL_BLOCK):
        _profile_rows(dev, p, T2[order], m, ez, S[b:b + ILL_BLOCK], P, I, len(inc), discords)
    return P, I


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


def _stacked(sides, m, ill, normalize=True):
    """The kernel's arrays of every dimension stacked [d, NW] (T: [d, NW + m]); r marks
    constant windows with -1 and non-finite ones (and the padding) with NaN; windows ``ill``
    in some dimension are NaN in every one (their pairs are left to ``_profile_rows``).
    ``normalize=False``: r = -|window|^2 / 2 as the 1-D kernels' (``Side.arrays``)."""
    cols = [s.arrays(as_columns=True) for s in sides]
    for s, c in zip(sides, cols):
        if not normalize:
            continue
        r = c["r"]
        ok = (s.flags & (flags.NONFINITE | flags.CONSTANT)) == 0
        with np.errstate(divide="ignore"):
            r[:s.l] = np.where(ok, 1.0 / np.sqrt(np.maximum(s.ss_h, 1e-300)), np.nan)
        r[:s.l][(s.flags & flags.CONSTANT) != 0] = -1.0
        r[:s.l][(s.flags & flags.NONFINITE) != 0] = np.nan
        r[:s.l][ill] = np.nan
    return {k: np.stack([c[k] for c in cols]) for k in cols[0]}


def _device_indices(dev, p, sides, m, l, ez, ninc, discords, ill, normalize=True, units=None):
    """I [d, l] from the diagonal kernel (every band of every segment, in launches of at most
    PARTIAL_BYTES of partial profiles), folded by the reduction kernels."""
    import pyopencl.array as cla
    from ..runtime.faults import enter_chunk
    d = len(sides)
    D, R = p.band, p.segment
    kr = np.float64 if p.kernel_real == "double" else np.float32
    q = dev.queue
    gV = cla.to_device(q, np.full(d * l, np.inf, kr))
    gI = cla.to_device(q, np.full(d * l, -1, np.int32))
    kstart = ez + 1
    nb = -(-(l - kstart) // D) if l > kstart else 0
    if nb == 0:
        return gI.get().astype(np.int64).reshape(d, l)
    arr = _stacked(sides, m, ill, normalize)
    NW = arr["mu"].shape[1]
    dA = {k: cla.to_device(q, np.ascontiguousarray(v, kr)) for k, v in arr.items()}
    per_band = d * (2 * R + D) * (np.dtype(kr).itemsize + 4)
    chunk = max(1, min(1 << 14, PARTIAL_BYTES // per_band, dev.max_alloc // 4 // per_band))
    from .. import options
    cap = options.get("max_chunk")
    if cap:
        chunk = max(1, min(chunk, cap))
    launches = []
    for s0, desc, _ in _work_lists(l, l, True, D, R, 0, nb, kstart):
        for c0 in range(0, len(desc), chunk):
            launches.append((s0, desc[c0:c0 + chunk]))
    nwmax = round_up(max(len(x) for _, x in launches), p.wg)     # nws: the interleave stride
    rPV = cla.empty(q, nwmax * d * R, kr)
    rPI = cla.empty(q, nwmax * d * R, np.int32)
    cPV = cla.empty(q, nwmax * d * (R + D), kr)
    cPI = cla.empty(q, nwmax * d * (R + D), np.int32)
    # dimensions with a constant window (the others skip the constant-window convention)
    const = sum(1 << q for q, s in enumerate(sides) if np.any(s.flags & flags.CONSTANT)) \
        if normalize else 0
    # plain distances: NORMALIZE=0 and each dimension's unit (z-normalised: the programs as
    # before, no NORMALIZE parameter)
    plain = {} if normalize else {"NORMALIZE": 0}
    # sub-group size (Intel) / waves per SIMD (AMD): only where set (the other programs as
    # before); waves not on float64 builds of more than WAVES_MAX_DIM64 dimensions
    waves = p.waves if p.kernel_real == "float" or d <= WAVES_MAX_DIM64 else 0
    tuning = {k: v for k, v in (("subgroup", p.subgroup), ("waves", waves)) if v}
    if p.lanes == 1 and p.groups == 1 and d * NW < 2 ** 31:
        tuning["OFF32"] = 1         # int offsets in the row loop (fewer 64-bit addresses live)
    unit = () if normalize else (cla.to_device(q, np.asarray(units, kr)).data,)
    prg = dev.program("mp/mdiag.cl.mako", real=p.kernel_real, lanes=p.lanes, groups=p.groups,
                      segment=R, DIM=d, NINC=ninc, DISCORDS=int(discords), CONST=const,
                      interleave=p.interleave, fold=p.fold, **plain, **tuning)
    nws = (np.int32(nwmax),) if p.interleave else ()
    kern, red_r, red_c = (prg.kernel(k) for k in ("mdiag", "mreduce_rows", "mreduce_cols"))
    # each launch's descriptors from a 128-byte boundary (8 int4): the folds read them with
    # adjacent work-items, and an unaligned run of 32 spans 5 segments instead of 4
    offs = np.cumsum([0] + [round_up(len(x), 8) for _, x in launches])
    alld = np.zeros((int(offs[-1]), 4), np.int32)
    for o, (_, x) in zip(offs, launches):
        alld[o:o + len(x)] = x
    dd = cla.to_device(q, alld)
    for li, (s0, dsub) in enumerate(launches):
        nw, off = len(dsub), int(offs[li])
        enter_chunk(li, off, off + nw, len(launches), len(alld))
        launch(dev, kern, round_up(nw, p.wg), p.wg, dd.data, np.int32(off), np.int32(nw),
               np.int32(s0), np.int32(m), np.int32(l), np.int32(NW), dA["T"].data,
               dA["mu"].data, dA["df"].data, dA["dg"].data, dA["r"].data, *unit,
               rPV.data, rPI.data, cPV.data, cPI.data, *nws)
        head = (dd.data, np.int32(off), np.int32(nw), np.int32(s0))
        ncols = (nw - 1) * D + R + D
        if p.fold:      # a work-group per row / per 32 column groups of D columns
            rows = (R * p.fold, p.fold)
            ngroups = -(-(-(-ncols // D)) // min(32, p.fold))
            cols = (ngroups * p.fold, p.fold)
        else:           # a work-item per row / column
            rows, cols = (round_up(R, 64), None), (round_up(ncols, 64), None)
        launch(dev, red_r, *rows, *head, np.int32(l),
               rPV.data, rPI.data, gV.data, gI.data, *nws)
        launch(dev, red_c, *cols, *head,
               np.int32(int(dsub[0, 0])), np.int32(ncols), np.int32(l),
               cPV.data, cPI.data, gV.data, gI.data, *nws)
    return gI.get().astype(np.int64).reshape(d, l)


def _exact(dev, p, sides, I, ninc, discords, units):
    """P [d, l] of the winners I, every per-dimension distance recomputed exactly
    (``pair_dist``, times the dimension's ``units``: 1 when z-normalised), sorted with the
    forced dimensions first, and averaged; I = -1 where P is inf."""
    d, l = I.shape
    rows = np.tile(np.arange(l), d)
    cols = I.ravel()
    # pairs in diagonal order: adjacent work-items read adjacent windows on both sides
    # (coalesced on GPUs, cache lines shared on CPUs)
    perm = np.lexsort((rows, cols - rows))
    X = np.empty((d, d * l))
    for q, s in enumerate(sides):
        X[q, perm] = _pair_dist(dev, p, s, s, rows[perm], cols[perm]) * units[q]
    X = X.reshape(d, d, l)
    rest = np.sort(X[ninc:], axis=0)
    if discords:
        rest = rest[::-1]
    X = np.concatenate([X[:ninc], rest])            # [dim order, k, i]
    csum = np.cumsum(X, axis=0)
    kk = np.arange(d)
    P = csum[kk, kk, :] / (kk + 1)[:, None]
    I = np.where(np.isfinite(P), I, -1)
    P = np.where(I < 0, np.inf, P)
    return P, I


def _mstump_device(T, m, include, discords, normalize, p, precision, device, plan, time_axis,
                   plan_overrides):
    """:func:`mstump` of a device array ``T`` ([d, n] or [n], time last): ``(P, I)`` as device
    arrays. Plain distances with p != 2 run on the device (:func:`_maamp_device`). Otherwise
    not device-resident inside: the windows' preparation, the exact re-evaluation and the
    ill-conditioned rows are host steps of this function today, so the call reads ``T`` once
    (d n itemsize bytes, a wait), runs as numpy input does, and writes P and I to new device
    arrays (2 d l 8 bytes, non-blocking): one read and two writes more than the numpy call
    (docs/device-arrays.md). The arrays' dtype sets the precision unless ``precision`` names
    it."""
    import pyopencl.array as cla
    from ..runtime.arrays import device_input, to_numpy
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
    if not normalize and _check_p(p)[0] != 2.0:
        return _maamp_device(dev, T, m, include, discords, _check_p(p)[0], own)
    host = to_numpy(T)                  # the one read
    P, I = mstump(host, m, include, discords, normalize, p, precision=own, device=dev,
                  plan=plan, **plan_overrides)
    q = dev.queue
    return (cla.to_device(q, np.ascontiguousarray(P), async_=True),
            cla.to_device(q, np.ascontiguousarray(I), async_=True))


def _maamp_device(dev, T, m, include, discords, pnorm, precision):
    """:func:`mstump` with ``normalize=False`` and p != 2 on a device array: per block of rows
    (PNORM_ELEMENTS distances), each dimension's windows gathered and their distance profiles
    computed by ``mass``' kernels into one block buffer [d, rows, l], then ``maamp_rows``
    (``templates/mp/aamp.cl.mako``) sorts, sums and keeps the best of each row: the host
    path's ``_profile_rows`` on the same distances. Nothing is read back or waited for."""
    import pyopencl as cl
    import pyopencl.array as cla
    from ..runtime.resident import device_rows
    from .aamp import MAX_DIM as KMAX
    from .mass import _device_profiles
    T2 = T.reshape(1, -1) if T.ndim == 1 else T
    d, n = (int(v) for v in T2.shape)
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)):
        raise TypeError(f"m must be an int, got {type(m).__name__}")
    m = int(m)
    if m < 3:
        raise ValueError(f"m must be >= 3, got {m}")
    if d > min(MAX_DIM, KMAX):
        raise ValueError(f"T has {d} dimensions; clts.mstump sorts at most {MAX_DIM} per "
                         "pair in registers (split the dimensions or choose fewer)")
    if n < m:
        raise ValueError(f"T has {n} values per dimension, fewer than m={m}")
    inc = _include(include, d)
    if not isinstance(discords, (bool, np.bool_)):
        raise TypeError(f"discords must be a bool, got {type(discords).__name__}")
    order = inc + [q for q in range(d) if q not in inc]
    l = n - m + 1
    ez = int(math.ceil(m / 4))
    dt = np.dtype(T.dtype)
    q = dev.queue
    odt = np.dtype(np.float64 if dev.fp64 else np.float32)
    prg = dev.program("mp/aamp.cl.mako", real="double" if dt == np.float64 else "float",
                      out_double=int(dev.fp64), max_dim=KMAX)
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
            launch(dev, prg.kernel("aamp_windows"), *fixed_local(dev, round_up(nr * m, 64)),
                   Tc.data,
                   i32(src * n + s0), i32(nr), i32(m), Q.data)
            _device_profiles(dev, Q, rows_of[k], False, pnorm, precision, None, None, {},
                             out=D)
            cl.enqueue_copy(q, X.data, D.data, byte_count=nr * l * dt.itemsize,
                            dst_offset=k * nr * l * dt.itemsize)
        launch(dev, prg.kernel("maamp_rows"), *fixed_local(dev, round_up(nr, 64)), X.data, i32(nr),
               i32(l), i32(s0), i32(d), i32(len(inc)), i32(bool(discords)), i32(ez), i32(l),
               P.data, I.data)
    return P, I
