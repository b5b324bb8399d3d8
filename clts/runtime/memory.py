"""Device memory of one call: chunking by device limits, host memory used in place, transfers.

- :func:`chunk_sizes` splits a batch along its batch axis into chunks whose buffers fit the
  device (``max_mem_alloc_size``, a share of global memory; the ``max_chunk`` option caps
  them);
  ``clts.runtime.pipeline.run_pipelined`` runs them with the next
  chunk's upload and the previous one's download overlapping the current one's compute.
- On CPU devices numpy memory is used in place (:func:`host_array`: a ``CL_MEM_USE_HOST_PTR``
  buffer, or the pointer itself on a device with fine-grained system SVM, the Intel CPU
  runtime) where the driver accepts its pointer, else through pooled aligned staging arrays
  (:func:`lend_staging`; ``pipeline.ChunkIO`` uses both); the option ``zero_copy=False`` makes
  every transfer a real one.
- :func:`scratch` gives temporaries from a per-device memory pool.
"""
from __future__ import annotations

import sys
import threading
import weakref
from collections import deque

import numpy as np

from .. import options
from ..errors import DeviceError
from . import capturing
from .commands import Recopy, Refill  # noqa: F401 (Refill: memory.Refill, as before)
from .fresh_arrays import new_array

#: share of global memory one call may use (the rest is for the driver, other buffers, spills)
GLOBAL_FRACTION = 0.6
#: bytes of a buffer beyond its items' (padding to the lanes, a few zeros after the rows) that
#: chunking leaves room for under the max allocation
ALLOC_HEADROOM = 4096


def chunk_sizes(n_items: int, per_item_bytes, device, *, fixed_bytes: int = 0,
                max_items: int | None = None, multiple: int = 1) -> list[tuple[int, int]]:
    """Split ``n_items`` into (start, stop) chunks that fit ``device``.

    ``per_item_bytes``: bytes per batch item of each device buffer (a list, one per buffer);
    no buffer may exceed ``max_alloc`` (less ``ALLOC_HEADROOM`` for its padding) and all
    together stay under a share of global memory.
    ``fixed_bytes``: bytes that do not scale with the batch. ``multiple``: chunk sizes are a
    multiple of it (except the last). The ``max_chunk`` option (items) caps chunks.
    """
    # (a list or a number in plain Python: numpy's atleast_1d and its scalars cost ~10 µs)
    per = ([int(b) for b in per_item_bytes] if isinstance(per_item_bytes, (list, tuple))
           else [int(b) for b in np.atleast_1d(per_item_bytes)])
    if n_items <= 0:
        return []
    budget = int(device.global_mem * GLOBAL_FRACTION) - int(fixed_bytes)
    total = max(1, sum(per))
    limit = budget // total
    for b in per:
        if b > 0:
            limit = min(limit, max(device.max_alloc - ALLOC_HEADROOM, 0) // b)
    if max_items:
        limit = min(limit, int(max_items))
    cap = options.get("max_chunk")
    if cap:
        limit = min(limit, cap)
    if limit < 1:
        raise DeviceError(f"one item needs {total + fixed_bytes} bytes, more than device "
                          f"{device} can hold (max allocation {device.max_alloc}, global "
                          f"memory {device.global_mem})")
    if limit >= n_items:
        return [(0, n_items)]
    if multiple > 1 and limit >= multiple:
        limit -= limit % multiple
    return [(s, min(n_items, s + limit)) for s in range(0, n_items, limit)]


#: seconds a loop runs before its progress bar appears (short calls print nothing)
PROGRESS_DELAY = 0.5


def progress(iterable, *, total=None, desc="", unit="chunk", disable=None):
    """A tqdm progress bar when tqdm is installed, there is more than one step and the loop
    lasts longer than :data:`PROGRESS_DELAY` seconds."""
    if total is None:
        try:
            total = len(iterable)
        except TypeError:
            total = None
    if disable is None:
        disable = (total is not None and total <= 1) or not options.get("progress")
    if disable:
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, leave=False,
                delay=PROGRESS_DELAY)


