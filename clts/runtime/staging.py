"""Pinned host staging: how numpy data reach a device that has its own memory.

A device that shares host memory (CPUs; ``memory.host_ptr_alignment``) uses numpy's memory in
place. Elsewhere (discrete GPUs) every upload and download is a DMA transfer. From pageable
numpy memory the driver stages such a copy itself, synchronously and in small pieces (an H100:
6.6 GB/s up, 10.9 GB/s down); from pinned host memory (a buffer made with
``CL_MEM_ALLOC_HOST_PTR`` and mapped once: its pointer is DMA-able) the link runs at full speed
(53.7 / 54.7 GB/s), as NVIDIA's and AMD's OpenCL guides recommend. :func:`staging_mode` picks
the way per device: the ``staging`` option, else the profile key ``runtime.staging`` (``pinned``
on GPUs and accelerators, ``pageable`` on CPUs, whose copies only the simulator and
``zero_copy=False`` make).

Through pinned memory every byte is copied twice: numpy <-> pinned by the host, pinned <-> device
by the DMA engine. One host thread copies numpy into pinned memory at 9.3 GB/s on the H100
machine, 4 at 32 GB/s, 16 at 44 GB/s: the host's copies decide the speed. So
:class:`PinnedRing` moves a transfer through :data:`DEPTH` pinned pieces of :data:`PIECE_BYTES`
used in turn, each piece's copy split into parts of at least :data:`PART_BYTES` that the
process's copy threads (:func:`copy_threads`; numpy's copies release the GIL) run at once:

- upload: the parts of the next pieces are copied while an earlier piece's DMA runs; a
  piece's DMA is enqueued once its parts are in, a piece is refilled once its DMA completed;
- download: DMAs are enqueued ahead of the pieces being copied out; the threads copy each
  piece out once its DMA completed, straight into the destination array;
- the copy threads run numpy copies only: every OpenCL call (enqueue, flush, wait) stays on
  the calling thread, whatever the driver makes of calls from several threads;
- any layout on the numpy side (C, Fortran, strided, big-endian, another dtype to cast from or
  to): the parts are views of the numpy array by rows of its first axis, copied with casting,
  so Fortran-ordered or strided inputs and ``out=`` arrays cost no extra pass.

Pieces come from a per-device pool (:func:`lend_pinned`; a pinned allocation is expensive) and
go back to it when the ring closes, with the event of their last DMA: the pool lends a piece
again once that has completed, so an upload need not wait for its last DMA. Transfers below :data:`MIN_BYTES` go straight from numpy's
memory. ``pipeline.ChunkIO``, ``memory.upload_scratch``, the ocean slabs and :func:`download`
use it: the one transfer path of every numpy call.
"""
from __future__ import annotations

import os
import threading
from collections import deque

import numpy as np

from .. import options

#: ways numpy data reach a device with its own memory (profile key ``runtime.staging``)
STAGINGS = ("pinned", "pageable")
#: bytes of one pinned piece (NVIDIA's pinned copies reach full speed from 1-4 MB on)
PIECE_BYTES = 8 << 20
#: pieces of one transfer in flight (being copied by the host threads or by the DMA engine)
DEPTH = 4
#: the smallest part of a piece that one host thread copies
PART_BYTES = 512 << 10
#: the most host threads that copy (the H100 machine's memcpy: 44 GB/s from 16 threads)
MAX_THREADS = 16
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


# ------------------------------------------------------------------ the host threads that copy
def copy_threads() -> int:
    """Host threads that copy between numpy and pinned memory: the ``copy_threads`` option,
    else the CPUs this process may run on, at most :data:`MAX_THREADS`."""
    n = options.get("copy_threads")
    if n:
        return int(n)
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:                  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_THREADS))


_pools: dict = {}                           # threads -> ThreadPoolExecutor
_pools_lock = threading.Lock()


def _executor(threads: int):
    """The process's pool of ``threads`` copy threads (one for every device: their copies share
    the host's memory bandwidth), made on first use."""
    with _pools_lock:
        pool = _pools.get(threads)
        if pool is None:
            from concurrent.futures import ThreadPoolExecutor
            pool = _pools[threads] = ThreadPoolExecutor(threads, thread_name_prefix="clts-copy")
    return pool


def _after_fork():
    # a forked child has none of the parent's threads: its first transfer makes a new pool
    global _pools_lock
    _pools.clear()
    _pools_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


