"""BFAST-Monitor and Bai-Perron breakpoints search spaces and the fused / multi crossover for
clts-tune.

Every candidate runs ``clts.bfast_monitor`` with ``version=`` and its parameters forced on a
seed-fixed float32 cube shaped like Gieseke et al.'s D4 (n = N/2, half the values missing), and is
checked against the float64 numpy reference on a sample of pixels."""
from __future__ import annotations

import numpy as np

from ..tune import Crossover, Tunable, register
from ..tune.sizing import MIN_BYTES, grow
from .api import bfast_monitor
from .breaks_api import bfast_breaks
from .plan import multi_fits
from .reference import bfast_monitor as reference

_SAMPLE = 48


def cube(M: int, N: int, n: int, nan: float = 0.5, seed: int = 0, dtype=np.float32) -> dict:
    """Synthetic cube [N, M]: season + trend + noise, planted drops in the monitoring period."""
    rng = np.random.default_rng(seed)
    t = np.arange(N) * 16.0 + 3.0
    y = (0.5 + 0.0001 * t[:, None] + 0.2 * np.sin(2 * np.pi * t[:, None] / 365.0
                                                  + rng.uniform(0, 6, M))
         + 0.05 * rng.standard_normal((N, M)))
    brk = rng.integers(n, N, M)
    y -= (np.arange(N)[:, None] >= brk) * 0.3 * (rng.random(M) < 0.5)
    y[rng.random((N, M)) < nan] = np.nan
    y = y.astype(dtype)
    sample = np.linspace(0, M - 1, min(M, _SAMPLE)).astype(int)
    ref = reference(y[:, sample].astype(np.float64), t, t[n])
    return {"y": y, "t": t, "start": t[n], "sample": sample, "ref": ref, "M": M, "N": N, "n": n}


def check(result, w) -> bool:
    b = np.asarray(result.breaks)[w["sample"]]
    eb = w["ref"]["breaks"]
    if np.mean(b != eb) > 0.05:          # float32 vs float64: knife-edge pixels only
        return False
    same = b == eb
    m = np.asarray(result.magnitudes, np.float64)[w["sample"]][same]
    em = w["ref"]["magnitudes"][same]
    ok = np.isnan(m) == np.isnan(em)
    return bool(ok.all() and np.nanmax(np.abs(m - em), initial=0.0) < 1e-3)


def _run(device, w, version, **params):
    return bfast_monitor(w["y"], w["t"], w["start"], device=device, version=version,
                         progress=False, **params)


#: bytes a pixel's series moves (float32 values, per-pixel scratch of the same length, twice)
_PIXEL = 3 * 4


def _pixels(device, cpu, N, wg=64, min_bytes=MIN_BYTES):
    """``cpu`` pixels on a CPU; on a GPU one pixel per work-item for four ``wg``-wide groups on
    every compute unit, within the workload byte limits."""
    return grow(device, cpu, _PIXEL * N, wg=wg, min_bytes=min_bytes)


def _sizes(quick, device=None):
    return [{"pixels": _pixels(device, 4096 if quick else 32768, 256), "N": 256, "n": 128}]


def _workloads(quick, device=None):
    s = _sizes(quick, device)[0]
    return [cube(s["pixels"], s["N"], s["n"], seed=1)]


def _wg_ok(p, device):
    return p.get("wg", 1) <= device.max_work_group and p.get("roc_wg", 1) <= device.max_work_group


def _fused_ok(p, device):
    """CPU-sized lanes (8 or 16 pixels per work-item, each with its K x K Gram tile) are for
    pocl's vectorisation: on a GPU they exhaust the registers, and LLVM's AMDGPU back end did not
    finish compiling 16 lanes in 900 s, so GPUs try 1 and 4."""
    return _wg_ok(p, device) and (device.type != "gpu" or p["lanes"] <= 4)


register(Tunable(
    name="bfast.fused", section="bfast.fused",
    params={"lanes": [1, 4, 8, 16], "wg": [4, 8, 16, 32, 64]},
    workloads=_workloads, sizes=_sizes, run=lambda d, p, w: _run(d, w, "fused", **p), check=check,
    constraint=_fused_ok,
    description="fused: pixels per work-item (realN lanes), work-group size"))

register(Tunable(
    name="bfast.multi", section="bfast.multi",
    params={"lanes": [1, 4, 8], "wg": [4, 8, 16, 32, 64]},
    workloads=_workloads, sizes=_sizes, run=lambda d, p, w: _run(d, w, "multi", **p), check=check,
    constraint=lambda p, d: _wg_ok(p, d) and multi_fits(d, 8),
    description="multi-kernel: lanes and work-group of the Gram and sweep kernels "
                "(the inversion uses 2K x K work-items per pixel)"))

