"""Plan of the batched distance-profile kernel (``clts.mass``, ``clts.match``; mass.cl.mako).

- ``lanes`` (VW): adjacent windows per vector (1, 2, 4, 8, 16): pocl needs 8, GPUs 1.
- ``chains`` (U): independent vectors of windows per work-item (latency hiding on CPUs).
- ``wg``: work-group size along the windows (0: the driver picks).
- ``precision``: "double" (float64) or "single" (float32 throughout).

Read from the profile section ``mp.mass``; every field can be forced by keyword.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..runtime.plans import (LANE_WIDTHS, PlanBase, check_choice, check_int, check_work_group,
                             from_profile)

#: profile key of each Plan field
PROFILE_KEYS = {"lanes": "mp.mass.lanes", "chains": "mp.mass.chains", "wg": "mp.mass.wg"}
PRECISIONS = ("double", "single")
#: the largest number of chains a template is asked for
CHAINS_MAX = 8


@dataclass(frozen=True)
class Problem:
    """What one call's Plan depends on beyond the device: its ``precision``."""

    precision: str = "double"


@dataclass(frozen=True)
class MassPlan(PlanBase):
    lanes: int
    chains: int
    wg: int
    precision: str

    @property
    def real(self) -> str:
        return "double" if self.precision == "double" else "float"

    @property
    def windows_per_item(self) -> int:
        return self.lanes * self.chains

    def validate(self, dev=None):
        """Raise ``PlanValueError`` (a ValueError naming the field) for a bad value."""
        check_choice(self, "lanes", LANE_WIDTHS)
        check_int(self, "chains", hi=CHAINS_MAX)
        check_int(self, "wg", lo=0, note=" (0: the driver picks)")
        check_work_group(self, dev, "wg")
        check_choice(self, "precision", PRECISIONS)
        return self


def call_precision(dev, precision):
    """A call's ``precision`` ("double" or "single"; None: double where ``dev`` has float64),
    checked: a ValueError for another value, a DeviceError for double without float64."""
    if precision is None:
        precision = "double" if dev.fp64 else "single"
    if precision not in ("double", "single"):
        raise ValueError(f"precision must be 'double' or 'single', got {precision!r}")
    if precision == "double" and not dev.fp64:
        from ..errors import DeviceError
        raise DeviceError(f"device {dev} lacks cl_khr_fp64 (double precision), needed by "
                          "precision='double'; use precision='single'")
    return precision


def make_mass_plan(device, problem: Problem, **overrides) -> MassPlan:
    """The plan of one call from ``device``'s profile (``mp.mass``) for ``problem`` with the
    caller's keywords over it, or ``plan=`` as given (keywords still override its fields)."""
    return from_profile(MassPlan, device, PROFILE_KEYS, overrides,
                        fixed={"precision": problem.precision})
