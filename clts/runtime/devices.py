"""Discover, probe, select and describe OpenCL devices.

Every device is probed once (in a child process, result cached on disk by fingerprint) by
building and running a tiny kernel. Devices that fail are listed with their reason and never
chosen. Default order: GPU, accelerator, CPU; real drivers before simulators (Oclgrind); then
more compute units first. The ``device`` option (``CLTS_DEVICE``) or a ``device=`` argument (an index into
``clts devices``, a case-insensitive substring of platform name, device name or slug, or a
``Device``)
override the default. ``run_probes(infos)`` probes in child processes without reading or writing
the cache (public for tests of a crashing probe).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import subprocess
import sys
import threading
import weakref
from dataclasses import dataclass, field
from functools import lru_cache

from .. import options
from ..errors import DeviceError
from . import descriptions, icd

log = logging.getLogger("clts.devices")

PROBE_VERSION = 3   # 3: probes run without Oclgrind's checker variables (see icd.probe_environment)
_TYPE_RANK = {"gpu": 0, "accelerator": 1, "cpu": 2, "other": 3}


def _cl():
    icd.ensure_vendor_dir()
    import pyopencl as cl
    return cl


def _type_name(cl, t) -> str:
    if t & cl.device_type.GPU:
        return "gpu"
    if t & cl.device_type.ACCELERATOR:
        return "accelerator"
    if t & cl.device_type.CPU:
        return "cpu"
    return "other"


def _platform_short(platform_name: str) -> str:
    p = platform_name.lower()
    for key, short in (("portable computing", "pocl"), ("pocl", "pocl"), ("intel", "intel"),
                       ("nvidia", "nvidia"), ("amd", "amd"), ("oclgrind", "oclgrind"),
                       ("rusticl", "rusticl"), ("apple", "apple")):
        if key in p:
            return short
    return re.sub(r"[^a-z0-9]+", "-", p).strip("-") or "opencl"


@dataclass
class DeviceInfo:
    """What discovery knows of a device before any context exists."""

    index: int
    platform_index: int
    device_index: int
    platform: str
    name: str
    vendor: str
    type: str
    driver: str
    version: str
    extensions: frozenset
    compute_units: int
    local_mem: int
    max_work_group: int
    max_alloc: int
    global_mem: int
    ok: bool = False
    reason: str = ""
    max_work_item_sizes: tuple = ()
    simd_width: int = 0             # sub-group / warp / wavefront width; 0: not reported
    opencl_c_version: str = ""
    emulates: str = ""              # a recorded description laid over this device (emulation.py)

    @property
    def fp64(self) -> bool:
        return "cl_khr_fp64" in self.extensions

    @property
    def int64_atomics(self) -> bool:
        return "cl_khr_int64_base_atomics" in self.extensions

    # read on every launch / allocation / call: derived once per value of the fields they
    # read (a test may change a field of an info)
    @property
    def simulator(self) -> bool:
        return _is_simulator(self.platform)

    @property
    def fingerprint(self) -> str:
        return _fingerprint(self.platform, self.vendor, self.name, self.driver, self.version,
                            self.emulates)

    @property
    def slug(self) -> str:
        return _slug(self.name, self.platform, self.type, self.emulates)

    def sort_key(self):
        return (not self.ok, _TYPE_RANK.get(self.type, 9), self.simulator, -self.compute_units,
                self.index)


@lru_cache(maxsize=256)
def _is_simulator(platform: str) -> bool:
    return "oclgrind" in platform.lower()


@lru_cache(maxsize=256)
def _fingerprint(platform, vendor, name, driver, version, emulates) -> str:
    key = "|".join((platform, vendor, name, driver, version) + ((emulates,) if emulates else ()))
    return hashlib.sha1(key.encode()).hexdigest()[:16]


@lru_cache(maxsize=256)
def _slug(name, platform, type_, emulates) -> str:
    name = name.lower()
    name = re.sub(r"^pthread-|^cpu-", "", name)
    name = re.sub(r"\(r\)|\(tm\)|@.*$", "", name)
    name = re.sub(r"[^a-z0-9]+", "-", name).strip("-")
    if emulates:
        return f"emulated-{emulates}"
    return f"{_platform_short(platform)}-{type_}-{name}"


def _probe_cache_path():
    return icd.cache_dir() / f"probe-v{PROBE_VERSION}.json"


def _load_probe_cache() -> dict:
    try:
        with open(_probe_cache_path()) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def _save_probe_cache(cache: dict) -> None:
    path = _probe_cache_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(cache, indent=1, sort_keys=True))
        os.replace(tmp, path)
    except OSError as exc:
        log.debug("could not write probe cache: %s", exc)


def run_probes(infos: list[DeviceInfo]) -> dict[int, dict]:
    """Probe devices in child processes, in parallel, with the environment of
    ``icd.probe_environment``; the on-disk cache is neither read nor written. Returns
    {info.index: result}."""
    env = icd.probe_environment()
    procs = {}
    for info in infos:
        procs[info.index] = subprocess.Popen(
            [sys.executable, "-m", "clts.runtime.probe", str(info.platform_index),
             str(info.device_index)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    results = {}
    for index, p in procs.items():
        try:
            out, err = p.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            p.kill()
            results[index] = {"ok": False, "reason": "probe timed out after 300 s"}
            continue
        lines = [ln for ln in out.splitlines() if ln.startswith("{")]
        if p.returncode == 0 and lines:
            results[index] = json.loads(lines[-1])
        else:
            sig = -p.returncode if p.returncode < 0 else None
            how = f"killed by signal {sig}" if sig else f"exit code {p.returncode}"
            tail = " ".join(err.strip().splitlines()[-2:])[:300]
            results[index] = {"ok": False,
                              "reason": f"probe process crashed ({how}) building or running a "
                                        f"tiny kernel{': ' + tail if tail else ''}"}
    return results


_lock = threading.RLock()
_infos: list[DeviceInfo] | None = None
_devices: dict[int, "Device"] = {}


def discover(refresh: bool = False) -> list[DeviceInfo]:
    """Every OpenCL device of every platform, probed; in enumeration order."""
    global _infos
    with _lock:
        if _infos is not None and not refresh:
            return _infos
        cl = _cl()
        infos = []
        try:
            platforms = cl.get_platforms()
        except cl.Error as exc:
            log.warning("no OpenCL platform: %s", exc)
            platforms = []
        for pi, p in enumerate(platforms):
            try:
                devs = p.get_devices()
            except cl.Error as exc:
                log.warning("platform %s lists no device: %s", p.name, exc)
                continue
            for di, d in enumerate(devs):
                infos.append(DeviceInfo(
                    index=len(infos), platform_index=pi, device_index=di,
                    platform=p.name.strip(), name=d.name.strip(), vendor=d.vendor.strip(),
                    type=_type_name(cl, d.type), driver=d.driver_version.strip(),
                    version=d.version.strip(), extensions=frozenset(d.extensions.split()),
                    compute_units=d.max_compute_units, local_mem=d.local_mem_size,
                    max_work_group=d.max_work_group_size, max_alloc=d.max_mem_alloc_size,
                    global_mem=d.global_mem_size,
                    max_work_item_sizes=tuple(int(x) for x in d.max_work_item_sizes),
                    opencl_c_version=d.opencl_c_version.strip()))
        # a probe's result depends on the driver and on which drivers share the process
        ctx = icd.vendor_dir_setting()
        key = lambda i: f"{i.fingerprint}|{ctx}"
        cache = {} if refresh else _load_probe_cache()
        todo = [i for i in infos if key(i) not in cache]
        if todo:
            for index, res in run_probes(todo).items():
                cache[key(infos[index])] = res
            _save_probe_cache({**_load_probe_cache(), **cache})
        for i in infos:
            res = cache[key(i)]
            i.ok, i.reason = bool(res["ok"]), res.get("reason", "")
            if not i.ok:
                log.info("OpenCL device %r (%s) is unusable: %s", i.name, i.platform, i.reason)
        _infos = infos
        return infos


def usable() -> list[DeviceInfo]:
    """Working devices, best first."""
    return sorted((i for i in discover() if i.ok), key=DeviceInfo.sort_key)


def _match(spec: str, infos: list[DeviceInfo]) -> DeviceInfo:
    spec = str(spec).strip()
    if re.fullmatch(r"\d+", spec):
        k = int(spec)
        if k >= len(infos):
            raise DeviceError(f"device index {k} out of range: {len(infos)} devices "
                              "(see `clts devices`)")
        hit = infos[k]
    else:
        s = spec.lower()
        hits = [i for i in infos if s in i.name.lower() or s in i.platform.lower()
                or s in i.slug or s == i.fingerprint]
        if not hits:
            raise DeviceError(f"no OpenCL device matches {spec!r}; devices: "
                              + "; ".join(f"{i.index}: {i.platform} / {i.name}" for i in infos))
        good = sorted((h for h in hits if h.ok), key=DeviceInfo.sort_key)
        hit = good[0] if good else hits[0]
    if not hit.ok:
        raise DeviceError(f"OpenCL device {hit.index} ({hit.platform} / {hit.name}) is "
                          f"unusable: {hit.reason}")
    return hit


def get_device(device=None, *, emulation: bool = True) -> "Device":
    """The working OpenCL device that ``device`` names, created once per process.

    Parameters
    ----------
    device : None, int, str, DeviceInfo or Device, optional
        None: the ``device`` option (``$CLTS_DEVICE``) if set, else the default device (GPUs, then accelerators, then
        CPUs; real drivers before simulators; then more compute units). An int: the index in
        ``clts devices``. A str: a case-insensitive substring of the platform name, device name
        or slug (``"pocl"``, ``"intel"``). A Device is returned as is. Another type (a bool, a
        float, a list) is a TypeError.
    emulation : bool, optional
        With the ``emulate`` option (``$CLTS_EMULATE``, a recorded GPU description): the device
        found, emulating that GPU (``clts.runtime.emulation``); False: never.

    Returns
    -------
    Device
        Context, profiling queue, capabilities and profile of the device.

    Raises
    ------
    clts.DeviceError
        No working OpenCL device, or none that matches ``device`` (the message lists them).

    Examples
    --------
    >>> import clts
    >>> dev = clts.get_device()
    >>> dev is clts.get_device(dev.slug)
    True
    >>> dev.type in ("gpu", "cpu", "accelerator"), dev.max_work_group >= 1
    (True, True)
    """
    if isinstance(device, Device):
        return device
    if isinstance(device, (bool, float, complex, list, tuple, set, dict)):
        raise TypeError(f"device must be None, an int, a str or a Device, got {device!r}")
    name = options.get("emulate") if emulation else None
    if name:
        return emulate(name, get_device(device, emulation=False))
    with _lock:
        infos = discover()
        if isinstance(device, DeviceInfo):
            info = device
        elif device is not None:
            info = _match(device, infos)
        elif options.get("device") is not None:
            info = _match(options.get("device"), infos)
        else:
            good = usable()
            if not good:
                reasons = "; ".join(f"{i.name}: {i.reason}" for i in infos) or "none found"
                raise DeviceError("no working OpenCL device (" + reasons + "). On Debian: "
                                  "apt-get install pocl-opencl-icd")
            info = good[0]
        if info.index not in _devices:
            _devices[info.index] = Device(info)
        return _devices[info.index]


def _check_device_option(spec) -> None:
    _match(spec, discover())


options.device_check = _check_device_option      # set_options(device=...) checks at once


def portable(device):
    """``device`` as something every process can resolve: a :class:`Device` as its slug (OpenCL
    objects never cross a process boundary), anything else (None, an index, a name) as is."""
    return device.slug if isinstance(device, Device) else device


def all_devices() -> list["Device"]:
    return [get_device(i) for i in usable()]


_emulated_lock = threading.Lock()
_emulated: dict = {}


def emulate(name: str, base=None, **overrides):
    """A ``Device`` that decides as the recorded device ``name`` (``clts.runtime.emulation``)
    and runs on ``base`` (a device
    spec as for ``get_device``; default: the first working CPU device, pocl preferred).
    ``overrides``: DeviceInfo fields to change further (tests: ``extensions=...``)."""
    desc = descriptions.load(name)
    if base is None:
        cpus = [i for i in usable() if i.type == "cpu" and not i.simulator]
        if not cpus:
            raise DeviceError("emulation runs on a CPU OpenCL device; none works here")
        cpus.sort(key=lambda i: "portable computing" not in i.platform.lower())
        base = cpus[0]
    real = get_device(base, emulation=False) if not isinstance(base, Device) else base
    if real.info.emulates:
        raise DeviceError(f"{real!r} is already emulated")
    key = (desc["_name"], real.info.index, repr(sorted(overrides.items())))
    with _emulated_lock:
        dev = _emulated.get(key)
        if dev is None:
            info = descriptions.emulated_info(real.info, desc, overrides)
            descriptions.check_room(real.info, info)
            dev = _emulated[key] = Device(info, description=desc)
    return dev


class DeviceState:
    """Everything clts keeps for one device between calls, in one place: the scratch and slot
    memory pools, the staging pools of aligned and of pinned host arrays, arrays kept alive on a simulator,
    the program cache with its build locks, the copy queue and small per-device constants.

    The :class:`Device` owns it (``device.state``); nothing else stores anything on a Device.
    Every lazily created member is created under :attr:`lock`. :meth:`release_memory` gives the
    held memory back (``clts.tridiag.release_scratch``); :meth:`clear` forgets everything (the
    next call builds its programs again)."""

    def __init__(self, device: "Device"):
        self._device = weakref.ref(device)
        self.lock = threading.RLock()   # re-entrant: constant()'s make() may allocate (keep)
        self.programs: dict = {}        # (template, parameters, options) -> programs.Program
        self.build_locks: dict = {}     # the same key -> the lock its one build runs under
        self.program_index: dict = {}   # (template, given parameters, options) -> the same
        # programs (a look-up without normalising and printing the parameters: ~3 µs, not 16)
        self.pools: dict = {}           # "scratch", "slots" -> pyopencl MemoryPool
        self.staging: dict = {}         # nbytes -> aligned host arrays free for lending
        self.pinned: dict = {}          # nbytes -> pinned (mapped) host arrays free for lending
        self.kept: list = []            # simulator temporaries kept alive until release
        self.constants: dict = {}       # key -> a small device array made once (tridiag)
        self.copy_queue = None          # the second queue of the chunk loop, once made
        self.launch_hook = None         # emulated devices: called at every launch (the
        # coalescing tracer of clts.tune.coalescing)
        self.build_options: tuple = ()  # added to every build on this Device object (the
        # offline collector's "-cl-opt-disable": it keeps sources, not binaries)

    def _dev(self) -> "Device":
        dev = self._device()
        if dev is None:                 # pragma: no cover - the Device owns its state
            raise DeviceError("the device of this state is gone")
        return dev

    def pool(self, name: str = "scratch"):
        """The memory pool ``name`` of the device, made on first use."""
        pool = self.pools.get(name)
        if pool is None:
            with self.lock:
                pool = self.pools.get(name)
                if pool is None:
                    import pyopencl.tools as clt
                    pool = self.pools[name] = clt.MemoryPool(
                        clt.ImmediateAllocator(self._dev().queue))
        return pool

    def build_lock(self, key) -> threading.Lock:
        """The lock under which the program ``key`` is built once."""
        with self.lock:
            return self.build_locks.setdefault(key, threading.Lock())

    def queue_for_copies(self):
        """A second in-order profiling queue on the device's context, made on first use."""
        q = self.copy_queue
        if q is None:
            with self.lock:
                q = self.copy_queue
                if q is None:
                    import pyopencl as cl
                    dev = self._dev()
                    q = self.copy_queue = cl.CommandQueue(
                        dev.context, dev.cl_device,
                        properties=cl.command_queue_properties.PROFILING_ENABLE)
        return q

    def constant(self, key, make):
        """``make()`` once per device and ``key`` (a small device array), then the same."""
        value = self.constants.get(key)
        if value is None:
            with self.lock:
                value = self.constants.get(key)
                if value is None:
                    value = self.constants[key] = make()
        return value

    def release_memory(self) -> None:
        """Free the blocks the pools hold, drop the staging arrays, the kept temporaries and
        the temporaries of recorded launches (``runtime.replay``: their calls make them
        again)."""
        self.drop_recordings()
        for pool in list(self.pools.values()):
            pool.free_held()
        with self.lock:
            self.kept.clear()
            self.staging.clear()
            self.pinned.clear()

    def drop_recordings(self) -> None:
        """Drop the free recordings of every owner (``runtime.replay``'s recorders list
        themselves here; their calls record again)."""
        with self.lock:
            recorders = list(self.constants.get("replay.recorders", ()))
        for recorder in recorders:
            recorder.clear()

    def clear(self) -> None:
        """Forget everything: memory as :meth:`release_memory`, then the pools, the programs,
        their build locks, the constants and the copy queue."""
        self.release_memory()
        with self.lock:
            self.pools.clear()
            self.programs.clear()
            self.program_index.clear()
            self.build_locks.clear()
            self.constants.clear()
            self.copy_queue = None


