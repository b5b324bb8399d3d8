"""The list of algorithm modules whose ``tuning.py`` registers with the tuner.

Adding an algorithm adds one line to ``ALGORITHM_MODULES``; nothing else shared changes.
"""
from __future__ import annotations

import importlib

from .space import Crossover, Registry, Tunable

ALGORITHM_MODULES = (
    "clts.tridiag.tuning",
    "clts.mp.tuning",
    "clts.stl.tuning",
    "clts.bfast.tuning",
    "clts.ocean.tuning",
    "clts.trend.tuning",
)

REGISTRY = Registry()
_loaded = False


def register(entry: Tunable | Crossover):
    """Called by an algorithm's tuning.py at import time."""
    return REGISTRY.add(entry)


def load_all(strict: bool = False, refresh: bool = False) -> Registry:
    """Import every algorithm's tuning module. A module that fails to import is recorded in
    ``REGISTRY.errors`` (``clts-tune`` warns and tunes the others) unless ``strict``. Done once
    per process; ``refresh`` imports them again (a module that failed is tried again)."""
    global _loaded
    if not _loaded or refresh:
        for mod in ALGORITHM_MODULES:
            try:
                importlib.import_module(mod)
            except Exception as exc:  # noqa: BLE001 - one broken algorithm must not stop the rest
                if strict:
                    raise
                REGISTRY.errors[mod] = f"{type(exc).__name__}: {exc}"
        _loaded = True
    return REGISTRY
