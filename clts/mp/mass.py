"""``clts.mass`` and ``clts.match``: batched distance profiles of queries against series on the
device (mass.cl.mako, plan in mass_plan.py), with the matrix profile's z-normalisation and
constant-window conventions (stumpy's), and the matches under a threshold with stumpy.match's
exclusion around each match. See docs/matrix-profile.md, "Pattern search"."""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..runtime import chunk_sizes, get_device, launch, round_up
from ..runtime.launch import fixed_local
from .local_size import ITEM_LOCAL
from ..runtime.arrays import device_input, is_device_array, native, values_of
from ..runtime.memory import empty_device, host_empty, reshaped
from ..runtime.plans import plan_once
from ..runtime.pipeline import ChunkIO, device_marker, device_wait, run_pipelined
from . import flags
from .mass_plan import MassPlan, Problem, call_precision, make_mass_plan
from ..timeaxis import check_fits
from ..vocabulary import renamed

#: values beyond 2^EXP_LIMIT in magnitude (or nonzero below 2^-EXP_LIMIT) are rescaled by a
#: power of two before a plain (non-normalised) distance, so p-th powers neither overflow nor
#: underflow
EXP_LIMIT = 120


def _as_2d(x, name, dtype):
    """``x`` (1-D or 2-D real array, any layout / byte order) as a native-order 2-D view (no
    copy when possible), and whether it was 1-D."""
    a = native(values_of(x))
    if a.dtype.kind not in "fiub":
        raise TypeError(f"{name} must hold real numbers (float, integer or bool), got dtype "
                        f"{a.dtype}")
    if a.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D or 2-D ([batch, length]), got shape {a.shape}")
    if a.dtype.kind != "f" or a.dtype.itemsize > 8:
        a = a.astype(dtype)
    return (a[None, :] if a.ndim == 1 else a), a.ndim == 1


def _pairs(nq, ns):
    if nq == ns or nq == 1 or ns == 1:
        return max(nq, ns)
    raise ValueError(f"Q has {nq} queries and T {ns} series: give one query per series, one "
                     "query for all series, or one series for all queries")


def _shapes(qshape, tshape, query_idx):
    """(nq, m, ns, n, pairs, l) of the 2-D shapes of queries and series, checked (m, n,
    query_idx)."""
    nq, m = qshape
    ns, n = tshape
    if m < 3:
        raise ValueError(f"Q must have length m >= 3, got {m}")
    if n < m:
        raise ValueError(f"T has {n} values per series, fewer than the query length m={m}")
    npairs = _pairs(nq, ns)
    l = n - m + 1
    if query_idx is not None:
        if isinstance(query_idx, bool) or not isinstance(query_idx, (int, np.integer)) \
                or not 0 <= query_idx < l:
            raise ValueError(f"query_idx must be None or an int in [0, {l}), got {query_idx!r}")
    return nq, m, ns, n, npairs, l


def _plain_queries(Q):
    """Plain-distance queries: NaN / inf replaced by 0 and flagged (NONFINITE)."""
    Q = np.asarray(Q, np.float64)
    fin = np.all(np.isfinite(Q), axis=1)
    return np.where(fin[:, None], Q, 0.0), np.where(fin, 0, flags.NONFINITE).astype(np.int32)


def _z_queries(dev, prg, Q, dtype):
    """The queries z-normalised on the device (``zquery``: the windows' own arithmetic) and
    their flags (NONFINITE, CONSTANT), as device arrays."""
    import pyopencl.array as cla
    nq, m = Q.shape
    Qd = cla.to_device(dev.queue, np.ascontiguousarray(Q, dtype))
    Z = empty_device(dev.queue, dev.context, (nq, m), dtype)
    F = empty_device(dev.queue, dev.context, nq, np.int32)
    launch(dev, prg.kernel("zquery"), *fixed_local(dev, round_up(nq, 64), ITEM_LOCAL),
           Qd.data, np.int32(nq),
           np.int32(m), Z.data, F.data)
    return Z.get(), F.get()