def to_device(device, array, dtype=None):
    """Upload a numpy array (made C-contiguous, cast to ``dtype``) as a pyopencl Array."""
    import pyopencl.array as cla
    if isinstance(array, cla.Array):
        if dtype is not None and array.dtype != np.dtype(dtype):
            from .launch import pyopencl_kernels
            with pyopencl_kernels():
                return array.astype(dtype)
        return array
    a = np.ascontiguousarray(array, dtype=dtype)
    return cla.to_device(device.queue, a)


def fill(device, arr, value):
    """Fill the device array ``arr`` with the scalar ``value`` (cast to its dtype) on the
    device's queue; returns ``arr``. A fill command (``clEnqueueFillBuffer``), not pyopencl's
    ``Array.fill``, whose shared kernel object is not safe from several threads
    (``runtime.launch.pyopencl_kernels``); a non-contiguous array, one of 2 GiB or more on
    NVIDIA (pyopencl's noted driver bug with large fills) or one on Oclgrind (whose
    uninitialised-value tracking does not see fill commands) takes pyopencl's kernel under the
    lock."""
    from .launch import pyopencl_kernels
    pattern = np.asarray(value, dtype=arr.dtype).reshape(1)
    if not arr.size:
        return arr
    big_on_nvidia = arr.nbytes >= 2**31 and device.vendor.lower().startswith("nvidia")
    # Oclgrind's uninitialised-value tracking sees a kernel's stores, not a fill command's
    if contiguous(arr) and not big_on_nvidia and not device.info.simulator:
        go = Refill(arr.queue or device.queue, arr.base_data, pattern, arr.offset, arr.nbytes)
        arr.add_event(go())
        if capturing.active:
            capturing.captured(go)
    else:
        with pyopencl_kernels():
            arr.fill(pattern[0])
    return arr


def copy(device, dst, src, nbytes, *, dst_offset=0, src_offset=0):
    """Copy ``nbytes`` from the device buffer ``src`` (at byte ``src_offset``) into ``dst`` (at
    ``dst_offset``) on the device's queue; returns the event. A copy command
    (``clEnqueueCopyBuffer``), except on Oclgrind, whose uninitialised-value tracking does not
    see copy commands (every value copied would read as uninitialised in the next kernel):
    there a byte-copy kernel of pyopencl's, under the lock of ``runtime.launch.pyopencl_kernels``."""
    if not nbytes:
        return None
    if not device.info.simulator:
        go = Recopy(device.queue, dst, src, int(nbytes), int(dst_offset), int(src_offset))
        if capturing.active:
            capturing.captured(go)
        return go()
    capturing.captured(None)        # a pyopencl kernel: not made again by a replay
    import pyopencl.array as cla
    from .launch import pyopencl_kernels
    d = cla.Array(device.queue, (int(nbytes),), np.uint8, data=dst, offset=int(dst_offset))
    s = cla.Array(device.queue, (int(nbytes),), np.uint8, data=src, offset=int(src_offset))
    with pyopencl_kernels():
        return _byte_copy(device)(d, s)


def _byte_copy(device):
    """pyopencl's element-wise byte-copy kernel of the device's context (built once)."""
    st = device.state
    with st.lock:
        k = st.constants.get("byte_copy")
        if k is None:
            from pyopencl.elementwise import ElementwiseKernel
            k = st.constants["byte_copy"] = ElementwiseKernel(
                device.context, "uchar *d, const uchar *s", "d[i] = s[i]", "clts_byte_copy")
    return k


#: (shape, dtype) -> (shape, dtype, C strides, size) of :func:`empty_device`'s arrays
_GEOMETRY: dict = {}
#: whether pyopencl's Array takes its internal fast-constructor keywords (checked once)
_FAST_ARRAY = None


def _fast_array_ok() -> bool:
    global _FAST_ARRAY
    if _FAST_ARRAY is None:
        import inspect

        import pyopencl.array as cla
        try:
            names = inspect.signature(cla.Array.__init__).parameters
        except (TypeError, ValueError):     # pragma: no cover
            names = {}
        _FAST_ARRAY = all(k in names for k in ("_fast", "_size", "_context", "_queue"))
    return _FAST_ARRAY