@dataclass(eq=False)
class Device:
    """A working OpenCL device: context, profiling queue, capabilities and program cache.

    Get one with :func:`clts.get_device`; every public function also takes it as ``device=``.

    Attributes
    ----------
    context, queue : pyopencl.Context, pyopencl.CommandQueue
        The device's context and its profiling-enabled queue.
    name, platform, vendor, type, driver : str
        As the driver reports them (``type``: "gpu", "cpu" or "accelerator").
    fp64, int64_atomics : bool
        ``cl_khr_fp64``; 64-bit atomics (``cl_khr_int64_base_atomics``).
    local_mem, max_alloc, global_mem : int
        Bytes of local memory, largest buffer, global memory.
    max_work_group, compute_units : int
    fingerprint, slug : str
        A stable identifier of device + driver; a readable name
        (``pocl-cpu-skylake-avx512-amd-epyc``).
    profile
        The effective device profile (``clts profile --device D`` prints it).
    state : DeviceState
        What clts keeps for the device between calls (pools, programs); ``state.clear()``.
    description : dict or None
        The recorded GPU description an emulated device decides by (else None).

    Examples
    --------
    >>> import clts
    >>> dev = clts.get_device()
    >>> isinstance(dev.slug, str) and dev.global_mem > 0
    True
    """

    info: DeviceInfo
    description: dict | None = field(default=None, repr=False)

    def __post_init__(self):
        cl = _cl()
        self.cl_device = cl.get_platforms()[self.info.platform_index].get_devices()[
            self.info.device_index]
        self.context = cl.Context([self.cl_device])
        self.queue = cl.CommandQueue(
            self.context, properties=cl.command_queue_properties.PROFILING_ENABLE)
        self._profile = None
        self.state = DeviceState(self)

    # capabilities -------------------------------------------------------------------------
    name = property(lambda self: self.info.name)
    platform = property(lambda self: self.info.platform)
    vendor = property(lambda self: self.info.vendor)
    type = property(lambda self: self.info.type)
    driver = property(lambda self: self.info.driver)
    fp64 = property(lambda self: self.info.fp64)
    int64_atomics = property(lambda self: self.info.int64_atomics)
    local_mem = property(lambda self: self.info.local_mem)
    max_work_group = property(lambda self: self.info.max_work_group)
    max_work_item_sizes = property(lambda self: self.info.max_work_item_sizes)
    simd_width = property(lambda self: self.info.simd_width)
    opencl_c_version = property(lambda self: self.info.opencl_c_version)
    emulates = property(lambda self: self.info.emulates)
    max_alloc = property(lambda self: self.info.max_alloc)
    global_mem = property(lambda self: self.info.global_mem)
    compute_units = property(lambda self: self.info.compute_units)
    fingerprint = property(lambda self: self.info.fingerprint)
    slug = property(lambda self: self.info.slug)
    extensions = property(lambda self: self.info.extensions)

    def __repr__(self):
        return f"<clts.Device {self.info.index}: {self.slug} ({self})>"

    def __reduce__(self):
        # pickled (Dask, multiprocessing) as its name: the receiving process opens its own
        # context; OpenCL objects never cross a process boundary
        return (get_device, (self.slug,))

    def __str__(self):
        if self.info.emulates:
            return (f"{self.platform} / {self.name} (emulated: {self.info.emulates} limits on "
                    f"{self.cl_device.platform.name.strip()} / {self.cl_device.name.strip()})")
        return f"{self.platform} / {self.name}"

    def require(self, capability: str, have: bool) -> None:
        if not have:
            raise DeviceError(f"device {self} lacks {capability}")

    def require_dtype(self, dtype) -> None:
        if self.fp64:                   # every dtype runs (the check of every call: ~0.1 µs)
            return
        import numpy as np
        if np.dtype(dtype) == np.float64:
            self.require("cl_khr_fp64 (double precision); use float32 data", self.fp64)

    @property
    def profile(self):
        """The effective device profile (see clts.runtime.profiles)."""
        if self._profile is None:
            from .profiles import effective_profile
            self._profile = effective_profile(self)
        return self._profile

    def reload_profile(self) -> None:
        """Forget the effective profile: the next use reads the profile files again."""
        self._profile = None

    def program(self, template: str, *, build_options=(), **params):
        """Render ``templates/<template>`` with ``params``, build it with ``build_options``
        (OpenCL compiler flags) and cache it per (template, parameters, options), looked up
        before anything is rendered."""
        from .programs import build_program
        return build_program(self, template, params, build_options)