def _plain_unit(Qc, T):
    """A power of two that brings the finite values of Q and T near 1 when they are extreme
    (plain distances: one common scale keeps them comparable), else 1."""
    def top(x):
        a = np.abs(x)
        return float(np.max(a, where=np.isfinite(a), initial=0.0))
    t = max(top(Qc), top(T))
    if t == 0 or 2.0 ** -EXP_LIMIT < t < 2.0 ** EXP_LIMIT:
        return 1.0
    return float(2.0 ** np.frexp(t)[1])


def _check_p(p):
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not (p >= 1):
        raise ValueError(f"p must be a real number >= 1 (or inf), got {p!r}")
    p = float(p)
    code = {1.0: 1, 2.0: 2, math.inf: 0}.get(p, -1)
    return p, code


def time_last(Q, T, time_axis):
    """``Q`` and ``T`` with time on the last axis: 2-D ones read with time on ``time_axis``
    (default -1, stumpy's [batch, time]), 1-D ones as they are. A query longer than every
    series along that axis that fits another axis of ``T`` is a ValueError naming
    ``time_axis=`` (docs/api-conventions.md, "Where time is")."""
    axis = -1 if time_axis is None else time_axis
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"time_axis must be an int, got {time_axis!r}")
    if is_device_array(Q) or is_device_array(T):
        if time_axis is not None and axis != -1 and not all(
                a is None or axis == np.ndim(a) - 1 for a in (Q, T)):
            raise ValueError("device arrays Q / T are [batch, time] or [time]: time_axis must "
                             f"be the last axis, got {time_axis!r}")
        return Q, T
    for a, name in ((Q, "Q"), (T, "T")):
        if a is not None and np.ndim(a) == 2 and not -2 <= axis < 2:
            raise ValueError(f"time_axis {axis} out of range for {name} with 2 dimensions")
    if Q is not None and T is not None and np.ndim(T) == 2 and np.ndim(Q) in (1, 2):
        m = np.shape(Q)[-1] if np.ndim(Q) == 1 or axis % 2 else np.shape(Q)[0]
        check_fits(np.shape(T), axis, lambda n: n >= m, f"a query of {m} values", name="T")
    out = []
    for a in (Q, T):
        if a is not None and np.ndim(a) == 2 and axis % 2 == 0:
            a = np.moveaxis(values_of(a), 0, -1)
        out.append(a)
    return out[0], out[1]


def distance_profiles(Q, T, *, normalize=True, p=2.0, precision=None, device=None,
                      query_idx=None, plan=None, progress=None, **plan_overrides):
    """The computation behind :func:`mass` (its docstring has the parameters)."""
    dev = get_device(device)
    if is_device_array(Q) or is_device_array(T):
        return _device_profiles(dev, Q, T, normalize, p, precision, query_idx, plan,
                                plan_overrides)[0]
    precision = call_precision(dev, precision)
    dtype = np.dtype(np.float64 if precision == "double" else np.float32)
    p, pcode = _check_p(p)
    Q2, q1 = _as_2d(Q, "Q", dtype)
    T2, t1 = _as_2d(T, "T", dtype)
    nq, m, ns, n, npairs, l = _shapes(Q2.shape, T2.shape, query_idx)
    pl = make_mass_plan(dev, Problem(precision), plan=plan, **plan_overrides)
    prg = dev.program("mp/mass.cl.mako", **flags.TEMPLATE, real=pl.real, lanes=pl.lanes,
                      chains=pl.chains, NORMALIZE=int(normalize), P=pcode)
    unit = 1.0
    if normalize:
        Zq, qf = _z_queries(dev, prg, Q2, dtype)
    else:
        Zq, qf = _plain_queries(Q2)
        unit = _plain_unit(Zq, T2)
        if unit != 1.0:
            Zq = Zq / unit
            T2 = np.where(np.isfinite(T2), T2 / unit, T2)
    out = host_empty(dev, (npairs, l), dtype)
    if npairs and l:
        _run(dev, pl, prg, T2, Zq.astype(dtype), qf, out, m, p, progress)
    if unit != 1.0:
        out *= unit
    if query_idx is not None:
        out[:, query_idx] = 0
    return out[0] if (q1 and t1) else out


