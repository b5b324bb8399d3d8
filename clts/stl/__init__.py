"""Batched STL decomposition with missing values, after Serykh et al., "Seasonal-Trend Time
Series Decomposition on Graphics Processing Units" (IEEE BigData 2023).

As in the numpy ecosystem (``stumpy.stump``), ``clts.stl`` is the function
:func:`clts.stl.api.stl`, while this package's modules stay importable by their full path:
``from clts.stl import reference`` or ``importlib.import_module("clts.stl.plan")``.
"""
from .api import STLResult, stl
from .hastl import stl_hastl
from .mstl import MSTLResult, mstl

__all__ = ["stl", "stl_hastl", "STLResult", "mstl", "MSTLResult"]
