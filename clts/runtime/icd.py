"""Make every installed OpenCL driver visible to the ICD loader, without user set-up.

The ICD loader reads ``OCL_ICD_VENDORS`` once, on the first OpenCL call. Unless the user set it,
clts writes a directory of ``.icd`` files to its cache and points the variable there, before
pyopencl asks for platforms. The directory lists:

- the system's vendor files (``/etc/OpenCL/vendors``), e.g. Debian's pocl;
- Intel's CPU runtime when installed from PyPI (``intel-opencl-rt``): its own ICD file names a
  path that does not exist, so clts names ``<prefix>/lib/libintelocl.so`` itself;
- a GPU vendor's OpenCL library that no ``.icd`` file registers (NVIDIA's driver ships
  ``libnvidia-opencl.so.1`` but containers and some installs lack ``nvidia.icd``; likewise
  ROCm's ``libamdocl64.so`` and Intel's ``libigdrcl.so``), searched in the usual library folders
  and ``CLTS_OPENCL_LIB_DIRS`` (``os.pathsep``-separated);
The pocl that ``pyopencl[pocl]`` bundles is found by pyopencl's bundled loader on its own (it
may be broken on a given CPU; device probing finds that out and marks it unusable).

``python -m clts.runtime.icd`` prints the directory, so that other OpenCL programs (``clinfo``)
see the same drivers: ``OCL_ICD_VENDORS=$(python -m clts.runtime.icd) clinfo -l``.
"""
from __future__ import annotations

import glob
import hashlib
import os
import sys
from pathlib import Path

from ..options import parse_bool

SYSTEM_VENDOR_DIR = "/etc/OpenCL/vendors"
OCLGRIND_LIBS = ("/usr/lib/oclgrind/liboclgrind-rt-icd.so",
                 "/usr/lib/x86_64-linux-gnu/liboclgrind-rt-icd.so")


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "clts"


def _prefixes():
    seen = []
    for p in (sys.prefix, sys.base_prefix, os.environ.get("CONDA_PREFIX")):
        if p and p not in seen:
            seen.append(p)
    return seen


#: icd file name -> the library a GPU driver installs
GPU_LIBRARIES = {"clts-nvidia.icd": "libnvidia-opencl.so.1", "clts-amd.icd": "libamdocl64.so",
                 "clts-intel-gpu.icd": "libigdrcl.so"}
GPU_LIBRARY_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib",
                    "/usr/lib/x86_64-linux-gnu/intel-opencl", "/opt/rocm/lib",
                    "/opt/rocm/opencl/lib", "/usr/local/nvidia/lib64", "/usr/lib/wsl/lib")


def unregistered_gpu_libraries(registered) -> dict[str, str]:
    """{icd name: path} of GPU vendor libraries present but named by no registered entry."""
    extra = [d for d in os.environ.get("CLTS_OPENCL_LIB_DIRS", "").split(os.pathsep) if d]
    names = {os.path.basename(v) for v in registered}
    out = {}
    for icd_name, lib in GPU_LIBRARIES.items():
        if lib in names:
            continue
        for d in extra + list(GPU_LIBRARY_DIRS):
            path = os.path.join(d, lib)
            if os.path.exists(path):
                out[icd_name] = path
                break
    return out


def discover_vendor_libraries(include_oclgrind: bool = False) -> dict[str, str]:
    """Return {icd file name: library path or name} for every driver we can find."""
    entries: dict[str, str] = {}
    for f in sorted(glob.glob(os.path.join(SYSTEM_VENDOR_DIR, "*.icd"))):
        try:
            lib = Path(f).read_text().strip()
        except OSError:
            continue
        if lib:
            entries[os.path.basename(f)] = lib
    for prefix in _prefixes():
        lib = os.path.join(prefix, "lib", "libintelocl.so")
        if os.path.exists(lib):
            entries["clts-intel-cpu.icd"] = lib
            break
    entries.update(unregistered_gpu_libraries(entries.values()))
    if include_oclgrind:
        # Oclgrind alone: its LLVM and a CPU driver's LLVM in one process crash each other
        return {"oclgrind.icd": lib} if (lib := next(
            (p for p in OCLGRIND_LIBS if os.path.exists(p)), None)) else {}
    return {k: v for k, v in entries.items() if "oclgrind" not in v}


def write_vendor_dir(entries: dict[str, str], tag: str = "") -> Path:
    key = hashlib.sha1(repr(sorted(entries.items())).encode()).hexdigest()[:12]
    d = cache_dir() / "icd" / f"{tag}{key}"
    if not d.is_dir():
        tmp = d.with_name(d.name + f".tmp{os.getpid()}")
        tmp.mkdir(parents=True, exist_ok=True)
        for name, lib in entries.items():
            (tmp / name).write_text(lib + "\n")
        try:
            tmp.rename(d)
        except OSError:  # another process won the race
            for f in tmp.iterdir():
                f.unlink()
            tmp.rmdir()
    return d


def ensure_vendor_dir() -> str | None:
    """Point OCL_ICD_VENDORS at a directory listing every driver, unless the user set it.

    ``CLTS_OCLGRIND=1`` lists Oclgrind (the simulator) alone; the test mode uses it. (Oclgrind
    and a CPU driver loaded in one process crash: each brings its own LLVM.)
    """
    if os.environ.get("OCL_ICD_VENDORS"):
        return os.environ["OCL_ICD_VENDORS"]
    include_oclgrind = parse_bool(os.environ.get("CLTS_OCLGRIND") or "0", "CLTS_OCLGRIND")
    entries = discover_vendor_libraries(include_oclgrind)
    if not entries:
        return None
    d = write_vendor_dir(entries, "grind-" if include_oclgrind else "")
    os.environ["OCL_ICD_VENDORS"] = str(d)
    return str(d)


def vendor_dir_setting() -> str:
    """``OCL_ICD_VENDORS`` as it is now ("" when unset): part of a probe result's key."""
    return os.environ.get("OCL_ICD_VENDORS", "")


# Oclgrind's uninitialised-value tracker (OCLGRIND_UNINITIALIZED=1, set by the test mode)
# segfaults on vector loads such as the probe's vload8 (Oclgrind 21.10). The probe asks whether
# the driver builds and runs a kernel correctly; the checkers are the test mode's business.
_PROBE_ENV_DROP = ("OCLGRIND_UNINITIALIZED", "OCLGRIND_DATA_RACES", "OCLGRIND_CHECK_API")


def probe_environment() -> dict:
    """A device probe child's environment: ours without Oclgrind's checker variables."""
    return {k: v for k, v in os.environ.items() if k not in _PROBE_ENV_DROP}


if __name__ == "__main__":
    print(ensure_vendor_dir() or "")
