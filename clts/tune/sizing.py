"""What the tuner measures on a GPU: workloads that fill the device, work-groups no narrower
than its SIMD width, and the guard against timings that only measure launch overhead.

On a CPU (or with no device) every function here returns what the algorithms' ``tuning.py``
modules would use without it: the CPU workloads and candidate spaces are unchanged.

Workloads. An entry's workloads are built from sizes (``Tunable.sizes(quick, device)``, one
dict of integers per workload, recorded in the profile's provenance). On a GPU a batch dimension
grows, through :func:`grow`, to the larger of

- enough units (systems, pixels, series, cells) for ``GROUPS_PER_CU`` work-groups of the entry's
  largest useful work-group on every compute unit (``fill_items``), and
- ``MIN_BYTES`` of data, so that a memory-bound kernel runs for tens of microseconds even at
  3 TB/s,

capped at ``MAX_BYTES`` (and an eighth of the largest allocation), so that one workload's host
arrays, transfers and reference stay small against the per-entry time budget.

Candidates. On a GPU a work-group parameter (``Tunable.wg_params``, default ``("wg",)``) keeps
only 0 (the driver's choice) and values of at least the SIMD width (``simd_width``); the widths
``simd`` and ``2 * simd`` are added so every entry has GPU-sized groups to try. An entry whose
kernel runs one work-item per group by design sets ``wg_params=()``; an entry whose work-group
is a product of parameters (tiles) gives ``work_group(params)``, and its sub-SIMD candidates
are rejected on GPUs. Candidates whose occupancy
the entry's ``occupancy(params, device)`` hook rates below the resource gate's
``MIN_OCCUPANCY`` are skipped on GPUs.

Guard. On a GPU an entry whose best candidate takes less than ``MIN_GPU_SECONDS`` is not
decided: launch overhead, not the kernel, ranks its candidates. ``clts-tune`` then keeps the
profile's previous value and marks the entry ``status: too small to decide``.
"""
from __future__ import annotations

import inspect
import math

#: work-groups of the entry's largest useful size resident per compute unit
GROUPS_PER_CU = 4
#: default largest useful work-group (entries without one, and the cap of larger ones)
DEFAULT_WG = 256
#: a GPU workload holds at least / at most this many bytes (host arrays, one copy)
MIN_BYTES = 64 << 20
MAX_BYTES = 256 << 20
#: best times below this (seconds) on a GPU are launch overhead: the entry is not decided
MIN_GPU_SECONDS = 50e-6


def is_gpu(device) -> bool:
    """True for a GPU, real or emulated (``device.type == "gpu"``)."""
    return device is not None and getattr(device, "type", "cpu") == "gpu"


def simd_width(device) -> int:
    """The warp / wavefront / sub-group width of a GPU (the device's report, else the occupancy
    model's lanes for its target, else 32); 0 on a CPU."""
    if not is_gpu(device):
        return 0
    w = int(getattr(device, "simd_width", 0) or 0)
    if w > 0:
        return w
    from ..runtime import occupancy
    lim = occupancy.limits_for(device)
    return lim.lanes if lim is not None else 32


def fill_items(device, wg: int = DEFAULT_WG) -> int:
    """Work-items that put ``GROUPS_PER_CU`` groups of ``wg`` on every compute unit of a GPU;
    0 on a CPU."""
    if not is_gpu(device):
        return 0
    wg = max(1, min(int(wg), DEFAULT_WG, int(device.max_work_group)))
    return GROUPS_PER_CU * int(device.compute_units) * wg


