"""The one chunk loop: chunk i + 1's upload and chunk i - 1's download overlap chunk i's compute.

Every batched algorithm whose input does not fit the device in one piece (``chunk_sizes``)
runs its chunks through :func:`run_pipelined` with three callbacks per chunk, each given the
chunk's index, item range and a *slot* (which of ``slots`` buffer sets it uses):

- ``upload(i, start, stop, slot, queue) -> [events]`` puts the chunk's inputs on the device;
- ``compute(i, start, stop, slot, wait_for) -> [events]`` launches its kernels on the device
  queue (after ``wait_for``);
- ``download(i, start, stop, slot, queue, wait_for) -> [events and callables]`` enqueues the
  copies (or maps) of its results after ``wait_for``; callables in the list are run once those
  events have completed (host copies out of staging arrays, fix-ups of the result).

Order of work (pipelined, the default): compute(i) is enqueued and flushed first; then, while
the device runs it, the host finishes the delivery of an earlier chunk and does upload(i + 1).
On a device with its own memory the copies are OpenCL transfers on a second queue
(:func:`copy_queue`), download(i - 1) enqueued behind compute(i). On a CPU device that shares
host memory an upload is a memcpy into an aligned staging array, or nothing when the device
uses numpy's memory in place, done on the calling thread while the device's threads compute
(numpy's copy releases the GIL); a download is a map enqueued on the device queue right behind
its chunk's kernels (and a memcpy out of staging). A slot is reused only after the download of
the chunk that used it before has finished.

The option ``pipeline=False`` (``clts.set_options``; ``CLTS_PIPELINE=0``) runs the same chunks
strictly one after another on the device queue (upload, compute, download, wait), one slot:
the benchmark's baseline and the tests' reference. Results are bit-identical either way.

:class:`ChunkIO` holds the per-slot buffers the callbacks of one call use.
"""
from __future__ import annotations

import math

import numpy as np

from .. import options
from . import staging
from .faults import enter_chunk
from .memory import (host_array, host_ptr_alignment, is_svm, keep_on_simulator, lend_staging,
                     progress, return_staging, scratch)



def pipelined() -> bool:
    """Whether chunk loops overlap transfers and compute (the ``pipeline`` option)."""
    return options.get("pipeline")


def copy_queue(device):
    """A second in-order queue on the device's context, for transfers that overlap compute."""
    return device.state.queue_for_copies()


def _finish(items):
    """Wait for the events of ``items``, then run its callables."""
    items = list(items or ())
    events = [e for e in items if not callable(e)]
    if events:
        import pyopencl as cl
        cl.wait_for_events(events)
    for f in items:
        if callable(f):
            f()


def run_pipelined(device, chunks, *, upload, compute, download, slots: int = 2,
                  desc: str = "", unit: str = "chunk", disable=None):
    """Run ``chunks`` ([(start, stop), ...] of one batch) through the callbacks (see the module
    docstring), overlapping transfers with compute unless :func:`pipelined` is off or there is
    a single chunk. A progress bar counts finished chunks (``disable``: as
    :func:`clts.runtime.memory.progress`); the chunk each callback works on is recorded for the
    error that names it (``faults.with_smaller_chunks``). On an error the queues are drained
    before it propagates, so no transfer still writes into the caller's arrays."""
    chunks = [(int(a), int(b)) for a, b in chunks]
    n = len(chunks)
    if n == 0:
        return
    total = chunks[-1][1]
    bar = progress(range(n), desc=desc, unit=unit, disable=disable)
    tick = iter(bar)

    def enter(i):
        enter_chunk(i, chunks[i][0], chunks[i][1], n, total)

    def done(items):
        _finish(items)
        next(tick, None)

    qd = device.queue
    try:
        if n == 1 or slots < 2 or not pipelined():
            for i, (a, b) in enumerate(chunks):
                enter(i)
                _finish(upload(i, a, b, 0, qd))
                comp = compute(i, a, b, 0, []) or []
                done(download(i, a, b, 0, qd, comp) or [])
            qd.finish()                     # the unmaps (see ChunkIO.fetch)
            return
        # Uploads get the copy queue (ChunkIO on a device that shares host memory enqueues
        # nothing: a memcpy or nothing). Downloads on such a device are maps on the device
        # queue, each right behind its chunk's kernels (a map waiting on a second queue slows
        # the kernels: docs/performance.md, "Figures behind the code"); elsewhere they go on
        # the copy queue, chunk i - 1's enqueued once chunk i's kernels are. Dependencies
        # between the two queues are waited for on the host, never put in a wait list (same
        # page); the device queue always holds the next chunk's kernels while the host waits.
        shares = host_ptr_alignment(device) is not None
        qx = copy_queue(device)
        pending = [None] * slots          # per slot: the download items of its last chunk
        enter(0)
        up = upload(0, *chunks[0], 0, qx) or []
        qx.flush()
        comp_prev = None
        for i, (a, b) in enumerate(chunks):
            slot = i % slots
            enter(i)
            _finish(up)                    # see above: waited on the host
            up = []
            comp = compute(i, a, b, slot, up) or []
            if shares:
                pending[slot] = download(i, a, b, slot, qd, comp) or []
            qd.flush()
            if i > 0 and not shares:       # chunk i - 1's results, behind chunk i's kernels
                j = i - 1
                enter(j)
                _finish(comp_prev)         # done or nearly: chunk i is queued behind it
                comp_prev = []
                pending[j % slots] = download(j, *chunks[j], j % slots, qx, comp_prev) or []
                qx.flush()
            if i + 1 < n:                  # chunk i + 1's inputs, while chunk i computes
                s = (i + 1) % slots
                if pending[s] is not None:
                    items, pending[s] = pending[s], None
                    done(items)
                enter(i + 1)
                up = upload(i + 1, *chunks[i + 1], s, qx) or []
                qx.flush()
            comp_prev = comp
        if not shares:
            enter(n - 1)
            _finish(comp_prev)
            comp_prev = []
            pending[(n - 1) % slots] = download(n - 1, *chunks[-1], (n - 1) % slots, qx,
                                                comp_prev) or []
            qx.flush()
        for k in range(n, n + slots):       # oldest first
            if pending[k % slots] is not None:
                items, pending[k % slots] = pending[k % slots], None
                done(items)
        qd.finish()                         # the unmaps (see ChunkIO.fetch)
    except BaseException:
        for q in (qd, device.state.copy_queue):
            if q is not None:
                try:
                    q.finish()
                except Exception:          # noqa: BLE001 - the original error matters
                    pass
        raise
    finally:
        if hasattr(bar, "close"):
            bar.close()


