"""The list of algorithm modules whose ``tuning.py`` registers with the tuner.

Adding an algorithm adds one line to ``ALGORITHM_MODULES``; nothing else shared changes.
"""
from __future__ import annotations

import importlib

from .space import Crossover, Registry, Tunable

ALGORITHM_MODULES = (
)

REGISTRY = Registry()
_loaded = False


def register(entry: Tunable | Crossover):
    """Called by an algorithm's tuning.py at import time."""
    return REGISTRY.add(entry)


def load_all() -> Registry:
    global _loaded
    if not _loaded:
        for mod in ALGORITHM_MODULES:
            importlib.import_module(mod)
        _loaded = True
    return REGISTRY
