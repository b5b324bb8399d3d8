"""STL's definition, shared by the kernels' path (plan, api) and the numpy reference: the
parameters with statsmodels' defaults and validation (plus degree 2 and R's defaults), the grid
positions where a jumped LOESS is fitted, and the degree-2 singularity tolerance."""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

#: a degree-2 fit whose normal equations' determinant is below QUAD_DET_TOL * c^3 (c the weighted
#: second moment of the centred positions) is treated as singular and falls back to degree 1
QUAD_DET_TOL = 1e-6

#: the LOESS code versions of the STL GPU paper (outer-parallel, intra-group, flat)
VERSIONS = ("outer", "intragroup", "flat")


def fit_points(n: int, q: int, jump: int):
    """Grid positions 1..n where a LOESS fit is computed, with the anchor position whose window
    it uses (statsmodels reuses the last loop window for the extra end point)."""
    if n < 2:
        return [(1, 1)]
    nj = min(jump, n - 1)
    pts = [(i, i) for i in range(1, n + 1, nj)]
    if nj > 1:
        k = ((n - 1) // nj) * nj + 1
        if k != n:
            pts.append((n, k))
    return pts


def _is_pos_int(x, odd=False):
    ok = isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) and x > 0
    if ok and odd:
        ok = x % 2 == 1
    return ok


def resolve_parameters(period, seasonal=7, trend=None, low_pass=None, seasonal_deg=None,
                       trend_deg=None, low_pass_deg=None, seasonal_jump=None, trend_jump=None,
                       low_pass_jump=None, robust=False, inner_iter=None, outer_iter=None,
                       r_defaults=False, interpolation="linear"):
    """Defaults and validation of statsmodels.tsa.seasonal.STL (plus degree 2 and R's defaults
    with ``r_defaults=True``): a degree or jump left None takes statsmodels' default (1) or,
    with ``r_defaults``, R's; one given is kept. Returns a dict of ints (and
    ``interpolation``: "linear", as statsmodels / R, or "hermite", Serykh et al.'s cubic
    Hermite between jumped fits)."""
    if interpolation not in ("linear", "hermite"):
        raise ValueError(f"interpolation must be 'linear' or 'hermite', got {interpolation!r}")
    if not _is_pos_int(period) or period < 2:
        raise ValueError(f"period must be a positive integer >= 2, got {period!r}")
    if not _is_pos_int(seasonal, odd=True) or seasonal < 3:
        raise ValueError(f"seasonal must be an odd positive integer >= 3, got {seasonal!r}")
    if r_defaults:
        # R stats::stl: t.window = nextodd(ceiling(1.5 period / (1 - 1.5 / s.window))),
        # l.window = nextodd(period), s.degree = 0, l.degree = t.degree,
        # jumps = ceiling(window / 10), inner 1 (robust) or 2, for what is left None (a value
        # given, 1 included, is kept: R's s.degree = 1 is seasonal_deg=1)
        if trend is None:
            trend = int(math.ceil(1.5 * period / (1 - 1.5 / seasonal)))
            trend += trend % 2 == 0
        if low_pass is None:
            low_pass = period + (period % 2 == 0)
        if seasonal_deg is None:
            seasonal_deg = 0
        if trend_deg is None:
            trend_deg = 1
        if low_pass_deg is None:
            low_pass_deg = trend_deg
        if seasonal_jump is None:
            seasonal_jump = int(math.ceil(seasonal / 10))
        if trend_jump is None:
            trend_jump = int(math.ceil(trend / 10))
        if low_pass_jump is None:
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
    seasonal_deg, trend_deg, low_pass_deg, seasonal_jump, trend_jump, low_pass_jump = (
        1 if v is None else v for v in (seasonal_deg, trend_deg, low_pass_deg, seasonal_jump,
                                        trend_jump, low_pass_jump))     # statsmodels' defaults
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


def periodic_window(seasonal, seasonal_deg, n: int):
    """``seasonal="periodic"`` (R's ``s.window = "periodic"``): a window of 10 n + 1 and degree 0
    (R's ``stl``), then :func:`periodic_mean`. Returns (seasonal, seasonal_deg, periodic)."""
    if not isinstance(seasonal, str):
        return seasonal, seasonal_deg, False
    if seasonal != "periodic":
        raise ValueError(f"seasonal must be an odd integer >= 3 or 'periodic', got {seasonal!r}")
    return 10 * int(n) + 1, 0, True


def periodic_mean(s: np.ndarray, period: int) -> np.ndarray:
    """The seasonal component made exactly periodic, in place: each cycle position (time index
    mod ``period``, along the last axis) replaced by its mean, as R's ``stl`` does."""
    for j in range(period):
        s[..., j::period] = s[..., j::period].mean(axis=-1, keepdims=True)
    return s


@lru_cache(maxsize=None)
def _resolve_names() -> frozenset:
    """The keywords :func:`resolve_parameters` takes (``inspect.signature`` costs ~0.1 ms a
    call: read once)."""
    import inspect
    return frozenset(inspect.signature(resolve_parameters).parameters)


def check_arguments(n: int, period, *, version="auto", **kwargs) -> dict:
    """The checks :func:`stl` makes of its parameters for series of ``n`` values, without data
    or a device (for callers that must refuse bad arguments before they start, as the command
    line does before it writes a file); ``kwargs`` as :func:`stl`'s (others ignored). Returns
    the resolved parameters; raises as :func:`stl` would."""
    names = _resolve_names()
    if "seasonal" in kwargs:            # "periodic": R's window 10 n + 1, degree 0
        kwargs["seasonal"], kwargs["seasonal_deg"], _ = periodic_window(
            kwargs["seasonal"], kwargs.get("seasonal_deg"), n)
    p = resolve_parameters(period, **{k: v for k, v in kwargs.items() if k in names})
    if version not in ("auto",) + VERSIONS:
        raise ValueError(f"version must be 'auto', 'outer', 'intragroup' or 'flat', "
                         f"got {version!r}")
    if n < 2 * p["period"]:
        raise ValueError(f"a series must hold at least two periods ({2 * p['period']} values), "
                         f"got {n}")
    return p


def outputs_of(outputs, components: tuple) -> tuple:
    """The ``components`` that ``outputs=`` asks for (all for None), in their order, checked."""
    if outputs is None:
        return components
    names = (outputs,) if isinstance(outputs, str) else tuple(outputs)
    if not names or any(k not in components for k in names):
        raise ValueError(f"outputs must name some of {', '.join(components)}, got "
                         f"{outputs!r}")
    return tuple(k for k in components if k in names)
