"""Plan of the multi-dimensional matrix profile kernel (``clts.mstump``; mdiag.cl.mako).

- ``lanes``: adjacent diagonals per vector (1, 2, 4, 8, 16): pocl needs 4 or 8, GPUs 1.
- ``groups``: vectors of diagonals per work-item; a band is D = lanes * groups diagonals
  (at most 64, the zero padding past a series' end).
- ``segment``: rows per work-item; each dimension's covariance is computed exactly at the
  segment start, then updated in O(1) per row.
- ``wg``: work-group size (work-items share nothing: a scheduling choice).
- ``interleave``: 1 lays the per-work-item partial profiles (rowPV / colPV) out interleaved
  by work-item (GPUs: adjacent work-items store adjacent words), 0 a slice per work-item (CPUs).
- ``fold``: work-group size of the work-group-cooperative folds of the partial profiles
  (GPUs: one work-group per row / per 32 column groups, adjacent work-items reading adjacent
  partials, a tree of lexicographic minima in local memory; a power of two), 0 one work-item
  per row / column walking the launch's work-items (CPUs). Results are identical.
- ``subgroup`` (Intel GPUs): the sub-group size the kernel requires (``intel_reqd_sub_group_size``
  where the compiler has it; 0: the compiler picks). IGC compiles the float64 d = 8 kernel at
  SIMD32 and spills 896 B at 128 GRF (pvc); none at SIMD16 (intel-gpu-max.yaml: 16).
- ``waves`` (AMD GPUs): the fewest waves per SIMD the compiler must fit the kernel to
  (``amdgpu_waves_per_eu``; 0: its own choice; float64 builds of more than
  ``mstump.WAVES_MAX_DIM64`` dimensions go without). On gfx908 the float64 d = 8 kernel took
  119 VGPRs (2 waves per SIMD: 20 %); at 3 (the fewest that reach ``occupancy.MIN_FRACTION``
  of 10 waves per SIMD: ``min_waves``) 83 VGPRs, no scratch (33 values in AGPRs, register
  moves; amd-mi100.yaml: 3).
- ``coop``: work-items per pair of the winners' exact re-evaluation (profile ``mp.exact.coop``;
  exact.py: GPUs 32, coalesced reads of each window; 0 a work-item per pair).
- ``precision``: "double" (float64) or "single" (float32 throughout).

Read from the profile section ``mp.mstump``; every field can be forced by keyword.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..runtime.occupancy import MIN_FRACTION
from ..runtime.plans import (LANE_WIDTHS, PlanBase, PlanValueError, check_choice, check_int,
                             check_subgroup, check_waves, check_work_group, from_profile)
from .exact import COOPS
from .series import PAD_SLACK

#: profile key of each Plan field
PROFILE_KEYS = {"lanes": "mp.mstump.lanes", "groups": "mp.mstump.groups",
                "segment": "mp.mstump.segment", "wg": "mp.mstump.wg",
                "interleave": "mp.mstump.interleave", "fold": "mp.mstump.fold",
                "subgroup": "mp.mstump.subgroup", "waves": "mp.mstump.waves",
                "coop": "mp.exact.coop"}
PRECISIONS = ("double", "single")


@dataclass(frozen=True)
class Problem:
    """What one call's Plan depends on beyond the device: its ``precision``."""

    precision: str = "double"


@dataclass(frozen=True)
class MstumpPlan(PlanBase):
    lanes: int
    groups: int
    segment: int
    wg: int
    precision: str
    interleave: int = 0
    fold: int = 0
    subgroup: int = 0
    waves: int = 0
    coop: int = 0

    @property
    def band(self) -> int:
        return self.lanes * self.groups

    @property
    def kernel_real(self) -> str:
        return "double" if self.precision == "double" else "float"

    @property
    def exact_real(self) -> str:
        return self.kernel_real

    def validate(self, dev=None):
        """Raise ``PlanValueError`` (a ValueError naming the field) for a bad value."""
        check_choice(self, "lanes", LANE_WIDTHS)
        for name in ("groups", "segment", "wg"):
            check_int(self, name)
        check_int(self, "interleave", lo=0, hi=1)
        check_int(self, "fold", lo=0)
        if self.fold & (self.fold - 1):
            raise PlanValueError("fold", f"must be 0 or a power of two, got {self.fold}")
        check_subgroup(self.subgroup)
        check_waves(self.waves)
        check_choice(self, "coop", COOPS)
        if self.band > PAD_SLACK:
            raise PlanValueError("groups", f"lanes * groups must be <= {PAD_SLACK}, got "
                                           f"{self.lanes} * {self.groups}")
        check_work_group(self, dev, "wg", "fold")
        check_choice(self, "precision", PRECISIONS)
        return self


def min_waves(lim) -> int:
    """AMD: the fewest waves per SIMD that keep ``occupancy.MIN_FRACTION`` of a CU's waves
    resident (gfx908: 3 of 10, gfx90a: 2 of 8); the profiles' ``mp.mstump.waves``."""
    return math.ceil(MIN_FRACTION * lim.max_waves)


def make_mstump_plan(device, problem: Problem, **overrides) -> MstumpPlan:
    """The plan of one call from ``device``'s profile (``mp.mstump``) for ``problem`` with the
    caller's keywords over it, or ``plan=`` as given (keywords still override its fields)."""
    fixed = {"precision": problem.precision}
    return from_profile(MstumpPlan, device, PROFILE_KEYS, overrides, fixed=fixed, over_plan=fixed)
