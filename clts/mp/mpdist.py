"""``clts.mpdist`` and ``clts.mpdist_vect``: the MPdist measure between series (Gharghabi et al.,
"Matrix Profile XII: MPdist: A Novel Time Series Distance Measure to Allow Data Mining in More
Challenging Scenarios", ICDM 2018), stumpy's definitions and conventions.

MPdist of (A, B) is the k-th smallest value of the AB-join's profile concatenated with the
BA-join's. ``mpdist`` runs both joins of a whole batch of pairs in one kernel (mpdist.cl.mako:
each pair's distance matrix once, row and column maxima of the Pearson correlation, O(1) per
cell); the host prepares the window statistics and picks the k-th value. ``mpdist_vect`` (the
MPdist of a query against every same-length subsequence of a series, stumpy's snippets'
building block) takes the query's windows' distance profiles from :func:`clts.mass` and
rolling minima on the host.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..runtime import get_device, launch, round_up
from ..runtime.launch import fixed_local
from ..runtime.arrays import is_device_array, native, values_of
from ..runtime.memory import chunk_sizes
from .local_size import ITEM_LOCAL, WALK_LOCAL
from .mass_plan import call_precision
from ..vocabulary import renamed

#: vector width of the kernel's column loops (explicit vectors: pocl vectorises only those)
LANES = 4
#: profile keys of the AB-join program (mpdist.cl.mako, section ``mp.mpdist``): the runs
#: kernel's first rows take ``first_items`` items per work-item (of one target, sharing its
#: loads) and ``first_vectors`` vectors of LANES columns per work-item (a register tile of
#: first_items x first_vectors vectors); ``subgroup``: the sub-group size the join kernels
#: require on Intel GPUs (0: the compiler picks)
MPDIST_KEYS = {"first_items": "mp.mpdist.first_items",
               "first_vectors": "mp.mpdist.first_vectors", "subgroup": "mp.mpdist.subgroup"}
#: work-items wanted per call before row blocks split a pair (each block recomputes one row
#: directly, O(m) per cell, so blocks are at least MIN_BLOCK_ROWS_PER_M * m rows)
TARGET_ITEMS = 4096
MIN_BLOCK_ROWS_PER_M = 4
#: columns of a chunk of the join kernels' rows (all rows of a chunk before the next one: its
#: slices of the series, statistics and row buffers stay in the L1 cache)
CHUNK = 256


def join_params(dev) -> dict:
    """The AB-join program's tile from ``dev``'s profile (:data:`MPDIST_KEYS`): FIRST_ITEMS,
    FIRST_VECTORS and SUBGROUP; a bad value is a ProfileError naming its file and key."""
    from ..runtime.plans import SUBGROUPS, read_tunables
    t = read_tunables(dev, MPDIST_KEYS, {})
    return dict(FIRST_ITEMS=t.int_in("first_items", 1, 16),
                FIRST_VECTORS=t.int_in("first_vectors", 1, 8),
                SUBGROUP=t.int_in("subgroup", choices=SUBGROUPS))


def window_stats(X, m):
    """Per-window statistics of the rows of ``X`` ([ns, n] float64) for the AB-join kernel:
    (S, mu, isd, sp): each series centred on the mean of its finite values with NaN / inf set
    to 0, the windows' means and 1 / standard deviations (of the centred values), and ``sp``:
    NaN for a regular window, 0.5 for a constant one (max == min, stumpy's test), -inf for one
    holding NaN / inf."""
    X = np.asarray(X, np.float64)
    fin = np.isfinite(X)
    cnt = np.maximum(fin.sum(axis=1, keepdims=True), 1)
    centre = np.where(fin, X, 0.0).sum(axis=1, keepdims=True) / cnt
    S = np.where(fin, X - centre, 0.0)
    W = np.lib.stride_tricks.sliding_window_view(S, m, axis=1)
    bad = np.lib.stride_tricks.sliding_window_view(~fin, m, axis=1).any(axis=2)
    mu = W.mean(axis=2)
    sd = np.sqrt(np.mean((W - mu[..., None]) ** 2, axis=2))
    const = (W.max(axis=2) == W.min(axis=2)) & ~bad
    regular = ~(bad | const)
    isd = np.where(regular, 1.0 / np.where(regular, sd, 1.0), 0.0)
    mu = np.where(regular, mu, 0.0)
    sp = np.where(bad, -np.inf, np.where(const, 0.5, np.nan))
    return S, mu, isd, sp


class SeriesSet:
    """Equal-length series prepared once on the device for the AB-join kernels
    (mpdist.cl.mako): centred values and window statistics (:func:`window_stats`)."""

    def __init__(self, X, m, device=None, precision=None):
        import pyopencl.array as cla
        self.dev = dev = get_device(device)
        self.precision = call_precision(dev, precision)
        self.dtype = np.dtype(np.float64 if self.precision == "double" else np.float32)
        self.m = m
        self.n = X.shape[1]
        self.l = self.n - m + 1
        tile = join_params(dev)
        #: items per work-item of the runs kernel (``run_profiles``)
        self.first_items = tile["FIRST_ITEMS"]
        self.prg = dev.program("mp/mpdist.cl.mako", LANES=LANES, CHUNK=CHUNK, **tile,
                               real="double" if self.precision == "double" else "float")
        # the centring and the NaN / inf flags on the host (O(n)), the window statistics
        # (O(n m)) on the device: series_stats, window_stats' arithmetic
        X = np.asarray(X, np.float64)
        fin = np.isfinite(X)
        cnt = np.maximum(fin.sum(axis=1, keepdims=True), 1)
        centre = np.where(fin, X, 0.0).sum(axis=1, keepdims=True) / cnt
        S = np.zeros((X.shape[0], self.n + LANES), self.dtype)
        S[:, :self.n] = np.where(fin, X - centre, 0.0)
        c = np.zeros((X.shape[0], self.n + 1), np.int64)
        np.cumsum(~fin, axis=1, out=c[:, 1:])
        bad = (c[:, m:] - c[:, :-m]) > 0
        q = dev.queue
        Sd = cla.to_device(q, S)
        mu, isd, sp, of = (cla.empty(q, (X.shape[0], self.l), self.dtype) for _ in range(4))
        launch(dev, self.prg.kernel("series_stats"),
               *fixed_local(dev, (round_up(self.l, 64), X.shape[0]), ITEM_LOCAL),
               Sd.data, np.int32(self.n + LANES), np.int32(self.l), np.int32(m),
               cla.to_device(q, bad.astype(np.uint8)).data, mu.data, isd.data, sp.data,
               of.data)
        self.arrays = [Sd, mu, isd, sp]
        #: per window, what the join kernels add to the correlation: 0 for a regular window,
        #: ``sp`` for the others (their 1 / std and mean are 0)
        self.offsets = of

    def args(self):
        S, mu, isd, sp = self.arrays
        return (S.data, np.int32(self.n + LANES), mu.data, isd.data, sp.data, np.int32(self.l))

    @property
    def nbytes(self):
        return sum(a.nbytes for a in self.arrays) + self.offsets.nbytes


def _distances(rho, m):
    with np.errstate(invalid="ignore"):
        return np.sqrt(np.abs(2.0 * m * (1.0 - rho)))


def ab_profiles(A, B, pa, pb, m, *, device=None, precision=None, sides=None):
    """Both profiles of the AB-joins of the pairs (A[pa[q]], B[pb[q]]): ``(P_AB, P_BA)``,
    [pairs, lA] and [pairs, lB] z-normalised distances (inf for a window with NaN / inf), on
    the device in one kernel per chunk of pairs. ``sides``: the two ``SeriesSet`` of A and B
    when already prepared."""
    import pyopencl.array as cla
    if sides is None:
        sa = SeriesSet(A, m, device, precision)
        sides = (sa, sa if B is A else SeriesSet(B, m, device, precision))
    sa, sb = sides
    dev, dtype = sa.dev, sa.dtype
    pa = np.ascontiguousarray(pa, np.int32)
    pb = np.ascontiguousarray(pb, np.int32)
    lA, lB = sa.l, sb.l
    npairs = len(pa)
    rhoA = np.empty((npairs, lA))
    rhoB = np.empty((npairs, lB))
    if npairs:
        q = dev.queue
        kern = sa.prg.kernel("abjoin_best")
        min_rows = MIN_BLOCK_ROWS_PER_M * m
        nblk = max(1, min(-(-TARGET_ITEMS // npairs), -(-lA // min_rows)))
        rows = -(-lA // nblk)
        nblk = -(-lA // rows)
        lBp = lB + LANES
        item = dtype.itemsize
        per = [nblk * (2 * CHUNK + rows) * item, nblk * lB * item, lA * item, 8]
        fixed = sa.nbytes + (0 if sb is sa else sb.nbytes)
        for a, b in chunk_sizes(npairs, per, dev, fixed_bytes=fixed):
            c = b - a
            pad = cla.to_device(q, pa[a:b])
            pbd = cla.to_device(q, pb[a:b])
            scratch = cla.empty(q, c * nblk * (2 * CHUNK + rows), dtype)
            rb = cla.empty(q, (c, lA), dtype)
            cbest = cla.empty(q, (c, nblk, lB), dtype)
            launch(dev, kern, *fixed_local(dev, (nblk, c), WALK_LOCAL),
                   *sa.args(), *sb.args(), sb.offsets.data,
                   pad.data, pbd.data,
                   np.int32(m), np.int32(rows), scratch.data, np.int32(lBp), rb.data,
                   cbest.data)
            rhoA[a:b] = rb.get()
            rhoB[a:b] = np.minimum(cbest.get().max(axis=1), 1.0)     # the kernel's clamp
    return _distances(rhoA, m), _distances(rhoB, m)


def run_profiles(side, items):
    """The nearest-neighbour distances of runs of consecutive windows: for each item
    (a, b, r0, cnt) of ``items`` ([k, 4] ints), windows r0 .. r0 + cnt - 1 of series a against
    every window of series b (both of the ``SeriesSet`` ``side``), concatenated in item order.
    One launch per chunk of items: a work-item takes ``side.first_items`` items of one target
    (the profile's ``mp.mpdist.first_items``) and goes
    through the columns a chunk at a time, the items' first rows (O(m) per column, each load of
    the target feeding them all) then their next rows (O(1) per column)."""
    import pyopencl.array as cla
    items = np.ascontiguousarray(items, np.int32).reshape(-1, 4)
    cnt = items[:, 3].astype(np.int64)
    out = np.empty(int(cnt.sum()))
    if not len(items):
        return out
    fi = side.first_items
    items = _pad_groups(items, fi)
    cnt = items[:, 3].astype(np.int64)
    offs = np.concatenate([[0], np.cumsum(cnt)])
    dev, dtype, q = side.dev, side.dtype, side.dev.queue
    kern = side.prg.kernel("abjoin_runs")
    sst = 2 * CHUNK + int(cnt.max())    # an item's two row buffers and its chunk edges
    per = [sst * dtype.itemsize + 24 + int(cnt.max()) * dtype.itemsize]
    for a, b in chunk_sizes(len(items), per, dev, fixed_bytes=side.nbytes,
                            multiple=fi):
        it = cla.to_device(q, np.ascontiguousarray(items[a:b]))     # [c, 4]: int4 each
        of = cla.to_device(q, (offs[a:b] - offs[a]).astype(np.int64))
        scratch = cla.empty(q, (b - a) * sst, dtype)
        rb = cla.empty(q, max(int(offs[b] - offs[a]), 1), dtype)
        launch(dev, kern, *fixed_local(dev, -(-(b - a) // fi), WALK_LOCAL),
               *side.args(), *side.args(),
               side.offsets.data, it.data, of.data, np.int32(b - a), np.int32(side.m),
               scratch.data, np.int32(sst), rb.data)
        out[offs[a]:offs[b]] = rb.get()[:offs[b] - offs[a]]
    return _distances(out, side.m)


def _pad_groups(items, k):
    """``items`` with each run of consecutive items of one target (column 1) padded to a
    multiple of ``k`` by empty items (count 0: no rows, no output)."""
    tgt = items[:, 1]
    start = np.flatnonzero(np.r_[True, tgt[1:] != tgt[:-1]])
    size = np.diff(np.r_[start, len(items)])
    pad = -size % k
    if not pad.any():
        return items
    dummy = items[np.repeat(start + size - 1, pad)].copy()
    dummy[:, 3] = 0
    at = np.repeat(start + size, pad)
    return np.insert(items, at, dummy, axis=0)


def kth_value(P_ABBA, k):
    """stumpy's selection from each row of ``P_ABBA``: the k-th smallest (0-based), or, where
    that one is not finite, the largest finite value among the k smallest (the first value
    when none is)."""
    P = np.array(P_ABBA, np.float64, ndmin=2)
    k = min(int(k), P.shape[1] - 1)
    part = np.partition(P, k, axis=1)
    out = part[:, k].copy()
    for r in np.nonzero(~np.isfinite(out))[0]:
        head = np.sort(part[r, :k])
        kk = max(0, int(np.count_nonzero(np.isfinite(head))) - 1)
        out[r] = head[kk] if k > 0 else part[r, 0]
    return out


def _k_of(k, percentage, total, cap):
    """stumpy's k: ``k`` capped at ``cap``, else ceil(clip(percentage, 0, 1) * total)."""
    if k is not None:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"k must be None or an int, got {type(k).__name__}")
        if k < 0:
            raise ValueError(f"k must be >= 0, got {k}")
        return min(int(k), cap)
    if isinstance(percentage, bool) or not isinstance(percentage, numbers.Real) \
            or math.isnan(percentage):
        raise ValueError(f"percentage must be a number in [0, 1], got {percentage!r}")
    return min(int(math.ceil(float(np.clip(percentage, 0.0, 1.0)) * total)), cap)


