"""``clts.stumpi`` with its state on the device (stream.py): given a device series, the
profile, left profile and series stay device arrays, and an ``update`` with a device array of
points runs on the device (``templates/mp/stream.cl.mako``), folded into the k-lists by
``stream_update``. Points wait (a device copy) until the profile is read or ``lazy_points``
are pending, then go as one block.

z-normalised: stumpy.stumpi's sliding dot products, kept on the device (the last window's
with every window) and carried along each diagonal of the block, O(n) per point plus
O(n m) at a refresh (every REFRESH points), give every pair's squared distance within an
error bound (stream_host.py's); mass' distance, from per-window statistics kept with the
state, is computed only for the pairs whose bound reaches a decision, the others count as
inf. Plain distances: the new windows' distance profiles by ``mass``' kernels, O(n m) per
point. Either way the k-lists are those of mass' distances: the numpy path's device blocks
(``host_points=0``, blocks too short to join) give the same bits. Nothing is read back or
waited for."""
from __future__ import annotations

import math

import numpy as np

from ..runtime import launch, round_up
from ..runtime.launch import fixed_local, pyopencl_kernels
from ..runtime.memory import copy, empty_device
from .local_size import ITEM_LOCAL

#: the largest k kept on the device (each work-item's k-list is private memory)
MAX_K = 16
#: bytes of the distance profiles of one block of appended points (longer updates are cut)
BLOCK_BYTES = 64 << 20
#: the sliding dot products are recomputed directly after this many points
REFRESH = 64
#: per-window statistics kept (stream.cl.mako's NS)
NS = 6
#: diagonals per work-item of stream_qt (stream.cl.mako's DW)
DIAGONALS = 8


