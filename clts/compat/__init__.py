"""Drop-in modules for users of other libraries: change one import, keep the calls.

``clts.compat.stumpy``
    stumpy 1.14's names, signatures and return layouts (``stump`` / ``aamp`` / ``gpu_stump``
    give the ``(l, 2k + 2)`` object array, ``mstump`` the ``(P_, I_)`` tuple, ...), computed by
    clts's matrix-profile functions.
``clts.compat.pymannkendall``
    pymannkendall 1.4's test functions and named tuples, computed by :func:`clts.trend_test`.

Functions of those libraries that clts does not have raise ``NotImplementedError`` naming what
is missing; see docs/migrating-from-stumpy.md and docs/migrating-from-pymannkendall.md.
"""
from . import pymannkendall, stumpy

__all__ = ["stumpy", "pymannkendall"]
