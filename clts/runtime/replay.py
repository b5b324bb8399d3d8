"""Recorded launch sequences: the prepared launches of one call, in their enqueue order, with
the temporaries they use, kept so that the next call of the same shape enqueues them again
with only its own arrays' arguments set anew (no Plan look-ups, allocations, kernel
check-outs or argument setting beyond those).

A call with many launches (STL's separate kernels: ~46 for a plain call) otherwise spends
most of its host time making them; replayed, it spends the enqueues and a few ``set_arg``.
The owner (STL's Runner, cached with its Plan; the device calls of the matrix profile,
``bfast_monitor``, ``trend_test`` and the TKE step, whose launches ``runtime.capturing.capture``
collects as they are made) holds a :class:`Recorder`; a recording is taken by one call at a
time (another thread records its own), and its temporaries are reused by the next call on the
same in-order queue, so they run after the previous call's kernels. A captured launch is
recorded on a kernel object of its own with its arguments set once (``Relaunch.prepared``):
a replay sets the call's own arrays, one pyopencl call per launch, and enqueues.
Recordings are small-call devices: each holds at most :data:`MAX_BYTES` of temporaries (its
kernel objects counted at :data:`KERNEL_BYTES` each) and a device's recordings at most
:data:`DEVICE_BYTES`, more on a device with much memory (:func:`limits`); larger calls run
unrecorded (their kernels, not their launches, take the time).
"""
from __future__ import annotations

import math
import threading
import weakref

from .launch import Launch, Relaunch

#: temporaries one recording may hold (bytes), or a device's memory over :data:`MEMORY_SHARE`
#: where that is more
MAX_BYTES = 16 << 20
#: temporaries all recordings of one device may hold (bytes), or 4 x its memory over
#: :data:`MEMORY_SHARE` where that is more
DEVICE_BYTES = 64 << 20
#: a GPU's Plans give even a small call large temporaries (work-groups of partial profiles:
#: ``mstump`` 3 x 600 under the H100's Plans 44 MB): on a device of 80 GB a recording may
#: hold 80 MB and all of them 320 MB (0.4 % of its memory)
MEMORY_SHARE = 1024
#: what a recording's kernel object of its own counts against the budgets (bytes): with the
#: device's budget it bounds the kernel objects recordings hold (4,096 a device) where the
#: temporaries are small
KERNEL_BYTES = 16 << 10
#: recordings kept per owner and key (calls of that shape from this many threads at once)
PER_KEY = 2


def limits(device) -> tuple:
    """(bytes one recording may hold, bytes all of ``device``'s may hold)."""
    share = int(device.info.global_mem) // MEMORY_SHARE
    return max(MAX_BYTES, share), max(DEVICE_BYTES, 4 * share)


def reserve_budget(device, nbytes: int) -> bool:
    """Take ``nbytes`` of ``device``'s recordings budget for what a caller keeps between its
    calls outside a recording (a device stream's kernel objects and kept buffers): False,
    taking nothing, when it does not fit. :func:`return_budget` gives it back."""
    return device.state.constant("replay.budget", _Budget).take(nbytes, limits(device)[1])


def return_budget(device, held: list) -> None:
    """Give back the ``held[0]`` bytes taken by :func:`reserve_budget` (``held``: the caller's
    running total, read when this runs: a finaliser's argument)."""
    device.state.constant("replay.budget", _Budget).give(held[0])
    held[0] = 0


class _Budget:
    """The bytes the recordings of one device hold."""

    def __init__(self):
        self.lock = threading.Lock()
        self.used = 0

    def take(self, nbytes: int, most: int) -> bool:
        with self.lock:
            if self.used + nbytes > most:
                return False
            self.used += nbytes
            return True

    def give(self, nbytes: int) -> None:
        with self.lock:
            self.used -= nbytes


