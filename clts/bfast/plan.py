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

``scratch`` (profile key ``bfast.scratch``): the layout of the per-pixel residual scratch that
the sweep (MOSUM lag window, median) and the ROC kernel (recursive residuals) write and read
at every time step: "pixel" (pixel-major, N values per pixel, compact: one work-item's values
in its own cache lines, the CPUs' choice) or "time" (by date, the residual of date t of pixel
p at t * Mp + p, NaN at a date not used: adjacent work-items touch adjacent words whatever
their gaps, one or two 128-byte segments per warp access on a GPU instead of 32; the window's
oldest residual by a row pointer, the median by a radix select over the dates; the fused
kernel's Gram loop in a form with fewer live values). Results are identical.

``matrix`` (profile key ``bfast.matrix``): who holds the K x K matrices of the multi version's
Gram kernel and of the ROC kernel's QR factor. "pixel": one work-item per pixel holds the whole
matrix (the CPUs' choice: realN lanes over pixels, no barriers). "rows": K work-items per pixel,
work-item a holds row a (``roc_wg // K`` pixels per work-group, pixels innermost): the Gram
kernel's rows need nothing from each other; the ROC kernel's Givens rows run as a pipeline, the
row a rotated by row a-1 handed on in local memory, the recursive residual leaving the last
row. No work-item holds the K x K matrix (229 registers on sm_80, 234 VGPRs on gfx908 and a
24-36 KB spill on pvc in float64 for the ROC kernel as one work-item per pixel). Results are
identical (the same operations in the same order per matrix entry).

``bounds`` (profile key ``bfast.bounds``, R's convention, multi version): "inline" computes the
MOSUM boundary crit sqrt(2 log(j / n)) at every monitoring date in the sweep (the CPUs'
choice); "table" has one small kernel tabulate it for every valid history count n and
monitoring count j with the same expression (the same bits) and the sweep read it: the
double-precision log held ~40 VGPRs of the float64 sweep on gfx908 (101 -> 61).
``subgroup`` (``bfast.subgroup``, 0: the compiler picks): the sub-group size the sweep requires
where the compiler knows ``intel_reqd_sub_group_size`` (Intel GPUs; IGC picks SIMD32 for the
float64 sweep on pvc and spills 12-15 KB at 128 GRF, none at SIMD16).
``waves`` (``bfast.fused.waves``, 0: the compiler picks): the fewest waves per SIMD the fused
kernel must fit on AMD GPUs (``amdgpu_waves_per_eu``), for the OLS processes (MOSUM, CUSUM)
only: on gfx908 the float64 K = 8 kernel took 116-119 VGPRs (2 waves, 20 %); at 3 it keeps 84
VGPRs and parks the rest in AGPRs (register moves), no scratch. ME and RE hold K x K state per
date (247-255 VGPRs), and float64 K = 9 spilled 92-100 B at 3 waves: the hint is off for them
and the Plan drops the profile's value above ``WAVES_MAX_K`` (8) regressors (a forced one
is kept).

``chunk_bytes`` (profile key ``bfast.chunk_bytes``; 0: none) caps the bytes of one chunk's
cube and scratch (N values in and N of scratch per pixel) below the device limits: the kernels
read each pixel's series in several passes, and on a CPU a chunk whose working set stays in
the last-level cache runs faster (docs/performance.md, "Figures behind the code").
"""
from __future__ import annotations

from dataclasses import dataclass

from ..runtime.plans import (LANE_WIDTHS, PlanBase, PlanValueError, check_choice, check_int,
                             check_subgroup, check_waves, check_work_group, profile_value,
                             read_tunables, validated)

VERSIONS = ("fused", "multi")
#: the most regressors whose fused kernel takes the profile's ``bfast.fused.waves``
WAVES_MAX_K = 8
SCRATCH = ("pixel", "time")
MATRIX = ("pixel", "rows")
BOUNDS = ("inline", "table")
LANES = LANE_WIDTHS


@dataclass(frozen=True)
class Problem:
    """The data shape of one BFAST-Monitor call: ``n_hist`` history dates, ``K`` regressors."""

    n_hist: int
    K: int


@dataclass(frozen=True)
class Plan(PlanBase):
    version: str
    lanes: int
    wg: int
    roc_wg: int
    chunk_bytes: int
    scratch: str = "pixel"
    matrix: str = "pixel"
    bounds: str = "inline"
    subgroup: int = 0
    waves: int = 0

    def validate(self, dev=None):
        """Raise ``PlanValueError`` (a ValueError naming the field) for a bad value; with
        ``dev``, also for a work-group beyond the device's limit."""
        if self.version not in VERSIONS:
            raise PlanValueError("version", f"must be one of {VERSIONS} or 'auto', got "
                                            f"{self.version!r}")
        check_choice(self, "lanes", LANES)
        check_choice(self, "scratch", SCRATCH)
        check_choice(self, "matrix", MATRIX)
        check_choice(self, "bounds", BOUNDS)
        check_subgroup(self.subgroup)
        check_waves(self.waves)
        check_int(self, "chunk_bytes", lo=0, note=" (0: no cap)")
        check_int(self, "wg")
        check_int(self, "roc_wg")
        check_work_group(self, dev, "wg", "roc_wg")
        return self


def multi_fits(dev, K: int) -> bool:
    """The multi-kernel version's Gauss-Jordan inversion (one work-group of 2*K*K work-items
    per pixel) fits the device's work-group limit; the run path and the tuner both use it."""
    return 2 * K * K <= dev.max_work_group


def make_plan(device, problem: Problem, **overrides) -> Plan:
    """Plan from ``device.profile`` (section ``bfast``) and the ``problem``; the keyword
    ``overrides`` (``version``, the tunables; None = not given) over it. A bad profile value
    is a ``ProfileError`` naming the file and key."""
    dev, n_hist, K = device, problem.n_hist, problem.K
    version = overrides.pop("version", "auto")
    if version in (None, "auto"):
        t = read_tunables(dev, {"multi_min_n": "bfast.auto.multi_min_n"}, {})
        version = "multi" if n_hist >= t.int_in("multi_min_n") else "fused"
        if not multi_fits(dev, K):
            version = "fused"
    if version not in VERSIONS:
        raise ValueError(f"version must be one of {VERSIONS} or 'auto', got {version!r}")
    keys = {"lanes": f"bfast.{version}.lanes", "wg": f"bfast.{version}.wg",
            "roc_wg": "bfast.roc.wg", "chunk_bytes": "bfast.chunk_bytes",
            "scratch": "bfast.scratch", "matrix": "bfast.matrix",
            "bounds": "bfast.bounds", "subgroup": "bfast.subgroup",
            "waves": "bfast.fused.waves"}
    t = read_tunables(dev, keys, overrides)
    if version == "fused" and "lanes" not in t.forced:
        t.values["lanes"] = capped_lanes(t.values["lanes"], K, profile_value(
            dev, "bfast.fused.max_lanes_k"))
    if "waves" not in t.forced and K > WAVES_MAX_K:
        t.values["waves"] = 0
    plan = validated(Plan(version=version, **t.values), dev, keys, t.forced)
    if plan.version == "multi" and not multi_fits(dev, K):
        raise ValueError(f"version 'multi' needs work-groups of 2*K*K = {2 * K * K} work-items; "
                         f"device allows {dev.max_work_group}")
    return plan


def capped_lanes(lanes, K: int, max_lanes_k) -> int:
    """The fused version's lanes for ``K`` regressors under the profile's
    ``bfast.fused.max_lanes_k`` (0: no cap): 1 where K exceeds it. Each lane holds its own K x K
    Gram tile and Cholesky factor, unrolled; Intel's CPU compiler takes tens of seconds over
    the wide ones at K = 18 (lanes 1: 1.5 s, lanes 2-16: 21-31 s; K <= 12: <= 8 s), a first
    call's wait that 16 lanes' 1.45x warm speed there repays only after ~12 M pixels
    (docs/performance.md). Only the profile's choice is capped; lanes a caller gives are kept.
    Lanes only group pixels: results are identical."""
    if isinstance(max_lanes_k, bool) or not isinstance(max_lanes_k, int) or max_lanes_k < 0:
        from ..errors import ProfileError
        raise ProfileError(f"profile key 'bfast.fused.max_lanes_k' must be a non-negative "
                           f"integer (0: no cap), got {max_lanes_k!r}")
    return 1 if max_lanes_k and K > max_lanes_k else lanes


def rows_group(K: int, wg: int) -> int:
    """Pixels per work-group of a "rows" kernel: ``wg // K`` (at least one), K work-items each."""
    return max(1, wg // K)


def chunk_cap(plan: Plan, N: int, in_bytes: int, real_bytes: int) -> int | None:
    """Pixels per chunk that keep its cube and scratch within ``plan.chunk_bytes`` (None: no
    cap), at least one work-group's worth."""
    if not plan.chunk_bytes:
        return None
    per = N * (in_bytes + real_bytes)
    return max(plan.lanes * plan.wg, plan.chunk_bytes // max(per, 1))
