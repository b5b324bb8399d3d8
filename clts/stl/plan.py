"""The STL Plan: code version and template
parameters of every LOESS call, chosen from the device profile and the data shape."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..runtime.plans import LANE_WIDTHS, PlanBase, local_memory_budget, read_tunables
from .params import fit_points



def fit_table(n_grid: int, q: int, jump: int):
    """(fit positions, anchor positions) on grid 1..n_grid, as :func:`params.fit_points`."""
    pts = fit_points(n_grid, q, jump)
    return [p for p, _ in pts], [a for _, a in pts]


@dataclass(frozen=True)
class Problem:
    """The data shape of one STL call."""

    settings: dict        # the resolved STL parameters (:func:`params.resolve_parameters`)
    batch: int            # series
    length: int           # values per series
    itemsize: int = 8     # bytes per value (float32 4, float64 8)
    complete: bool = False  # no missing value in the batch


@dataclass(frozen=True)
class LoessChoice(PlanBase):
    """The code version and template parameters of one smoother's LOESS."""

    version: str
    wg: int               # intragroup work-group size
    chunk: int            # flat: neighbours per work-item
    lanes: int            # outer: series per work-item (vector width)
    table: bool           # outer, lanes > 1, complete data: tricube weights from a per-call table
    interleave: int = 0   # flat: partial moments moment-major (k * items + item; GPUs: coalesced)


@dataclass(frozen=True)
class Plan(PlanBase):
    """Every code version and template parameter of one STL call."""

    PROBLEM_FIELDS = ("problem",)
    problem: Problem
    seasonal: LoessChoice
    trend: LoessChoice
    low_pass: LoessChoice
    interp_per_item: int  # jump intervals interpolated per work-item (0 = a whole segment)
    #: mapping of the moving averages, robustness weights, packed positions and gather:
    #: "series" (a work-item walks one series) or "coalesced" (GPUs: work-groups per series /
    #: tile, adjacent work-items at adjacent positions)
    steps: str = "series"
    #: work-items per series of the fused STL (one work-group per series runs whole inner
    #: iterations in local memory, one launch per outer iteration: ``fused.py``); 0 = the
    #: separate kernels above
    fused: int = 0


#: STL tunables: name -> profile key (each also a keyword of ``clts.stl``)
TUNABLE_KEYS = {"lanes": "stl.outer.lanes", "wg": "stl.intragroup.wg", "chunk": "stl.flat.chunk",
                "table": "stl.outer.table", "interleave": "stl.flat.interleave",
                "jump_threshold": "stl.loess.jump_threshold",
                "intragroup_max_q": "stl.loess.intragroup_max_q",
                "parallelism_threshold": "stl.loess.parallelism_threshold",
                "interp_per_item": "stl.interp.interp_per_item",
                "mapping": "stl.steps.mapping", "fused": "stl.fused.fused"}

#: values of ``mapping``
MAPPINGS = ("series", "coalesced")


def read_choices(dev, overrides: dict | None):
    """The checked tunables of one call: profile values with ``overrides`` over them. An
    unknown key is a ``TypeError``; a bad value a ``ValueError`` naming the keyword, or a
    ``ProfileError`` naming the profile file and key it came from."""
    t = read_tunables(dev, TUNABLE_KEYS, overrides or {})
    t.int_in("lanes", choices=LANE_WIDTHS)
    t.work_group("wg", power_of_two=True)       # the intra-group reduction halves the group
    t.int_in("chunk", 1, 1 << 16)
    t.int_in("interleave", 0, 1)
    for name in ("jump_threshold", "intragroup_max_q", "parallelism_threshold"):
        t.int_in(name, 0)
    ipw = t["interp_per_item"]
    if isinstance(ipw, bool) or not isinstance(ipw, (int, np.integer)) or ipw < 0:
        raise t.error("interp_per_item", f"must be an int >= 0 (0 = a whole segment), got "
                                         f"{ipw!r}")
    fw = t["fused"]
    if (isinstance(fw, bool) or not isinstance(fw, (int, np.integer)) or fw < 0
            or fw & (fw - 1)):
        raise t.error("fused", f"must be 0 (the separate kernels) or a power of two (work-items "
                               f"per series of the fused STL), got {fw!r}")
    if t["mapping"] not in MAPPINGS:
        raise t.error("mapping", f"must be one of {', '.join(map(repr, MAPPINGS))}, got "
                                 f"{t['mapping']!r}")
    return dict(t.values, table=bool(t["table"]), interp_per_item=int(ipw), fused=int(fw),
                lanes_forced="lanes" in t.forced, fused_forced="fused" in t.forced)