def array_geometry(shape, dtype):
    """``(shape, dtype, C strides, size)`` of an array: ints, a numpy dtype, derived once per
    ``shape`` and ``dtype`` (a cache of the last 4,096)."""
    key = (shape, dtype)
    try:
        geo = _GEOMETRY.get(key)
    except TypeError:                       # an unhashable shape (a list): derive it
        geo, key = None, None
    if geo is None:
        dt = np.dtype(dtype)
        shp = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(map(int, shape))
        if any(s < 0 for s in shp):
            raise ValueError(f"negative dimensions are not allowed: {shp}")
        strides, acc = [], dt.itemsize
        for s in reversed(shp):
            strides.append(acc)
            acc *= max(1, s)
        size = 1
        for s in shp:
            size *= s
        geo = (shp, dt, tuple(reversed(strides)), size)
        if key is not None:
            if len(_GEOMETRY) > 4096:
                _GEOMETRY.clear()
            _GEOMETRY[key] = geo
    return geo


def empty_device(queue, context, shape, dtype, allocator=None):
    """``cla.empty(queue, shape, dtype, allocator=allocator)`` (C order) in a few µs instead of
    20-35: the Array's constructor checks and derives its shape, size and strides through numpy
    on every call (pocl, Cascade Lake 2 cores); here they come from :func:`array_geometry` and
    the array is made as pyopencl's own fast constructor (the one its views use) makes it
    (``fresh_arrays.new_array``). Where a pyopencl lacks it, ``cla.empty``."""
    shp, dt, strides, size = array_geometry(shape, dtype)
    if not _fast_array_ok():                # pragma: no cover - an older / newer pyopencl
        import pyopencl.array as cla
        return cla.empty(queue, shp, dt, allocator=allocator)
    return new_array(queue, context, shp, dt, strides, size, allocator)


def c_contiguous(a) -> bool:
    """``a.flags.c_contiguous`` of a device array, without pyopencl's flags where its strides
    are its shape's C strides: the flags derive both layouts on their first read of each array
    (~13 µs), and a pipeline's inputs are the last call's fresh results."""
    return a.strides == array_geometry(a.shape, a.dtype)[2] or a.flags.c_contiguous


def contiguous(a) -> bool:
    """Whether the device array ``a`` is one block of memory (C- or Fortran-contiguous),
    without pyopencl's ``flags``, which derives them through numpy on its first read of each
    array (~10 µs; a call's fresh arrays are all first reads)."""
    shp, strides = a.shape, a.strides
    c = array_geometry(shp, a.dtype)[2]
    if strides == c:
        return True
    return strides == tuple(reversed(array_geometry(tuple(reversed(shp)), a.dtype)[2]))


def head(a, shape):
    """The first elements of the C-contiguous device array ``a`` (at offset 0) as an array of
    ``shape`` (its memory, its events list shared), through pyopencl's fast constructor: a
    slice and ``reshape`` take 20-60 µs."""
    import pyopencl.array as cla
    shp, dt, strides, size = array_geometry(shape, a.dtype)
    if a.offset or size > a.size or not _fast_array_ok():
        return a[:size].reshape(shp)
    return cla.Array(None, shp, dt, allocator=a.allocator, strides=strides, data=a.base_data,
                     events=a.events, _fast=True, _size=size, _context=a.context,
                     _queue=a.queue)


def reshaped(a, shape):
    """``a.reshape(shape)`` of a C-contiguous device array, the same view (its events list
    shared) made through pyopencl's fast constructor: ~3 µs where ``reshape`` takes 20-40
    (it checks and derives the geometry through numpy); ``a`` itself where it has that shape
    already. Anything else (a numpy array too): ``a.reshape``."""
    if isinstance(a, np.ndarray):
        return a.reshape(shape)
    import pyopencl.array as cla
    shp, dt, strides, size = array_geometry(shape, a.dtype)
    if shp == a.shape and strides == a.strides:
        return a                    # already that shape: no view needed
    # C-contiguous: its strides are the C strides of its shape (pyopencl's ``flags``
    # derives them anew on every read, ~10 µs)
    if (size != a.size or not _fast_array_ok()
            or a.strides != array_geometry(a.shape, a.dtype)[2]):
        return a.reshape(shape)
    return cla.Array(None, shp, dt, allocator=a.allocator, strides=strides, data=a.base_data,
                     offset=a.offset, events=a.events, _fast=True, _size=size,
                     _context=a.context, _queue=a.queue)


