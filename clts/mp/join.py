"""One matrix-profile computation as the driver modules (diagonal.py, topk.py) see it."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .plan import Plan
from .series import Side, scale_on_device


@dataclass
class Join:
    """What one call computes: the devices and plan, the two series, the join's kind and the
    prepared sides (statistics, flags, update coefficients), each made once per device."""

    devs: list
    plan: Plan
    T_A: np.ndarray
    T_B: np.ndarray | None          # None: self-join
    m: int
    ez: int                         # exclusion zone (self-joins)
    k: int
    both: bool                      # AB-joins: T_B's profile against T_A too
    normalize: bool
    pad: int                        # zero columns on each side of a column series
    show_progress: bool
    _sides: dict = field(default_factory=dict, repr=False)
    #: (part, parts): only that part of the bands split in ``parts`` by work, on ``devs[0]``
    #: (one worker's share of a distributed run, see clts.distributed)
    bands: tuple | None = None
    #: the call that runs a calibration matrix profile (clts.mp.api._compute), for a large run
    #: whose progress bar wants an estimate before any calibration exists
    calibrate: object = None

    @property
    def self_join(self) -> bool:
        return self.T_B is None

    @property
    def cols(self) -> bool:
        """Whether the column bests are needed (self-joins: the left neighbours; ``both``)."""
        return self.self_join or self.both

    def side(self, dev, key: str) -> Side:
        """The row side "A" or column side "B" on ``dev`` (B is A for self-joins)."""
        if key == "B" and self.self_join:
            key = "A"
        if (dev.slug, key) not in self._sides:
            T, scale = self._raw(dev, key)
            s = Side(dev, T, self.m, self.plan, self.normalize, self.pad, scale=scale)
            # an AB-join's diagonals enter the column side from its padding
            s.mark_ill(self.plan, self.plan.segment, column=key == "B" and not self.self_join)
            self._sides[(dev.slug, key)] = s
        return self._sides[(dev.slug, key)]

    def _raw(self, dev, key):
        """(device series, device scale factors) of side ``key`` on ``dev``: a host series
        uploaded once as it is; scaled on the device (``series.scale_on_device``): each
        series alone for z-normalised distances, both together for plain Euclidean AB-joins."""
        from ..runtime.arrays import is_device_array
        from ..runtime.memory import upload_scratch
        if (dev.slug, "raw") not in self._sides:
            dt = np.float64 if dev.fp64 else np.float32

            def put(T):
                if T is None or is_device_array(T):
                    return T
                return upload_scratch(dev, np.ascontiguousarray(T, dtype=dt))
            TA, TB = put(self.T_A), put(self.T_B)
            if self.normalize or TB is None:
                sA = scale_on_device(dev, self.plan, self.normalize, TA)
                sB = None if TB is None else scale_on_device(dev, self.plan, self.normalize, TB)
            else:
                sA = sB = scale_on_device(dev, self.plan, self.normalize, TA, TB)
            self._sides[(dev.slug, "raw")] = {"A": (TA, sA), "B": (TB, sB)}
        return self._sides[(dev.slug, "raw")][key]

    @property
    def A(self) -> Side:
        return self.side(self.devs[0], "A")

    @property
    def B(self) -> Side:
        return self.side(self.devs[0], "B")
