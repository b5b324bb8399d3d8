"""One public call at a time per device, on the drivers whose OpenCL crashes under threads.

Every public function is safe from several threads: on most drivers the calls of different
threads run side by side (their kernel launches are made safe in ``runtime.launch``). NVIDIA's
OpenCL driver (580 on an H100) killed the process when several threads ran calls on one device
at once (the TKE step and the multi-dimensional matrix profile from four to six threads): there
a per-device re-entrant lock is held for the whole of each public call, so the calls of
different threads run one after another and none can crash the process.

The profile key ``runtime.serialise_threads`` decides: ``always``, ``never`` or ``auto`` (the
generic profiles: NVIDIA's OpenCL platform, whatever the GPU model). ``serialised`` wraps the
public functions (``clts/__init__``).
"""
from __future__ import annotations

import functools
import threading
import weakref

CHOICES = ("auto", "always", "never")

_locks: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # Device -> RLock | None
_guard = threading.Lock()


def needs_serial_calls(device) -> bool:
    """Whether ``device``'s driver needs one public call at a time (``runtime.serialise_threads``)."""
    from .plans import profile_value
    value = profile_value(device, "runtime.serialise_threads")
    if value not in CHOICES:
        from .profiles import value_error
        raise value_error(device.profile, "runtime.serialise_threads",
                          f"must be one of {CHOICES}, got {value!r}")
    if value == "auto":
        return "nvidia" in str(device.info.platform).lower()
    return value == "always"


def call_lock(device):
    """The lock every public call on ``device`` holds (an RLock), or None where calls run side
    by side."""
    try:
        return _locks[device]
    except KeyError:
        pass
    with _guard:
        if device not in _locks:
            _locks[device] = threading.RLock() if needs_serial_calls(device) else None
        return _locks[device]


def context_lock(context):
    """The call lock of the device whose OpenCL context is ``context`` (reading a device array
    back holds it, so that result reads of several threads do not meet in a driver that needs
    serial calls), or None."""
    for dev, lock in list(_locks.items()):
        if lock is not None and dev.context == context:
            return lock
    return None


_MISSING = object()


def _locks_for(spec) -> list:
    if not isinstance(spec, (list, tuple)):
        lock = _locks.get(spec, _MISSING)   # a Device met before: its lock or None
        if lock is not _MISSING:
            return [lock] if lock is not None else []
    from .devices import Device, get_device
    specs = spec if isinstance(spec, (list, tuple)) else [spec]
    locks = []
    for s in specs:
        dev = s if isinstance(s, Device) else get_device(s)
        lock = call_lock(dev)
        if lock is not None and lock not in locks:
            locks.append(lock)
    return sorted(locks, key=id)         # one order for every call: no lock-order deadlock


def serialised(fn):
    """``fn`` (a public function with a ``device=`` keyword) holding its devices' call locks
    where their drivers need them (see the module docstring)."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            locks = _locks_for(kwargs.get("device", kwargs.get("devices")))
        except Exception:   # noqa: BLE001 - a bad device= is the function's own error to raise
            locks = []
        if not locks:
            return fn(*args, **kwargs)
        for lock in locks:
            lock.acquire()
        try:
            return fn(*args, **kwargs)
        finally:
            for lock in reversed(locks):
                lock.release()
    call.__wrapped__ = fn
    return call