def scratch(device, shape, dtype, *, pool_name: str = "scratch"):
    """A temporary device array from the device's memory pool (``pool_name``: another pool
    of the device, e.g. ``"slots"``, the pipeline's slot buffers; see ``DeviceState``).

    A fresh buffer costs the first kernel that touches it a page fault per 4 KB on CPU drivers
    (docs/performance.md, "Figures behind the code"), so temporaries come from a per-device
    pool; ``release_scratch`` gives the held memory back. On a simulator
    (Oclgrind) temporaries are plain buffers kept alive until ``release_scratch``: its
    uninitialised-value tracking misreads a new buffer that reuses a released one's id.
    """
    q, ctx, info = device.queue, device.context, device.info
    if info.simulator:
        return keep_on_simulator(device, empty_device(q, ctx, shape, dtype))
    pool = device.state.pool(pool_name)
    _, dt, _, size = array_geometry(shape, dtype)
    nbytes = size * dt.itemsize
    if (16 * nbytes > 15 * info.max_alloc
            and pool.alloc_size(pool.bin_number(nbytes)) > info.max_alloc):
        # the pool rounds sizes up to its bins (up to 6 % more): a buffer near the max
        # allocation gets its exact size outside the pool, or the driver would refuse it
        return empty_device(q, ctx, shape, dtype)
    return empty_device(q, ctx, shape, dtype, pool)


def keep_on_simulator(device, arr):
    """On Oclgrind keep ``arr`` alive until ``release_scratch`` (see ``scratch``); returns it."""
    if device.info.simulator:
        with device.state.lock:
            device.state.kept.append(arr)
    return arr


def upload_scratch(device, host, ring=None):
    """``host`` copied into a ``scratch`` array (see there), ready for the device queue's next
    commands; ``host`` may go once this returns. Through pinned pieces where the device stages
    its transfers so (``runtime.staging``; through ``ring``, a ``staging.PinnedRing`` a call's
    uploads share, else a ring of its own; the DMA on the device queue, in order before the
    kernels that read it, not waited for), else blocking."""
    from . import staging
    from .capturing import captured
    captured(None)          # a transfer: not made again by a capture's replay
    host = np.asarray(host)
    arr = scratch(device, host.shape, host.dtype.newbyteorder("="))
    if host.nbytes >= staging.MIN_BYTES and staging.pinned(device):
        staging.upload_into(device, device.queue, arr, host, ring)
    else:
        arr.set(np.ascontiguousarray(host, arr.dtype))
    return arr


def release_scratch(device=None):
    """Free the memory the scratch pools hold: of ``device``, or of every device when None."""
    from .devices import _devices, get_device
    devs = list(_devices.values()) if device is None else [get_device(device)]
    for dev in devs:
        dev.state.release_memory()
    if device is None:
        release_results()


# ------------------------------------------------------------------ host memory used in place
#: The alignment at which a CPU device reads and writes a host pointer in place
#: (``CL_MEM_USE_HOST_PTR``, no copy): pocl any, the Intel CPU runtime 4096 bytes (an unaligned
#: pointer costs a copy each way; docs/performance.md, "Figures behind the code"). A device with
#: fine-grained system SVM (the Intel CPU runtime) takes any element-aligned numpy pointer as a
#: kernel argument instead (:func:`system_svm`): alignment 1 there.
HOST_PTR_ALIGNMENT = {"portable computing language": 1}
HOST_PTR_ALIGNMENT_DEFAULT = 4096


def system_svm(device) -> bool:
    """Whether ``device`` (a CPU sharing host memory) takes plain host pointers as kernel
    arguments: OpenCL 2.0 fine-grained system SVM (``clSetKernelArgSVMPointer`` with numpy's
    memory, at any element-aligned address; the Intel CPU runtime has it, pocl 3.1 not)."""
    def probe():
        import pyopencl as cl
        try:
            caps = device.cl_device.svm_capabilities
        except Exception:           # noqa: BLE001 - an OpenCL 1.x driver: no SVM
            return False
        return bool(caps & cl.device_svm_capabilities.FINE_GRAIN_SYSTEM)
    return device.state.constant("memory.system_svm", probe)


