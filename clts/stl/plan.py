"""STL parameters (validated as statsmodels does) and the Plan: code version and template
parameters of every LOESS call, chosen from the device profile and the data shape."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

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
    statsmodels / R, or "hermite", the seed's cubic Hermite between jumped fits)."""
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
    aux_wg: int = 64
    lanes: int = 1
    interp_ipw: int = 0   # jump intervals interpolated per work-item (0 = a whole segment)
    notes: list = field(default_factory=list)


def choose(profile_get, n_fits: int, q: int, jump: int, batch: int, version="auto",
           overrides=None) -> LoessChoice:
    """The seed's selection: outer-parallel unless the jump is beyond the jump threshold; then
    intra-group while q < intragroup_max_q, else flat; flat also when there is too little outer
    parallelism (batch x fit points < parallelism_threshold)."""
    ov = overrides or {}
    wg = int(ov.get("wg", profile_get("stl.intragroup.wg", 64)))
    chunk = int(ov.get("chunk", profile_get("stl.flat.chunk", 32)))
    lanes = int(ov.get("lanes", profile_get("stl.outer.lanes", 1)))
    if lanes not in (1, 2, 4, 8, 16):
        raise ValueError(f"lanes must be 1, 2, 4, 8 or 16, got {lanes}")
    if wg < 1 or wg & (wg - 1):     # the intra-group reduction halves the group
        raise ValueError(f"wg must be a power of two >= 1, got {wg}")
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    table = bool(ov.get("table", True))
    if version != "auto":
        return LoessChoice(version, wg, chunk, lanes, table)
    jt = profile_get("stl.loess.jump_threshold", 16)
    qmax = profile_get("stl.loess.intragroup_max_q", 1024)
    par = profile_get("stl.loess.parallelism_threshold", 0)
    if batch * n_fits < par:
        v = "flat"
    elif jump <= jt:
        v = "outer"
    elif q < qmax:
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
    if choice.version != "intragroup":
        return choice
    budget = int(dev.local_mem) - 1024       # the drivers keep some per work-group (as mp)

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
