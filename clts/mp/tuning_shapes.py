"""clts-tune entries for the matrix-profile shapes that are profile values only (no keyword):
preSCRIMP's screen (``mp.subdiag``: windows and queries a work-item) and the AB-join runs
kernel's register tile (``mp.mpdist``: items and vectors a work-item). The GPU profiles' values
came from the vendors' offline compiles (the largest shapes that spill nothing); these entries
measure them on the device. A candidate is put over the device's profile in memory for its run
(``Profile.overlay``) and the run checked against numpy."""
from __future__ import annotations

import numpy as np

from ..tune import Tunable, register
from ..tune.sizing import grow_pow2, is_gpu
from . import reference

#: window length of the screen's workload (its queries: every m / 4-th window)
SCREEN_M = 64
#: largest series of the screen's GPU workload (its host steps grow with n)
_SCREEN_MAX_N = 1 << 17


def _screen_sizes(quick, device=None):
    """2^13 (quick) / 2^15 points on a CPU; on a GPU enough for four groups of 64 work-items
    per compute unit at 16 windows a work-item (at most 2^17)."""
    n = 1 << (13 if quick else 15)
    if is_gpu(device):
        n = min(_SCREEN_MAX_N, grow_pow2(device, n, 8, items_per_unit=1 / 16, min_bytes=0))
    return [{"n": n, "m": SCREEN_M}]


def _screen_workloads(quick, device=None):
    n = _screen_sizes(quick, device)[0]["n"]
    T = np.cumsum(np.random.default_rng(21).standard_normal(n))
    T[n // 3:n // 3 + 40] = 1.0                 # a constant run: the exact rules' path
    return [{"T": T, "rows": np.random.default_rng(22).choice(n - SCREEN_M + 1, 32, False)}]


def _screen_run(device, params, w):
    from .prescrump import prescrump
    np.random.seed(0)
    with device.profile.overlay("mp.subdiag", **params):
        return prescrump(w["T"], SCREEN_M, device=device)


def _pair_distances(T, m, rows, cols):
    Z = reference.windows(T, m)
    return np.array([reference.distance_profile(Z[i], Z[j])[0] for i, j in zip(rows, cols)])


def _screen_check(result, w):
    """Each sampled window's neighbour lies outside the exclusion zone and its distance is
    that pair's z-normalised distance."""
    P, I = result
    rows = w["rows"]
    if np.any(I[rows] < 0) or np.any(np.abs(I[rows] - rows) <= -(-SCREEN_M // 4)):
        return False
    return bool(np.allclose(P[rows], _pair_distances(w["T"], SCREEN_M, rows, I[rows]),
                            atol=1e-7, rtol=0))


register(Tunable(
    name="mp.subdiag", section="mp.subdiag",
    params={"fused_windows": [16, 32, 64], "fused_queries": [1, 2, 4]},
    workloads=_screen_workloads, sizes=_screen_sizes, run=_screen_run, check=_screen_check,
    wg_params=(),
    description="preSCRIMP's screen (clts.prescrump, scrump, stimp): windows and queries a "
                "work-item"))


def _runs_sizes(quick, device=None):
    """ostinato over 20 x 1000 (quick) / 100 x 2000 points (m = 50); a GPU takes the larger
    at once (its runs kernel is compute-bound: milliseconds already)."""
    ns, n = (20, 1000) if quick and not is_gpu(device) else (100, 2000)
    return [{"series": ns, "n": n, "m": 50}]


def _runs_workloads(quick, device=None):
    s = _runs_sizes(quick, device)[0]
    X = np.cumsum(np.random.default_rng(23).standard_normal((s["series"], s["n"])), axis=1)
    return [{"X": X, "m": s["m"]}]


def _runs_run(device, params, w):
    from .ostinato import ostinato
    with device.profile.overlay("mp.mpdist", **params):
        return ostinato(w["X"], w["m"], device=device)


def _runs_check(result, w):
    """The consensus window's radius is its largest nearest-neighbour distance over the other
    series (numpy distance profiles)."""
    X, m = w["X"], w["m"]
    q = X[result.series, result.index:result.index + m]
    r = max(reference.distance_profile(q, x).min() for k, x in enumerate(X) if k != result.series)
    return bool(np.isclose(result.radius, r, atol=1e-7, rtol=0))


register(Tunable(
    name="mp.mpdist", section="mp.mpdist",
    params={"first_items": [2, 4, 8, 16], "first_vectors": [1, 2, 4]},
    workloads=_runs_workloads, sizes=_runs_sizes, run=_runs_run, check=_runs_check,
    wg_params=(),
    description="AB-join runs kernel (clts.ostinato, mpdist, snippets): items of one target x "
                "vectors of 4 columns a work-item"))
