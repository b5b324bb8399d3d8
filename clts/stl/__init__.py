"""Batched STL decomposition with missing values, after Serykh et al., "Seasonal-Trend Time
Series Decomposition on Graphics Processing Units" (IEEE BigData 2023).

This module is itself callable: ``clts.stl(y, period, ...)`` is :func:`clts.stl.api.stl`, while
``clts.stl.api``, ``clts.stl.reference``, ... stay importable as submodules."""
import sys as _sys
import types as _types

from .api import STLResult, stl, stl_hastl

__all__ = ["stl", "stl_hastl", "STLResult"]


class _CallableModule(_types.ModuleType):
    """The ``clts.stl`` package, callable as its ``stl`` function (so that the function and the
    subpackage can share the name ``clts.stl``)."""

    def __call__(self, *args, **kwargs):
        return stl(*args, **kwargs)

    @property
    def __signature__(self):
        import inspect
        return inspect.signature(stl)


_sys.modules[__name__].__class__ = _CallableModule