class DeviceStream:
    """The device state of a stream: series ``T``, k-lists ``P``, ``I`` [l, k], left profile
    ``lP``, ``lI`` [l] (device arrays, replaced by each update, never written in place)."""

    def __init__(self, dev, T, m, k, egress, normalize, p, precision, lazy_points=1):
        import pyopencl.array as cla
        from ..runtime.arrays import device_input
        from .aamp import aamp
        from .api import matrix_profile
        self.dev, self.m, self.k = dev, int(m), int(k)
        self.egress, self.normalize, self.p = bool(egress), bool(normalize), float(p)
        self.ez = int(math.ceil(m / 4))
        T = device_input(T, "T", dev, ndim=1)
        own = "double" if np.dtype(T.dtype) == np.float64 else "single"
        if precision is not None and precision != own:
            raise TypeError(f"precision={precision!r} with {T.dtype} device arrays: the stream "
                            f"computes in the arrays' precision ({own!r}); convert with "
                            ".astype on the device")
        self.dtype = np.dtype(T.dtype)
        self.odt = np.dtype(np.float64 if dev.fp64 else np.float32)
        if T.offset:
            T = T.copy()
        if normalize or self.p == 2.0:
            r = matrix_profile(T, self.m, k=self.k, normalize=normalize, device=dev,
                               precision=own, progress=False)
        else:
            r = aamp(T, self.m, p=self.p, k=self.k, device=dev)
        l = T.shape[0] - self.m + 1
        with pyopencl_kernels():           # pyopencl's shared astype kernels
            self.P = r.P.reshape(l, self.k).astype(self.odt)
            self.I = r.I.reshape(l, self.k).astype(np.int64)
            self.lP = r.left_P.astype(self.odt)
            self.lI = r.left_I.astype(np.int64)
        self.T = T
        self.a = 0                      # points egressed so far (index offset)
        self._so = 0                    # the first current window's row of S
        self.prg = dev.program("mp/stream.cl.mako",
                               real="double" if self.dtype == np.float64 else "float",
                               oreal="double" if self.odt == np.float64 else "float", K=self.k,
                               QT=int(self.normalize))
        self._cla = cla
        self.lazy = max(1, int(lazy_points))
        self._pend, self._npend = None, 0      # points waiting (a device buffer, its count)
        if self.normalize:
            # per-window statistics, the centring offset and amax, no dot products yet
            self.S = cla.empty(dev.queue, l * NS, self.odt)
            launch(dev, self.prg.kernel("stream_stats"),
                   *fixed_local(dev, round_up(l, 64), ITEM_LOCAL),
                   T.data, np.int32(0), self.S.data, self.S.data, np.int32(l), np.int32(0),
                   np.int32(0), np.int32(self.m), self.S.data, np.int32(0), self.S.data,
                   self.S.data)
            with pyopencl_kernels():       # pyopencl's shared fill kernel
                self.C = cla.zeros(dev.queue, 2, self.odt)
            self.QT, self.steps = None, 0

    def update(self, t):
        """Append the device array ``t`` (1-D, the series' dtype): copied to the pending
        points, applied when ``lazy_points`` are pending or at :meth:`flush`."""
        from ..runtime.arrays import device_input
        t = device_input(t, "t", self.dev, dtypes=(self.dtype,), ndim=1)
        b = int(t.size)
        if b == 0:
            return
        if self._npend + b > self.lazy:
            self.flush()
            if b >= self.lazy:
                self._apply(t)
                return
        item = self.dtype.itemsize
        need = self._npend + b
        if self._pend is None or need > self._pend.size:      # grown as needed, to lazy
            pend = self._empty(min(self.lazy, max(2 * need, 256)), self.dtype)
            if self._npend:
                copy(self.dev, pend.data, self._pend.data, self._npend * item)
            self._pend = pend
        copy(self.dev, self._pend.data, t.base_data, b * item, dst_offset=self._npend * item,
             src_offset=t.offset)
        self._npend += b
        if self._npend >= self.lazy:
            self.flush()

    def flush(self):
        """Apply the pending points (one block; the buffer is reused: the queue runs the
        block's copy of them before any later copy into it)."""
        if self._npend:
            b, self._npend = self._npend, 0
            self._apply(self._pend, b)

    def _empty(self, shape, dtype):
        # a fresh device array (the state's arrays are replaced, never written in place),
        # through the fast constructor (pyopencl's ``empty`` derives the geometry through
        # numpy: ~20 µs an array, sixteen arrays an update)
        return empty_device(self.dev.queue, self.dev.context, shape, dtype)

    def _apply(self, t, size=None):
        """Append the first ``size`` (default all) points of ``t`` in blocks whose distance
        profiles (and the filter's bounds) fit BLOCK_BYTES and the device's largest
        allocation: the stream's result is that of one point at a time, however the points
        are grouped."""
        size = int(t.size) if size is None else int(size)
        n, item = int(self.T.shape[0]), self.dtype.itemsize
        per_row = (n + size) * max(item, self.odt.itemsize)
        rows = max(1, min(BLOCK_BYTES, self.dev.max_alloc) // per_row)
        for c in range(0, size, rows):
            self._block(t.base_data, t.offset + c * item, min(rows, size - c))

    def _block(self, src, src_offset, b):
        """Append the ``b`` points at byte ``src_offset`` of the buffer ``src``."""
        from .mass import _device_profiles
        dev = self.dev
        n, m, item = int(self.T.shape[0]), self.m, self.dtype.itemsize
        ext = self._empty(n + b, self.dtype)
        copy(self.dev, ext.data, self.T.data, n * item)
        copy(self.dev, ext.data, src, b * item, dst_offset=n * item, src_offset=src_offset)
        l0, l1 = n - m + 1, n + b - m + 1
        if self.normalize:
            dargs = self._qt_block(ext, n, b, l0, l1)
        else:
            Q = self._empty((b, m), self.dtype)
            launch(dev, self.prg.kernel("stream_windows"),
                   *fixed_local(dev, round_up(b * m, 64), ITEM_LOCAL),
                   ext.data, np.int32(l0), np.int32(b), np.int32(m), Q.data)
            dargs = (_device_profiles(dev, Q, ext, self.normalize, self.p, None, None, None,
                                      {})[0].data,)
        L = l1 - b if self.egress else l1
        P2, I2 = self._empty((L, self.k), self.odt), self._empty((L, self.k), np.int64)
        lP2, lI2 = self._empty(L, self.odt), self._empty(L, np.int64)
        launch(dev, self.prg.kernel("stream_update"),
               *fixed_local(dev, round_up(L, 64), ITEM_LOCAL),
               np.int32(b), np.int32(l0), np.int32(l1), np.int32(self.ez),
               np.int32(self.egress), np.int64(self.a), *dargs, self.P.data, self.I.data,
               self.lP.data, self.lI.data, P2.data, I2.data, lP2.data, lI2.data)
        if self.egress:
            T2 = self._empty(n, self.dtype)
            copy(self.dev, T2.data, ext.data, n * item, src_offset=b * item)
            ext = T2
            self.a += b
        self.T, self.P, self.I, self.lP, self.lI = ext, P2, I2, lP2, lI2

    def _qt_block(self, ext, n, b, l0, l1):
        """The statistics, the sliding dot products' bounds [b, l1] and the rows' thresholds
        of a block: ``stream_update``'s arguments, which compute mass' distance of the pairs
        in play (stream.cl.mako)."""
        dev, prg = self.dev, self.prg
        m, ez, o = self.m, self.ez, self.odt
        drop = b if self.egress else 0
        S = self._empty(l1 * NS, o)
        copy(self.dev, S.data, self.S.data, l0 * NS * o.itemsize,
             src_offset=self._so * NS * o.itemsize)
        fresh = self.QT is None or self.steps + b > REFRESH
        self.steps = b if fresh else self.steps + b
        launch(dev, prg.kernel("stream_center"), 256, 256, ext.data, np.int32(n + b),
               np.int32(fresh), np.int32(n), self.C.data)
        tc, MC, IC = self._empty(n + b, o), self._empty(l1, o), self._empty(l1, o)
        launch(dev, prg.kernel("stream_stats"), *fixed_local(dev, round_up(n + b, 64), ITEM_LOCAL),
               ext.data, np.int32(n + b), tc.data, self.C.data, np.int32(l1), np.int32(l0),
               np.int32(fresh), np.int32(m), S.data, np.int32(1), MC.data, IC.data)
        QT2 = self._empty(l1 - drop, o)
        LO, HI = self._empty((b, l1), o), self._empty((b, l1), o)
        items = -(-(l0 + b - 1 - ez) // DIAGONALS)
        if items > 0:
            launch(dev, prg.kernel("stream_qt"),
                   *fixed_local(dev, round_up(items, 64), ITEM_LOCAL),
                   tc.data, np.int32(l0), np.int32(b), np.int32(m), np.int32(ez),
                   np.int32(fresh), np.int32(self.steps), np.int32(drop),
                   (QT2 if fresh else self.QT).data, QT2.data, MC.data, IC.data, self.C.data,
                   LO.data, HI.data)
        TH = self._empty(2 * b, o)
        launch(dev, prg.kernel("stream_thr"), 64 * b, 64, np.int32(l0), np.int32(b),
               np.int32(ez), np.int32(self.egress), np.int32(m), HI.data, TH.data)
        S0 = S
        self.S, self._so, self.QT = S, drop, QT2
        return ext.data, np.int32(m), S0.data, LO.data, TH.data
