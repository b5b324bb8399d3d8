"""STL parameters (validated as statsmodels does) and the Plan: code version and template
parameters of every LOESS call, chosen from the device profile and the data shape."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

VERSIONS = ("outer", "intragroup", "flat")


def _is_pos_int(x, odd=False):
    ok = isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) and x > 0
    if ok and odd:
        ok = x % 2 == 1
    return ok


def resolve_parameters(period, seasonal=7, trend=None, low_pass=None, seasonal_deg=1,
                       trend_deg=1, low_pass_deg=1, seasonal_jump=1, trend_jump=1,
                       low_pass_jump=1, robust=False, inner_iter=None, outer_iter=None,
                       r_defaults=False, interpolation="linear"):
    """Defaults and validation of statsmodels.tsa.seasonal.STL (plus degree 2 and R's defaults
    with ``r_defaults=True``). Returns a dict of ints (and ``interpolation``: "linear", as
    statsmodels / R, or "hermite", Serykh et al.'s cubic Hermite between jumped fits)."""
    if interpolation not in ("linear", "hermite"):
        raise ValueError(f"interpolation must be 'linear' or 'hermite', got {interpolation!r}")
    if not _is_pos_int(period) or period < 2:
        raise ValueError(f"period must be a positive integer >= 2, got {period!r}")
    if not _is_pos_int(seasonal, odd=True) or seasonal < 3:
        raise ValueError(f"seasonal must be an odd positive integer >= 3, got {seasonal!r}")
    if r_defaults:
        # R stats::stl: t.window = nextodd(ceiling(1.5 period / (1 - 1.5 / s.window))),
        # l.window = nextodd(period), s.degree = 0, l.degree = t.degree,
        # jumps = ceiling(window / 10), inner 1 (robust) or 2. A degree or jump left at the
        # statsmodels default (degree 1, jump 1) takes R's default.
        if trend is None:
            trend = int(math.ceil(1.5 * period / (1 - 1.5 / seasonal)))
            trend += trend % 2 == 0
        if low_pass is None:
            low_pass = period + (period % 2 == 0)
        if seasonal_deg == 1:
            seasonal_deg = 0
        if low_pass_deg == 1:
            low_pass_deg = trend_deg
        if seasonal_jump == 1:
            seasonal_jump = int(math.ceil(seasonal / 10))
        if trend_jump == 1:
            trend_jump = int(math.ceil(trend / 10))
        if low_pass_jump == 1:
            low_pass_jump = int(math.ceil(low_pass / 10))
        if inner_iter is None:
            inner_iter = 1 if robust else 2
        if outer_iter is None:
            outer_iter = 15 if robust else 0
    if trend is None:
        trend = int(math.ceil(1.5 * period / (1 - 1.5 / seasonal)))
        trend += trend % 2 == 0
    if not _is_pos_int(trend, odd=True) or trend < 3 or trend <= period:
        raise ValueError("trend must be an odd positive integer >= 3 where trend > period, "
                         f"got trend={trend!r}, period={period}")
    if low_pass is None:
        low_pass = period + 1
        low_pass += low_pass % 2 == 0
    if not _is_pos_int(low_pass, odd=True) or low_pass < 3 or (low_pass <= period
                                                                and not r_defaults):
        raise ValueError("low_pass must be an odd positive integer >= 3 where low_pass > period, "
                         f"got low_pass={low_pass!r}, period={period}")
    for name, d in (("seasonal_deg", seasonal_deg), ("trend_deg", trend_deg),
                    ("low_pass_deg", low_pass_deg)):
        if d not in (0, 1, 2) or isinstance(d, (bool, float)):
            raise ValueError(f"{name} must be 0, 1 or 2, got {d!r}")
    for name, j in (("seasonal_jump", seasonal_jump), ("trend_jump", trend_jump),
                    ("low_pass_jump", low_pass_jump)):
        if not _is_pos_int(j):
            raise ValueError(f"{name} must be a positive integer, got {j!r}")
    if inner_iter is None:
        inner_iter = 2 if robust else 5
    if outer_iter is None:
        outer_iter = 15 if robust else 0
    if not _is_pos_int(inner_iter):
        raise ValueError(f"inner_iter must be a positive integer, got {inner_iter!r}")
    if not (isinstance(outer_iter, (int, np.integer)) and outer_iter >= 0):
        raise ValueError(f"outer_iter must be a non-negative integer, got {outer_iter!r}")
    return dict(period=int(period), seasonal=int(seasonal), trend=int(trend),
                low_pass=int(low_pass), seasonal_deg=int(seasonal_deg),
                trend_deg=int(trend_deg), low_pass_deg=int(low_pass_deg),
                seasonal_jump=int(seasonal_jump), trend_jump=int(trend_jump),
                low_pass_jump=int(low_pass_jump), inner_iter=int(inner_iter),
                outer_iter=int(outer_iter), interpolation=interpolation)


def fit_table(n_grid: int, q: int, jump: int):
    """(fit positions, anchor positions) on grid 1..n_grid, as reference.fit_points."""
    from .reference import fit_points
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
    values = dict(t.values, table=bool(loess_params.get("table", True)), interp_per_item=int(ipw))
    return values


def choose(values: dict, n_fits: int, q: int, jump: int, batch: int,
           version="auto") -> LoessChoice:
    """The selection of Serykh et al. (2023): outer-parallel unless the jump is beyond the jump threshold;
    then intra-group while q < intragroup_max_q, else flat; flat also when there is too little
    outer parallelism (batch x fit points < parallelism_threshold). ``values``: from
    :func:`read_choices`."""
    wg, chunk, lanes, table = values["wg"], values["chunk"], values["lanes"], values["table"]
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
