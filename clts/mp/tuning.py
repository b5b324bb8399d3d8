"""Matrix-profile search spaces for clts-tune: the diagonal kernel's band (lanes x groups),
tile length, segment length R = segment_per_m * m (exact covariance every R rows; tuned at
m = 256), work-group size, where a tile's best values live (private / local); and the merge
version. Every candidate runs through
``clts.matrix_profile`` with the parameters forced and is checked against the brute-force
reference on a sample of rows."""
from __future__ import annotations

import numpy as np

from .plan import local_tile_rows
from ..tune import Tunable, register
from . import reference
from .api import matrix_profile

M = 256


def _workloads(quick):
    rng = np.random.default_rng(6)
    n = 1 << (13 if quick else 15)
    T = np.cumsum(rng.standard_normal(n))
    rows = np.sort(rng.choice(n - M + 1, 24, replace=False))
    P, I = reference.rows_profile(T, M, rows)
    return [{"T": T, "rows": rows, "P": P, "I": I}]


def _check(result, w):
    P = result.P[w["rows"], 0]
    I = result.I[w["rows"], 0]
    return bool(np.allclose(P, w["P"], atol=1e-8, rtol=0) and np.mean(I == w["I"]) >= 0.95)


def _run_diag(device, params, w):
    return matrix_profile(w["T"], M, device=device, progress=False, **params)


def _constraint(params, device):
    if params["segment_per_m"] * M < params["lanes"] * params["groups"]:
        return False
    if params["lanes"] * params["groups"] > 256:
        return False
    if params.get("store") == "local" and local_tile_rows(
            device, params["lanes"], params["groups"], params["wg"], params["tile"]) < 1:
        return False
    return params["wg"] <= device.max_work_group


register(Tunable(
    name="mp.diag", section="mp.diag",
    params={"lanes": [1, 4, 8], "groups": [2, 4, 8, 16], "tile": [64, 128, 256, 512],
            "segment_per_m": [8, 16, 32, 64], "wg": [1, 4, 16], "store": ["private", "local"],
            "unroll": [1, 2, 4]},
    workloads=_workloads, run=_run_diag, check=_check, constraint=_constraint,
    description="matrix profile diagonal kernel: band = lanes*groups diagonals, tile rows, "
                "exact covariance every segment_per_m * m rows, work-group size, tile bests "
                "in private or local memory, unroll factor of the row loop"))


def _run_topk(device, params, w):
    return matrix_profile(w["T"], M, device=device, progress=False, k=TOPK_K, **params)


#: k of the top-k workload (the tuner checks its first column against the reference)
TOPK_K = 4

register(Tunable(
    name="mp.topk", section="mp.diag",
    params={"topk_store": ["private", "local"]},
    workloads=_workloads, run=_run_topk, check=_check,
    description="matrix profile k > 1: a tile's column k-lists in private or local memory"))


def _run_merge(device, params, w):
    return matrix_profile(w["T"], M, device=device, progress=False, merge=params["merge"])


register(Tunable(
    name="mp.merge", section="mp",
    params={"merge": ["atomic", "partial"]},
    workloads=_workloads, run=_run_merge, check=_check,
    constraint=lambda p, d: p["merge"] != "atomic" or bool(d.int64_atomics),
    description="matrix profile merge: packed 64-bit atomic minimum vs partial profiles"))


# -- batched distance profiles (clts.mass) -------------------------------------------------------
MASS_M = 100


def _mass_workloads(quick):
    rng = np.random.default_rng(7)
    ns, n = (64, 2048) if quick else (512, 8192)
    T = np.cumsum(rng.standard_normal((ns, n)), axis=1)
    Q = T[ns // 2, 1000:1000 + MASS_M].copy()
    rows = [0, ns // 2, ns - 1]
    return [{"T": T, "Q": Q, "rows": rows,
             "D": [reference.distance_profile(Q, T[r]) for r in rows]}]


def _mass_run(device, params, w):
    from .mass import mass
    return mass(w["Q"], w["T"], device=device, progress=False, **params)


def _mass_check(result, w):
    return all(np.allclose(result[r], d, atol=1e-8, rtol=0) for r, d in zip(w["rows"], w["D"]))


register(Tunable(
    name="mp.mass", section="mp.mass",
    params={"lanes": [1, 2, 4, 8, 16], "chains": [1, 2, 4], "wg": [0, 16, 64]},
    workloads=_mass_workloads, run=_mass_run, check=_mass_check,
    constraint=lambda p, d: p["wg"] <= d.max_work_group,
    description="batched distance profiles (clts.mass): windows per vector lane group, "
                "independent vectors per work-item, work-group size (0: the driver's)"))


# -- multi-dimensional profile (clts.mstump) -----------------------------------------------------
MSTUMP_M = 64


def _mstump_workloads(quick):
    rng = np.random.default_rng(8)
    d, n = (4, 2048) if quick else (8, 8192)
    T = np.cumsum(rng.standard_normal((d, n)), axis=1)
    rows = np.sort(rng.choice(n - MSTUMP_M + 1, 6, replace=False))
    Pr, Ir = reference.mstump(T[:, :1024], MSTUMP_M)
    return [{"T": T, "small": T[:, :1024], "Pr": Pr, "Ir": Ir, "rows": rows}]


def _mstump_run(device, params, w):
    from .mstump import mstump
    return mstump(w["small"], MSTUMP_M, device=device, **params), \
        mstump(w["T"], MSTUMP_M, device=device, **params)


def _mstump_check(result, w):
    (P, I), _ = result
    return bool(np.allclose(P, w["Pr"], atol=1e-8, rtol=0) and np.mean(I == w["Ir"]) >= 0.99)


register(Tunable(
    name="mp.mstump", section="mp.mstump",
    params={"lanes": [1, 4, 8, 16], "groups": [1, 2, 4], "segment": [256, 1024, 4096],
            "wg": [1, 4, 64]},
    workloads=_mstump_workloads, run=_mstump_run, check=_mstump_check,
    constraint=lambda p, d: p["lanes"] * p["groups"] <= 64 and p["wg"] <= d.max_work_group,
    description="multi-dimensional profile (clts.mstump): diagonals per vector, vectors per "
                "work-item, rows per work-item (exact QT at its start), work-group size"))
