"""The trend-test Plan: the per-series kernels' work-group size, how Sen's median is found
(quickselect of the needed ranks, or a full heapsort of the slopes), the chunk size and the
sub-group size the pair kernel requires on Intel GPUs, from the device profile (section
``trend``)."""
from __future__ import annotations

from dataclasses import dataclass

from ..runtime.plans import LANE_WIDTHS, SUBGROUPS, PlanBase, read_tunables

MEDIANS = ("select", "sort")
#: slopes sampled (strided) whose quantiles bracket the ranks Sen's median and bounds need
SAMPLE = 2048

#: name -> profile key (each also a keyword of clts.trend_test)
TUNABLE_KEYS = {"wg": "trend.pairs.wg", "lanes": "trend.pairs.lanes",
                "items": "trend.pairs.items", "subgroup": "trend.pairs.subgroup",
                "interleave": "trend.pairs.interleave",
                "median": "trend.sen.median",
                "chunk_bytes": "trend.chunk_bytes"}


@dataclass(frozen=True)
class Problem:
    """The data shape of one call: series of ``length`` values, seasons of stride ``period``
    (1: the non-seasonal tests)."""

    length: int
    period: int


@dataclass(frozen=True)
class Plan(PlanBase):
    """Every template parameter and launch choice of one trend-test call."""

    PROBLEM_FIELDS = ("period", "pairs", "sample")

    wg: int               # work-group size of the per-series kernels (0: the driver picks)
    lanes: int            # realN width of the pair loop on complete rows
    items: int            # work-items of the pair kernel, each takes every items-th series and
                          # re-uses one scratch row (0: one work-item per series)
    median: str           # "select" (quickselect) | "sort" (heapsort of all slopes)
    chunk_bytes: int      # device bytes (input + slope scratch) per chunk; 0: device limits
    period: int           # season stride of the pairs (1: the non-seasonal tests)
    pairs: int            # slopes of a complete series (its scratch row, before the sample)
    sample: int = SAMPLE  # slopes sampled to bracket the ranks Sen's median needs
    subgroup: int = 0     # sub-group size the pair kernel requires on Intel GPUs (0: the
                          # compiler picks; IGC picks SIMD32 on pvc and spills float64 there)
    interleave: int = 0   # 1: the chunk time-major and the slope rows interleaved by work-item
                          # (coalesced on GPUs; the realW loop is left out)


def n_pairs(N: int, P: int) -> int:
    """Pairs of a complete series of length ``N`` within seasons of stride ``P``."""
    total = 0
    for r in range(min(P, N)):
        k = (N - r + P - 1) // P
        total += k * (k - 1) // 2
    return total


def make_plan(device, problem: Problem, **overrides) -> Plan:
    """The Plan of one call from ``device``'s profile for ``problem`` with the keyword
    ``overrides`` (None = not given) over it; a bad value names the keyword or the profile
    file and key."""
    dev, N, P = device, problem.length, problem.period
    t = read_tunables(dev, TUNABLE_KEYS, overrides)
    wg = t.int_in("wg", 0, int(dev.max_work_group))
    lanes = t.int_in("lanes", choices=LANE_WIDTHS)
    items = t.int_in("items", 0)
    median = t.choice("median", MEDIANS)
    chunk = t.int_in("chunk_bytes", 0)
    subgroup = t.int_in("subgroup", choices=SUBGROUPS)
    interleave = t.int_in("interleave", choices=(0, 1))
    return Plan(wg=wg, lanes=lanes, items=items, median=median, chunk_bytes=chunk,
                period=int(P), pairs=n_pairs(N, P), subgroup=subgroup, interleave=interleave)