def _device_profiles(dev, Q, T, normalize, p, precision, query_idx, plan, overrides, out=None):
    """:func:`distance_profiles` of device arrays: the same kernels on the arrays where they
    are, one launch over every pair, nothing read back or waited for. Returns (profiles, query
    flags), device arrays (the profiles in ``out``, [pairs, l], when given)."""
    if not (is_device_array(Q) and is_device_array(T)):
        raise TypeError("Q and T must both be device arrays or both host arrays")
    if precision is None:       # the arrays' own precision
        precision = "double" if np.dtype(Q.dtype) == np.float64 else "single"
    precision = call_precision(dev, precision)
    dtype = np.dtype(np.float64 if precision == "double" else np.float32)
    Q = device_input(Q, "Q", dev, dtypes=(dtype,), ndim=(1, 2))
    T = device_input(T, "T", dev, dtypes=(dtype,), ndim=(1, 2))
    # views at an offset (a query cut from the series): at offset 0, as the kernels take them
    from ..runtime.resident import device_rows
    Q, T = (device_rows(a, 0, a.shape[0]) if a.offset else a for a in (Q, T))
    p, pcode = _check_p(p)
    q1, t1 = Q.ndim == 1, T.ndim == 1
    # the kernels take buffers and sizes: no 2-D views of 1-D arrays (~3 µs each)
    nq, m, ns, n, npairs, l = _shapes((1, Q.size) if q1 else Q.shape,
                                      (1, T.size) if t1 else T.shape, query_idx)
    T2 = T
    pl = plan_once(dev, "mp", make_mass_plan, Problem(precision), plan=plan, **overrides)
    prg = dev.program("mp/mass.cl.mako", **flags.TEMPLATE, real=pl.real, lanes=pl.lanes,
                      chains=pl.chains, NORMALIZE=int(normalize), P=pcode)
    q = dev.queue
    if npairs * l * dtype.itemsize > dev.max_alloc:
        from ..errors import DeviceError
        raise DeviceError(f"mass: the {npairs} x {l} distance profiles of device arrays need "
                          f"{npairs * l * dtype.itemsize} bytes in one buffer, more than the "
                          f"largest allocation of {dev} ({dev.max_alloc}); split the batch")
    # temporaries are plain buffers, not pool blocks: dropped here, they live on until the
    # kernels queued on them have run (OpenCL releases a buffer after its last command)
    ctx = dev.context
    Z = empty_device(q, ctx, (nq, m), dtype)
    F = empty_device(q, ctx, nq, np.int32)
    unit = None
    if normalize:
        launch(dev, prg.kernel("zquery"), *fixed_local(dev, round_up(nq, 64), ITEM_LOCAL),
               Q.data, np.int32(nq),
               np.int32(m), Z.data, F.data)
    else:
        launch(dev, prg.kernel("plain_query"), *fixed_local(dev, round_up(nq, 64), ITEM_LOCAL),
               Q.data, np.int32(nq),
               np.int32(m), Z.data, F.data)
        unit = empty_device(q, ctx, 1, dtype)
        launch(dev, prg.kernel("plain_unit"), 256, 256, Z.data, np.int64(nq * m), T2.data,
               np.int64(ns * n), np.int32(EXP_LIMIT), unit.data)
        Zs, Ts = empty_device(q, ctx, (nq, m), dtype), empty_device(q, ctx, (ns, n), dtype)
        for src, dst in ((Z, Zs), (T2, Ts)):
            launch(dev, prg.kernel("div_unit"),
                   *fixed_local(dev, round_up(src.size, 64), ITEM_LOCAL),
                   src.data,
                   np.int64(src.size), unit.data, dst.data)
        Z, T2 = Zs, Ts
    if out is None:     # made in the shape it is returned in
        out = empty_device(q, ctx, (l,) if (q1 and t1) else (npairs, l), dtype)
    if npairs and l:
        nb = pl.windows_per_item
        g0 = -(-l // nb)
        (g0, _), local = fixed_local(dev, (g0, 1), ITEM_LOCAL)
        if pl.wg:
            g0 = round_up(-(-l // nb), pl.wg)
            local = (pl.wg, 1)
        launch(dev, prg.kernel("mass"), (g0, npairs), local, T2.data,
               np.int64(n if ns > 1 else 0), np.int32(l), np.int32(m), Z.data,
               np.int32(m if nq > 1 else 0), F.data,
               dtype.type(p if math.isfinite(p) else 0), out.data)
        if unit is not None or query_idx is not None:
            launch(dev, prg.kernel("finish_profiles"),
                   *fixed_local(dev, round_up(npairs * l, 64), ITEM_LOCAL),
                   out.data, np.int32(npairs), np.int32(l), np.int32(unit is not None),
                   (unit if unit is not None else out).data,
                   np.int32(-1 if query_idx is None else query_idx))
    return (reshaped(out, (l,)) if (q1 and t1) else out), F


def _run(dev, pl: MassPlan, prg, T2, Zq, qf, out, m, p, progress):
    npairs, l = out.shape
    ns, n = T2.shape
    nq = Zq.shape[0]
    item = out.dtype.itemsize
    per = [l * item] + ([n * item] if ns > 1 else []) + ([m * item + 4] if nq > 1 else [])
    fixed = (n * item if ns == 1 else 0) + (m * item + 4 if nq == 1 else 0)
    chunks = chunk_sizes(npairs, per, dev, fixed_bytes=fixed)
    kern = prg.kernel("mass")
    nb = pl.windows_per_item
    g0 = -(-l // nb)
    (g0, _), local = fixed_local(dev, (g0, 1), ITEM_LOCAL)
    if pl.wg:
        g0 = round_up(-(-l // nb), pl.wg)
        local = (pl.wg, 1)
    inputs = {}

    def rows(x, a, b):
        return x if x.shape[0] == 1 else x[a:b]

    def upload(i, a, b, slot, queue):
        td, e1 = io.put(slot, "T", rows(T2, a, b), queue, out.dtype)
        qd, e2 = io.put(slot, "Q", rows(Zq, a, b), queue, out.dtype)
        fd, e3 = io.put(slot, "F", rows(qf, a, b), queue, np.int32)
        inputs[slot] = (td, qd, fd)
        return e1 + e2 + e3

    def compute(i, a, b, slot, wait_for):
        td, qd, fd = inputs.pop(slot)
        od = io.out(slot, "D", out[a:b])
        device_wait(dev, wait_for)
        launch(dev, kern, (g0, b - a), local, td.data, np.int64(n if ns > 1 else 0),
               np.int32(l), np.int32(m), qd.data, np.int32(m if nq > 1 else 0), fd.data,
               out.dtype.type(p if math.isfinite(p) else 0), od.data)
        return device_marker(dev)

    def download(i, a, b, slot, queue, wait_for):
        return io.fetch(slot, queue, wait_for)

    with ChunkIO(dev) as io:
        run_pipelined(dev, chunks, upload=upload, compute=compute, download=download,
                      desc="mass", unit="chunk", disable=None if progress is None else
                      not progress)


def _find_matches(D, ez, max_distance, max_matches, query_idx, atol):
    """stumpy's greedy search: the smallest remaining distance (smallest index on ties) while
    it is within max_distance + atol, then an exclusion zone of ``ez`` around it. Candidates
    are taken in sorted order and skipped when excluded, which is the same sequence."""
    D = np.asarray(D, np.float64)
    if max_distance is None:
        Dn = np.where(np.isinf(D), np.nan, D)
        if np.all(np.isnan(Dn)):
            max_distance = np.nan
        else:
            max_distance = max(np.nanmean(Dn) - 2.0 * np.nanstd(Dn), np.nanmin(Dn))
    elif callable(max_distance):
        max_distance = max_distance(D.copy())
    max_distance = float(max_distance)
    limit = np.inf if max_matches is None else int(max_matches)
    thr = atol + max_distance
    cand = np.nonzero(np.isfinite(D) & (D <= thr))[0]
    order = cand[np.argsort(D[cand], kind="stable")]
    if query_idx is not None and np.isfinite(D[query_idx]) and D[query_idx] <= thr:
        order = np.concatenate([[query_idx], order[order != query_idx]])
    taken = np.zeros(len(D), bool)
    out = []
    for j in order:
        if len(out) >= limit:
            break
        if taken[j]:
            continue
        out.append([D[j], int(j)])
        taken[max(0, j - ez):j + ez + 1] = True
    return np.array(out, dtype=object).reshape(len(out), 2)


#: the search of :func:`match` over one distance profile (clts.compat.stumpy's multi-dimensional
#: match runs it on the mean of the profiles)
find_matches = _find_matches


@renamed()
def mass(Q, T, *, normalize=True, p=2.0, precision=None, device=None, query_idx=None,
         plan=None, progress=None, time_axis=None, **plan_overrides):
    """Distance profiles of queries against series, batched on the device.

    ``D[i, j]`` is the distance between query ``i`` and the window ``T[i, j:j + m]`` of
    series ``i``. One query against many series (``Q`` 1-D or one row), many queries against
    one series (``T`` 1-D or one row), or one query per series (as many rows in both).
    Computed directly, O(m) per window (not from a sliding dot product), so a near match's
    distance carries no cancellation.

    Parameters
    ----------
    Q : array_like, [m] or [nq, m]
        The queries (m >= 3). A query with NaN / inf gives inf everywhere (stumpy's
        convention).
    T : array_like, [n] or [ns, n]
        The series, n >= m; any numpy layout (Fortran order, strided, big-endian).
    normalize : bool, optional
        z-normalised Euclidean distance (default), or the plain Minkowski distance of order
        ``p``.
    p : float, optional
        Order of the plain distance (``normalize=False``): 1, 2 (default), any p >= 1, or
        ``inf``; ignored when normalising (as stumpy).
    precision : {"double", "single"}, optional
        float64 (default where the device has ``cl_khr_fp64``) or float32 throughout; the
        result has that dtype.
    device : int, str or Device, optional
    query_idx : int, optional
        ``Q`` is ``T[query_idx:query_idx + m]``: that distance is set to 0 (stumpy's).
    plan : clts.mp.mass_plan.MassPlan, optional
        A plan to run as is.
    progress : bool, optional
        A progress bar over chunks (default: the ``progress`` option).
    time_axis : int, optional
        The time axis of a 2-D ``Q`` / ``T`` (default -1: [batch, time], as stumpy); 0 reads
        [time, batch] arrays. A 1-D one is a series whatever this says.
    **plan_overrides
        ``lanes``, ``chains``, ``wg`` (profile section ``mp.mass``).

    Returns
    -------
    numpy.ndarray
        [l] for 1-D ``Q`` and ``T``, else [pairs, l], l = n - m + 1. Windows with NaN / inf
        are inf; z-normalised: a constant window is at 0 from a constant query, at sqrt(m)
        from any other.

    Raises
    ------
    ValueError
        Shapes that do not pair up, m < 3, n < m, p < 1, a bad ``query_idx`` or plan field.
    TypeError
        Non-real data, an unknown plan keyword.
    clts.DeviceError
        ``precision="double"`` on a device without ``cl_khr_fp64``.

    References
    ----------
    .. [1] A. Mueen, Y. Zhu, M. Yeh, K. Kamgar, K. Viswanathan, C. Gupta, E. Keogh, "The
       Fastest Similarity Search Algorithm for Time Series Subsequences under Euclidean
       Distance" (MASS), 2017.
    .. [2] Y. Zhu et al., "Exploiting a novel algorithm and GPUs to break the ten quadrillion
       pairwise comparisons barrier for time series motifs and joins", KAIS 2017.

    Examples
    --------
    >>> import numpy as np, clts
    >>> T = np.cumsum(np.random.default_rng(0).standard_normal((3, 500)), axis=1)
    >>> D = clts.mass(T[1, 100:132], T)              # one query against three series
    >>> D.shape, float(D[1, 100])
    ((3, 469), 0.0)
    >>> z = lambda x: (x - x.mean()) / x.std()
    >>> bool(np.isclose(D[0, 7], np.linalg.norm(z(T[1, 100:132]) - z(T[0, 7:39]))))
    True
    """
    Q, T = time_last(Q, T, time_axis)
    return distance_profiles(Q, T, normalize=normalize, p=p, precision=precision,
                             device=device, query_idx=query_idx, plan=plan, progress=progress,
                             **plan_overrides)


@renamed()
def match(Q, T, *, max_distance=None, max_matches=None, atol=1e-8, query_idx=None,
          normalize=True, p=2.0, precision=None, device=None, plan=None, progress=None,
          time_axis=None, **plan_overrides):
    """All windows of ``T`` within ``max_distance`` of ``Q``, best first, with stumpy.match's
    exclusion zone (ceil(m / 4)) around each match; batched like :func:`mass`.

    Parameters
    ----------
    Q, T, normalize, p, precision, device, plan, progress, time_axis, **plan_overrides
        As :func:`mass`. Unlike stumpy, a 2-D ``Q`` / ``T`` is a batch (one result per
        pair), not a multi-dimensional query.
    max_distance : float or callable, optional
        Distances <= max_distance + atol match. A callable gets each distance profile.
        Default (stumpy's): max(mean(D) - 2 std(D), min(D)) over the finite distances.
    max_matches : int, optional
        At most this many per pair (default all).
    atol : float, optional
        Added to ``max_distance`` (default 1e-8).
    query_idx : int, optional
        ``Q`` is ``T[query_idx:query_idx + m]``: that window is the first match.

    Returns
    -------
    numpy.ndarray or list of numpy.ndarray
        For 1-D ``Q`` and ``T`` an object array [matches, 2] of (distance, index) sorted by
        distance, as stumpy.match returns; otherwise one such array per pair. No match:
        shape (0, 2), where stumpy.match's is (0,) (``clts.compat.stumpy.match`` returns
        that).

    Raises
    ------
    ValueError
        ``Q`` with NaN / inf (stumpy's), and as :func:`mass`.

    Examples
    --------
    >>> import numpy as np, clts
    >>> T = np.cumsum(np.random.default_rng(0).standard_normal(1000))
    >>> T[700:732] = T[100:132]                      # an exact repeat
    >>> r = clts.match(T[100:132], T, max_distance=1.0)
    >>> [int(i) for i in r[:2, 1]]
    [100, 700]
    """
    Q, T = time_last(Q, T, time_axis)
    on_device = is_device_array(Q) or is_device_array(T)
    if not on_device:
        Qv = np.asarray(values_of(Q))
        if Qv.dtype.kind in "fc" and not np.all(np.isfinite(Qv)):
            raise ValueError("Q contains illegal values (NaN or inf)")
    if max_matches is not None and (isinstance(max_matches, bool) or not isinstance(
            max_matches, (int, np.integer)) or max_matches < 0):
        raise ValueError(f"max_matches must be None or an int >= 0, got {max_matches!r}")
    if not (max_distance is None or callable(max_distance)
            or isinstance(max_distance, numbers.Real)):
        raise TypeError(f"max_distance must be None, a number or a callable, got "
                        f"{type(max_distance).__name__}")
    if on_device:       # the matches are a host list: the profiles and query flags read once
        Dd, F = _device_profiles(get_device(device), Q, T, normalize, p, precision, query_idx,
                                 plan, plan_overrides)
        if np.any(F.get() & flags.NONFINITE):
            raise ValueError("Q contains illegal values (NaN or inf)")
        D = Dd.get()
        m = Q.shape[-1]
    else:
        D = distance_profiles(Q, T, normalize=normalize, p=p, precision=precision,
                              device=device, query_idx=query_idx, plan=plan,
                              progress=progress, **plan_overrides)
        m = Qv.shape[-1]
    ez = int(math.ceil(m / 4))
    if D.ndim == 1:
        return _find_matches(D, ez, max_distance, max_matches, query_idx, atol)
    return [_find_matches(d, ez, max_distance, max_matches, query_idx, atol) for d in D]
