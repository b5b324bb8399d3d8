"""``clts.stumpi``: a matrix profile that follows a growing (or sliding) series, stumpy.stumpi's
incremental update: each appended point adds one window, whose distance profile against the
series updates every older window's nearest neighbour and gives the new window's own (left)
neighbour. ``update`` takes one point or many. Up to ``mp.stream.host_points`` points (the
Plan, stream_plan.py) go through the host one by one (stream_host.py: O(n) per point, exact
distances), longer blocks to the device in one piece (an AB-join for the far windows; the near
ones on the host meanwhile, stream_near.py); both give the result of one point at a time. See docs/matrix-profile.md, "Streaming"."""
from __future__ import annotations

import math

import numpy as np

from ..runtime import get_device
from .api import matrix_profile
from .mass import _check_p, distance_profiles
from . import stream_near
from .stream_host import EXACT_FRACTION, REFRESH, HostStream, Ring, exact_distances
from .stream_plan import Problem, make_stream_plan
from .stream_device import MAX_K, DeviceStream
from .stream_topk import best_k, insert, kth_smallest
from .topk import _merge_k

#: rows of the distance matrix per launch when the initial profile is built from distance
#: profiles (plain distances with p != 2, which the diagonal kernel does not compute)
INIT_ROWS = 256
#: blocks of at least this many points (and as many windows outside their exclusion zones)
#: take the far windows by an AB-join on the diagonal kernel: O(n b) plus the O(n m) window
#: statistics, against O(n b m) for b distance profiles
JOIN_MIN_BLOCK = 16


def _host(x, name):
    """A device array's values (the one read of a ``stumpi`` / ``update`` argument of a stream
    whose state is on the host: k > 16, docs/device-arrays.md); anything else as it is."""
    from ..runtime.arrays import is_device_array, to_numpy
    if not is_device_array(x):
        return x
    if np.dtype(x.dtype).kind not in "fiu":
        raise TypeError(f"device array {name} must hold real numbers, got dtype {x.dtype}")
    return to_numpy(x)


