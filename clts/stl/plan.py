"""The STL Plan: code version and template
parameters of every LOESS call, chosen from the device profile and the data shape."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .params import fit_points

VERSIONS = ("outer", "intragroup", "flat")


def fit_table(n_grid: int, q: int, jump: int):
    """(fit positions, anchor positions) on grid 1..n_grid, as :func:`params.fit_points`."""
    pts = fit_points(n_grid, q, jump)
    return [p for p, _ in pts], [a for _, a in pts]


@dataclass
class LoessChoice:
    version: str
    wg: int = 64          # intragroup work-group size
    chunk: int = 32       # flat: neighbours per work-item
    lanes: int = 1        # outer: series per work-item (vector width)
    table: bool = True    # outer, lanes > 1, complete data: tricube weights from a per-call table


@dataclass
class Plan:
    params: dict
    seasonal: LoessChoice
    trend: LoessChoice
    low_pass: LoessChoice
    lanes: int = 1
    interp_ipw: int = 0   # jump intervals interpolated per work-item (0 = a whole segment)


#: STL tunables: name -> profile key (the caller forces them through ``loess_params``)
TUNABLE_KEYS = {"lanes": "stl.outer.lanes", "wg": "stl.intragroup.wg", "chunk": "stl.flat.chunk",
                "jump_threshold": "stl.loess.jump_threshold",
                "intragroup_max_q": "stl.loess.intragroup_max_q",
                "parallelism_threshold": "stl.loess.parallelism_threshold"}
#: ``loess_params`` keys that are not profile values
EXTRA_PARAMS = ("table", "interp_per_item")


def read_choices(dev, loess_params):
    """The checked tunables of one call: profile values with ``loess_params`` over them. An
    unknown key is a ``TypeError``; a bad value a ``ValueError`` naming the keyword, or a
    ``ProfileError`` naming the profile file and key it came from."""
    from ..runtime.plans import LANE_WIDTHS, read_tunables
    if loess_params is None:
        loess_params = {}
    if not isinstance(loess_params, dict):
        raise TypeError(f"loess_params must be a dict, got {type(loess_params).__name__}")
    t = read_tunables(dev, TUNABLE_KEYS, loess_params, extra=EXTRA_PARAMS)
    t.int_in("lanes", choices=LANE_WIDTHS)
    t.work_group("wg", power_of_two=True)       # the intra-group reduction halves the group
    t.int_in("chunk", 1, 1 << 16)
    for name in ("jump_threshold", "intragroup_max_q", "parallelism_threshold"):
        t.int_in(name, 0)
    ipw = loess_params.get("interp_per_item")
    if ipw is None:
        ipw = 0 if dev.type == "cpu" else 1
    if isinstance(ipw, bool) or not isinstance(ipw, (int, np.integer)) or ipw < 0:
        raise ValueError(f"interp_per_item must be an int >= 0 (0 = a whole segment), got {ipw!r}")
    values = dict(t.values, table=bool(loess_params.get("table", True)), interp_per_item=int(ipw),
                  lanes_forced="lanes" in t.forced)
    return values


def choose(values: dict, n_fits: int, q: int, jump: int, batch: int,
           version="auto") -> LoessChoice:
    """The selection of Serykh et al. (2023): outer-parallel unless the jump is beyond the jump threshold;
    then intra-group while q < intragroup_max_q, else flat; flat also when there is too little
    outer parallelism (batch x fit points < parallelism_threshold). ``values``: from
    :func:`read_choices`."""
    wg, chunk, lanes, table = values["wg"], values["chunk"], values["lanes"], values["table"]
    if not values.get("lanes_forced"):
        # the outer version fits the same point of ``lanes`` series per work-item: with fewer
        # series than lanes the rest of the vector would compute nothing (batch 1 on 8 lanes
        # ran 2x-5x slower than the other versions)
        while lanes > 1 and lanes > batch:
            lanes //= 2
    if version != "auto":
        return LoessChoice(version, wg, chunk, lanes, table)
    if batch * n_fits < values["parallelism_threshold"]:
        v = "flat"
    elif jump <= values["jump_threshold"]:
        v = "outer"
    elif q < values["intragroup_max_q"]:
        v = "intragroup"
    else:
        v = "flat"
    return LoessChoice(v, wg, chunk, lanes, table)


#: moments the intra-group kernel reduces in local memory (degree 2: eight)
INTRAGROUP_MOMENTS = 8


def fit_intragroup(dev, choice: LoessChoice, forced: bool = False) -> LoessChoice:
    """The intra-group work-group within the device's limits before anything is built: its
    ``wg`` work-items and ``INTRAGROUP_MOMENTS x wg`` doubles of local memory. A profile's
    value is halved until it fits; a forced ``wg`` that does not fit is a ValueError."""
    from ..runtime.plans import local_memory_budget
    if choice.version != "intragroup":
        return choice
    budget = local_memory_budget(dev)

    def fits(wg):
        return (wg <= dev.max_work_group and INTRAGROUP_MOMENTS * wg * 8 <= budget
                and (not dev.max_work_item_sizes or wg <= dev.max_work_item_sizes[0]))
    if not fits(choice.wg):
        if forced:
            raise ValueError(f"wg={choice.wg}: the intra-group LOESS needs {choice.wg} "
                             f"work-items and {INTRAGROUP_MOMENTS * choice.wg * 8} bytes of "
                             f"local memory; device {dev} allows {dev.max_work_group} and "
                             f"{budget}")
        while choice.wg > 1 and not fits(choice.wg):
            choice.wg //= 2
    return choice