def _check_m(m, n, name):
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)):
        raise TypeError(f"m must be an int, got {type(m).__name__}")
    m = int(m)
    if m < 3:
        raise ValueError(f"m must be >= 3, got {m}")
    if n < m:
        raise ValueError(f"{name} has {n} values per series, fewer than m={m}")
    return m


def _rows(x, name, time_axis):
    """``x`` as a native float64 [series, time] array (time on ``time_axis``, default last) and
    whether it was 1-D."""
    if is_device_array(x):
        raise TypeError(f"{name} must be a numpy array (or array-like), not a device array")
    try:
        a = native(np.asarray(values_of(x)))
    except ValueError:              # numpy: "inhomogeneous shape"
        shapes = sorted({np.shape(v) for v in x}) if isinstance(x, (list, tuple)) else []
        if len(shapes) > 1:
            raise ValueError(f"{name} is a list of series of different shapes ({shapes}): a "
                             "batch holds series of one length; call mpdist once per length "
                             "(or per pair)") from None
        raise
    if a.dtype.kind not in "fiub":
        raise TypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
    if a.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D or 2-D ([series, time]), got shape {a.shape}")
    axis = -1 if time_axis is None else time_axis
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -2 <= axis < 2:
        raise ValueError(f"time_axis must be -2, -1, 0 or 1, got {time_axis!r}")
    if a.ndim == 2 and axis % 2 == 0:
        a = a.T
    return np.ascontiguousarray(a, np.float64).reshape(-1, a.shape[-1]), a.ndim == 1


