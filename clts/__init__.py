"""clts: OpenCL kernels for batched time-series and ocean-model computations.

Public API (each function takes ``device=``; see ``clts devices``): ``stl``, ``stl_hastl``,
``bfast_monitor``, ``matrix_profile``, ``motifs``, ``discords``, ``mass``, ``match``, ``fluss``, ``stumpi``, ``aamp``, ``solve_tridiagonal``,
``ocean.superbee_fluxes``, ``ocean.tke``, ``get_device``; results ``STLResult``, ``BfastResult``, ``MatrixProfileResult``,
``TridiagonalResult``; errors ``CltsError``, ``DeviceError``, ``KernelBuildError``,
``ProfileError``. Each has a numpydoc docstring with examples.
"""
from .errors import CltsError, DeviceError, KernelBuildError, ProfileError
from .runtime import Device, get_device
from .mp import MatrixProfileResult, discords, matrix_profile, motifs
from .mp import aamp, fluss, mass, match, stumpi   # p-norms, search, segmentation, streaming
from .stl import STLResult, stl, stl_hastl   # clts.stl: the function (the package by full path)
from .bfast import BfastResult, bfast_monitor
from .tridiag import TridiagonalResult, solve_tridiagonal
from . import ocean  # clts.ocean.superbee_fluxes, clts.ocean.tke

__version__ = "0.1.0"


def __getattr__(name):
    # optional front ends, imported on first use: clts.xarray, clts.distributed, clts.plots
    if name in ("xarray", "distributed", "plots"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["CltsError", "DeviceError", "KernelBuildError", "ProfileError", "Device",
           "get_device", "__version__", "matrix_profile", "motifs", "discords",
           "MatrixProfileResult", "stl", "stl_hastl", "STLResult",
           "mass", "match", "fluss", "stumpi", "aamp", "bfast_monitor", "BfastResult", "solve_tridiagonal", "TridiagonalResult", "ocean"]
