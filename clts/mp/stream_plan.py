"""Plan of ``clts.stumpi``'s update: which path a call takes (stream.py, stream_host.py).

- ``host_points``: an ``update`` of at most this many points goes through the host path one
  point at a time (O(n) each: the sliding dot product as a filter, exact distances for what it
  leaves undecided); a longer block goes to the device in one piece (an AB-join on the
  diagonal kernel plus distance profiles, O(n b) + O(n m)). The cost rule: per point the host
  costs about ``c_h n`` seconds, a device block ``(L + c_d n (b + m)) / b`` (L: the launches,
  uploads and syncs of one call); ``host_points`` is the b where the two meet, measured per
  device (bench/bench_mp_search.py prints both sides; 0: the device always). The host's state
  costs O(n m) to build (at first, and after a device block): without it, updates that can
  join (16 points or more) take the device.
- ``lazy_points``: ``update`` only queues points; they are applied (as one update, by the
  rule above) when the profile is read or when this many are pending. A stream that is read
  every point pays the host's price per point, one read every k points the price of a block
  of k. 1: every update at once.
- ``subgroup`` (Intel GPUs; 0: the compiler picks): the sub-group size the device stream's
  ``stream_update`` requires (intel_reqd_sub_group_size). IGC picks SIMD32 and spills the
  k-lists at 128 GRF (pvc float64: 384 B at k = 3, 27,584 B at k = 8); at SIMD16 none up to
  k = 8 in any precision (offline compiles). Results do not depend on it.

Read from the profile section ``mp.stream``; the field can be forced by keyword.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..runtime.plans import PlanBase, check_int, check_subgroup, from_profile

#: profile key of each Plan field
PROFILE_KEYS = {"host_points": "mp.stream.host_points",
                "lazy_points": "mp.stream.lazy_points", "subgroup": "mp.stream.subgroup"}


@dataclass(frozen=True)
class Problem:
    """What the update's Plan depends on beyond the device: nothing yet (one shape per stream)."""


@dataclass(frozen=True)
class StreamPlan(PlanBase):
    host_points: int
    lazy_points: int
    subgroup: int = 0

    def validate(self, dev=None):
        """Raise ``PlanValueError`` (a ValueError naming the field) for a bad value."""
        check_int(self, "host_points", lo=0)
        check_int(self, "lazy_points")
        check_subgroup(self.subgroup)
        return self


def make_stream_plan(device, problem: Problem, **overrides) -> StreamPlan:
    """The plan from ``device``'s profile (``mp.stream``) with the caller's keywords over it,
    or ``plan=`` as given (keywords still override its fields)."""
    return from_profile(StreamPlan, device, PROFILE_KEYS, overrides)
