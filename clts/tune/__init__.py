"""The autotuner engine and the ``clts-tune`` command (imports the runtime, never the reverse).

Algorithms register ``Tunable`` / ``Crossover`` entries (``space.py``) from their ``tuning.py``;
``Tuner`` (``engine.py``) checks, times and chooses; ``output.py`` writes the profile;
``cli.py`` is ``clts-tune``. ``FakeTimer`` replays recorded timing tables for tests.
"""
from .engine import Tuner
from .results import CandidateResult, CrossoverResult, Settings, TunableResult
from .registry import REGISTRY, load_all, register
from .space import Crossover, Tunable
from .timer import EventTimer, FakeTimer

__all__ = ["REGISTRY", "load_all", "register", "Crossover", "Tunable", "Tuner", "Settings",
           "CandidateResult", "TunableResult", "CrossoverResult", "EventTimer", "FakeTimer"]
