"""The one launch path: every kernel of every algorithm is enqueued through ``launch`` or a
prepared launch (:class:`Launch`, :func:`prepare`).

- ``launch(device, kernel, global_size, local_size, *args)``: one enqueue of a program's shared
  kernel object; setting its arguments and enqueueing it is one step under a lock (a
  ``cl.Kernel`` is shared by every thread that runs its program, and clSetKernelArg is not
  thread-safe: OpenCL 1.2, A.2).
- ``prepare(device, program, name, global_size, local_size, *args)``: a kernel object of the
  launch's own (from the program's pool), its arguments set once; each call of the returned
  :class:`Launch` is one enqueue and nothing else, without a lock. A Plan that enqueues the
  same kernels many times (STL's iterations) prepares them once per call.

Both set numpy scalars as packed bytes: pyopencl's ``set_arg`` of a numpy scalar costs
10-15 µs (its generic path), the packed form a fraction of a microsecond.

``timing()`` collects the OpenCL profiling events of every launch made inside it, so the tuner
and the benchmarks time the very code the user calls.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager

import numpy as np

from . import capturing, faults

_local = threading.local()
#: setting a shared kernel's arguments and enqueueing it must be one step (see above)
_enqueue_lock = threading.Lock()
#: threads inside a ``timing()`` block (a launch outside every block skips the thread-local
#: look-up of the timers)
_timed = 0

#: numpy scalar type -> the struct character pyopencl's packed setter takes (those whose size
#: is the same on every platform); other scalars are set from their bytes
_PACK = {np.dtype(np.int32): b"i", np.dtype(np.uint32): b"I", np.dtype(np.float32): b"f",
         np.dtype(np.float64): b"d", np.dtype(np.int16): b"h", np.dtype(np.uint16): b"H",
         np.dtype(np.int8): b"b", np.dtype(np.uint8): b"B"}
#: the same by numpy scalar type
_PACK_TYPE = {dt.type: c for dt, c in _PACK.items()}


#: kernel -> [its number of arguments, launches made so far by the general setter, or TYPED /
#: UNTYPED]; pyopencl's ``num_args`` asks the driver each time. Up to 1,024 kernels, then
#: emptied (it holds them, and so their programs, alive)
_KERNELS: dict = {}
TYPED, UNTYPED = -1, -2
#: launches of a kernel object by the general setter before its scalar argument types are
#: declared to pyopencl (``Kernel.set_arg_types``: ~1 ms once per kernel object, so one-off
#: kernels skip it)
TYPE_AFTER = 2


def _state(kernel):
    st = _KERNELS.get(kernel)
    if st is None:
        if len(_KERNELS) >= 1024:
            _KERNELS.clear()
        st = _KERNELS[kernel] = [kernel.num_args, 0]
    return st


def _set_args_typed(kernel, args) -> None:
    """Set ``kernel``'s arguments. A kernel object launched :data:`TYPE_AFTER` times gets its
    scalar argument types declared to pyopencl (from those launches' numpy scalars), whose
    generated setter then sets every argument in ~0.1 µs each (the loop of
    :func:`_set_args_packed`, ~0.35 µs an argument on a 2.5 GHz Cascade Lake, cost 11 µs for
    the TKE step's 35). An argument of another type than declared (the typed setter refuses
    it) goes the general way."""
    st = _state(kernel)
    if len(args) != st[0]:
        raise TypeError(f"kernel {kernel.function_name} takes {st[0]} arguments, "
                        f"{len(args)} given")
    if st[1] == TYPED:
        try:
            kernel.set_args(*args)
            return
        except Exception:               # noqa: BLE001 - another scalar type: set generally
            pass
    _set_general(kernel, args)
    if st[1] >= 0:
        st[1] += 1
        if st[1] >= TYPE_AFTER:
            try:
                kernel.set_arg_types([a.dtype if isinstance(a, np.generic) else None
                                      for a in args])
                st[1] = TYPED
            except Exception:           # noqa: BLE001 - pyopencl refused: the general way
                st[1] = UNTYPED


def _set_args_packed(kernel, args) -> None:
    """Set ``kernel``'s arguments: buffers, ``LocalMemory`` and None as objects, numpy scalars
    packed (one call each for the two kinds)."""
    objs, packed = [], []
    for i, a in enumerate(args):
        c = _PACK_TYPE.get(type(a))         # a numpy scalar type of _PACK (no dtype made)
        if c is not None:
            packed += (i, c, a.item())
        elif isinstance(a, np.generic):
            c = _PACK.get(a.dtype)
            if c is None:
                kernel._set_arg_buf(i, a.tobytes())
            else:
                packed += (i, c, a.item())
        else:
            objs += (i, a)
    if objs:
        kernel._set_arg_multi(tuple(objs))
    if packed:
        kernel._set_arg_buf_pack_multi(tuple(packed))


def _set_args_portable(kernel, args) -> None:
    for i, a in enumerate(args):
        kernel.set_arg(i, a)


def _bind() -> None:
    """Bind pyopencl's enqueue and (where they exist) its packed argument setters, on the first
    launch: importing this module imports no OpenCL (``clts --help`` stays light)."""
    global _enqueue, _set_args, _set_general
    from pyopencl import _cl as clmod
    packed = all(hasattr(clmod.Kernel, m) for m in
                 ("_set_arg_multi", "_set_arg_buf_pack_multi", "_set_arg_buf"))
    # pyopencl's packed setters are not public API: set_arg where they are missing
    _set_general = _set_args_packed if packed else _set_args_portable
    _set_args = _set_args_typed
    _enqueue = clmod.enqueue_nd_range_kernel


def _enqueue(*args):
    _bind()
    return _enqueue(*args)


def _set_args(kernel, args) -> None:
    _bind()
    _set_args(kernel, args)


_set_general = _set_args_packed


def _timers():
    if not hasattr(_local, "timers"):
        _local.timers = []
    return _local.timers


def round_up(n: int, m: int) -> int:
    return ((int(n) + m - 1) // m) * m


#: work-items per work-group (along the first dimension) of the launches sized by
#: :func:`fixed_local` on a driver that compiles a kernel per local size
FIXED_LOCAL = 64


def compiles_per_local_size(device) -> bool:
    """Whether ``device``'s real driver (under an emulated description too) compiles a kernel's
    work-group function per local size when it is first enqueued with it: pocl does (its
    kernel cache keeps one binary per kernel and local size); Intel's CPU runtime and the GPU
    drivers compile nothing at enqueue."""
    from .programs import real_pocl
    state = getattr(device, "state", None)     # kept with the device's other constants
    if state is not None:
        return state.constant("launch.compiles_per_local_size", lambda: real_pocl(device))
    return real_pocl(device)


#: work-groups per compute unit that the bucketed local sizes of :func:`fixed_local` aim at
#: (0: :data:`FIXED_LOCAL` whatever the range)
GROUPS_PER_UNIT = 8


def _bucket(device, n: int) -> int:
    """A power-of-two local size for a 1-D range of ``n`` on a driver that compiles per local
    size: about GROUPS_PER_UNIT groups per compute unit, at least FIXED_LOCAL and at most the
    device's work-group limit."""
    try:
        units = int(device.cl_device.max_compute_units)
    except AttributeError:
        units = int(getattr(device, "compute_units", 1) or 1)
    want = -(-int(n) // (GROUPS_PER_UNIT * max(units, 1)))
    top = min(4096, int(getattr(device, "max_work_group", 0) or 4096))
    size = FIXED_LOCAL
    while size < want and size * 2 <= top:
        size *= 2
    return size


def fixed_local(device, global_size, local=None):
    """``(global_size, local_size)`` of a launch whose kernel checks every work-item's index
    against its range (work-items past the end return at once).

    Where the driver compiles per local size (pocl) and picks the local size from the global
    one when none is given (on 2 cores: global / 2), every new series length, period or window
    compiled each kernel again at its first enqueue (0.2-0.4 s per kernel). Here the local size
    changes only by powers of two: ``local`` if given (an int for the first dimension, or a
    tuple), else along the first dimension a power of two for about :data:`GROUPS_PER_UNIT`
    groups per compute unit (pocl pays a few microseconds per work-group), at least
    :data:`FIXED_LOCAL` and at most the device's work-group limit, 1 along the others; the
    range is rounded up to a multiple. A new size within the same bucket compiles nothing, and
    a range beyond 4,096 x 8 work-items per compute unit (the cap) always gets the cap. Elsewhere
    the range as given and ``None``: the driver's choice, as before."""
    key = (global_size, local, FIXED_LOCAL, GROUPS_PER_UNIT)   # the result, once per device
    state = getattr(device, "state", None)
    cache = state.constant("launch.fixed_local", dict) if state is not None else None
    try:
        hit = cache.get(key) if cache is not None else None
    except TypeError:                   # an unhashable size (a list): not cached
        hit, cache = None, None
    if hit is not None:
        return hit
    out = _fixed_local(device, global_size, local)
    if cache is not None:
        if len(cache) >= 4096:
            cache.clear()
        cache[key] = out
    return out


def _fixed_local(device, global_size, local):
    global_size, _ = _sizes(global_size, None)
    if not compiles_per_local_size(device):
        return global_size, None
    if local is None:
        size = FIXED_LOCAL
        if GROUPS_PER_UNIT and 0 not in global_size:
            # along the first dimension: the bucket of the whole range; with more dimensions
            # halved until the first one is padded by at most a sixteenth (its length, not the
            # range's, is what gets rounded up)
            size = _bucket(device, _count(global_size))
            if len(global_size) > 1:
                g0 = global_size[0]
                while size > FIXED_LOCAL and round_up(g0, size) * 16 > g0 * 17:
                    size //= 2
        local = (size,) + (1,) * (len(global_size) - 1)
    elif isinstance(local, (int, np.integer)):
        local = (int(local),) + (1,) * (len(global_size) - 1)
    local = tuple(int(x) for x in local)
    if 0 in global_size:
        return global_size, local
    return tuple(round_up(g, m) for g, m in zip(global_size, local)), local


def _sizes(global_size, local_size):
    if isinstance(global_size, (int, np.integer)):
        global_size = (int(global_size),)
    if isinstance(local_size, (int, np.integer)):
        local_size = (int(local_size),)
    return tuple(global_size), (None if local_size is None else tuple(local_size))


def _emulated(device, kernel, global_size, local_size, args) -> None:
    from .emulation import check_launch
    check_launch(device, kernel, local_size, args)
    hook = device.state.launch_hook
    if hook is not None:    # the coalescing tracer (clts.tune.coalescing), emulated only
        hook(kernel, global_size, local_size, args)


def launch(device, kernel, global_size, local_size, *args, wait_for=None, queue=None):
    """Enqueue ``kernel`` (a pyopencl Kernel) on ``device``'s queue; return the event.

    ``global_size``/``local_size`` are ints or tuples; ``local_size=None`` lets the driver pick.
    Arguments are set in order (pyopencl buffers, numpy scalars, ``LocalMemory``).
    """
    if type(global_size) is not tuple or (local_size is not None
                                          and type(local_size) is not tuple):
        global_size, local_size = _sizes(global_size, local_size)
    if 0 in global_size:
        return None
    if device.info.emulates:
        _emulated(device, kernel, global_size, local_size, args)
    faults.check("enqueue", _count(global_size))
    with _enqueue_lock:
        _set_args(kernel, args)
        ev = _enqueue(queue or device.queue, kernel, global_size, local_size, None, wait_for)
    if _timed:
        for t in _timers():
            t.events.append(ev)
    if capturing.active:
        capturing.captured(None if wait_for is not None else
                           Relaunch(device, kernel, global_size, local_size, args, queue))
    _local.last = ev
    return ev


class Relaunch:
    """A launch made inside ``capturing.capture``, to be made again: calling it is :func:`launch`
    with the same kernel, sizes and :attr:`args` (the shared kernel's arguments set anew,
    under the lock); :meth:`set` changes arguments between calls (``runtime.replay``)."""

    __slots__ = ("device", "kernel", "global_size", "local_size", "queue", "args")

    def __init__(self, device, kernel, global_size, local_size, args, queue=None):
        self.device, self.kernel, self.queue = device, kernel, queue
        self.global_size, self.local_size = global_size, local_size
        self.args = list(args)

    def set(self, *pairs) -> "Relaunch":
        """Change arguments: ``set(index, value, index, value, ...)``; returns self."""
        for i in range(0, len(pairs), 2):
            self.args[pairs[i]] = pairs[i + 1]
        return self

    def __call__(self):
        return launch(self.device, self.kernel, self.global_size, self.local_size, *self.args,
                      queue=self.queue)

    def prepared(self) -> "Launch":
        """This launch as a prepared one (:class:`Launch`) on a kernel object of its own, its
        arguments set once: a recording's replays then set only the arguments that change
        (its call's own arrays) and enqueue, without the shared kernel's lock."""
        from .kernel_objects import new_kernel
        own = new_kernel(self.kernel.program, self.kernel.function_name)
        return Launch(self.device, None, own.function_name, self.global_size,
                      self.local_size, *self.args, queue=self.queue, kernel=own)


class Launch:
    """A prepared launch: a kernel object of its own with its arguments set once; calling it
    enqueues the kernel (``wait_for``: events) and returns the event, or None for an empty
    range. :meth:`set` changes arguments between enqueues. One thread uses it at a time (it
    belongs to one call); its kernel object goes back to the program's pool when it is
    dropped."""

    __slots__ = ("device", "kernel", "global_size", "local_size", "queue", "args", "_items",
                 "_emul", "_release", "__weakref__")

    def __init__(self, device, program, name, global_size, local_size, *args, queue=None,
                 kernel=None):
        # ``kernel``: a kernel object of the launch's own (not from ``program``'s pool)
        self.global_size, self.local_size = _sizes(global_size, local_size)
        self.device = device
        self.queue = queue or device.queue
        self.kernel, self._release = ((kernel, None) if kernel is not None
                                      else program.checkout(name))
        self.args = list(args)
        self._items = _count(self.global_size)
        self._emul = bool(device.info.emulates)
        if kernel is not None:      # set generally: not a kernel the typed setter keeps
            if _enqueue.__name__ == "_enqueue":
                _bind()
            _set_general(self.kernel, args)
        else:
            _set_args(self.kernel, args)
        if self._emul:      # the emulated GPU's limits: checked once, the hook at every enqueue
            from .emulation import check_launch
            check_launch(device, self.kernel, self.local_size, args)

    def set(self, *pairs) -> "Launch":
        """Change arguments: ``set(index, value, index, value, ...)``; returns self."""
        for i in range(0, len(pairs), 2):
            self.args[pairs[i]] = pairs[i + 1]
        if self._emul and any(not isinstance(v, np.generic) for v in pairs[1::2]):
            from .emulation import check_launch
            check_launch(self.device, self.kernel, self.local_size, self.args)
        _set_indexed(self.kernel, pairs)
        return self

    def rebind(self, global_size, local_size, *args) -> "Launch":
        """New sizes and every argument for the next enqueue (a kernel whose range and
        arrays change at each call: a stream's update). The arguments are not kept (off an
        emulated device): a buffer set here lives no longer than its caller keeps it, and
        the next ``rebind`` sets all of them again (a rebound launch takes ``rebind``, not
        :meth:`set`). Returns self."""
        if type(global_size) is not tuple or (local_size is not None
                                              and type(local_size) is not tuple):
            global_size, local_size = _sizes(global_size, local_size)
        self.global_size, self.local_size = global_size, local_size
        self._items = _count(global_size)
        _set_args(self.kernel, args)
        self.args = list(args) if self._emul else []
        if self._emul:
            from .emulation import check_launch
            check_launch(self.device, self.kernel, local_size, args)
        return self

    def __call__(self, wait_for=None):
        if not self._items:
            return None
        if self._emul:
            hook = self.device.state.launch_hook
            if hook is not None:
                hook(self.kernel, self.global_size, self.local_size, self.args)
        faults.check("enqueue", self._items)
        if capturing.active:    # its arguments change between enqueues: not captured
            capturing.captured(None)
        ev = _enqueue(self.queue, self.kernel, self.global_size, self.local_size, None,
                      wait_for)
        if _timed:
            for t in _timers():
                t.events.append(ev)
        _local.last = ev
        return ev

    def __del__(self):
        rel = getattr(self, "_release", None)
        if rel is not None:
            self._release = None
            rel()


def _set_indexed(kernel, pairs) -> None:
    if _enqueue.__name__ == "_enqueue":     # nothing launched yet in this process
        _bind()
    if _set_general is _set_args_portable:
        for i in range(0, len(pairs), 2):
            kernel.set_arg(pairs[i], pairs[i + 1])
        return
    # one call for the buffers and one for the packed scalars (a call per argument cost
    # ~0.5 µs each: a replay's 16 buffers 8 µs against 1-2 at once)
    objs, packed = [], []
    for i in range(0, len(pairs), 2):
        a = pairs[i + 1]
        if isinstance(a, np.generic):
            c = _PACK.get(a.dtype)
            if c is None:
                kernel._set_arg_buf(pairs[i], a.tobytes())
            else:
                packed += (pairs[i], c, a.item())
        else:
            objs += (pairs[i], a)
    if objs:
        kernel._set_arg_multi(tuple(objs))
    if packed:
        kernel._set_arg_buf_pack_multi(tuple(packed))


@contextmanager
def pyopencl_kernels():
    """Hold this around any pyopencl array operation that runs a kernel of pyopencl's own
    (``Array.fill``, ``astype``, arithmetic, ``setitem`` of a scalar): pyopencl keeps one such
    kernel object per context and sets its arguments and enqueues it in two steps, so two
    threads filling two arrays at once could fill one of them twice and the other never (the
    matrix profile's -inf lists on the Intel CPU runtime under eight threads). The same lock
    as ``launch``'s. The build of such a kernel on its first use says nothing (no
    ``CompilerWarning`` from a driver's routine log: ``programs.quiet_pyopencl_builds``)."""
    from .programs import quiet_pyopencl_builds
    capturing.captured(None)    # a capture's replay would not run pyopencl's kernel
    with _enqueue_lock, quiet_pyopencl_builds():
        yield


def prepare(device, program, name, global_size, local_size, *args, queue=None) -> Launch:
    """The prepared launch of kernel ``name`` of ``program`` (a clts ``Program``): see
    :class:`Launch`."""
    return Launch(device, program, name, global_size, local_size, *args, queue=queue)


def last_event():
    """The event of the last kernel this thread launched (None before any)."""
    return getattr(_local, "last", None)


class Timing:
    """Kernel time (sum of profiling intervals) and wall time of launches in a ``timing()``."""

    def __init__(self):
        self.events = []
        self.wall = 0.0

    @property
    def kernel_seconds(self) -> float:
        return sum((e.profile.end - e.profile.start) * 1e-9 for e in self.events)

    @property
    def span_seconds(self) -> float:
        """From the first kernel's start to the last kernel's end (includes gaps)."""
        if not self.events:
            return 0.0
        return (max(e.profile.end for e in self.events)
                - min(e.profile.start for e in self.events)) * 1e-9


_timed_lock = threading.Lock()


@contextmanager
def timing(device=None):
    """Time every launch inside the block; waits for the device at the end."""
    global _timed
    t = Timing()
    stack = _timers()
    stack.append(t)
    with _timed_lock:
        _timed += 1
    t0 = time.perf_counter()
    try:
        yield t
    finally:
        try:
            if device is not None:
                device.queue.finish()
            for e in t.events:
                e.wait()
            t.wall = time.perf_counter() - t0
        finally:
            stack.remove(t)
            with _timed_lock:
                _timed -= 1


def _count(global_size) -> int:
    n = 1
    for g in global_size:
        n *= int(g)
    return n


def device_int32(x, lo: int, hi: int):
    """A device integer array as int32 with its values clipped to ``lo``..``hi`` first, on the
    device, as numpy inputs are clipped (``astype`` alone would wrap an int64 2**32 + 2 to 2);
    ``x`` itself when it is int32 already (the kernels bound-check those)."""
    if x.dtype == np.int32:
        return x
    import pyopencl.array as cla
    kind, info = x.dtype.type, np.iinfo(x.dtype)
    with pyopencl_kernels():
        if info.min < lo:
            x = cla.maximum(x, kind(lo))
        if info.max > hi:
            x = cla.minimum(x, kind(hi))
        return x.astype(np.int32)
