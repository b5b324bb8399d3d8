"""``clts.ostinato``: the consensus motif of a set of series (Kamgar et al., "Matrix Profile XV:
Exploiting Time Series Consensus Motifs to Find Structure in Time Series Sets", ICDM 2019),
with stumpy.ostinato's definition, tie rules and "most central" choice.

The radius of a window of series j is the largest, over the other series, of its distance to
its nearest window there; the consensus motif is the window of smallest radius. As stumpy's
Ostinato, the search takes candidates by a lower bound and stops when the next bound is not
below the best radius so far; here every step is batched:

1. lower bounds: the AB-joins of each series j with its neighbours j + 1 and j - 1 (cyclic),
   all in one launch of the MPdist kernel (``mpdist.ab_profiles``: pair (j, j + 1) gives the
   profile of j against j + 1 as its rows and of j + 1 against j as its columns); a window's
   bound is the larger of its two profile values (stumpy uses the first);
2. candidates in increasing bound, a batch at a time: their nearest distances in a group of
   series (equal lengths: runs of nearby candidate windows on the join kernel,
   ``mpdist.run_profiles``; else :func:`clts.mass`), the running radius, and the candidates whose
   partial radius already reaches the best radius dropped before the next chunk (stumpy's
   early abandoning, per batch);
3. stumpy's "most central" step: among the best window's nearest neighbours in the other
   series whose distance equals the radius (np.isclose), the one whose own radius is the
   radius and whose mean distance to all series is smallest.

Device: the joins (1) and the distance profiles (2, 3); host: the ordering, the minima and
maxima of the profiles, the bookkeeping.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..runtime.arrays import is_device_array, native, values_of
from .mass import distance_profiles
from .mpdist import SeriesSet, _check_m, ab_profiles, run_profiles
from ..vocabulary import renamed

#: ``clts.ostinato``'s result: unpacks as stumpy's ``(central_radius, central_Ts_idx,
#: central_subseq_idx)``
Consensus = namedtuple("Consensus", "radius series index")

#: candidates of the first batch (against every series: a first best radius) and of the next
#: ones (one series at a time, abandoning)
FIRST_BATCH = 16
MAX_BATCH = 2048
#: distance profiles (candidate x series) per clts.mass call / run items per join launch
PROFILES_PER_CALL = 4096
#: longest run of consecutive candidate windows one work-item takes
RUN_MAX = 64
#: candidate windows of one series share a run where at most m // RUN_GAP_PER_M (at least 1)
#: apart: a run's first row costs O(m) per column, about m / 6 of its next rows on pocl
#: (measured at m = 50: gaps up to 8 rows 4 % less CPU time than gaps up to m)
RUN_GAP_PER_M = 6


def _series_list(Ts, time_axis):
    if isinstance(Ts, (list, tuple)):
        out = []
        for i, t in enumerate(Ts):
            if is_device_array(t):
                raise TypeError("Ts must hold numpy arrays (or array-likes), not device arrays")
            a = native(np.asarray(values_of(t)))
            if a.dtype.kind not in "fiub":
                raise TypeError(f"Ts[{i}] must hold real numbers, got dtype {a.dtype}")
            if a.ndim != 1:
                raise ValueError(f"Ts[{i}] must be 1-D, got shape {a.shape}")
            out.append(np.ascontiguousarray(a, np.float64))
        return out
    if is_device_array(Ts):
        raise TypeError("Ts must be a list of series or a 2-D numpy array, not a device array")
    a = native(np.asarray(values_of(Ts)))
    if a.dtype.kind not in "fiub" or a.ndim != 2:
        raise ValueError(f"Ts must be a list of 1-D series or a 2-D array [series, time] of "
                         f"real numbers, got shape {a.shape} and dtype {a.dtype}")
    axis = -1 if time_axis is None else time_axis
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -2 <= axis < 2:
        raise ValueError(f"time_axis must be -2, -1, 0 or 1, got {time_axis!r}")
    if axis % 2 == 0:
        a = a.T
    return list(np.ascontiguousarray(a, np.float64))


def _lower_bounds(Ts, m, device, precision, side):
    """Per series, the larger of its AB-join profiles against its cyclic neighbours."""
    k = len(Ts)
    j = np.arange(k)
    h = (j + 1) % k
    if side is not None:
        rows, cols = ab_profiles(None, None, j, h, m, sides=(side, side))
    else:
        rows, cols = [], []
        for a, b in zip(j, h):
            r, c = ab_profiles(Ts[a][None], Ts[b][None], [0], [0], m, device=device,
                               precision=precision)
            rows.append(r[0])
            cols.append(c[0])
    # rows[j]: j against j + 1; cols[j]: j + 1 against j, so cols[j - 1] is j against j - 1
    return ([np.maximum(rows[i], cols[(i - 1) % k]) if k > 2 else np.asarray(rows[i])
             for i in range(k)], [np.asarray(r) for r in rows])


def _nearest(Q, Ts, idx, device, precision, normalize, p):
    """Nearest-neighbour distances (and positions) of the windows ``Q`` [c, m] in the series
    ``idx``: ([c, len(idx)], [c, len(idx)])."""
    c = len(Q)
    D = np.empty((c, len(idx)))
    I = np.empty((c, len(idx)), np.int64)
    if len({len(Ts[i]) for i in idx}) == 1:
        n = len(Ts[idx[0]])
        step = max(1, PROFILES_PER_CALL // max(c, 1))
        for a in range(0, len(idx), step):
            part = idx[a:a + step]
            T = np.stack([Ts[i] for i in part])
            Qr = np.repeat(Q, len(part), axis=0)
            Tr = np.broadcast_to(T[None], (c, len(part), n)).reshape(-1, n)
            prof = np.asarray(distance_profiles(Qr, Tr, normalize=normalize, p=p,
                                                precision=precision, device=device,
                                                progress=False), np.float64)
            prof = prof.reshape(c, len(part), -1)
            I[:, a:a + len(part)] = np.argmin(prof, axis=2)
            D[:, a:a + len(part)] = np.take_along_axis(prof, I[:, a:a + len(part), None],
                                                       axis=2)[..., 0]
    else:
        for s, i in enumerate(idx):
            prof = np.asarray(distance_profiles(Q, Ts[i][None], normalize=normalize, p=p,
                                                precision=precision, device=device,
                                                progress=False), np.float64).reshape(c, -1)
            I[:, s] = np.argmin(prof, axis=1)
            D[:, s] = prof[np.arange(c), I[:, s]]
    return D, I


@renamed()
def ostinato(Ts, m, *, normalize=True, p=2.0, precision=None, device=None, time_axis=None):
    """The consensus motif of a set of series: the window whose farthest nearest neighbour
    among the other series is nearest (stumpy.ostinato), the most central one on ties.

    Parameters
    ----------
    Ts : list of array_like [n_i], or array_like [series, n]
        At least two series (lengths may differ in a list). NaN / inf make the windows that
        contain them invalid (never a motif, never a neighbour).
    m : int
        Window length, 3 <= m <= every series' length.
    normalize : bool, optional
        z-normalised distances (default); ``False``: plain Minkowski distances of order ``p``
        (stumpy's ``aamp_ostinato``; its lower bounds come from :func:`clts.aamp`, one join per
        series, not batched).
    p : float, optional
        The Minkowski order of ``normalize=False``.
    precision : {"double", "single"}, optional
    device : int, str or Device, optional
    time_axis : int, optional
        The time axis of a 2-D ``Ts`` (default -1: [series, time]).

    Returns
    -------
    Consensus
        ``(radius, series, index)``: the radius and where the motif is, ``Ts[series][index:
        index + m]``; unpacks as stumpy's ``(central_radius, central_Ts_idx,
        central_subseq_idx)``.

    Examples
    --------
    >>> import numpy as np, clts
    >>> rng = np.random.default_rng(0)
    >>> Ts = [np.cumsum(rng.standard_normal(300)) for _ in range(5)]
    >>> pattern = np.sin(np.linspace(0, 6, 40)) * 10
    >>> for i, t in enumerate(Ts):
    ...     t[50 + 30 * i:90 + 30 * i] += pattern      # a shared shape, one place per series
    >>> radius, series, index = clts.ostinato(Ts, 40)
    >>> int(index) - 30 * int(series)
    50
    """
    Ts = _series_list(Ts, time_axis)
    if len(Ts) < 2:
        raise ValueError(f"Ts must hold at least 2 series, got {len(Ts)}")
    for i, t in enumerate(Ts):
        m = _check_m(m, len(t), f"Ts[{i}]")
    k = len(Ts)
    side = None
    if normalize and len({len(t) for t in Ts}) == 1:       # the join kernels throughout
        side = SeriesSet(np.stack(Ts), m, device, precision)
    if normalize:
        LB, first = _lower_bounds(Ts, m, device, precision, side)
    else:
        from .aamp import aamp
        LB = first = [np.asarray(aamp(Ts[j], m, Ts[(j + 1) % k], p=p, device=device,
                                      progress=False).P)[:, 0] for j in range(k)]
    # candidates by bound; equal bounds: series, then position
    series = np.concatenate([np.full(len(b), j) for j, b in enumerate(LB)])
    pos = np.concatenate([np.arange(len(b)) for b in LB])
    bound = np.concatenate(LB)
    # stumpy's order among equal radii: series, then its join profile against the next one
    rank = np.concatenate(first)
    order = np.lexsort((pos, series, bound))
    order = order[np.isfinite(bound[order])]
    everyone = list(range(k))
    best, key = (np.inf, 0, 0), None

    def offer(radius, take):
        nonlocal best, key
        for r, t in zip(radius, take):
            kc = (r, series[t], rank[t], pos[t])
            if key is None or kc < key:
                key, best = kc, (float(r), int(series[t]), int(pos[t]))

    def nearest(take, targets):
        """[len(take), len(targets)]: each candidate's nearest distance in each target."""
        if side is not None:
            return _run_distances(side, series[take], pos[take], targets)
        Q = np.stack([Ts[series[c]][pos[c]:pos[c] + m] for c in take])
        return _nearest(Q, Ts, targets, device, precision, normalize, p)[0]

    # the best bounds first, against every series at once: a first best radius
    take = order[:FIRST_BATCH]
    if len(take):
        D = nearest(take, everyone)
        offer(np.maximum(bound[take], D.max(axis=1)), take)
    # the rest, a batch at a time, one series per step: a candidate leaves once its distance
    # to some series exceeds the best radius (the series that removed the most go first).
    # "<=": candidates as good as the best so far still run (an exact tie goes to stumpy's
    # first in its order, which need not come first here)
    kills = np.zeros(k)
    start = FIRST_BATCH
    size = 4 * FIRST_BATCH
    while start < len(order) and bound[order[start]] <= best[0]:
        take = order[start:start + size]
        start += size
        size = min(2 * size, MAX_BATCH)         # small batches first: the best radius falls
        take = take[bound[take] <= best[0]]
        radius = bound[take].copy()
        cand = np.arange(len(take))
        targets = [int(i) for i in np.argsort(-kills, kind="stable")]
        done = 0
        while done < k and len(cand):
            step = max(1, min(k - done, PROFILES_PER_CALL // len(cand)))
            group = targets[done:done + step]
            done += step
            D = nearest(take[cand], group)
            radius[cand] = np.maximum(radius[cand], D.max(axis=1))
            keep = radius[cand] <= best[0]
            for g, i in enumerate(group):       # which series removed them
                kills[i] += np.count_nonzero(~keep & (D[:, g] > best[0]))
            cand = cand[keep]
        offer(radius[cand], take[cand])
    return Consensus(*_central(Ts, m, best, device, precision, normalize, p))


def _run_distances(side, ser, pos, targets):
    """Nearest distances [c, len(targets)] of the windows (ser, pos) in the target series, by
    runs of windows on the join kernel: windows of one series close enough share a run
    (RUN_GAP_PER_M: the rows between cost O(1) per column, a new run's first row O(m)), at
    most RUN_MAX rows a run."""
    c = len(ser)
    order = np.lexsort((pos, ser))
    s, q = ser[order], pos[order]
    new = np.ones(c, bool)
    new[1:] = (s[1:] != s[:-1]) | (q[1:] - q[:-1] > max(1, side.m // RUN_GAP_PER_M))
    start = np.flatnonzero(new)
    run = np.cumsum(new) - 1
    piece = (q - q[start][run]) // RUN_MAX        # long runs split for parallelism
    new[1:] |= piece[1:] != piece[:-1]
    start = np.flatnonzero(new)
    item = np.cumsum(new) - 1
    last = np.append(start[1:], c) - 1
    r0, cnt = q[start], q[last] - q[start] + 1
    offs = np.concatenate([[0], np.cumsum(cnt)])
    at = offs[item] + (q - r0[item])              # each window's row in the output
    runs = np.column_stack([s[start], r0, cnt])
    items = np.concatenate([np.column_stack([runs[:, 0], np.full(len(runs), t), runs[:, 1],
                                             runs[:, 2]]) for t in targets])
    d = run_profiles(side, items).reshape(len(targets), -1)[:, at]
    out = np.empty((c, len(targets)))
    out[order] = d.T
    return out


def _central(Ts, m, best, device, precision, normalize, p):
    """stumpy's most central consensus motif among the best window's nearest neighbours whose
    distance equals the radius."""
    radius, j, q = best
    k = len(Ts)
    everyone = list(range(k))
    D, I = _nearest(Ts[j][None, q:q + m], Ts, everyone, device, precision, normalize, p)
    nn_r, nn_i = D[0], I[0]
    if np.isfinite(radius):     # the radius from exact distances (its own series' is 0)
        radius = float(nn_r.max())
    best_mean = nn_r.mean()
    close = np.flatnonzero(np.isclose(nn_r, radius))
    if len(close):
        Q = np.stack([Ts[s][nn_i[s]:nn_i[s] + m] for s in close])
        Dc, _ = _nearest(Q, Ts, everyone, device, precision, normalize, p)
        for r, s in enumerate(close):
            if np.isclose(Dc[r].max(), radius) and Dc[r].mean() < best_mean:
                j, q, best_mean = int(s), int(nn_i[s]), Dc[r].mean()
    return radius, j, q
