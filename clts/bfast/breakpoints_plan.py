"""The Plan of the batched Bai-Perron ``breakpoints`` (``clts.bfast_breaks``, ``history="BP"``).

Two kernels (``templates/bfast/breakpoints.cl.mako``):
  ``bp_rss``  the RSS triangle: one work-item per (``lanes`` pixels, start date), work-groups of
              ``wg`` work-items along the pixels; the K x K R factor of the start's segment in
              registers, rows rotated in by Givens rotations (O(K^2) a date).
  ``bp_dp``   the dynamic programme, one pixel per work-item, work-groups of ``dp_wg``.
The triangle (N (N + 1) / 2 values a pixel) is stored with ``interleave`` pixels innermost: the
lanes of one vector store on a CPU (interleave = lanes), a coalesced row of a warp / wavefront
on a GPU (interleave = 64). ``chunk_bytes`` caps a chunk's triangle + scratch (0: only the
device limits): the triangle of 300 dates is 361 KB a pixel in float64. ``subgroup`` (0: the
compiler picks) is the sub-group size ``bp_rss`` requires on Intel GPUs: IGC picks SIMD32 on the
Data Center GPU Max and spills the float64 rotation state at 128 GRF; at SIMD16 it holds twice
the registers a work-item (``bp_dp`` too: IGC's SIMD32 spills it from breaks = 5 on).
``grf`` (0: the driver's default) is the register file per hardware thread ``bp_rss``'s program
asks of Intel GPUs (``-cl-intel-256-GRF-per-thread``, ``clts.runtime.programs.driver_options``;
``bp_dp`` comes from a build without it), taken only for the regressor counts whose rotation
state spills at SIMD16 with 128 GRF (``LARGE_GRF_FROM``); large GRF halves the hardware threads
per XVE (occupancy 50 % at most).
The per-pixel fit kernels of the device path (``bp_post``, ``bp_magnitudes``:
``templates/bfast/device.cl.mako``, one pixel a work-item, its K x K system in registers) take
the same ``subgroup``, the profile's ``grf`` from ``FIT_LARGE_GRF_FROM`` regressors on
(``fit_grf``, derived: their system spills from a K of its own) and ``waves`` (AMD GPUs, 0: the
compiler's choice): the fewest waves per SIMD their registers must allow
(``amdgpu_waves_per_eu``), taken up to ``FIT_WAVES_MAX_K`` regressors (``fit_params``).
``split`` (NVIDIA and AMD profiles: 1; CPUs, Intel GPUs: 0, the kernel above) splits ``bp_rss``
over K work-items per (pixel, start), a column of R each, in work-groups of K x
``pixels_per_group`` pixels: the rotation state that kept the float64 kernel at 150 registers on
sm_80 (18.8 % occupancy) and 230 VGPRs on gfx908 (10 %) is spread over the columns (62 registers,
50 %; 49 VGPRs, 40 %), the row's rotation handed on through local memory (one barrier per row).
The same operations in the same order: identical bits.
``scan`` (GPU profiles: 1; CPUs: 0) has ``bp_dp`` backtrack by reading each break's rows of the
argmin and date tables whole (coalesced over a warp) instead of gathering one entry a pixel, and
take the m-break RSS from the programme's own sum instead of gathering the segments' RSS again
(the same additions in the same order: identical bits).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..runtime.plans import (GRF_MODES, LANE_WIDTHS, PlanBase, PlanValueError, check_choice,
                             check_int, check_subgroup, check_waves, check_work_group,
                             read_tunables, validated)

KEYS = {"lanes": "bfast.breakpoints.lanes", "wg": "bfast.breakpoints.wg",
        "interleave": "bfast.breakpoints.interleave", "dp_wg": "bfast.breakpoints.dp_wg",
        "chunk_bytes": "bfast.breakpoints.chunk_bytes",
        "subgroup": "bfast.breakpoints.subgroup", "grf": "bfast.breakpoints.grf",
        "split": "bfast.breakpoints.split", "scan": "bfast.breakpoints.scan",
        "waves": "bfast.breakpoints.waves"}
#: itemsize -> the fewest regressors K whose ``bp_rss`` spills at SIMD16 with 128 GRF, where a
#: profile's ``grf`` is taken: IGC (ocloc pvc, lanes = 1, any N) spills 896 / 2,304 / 3,840 /
#: 7,296 B at K = 8 / 9 / 10 / 12 in float64, none at K <= 7; with 256 GRF none at K = 8 and 12
#: but 1,920 / 4,992 B at K = 9 / 10 (N = 274, IGC's last retry; ocloc warns "spilled around 30 /
#: 78" GRFs) and 3,072 B at K = 14, against 11,264; float32 1,536 B at K = 13, none below (IGC's first try
#: spills at K = 9 and 10, its retry does not) nor at K <= 18 with 256 GRF
LARGE_GRF_FROM = {8: 8, 4: 13}
#: the fewest regressors K whose per-pixel fit kernels take the profile's ``grf``: IGC (ocloc
#: pvc, SIMD16, their accumulation in float64 whatever the data's precision) spills ``bp_post``
#: 4,992 / 8,384 B and ``bp_magnitudes`` 512 / 2,048 B at K = 7 / 8 with 128 GRF, none at
#: K <= 6, none with 256 (large GRF would only halve the hardware threads below that)
FIT_LARGE_GRF_FROM = 7
#: the most regressors K whose per-pixel fit kernels take the profile's ``waves``: on gfx908 at
#: 4 waves (clang offline compile, float64 and float32 data alike) ``bp_magnitudes`` takes 73 /
#: 94 / 108 VGPRs at K = 4 / 5 / 6 and ``bp_post`` 58 / 77 / 108, no scratch, against 81 / 116 /
#: 123 and 58 / 77 / 127 (3 / 2 / 2 waves) without the hint; from K = 8 four waves spill
#: (``bp_post`` 236 B of scratch) and the hint is off; gfx90a keeps >= 4 waves up to K = 6
#: without it
FIT_WAVES_MAX_K = 6


@dataclass(frozen=True)
class Problem:
    """The data shape of one call: ``length`` dates per pixel, ``regressors`` K and the device
    real's ``itemsize`` (which decide the registers of the rotation state)."""

    length: int
    regressors: int = 0
    itemsize: int = 8


