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
import weakref

import numpy as np

from ..runtime import launch, replay, round_up
from ..runtime.launch import fixed_local, prepare, pyopencl_kernels
from ..runtime.memory import copy, empty_device
from .local_size import ITEM_LOCAL

#: the largest k kept on the device (each work-item's k-list is private memory)
MAX_K = 16
#: bytes of the distance profiles of one block of appended points (longer updates are cut)
BLOCK_BYTES = 64 << 20
#: the sliding dot products are recomputed directly after this many points
REFRESH = 64
#: per-window statistics kept (stream.cl.mako's planes of S)
NS = 6
#: diagonals per work-item of stream_qt (stream.cl.mako's DW: one vector of that many lanes);
#: GPUs in float64 take half (IGC spills eight double lanes: 2,752 B on the Max 1550)
DIAGONALS = 8
GPU_DOUBLE_DIAGONALS = 4
ONE = np.int32(1)


def plane_size(l):
    """Windows a plane of the kept statistics holds for ``l`` windows: an eighth more, so that
    a growing stream widens its planes (a copy per plane) once every l / 8 points."""
    return l + l // 8 + 64


class DeviceStream:
    """The device state of a stream: series ``T``, k-lists ``P``, ``I`` [l, k], left profile
    ``lP``, ``lI`` [l] (device arrays, replaced by each update, never written in place)."""

    def __init__(self, dev, T, m, k, egress, normalize, p, precision, lazy_points=1,
                 subgroup=0):
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
        self._so = 0                    # the first current window's index in S's planes
        self.dw = (GPU_DOUBLE_DIAGONALS if dev.type != "cpu" and self.odt == np.float64
                   else DIAGONALS)
        self.prg = dev.program("mp/stream.cl.mako",
                               real="double" if self.dtype == np.float64 else "float",
                               oreal="double" if self.odt == np.float64 else "float", K=self.k,
                               QT=int(self.normalize), DW=self.dw, SUBGROUP=int(subgroup))
        self._cla = cla
        self.lazy = max(1, int(lazy_points))
        self._pend, self._npend = None, 0      # points waiting (a device buffer, its count)
        self._launches = {}     # kernel name -> the stream's prepared launch of it
        self._kept = {}         # temporary's name -> a device array kept for the next updates
        self._kept_bytes, self._flip = 0, 0
        # the kernels' constant scalars, made once
        self._m32, self._ez32, self._eg32 = (np.int32(v) for v in (self.m, self.ez, self.egress))
        self._keep_most = replay.limits(dev)[0]     # the bytes the kept ones may hold
        # what the stream keeps (kernel objects, buffers) counts against the device's
        # recordings budget: many streams at once fall back to the shared kernels and fresh
        # buffers rather than hold a kernel object each without bound
        self._held = [0]
        weakref.finalize(self, replay.return_budget, dev, self._held)
        if self.normalize:
            # per-window statistics, the centring offset and amax, no dot products yet
            # (planes of _ls windows: one copy carries them all to the next update's S)
            self._ls = plane_size(l)
            self._ils = np.int32(self._ls)
            S = self.S = cla.empty(dev.queue, self._ls * NS, self.odt).data  # the buffer
            launch(dev, self.prg.kernel("stream_stats"),
                   *fixed_local(dev, round_up(l, 64), ITEM_LOCAL),
                   T.data, np.int32(0), S, S, np.int32(l), np.int32(0), np.int32(0),
                   np.int32(self.m), S, self._ils, np.int32(0), S, S)
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
        if self._npend + b > self.lazy or (not self._npend and b >= self.lazy):
            self.flush()
            if b >= self.lazy:          # applied as it is, without a copy to the pending
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
        # a fresh device array (the state's arrays are replaced, never written in place; not
        # a pool's block, as every device result: a user may read it on a queue of their
        # own after dropping it), through the fast constructor
        return empty_device(self.dev.queue, self.dev.context, shape, dtype)

    def _temp(self, name, count, dtype):
        """The buffer of a temporary of ``count`` values of ``dtype`` that no result holds:
        the stream's kept one for ``name`` (grown when short) while all it keeps fit a
        recording's size (``runtime.replay.limits``: 16 MiB on a CPU) and the device's
        recordings budget, else a fresh one.
        The queue runs in order, so an update's writes to a kept buffer follow the last
        update's reads of it, and one stream's updates are made one after another (each
        replaces its state). A fresh array costs a few µs; an update made fourteen."""
        nbytes = count * np.dtype(dtype).itemsize
        a = self._kept.get(name)
        if a is not None and a.nbytes >= nbytes:
            return a.data
        size = count + count // 8 + 64
        more = size * np.dtype(dtype).itemsize - (0 if a is None else a.nbytes)
        if self._kept_bytes + more > self._keep_most or not self._reserve(more):
            return self._empty(count, dtype).data
        a = self._kept[name] = self._empty(size, dtype)     # a shorter one is released
        self._kept_bytes += more
        return a.data

    def _run(self, name, global_size, local_size, *args):
        """Enqueue kernel ``name`` through the stream's own prepared launch of it: its
        kernel object is checked out once, and each update sets its sizes and arguments and
        enqueues (the general ``launch`` looks the kernel up, takes the shared object's lock
        and checks more, ~15-20 µs a launch on pocl against ~5)."""
        go = self._launches.get(name)
        if go is None and self._reserve(replay.KERNEL_BYTES):
            go = self._launches[name] = prepare(self.dev, self.prg, name, global_size,
                                                local_size, *args)
            return go()
        if not go:                  # the budget was full: the shared kernel
            self._launches[name] = False
            return launch(self.dev, self.prg.kernel(name), global_size, local_size, *args)
        return go.rebind(global_size, local_size, *args)()

    def _reserve(self, nbytes) -> bool:
        """Take ``nbytes`` of the device's recordings budget for the stream (given back when
        it goes)."""
        if not replay.reserve_budget(self.dev, nbytes):
            return False
        self._held[0] += nbytes
        return True

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
        dev, i32 = self.dev, np.int32
        n, m, item = int(self.T.shape[0]), self.m, self.dtype.itemsize
        # the series with the block: the new state, or (egress) a temporary it is cut from
        if self.egress and self.normalize:
            extA, ext = None, self._temp("ext", n + b, self.dtype)
        else:
            extA = self._empty(n + b, self.dtype)
            ext = extA.data
        copy(dev, ext, self.T.data, n * item)
        copy(dev, ext, src, b * item, dst_offset=n * item, src_offset=src_offset)
        l0, l1 = n - m + 1, n + b - m + 1
        ib, il0, il1 = i32(b), i32(l0), i32(l1)     # each numpy scalar costs ~0.5 µs here
        if self.normalize:
            dargs = self._qt_block(ext, n, b, l0, l1, ib, il0, il1)
        else:
            from .mass import _device_profiles
            Q = self._empty((b, m), self.dtype)
            self._run("stream_windows", *fixed_local(dev, round_up(b * m, 64), ITEM_LOCAL),
                      ext, il0, ib, self._m32, Q.data)
            dargs = (_device_profiles(dev, Q, extA, self.normalize, self.p, None, None, None,
                                      {})[0].data,)
        L = l1 - b if self.egress else l1
        P2, I2 = self._empty((L, self.k), self.odt), self._empty((L, self.k), np.int64)
        lP2, lI2 = self._empty(L, self.odt), self._empty(L, np.int64)
        self._run("stream_update", *fixed_local(dev, round_up(L, 64), ITEM_LOCAL),
                  ib, il0, il1, self._ez32, self._eg32, np.int64(self.a), *dargs, self.P.data,
                  self.I.data, self.lP.data, self.lI.data, P2.data, I2.data, lP2.data,
                  lI2.data)
        if self.egress:
            T2 = self._empty(n, self.dtype)
            copy(dev, T2.data, ext, n * item, src_offset=b * item)
            self.a += b
        else:
            T2 = extA
        self.T, self.P, self.I, self.lP, self.lI = T2, P2, I2, lP2, lI2

    def _qt_block(self, ext, n, b, l0, l1, ib, il0, il1):
        """The statistics, the sliding dot products' bounds [b, l1] and the rows' thresholds
        of a block (``ib``, ``il0``, ``il1``: b, l0, l1 as int32): ``stream_update``'s
        arguments, which compute mass' distance of the pairs in play (stream.cl.mako)."""
        dev, i32 = self.dev, np.int32
        m32, ez32, o = self._m32, self._ez32, self.odt
        drop = b if self.egress else 0
        self._flip ^= 1         # S and QT: read last update's, write the other kept one
        ls, so, it = self._ls, self._so, o.itemsize
        if l1 <= ls:        # the kept windows of every plane, shifted by so: one copy
            S = self._temp(f"S{self._flip}", ls * NS, o)
            copy(dev, S, self.S, (ls * NS - so) * it, src_offset=so * it)
        else:               # wider planes (an eighth more windows): a copy a plane
            ls = plane_size(l1)
            S = self._temp(f"S{self._flip}", ls * NS, o)
            for k in range(NS):
                copy(dev, S, self.S, l0 * it, dst_offset=k * ls * it,
                     src_offset=(k * self._ls + so) * it)
            self._ls, self._ils = ls, np.int32(ls)
        fresh = self.QT is None or self.steps + b > REFRESH
        self.steps = b if fresh else self.steps + b
        ifresh, inb = i32(fresh), i32(n + b)
        self._run("stream_center", 256, 256, ext, inb, ifresh, i32(n), self.C.data)
        tc, MC, IC = (self._temp("tc", n + b, o), self._temp("MC", l1, o),
                      self._temp("IC", l1, o))
        self._run("stream_stats", *fixed_local(dev, round_up(n + b, 64), ITEM_LOCAL),
                  ext, inb, tc, self.C.data, il1, il0, ifresh, m32, S, self._ils, ONE, MC,
                  IC)
        QT2 = self._temp(f"QT{self._flip}", l1 - drop, o)
        LO, HI = self._temp("LO", b * l1, o), self._temp("HI", b * l1, o)
        items = -(-(l0 + b - 1 - self.ez) // self.dw)
        if items > 0:
            self._run("stream_qt", *fixed_local(dev, round_up(items, 64), ITEM_LOCAL),
                      tc, il0, ib, m32, ez32, ifresh, i32(self.steps), i32(drop),
                      QT2 if fresh else self.QT, QT2, MC, IC, self.C.data, LO, HI)
        TH = self._temp("TH", 2 * b, o)
        self._run("stream_thr", 64 * b, 64, il0, ib, ez32, self._eg32, m32, HI, TH)
        self.S, self._so, self.QT = S, drop, QT2
        return ext, m32, S, self._ils, LO, TH
