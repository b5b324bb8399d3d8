"""Pinned host staging: how numpy data reach a device that has its own memory.

A device that shares host memory (CPUs; ``memory.host_ptr_alignment``) uses numpy's memory in
place. Elsewhere (discrete GPUs) every upload and download is a DMA transfer. From pageable
numpy memory the driver stages such a copy itself, synchronously and in small pieces; NVIDIA's
and AMD's OpenCL guides recommend pinned host memory instead (a buffer made with
``CL_MEM_ALLOC_HOST_PTR`` and mapped once: its pointer is DMA-able). :func:`staging_mode` picks
the way per device: the ``staging`` option, else the profile key ``runtime.staging``
(``pinned`` on GPUs and accelerators, ``pageable`` on CPUs, whose copies only the simulator
and ``zero_copy=False`` make).

:class:`PinnedRing` moves one call's transfers through two pinned pieces of
:data:`PIECE_BYTES` used in turn: the memcpy of piece k + 1 (numpy <-> pinned) runs while piece
k's DMA runs. Pieces come from a per-device pool (:func:`lend_pinned`; a pinned allocation is
expensive) and go back to it when the ring closes. Transfers below :data:`MIN_BYTES` go
straight from numpy's memory. ``pipeline.ChunkIO``, ``memory.upload_scratch`` and
:func:`download` use it: the one transfer path of every numpy call.
"""
from __future__ import annotations

import numpy as np

from .. import options

#: ways numpy data reach a device with its own memory (profile key ``runtime.staging``)
STAGINGS = ("pinned", "pageable")
#: bytes of one pinned piece (NVIDIA's pinned copies reach full speed from 1-4 MB on)
PIECE_BYTES = 4 << 20
#: transfers below this go straight from numpy's memory
MIN_BYTES = 1 << 16
#: pinned memory the pool of one device keeps between calls
PINNED_POOL_BYTES = 256 << 20


def staging_mode(device) -> str:
    """How ``device``'s copies go: ``"pinned"`` or ``"pageable"``, the ``staging`` option when
    set, else the profile's ``runtime.staging``. (Where a device uses numpy's memory in place,
    ``memory.host_ptr_alignment``, the chunk loop copies nothing; its other copies, into
    scratch buffers, go this way.)"""
    mode = options.get("staging")
    if mode is None:
        from .plans import profile_value
        mode = profile_value(device, "runtime.staging")
        if mode not in STAGINGS:
            from .profiles import value_error
            raise value_error(device.profile, "runtime.staging",
                              f"must be one of {STAGINGS}, got {mode!r}")
    return mode


def pinned(device) -> bool:
    """Whether ``device``'s transfers go through pinned staging (see :func:`staging_mode`)."""
    return staging_mode(device) == "pinned"


# ------------------------------------------------------------------ the pool of pinned pieces
def _allocate(device, nbytes: int) -> np.ndarray:
    """A new pinned host array: a ``CL_MEM_ALLOC_HOST_PTR`` buffer mapped once (the map keeps
    the buffer alive; mapped on the copy queue, which holds no kernels to wait for). Where the
    driver refuses, plain (pageable) memory: slower, never wrong."""
    import pyopencl as cl
    mf = cl.mem_flags
    try:
        buf = cl.Buffer(device.context, mf.READ_WRITE | mf.ALLOC_HOST_PTR, nbytes)
        host, _ = cl.enqueue_map_buffer(device.state.queue_for_copies(), buf,
                                        cl.map_flags.READ | cl.map_flags.WRITE, 0, (nbytes,),
                                        np.uint8, is_blocking=True)
        return host
    except cl.Error:
        return np.empty(nbytes, np.uint8)


def lend_pinned(device, nbytes: int = PIECE_BYTES) -> np.ndarray:
    """A pinned host array of ``nbytes`` bytes (uint8) from ``device``'s pool."""
    state = device.state
    with state.lock:
        free = state.pinned.get(nbytes)
        raw = free.pop() if free else None
    return raw if raw is not None else _allocate(device, nbytes)


def return_pinned(device, raws) -> None:
    """Give arrays from :func:`lend_pinned` back (beyond :data:`PINNED_POOL_BYTES` they go)."""
    state = device.state
    with state.lock:
        pool = state.pinned
        total = sum(nb * len(v) for nb, v in pool.items())
        for raw in raws:
            if total + raw.nbytes <= PINNED_POOL_BYTES:
                pool.setdefault(raw.nbytes, []).append(raw)
                total += raw.nbytes


# ------------------------------------------------------------------ transfers through the ring
def _bytes(a: np.ndarray) -> np.ndarray:
    """The memory of the C-contiguous array ``a`` as flat bytes."""
    return a.reshape(-1).view(np.uint8)