@dataclass(frozen=True)
class BreakpointsPlan(PlanBase):
    lanes: int
    wg: int
    interleave: int
    dp_wg: int
    chunk_bytes: int
    subgroup: int = 0
    grf: int = 0
    split: int = 0
    scan: int = 0
    waves: int = 0
    fit_grf: int = 0        # derived by make_plan: the fit kernels' grf

    def fit_params(self) -> dict:
        """The template parameters that fit the per-pixel kernels of ``bfast/device.cl.mako``
        (``bp_post``, ``bp_magnitudes``) to the device, those not 0: ``SG`` (the sub-group
        size), ``grf`` (Intel's register mode, a build parameter), ``WAVES`` (AMD)."""
        p = {"SG": self.subgroup, "grf": self.fit_grf, "WAVES": self.waves}
        return {k: v for k, v in p.items() if v}

    def validate(self, dev=None):
        """Raise ``PlanValueError`` (a ValueError naming the field) for a bad value."""
        check_choice(self, "lanes", LANE_WIDTHS)
        for name in ("wg", "dp_wg", "interleave"):
            check_int(self, name)
        check_work_group(self, dev, "wg", "dp_wg")
        if self.interleave % self.lanes:
            raise PlanValueError("interleave", f"={self.interleave} must be a multiple of lanes "
                                               f"({self.lanes})")
        check_int(self, "chunk_bytes", lo=0, note=" (0: no cap)")
        check_subgroup(self.subgroup)
        check_int(self, "split", lo=0, hi=1)
        check_int(self, "scan", lo=0, hi=1)
        if self.split and self.lanes != 1:
            raise PlanValueError("split", f"=1 needs lanes = 1, got lanes={self.lanes}")
        check_choice(self, "grf", GRF_MODES)
        check_choice(self, "fit_grf", GRF_MODES)
        check_waves(self.waves)
        return self


def make_plan(device, problem: Problem, **overrides) -> BreakpointsPlan:
    """Plan from ``device.profile`` (section ``bfast.breakpoints``) for ``problem``; keywords
    override. The profile's ``grf`` is kept only where ``LARGE_GRF_FROM`` says the problem's
    rotation state spills without it, and for the fit kernels (``fit_grf``) from
    ``FIT_LARGE_GRF_FROM`` regressors on; its ``waves`` up to ``FIT_WAVES_MAX_K`` regressors;
    a forced value always; its ``split`` only with lanes = 1."""
    t = read_tunables(device, KEYS, overrides)
    K = problem.regressors
    forced = t.forced
    t.values["fit_grf"] = t.values["grf"] if "grf" in forced or K >= FIT_LARGE_GRF_FROM else 0
    if "grf" not in forced and K < LARGE_GRF_FROM.get(problem.itemsize, 0):
        t.values["grf"] = 0
    if "waves" not in forced and K > FIT_WAVES_MAX_K:
        t.values["waves"] = 0
    if "split" not in t.forced and t.values["lanes"] != 1:    # the split kernel is scalar
        t.values["split"] = 0
    return validated(BreakpointsPlan(**t.values), device, KEYS, t.forced)


def pixels_per_group(plan: BreakpointsPlan, K: int, dev=None) -> int:
    """Pixels per work-group of the split ``bp_rss`` (0: not split): ``wg`` work-items' worth
    of K columns each, at least one, within the device's work-group limit."""
    if not plan.split:
        return 0
    pix = max(1, plan.wg // max(K, 1))
    limit = dev.max_work_group if dev is not None else pix * K
    return pix if K * pix <= limit else 0


def chunk_cap(plan: BreakpointsPlan, N: int, real_bytes: int) -> int | None:
    """Pixels per chunk whose triangle stays within ``plan.chunk_bytes`` (None: no cap), at
    least one interleave block."""
    if not plan.chunk_bytes:
        return None
    per = N * (N + 1) // 2 * real_bytes
    return max(plan.interleave, plan.chunk_bytes // max(per, 1))