def host_ptr_alignment(device) -> int | None:
    """The alignment at which ``device`` uses a host array in place, or None when it does not
    share host memory (discrete GPUs, the Oclgrind simulator). The option ``zero_copy=False``
    turns the in-place path off (every call then copies, as on a discrete GPU)."""
    if device.info.simulator or not options.get("zero_copy"):
        return None
    if device.type != "cpu" or not getattr(device.cl_device, "host_unified_memory", False):
        return None
    if system_svm(device):
        return 1
    return HOST_PTR_ALIGNMENT.get(device.platform.lower(), HOST_PTR_ALIGNMENT_DEFAULT)


def host_array(device, a: np.ndarray, *, write: bool = False):
    """A device array over the memory of the C-contiguous numpy array ``a`` when the device
    uses it in place (see :func:`host_ptr_alignment`), else None (the caller copies).

    On a device with system SVM its ``data`` is a ``pyopencl.SVM`` of ``a`` (a kernel argument
    like a buffer; no map needed: the host sees the kernels' writes once they completed), else
    a ``CL_MEM_USE_HOST_PTR`` buffer: after the kernels that write it, a map of it makes the
    host side current (``pipeline.ChunkIO.fetch``)."""
    al = host_ptr_alignment(device)
    # element-aligned at least: pocl crashed on a float64 array at an odd address
    if (al is None or a.size == 0 or not a.flags.c_contiguous or not a.dtype.isnative
            or a.ctypes.data % max(al, a.dtype.itemsize) or (write and not a.flags.writeable)):
        return None
    import pyopencl as cl
    import pyopencl.array as cla
    if system_svm(device):
        return cla.Array(device.queue, a.shape, a.dtype, data=cl.SVM(_writable_alias(a)))
    mf = cl.mem_flags
    buf = cl.Buffer(device.context, (mf.READ_WRITE if write else mf.READ_ONLY)
                    | mf.USE_HOST_PTR, hostbuf=a)
    return cla.Array(device.queue, a.shape, a.dtype, data=buf)


class _Alias:
    """Keeps the array it aliases alive (see :func:`_writable_alias`)."""
    __slots__ = ("__array_interface__", "of")


def _writable_alias(a: np.ndarray) -> np.ndarray:
    """A writable uint8 view of the memory of ``a`` (read-only inputs too: ``pyopencl.SVM``
    takes only writable buffers; the kernels do not write their inputs) that keeps ``a``
    alive."""
    if a.flags.writeable:
        return a
    alias = _Alias()
    alias.of = a
    alias.__array_interface__ = {"shape": (a.nbytes,), "typestr": "|u1", "version": 3,
                                 "data": (a.ctypes.data, False)}
    return np.asarray(alias)


def is_svm(arr) -> bool:
    """Whether the device array ``arr`` lies in host memory shared by SVM (see
    :func:`host_array`): nothing to map or copy, its host side is current once the kernels
    that write it completed."""
    import pyopencl as cl
    return isinstance(getattr(arr, "base_data", None), cl.SVM)


#: host memory the staging pool of one device keeps between calls
STAGING_POOL_BYTES = 1 << 30


def lend_staging(device, nbytes: int) -> np.ndarray:
    """An aligned host array of ``nbytes`` bytes (uint8) from ``device``'s staging pool."""
    state = device.state
    with state.lock:
        free = state.staging.get(nbytes)
        raw = free.pop() if free else None
    return raw if raw is not None else host_empty(device, (nbytes,), np.uint8)


def return_staging(device, raws) -> None:
    """Give arrays from :func:`lend_staging` back; beyond ``STAGING_POOL_BYTES`` the pool
    drops sizes other than these."""
    state = device.state
    with state.lock:
        pool = state.staging
        for raw in raws:
            pool.setdefault(raw.nbytes, []).append(raw)
        total = sum(nb * len(v) for nb, v in pool.items())
        current = {raw.nbytes for raw in raws}
        for nb in [nb for nb in pool if nb not in current]:
            if total <= STAGING_POOL_BYTES:
                break
            total -= nb * len(pool.pop(nb))