def max_bytes(device) -> int:
    return int(min(MAX_BYTES, getattr(device, "max_alloc", MAX_BYTES * 8) // 8))


def grow(device, cpu_n: int, unit_bytes: float, *, wg: int = DEFAULT_WG,
         items_per_unit: float = 1.0, multiple: int = 1, min_bytes: int = MIN_BYTES) -> int:
    """A batch dimension for ``device``: ``cpu_n`` on a CPU. On a GPU at least ``cpu_n`` and
    enough units for :func:`fill_items` work-items (a unit gives ``items_per_unit`` of them) and
    for ``min_bytes`` (``unit_bytes`` each; 0 for compute-bound kernels that already run for
    milliseconds), at most ``max_bytes`` (never below ``cpu_n``); rounded up to a
    ``multiple``."""
    if not is_gpu(device):
        return cpu_n
    want = max(fill_items(device, wg) / max(items_per_unit, 1e-12), min_bytes / unit_bytes)
    n = min(math.ceil(want), max_bytes(device) // max(int(unit_bytes), 1))
    n = max(cpu_n, n)
    return -(-n // multiple) * multiple


def grow_pow2(device, cpu_n: int, unit_bytes: float, **kw) -> int:
    """:func:`grow` rounded to the nearest power of two within the byte cap (never below
    ``cpu_n``), for workloads whose size is a power of two."""
    n = grow(device, cpu_n, unit_bytes, **kw)
    if n == cpu_n:
        return cpu_n
    p = 1 << max(0, round(math.log2(n)))
    while p > cpu_n and p * unit_bytes > max_bytes(device):
        p >>= 1
    return max(cpu_n, p)


def gpu_values(values, device) -> list:
    """A work-group parameter's candidate values on ``device``: unchanged on a CPU; on a GPU 0
    (the driver's choice) and the values of at least the SIMD width, plus ``simd`` and
    ``2 * simd``, within the device's work-group limit."""
    simd = simd_width(device)
    if not simd:
        return list(values)
    keep = {v for v in values if v == 0 or v >= simd}
    keep |= {simd, 2 * simd}
    return sorted(v for v in keep if v <= device.max_work_group)


def rate(device, work_group: int, local_mem: int = 0, regs: int = 0) -> float | None:
    """The occupancy model's fraction for a launch of ``work_group`` work-items with
    ``local_mem`` bytes of local memory (and ``regs`` registers when known; 0 leaves the
    register limit out, so the figure is an upper bound) on ``device``; None on CPUs and GPUs
    of no modelled family. For ``Tunable.occupancy`` hooks."""
    if not is_gpu(device) or work_group < 1:
        return None
    from ..runtime import occupancy
    lim = occupancy.limits_for(device)
    if lim is None:
        return None
    return occupancy.occupancy(lim, regs=regs, work_group=work_group,
                               local_mem=local_mem).fraction


def sub_simd(entry, params: dict, device) -> bool:
    """True where a candidate's work-group (``entry.work_group(params)``, for entries whose
    work-group is a product of tile sizes) is narrower than a GPU's SIMD width."""
    fn = getattr(entry, "work_group", None)
    simd = simd_width(device)
    if fn is None or not simd:
        return False
    wg = int(fn(params))
    return 0 < wg < simd


def space(entry, device) -> dict:
    """The candidate lists of ``entry`` on ``device`` (a CPU: ``entry.params`` itself)."""
    if not is_gpu(device):
        return entry.params
    names = getattr(entry, "wg_params", ("wg",))
    return {k: (gpu_values(v, device) if k in names else list(v))
            for k, v in entry.params.items()}


def workloads(entry, quick: bool, device) -> list:
    """``entry.workloads(quick, device)``; entries whose ``workloads`` takes only ``quick`` (the
    older form, and the tests' fakes) are called with it alone."""
    fn = entry.workloads
    try:
        n = len([p for p in inspect.signature(fn).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])
    except (TypeError, ValueError):
        n = 1
    return list(fn(quick, device) if n >= 2 else fn(quick))


def sizes(entry, quick: bool, device) -> list | None:
    """The recorded sizes of the entry's workloads on ``device`` (None: the entry has none)."""
    fn = getattr(entry, "sizes", None)
    return None if fn is None else [dict(s) for s in fn(quick, device)]


def min_seconds(device, settings=None) -> float:
    """The guard's threshold on ``device``: ``settings.min_seconds`` if set, else
    ``MIN_GPU_SECONDS`` on a GPU and 0 (no guard) on a CPU."""
    v = getattr(settings, "min_seconds", None)
    if v is not None:
        return float(v)
    return MIN_GPU_SECONDS if is_gpu(device) else 0.0