def aligned_multiple(device, row_bytes: int, multiple: int = 1) -> int:
    """``multiple`` (items per chunk) made a multiple of the rows that span a whole number of
    the device's host-pointer alignments, so that every chunk of an aligned output array (from
    ``memory.host_empty``) starts aligned and is written in place (the Intel CPU runtime: 4096
    bytes; unchanged on devices that take any pointer or copy anyway)."""
    al = host_ptr_alignment(device)
    if not al or al <= 1 or row_bytes <= 0:
        return multiple
    rows = al // math.gcd(int(row_bytes), al)
    return multiple * rows // math.gcd(multiple, rows)


def slot_scratch(device, shape, dtype):
    """A device array for a slot, from a pool of its own: the scratch pool hands a buffer
    back as soon as its array is dropped, while kernels on the device queue may still use it
    (safe for them, the queue is in order); a transfer on the copy queue would race them.
    On Oclgrind a zero-filled buffer, as STL's temporaries there: its uninitialised-value
    checker misreads buffers that kernels of an earlier call wrote."""
    if device.info.simulator:
        import pyopencl.array as cla
        return keep_on_simulator(device, cla.to_device(device.queue, np.zeros(shape, dtype)))
    return scratch(device, shape, dtype, pool_name="slots")


def device_wait(device, events) -> None:
    """Make the device queue's next commands wait for ``events`` (uploads on another queue),
    for compute callbacks whose launches take no ``wait_for``."""
    # events of the device queue itself are in order already; a barrier costs the Intel CPU
    # runtime dearly (docs/performance.md, "Figures behind the code")
    q = device.queue
    events = [e for e in events or () if e is not None and e.command_queue != q]
    if events:
        import pyopencl as cl
        cl.enqueue_barrier(device.queue, wait_for=events)


def device_marker(device) -> list:
    """``[event]`` that completes when everything this thread enqueued on the device queue
    so far has: its last kernel's event (the queue is in order). Not an OpenCL marker: one
    enqueued behind a kernel slowed that kernel on the Intel CPU runtime (docs/performance.md,
    "Figures behind the code")."""
    from .launch import last_event
    ev = last_event()
    if ev is not None and ev.command_queue == device.queue:
        return [ev]
    import pyopencl as cl
    return [cl.enqueue_marker(device.queue)]