class Recording:
    """The launches of one call (``seq``, in enqueue order, a launch once per enqueue), the
    temporaries they use (kept here) and where the call's own arrays sit in their arguments
    (``binds``: per launch, (argument index, slot name) pairs)."""

    __slots__ = ("seq", "binds", "temps", "gen", "meta", "__weakref__")

    def __init__(self, seq, temps, slots: dict, meta=None):
        # each launch on a kernel object of its own, its arguments set once (a replay sets
        # the call's own arrays alone); a fill as it is
        own = {}
        for go in seq:
            if id(go) not in own:
                own[id(go)] = _prepared(go)
        self.seq = [own[id(go)] for go in seq]
        self.temps = list(temps)
        self.gen = 0                # the Recorder's generation it belongs to
        self.meta = meta            # what the owner needs to make a replayed call's arrays
        where = {id(buf): name for name, buf in slots.items() if buf is not None}
        binds, seen = [], set()
        for go in self.seq:
            if id(go) in seen:
                continue
            seen.add(id(go))
            pairs = [(i, where[id(a)]) for i, a in enumerate(go.args) if id(a) in where]
            if pairs:
                binds.append((go, pairs))
        self.binds = binds
        self._unbind()

    def replay(self, slots: dict) -> None:
        """Set the call's own arrays (``slots``: name -> buffer, the names of the recording)
        and enqueue every launch again."""
        for go, pairs in self.binds:
            args = []
            for i, name in pairs:
                args += (i, slots[name])
            go.set(*args)
        try:
            for go in self.seq:
                go()
        finally:
            self._unbind()

    def _unbind(self) -> None:
        # the launches keep no reference to the call's own arrays once enqueued (each replay
        # sets them before its first enqueue): a dropped result's memory is not held here
        for go, pairs in self.binds:
            for i, _ in pairs:
                go.args[i] = None


def _prepared(go):
    """A captured launch on a kernel object of its own (``Relaunch.prepared``), or as it is: a
    fill, or where the driver will not make the kernel object again (then each replay sets
    all of the shared kernel's arguments under its lock, as the call did)."""
    if type(go) is not Relaunch:
        return go
    try:
        return go.prepared()
    except Exception:           # noqa: BLE001 - the shared kernel's path still works
        return go


#: keys whose calls a Recorder with ``after`` counts (then it forgets them all)
SEEN_KEYS = 4096


