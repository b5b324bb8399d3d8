"""Emulated devices: a recorded GPU description laid over a real (CPU) OpenCL device.

``clts/devices/emulated/<name>.yaml`` records what a real GPU reports through OpenCL (name,
vendor, platform, local memory, work-group and work-item limits, max allocation, compute units,
sub-group width, extensions, OpenCL C version) with the published sources of every figure.
``emulate(name)`` (or ``CLTS_EMULATE=<name>`` for every device lookup) returns a ``Device`` whose
capabilities are that GPU's while its context, queue and programs are the real device's: Plans,
``auto``, chunking, profile matching and the fallbacks (top-k lists that do not fit local
memory, the partial merge without int64 atomics, float64 refused without fp64) decide as they
would on the GPU, and the kernels then run, e.g. on pocl, and can be checked against the
references.

Every launch on an emulated device is checked against the description: work-group size and
work-item sizes, the kernel's static local memory plus its ``__local`` arguments. A plan that
would not fit the GPU fails there with ``DeviceError`` instead of passing on the CPU's larger
limits. Emulation proves the logic under the GPU's limits, not speed or the GPU's compiler.
"""
from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path

import yaml

from ..errors import DeviceError

#: description fields that replace the real device's (DeviceInfo field name -> YAML key)
_FIELDS = {"name": "name", "vendor": "vendor", "platform": "platform", "type": "type",
           "driver": "driver", "compute_units": "compute_units", "local_mem": "local_mem",
           "max_work_group": "max_work_group", "max_alloc": "max_alloc",
           "global_mem": "global_mem", "simd_width": "simd_width",
           "opencl_c_version": "opencl_c_version"}
REQUIRED = tuple(_FIELDS.values()) + ("schema", "max_work_item_sizes", "extensions",
                                      "offline_target", "sources")
_lock = threading.Lock()
_emulated: dict = {}


def descriptions_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "devices" / "emulated"


def names() -> list[str]:
    """The recorded descriptions (file stems of ``devices/emulated/*.yaml``)."""
    return sorted(p.stem for p in descriptions_dir().glob("*.yaml"))


def load(name: str) -> dict:
    """The description ``name`` (a file stem, or a path to a YAML file), checked."""
    path = Path(name) if str(name).endswith((".yaml", ".yml")) else \
        descriptions_dir() / f"{name}.yaml"
    if not path.is_file():
        raise DeviceError(f"no recorded device description {name!r}; known: "
                          f"{', '.join(names())} (clts/devices/emulated/)")
    with open(path, encoding="utf-8") as f:
        data = yaml.safe_load(f)
    if not isinstance(data, dict):
        raise DeviceError(f"{path}: a device description is a mapping")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise DeviceError(f"{path}: missing key(s) {', '.join(missing)}")
    for k in ("compute_units", "local_mem", "max_work_group", "max_alloc", "global_mem",
              "simd_width"):
        if isinstance(data[k], bool) or not isinstance(data[k], int) or data[k] < 1:
            raise DeviceError(f"{path}: key {k!r} must be a positive integer, got {data[k]!r}")
    sizes = data["max_work_item_sizes"]
    if not (isinstance(sizes, list) and len(sizes) == 3 and all(isinstance(s, int) for s in sizes)):
        raise DeviceError(f"{path}: key 'max_work_item_sizes' must be three integers")
    if data["type"] not in ("gpu", "cpu", "accelerator"):
        raise DeviceError(f"{path}: key 'type' must be gpu, cpu or accelerator")
    if not data["sources"]:
        raise DeviceError(f"{path}: key 'sources' must cite where the figures come from")
    data["_path"] = str(path)
    data["_name"] = path.stem
    return data


def emulated_info(real_info, desc: dict, overrides: dict | None = None):
    """A ``DeviceInfo`` with the description's capabilities over ``real_info``'s indices.
    ``overrides`` replaces fields (``extensions`` as a set), e.g. to take an extension away."""
    values = {f: desc[k] for f, k in _FIELDS.items()}
    values.update(extensions=frozenset(desc["extensions"]),
                  max_work_item_sizes=tuple(desc["max_work_item_sizes"]),
                  emulates=desc["_name"], ok=real_info.ok, reason=real_info.reason)
    for k, v in (overrides or {}).items():
        values[k] = frozenset(v) if k == "extensions" else v
    return dataclasses.replace(real_info, **values)


def emulate(name: str, base=None, **overrides):
    """A ``Device`` that decides as the recorded device ``name`` and runs on ``base`` (a device
    spec as for ``get_device``; default: the first working CPU device, pocl preferred).
    ``overrides``: DeviceInfo fields to change further (tests: ``extensions=...``)."""
    from .devices import Device, get_device, usable
    desc = load(name)
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
    with _lock:
        dev = _emulated.get(key)
        if dev is None:
            info = emulated_info(real.info, desc, overrides)
            _check_room(real.info, info)
            dev = _emulated[key] = Device(info)
            dev.description = desc
    return dev


def _check_room(real, emu) -> None:
    """The real device must allow what the emulated one does (the kernels run on it)."""
    if emu.local_mem > real.local_mem or emu.max_work_group > real.max_work_group:
        raise DeviceError(f"cannot emulate {emu.name} on {real.name}: it allows less "
                          f"(local memory {real.local_mem} < {emu.local_mem} or work-group "
                          f"{real.max_work_group} < {emu.max_work_group})")


def from_environment():
    """The description name in ``CLTS_EMULATE``, or None."""
    return os.environ.get("CLTS_EMULATE", "").strip() or None


def check_launch(device, kernel, local_size, args) -> None:
    """On an emulated device: the launch must fit the description's limits."""
    info = device.info
    if local_size is not None:
        total = 1
        for d, s in enumerate(local_size):
            total *= int(s)
            if info.max_work_item_sizes and int(s) > info.max_work_item_sizes[d]:
                raise DeviceError(f"emulated {info.name}: work-group dimension {d} of "
                                  f"{s} > {info.max_work_item_sizes[d]} ({_kname(kernel)})")
        if total > info.max_work_group:
            raise DeviceError(f"emulated {info.name}: work-group of {total} work-items > "
                              f"{info.max_work_group} ({_kname(kernel)})")
    import pyopencl as cl
    dynamic = sum(int(a.size) for a in args if isinstance(a, cl.LocalMemory))
    static = static_local_mem(device, kernel)
    log = getattr(device, "launch_log", None)
    if log is not None:     # the offline collector's record of every launch (clts.tune.offline)
        log.append((kernel, tuple(local_size or ()), dynamic, static))
    if static + dynamic > info.local_mem:
        raise DeviceError(f"emulated {info.name}: kernel {_kname(kernel)} uses {static} bytes "
                          f"of static and {dynamic} of argument local memory, more than "
                          f"{info.local_mem}")


def static_local_mem(device, kernel) -> int:
    import pyopencl as cl
    try:
        return int(kernel.get_work_group_info(cl.kernel_work_group_info.LOCAL_MEM_SIZE,
                                              device.cl_device))
    except cl.Error:
        return 0


def _kname(kernel) -> str:
    try:
        return kernel.function_name
    except Exception:       # noqa: BLE001 - a name for a message only
        return "?"