def _chunk_sizes(quick, device=None):
    return [{"pixels": _pixels(device, 16384 if quick else 65536, 256), "N": 256, "n": 128}]


register(Tunable(
    name="bfast.chunk", section="bfast",
    params={"chunk_bytes": [0, 4 << 20, 8 << 20, 16 << 20, 32 << 20]},
    workloads=lambda quick, device=None: [cube(s["pixels"], 256, 128, seed=3)
                                          for s in _chunk_sizes(quick, device)],
    sizes=_chunk_sizes,
    run=lambda d, p, w: _run(d, w, None, **p), check=check,
    description="largest cube + scratch bytes of one chunk (0: only the device limits): on "
                "CPUs a chunk that stays in the last-level cache runs faster"))


def _roc_sizes(quick, device=None):
    return [{"pixels": _pixels(device, 2048 if quick else 8192, 256), "N": 256, "n": 128}]


def _roc_workload(quick, device=None):
    w = cube(_roc_sizes(quick, device)[0]["pixels"], 256, 128, seed=2)
    w["ref"] = reference(w["y"][:, w["sample"]].astype(np.float64), w["t"], w["start"],
                         history="ROC")
    return [w]


def _roc_check(result, w) -> bool:
    hs = np.asarray(result.history_start)[w["sample"]]
    return bool(np.mean(hs != w["ref"]["history_start"]) <= 0.05 and check(result, w))


register(Tunable(
    name="bfast.roc", section="bfast.roc",
    params={"wg": [4, 16, 64]},
    workloads=_roc_workload, sizes=_roc_sizes,
    run=lambda d, p, w: bfast_monitor(w["y"], w["t"], w["start"], device=d, history="ROC",
                                      roc_wg=p["wg"], progress=False),
    check=_roc_check, constraint=_wg_ok,
    description="history='ROC' kernel work-group size"))

register(Crossover(
    name="bfast.multi_min_n", key="bfast.auto.multi_min_n", versions=("fused", "multi"),
    values=[32, 64, 128, 256, 512], quick_values=[64, 256],
    workload=lambda n: cube(max(2048, 4_000_000 // (2 * n)), 2 * n, n, seed=n),
    run=lambda d, version, w: _run(d, w, version), check=check,
    description="history length from which the multi-kernel version beats the fused one"))


# ------------------------------------------------------------------ Bai-Perron breakpoints
def _bp_sizes(quick, device=None):
    """256 x 138 (quick) / 2048 x 230 on a CPU; on a GPU one pixel per work-item for four
    64-wide groups on every compute unit (the RSS triangle is compute-bound: no byte
    minimum)."""
    M, N = (256, 138) if quick else (2048, 230)
    return [{"pixels": _pixels(device, M, N, min_bytes=0), "N": N}]


def _bp_workload(quick, device=None):
    from .breakpoints_reference import breakpoints_pixel, select
    from .common import design_matrix, trend_scaling
    rng = np.random.default_rng(5)
    size = _bp_sizes(quick, device)[0]
    M, N = size["pixels"], size["N"]
    t = 2000 + np.arange(N) / 23.0
    y = (0.2 * np.sin(2 * np.pi * t[:, None] + rng.uniform(0, 6, M))
         + 0.03 * rng.standard_normal((N, M))
         + (t[:, None] >= rng.uniform(t[20], t[-20], M)) * rng.uniform(-0.3, 0.3, M))
    y[rng.random((N, M)) < 0.15] = np.nan
    sample = np.linspace(0, M - 1, 8).astype(int)
    c, s = trend_scaling(t, N)
    X = design_matrix(t, 3, 1.0, True, c, s)
    want = [select(breakpoints_pixel(X, y[:, p], 0.15, 5)) for p in sample]
    return {"y": y, "t": t, "sample": sample, "want": np.array(want)}


register(Tunable(
    name="bfast.breakpoints", section="bfast.breakpoints",
    params={"lanes": [1, 4, 8], "wg": [1, 4, 16, 64], "interleave": [1, 4, 8, 64]},
    workloads=lambda quick, device=None: [_bp_workload(quick, device)], sizes=_bp_sizes,
    run=lambda d, p, w: bfast_breaks(w["y"], w["t"], freq=1.0, device=d, magnitudes=False,
                                     progress=False, **p),
    check=lambda r, w: bool(np.array_equal(np.asarray(r.n_breaks)[w["sample"]], w["want"])),
    constraint=lambda p, d: _wg_ok(p, d) and p["interleave"] % p["lanes"] == 0,
    description="Bai-Perron RSS triangle: pixels per work-item (realN lanes), work-group, "
                "pixels interleaved in the triangle"))