class Recorder:
    """An owner's recordings by key (the call's shape): :meth:`take` one to replay, :meth:`give`
    it back after its enqueues, :meth:`add` a call just made. ``after``: calls of a key made
    unrecorded before one is recorded (:meth:`wants`); a recording keeps its temporaries from
    the pool, so each new shape's first call would otherwise take fresh memory (page faults
    on a CPU) where a workload of ever-new shapes gains nothing from it."""

    def __init__(self, after: int = 0):
        self._free: dict = {}
        self._lock = threading.Lock()
        self._listed = False
        self._gen = 0
        self._after = after
        self._seen: dict = {}

    def wants(self, key) -> bool:
        """Whether a call of ``key`` that found no free recording should be recorded: every
        one with ``after`` = 0, else from the key's ``after + 1``-th call on."""
        if not self._after:
            return True
        with self._lock:
            n = self._seen.get(key, 0)
            if n >= self._after:
                return True
            if len(self._seen) >= SEEN_KEYS:
                self._seen.clear()
            self._seen[key] = n + 1
            return False

    def clear(self) -> None:
        """Drop the recordings (their temporaries go back to the device's pool; one being
        replayed is dropped when its call gives it back)."""
        with self._lock:
            self._free = {}
            self._gen += 1

    def take(self, key):
        with self._lock:
            free = self._free.get(key)
            return free.pop() if free else None

    def replay(self, key, slots: dict, keep=None, hand=None) -> bool:
        """Replay a free recording of ``key`` with the call's ``slots`` (its recording is
        added to ``keep``, a result's temporaries); False when there is none. ``hand``: a
        list that receives the recording instead of this recorder (a call inside another
        one's capture: :class:`Nested`)."""
        rec = self.take(key)
        if rec is None:
            return False
        try:
            rec.replay(slots)
        finally:
            if hand is None:
                self.give(key, rec)
            else:
                hand.append(rec)
        if keep is not None:
            keep.append(rec)
        return True

    def give(self, key, rec: Recording) -> None:
        with self._lock:
            if rec.gen == self._gen:
                self._free.setdefault(key, []).append(rec)

    def add(self, device, key, seq, temps, slots: dict, meta=None, hand=None):
        """Keep the call's launches ``seq`` and ``temps`` (device arrays or buffers) under
        ``key`` when they fit the budgets (``slots``: name -> the call's own buffers, set anew
        by each replay; ``meta``: kept with the recording for its owner); returns the
        recording or None. ``hand``: a list that receives the recording, which this
        recorder then does not keep (see :meth:`replay`)."""
        nbytes = sum(_nbytes(a) for a in temps) + KERNEL_BYTES * len(
            {id(go) for go in seq if type(go) in (Relaunch, Launch)})
        one, most = limits(device)
        if nbytes > one:
            return None
        with self._lock:
            if hand is None and len(self._free.get(key, ())) >= PER_KEY:
                return None
        budget = device.state.constant("replay.budget", _Budget)
        if not budget.take(nbytes, most):
            # the device's recordings are full: the free ones of every owner go (the shapes
            # called again record again), so a process moving on to new shapes keeps
            # recording them; recordings held by results stay until those are dropped
            device.state.drop_recordings()
            if not budget.take(nbytes, most):
                return None
        if not self._listed:        # DeviceState.release_memory drops every recording
            with device.state.lock:
                device.state.constant("replay.recorders", weakref.WeakSet).add(self)
            self._listed = True
        try:
            rec = Recording(seq, temps, slots, meta)
        except BaseException:
            budget.give(nbytes)
            raise
        rec.gen = self._gen
        weakref.finalize(rec, budget.give, nbytes)
        if hand is None:
            self.give(key, rec)
        else:
            hand.append(rec)
        return rec


class Nested:
    """A recording made or replayed inside another call's capture (STL's rounds inside
    MSTL's), as one entry of that capture: calling it replays the recording with :attr:`args`,
    its slots' buffers, which :meth:`set` changes as a launch's. The outer recording owns it:
    no other call replays it, so the two never share temporaries (two recordings' enqueues
    from two threads would interleave on the queue)."""

    __slots__ = ("rec", "names", "args")

    def __init__(self, rec: Recording, slots: dict):
        self.rec = rec
        self.names = [name for name, buf in slots.items() if buf is not None]
        self.args = [slots[name] for name in self.names]

    def set(self, *pairs) -> "Nested":
        for i in range(0, len(pairs), 2):
            self.args[pairs[i]] = pairs[i + 1]
        return self

    def __call__(self):
        self.rec.replay(dict(zip(self.names, self.args)))


