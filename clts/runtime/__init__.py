"""Everything that talks to OpenCL and to device profiles; no algorithm lives here."""
from ..errors import CltsError, DeviceError, KernelBuildError, ProfileError
from .devices import Device, DeviceInfo, all_devices, discover, get_device, usable
from .launch import launch, prepare, round_up, timing
from .memory import chunk_sizes, progress, to_device

__all__ = ["CltsError", "DeviceError", "KernelBuildError", "ProfileError", "Device",
           "DeviceInfo", "all_devices", "discover", "get_device", "usable", "launch", "prepare",
           "round_up", "timing", "chunk_sizes", "progress", "to_device"]
