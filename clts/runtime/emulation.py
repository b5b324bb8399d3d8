"""Emulated devices: a recorded GPU description laid over a real (CPU) OpenCL device.

``clts/devices/emulated/<name>.yaml`` records what a real GPU reports through OpenCL (name,
vendor, platform, local memory, work-group and work-item limits, max allocation, compute units,
sub-group width, extensions, OpenCL C version) with the published sources of every figure.
``emulate(name)`` (or the option ``emulate=<name>``, ``CLTS_EMULATE``, for every device lookup) returns a ``Device`` whose
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

from ..errors import DeviceError
from .descriptions import REQUIRED, descriptions_dir, emulated_info, load, names
from .devices import emulate

__all__ = ["REQUIRED", "descriptions_dir", "emulated_info", "load", "names", "emulate",
           "check_launch", "static_local_mem"]


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


#: (program handle, kernel name) -> the kernel's own local memory (a kernel of its program)
_static: dict = {}          # -> (the program, kept alive: its handle stays its own; bytes)


def static_local_mem(device, kernel) -> int:
    """The local memory ``kernel`` declares itself. pocl's CL_KERNEL_LOCAL_MEM_SIZE also counts
    the ``__local`` arguments set on that kernel object (a prepared launch sets its arguments
    once; a shared kernel keeps its last launch's): asked of a fresh kernel object of the same
    program and name, once."""
    import pyopencl as cl

    from .kernel_objects import new_kernel
    try:
        prog = kernel.get_info(cl.kernel_info.PROGRAM)
        key = (prog.int_ptr, kernel.function_name)
        got = _static.get(key)
        if got is None:
            fresh = new_kernel(prog, kernel.function_name)
            # the program is kept with its figure: a released program's handle can be reused
            # by a later one (the collector builds hundreds per process, GPU after GPU), whose
            # kernel of the same name would otherwise get this one's figure
            got = _static[key] = (prog, int(fresh.get_work_group_info(
                cl.kernel_work_group_info.LOCAL_MEM_SIZE, device.cl_device)))
        return got[1]
    except cl.Error:
        return 0


def _kname(kernel) -> str:
    try:
        return kernel.function_name
    except Exception:       # noqa: BLE001 - a name for a message only
        return "?"
