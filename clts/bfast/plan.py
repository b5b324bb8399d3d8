"""The BFAST-Monitor Plan: code version and template parameters, from the profile and the shape.

Versions
  ``fused``  one work-item per ``lanes`` pixels (realN lanes): masked Gram matrix and X'y in
             registers, Cholesky solve, residual / MOSUM / break / mean sweep, median. Two passes
             over the cube. The CPU version (pocl vectorises only explicit vector types).
  ``multi``  Gieseke et al.'s "Ours": a Gram kernel (``lanes`` pixels per work-item, the K x K tile in
             registers), batched Gauss-Jordan inversion in local memory (one work-group of
             K x 2K work-items per pixel) that also forms beta, then the sweep kernel.
``history="ROC"`` adds one kernel (``lanes`` pixels per work-item, double precision where the
device has it) that finds the stable history start.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

VERSIONS = ("fused", "multi")
LANES = (1, 2, 4, 8, 16)


@dataclass(frozen=True)
class Plan:
    version: str = "fused"
    lanes: int = 1
    wg: int = 16
    roc_wg: int = 16

    def validate(self, dev=None):
        if self.version not in VERSIONS:
            raise ValueError(f"version must be one of {VERSIONS} or 'auto', got {self.version!r}")
        if self.lanes not in LANES:
            raise ValueError(f"lanes must be one of {LANES}, got {self.lanes!r}")
        for name in ("wg", "roc_wg"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
            if dev is not None and v > dev.max_work_group:
                raise ValueError(f"{name}={v} exceeds the device's max work-group size "
                                 f"{dev.max_work_group}")
        return self


def _profile_int(dev, key):
    from ..runtime.profiles import value_error
    v = dev.profile.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise value_error(dev.profile, key, f"must be an integer, got {v!r}")
    return v


def make_plan(dev, n_hist: int, K: int, version="auto", **overrides) -> Plan:
    """Plan from ``dev.profile`` (section ``bfast``) and the data shape; keywords override. A
    bad profile value is a ``ProfileError`` naming the file and key."""
    if version in (None, "auto"):
        version = "multi" if n_hist >= _profile_int(dev, "bfast.auto.multi_min_n") else "fused"
        if 2 * K * K > dev.max_work_group:
            version = "fused"
    if version not in VERSIONS:
        raise ValueError(f"version must be one of {VERSIONS} or 'auto', got {version!r}")
    unknown = set(overrides) - {"lanes", "wg", "roc_wg"}
    if unknown:
        raise TypeError(f"unknown plan parameter(s) {sorted(unknown)}; accepted: lanes, wg, roc_wg")
    keys = {"lanes": f"bfast.{version}.lanes", "wg": f"bfast.{version}.wg",
            "roc_wg": "bfast.roc.wg"}
    values = {}
    for name, key in keys.items():
        if overrides.get(name) is not None:
            values[name] = overrides[name]
            continue
        values[name] = _profile_int(dev, key)
        try:
            replace(Plan(), **{name: values[name]}).validate(dev)
        except ValueError as exc:
            from ..runtime.profiles import value_error
            raise value_error(dev.profile, key, str(exc)) from None
    plan = Plan(version=version, **values)
    if plan.version == "multi" and 2 * K * K > dev.max_work_group:
        raise ValueError(f"version 'multi' needs work-groups of 2*K*K = {2 * K * K} work-items; "
                         f"device allows {dev.max_work_group}")
    return plan.validate(dev)
