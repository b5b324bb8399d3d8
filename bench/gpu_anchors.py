"""clts against the GPU anchors that run on this machine (scripts/gpu-check.sh runs it):

- batched tridiagonal systems: cuSPARSE's ``gtsv2StridedBatch`` through CuPy (NVIDIA);
- matrix profile: ``stumpy.gpu_stump`` (NVIDIA, through numba.cuda).

    python bench/gpu_anchors.py [--device gpu] [--quick] [--json FILE]

An anchor that does not import or finds no CUDA device is reported as unavailable, not as a
failure. Wall time, median of repeats after a warm-up (bench/common.py); results as a markdown table (and JSON with --json).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import median_time as best  # noqa: E402


def cusparse_gtsv(n, batch, dtype, data=None):
    """A callable solving ``batch`` systems of size ``n`` with cuSPARSE (data on the GPU) and
    returning the solution (a CuPy array); ``data``: numpy ``(a, b, c, d)`` of shape
    ``(batch, n)`` to solve instead of random well-conditioned systems."""
    import cupy as cp
    from cupy_backends.cuda.libs import cusparse
    if data is None:
        rng = np.random.default_rng(0)
        data = [rng.random((batch, n)).astype(dtype) for _ in range(3)]
        data.insert(1, (3 + rng.random((batch, n))).astype(dtype))
    a, b, c, d = (cp.asarray(np.ascontiguousarray(v, dtype)) for v in data)
    a[:, 0] = 0
    c[:, -1] = 0
    h = cp.cuda.device.get_cusparse_handle()
    pre = "d" if dtype == np.float64 else "s"
    size = getattr(cusparse, f"{pre}gtsv2StridedBatch_bufferSizeExt")(
        h, n, a.data.ptr, b.data.ptr, c.data.ptr, d.data.ptr, batch, n)
    buf = cp.empty(max(1, size), cp.uint8)
    solve = getattr(cusparse, f"{pre}gtsv2StridedBatch")

    def run():
        x = d.copy()
        solve(h, n, a.data.ptr, b.data.ptr, c.data.ptr, x.data.ptr, batch, n, buf.data.ptr)
        cp.cuda.runtime.deviceSynchronize()
        return x
    return run


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="gpu")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args(argv)
    import clts
    from clts.runtime import get_device
    dev = get_device(args.device)
    rows = []
    dt = np.float64 if dev.fp64 else np.float32
    shapes = [(115, 20000 if args.quick else 50000), (15, 200000)]
    rng = np.random.default_rng(1)
    for n, batch in shapes:
        a, c, d = (rng.random((batch, n)).astype(dt) for _ in range(3))
        b = (3 + rng.random((batch, n))).astype(dt)
        t = best(lambda: clts.solve_tridiagonal(a, b, c, d, device=dev))
        try:
            ta = best(cusparse_gtsv(n, batch, dt))
        except Exception as exc:    # noqa: BLE001 - an anchor that cannot run here
            ta, why = None, f"{type(exc).__name__}: {exc}"[:120]
        rows.append(dict(case=f"tridiagonal {batch} x {n} ({np.dtype(dt).name}, host arrays)",
                         clts_s=t, anchor="cuSPARSE gtsv2StridedBatch (CuPy, device arrays)",
                         anchor_s=ta, note="" if ta else why))
    n, m = (1 << 14 if args.quick else 1 << 16), 128
    T = np.cumsum(rng.standard_normal(n))
    t = best(lambda: clts.matrix_profile(T, m, device=dev, progress=False), repeats=3)
    try:
        import stumpy
        ta = best(lambda: stumpy.gpu_stump(T, m), repeats=3)
        why = ""
    except Exception as exc:    # noqa: BLE001 - an anchor that cannot run here
        ta, why = None, f"{type(exc).__name__}: {exc}"[:120]
    rows.append(dict(case=f"matrix profile n={n}, m={m}", clts_s=t, anchor="stumpy.gpu_stump",
                     anchor_s=ta, note=why))
    print(f"# GPU anchors on {dev.name}\n")
    print("| case | clts s | anchor | anchor s | anchor / clts |\n|---|---|---|---|---|")
    for r in rows:
        ratio = f"{r['anchor_s'] / r['clts_s']:.2f}" if r["anchor_s"] else "-"
        anc = f"{r['anchor_s']:.4f}" if r["anchor_s"] else f"unavailable ({r['note']})"
        print(f"| {r['case']} | {r['clts_s']:.4f} | {r['anchor']} | {anc} | {ratio} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": dev.name, "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
