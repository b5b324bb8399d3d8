"""The autotuner engine and the ``clts-tune`` command (imports the runtime, never the reverse)."""
from .registry import REGISTRY, load_all, register
from .space import Crossover, Tunable

__all__ = ["REGISTRY", "load_all", "register", "Crossover", "Tunable"]