class StreamingProfile:
    """clts.stumpi(T, m, *, egress=True, normalize=True, p=2.0, k=1, device=None,
    precision=None, plan=None, host_points=None, lazy_points=None)

    Incremental matrix profile of a streaming series (stumpy.stumpi's conventions).

    Parameters
    ----------
    T : array_like, 1-D
        The series so far (n >= m; NaN / inf windows are never neighbours). A
        ``pyopencl.array.Array`` keeps the stream's state on the device (k <= 16; else it is
        read once): the attributes are device arrays and ``update`` takes device arrays
        (stream_device.py, docs/device-arrays.md).
    m : int
        Subsequence length.
    egress : bool, optional
        True (default): the series keeps its length, the oldest point leaves as each one
        arrives; False: the series grows.
    normalize : bool, optional
        z-normalised (default) or plain Minkowski distances of order ``p``.
    p : float, optional
        Order of the plain distance (``normalize=False``), >= 1.
    k : int, optional
        Neighbours kept per window (default 1): ``P_`` / ``I_`` are [l, k] for k > 1, sorted
        by distance, then index (stumpy.stumpi's top-k; the left profile stays top-1).
    device, precision
        As :func:`clts.mass` (``precision``: "double" or "single").
    plan : clts.mp.stream_plan.StreamPlan, optional
        The cost rule as is (default: the device's profile, section ``mp.stream``).
    host_points : int, optional
        Updates of at most this many points go through the host path point by point (O(n)
        each; float64, z-normalised or ``p=2``), longer ones to the device in one block; 0:
        always the device. Without the host state (at first, and after a device block) an
        update of 16 points or more goes to the device too.
    lazy_points : int, optional
        Appended points wait (O(1) per ``update``) until the profile is read or this many
        are pending, then go through the paths above as one update: a stream read now and
        then costs the device's per-point price of a block; 1: every ``update`` at once.

    Attributes
    ----------
    P_, I_ : numpy.ndarray (device arrays for a device series)
        Nearest-neighbour distance and index of every window, [l] (k = 1) or [l, k]
        (indices count every point appended since the start, as stumpy's; an egressed
        neighbour is kept, as stumpy).
    left_P_, left_I_ : numpy.ndarray
        The nearest neighbour before each window.
    T_ : numpy.ndarray
        The current series (NaN / inf kept as given; stumpy shows them as 0).

    Methods
    -------
    update(t)
        Append one point, or a 1-D array of points (applied when the profile is read).

    Examples
    --------
    >>> import numpy as np, clts
    >>> rng = np.random.default_rng(0)
    >>> s = clts.stumpi(np.cumsum(rng.standard_normal(300)), 20, egress=False)
    >>> for x in rng.standard_normal(5):
    ...     s.update(x)
    >>> s.update(rng.standard_normal(10))          # ten points at once
    >>> r = clts.matrix_profile(s.T_, 20)
    >>> bool(np.allclose(s.P_, r.P[:, 0])), len(s.P_)
    (True, 296)
    """

    def __init__(self, T, m, *, egress=True, normalize=True, p=2.0, k=1, device=None,
                 precision=None, plan=None, host_points=None, lazy_points=None):
        from ..runtime.arrays import is_device_array
        self._dstate = None
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 3:
            raise ValueError(f"m must be an int >= 3, got {m!r}")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k must be an int >= 1, got {k!r}")
        if is_device_array(T) and k <= MAX_K:
            # the state on the device (stream_device.py)
            if T.size < m:
                raise ValueError(f"T has {T.size} values, fewer than m={m}")
            pl = make_stream_plan(get_device(device), Problem(), plan=plan,   # checks them
                                  host_points=host_points, lazy_points=lazy_points)
            self._dstate = DeviceStream(get_device(device), T, m, k, egress, normalize,
                                        _check_p(p)[0], precision, pl.lazy_points,
                                        pl.subgroup)
            self._k = int(k)
            return
        T = np.array(np.asarray(_host(T, "T")), dtype=np.float64).ravel()
        if len(T) < m:
            raise ValueError(f"T has {len(T)} values, fewer than m={m}")
        self._k = int(k)
        self._p, _ = _check_p(p)
        self._m, self._ez = int(m), int(math.ceil(m / 4))
        self._egress, self._normalize = bool(egress), bool(normalize)
        self._kw = dict(normalize=self._normalize, p=self._p, device=device,
                        precision=precision, progress=False)
        self._T = T
        self._a = 0                      # points egressed so far (index offset)
        dev = get_device(device)
        self._plan = make_stream_plan(dev, Problem(), plan=plan, host_points=host_points,
                                      lazy_points=lazy_points)
        # the host path: O(n) per point, float64, z-normalised or plain Euclidean
        self._host_ok = ((precision == "double" or (precision is None and dev.fp64))
                         and (self._normalize or self._p == 2.0))
        self._host = None
        self._pending, self._npending = [], 0      # points appended, not yet applied
        self._run = []                             # ... the last ones given as numbers
        if self._normalize or self._p == 2.0:
            r = matrix_profile(T, self._m, k=self._k, normalize=self._normalize,
                               device=device, precision=precision, progress=False)
            self._P = np.array(r.P, np.float64, order="C")
            self._I = np.array(r.I, np.int64, order="C")
            self._lP, self._lI = r.left_P.copy(), r.left_I.copy()
        else:
            self._init_blocked()

    def _init_blocked(self):
        l = len(self._T) - self._m + 1
        W = np.lib.stride_tricks.sliding_window_view(self._T, self._m)
        self._P, self._I = np.full((l, self._k), np.inf), np.full((l, self._k), -1, np.int64)
        self._lP, self._lI = np.full(l, np.inf), np.full(l, -1, np.int64)
        cols = np.arange(l)
        for a in range(0, l, INIT_ROWS):
            rows = np.arange(a, min(a + INIT_ROWS, l))
            D = np.asarray(distance_profiles(W[rows], self._T, **self._kw), np.float64)
            D[np.abs(cols[None, :] - rows[:, None]) <= self._ez] = np.inf
            self._P[rows], self._I[rows] = best_k(D.T, self._k)
            lP, lI = best_k(np.where(cols[None, :] < rows[:, None], D, np.inf).T, 1)
            self._lP[rows], self._lI[rows] = lP[:, 0], lI[:, 0]

    def update(self, t):
        """Append ``t`` (a number or a 1-D array of numbers). The profile is brought up to
        date when it is read (``P_``, ``I_``, ``left_P_``, ``left_I_``, ``T_``) or when
        ``lazy_points`` points are pending, whichever comes first; the result is the same.
        A stream started from a device array takes a device array of the series' dtype
        (numbers are uploaded), copied on the device to the pending points (the same rule)."""
        if self._dstate is not None:
            from ..runtime.arrays import is_device_array
            if not is_device_array(t):
                import pyopencl.array as cla
                x = np.atleast_1d(np.asarray(t, dtype=self._dstate.dtype))
                if x.ndim != 1:
                    raise ValueError(f"t must be a number or a 1-D array, got shape {x.shape}")
                t = cla.to_device(self._dstate.dev.queue, np.ascontiguousarray(x))
            self._dstate.update(t)
            return
        if isinstance(t, (float, int, np.floating, np.integer)):   # one number: queued as is
            self._run.append(float(t))
            self._npending += 1
        else:
            t = np.atleast_1d(np.array(_host(t, "t"), dtype=np.float64))
            if t.ndim != 1:
                raise ValueError(f"t must be a number or a 1-D array, got shape {t.shape}")
            if len(t) == 0:
                return
            if self._run:
                self._pending.append(np.array(self._run))
                self._run = []
            self._pending.append(t)
            self._npending += len(t)
        if self._npending >= self._plan.lazy_points:
            self._flush()

    def _flush(self):
        """The pending points through the path the Plan's cost rule picks."""
        if not self._npending:
            return
        if self._run:
            self._pending.append(np.array(self._run))
            self._run = []
        t = self._pending[0] if len(self._pending) == 1 else np.concatenate(self._pending)
        self._pending, self._npending = [], 0
        b = len(t)
        # without the host state (the first short update, or one after a device block) the
        # host path first pays its O(n m) build, ~5 device blocks: blocks that join (and
        # whose magnitudes the join covers) go to the device
        if b <= self._plan.host_points and self._host_ok and (
                self._host is not None or b < JOIN_MIN_BLOCK
                or not (stream_near.usable(self._T, self._normalize)
                        and stream_near.usable(t, self._normalize))):
            if self._host is None:
                self._host = HostStream(self._T, self._m, self._normalize)
            for i, x in enumerate(t.tolist()):
                if not self._host.usable(x):       # one distance profile per point
                    self._host = None
                    for y in t[i:]:
                        self._device_update(np.array([y]))
                    return
                self._host_update(x)
            return
        # a device block drops the host state: advancing it costs O(n) per point, as much
        # as the host path; it is built again (O(n m)) when a short update comes
        self._host = None
        self._device_update(t)

    def _host_update(self, x):
        """One point on the host (stream_host.py): the filter, then exact distances for the
        windows it leaves undecided; the device row when there are too many."""
        m, ez, hs, drop = self._m, self._ez, self._host, int(self._egress)
        T = self._T
        q = np.append(T[len(T) - m + 1:], x)
        zq, qbad, qconst = hs.append(q, x, self._egress)
        l = len(T) - m + 2 - drop                   # windows after the update
        new = l - 1
        lim = max(0, new - ez)          # windows outside the new one's exclusion zone
        P, k = self._P[drop:], self._k
        if qbad:
            idx = np.zeros(0, np.int64)
        else:
            lo, hi, c0 = hs.bounds(lim)
            # candidates: windows that may beat their k-th neighbour, or be among the new
            # window's k nearest (the k-th smallest upper bound)
            thr = kth_smallest(hi, k) + 2.0 * c0
            Pk = P[:lim, -1]
            bound = np.multiply(Pk, Pk)
            np.maximum(bound, thr, out=bound)
            np.multiply(bound, 1.0 + 1e-12, out=bound)
            np.add(bound, c0, out=bound)
            idx = np.nonzero(np.less(lo, bound, out=lo))[0]
            if len(idx) * EXACT_FRACTION > l:
                self._device_update(np.array([x]))
                self._after_host()
                return
        self._rT.push(x, drop)
        a = self._a + drop
        nP, nI = np.full(k, np.inf), np.full(k, -1, np.int64)
        if len(idx):
            Tn = self._T
            W = Tn[idx[:, None] + np.arange(m)]
            d = exact_distances(W, zq, qbad, qconst, self._normalize, q)
            insert(P, self._I[drop:], idx, d, new + a)
            v, j = best_k(d[:, None], k)
            nP, nI = v[0], np.where(j[0] >= 0, idx[np.maximum(j[0], 0)] + a, -1)
        for r, v in ((self._rP, nP), (self._rI, nI), (self._rlP, nP[0]), (self._rlI, nI[0])):
            r.push(v, drop)
        self._a = a
        self._after_host()

    def _after_host(self):
        hs = self._host
        if hs.steps >= REFRESH:
            hs.refresh(self._T)

    def _device_update(self, t):
        b = len(t)
        m, ez = self._m, self._ez
        ext = np.concatenate([self._T, t])
        l0 = len(self._T) - m + 1
        l1 = len(ext) - m + 1
        new = np.arange(l0, l1)
        W = np.lib.stride_tricks.sliding_window_view(ext, m)[new]
        lo_far = b if self._egress else 0           # egress: the first b windows leave
        far_end = l0 - ez                           # windows outside every new one's zone
        joinable = (b >= JOIN_MIN_BLOCK and far_end - lo_far >= JOIN_MIN_BLOCK
                    and (self._normalize or self._p == 2.0))
        cols = np.concatenate([np.arange(lo_far), np.arange(far_end, l1)]) if joinable \
            else np.arange(l1)
        mask = np.abs(cols[None, :] - new[:, None]) <= ez
        if self._egress:                 # row r arrives after r + 1 windows have left
            mask |= cols[None, :] <= np.arange(b)[:, None]
        near = None
        if joinable and self._host_ok and stream_near.usable(ext, self._normalize):
            # the near columns (near the new windows, and with egress the first b) on the
            # host: one matrix product as a filter, exact distances for the entries in play;
            # in a thread while the AB-join below runs (numpy and the device wait release
            # the GIL)
            near = stream_near.Worker(stream_near.near_block, ext, m, cols, b, mask,
                                      self._P[cols[:-b], -1], self._normalize, self._k)
        if joinable:
            # the far windows by an AB-join (the diagonal kernel, O(n b) + O(n m) for the
            # statistics): new windows against windows lo_far .. far_end - 1, both ways
            try:
                r = matrix_profile(ext[l0:], m, ext[lo_far:far_end + m - 1], both=True,
                                   k=self._k, normalize=self._normalize,
                                   device=self._kw["device"],
                                   precision=self._kw["precision"], progress=False)
            finally:
                if near is not None:        # never leave it running
                    near.join()
            farP, farI = np.asarray(r.P, np.float64), np.where(r.I >= 0, r.I + lo_far, -1)
            colP, colI = np.asarray(r.P_B, np.float64), np.asarray(r.I_B)
        if near is not None:
            D = near.result()
        elif joinable:
            D = np.full((b, len(cols)), np.inf)
            D[:, lo_far:] = np.array(distance_profiles(W, ext[far_end:], **self._kw),
                                     np.float64, ndmin=2)
            if lo_far:
                D[:, :lo_far] = np.array(distance_profiles(W, ext[:lo_far + m - 1],
                                                           **self._kw), np.float64, ndmin=2)
        else:
            D = np.array(distance_profiles(W, ext, **self._kw), np.float64, ndmin=2)
        D[mask] = np.inf
        a, k = self._a, self._k
        P, I = self._P.copy(), self._I.copy()
        # older windows: the k best of their lists and the new windows (the new ones come
        # later than every listed index: stumpy's sequential insertion gives the same lists)
        old = cols < l0
        oc = cols[old]
        bp, br = best_k(D[:, old], k)
        P[oc], I[oc] = _merge_k(P[oc], I[oc], bp, np.where(br >= 0, new[br] + a, -1), k)
        nP, nI = best_k(D.T, k)
        nI = np.where(nI >= 0, cols[np.maximum(nI, 0)], -1)
        left = cols[None, :] < new[:, None]
        lP, lI = best_k(np.where(left, D, np.inf).T, 1)
        lI = np.where(lI >= 0, cols[np.maximum(lI, 0)], -1)
        if joinable:
            fc = np.arange(lo_far, far_end)
            P[fc], I[fc] = _merge_k(P[fc], I[fc], colP,
                                    np.where(colI >= 0, new[np.maximum(colI, 0)] + a, -1), k)
            # far windows are left of every new one: they join both candidate sets
            nP, nI = _merge_k(nP, nI, farP, farI, k)
            lP, lI = _merge_k(lP, lI, farP[:, :1], farI[:, :1], 1)
        lP, lI = lP[:, 0], lI[:, 0]
        P = np.concatenate([P, nP])
        I = np.concatenate([I, np.where(nI >= 0, nI + a, -1)])
        lP = np.concatenate([self._lP, lP])
        lI = np.concatenate([self._lI, np.where(lI >= 0, lI + a, -1)])
        if self._egress:
            ext, P, I, lP, lI = ext[b:], P[b:], I[b:], lP[b:], lI[b:]
            self._a += b
        self._T, self._P, self._I, self._lP, self._lI = ext, P, I, lP, lI

    def _ring(name):
        def get(self):
            return getattr(self, name).view()

        def put(self, v):
            setattr(self, name, Ring(v))
        return property(get, put)

    _T, _P, _I = _ring("_rT"), _ring("_rP"), _ring("_rI")
    _lP, _lI = _ring("_rlP"), _ring("_rlI")
    del _ring

    @property
    def P_(self):
        if self._dstate is not None:
            self._dstate.flush()
            return self._dstate.P.reshape(-1) if self._k == 1 else self._dstate.P
        self._flush()
        return self._P[:, 0].copy() if self._k == 1 else self._P.copy()

    @property
    def I_(self):
        if self._dstate is not None:
            self._dstate.flush()
            return self._dstate.I.reshape(-1) if self._k == 1 else self._dstate.I
        self._flush()
        return self._I[:, 0].copy() if self._k == 1 else self._I.copy()

    @property
    def left_P_(self):
        if self._dstate is not None:
            self._dstate.flush()
            return self._dstate.lP
        self._flush()
        return self._lP.copy()

    @property
    def left_I_(self):
        if self._dstate is not None:
            self._dstate.flush()
            return self._dstate.lI
        self._flush()
        return self._lI.copy()

    @property
    def T_(self):
        if self._dstate is not None:
            self._dstate.flush()
            return self._dstate.T
        self._flush()
        return self._T.copy()

    def __repr__(self):
        if self._dstate is not None:
            d = self._dstate
            d.flush()
            return (f"<clts.stumpi m={d.m} n={d.T.shape[0]} egress={d.egress} "
                    f"appended={d.a if d.egress else 'n/a'} (device)>")
        self._flush()
        return (f"<clts.stumpi m={self._m} n={len(self._T)} egress={self._egress} "
                f"appended={self._a if self._egress else 'n/a'}>")


stumpi = StreamingProfile