def host_empty(device, shape, dtype) -> np.ndarray:
    """A C-contiguous numpy array for a call's result, aligned for in-place use by ``device``.

    From :data:`RESULT_POOL_MIN_BYTES` up the memory comes from the pool of dropped results
    (:func:`_lend_result`): a fresh allocation of that size is a new mapping whose pages fault
    in, zeroed by the kernel, when the kernels first write them, on every call; memory of
    results the caller has dropped is used again instead."""
    pooled = pooled_empty(shape, dtype)
    if pooled is not None:
        return pooled
    al = host_ptr_alignment(device)
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if al is None or al <= 64:
        return np.empty(shape, dtype)
    raw = np.empty(nbytes + al, np.uint8)
    off = (-raw.ctypes.data) % al
    return raw[off:off + nbytes].view(dtype).reshape(shape)


# ------------------------------------------------------------------ pooled result memory
#: results from this size up are lent from the pool of dropped results (smaller ones: malloc's
#: own free lists serve them again without new pages)
RESULT_POOL_MIN_BYTES = 1 << 20
#: bytes of dropped results the process keeps for later calls (beyond, the oldest sizes go)
RESULT_POOL_BYTES = 1 << 30
#: alignment of pooled results: a page (every device's host-pointer alignment, see above)
RESULT_ALIGNMENT = 4096

_results: dict = {}              # nbytes -> [page-aligned uint8 arrays free for lending]
_returned: deque = deque()       # raw arrays of dropped results, not yet in _results
_results_lock = threading.Lock()


def pooled_empty(shape, dtype) -> np.ndarray | None:
    """A page-aligned C-ordered array from the pool of dropped results (see
    :func:`host_empty`), or None below :data:`RESULT_POOL_MIN_BYTES`."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes < RESULT_POOL_MIN_BYTES:
        return None
    return _lend_result(nbytes).view(dtype).reshape(shape)


class _ResultMemory:
    """The base of a pooled result: every numpy view of the result keeps it alive; when the
    last one is dropped its memory goes back to the pool (``weakref.finalize``)."""
    __slots__ = ("__array_interface__", "__weakref__")


def _lend_result(nbytes: int) -> np.ndarray:
    """``nbytes`` page-aligned bytes (uint8) that return to the pool once dropped."""
    with _results_lock:
        _settle(nbytes)
        free = _results.get(nbytes)
        raw = free.pop() if free else None
    if raw is None:
        big = np.empty(nbytes + RESULT_ALIGNMENT, np.uint8)
        off = (-big.ctypes.data) % RESULT_ALIGNMENT
        raw = big[off:off + nbytes]
    owner = _ResultMemory()
    owner.__array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "version": 3,
                                 "data": (raw.ctypes.data, False)}
    weakref.finalize(owner, _give_back, raw).atexit = False
    return np.asarray(owner)


def _give_back(raw) -> None:
    """The finalizer of a pooled result: its memory back into the pool. It runs wherever the
    last view is dropped, possibly inside a section that holds the lock: it never waits for
    it (a deque's append needs none; the next lend settles what is left there)."""
    _returned.append(raw)
    if _results_lock.acquire(blocking=False):
        try:
            _settle(raw.nbytes)
        finally:
            _results_lock.release()


def _settle(keep: int) -> None:
    """Under the lock: returned memory into the pool, then the pool cut to
    :data:`RESULT_POOL_BYTES`, sizes other than ``keep`` first (a dropped result larger than
    the whole pool is freed)."""
    while _returned:
        raw = _returned.popleft()
        _results.setdefault(raw.nbytes, []).append(raw)
    total = sum(nb * len(v) for nb, v in _results.items())
    for nb in sorted(_results, key=lambda nb: nb == keep):
        while total > RESULT_POOL_BYTES and _results[nb]:
            _results[nb].pop()
            total -= nb
        if not _results[nb]:
            del _results[nb]


def release_results() -> None:
    """Free the memory of dropped results that the pool keeps."""
    with _results_lock:
        _results.clear()
        _returned.clear()