@renamed()
def mpdist(T_A, T_B, m, *, percentage=0.05, k=None, pairwise=False, normalize=True, p=2.0,
           precision=None, device=None, time_axis=None):
    """MPdist between series: the k-th smallest distance of the AB-join's and the BA-join's
    profiles together (stumpy.mpdist's definition), for one pair or a whole batch at once.

    Parameters
    ----------
    T_A, T_B : array_like, [n] or [series, n]
        The series (their lengths may differ). 1-D and 1-D: one pair. Rows pair up as
        :func:`clts.mass` pairs them: as many rows in both, or one row against every row of
        the other; ``pairwise=True``: every row of ``T_A`` against every row of ``T_B``.
        NaN / inf make every window containing them invalid (inf, never a neighbour).
    m : int
        Window length, 3 <= m <= every series' length.
    percentage : float, optional
        k = ceil(percentage * (n_A + n_B)) (default 0.05), clipped to [0, 1], at most
        l_A + l_B - 1 (stumpy's).
    k : int, optional
        The (0-based) rank to report instead of ``percentage``.
    pairwise : bool, optional
        Every row of ``T_A`` against every row of ``T_B``: a [series_A, series_B] matrix. Given
        the same array twice, only half the pairs run (MPdist is symmetric) and the diagonal
        is 0 (inf for a series without a finite window).
    normalize : bool, optional
        z-normalised distances (default). ``False`` (stumpy's ``aampdist``, Minkowski ``p``)
        runs :func:`clts.aamp` per pair and direction, not batched.
    p : float, optional
        The Minkowski order of ``normalize=False``.
    precision : {"double", "single"}, optional
        Arithmetic of the joins (default double where the device has it).
    device : int, str or Device, optional
    time_axis : int, optional
        The time axis of a 2-D ``T_A`` / ``T_B`` (default -1: [series, time]).

    Returns
    -------
    float or numpy.ndarray
        A float for two 1-D series, [pairs] for a batch, [series_A, series_B] for
        ``pairwise=True``.

    Examples
    --------
    >>> import numpy as np, clts
    >>> round(float(clts.mpdist(np.array([-11.1, 23.4, 79.5, 1001.0]),
    ...                         np.array([584., -11., 23., 79., 1001., 0., -19.]), 3)), 6)
    0.000199
    >>> X = np.cumsum(np.random.default_rng(0).standard_normal((20, 300)), axis=1)
    >>> D = clts.mpdist(X, X, 30, pairwise=True)         # the 20 x 20 distance matrix
    >>> D.shape, bool(np.allclose(D, D.T)), float(D[3, 3])
    ((20, 20), True, 0.0)
    """
    A, a1 = _rows(T_A, "T_A", time_axis)
    same = T_B is T_A
    B, b1 = (A, a1) if same else _rows(T_B, "T_B", time_axis)
    nA, nB = A.shape[1], B.shape[1]
    m = _check_m(m, nA, "T_A")
    _check_m(m, nB, "T_B")
    lA, lB = nA - m + 1, nB - m + 1
    kk = _k_of(k, percentage, nA + nB, lA + lB - 1)
    na, nb = len(A), len(B)
    if pairwise:
        if same:
            pa, pb = np.triu_indices(na)
        else:
            pa, pb = np.repeat(np.arange(na), nb), np.tile(np.arange(nb), na)
    elif na == nb:
        pa = pb = np.arange(na)
    elif na == 1 or nb == 1:
        pa = np.zeros(nb, int) if na == 1 else np.arange(na)
        pb = np.zeros(na, int) if nb == 1 else np.arange(nb)
    else:
        raise ValueError(f"T_A has {na} series and T_B {nb}: give as many of each, one "
                         "against many, or pairwise=True")
    if normalize:
        PA, PB = ab_profiles(A, B, pa, pb, m, device=device, precision=precision)
    else:
        PA, PB = _aamp_profiles(A, B, pa, pb, m, p, device)
    d = kth_value(np.concatenate([PA, PB], axis=1), kk)
    if pairwise:
        out = np.empty((na, nb))
        out[pa, pb] = d
        if same:
            out[pb, pa] = d
            # a series against itself: 0 exactly (every window meets its own copy; the
            # correlation's rounding would leave ~1e-7), inf where no window is finite
            bad = np.lib.stride_tricks.sliding_window_view(~np.isfinite(A), m, axis=1)
            out[np.diag_indices(na)] = np.where(bad.any(axis=2).all(axis=1), np.inf, 0.0)
        return out
    if a1 and b1:
        return float(d[0])
    return d