class _Later:
    """A copy that runs when its result is asked for (one thread: the calling thread copies a
    piece while the DMAs of the pieces after it run)."""
    __slots__ = ("fn", "args", "done")

    def __init__(self, fn, *args):
        self.fn, self.args, self.done = fn, args, False

    def result(self):
        if not self.done:
            self.done = True
            self.fn(*self.args)


def _copy(dst, src):
    """One part: ``dst[...] = src`` (cast). The copy threads run nothing else: every OpenCL
    call (enqueues, waits) stays on the calling thread."""
    np.copyto(dst, src, casting="unsafe")


def _wait(futures, quiet=False):
    """Every copy of ``futures`` finished (its error raised unless ``quiet``)."""
    error = None
    for f in futures:
        try:
            f.result()
        except BaseException as e:          # noqa: BLE001 - the first one is raised below
            error = error or e
    if error is not None and not quiet:
        raise error


class _Rows:
    """The elements of a numpy array ``a`` (any layout) in C order, by flat ranges: pieces of
    at most ``limit`` elements (:meth:`pieces`), the parts the threads copy of a piece
    (:meth:`parts`) and the view of ``a`` that holds a range (:meth:`part`, a shape to copy to
    or from). A C-contiguous or 1-D array is one run of elements; otherwise the ranges are
    whole indices of the first axis (rows) where a row fits a piece, else ranges inside one
    row (each row in turn the same way)."""

    def __init__(self, a: np.ndarray, limit: int):
        while a.ndim > 1 and a.shape[0] == 1:
            a = a[0]
        self.limit = max(1, int(limit))
        if a.ndim <= 1 or a.flags.c_contiguous:
            self.a, self.g, self.long = a.reshape(-1), 1, False
        else:
            self.a, self.g = a, int(np.prod(a.shape[1:], dtype=np.int64))
            self.long = self.g > self.limit
        self._sub = (None, None)          # (row, _Rows of that row) of a long row

    def _row(self, r: int) -> "_Rows":
        if self._sub[0] != r:
            self._sub = (r, _Rows(self.a[r], self.limit))
        return self._sub[1]

    def pieces(self):
        n, g = self.a.shape[0] * self.g, self.g
        if not self.long:
            per = self.limit // g * g
            yield from ((p0, min(n, p0 + per)) for p0 in range(0, n, per))
            return
        for r in range(self.a.shape[0]):
            yield from ((r * g + q0, r * g + q1) for q0, q1 in self._row(r).pieces())

    def parts(self, p0: int, p1: int, itemsize: int, threads: int) -> list:
        if self.long:
            r = p0 // self.g
            o = r * self.g
            return [(o + s, o + e) for s, e in self._row(r).parts(p0 - o, p1 - o, itemsize,
                                                                   threads)]
        g = self.g
        n = max(1, min(threads, (p1 - p0) * itemsize // PART_BYTES))
        step = -(-((p1 - p0) // g) // n) * g
        return [(s, min(p1, s + step)) for s in range(p0, p1, step)]

    def part(self, e0: int, e1: int) -> np.ndarray:
        g = self.g
        if g == 1:
            return self.a[e0:e1]
        if self.long:
            r = e0 // g
            return self._row(r).part(e0 - r * g, e1 - r * g)
        return self.a[e0 // g:e1 // g]


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


def _done(event) -> bool:
    """Whether the OpenCL ``event`` (or None) has completed (or failed)."""
    if event is None:
        return True
    import pyopencl as cl
    return event.command_execution_status <= cl.command_execution_status.COMPLETE


def lend_pinned(device, nbytes: int = PIECE_BYTES) -> np.ndarray:
    """A pinned host array of ``nbytes`` bytes (uint8) from ``device``'s pool, free to write:
    one whose last DMA has completed, else a new one."""
    state = device.state
    with state.lock:
        free = state.pinned.get(nbytes) or []
        for k, (raw, event) in enumerate(free):
            if _done(event):
                del free[k]
                return raw
    return _allocate(device, nbytes)


def return_pinned(device, raws, events=None) -> None:
    """Give arrays from :func:`lend_pinned` back, each with the event of the DMA that may
    still read or write it (``events``, or None); beyond :data:`PINNED_POOL_BYTES` they go
    (once that DMA has run)."""
    state = device.state
    events = list(events) if events is not None else [None] * len(raws)
    dropped = []
    with state.lock:
        pool = state.pinned
        total = sum(nb * len(v) for nb, v in pool.items())
        for raw, event in zip(raws, events):
            if total + raw.nbytes <= PINNED_POOL_BYTES:
                pool.setdefault(raw.nbytes, []).append((raw, event))
                total += raw.nbytes
            elif event is not None:
                dropped.append(event)
    for event in dropped:
        event.wait()


# ------------------------------------------------------------------ transfers through the ring
def _device_dtype(dtype) -> np.dtype:
    """The dtype on the device side: ``dtype`` in native byte order."""
    return np.dtype(dtype).newbyteorder("=")


class PinnedRing:
    """:data:`DEPTH` pinned pieces used in turn by one thread's transfers (see the module
    docstring); the copies between numpy and the pieces run on the copy threads. A piece is
    written again only after the DMA or the copies that used it before have finished. Use as a
    context manager (or :meth:`close`): the pieces go back to the pool with their last DMAs,
    which may still run (an upload's data are in pinned memory once :meth:`write` returned)."""

    def __init__(self, device, pieces: int = DEPTH, threads: int | None = None):
        self.device = device
        self.n = max(1, int(pieces))
        self.threads = threads or copy_threads()
        self._pool = _executor(self.threads) if self.threads > 1 else None
        self._raw = []                    # lent pieces
        self._busy = []                   # per piece: the event of its last DMA
        self._next = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _take(self):
        """(index, pinned piece, event of its last DMA or None), next in turn."""
        if len(self._raw) < self.n:
            self._raw.append(lend_pinned(self.device))
            self._busy.append(None)
            j = len(self._raw) - 1
        else:
            j = self._next
            self._next = (j + 1) % self.n
        after, self._busy[j] = self._busy[j], None
        return j, self._raw[j], after

    def _submit(self, dst, src):
        if self._pool is None:
            return _Later(_copy, dst, src)
        return self._pool.submit(_copy, dst, src)

    def write(self, queue, buf, src: np.ndarray, offset: int = 0, dtype=None) -> list:
        """Enqueue the copy of the numpy ``src`` (any layout; cast to ``dtype``, default its
        own, in native byte order) into the buffer ``buf`` at byte ``offset``, in C order,
        piece by piece. Returns once every byte is in pinned memory (``src`` may go), with the
        pieces' DMA events (the last ones may still run)."""
        import pyopencl as cl
        dtype = _device_dtype(dtype or src.dtype)
        if src.size == 0:
            return []
        isz = dtype.itemsize
        rows = _Rows(src, PIECE_BYTES // isz)
        events, pending = [], deque()     # pending: (piece, copies, first, end element)

        def send_oldest():
            j, copies, p0, p1 = pending.popleft()
            _wait(copies)
            ev = cl.enqueue_copy(queue, buf, self._raw[j][:(p1 - p0) * isz],
                                 dst_offset=offset + p0 * isz, is_blocking=False)
            queue.flush()
            self._busy[j] = ev
            events.append(ev)

        try:
            for p0, p1 in rows.pieces():
                if pending and len(pending) >= self.n - 1:  # one piece in DMA, the others filled
                    send_oldest()
                j, raw, after = self._take()
                if after is not None:           # its DMA, enqueued a piece ago
                    after.wait()
                flat = raw[:(p1 - p0) * isz].view(dtype)
                copies = []
                for s, e in rows.parts(p0, p1, isz, self.threads):
                    part = rows.part(s, e)
                    copies.append(self._submit(flat[s - p0:e - p0].reshape(part.shape), part))
                pending.append((j, copies, p0, p1))
            while pending:
                send_oldest()
        except BaseException:
            for _, copies, _, _ in pending:   # nothing writes the pieces once this raises
                _wait(copies, quiet=True)
            raise
        return events

    def read(self, queue, buf, dest: np.ndarray, offset: int = 0, wait_for=None,
             dtype=None) -> None:
        """Copy the buffer ``buf`` from byte ``offset`` (``dest.size`` elements of ``dtype``,
        default dest's, native byte order, in C order) into the numpy ``dest`` (any layout;
        cast), blocking: the DMAs of the next pieces run while the threads copy a piece out."""
        import pyopencl as cl
        dtype = _device_dtype(dtype or dest.dtype)
        if dest.size == 0:
            return
        isz = dtype.itemsize
        rows = _Rows(dest, PIECE_BYTES // isz)
        ahead = max(1, self.n // 2)       # DMAs enqueued ahead of the piece copied out
        dmas = deque()                    # (event, piece, first, end element): not copied yet
        copying = deque()                 # per piece being copied out: its copies

        def start():                      # the oldest DMA landed: its piece copied out
            ev, raw, p0, p1 = dmas.popleft()
            ev.wait()
            flat = raw[:(p1 - p0) * isz].view(dtype)
            copies = []
            for s, e in rows.parts(p0, p1, isz, self.threads):
                part = rows.part(s, e)
                copies.append(self._submit(part, flat[s - p0:e - p0].reshape(part.shape)))
            copying.append(copies)

        try:
            for k, (p0, p1) in enumerate(rows.pieces()):
                if len(dmas) + len(copying) == self.n:   # the piece next in turn: emptied
                    if not copying:
                        start()
                    _wait(copying.popleft())
                j, raw, after = self._take()
                if after is not None:           # a DMA of an upload still reading it
                    after.wait()
                ev = cl.enqueue_copy(queue, raw[:(p1 - p0) * isz], buf,
                                     src_offset=offset + p0 * isz,
                                     wait_for=wait_for if k == 0 else None, is_blocking=False)
                queue.flush()
                dmas.append((ev, raw, p0, p1))
                while len(dmas) > ahead:
                    start()
            while dmas:
                start()
            while copying:
                _wait(copying.popleft())
        except BaseException:
            for copies in copying:        # nothing writes ``dest`` once this raises
                _wait(copies, quiet=True)
            for ev, _, _, _ in dmas:      # nor into the pieces
                ev.wait()
            raise

    def close(self) -> None:
        """Give the pieces back to the pool, each with its last DMA (which may still run: the
        pool lends a piece again once that DMA has completed)."""
        return_pinned(self.device, self._raw, self._busy)
        self._raw, self._busy, self._next = [], [], 0


def upload_into(device, queue, arr, host, ring: PinnedRing | None = None) -> list:
    """Enqueue the copy of the numpy ``host`` (any layout, ``arr``'s size; cast to ``arr``'s
    dtype) into the device array ``arr``: through ``ring`` (or a ring of its own) where the
    device stages pinned and the data are large enough, else straight. Non-blocking either way: the events complete when the data are on
    the device (``host`` may go once this returns on the pinned path)."""
    import pyopencl as cl
    host = np.asarray(host)
    if host.nbytes < MIN_BYTES or not pinned(device):
        host = np.ascontiguousarray(host, dtype=arr.dtype)
        return [cl.enqueue_copy(queue, arr.base_data, host, dst_offset=arr.offset,
                                is_blocking=False)]
    if ring is not None:
        return ring.write(queue, arr.base_data, host, arr.offset, arr.dtype)
    with PinnedRing(device) as own:
        return own.write(queue, arr.base_data, host, arr.offset, arr.dtype)


def download(device, arr, host: np.ndarray, queue=None, wait_for=None,
             ring: PinnedRing | None = None) -> np.ndarray:
    """Copy the device array ``arr`` into the numpy array ``host`` (any layout, ``arr``'s size;
    cast from ``arr``'s dtype; blocking): through pinned pieces where the device stages pinned,
    straight into ``host``, else straight from the device. Returns ``host``."""
    import pyopencl as cl
    queue = queue or device.queue
    if host.nbytes < MIN_BYTES or not pinned(device):
        target = (host if host.flags.c_contiguous and host.dtype == arr.dtype
                  else np.empty(host.shape, arr.dtype))
        cl.enqueue_copy(queue, target, arr.base_data, src_offset=arr.offset,
                        wait_for=wait_for, is_blocking=True)
        if target is not host:
            np.copyto(host, target, casting="unsafe")
    elif ring is not None:
        ring.read(queue, arr.base_data, host, arr.offset, wait_for, arr.dtype)
    else:
        with PinnedRing(device) as own:
            own.read(queue, arr.base_data, host, arr.offset, wait_for, arr.dtype)
    return host


def in_parts(n: int, fn, nbytes: int) -> None:
    """``fn(a, b)`` over the ranges of [0, n) that the copy threads run at once, for a host
    pass over ``nbytes`` of large results (numpy's element-wise operations release the GIL as
    its copies do); one call on the calling thread where the pass is small."""
    threads = min(copy_threads(), n, max(1, int(nbytes) // (4 * PART_BYTES)))
    if threads <= 1:
        fn(0, n)
        return
    step = -(-n // threads)
    pool = _executor(copy_threads())
    _wait([pool.submit(fn, s, min(n, s + step)) for s in range(0, n, step)])