class ChunkIO:
    """The device arrays of one call's chunk inputs and outputs, one set per slot.

    Three ways, chosen per device (see ``memory.host_ptr_alignment``):

    - the device uses host memory in place and the numpy array's pointer suits it (pocl: any
      element-aligned C-contiguous array in a ``CL_MEM_USE_HOST_PTR`` buffer; the Intel CPU
      runtime: the same, the pointer passed as fine-grained system SVM): no copy at all;
    - it uses host memory in place but the pointer does not suit it (a driver that wants
      4096-byte aligned host pointers and has no system SVM; an address that is not a multiple
      of the element size), or the data are not contiguous or not in native byte order: a
      memcpy into a pooled aligned staging array of the slot, used in place;
    - it has its own memory (discrete GPUs, ``CLTS_ZERO_COPY=0``, the simulator): an OpenCL
      transfer on the given queue into a pooled device array of the slot, through pinned host
      pieces where the profile says so (``runtime.staging``: GPUs; see ``runtime.staging``).

    Use as a context manager around :func:`run_pipelined`: leaving it returns the staging
    arrays to the device's pool.
    """

    def __init__(self, device):
        self.device = device
        self.align = host_ptr_alignment(device)
        # a device with its own memory: transfers through pinned pieces (``runtime.staging``),
        # one ring for uploads, one for downloads (an upload in flight never stalls a download)
        self.pinned = self.align is None and staging.pinned(device)
        self._rings = ((staging.PinnedRing(device), staging.PinnedRing(device)) if self.pinned
                       else None)
        self._host = {}           # (slot, key) -> host array (staging, or upload source)
        self._dev = {}            # (slot, key) -> flat pooled device array
        self._outs = {}           # slot -> [(device array, dest, host view or None, in place)]
        self._lent = []           # staging arrays from the device's pool

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._rings is not None:
            for ring in self._rings:
                ring.close()
        return_staging(self.device, self._lent)
        self._lent, self._host, self._dev, self._outs = [], {}, {}, {}
        return False

    # -- host side -----------------------------------------------------------------------
    def host(self, slot, key, shape, dtype) -> np.ndarray:
        """A C-contiguous host array of ``shape`` for slot ``slot``'s input ``key`` to fill
        before :meth:`send`: a staging array the device uses in place where it shares host
        memory, else the source of the transfer. Grows as needed, reused across chunks."""
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        raw = self._host.get((slot, key))
        if raw is None or raw.nbytes < nbytes:
            raw = self._lend(max(nbytes, 1))
            self._host[(slot, key)] = raw
        return raw[:nbytes].view(dtype).reshape(shape)

    def _lend(self, nbytes):
        if self.align is None:
            return np.empty(nbytes, np.uint8)
        raw = lend_staging(self.device, nbytes)
        self._lent.append(raw)
        return raw

    def temp(self, slot, key, shape, dtype):
        """A device array of slot ``slot`` that is not transferred (pooled, grows as needed)."""
        dtype = np.dtype(dtype)
        size = max(1, int(np.prod(shape, dtype=np.int64)))
        flat = self._dev.get((slot, key))
        if flat is None or flat.dtype != dtype or flat.size < size:
            flat = slot_scratch(self.device, (size,), dtype)
            self._dev[(slot, key)] = flat
        return flat[:size].reshape(shape)

    # -- inputs --------------------------------------------------------------------------
    def send(self, slot, key, h, queue):
        """``(device array, [events])`` of the host array ``h`` (from :meth:`host`, or any
        C-contiguous array that stays alive until the chunk is computed)."""
        if h.size == 0:
            return self.temp(slot, key, h.shape, h.dtype), []
        arr = host_array(self.device, h) if self.align is not None else None
        if arr is not None:
            return arr, []
        if self.align is not None:       # not usable in place: stage it (a memcpy)
            view = self.host(slot, key, h.shape, h.dtype)
            if not np.shares_memory(view, h):
                np.copyto(view, h)
            return host_array(self.device, view), []
        d = self.temp(slot, key, h.shape, h.dtype)
        return d, staging.upload_into(self.device, queue, d, h,
                                      self._rings[0] if self.pinned else None)

    def put(self, slot, key, src, queue, dtype=None, pad: int = 0, cols: int | None = None):
        """:meth:`send` of ``src`` (any layout; cast to ``dtype``): in place where the device
        can use it, through pinned pieces straight from ``src`` where the device stages so
        (any layout: one copy, by the copy threads), else copied once into the slot's host
        array. ``cols``: the rows of a 2-D ``src`` laid out ``cols`` wide, zeros after their
        values; ``pad``: that many zeros after the whole; either gives a flat device array (C
        order). A transfer reads ``src`` after this returns: it must stay alive until the
        chunk is computed."""
        dtype = np.dtype(dtype or src.dtype)
        flat = bool(pad) or cols is not None
        if src.dtype == dtype and src.flags.c_contiguous and not flat:
            return self.send(slot, key, src, queue)
        n = src.size
        wide = cols is not None and cols != src.shape[-1]
        if self.pinned and src.nbytes >= staging.MIN_BYTES and not wide:
            d = self.temp(slot, key, (n + pad,) if flat else src.shape, dtype.newbyteorder("="))
            events = staging.upload_into(self.device, queue, d[:n] if flat else d, src,
                                         self._rings[0])
            if pad:
                events += staging.upload_into(self.device, queue, d[n:], np.zeros(pad, dtype))
            return d, events
        size = (src.shape[0] * cols if wide else n) + pad
        h = self.host(slot, key, (size,) if flat else src.shape, dtype)
        if wide:
            rows = h[:size - pad].reshape(src.shape[0], cols)
            np.copyto(rows[:, :src.shape[1]], src, casting="unsafe")
            rows[:, src.shape[1]:] = 0
        else:
            np.copyto(h[:n].reshape(src.shape) if flat else h, src, casting="unsafe")
        h[size - pad:] = 0
        return self.send(slot, key, h, queue)

    def put_many(self, slot, entries, queue):
        """:meth:`put` of several inputs, ``entries`` of ``(key, src, dtype)``: ``([device
        arrays], [events])``. Where the device stages pinned, the inputs that need no padding
        go as one stream through the upload ring (``staging.upload_many``: no drain between
        them)."""
        arrays, events, batch = [], [], []
        for key, src, dtype in entries:
            dtype = np.dtype(dtype or src.dtype)
            if self.pinned and src.size and src.nbytes >= staging.MIN_BYTES:
                d = self.temp(slot, key, src.shape, dtype.newbyteorder("="))
                batch.append((d, src))
                arrays.append(d)
            else:
                d, ev = self.put(slot, key, src, queue, dtype)
                arrays.append(d)
                events += ev
        if batch:
            events += staging.upload_many(self.device, queue, batch, self._rings[0])
        return arrays, events

    # -- outputs -------------------------------------------------------------------------
    def out(self, slot, key, dest: np.ndarray):
        """A device array the kernels of slot ``slot``'s chunk write, delivered into ``dest``
        (numpy, any layout) by :meth:`fetch`."""
        outs = self._outs.setdefault(slot, [])
        if dest.size == 0:
            return self.temp(slot, key, dest.shape, dest.dtype)
        if self.align is not None:
            arr = host_array(self.device, dest, write=True)
            if arr is not None:
                outs.append((arr, dest, None, True))
                return arr
            view = self.host(slot, key, dest.shape, dest.dtype)
            arr = host_array(self.device, view, write=True)
            outs.append((arr, dest, view, True))
            return arr
        arr = self.temp(slot, key, dest.shape, dest.dtype)
        view = (None if dest.flags.c_contiguous or self.pinned
                else self.host(slot, key, dest.shape, dest.dtype))
        outs.append((arr, dest, view, False))
        return arr

    def fetch(self, slot, queue, wait_for):
        """Enqueue the delivery of slot ``slot``'s outputs after ``wait_for``: the items for
        ``run_pipelined``'s ``download`` (events, then host copies to run after them)."""
        import pyopencl as cl
        items, after = [], []
        for arr, dest, view, mapped in self._outs.pop(slot, []):
            if mapped and is_svm(arr):
                # system SVM: the host sees what the kernels wrote once they completed
                if not wait_for:
                    wait_for = [cl.enqueue_marker(queue)]
                items += [e for e in wait_for if e not in items]
                if view is not None:
                    after.append(lambda d=dest, v=view: np.copyto(d, v))
            elif mapped:
                # mapped, the host memory holds what the kernels wrote (no copy on a device
                # that shares it); the staged ones are copied out before the unmap
                m, ev = cl.enqueue_map_buffer(queue, arr.data, cl.map_flags.READ, 0,
                                              (arr.nbytes,), np.uint8, wait_for=wait_for,
                                              is_blocking=False)
                items.append(ev)
                if view is not None:
                    after.append(lambda d=dest, v=view: np.copyto(d, v))
                # the unmap is not waited for: later commands on this (in-order) queue, the
                # only ones to use this memory again, run after it; the loop ends with a
                # finish of the queue
                after.append(lambda m=m, q=queue: m.base.release(q))
            elif self.pinned:
                # through the pinned pieces, on the host once the kernels ran (the pieces'
                # DMAs and copies out alternate; the device runs the next chunk meanwhile)
                items += [e for e in wait_for or () if e not in items]
                after.append(lambda d=dest, a=arr, q=queue: staging.download(
                    self.device, a, d, q, ring=self._rings[1]))
            else:
                target = dest if view is None else view
                items.append(cl.enqueue_copy(queue, target, arr.data, wait_for=wait_for,
                                             is_blocking=False))
                if view is not None:
                    after.append(lambda d=dest, v=view: np.copyto(d, v))
        return items + after