def choose(values: dict, n_fits: int, q: int, jump: int, batch: int,
           version="auto") -> LoessChoice:
    """The selection of Serykh et al. (2023): outer-parallel unless the jump is beyond the jump threshold;
    then intra-group while q < intragroup_max_q, else flat; flat also when there is too little
    outer parallelism (batch x fit points < parallelism_threshold). ``values``: from
    :func:`read_choices`."""
    wg, chunk, lanes, table = values["wg"], values["chunk"], values["lanes"], values["table"]
    ilv = values.get("interleave", 0)
    if not values.get("lanes_forced"):
        # the outer version fits the same point of ``lanes`` series per work-item: with fewer
        # series than lanes the rest of the vector would compute nothing
        while lanes > 1 and lanes > batch:
            lanes //= 2
    if version != "auto":
        return LoessChoice(version, wg, chunk, lanes, table, ilv)
    if batch * n_fits < values["parallelism_threshold"]:
        v = "flat"
    elif jump <= values["jump_threshold"]:
        v = "outer"
    elif q < values["intragroup_max_q"]:
        v = "intragroup"
    else:
        v = "flat"
    return LoessChoice(v, wg, chunk, lanes, table, ilv)


#: moments the intra-group kernel reduces in local memory (degree 2: eight)
INTRAGROUP_MOMENTS = 8


def intragroup_fits(dev, wg: int) -> bool:
    """The intra-group LOESS's work-group fits ``dev``: ``wg`` work-items and
    ``INTRAGROUP_MOMENTS x wg`` doubles of local memory. The run path and the tuner's
    constraint both use it."""
    return (wg <= dev.max_work_group
            and INTRAGROUP_MOMENTS * wg * 8 <= local_memory_budget(dev)
            and (not dev.max_work_item_sizes or wg <= dev.max_work_item_sizes[0]))


def fit_intragroup(dev, choice: LoessChoice, forced: bool = False) -> LoessChoice:
    """The intra-group work-group within the device's limits (:func:`intragroup_fits`) before
    anything is built. A profile's value is halved until it fits; a forced ``wg`` that does
    not fit is a ValueError."""
    if choice.version != "intragroup" or intragroup_fits(dev, choice.wg):
        return choice
    if forced:
        raise ValueError(f"wg={choice.wg}: the intra-group LOESS needs {choice.wg} "
                         f"work-items and {INTRAGROUP_MOMENTS * choice.wg * 8} bytes of "
                         f"local memory; device {dev} allows {dev.max_work_group} and "
                         f"{local_memory_budget(dev)}")
    wg = choice.wg
    while wg > 1 and not intragroup_fits(dev, wg):
        wg //= 2
    return replace(choice, wg=wg)


def choose_fused(dev, problem: Problem, values: dict, loess_version="auto") -> int:
    """The fused STL's work-group (0 = the separate kernels): the profile's (or the forced)
    ``fused`` where the series fit a work-group's local memory and the interpolation is
    linear; on a GPU the profile's size doubled until the occupancy floor is met
    (:func:`fused.choose_wg`). A LOESS ``version`` forced without ``fused`` keeps the separate
    kernels. A forced ``fused`` that cannot run is a ValueError."""
    from .fused import choose_wg, local_bytes
    wg, forced = values["fused"], values.get("fused_forced", False)
    if not wg or (loess_version != "auto" and not forced):
        return 0
    if dev.info.simulator and not forced:
        # Oclgrind's uninitialised-value plugin aborts on the LLVM ``freeze`` its compiler puts
        # into the fused kernel (a fatal error, the kernel's writes lost): the simulator runs
        # the separate kernels unless ``fused=`` is given
        return 0
    p, N = problem.settings, problem.length
    why = None
    if p["interpolation"] != "linear":
        why = "takes linear interpolation only"
    else:
        got = choose_wg(dev, N, p["period"], problem.itemsize, wg, problem.complete, forced)
        if got:
            return got
        need = local_bytes(N, p["period"], problem.itemsize, wg, problem.complete)
        why = (f"needs {wg} work-items and {need} bytes of local memory per series of {N} "
               f"values; device {dev} allows {dev.max_work_group} "
               f"and {local_memory_budget(dev)}")
    if forced:
        raise ValueError(f"fused={wg}: the fused STL {why}")
    return 0


def make_plan(device, problem: Problem, **overrides) -> Plan:
    """The Plan of one call from ``device``'s profile (section ``stl``) and the ``problem``
    (STL parameters, ``batch`` series of ``length`` values), with the keyword ``overrides``
    (``version``, the tunables of ``TUNABLE_KEYS``; None = not given) over the profile; each
    smoother's version within the device's limits."""
    dev, p, B, N = device, problem.settings, problem.batch, problem.length
    loess_version = overrides.pop("version", None) or "auto"
    values = read_choices(dev, overrides)
    P = p["period"]
    K = -(-N // P)
    nfit_s = P * (K // max(1, min(p["seasonal_jump"], max(K - 1, 1))) + 3)
    nfit_t = N // p["trend_jump"] + 1
    nfit_l = N // p["low_pass_jump"] + 1
    forced = overrides.get("wg") is not None

    def smoother(n_fits, q, jump):
        return fit_intragroup(dev, choose(values, n_fits, q, jump, B, loess_version), forced)
    return Plan(problem=problem, interp_per_item=values["interp_per_item"],
                steps=values["mapping"], fused=choose_fused(dev, problem, values, loess_version),
                seasonal=smoother(nfit_s, p["seasonal"], p["seasonal_jump"]),
                trend=smoother(nfit_t, p["trend"], p["trend_jump"]),
                low_pass=smoother(nfit_l, p["low_pass"], p["low_pass_jump"]))
