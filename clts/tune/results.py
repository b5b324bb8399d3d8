"""What the tuner engine records: its settings and the result of every candidate, tunable and
crossover (``engine.Tuner`` fills them; ``output.py`` and ``cli.py`` read them)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .space import Crossover, Tunable

#: threshold written when the second version never wins: no data size reaches it
NEVER = 2**31 - 1


@dataclass
class Settings:
    repeats: int = 7            # timed runs per round
    warmup: int = 1             # untimed runs after the checked run
    noise: float = 0.05         # relative standard error of the median that triggers a round
    max_rounds: int = 4         # rounds before a measurement is called unstable
    exhaustive_max: int = 64    # spaces up to this size are searched exhaustively ("auto")
    max_evals: int = 48         # evaluation cap of the non-exhaustive strategies
    strategy: str = "auto"      # auto | exhaustive | random-local | kt:<kernel tuner strategy>
    seed: int = 0
    quick: bool = False
    min_seconds: float | None = None   # the guard (None: sizing.MIN_GPU_SECONDS on GPUs, off
                                       # on CPUs)

    @classmethod
    def quick_settings(cls, **kw):
        base = dict(repeats=3, warmup=1, max_rounds=2, max_evals=16, exhaustive_max=32,
                    quick=True)
        base.update(kw)
        return cls(**base)

    def fingerprint(self) -> tuple:
        return (self.repeats, self.warmup, self.noise, self.max_rounds, self.quick)


@dataclass
class CandidateResult:
    label: str
    params: dict
    ok: bool
    error: str = ""
    score: float | None = None        # geometric mean over workloads of the median seconds
    medians: list = field(default_factory=list)
    spread: float = 0.0               # worst relative spread (IQR / median) over workloads
    stable: bool = True
    samples: int = 0
    cached: bool = False

    def record(self) -> dict:
        return {"ok": self.ok, "error": self.error, "score": self.score,
                "medians": self.medians, "spread": self.spread, "stable": self.stable,
                "samples": self.samples}

    @classmethod
    def from_record(cls, lab, params, rec):
        return cls(label=lab, params=params, cached=True, **rec)


class _EntryResult:
    """What tunable and crossover results share: the entry's name and views of the candidates
    (``self.candidates``, every measured CandidateResult)."""

    @property
    def name(self):
        return self.entry.name

    @property
    def wrong(self):
        return [c for c in self.candidates if not c.ok]

    def table(self) -> dict:
        """{candidate label: seconds} of the correct candidates: a recorded timing table that
        ``FakeTimer`` can replay."""
        return {c.label: c.score for c in self.candidates if c.ok}

    @property
    def unstable(self):
        return [c for c in self.candidates if c.ok and not c.stable]


@dataclass
class TunableResult(_EntryResult):
    entry: Tunable
    strategy: str
    n_space: int                       # candidates passing the constraint
    n_rejected: int                    # candidates the constraint rejected
    candidates: list = field(default_factory=list)
    best: CandidateResult | None = None
    current: CandidateResult | None = None   # the profile's value before this run, if measured
    partial: bool = False
    seconds: float = 0.0
    warnings: list = field(default_factory=list)
    sizes: list | None = None          # the workloads' dimensions (Tunable.sizes)
    low_occupancy: int = 0             # GPU candidates skipped by the occupancy rating
    too_small: bool = False            # GPU best time under the guard: not decided
    kept: dict = field(default_factory=dict)   # the previous values kept then

    kind = "tunable"


    @property
    def values(self) -> dict:
        """{dotted profile key: value} to write; empty when nothing valid was found; the
        previous values when the guard found the timings too small to decide."""
        if self.best is None:
            return {}
        chosen = self.kept if self.too_small else self.best.params
        return {f"{self.entry.section}.{k}": v for k, v in chosen.items()}


    @property
    def status(self) -> str:
        if self.best is None:
            return "no valid candidate" if self.candidates else "not measured (budget)"
        if self.too_small:
            return "too small to decide"
        return "partial (budget)" if self.partial else "ok"


@dataclass
class CrossoverResult(_EntryResult):
    entry: Crossover
    rows: list = field(default_factory=list)   # (value, {version: CandidateResult}, winner)
    threshold: Any = None
    partial: bool = False
    seconds: float = 0.0
    warnings: list = field(default_factory=list)

    kind = "crossover"


    @property
    def values(self) -> dict:
        return {} if self.threshold is None else {self.entry.key: self.threshold}

    @property
    def candidates(self):
        return [c for _, by, _ in self.rows for c in by.values()]


    @property
    def status(self) -> str:
        if self.threshold is None:
            return "no threshold" + (" (budget)" if self.partial else "")
        if self.partial:
            return "partial (budget)"
        return "ok" + (" (not monotone)" if any("monoton" in w for w in self.warnings) else "")