class Same:
    """``obj`` in a recording's key by identity (a Plan: its hash would hash every field
    each call); the key holds it, so its id is not reused meanwhile."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __hash__(self):
        return id(self.obj)

    def __eq__(self, other):
        return type(other) is Same and other.obj is self.obj


def _nbytes(a) -> int:
    """Bytes of a device array (``nbytes``) or of a buffer (its ``size``)."""
    n = getattr(a, "nbytes", None)
    return int(n if n is not None else getattr(a, "size", 0))


def captured_temps(entries, slots: dict):
    """The buffers the captured ``entries`` (``runtime.capturing.capture``) use besides the
    call's own ``slots``, each once: a recording of them keeps these. None where one of them
    is a sub-buffer: it may be a view of the call's own arrays (a row block of its input),
    which a replay would not set anew, so such a call is not recorded."""
    import pyopencl as cl
    own = {id(b) for b in slots.values() if b is not None}
    seen, temps = set(), []
    for go in entries:
        for a in go.args:
            if isinstance(a, cl.MemoryObjectHolder) and id(a) not in own \
                    and id(a) not in seen:
                if a.get_info(cl.mem_info.ASSOCIATED_MEMOBJECT) is not None:
                    return None
                seen.add(id(a))
                temps.append(a)
    return temps


def record_call(device, recorder: Recorder, key, cap, inputs: dict, outputs: dict,
                pooled=()):
    """Keep the capture ``cap`` (``runtime.capturing.capture``) of a call just made under
    ``key``: ``inputs``, slot name -> the buffer of an input the next calls bind anew (None:
    absent); ``outputs``, slot name -> the device arrays a replay makes afresh (each its
    buffer's start, the whole buffer, or for a 1-D array its head), from the pool for the
    names in ``pooled`` (temporaries a result reads on first access), else new. Returns the
    recording, or None: the capture incomplete or empty, a buffer in two roles, an output
    inside another buffer, a sub-buffer among the temporaries, over the budgets."""
    if any(name in inputs for name in outputs):
        raise ValueError(f"slot names {sorted(set(inputs) & set(outputs))} name an input and "
                         f"an output")
    if not cap.complete or not cap.entries:
        return None
    slots, meta = dict(inputs), []
    for name, a in outputs.items():
        if a is None:
            continue
        if a.base_data is None:     # an empty array: no buffer to bind
            return None
        # a pooled output's buffer is its pool bin (rounded up): a replay takes one of its size
        alloc = a.size if name in pooled else a.base_data.size // a.dtype.itemsize
        if a.offset or (alloc != a.size and a.ndim != 1):
            return None
        slots[name] = a.base_data
        meta.append((name, a.shape, a.dtype, alloc, name in pooled))
    bufs = [b for b in slots.values() if b is not None]
    if len({id(b) for b in bufs}) != len(bufs):
        return None
    temps = captured_temps(cap.entries, slots)
    if temps is None:
        return None
    return recorder.add(device, key, cap.entries, temps, slots, meta)


def replay_call(device, recorder: Recorder, key, inputs: dict):
    """The call of ``key`` made again from a free recording of :func:`record_call`, with the
    call's ``inputs`` (slot name -> buffer) and fresh outputs: (the outputs by slot name, the
    recording, which its result keeps: its temporaries), or None when none is free or the
    device ran out of memory on the way (the caller then makes the call its own way)."""
    from .memory import empty_device, head, scratch
    rec = recorder.take(key)
    if rec is None:
        return None
    try:
        out, slots = {}, dict(inputs)
        for name, shape, dtype, alloc, pooled in rec.meta:
            whole = alloc == math.prod(shape)
            ashape = shape if whole else (alloc,)
            a = scratch(device, ashape, dtype) if pooled else \
                empty_device(device.queue, device.context, ashape, dtype)
            slots[name] = a.base_data
            out[name] = a if whole else head(a, shape)
        rec.replay(slots)
    except Exception as exc:
        # the device out of memory (at an allocation or, lazily, an enqueue): the caller's
        # own path, whose chunked loop frees what the device holds and retries
        from .faults import is_allocation_failure
        if is_allocation_failure(exc):
            return None
        raise
    finally:
        recorder.give(key, rec)
    return out, rec


def run_recorded(device, recorder: Recorder, key, inputs: dict, make, keep: list,
                 pooled=()):
    """A call's launches: ``make()`` (enqueues them, returns the outputs by slot name, as
    :func:`record_call` takes them), or a free recording of ``key`` made again with the call's
    ``inputs`` and fresh outputs. From a key's call that the recorder wants on
    (``Recorder.wants``), ``make()`` runs captured and is recorded. ``key`` None: ``make()``
    as it is. The recording a call used or made goes to ``keep`` (the result's temporaries).
    Returns the outputs."""
    from .capturing import capture
    if key is None:
        return make()
    got = replay_call(device, recorder, key, inputs)
    if got is not None:
        keep.append(got[1])
        return got[0]
    if not recorder.wants(key):
        return make()
    with capture() as cap:
        out = make()
    rec = record_call(device, recorder, key, cap, inputs, out, pooled)
    if rec is not None:
        keep.append(rec)
    return out
