"""Recorded GPU descriptions (``clts/devices/emulated/<name>.yaml``): what a real GPU reports
through OpenCL, with the published sources of every figure; loaded, checked and laid over a real
device's ``DeviceInfo``. ``clts.runtime.emulation`` explains how they are used."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from .. import options
from ..errors import DeviceError

#: description fields that replace the real device's (DeviceInfo field name -> YAML key)
_FIELDS = {"name": "name", "vendor": "vendor", "platform": "platform", "type": "type",
           "driver": "driver", "compute_units": "compute_units", "local_mem": "local_mem",
           "max_work_group": "max_work_group", "max_alloc": "max_alloc",
           "global_mem": "global_mem", "simd_width": "simd_width",
           "opencl_c_version": "opencl_c_version"}
REQUIRED = tuple(_FIELDS.values()) + ("schema", "max_work_item_sizes", "extensions",
                                      "offline_target", "sources")


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


def check_room(real, emu) -> None:
    """The real device must allow what the emulated one does (the kernels run on it)."""
    if emu.local_mem > real.local_mem or emu.max_work_group > real.max_work_group:
        raise DeviceError(f"cannot emulate {emu.name} on {real.name}: it allows less "
                          f"(local memory {real.local_mem} < {emu.local_mem} or work-group "
                          f"{real.max_work_group} < {emu.max_work_group})")


def _check_emulate_option(name) -> None:
    load(name)


options.emulate_check = _check_emulate_option   # set_options(emulate=...) checks at once
