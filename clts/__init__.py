"""clts: OpenCL kernels for batched time-series and ocean-model computations.

Public API (each function takes ``device=``; see ``clts devices``): ``stl``, ``stl_hastl``,
``mstl``, ``trend_test``, ``mann_kendall``, ``sen_slope``,
``bfast_monitor``, ``bfast_breaks``, ``bfast_decompose``, ``bfastts`` (host numpy, no device), ``matrix_profile``, ``motifs``, ``discords``,
``mass``, ``match``, ``mpdist``, ``ostinato``, ``snippets``, ``scrump``, ``prescrump``, ``stimp``, ``fluss``, ``stumpi``, ``aamp``, ``mstump``, ``mdl``, ``subspace``, ``solve_tridiagonal``,
``ocean.superbee_fluxes``, ``ocean.tke``, ``get_device``; results ``STLResult``, ``BfastResult``, ``BreaksResult``, ``DecomposeResult``, ``RegularSeries``, ``MSTLResult``, ``TrendResult``,
``MatrixProfileResult``,
``TridiagonalResult``; errors ``CltsError``, ``DeviceError``, ``KernelBuildError``,
``ProfileError``; options ``set_options``, ``get_options``. Each has a numpydoc docstring with examples.
"""
from .errors import CltsError, DeviceError, KernelBuildError, ProfileError
from .options import get_options, set_options
from .runtime import Device, get_device
from .runtime.arrays import to_numpy   # device results (pyopencl arrays) to numpy, one way
from .mp import MatrixProfileResult, discords, matrix_profile, motifs
from .mp import mpdist, mpdist_vect, ostinato, snippets  # batched: MPdist, consensus motif, snippets
from .mp import prescrump, scrump, stimp  # anytime approximate profile, pan matrix profile
from .mp import allc, atsc, floss, mmotifs  # chains, streaming segmentation, m-d motifs
from .mp import aamp, fluss, mass, match, mdl, mstump, stumpi, subspace  # p-norms, search, segmentation, streaming, multi-dim
from .stl import STLResult, stl, stl_hastl   # clts.stl: the function (the package by full path)
from .stl import MSTLResult, mstl
from .trend import TrendResult, mann_kendall, sen_slope, trend_test
from .bfast import BfastResult, BreaksResult, bfast_breaks, bfast_monitor
from .bfast import Bfast01Result, bfast01
from .bfast import DecomposeResult, bfast_decompose
from .bfast import RegularSeries, bfastts     # R's bfastts: dates onto a regular grid
from .tridiag import TridiagonalResult, solve_tridiagonal
from . import ocean  # clts.ocean.superbee_fluxes, clts.ocean.tke
from . import labels as _labels, plots as _plots
from .runtime import integrations as _integrations

# the face wraps the algorithms: labelled (pandas / xarray) inputs come back labelled, and
# result.plot() draws with matplotlib; the algorithms import neither
_integrations.install_labels(_labels.labelled)
_integrations.install_plots(stl=_plots.plot_stl, bfast=_plots.plot_bfast, mp=_plots.plot_mp,
                            mstl=_plots.plot_mstl, trend=_plots.plot_trend_map,
                            bfast_decompose=_plots.plot_bfast_decompose)

from ._version import __version__

# one public call at a time per device where the driver needs it (clts/runtime/threads.py)
from .runtime.threads import serialised as _serialised


def _serialise_public():
    import sys
    subs = [sys.modules[f"{__name__}.{m}"] for m in ("mp", "stl", "trend", "bfast", "tridiag")]
    # matrix_profile is an object: its class's __call__ (stumpi's device blocks go through it)
    type(matrix_profile).__call__ = _serialised(type(matrix_profile).__call__)
    for name in ("motifs", "discords", "aamp", "fluss", "mass", "match", "mdl", "mpdist",
                 "mpdist_vect", "ostinato", "snippets", "scrump", "prescrump", "stimp",
                 "mmotifs",
                 "mstump", "subspace", "stl", "stl_hastl", "mstl", "mann_kendall",
                 "sen_slope", "trend_test", "bfast_breaks", "bfast_monitor", "bfast01",
                 "bfast_decompose",
                 "solve_tridiagonal"):
        globals()[name] = _wrap(globals()[name], subs)
    for name in ("tke", "superbee_fluxes"):
        setattr(ocean, name, _wrap(getattr(ocean, name), [ocean]))


def _wrap(fn, modules):
    """``fn`` serialised, put in its place in ``modules`` and in the module that defines it
    (pickle finds a function by its module and name: dask and multiprocessing pickle them)."""
    import sys
    wrapped = _serialised(fn)
    for mod in list(modules) + [sys.modules.get(fn.__module__)]:
        if mod is not None and getattr(mod, fn.__name__, None) is fn:
            setattr(mod, fn.__name__, wrapped)
    return wrapped


_serialise_public()


def __getattr__(name):
    # optional front ends, imported on first use: clts.xarray, clts.distributed, clts.plots
    if name in ("xarray", "distributed", "plots"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["CltsError", "DeviceError", "KernelBuildError", "ProfileError", "Device",
           "set_options", "get_options",
           "get_device", "__version__", "matrix_profile", "motifs", "discords",
           "MatrixProfileResult", "stl", "stl_hastl", "STLResult",
           "mass", "match", "fluss", "stumpi", "aamp", "mstump", "mdl", "subspace",
           "mpdist", "mpdist_vect", "ostinato", "snippets", "scrump", "prescrump", "stimp",
           "allc", "atsc", "floss", "mmotifs",
           "bfast_monitor", "BfastResult", "bfast_breaks", "BreaksResult", "bfastts",
           "RegularSeries", "bfast01", "Bfast01Result", "bfast_decompose", "DecomposeResult",
           "mstl", "MSTLResult", "mann_kendall", "sen_slope", "trend_test", "TrendResult",
           "solve_tridiagonal", "TridiagonalResult", "ocean", "to_numpy"]