def _aamp_profiles(A, B, pa, pb, m, p, device):
    """Non-normalised AB / BA profiles, one :func:`clts.aamp` join per pair and direction."""
    from .aamp import aamp
    PA = np.empty((len(pa), A.shape[1] - m + 1))
    PB = np.empty((len(pa), B.shape[1] - m + 1))
    for q, (i, j) in enumerate(zip(pa, pb)):
        PA[q] = np.asarray(aamp(A[i], m, B[j], p=p, device=device, progress=False).P)[:, 0]
        PB[q] = np.asarray(aamp(B[j], m, A[i], p=p, device=device, progress=False).P)[:, 0]
    return PA, PB


def rolling_min(X, w):
    """The minimum of every ``w`` consecutive values along the last axis of ``X`` (NaN
    ignored, inf where all are NaN), O(1) per value (van Herk / Gil-Werman blocks)."""
    X = np.where(np.isnan(X), np.inf, np.asarray(X, np.float64))
    n = X.shape[-1]
    if w == 1:
        return X.copy()
    nb = -(-n // w)
    pad = np.full(X.shape[:-1] + (nb * w,), np.inf)
    pad[..., :n] = X
    blocks = pad.reshape(X.shape[:-1] + (nb, w))
    fwd = np.minimum.accumulate(blocks, axis=-1).reshape(pad.shape)
    bwd = np.minimum.accumulate(blocks[..., ::-1], axis=-1)[..., ::-1].reshape(pad.shape)
    i = np.arange(n - w + 1)
    return np.minimum(bwd[..., i], fwd[..., i + w - 1])


def _scipy_rolling_min(D, w, fallback):
    try:
        from scipy.ndimage import minimum_filter1d
    except ImportError:
        return fallback
    h = int(math.ceil((w - 1) / 2))
    return minimum_filter1d(D, size=w, axis=-1)[:, h:h + D.shape[1] - w + 1]


@renamed()
def mpdist_vect(Q, T, m, *, percentage=0.05, k=None, normalize=True, p=2.0, precision=None,
                device=None):
    """MPdist of ``Q`` against every subsequence ``T[i:i + len(Q)]``: stumpy's
    ``_mpdist_vect`` (the building block of snippets), with the distance matrix of the
    windows of ``Q`` against those of ``T`` from :func:`clts.mass` (one batched call on the
    device) and the per-subsequence selection on the host.

    Parameters
    ----------
    Q : array_like, [n_Q]
        The query, m <= n_Q <= len(T).
    T : array_like, [n]
    m : int
        Window length.
    percentage, k : optional
        As :func:`mpdist`, over the 2 (n_Q - m + 1) values of each subsequence:
        k = min(ceil(percentage * 2 n_Q), 2 (n_Q - m + 1) - 1).

    Returns
    -------
    numpy.ndarray, [n - n_Q + 1]
    """
    from .mass import distance_profiles
    Qa, q1 = _rows(Q, "Q", None)
    Ta, t1 = _rows(T, "T", None)
    if not (q1 and t1):
        raise ValueError("mpdist_vect takes a 1-D Q and a 1-D T")
    Qa, Ta = Qa[0], Ta[0]
    m = _check_m(m, len(Qa), "Q")
    if len(Ta) < len(Qa):
        raise ValueError(f"T has {len(Ta)} values, fewer than Q's {len(Qa)}")
    j = len(Qa) - m + 1
    if k is None:
        kk = _k_of(None, percentage, 2 * len(Qa), 2 * j - 1)
    else:
        kk = _k_of(k, percentage, 0, 2 * j - 1)
    windows = np.lib.stride_tricks.sliding_window_view(Qa, m)
    D = np.asarray(distance_profiles(windows, Ta, normalize=normalize, p=p, precision=precision,
                                     device=device, progress=False), np.float64)
    return vect_from_matrix(D.reshape(j, -1), len(Ta) - len(Qa) + 1, kk)


def vect_from_matrix(D, nv, k, stumpy_nan=False):
    """``mpdist_vect`` from the distance matrix ``D`` [j, l] of a query's j windows against a
    series' l windows: for each of the ``nv`` subsequences, the k-th value of the rolling row
    minima over j columns and the column minima of its j columns. NaN entries are skipped
    (numpy's nanmin: NaN where all are), as stumpy's non-normalised matrices hold them."""
    j = D.shape[0]
    row = rolling_min(D, j)                      # [j, l - j + 1]
    col = np.where(np.isnan(D), np.inf, D).min(axis=0)
    nan = np.isnan(D)
    if nan.any() and stumpy_nan:
        # stumpy's rolling minimum of a non-normalised matrix with NaN: scipy's
        # minimum_filter1d, which does not skip NaN consistently; reproduced where scipy is
        row = _scipy_rolling_min(D, j, row)
        col = np.where(nan.all(axis=0), np.nan, col)
    elif nan.any():
        c = np.concatenate([np.zeros((j, 1)), np.cumsum(~nan, axis=1)], axis=1)
        row = np.where(c[:, j:] - c[:, :-j] == 0, np.nan, row)
        col = np.where(nan.all(axis=0), np.nan, col)
    cols = np.lib.stride_tricks.sliding_window_view(col, j)[:nv]
    return kth_value(np.concatenate([row[:, :nv].T, cols], axis=1), k)