class PinnedRing:
    """Two pinned pieces used in turn by one thread's transfers (see the module docstring).
    A piece is written again only after the DMA that used it before has finished. Use as a
    context manager (or :meth:`close`): the pieces go back to the pool once their DMAs ran."""

    def __init__(self, device, pieces: int = 2):
        self.device = device
        self.n = pieces
        self._raw = []                    # lent pieces
        self._busy = []                   # per piece: the event of its last DMA
        self._next = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _piece(self):
        """(index, pinned piece) next in turn, free to write."""
        if len(self._raw) < self.n:
            self._raw.append(lend_pinned(self.device))
            self._busy.append(None)
            j = len(self._raw) - 1
        else:
            j = self._next
            self._next = (j + 1) % self.n
            if self._busy[j] is not None:
                self._busy[j].wait()
                self._busy[j] = None
        return j, self._raw[j]

    def write(self, queue, buf, src: np.ndarray, offset: int = 0) -> list:
        """Enqueue the copy of the C-contiguous ``src`` into the buffer ``buf`` at byte
        ``offset``, piece by piece; returns the pieces' events (non-blocking)."""
        import pyopencl as cl
        flat = _bytes(src)
        events = []
        for s in range(0, flat.nbytes, PIECE_BYTES):
            e = min(flat.nbytes, s + PIECE_BYTES)
            j, raw = self._piece()
            np.copyto(raw[:e - s], flat[s:e])
            ev = cl.enqueue_copy(queue, buf, raw[:e - s], dst_offset=offset + s,
                                 is_blocking=False)
            queue.flush()
            self._busy[j] = ev
            events.append(ev)
        return events

    def read(self, queue, buf, dest: np.ndarray, offset: int = 0, wait_for=None) -> None:
        """Copy the buffer ``buf`` from byte ``offset`` into the C-contiguous ``dest``
        (blocking): piece k + 1's DMA runs while piece k is copied out."""
        import pyopencl as cl
        flat = _bytes(dest)
        pending = []                      # (event, piece, start, stop), oldest first

        def deliver():
            ev, raw, s0, e0 = pending.pop(0)
            ev.wait()
            np.copyto(flat[s0:e0], raw[:e0 - s0])

        for k, s in enumerate(range(0, flat.nbytes, PIECE_BYTES)):
            e = min(flat.nbytes, s + PIECE_BYTES)
            if len(pending) == self.n:    # the oldest piece is the next in turn: empty it
                deliver()
            j, raw = self._piece()
            ev = cl.enqueue_copy(queue, raw[:e - s], buf, src_offset=offset + s,
                                 wait_for=wait_for if k == 0 else None, is_blocking=False)
            queue.flush()
            self._busy[j] = ev
            pending.append((ev, raw, s, e))
        while pending:
            deliver()

    def close(self) -> None:
        """Wait for the pieces' last DMAs, give them back to the pool."""
        for ev in self._busy:
            if ev is not None:
                ev.wait()
        return_pinned(self.device, self._raw)
        self._raw, self._busy, self._next = [], [], 0


def upload_into(device, queue, arr, host: np.ndarray, ring: PinnedRing | None = None) -> list:
    """Enqueue the copy of the numpy ``host`` (C-contiguous, ``arr``'s size) into the device
    array ``arr``: through ``ring`` (or a ring of its own, closed here after the copy, i.e.
    blocking) where the device stages pinned and the data are large enough, else straight
    (non-blocking). Returns the events."""
    import pyopencl as cl
    host = np.ascontiguousarray(host)
    if host.nbytes < MIN_BYTES or not pinned(device):
        return [cl.enqueue_copy(queue, arr.base_data, host, dst_offset=arr.offset,
                                is_blocking=False)]
    if ring is not None:
        return ring.write(queue, arr.base_data, host, arr.offset)
    with PinnedRing(device) as own:
        return own.write(queue, arr.base_data, host, arr.offset)


def download(device, arr, host: np.ndarray, queue=None, wait_for=None,
             ring: PinnedRing | None = None) -> np.ndarray:
    """Copy the device array ``arr`` into the numpy array ``host`` (any layout; blocking):
    through pinned pieces where the device stages pinned, else straight. Returns ``host``."""
    import pyopencl as cl
    queue = queue or device.queue
    target = host if host.flags.c_contiguous else np.empty(host.shape, host.dtype)
    if target.nbytes < MIN_BYTES or not pinned(device):
        cl.enqueue_copy(queue, target, arr.base_data, src_offset=arr.offset,
                        wait_for=wait_for, is_blocking=True)
    elif ring is not None:
        ring.read(queue, arr.base_data, target, arr.offset, wait_for)
    else:
        with PinnedRing(device) as own:
            own.read(queue, arr.base_data, target, arr.offset, wait_for)
    if target is not host:
        np.copyto(host, target)
    return host
