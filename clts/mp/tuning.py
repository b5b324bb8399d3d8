"""Matrix-profile search spaces for clts-tune: the diagonal kernel's band (lanes x groups),
tile length, segment length R = segment_per_m * m (exact covariance every R rows; tuned at
m = 256), work-group size, where a tile's best values live (private / local); and the merge
version. Every candidate runs through
``clts.matrix_profile`` with the parameters forced and is checked against the brute-force
reference on a sample of rows."""
from __future__ import annotations

import math

import numpy as np

from .plan import local_tile_rows
from ..tune import Tunable, register
from ..tune.sizing import fill_items, grow, grow_pow2, is_gpu, rate
from . import reference
from .api import matrix_profile

M = 256


#: diagonals x rows one work-item of the diagonal kernel covers, typically (band 8, tile 256)
_ITEM_CELLS = 8 * 256
#: largest series a GPU workload uses (the kernel's work grows with n^2)
_GPU_MAX_N = 1 << 16


def _n(quick, device=None):
    """Series length: 2^13 (quick) / 2^15 on a CPU; on a GPU the power of two whose n^2 cells
    give every compute unit four groups of 256 work-items (2^14 on an A100 or H100)."""
    cpu = 1 << (13 if quick else 15)
    if not is_gpu(device):
        return cpu
    want = math.sqrt(fill_items(device) * _ITEM_CELLS)
    return int(min(_GPU_MAX_N, max(cpu, 1 << round(math.log2(want)))))


def _sizes(quick, device=None):
    return [{"n": _n(quick, device), "m": M}]


def _workloads(quick, device=None):
    rng = np.random.default_rng(6)
    n = _n(quick, device)
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


def _occupancy(params, device):
    """The occupancy model's rating of a candidate on a GPU (work-group and, for store="local",
    its tile of column bests cut as the run path cuts it; registers left out)."""
    wg = params["wg"] or 1
    if params["store"] != "local":
        return rate(device, wg)
    lanes, band = params["lanes"], params["lanes"] * params["groups"]
    gpc = int(device.profile.get("mp.diag.groups_per_cu", 0))
    rows = local_tile_rows(device, lanes, params["groups"], wg, params["tile"], gpc)
    return rate(device, wg, (rows + band) * lanes * 8 * wg)


register(Tunable(
    name="mp.diag", section="mp.diag",
    params={"lanes": [1, 4, 8], "groups": [2, 4, 8, 16], "tile": [64, 128, 256, 512],
            "segment_per_m": [8, 16, 32, 64], "wg": [1, 4, 16], "store": ["private", "local"],
            "unroll": [1, 2, 4]},
    workloads=_workloads, sizes=_sizes, run=_run_diag, check=_check, constraint=_constraint,
    occupancy=_occupancy,
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
    # the CPU's size on every device: top-k runs for hundreds of ms at 2^13 even on an H100
    workloads=lambda quick: _workloads(quick), sizes=lambda quick, device=None: _sizes(quick),
    run=_run_topk, check=_check,
    description="matrix profile k > 1: a tile's column k-lists in private or local memory"))


def _run_keep(device, params, w):
    return matrix_profile(w["T"], M, device=device, progress=False, keep=params["keep"])


register(Tunable(
    name="mp.keep", section="mp.diag",
    params={"keep": ["minmax", "select"]},
    workloads=_workloads, sizes=_sizes, run=_run_keep, check=_check,
    description="matrix profile k = 1, float64: the better packed candidate kept by fmax / fmin "
                "or by a compare and a select"))


def _run_merge(device, params, w):
    return matrix_profile(w["T"], M, device=device, progress=False, merge=params["merge"])


register(Tunable(
    name="mp.merge", section="mp",
    params={"merge": ["atomic", "partial"]},
    workloads=_workloads, sizes=_sizes, run=_run_merge, check=_check,
    constraint=lambda p, d: p["merge"] != "atomic" or bool(d.int64_atomics),
    description="matrix profile merge: packed 64-bit atomic minimum vs partial profiles"))


# -- batched distance profiles (clts.mass) -------------------------------------------------------
MASS_M = 100


def _mass_sizes(quick, device=None):
    """64 x 2048 (quick) / 512 x 8192 series on a CPU; on a GPU enough series for the windows
    (one per work-item) to fill it and for the workload byte limits."""
    ns, n = (64, 2048) if quick else (512, 8192)
    return [{"series": grow(device, ns, 3 * 8 * n, wg=64, items_per_unit=n - MASS_M + 1),
             "n": n}]


def _mass_workloads(quick, device=None):
    rng = np.random.default_rng(7)
    size = _mass_sizes(quick, device)[0]
    ns, n = size["series"], size["n"]
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
    workloads=_mass_workloads, sizes=_mass_sizes, run=_mass_run, check=_mass_check,
    constraint=lambda p, d: p["wg"] <= d.max_work_group,
    description="batched distance profiles (clts.mass): windows per vector lane group, "
                "independent vectors per work-item, work-group size (0: the driver's)"))


# -- multi-dimensional profile (clts.mstump) -----------------------------------------------------
MSTUMP_M = 64


def _mstump_sizes(quick, device=None):
    """4 x 2048 (quick) / 8 x 8192 values on a CPU; on a GPU a power-of-two length whose
    diagonals fill it (a work-item per diagonal band and row segment: about 4 per value);
    compute-bound, so no byte floor."""
    d, n = (4, 2048) if quick else (8, 8192)
    return [{"d": d, "n": grow_pow2(device, n, 8 * d, wg=64, items_per_unit=4, min_bytes=0)}]


def _mstump_workloads(quick, device=None):
    rng = np.random.default_rng(8)
    size = _mstump_sizes(quick, device)[0]
    d, n = size["d"], size["n"]
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
    workloads=_mstump_workloads, sizes=_mstump_sizes, run=_mstump_run, check=_mstump_check,
    constraint=lambda p, d: p["lanes"] * p["groups"] <= 64 and p["wg"] <= d.max_work_group,
    description="multi-dimensional profile (clts.mstump): diagonals per vector, vectors per "
                "work-item, rows per work-item (exact QT at its start), work-group size"))

from . import tuning_shapes  # noqa: E402,F401 - its entries register on import
