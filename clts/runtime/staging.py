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
:class:`PinnedRing` moves a transfer through pinned slots of at most :data:`PIECE_BYTES` used
in turn, :data:`DEPTH` more than the process's copy threads (:func:`copy_threads`; numpy's
copies release the GIL), **one task per piece**: each copy thread copies a whole piece while the
others copy theirs. (Splitting each piece over every thread, as before, made 16 tasks of 512 KB
per 8 MB piece; each task's hand-off costs the calling thread tens of microseconds under the
GIL, and on the H200 machine 16 threads then staged at 8.5 GB/s against 20-25 GB/s with 4; one
task per piece: 30-37 GB/s.) A transfer smaller than the threads' pieces is cut into pieces of
at least :data:`PART_BYTES`, one per thread. The slots lie one after another in one pinned
buffer, so consecutive pieces move in one DMA (an enqueue costs the calling thread about 60 µs
on NVIDIA's driver):

- upload: the next pieces are copied while earlier pieces' DMAs run; the oldest piece's DMA is
  enqueued once its copy is in, with the pieces after it whose copies are in too; a slot is
  refilled once its DMA completed. :meth:`PinnedRing.write_many` streams several arrays (a
  call's inputs) without draining between them;
- download: DMAs of two consecutive pieces are enqueued ahead of the pieces being copied out; a
  copy thread copies each piece out once its DMA completed, straight into the destination;
- the copy threads run numpy copies only: every OpenCL call (enqueue, flush, wait) stays on
  the calling thread, whatever the driver makes of calls from several threads;
- any layout on the numpy side (C, Fortran, strided, big-endian, another dtype to cast from or
  to): a piece's copy is a view of the numpy array by rows of its first axis, copied with
  casting, so Fortran-ordered or strided inputs and ``out=`` arrays cost no extra pass.

A ring's buffer comes from a per-device pool (:func:`lend_pinned`; a pinned allocation is
expensive) and goes back to it when the ring closes, with the events of its last DMAs: the pool
lends it again once they have completed, so an upload need not wait for its last DMA. Transfers
below :data:`MIN_BYTES` go straight from numpy's memory. ``pipeline.ChunkIO``,
``memory.upload_scratch``, the ocean functions and :func:`download` use it: the one transfer path
of every numpy call.
"""
from __future__ import annotations

import os
import threading
from collections import deque

import numpy as np

from .. import options

#: ways numpy data reach a device with its own memory (profile key ``runtime.staging``)
STAGINGS = ("pinned", "pageable")
#: bytes of one pinned piece (NVIDIA's pinned copies reach full speed from 1-4 MB on; one
#: piece is one copy thread's task)
PIECE_BYTES = 8 << 20
#: pieces of a ring beyond its copy threads (being moved by the DMA engine)
DEPTH = 2
#: the smallest piece a transfer is cut into to give every copy thread a piece
PART_BYTES = 2 << 20
#: the most host threads that copy (the H100 machine's memcpy: 44 GB/s from 16 threads)
MAX_THREADS = 16
#: transfers below this go straight from numpy's memory
MIN_BYTES = 1 << 16
#: pinned memory the pool of one device keeps between calls (a numpy call's two rings of 16
#: threads hold 2 x 18 x 8 MB)
PINNED_POOL_BYTES = 512 << 20


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
    """One piece: ``dst[...] = src`` (cast). The copy threads run nothing else: every OpenCL
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
    at most ``limit`` elements (:meth:`pieces`) and the view of ``a`` that holds a piece
    (:meth:`part`, a shape to copy to or from). A C-contiguous or 1-D array is one run of elements; otherwise the ranges are
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


def _all_done(events) -> bool:
    return all(_done(e) for e in events)


def _granule() -> int:
    """Pinned buffers are lent in multiples of this (sizes repeat, so the pool serves them)."""
    return max(1, PIECE_BYTES // 4)


def lend_pinned(device, nbytes: int | None = None) -> np.ndarray:
    """A pinned host array of at least ``nbytes`` bytes (uint8; default :data:`PIECE_BYTES`)
    from ``device``'s pool, free to write: the smallest one (up to 4 times the size) whose DMAs
    have completed; else, where one more would take the pool past :data:`PINNED_POOL_BYTES`,
    the oldest fitting one once its DMAs completed (a DMA takes microseconds to a millisecond, a
    pinned allocation milliseconds); else a new one, the size rounded up to a multiple of a
    quarter piece."""
    nbytes = PIECE_BYTES if nbytes is None else int(nbytes)
    g = _granule()
    nbytes = max(g, -(-nbytes // g) * g)
    top = max(4 * nbytes, 2 * PIECE_BYTES)
    state = device.state
    with state.lock:
        fits = sorted(nb for nb in state.pinned if nbytes <= nb <= top and state.pinned[nb])
        for nb in fits:
            free = state.pinned[nb]
            for k, (raw, events) in enumerate(free):
                if _all_done(events):
                    del free[k]
                    return raw
        held = sum(nb * len(v) for nb, v in state.pinned.items())
        oldest = (state.pinned[fits[0]].pop(0) if fits and held + nbytes > PINNED_POOL_BYTES
                  else None)
    if oldest is not None:
        for event in oldest[1]:
            event.wait()
        return oldest[0]
    return _allocate(device, nbytes)


def return_pinned(device, raws, events=None) -> None:
    """Give arrays from :func:`lend_pinned` back, each with the events of the DMAs that may
    still read or write it (``events``: per array a list of events, an event or None); beyond
    :data:`PINNED_POOL_BYTES` they go (once those DMAs have run)."""
    state = device.state
    events = list(events) if events is not None else [None] * len(raws)
    dropped = []
    with state.lock:
        pool = state.pinned
        total = sum(nb * len(v) for nb, v in pool.items())
        for raw, evs in zip(raws, events):
            evs = [] if evs is None else list(evs) if isinstance(evs, (list, tuple)) else [evs]
            if total + raw.nbytes <= PINNED_POOL_BYTES:
                pool.setdefault(raw.nbytes, []).append((raw, evs))
                total += raw.nbytes
            else:
                dropped += evs
    for event in dropped:
        event.wait()


# ------------------------------------------------------------------ transfers through the ring
def _device_dtype(dtype) -> np.dtype:
    """The dtype on the device side: ``dtype`` in native byte order."""
    return np.dtype(dtype).newbyteorder("=")


class PinnedRing:
    """Pinned slots used in turn by one thread's transfers (see the module docstring): one
    more than its copy threads and :data:`DEPTH` for the DMA engine, unless ``pieces`` says.
    The slots lie one after another in one pinned buffer, so consecutive pieces whose copies
    are in go to the device in one DMA (each enqueue costs the calling thread tens of
    microseconds on NVIDIA's driver); each piece's copy between numpy and pinned memory is one
    task of the copy threads. A slot is written again only after the DMAs or the copy that used
    it before have finished. Use as a context manager (or :meth:`close`): the buffer goes back
    to the pool with its last DMAs, which may still run (an upload's data are in pinned memory
    once :meth:`write` returned)."""

    def __init__(self, device, pieces: int | None = None, threads: int | None = None):
        self.device = device
        self.threads = threads or copy_threads()
        self.n = max(1, int(pieces)) if pieces else self.threads + DEPTH
        self._pool = _executor(self.threads) if self.threads > 1 else None
        self._raw = None                  # the lent pinned buffer
        self._busy = []                   # [first byte, end byte, event] of its DMAs
        self._next = 0                    # the slot next in turn

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _layout(self, nbytes: int, items: int = 1) -> int:
        """The slot stride of a transfer of ``nbytes`` (``items`` arrays): :data:`PIECE_BYTES`,
        smaller where that gives every copy thread a piece, not below :data:`PART_BYTES` (a
        multiple of 64 bytes); the buffer grown to hold the slots it uses (its old one back to
        the pool with its DMAs)."""
        per = -(-nbytes // min(self.threads, self.n))
        stride = max(64, min(PIECE_BYTES, max(PART_BYTES, per)) // 64 * 64)
        need = min(self.n, -(-nbytes // stride) + items) * stride
        if self._raw is None or self._raw.nbytes < need:
            if self._raw is not None:
                self.close()
            self._raw = lend_pinned(self.device, need)
        self._next = 0
        return stride

    def _slot(self, j: int, stride: int, nbytes: int) -> np.ndarray:
        """Slot ``j`` (``nbytes`` of it), once the DMAs that used its bytes have completed."""
        lo, hi = j * stride, j * stride + nbytes
        keep = []
        for entry in self._busy:
            if entry[0] < hi and lo < entry[1]:
                entry[2].wait()
            else:
                keep.append(entry)
        self._busy = keep
        return self._raw[lo:hi]

    def _slots(self, stride: int) -> int:
        return max(1, min(self.n, self._raw.nbytes // stride))

    def _copy_piece(self, rows, p0, p1, flat, into_piece: bool):
        """The task that copies elements [p0, p1) between the numpy array of ``rows`` and the
        slot's ``flat`` view (into the slot where ``into_piece``)."""
        part = rows.part(p0, p1)
        view = flat.reshape(part.shape)
        dst, src = (view, part) if into_piece else (part, view)
        if self._pool is None:
            return _Later(_copy, dst, src)
        return self._pool.submit(_copy, dst, src)

    def write(self, queue, buf, src: np.ndarray, offset: int = 0, dtype=None) -> list:
        """Enqueue the copy of the numpy ``src`` (any layout; cast to ``dtype``, default its
        own, in native byte order) into the buffer ``buf`` at byte ``offset``, in C order,
        piece by piece. Returns once every byte is in pinned memory (``src`` may go), with the
        DMA events (the last ones may still run)."""
        return self.write_many(queue, [(buf, src, offset, dtype)])

    def write_many(self, queue, items) -> list:
        """:meth:`write` of several arrays, ``items`` of ``(buf, src, offset, dtype)``, as one
        stream of pieces: the copy threads go from one array to the next without waiting for
        the last pieces of each (a call's inputs: one drain instead of one per array)."""
        import pyopencl as cl
        items = [(buf, src, offset, _device_dtype(dtype or src.dtype))
                 for buf, src, offset, dtype in items if src.size]
        if not items:
            return []
        stride = self._layout(sum(src.size * dt.itemsize for _, src, _, dt in items),
                              len(items))
        n = self._slots(stride)
        events, pending = [], deque()   # pending: (slot, its copy, item, device byte, bytes)
        filling = max(1, min(self.threads, n - 1))      # pieces being copied at once

        def send():                     # the oldest piece, and the next ones already in
            j, copy, k, dst, nb = pending.popleft()
            copy.result()
            last = j
            while (pending and nb % stride == 0 and pending[0][0] == last + 1
                   and pending[0][2] == k and pending[0][3] == dst + nb
                   and pending[0][1].done()):
                last, c, _, _, more = pending.popleft()
                c.result()
                nb += more
            lo = j * stride
            ev = cl.enqueue_copy(queue, items[k][0], self._raw[lo:lo + nb], dst_offset=dst,
                                 is_blocking=False)
            queue.flush()
            self._busy.append([lo, lo + nb, ev])
            events.append(ev)

        try:
            for k, (_, src, offset, dtype) in enumerate(items):
                isz = dtype.itemsize
                rows = _Rows(src, stride // isz)
                for p0, p1 in rows.pieces():
                    if len(pending) >= filling:
                        send()
                    j = self._next
                    self._next = (j + 1) % n
                    flat = self._slot(j, stride, (p1 - p0) * isz).view(dtype)
                    pending.append((j, self._copy_piece(rows, p0, p1, flat, True), k,
                                    offset + p0 * isz, (p1 - p0) * isz))
            while pending:
                send()
        except BaseException:
            _wait([c for _, c, _, _, _ in pending], quiet=True)   # nothing writes the slots
            raise
        return events

    def read(self, queue, buf, dest: np.ndarray, offset: int = 0, wait_for=None,
             dtype=None) -> None:
        """Copy the buffer ``buf`` from byte ``offset`` (``dest.size`` elements of ``dtype``,
        default dest's, native byte order, in C order) into the numpy ``dest`` (any layout;
        cast), blocking: DMAs of groups of consecutive pieces run ahead while the threads copy
        pieces out."""
        import pyopencl as cl
        dtype = _device_dtype(dtype or dest.dtype)
        if dest.size == 0:
            return
        isz = dtype.itemsize
        stride = self._layout(dest.size * isz)
        rows = _Rows(dest, stride // isz)
        n = self._slots(stride)
        full = stride // isz
        group = max(1, min(self.threads // 8, n // 4))   # pieces per DMA (2 of 16 threads)
        ahead = max(1, min(DEPTH, n - 1))   # DMAs enqueued ahead of the pieces copied out
        dmas = deque()                    # (event, [(slot, first, end element)]): not copied
        copying = deque()                 # the copies out of slots, oldest first
        used = 0                          # slots in a DMA or being copied out

        def start():                      # the oldest DMA landed: its pieces copied out
            ev, pieces = dmas.popleft()
            ev.wait()
            for j, p0, p1 in pieces:
                flat = self._raw[j * stride:j * stride + (p1 - p0) * isz].view(dtype)
                copying.append(self._copy_piece(rows, p0, p1, flat, False))

        pieces = rows.pieces()
        nxt = next(pieces, None)
        first = True
        try:
            while nxt is not None:
                j0 = self._next
                while n - used < min(group, n - j0):   # the slots next in turn: emptied
                    if not copying:
                        start()
                    copying.popleft().result()
                    used -= 1
                batch = []
                while (nxt is not None and len(batch) < min(group, n - used, n - j0)
                       and (not batch or batch[-1][2] - batch[-1][1] == full)):
                    batch.append((j0 + len(batch), *nxt))
                    nxt = next(pieces, None)
                self._next = (j0 + len(batch)) % n
                used += len(batch)
                p0, p1 = batch[0][1], batch[-1][2]
                target = self._slot(j0, stride, (p1 - p0) * isz)
                ev = cl.enqueue_copy(queue, target, buf, src_offset=offset + p0 * isz,
                                     wait_for=wait_for if first else None, is_blocking=False)
                first = False
                queue.flush()
                self._busy.append([j0 * stride, j0 * stride + target.nbytes, ev])
                dmas.append((ev, batch))
                while len(dmas) > ahead:
                    start()
            while dmas:
                start()
            _wait(copying)
        except BaseException:
            _wait(copying, quiet=True)    # nothing writes ``dest`` once this raises
            for ev, _ in dmas:            # nor into the slots
                ev.wait()
            raise

    def close(self) -> None:
        """Give the buffer back to the pool with its DMAs (which may still run: the pool lends
        it again once they have completed)."""
        if self._raw is not None:
            return_pinned(self.device, [self._raw], [[e for _, _, e in self._busy]])
        self._raw, self._busy, self._next = None, [], 0


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


def upload_many(device, queue, pairs, ring: PinnedRing | None = None) -> list:
    """:func:`upload_into` of each ``(device array, numpy array)`` of ``pairs``, the pinned
    ones as one stream through ``ring`` (or a ring of its own; :meth:`PinnedRing.write_many`).
    Non-blocking; returns the events."""
    pairs = [(arr, np.asarray(host)) for arr, host in pairs]
    big = [(arr, host) for arr, host in pairs if host.nbytes >= MIN_BYTES]
    if not big or not pinned(device):
        return [e for arr, host in pairs for e in upload_into(device, queue, arr, host)]
    events = [e for arr, host in pairs if host.nbytes < MIN_BYTES
              for e in upload_into(device, queue, arr, host)]
    items = [(arr.base_data, host, arr.offset, arr.dtype) for arr, host in big]
    if ring is not None:
        return events + ring.write_many(queue, items)
    with PinnedRing(device) as own:
        return events + own.write_many(queue, items)


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
    _wait(in_parts_started(n, fn, nbytes))


def in_parts_started(n: int, fn, nbytes: int) -> list:
    """:func:`in_parts` without waiting: the parts' futures (pass them to :func:`finish`);
    a small pass runs on the calling thread before this returns (no futures)."""
    threads = min(copy_threads(), n, max(1, int(nbytes) // PART_BYTES))
    if threads <= 1:
        fn(0, n)
        return []
    step = -(-n // threads)
    pool = _executor(copy_threads())
    return [pool.submit(fn, s, min(n, s + step)) for s in range(0, n, step)]


def finish(futures) -> None:
    """Wait for the parts of :func:`in_parts_started` (the first error raised once all have
    finished)."""
    _wait(futures)
