"""``clts.stumpi`` with its state on the device (stream.py): given a device series, the
profile, left profile and series stay device arrays, and an ``update`` with a device array of
points runs on the device (``templates/mp/stream.cl.mako``): the new windows' distance
profiles against the extended series by ``mass``' kernels, folded into the k-lists by
``stream_update``. The numpy path's device blocks (``host_points=0``, blocks too short to
join) do the same selection on the same distances: the same bits. Nothing is read back or
waited for."""
from __future__ import annotations

import math

import numpy as np

from ..runtime import launch, round_up
from ..runtime.launch import fixed_local

#: the largest k kept on the device (each work-item's k-list is private memory)
MAX_K = 16
#: bytes of the distance profiles of one block of appended points (longer updates are cut)
BLOCK_BYTES = 64 << 20


class DeviceStream:
    """The device state of a stream: series ``T``, k-lists ``P``, ``I`` [l, k], left profile
    ``lP``, ``lI`` [l] (device arrays, replaced by each update, never written in place)."""

    def __init__(self, dev, T, m, k, egress, normalize, p, precision):
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
        self.P = r.P.reshape(l, self.k).astype(self.odt)
        self.I = r.I.reshape(l, self.k).astype(np.int64)
        self.lP = r.left_P.astype(self.odt)
        self.lI = r.left_I.astype(np.int64)
        self.T = T
        self.a = 0                      # points egressed so far (index offset)
        self.prg = dev.program("mp/stream.cl.mako",
                               real="double" if self.dtype == np.float64 else "float",
                               oreal="double" if self.odt == np.float64 else "float", K=self.k)
        self._cla = cla

    def update(self, t):
        """Append the device array ``t`` (1-D, the series' dtype), in blocks whose distance
        profiles fit BLOCK_BYTES (and the device's largest allocation): the stream's result
        is that of one point at a time, however the points are grouped."""
        from ..runtime.arrays import device_input
        t = device_input(t, "t", self.dev, dtypes=(self.dtype,), ndim=1)
        n = int(self.T.shape[0])
        per_row = (n + t.size) * self.dtype.itemsize
        rows = max(1, min(BLOCK_BYTES, self.dev.max_alloc) // per_row)
        for c in range(0, int(t.size), rows):
            self._block(t[c:c + rows])

    def _block(self, t):
        import pyopencl as cl
        from .mass import _device_profiles
        cla, dev, q = self._cla, self.dev, self.dev.queue
        b = int(t.size)
        n, m, item = int(self.T.shape[0]), self.m, self.dtype.itemsize
        ext = cla.empty(q, n + b, self.dtype)
        cl.enqueue_copy(q, ext.data, self.T.data, byte_count=n * item)
        cl.enqueue_copy(q, ext.data, t.base_data, byte_count=b * item, dst_offset=n * item,
                        src_offset=t.offset)
        l0, l1 = n - m + 1, n + b - m + 1
        Q = cla.empty(q, (b, m), self.dtype)
        launch(dev, self.prg.kernel("stream_windows"), *fixed_local(dev, round_up(b * m, 64)),
               ext.data, np.int32(l0), np.int32(b), np.int32(m), Q.data)
        D = _device_profiles(dev, Q, ext, self.normalize, self.p, None, None, None, {})[0]
        L = l1 - b if self.egress else l1
        P2, I2 = cla.empty(q, (L, self.k), self.odt), cla.empty(q, (L, self.k), np.int64)
        lP2, lI2 = cla.empty(q, L, self.odt), cla.empty(q, L, np.int64)
        launch(dev, self.prg.kernel("stream_update"), *fixed_local(dev, round_up(L, 64)),
               np.int32(b), np.int32(l0), np.int32(l1), np.int32(self.ez),
               np.int32(self.egress), np.int64(self.a), D.data, self.P.data, self.I.data,
               self.lP.data, self.lI.data, P2.data, I2.data, lP2.data, lI2.data)
        if self.egress:
            T2 = cla.empty(q, n, self.dtype)
            cl.enqueue_copy(q, T2.data, ext.data, byte_count=n * item, src_offset=b * item)
            ext = T2
            self.a += b
        self.T, self.P, self.I, self.lP, self.lI = ext, P2, I2, lP2, lI2
