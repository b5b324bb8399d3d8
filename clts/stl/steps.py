"""The STL steps around the LOESS - cycle-subseries gather, packed valid positions, the
low-pass moving averages, the robustness weights - in the Plan's mapping (profile key
``stl.steps.mapping``):

- ``series`` (CPUs): a work-item walks one series (or segment) from end to end; pocl and
  Intel's CPU runtime vectorise across work-items and pay per work-item;
- ``coalesced`` (GPUs): adjacent work-items at adjacent positions of one series, with
  work-groups per series or per tile (a warp of 32 reads one or two 128-byte segments instead of
  32), and the moving averages one work-item per output point (batch x length work-items).
  The windows of the NNS are stored as four planes (``nns_planes``: lo, hi, h and the fallback
  point each in its own plane, adjacent fit points in adjacent words) instead of four ints per
  fit point; and the flat LOESS with moment-major partials (``interleave = 1``) finishes the
  cycle-subseries through a local-memory transpose (``finish_tile``, see
  ``loess_flat_finish_tiled``), whose output is position-major (``out[s + xf * P]``); the
  outer LOESS keeps its window loop rolled (``unroll``: IGC spills it unrolled at SIMD32).

Results: the gather, the packed positions and the robustness weights are the same values in
both mappings (the weights' median by a radix select finds the same two middle values); the
tiled moving averages are direct sums, a few ulp from netlib's running updates. A mapping that
does not fit the device (work-group or local-memory limits) falls back to ``series``.
"""
from __future__ import annotations

import numpy as np

from ..runtime.launch import compiles_per_local_size, fixed_local, prepare
from ..runtime.plans import local_memory_budget

MA_TILE = 64          # output points per work-group of the tiled moving averages
ROBUST_WG = 256       # work-group (one per series) of the robustness weights
STATS_WG = 128        # largest work-group (one per segment) of the packed positions
GATHER = (32, 8)      # work-group of the tiled gather (tiles of 32 x 32)
FINISH_TILE = 32      # fit points x segments per work-group (32 x 8) of the tiled flat finish
#: local size on pocl (``fixed_local``) of the "series" kernels whose work-item walks a whole
#: series or segment (robustness weights, moving averages, packed positions): one work-item
#: per group, so that a batch of a few series still spreads over the cores
WALK_LOCAL = 1
#: local size on pocl of the cycle-subseries gather along the cycle position: a work-group reads
#: consecutive values of a series (positions m P + j, j = 0..31), as the driver's own choice
#: (1, P, 1) did (B config: 8 ms; groups along the cycles, (512, 1, 1): 14 ms)
GATHER_J = 32


def _pow2_at_most(n: int) -> int:
    return 1 << (max(1, int(n)).bit_length() - 1)


class Steps:
    """Kernel choices and prepared launches of the steps of one STL runner (``runner``: its
    ``dev``, ``dtype``, ``p`` and ``_prog``)."""

    def __init__(self, runner, mapping: str):
        self.r = runner
        dev, item = runner.dev, runner.dtype.itemsize
        P = runner.p["period"]
        coal = mapping == "coalesced"
        maxwg = int(dev.max_work_group or 1)
        sizes = list(getattr(dev, "max_work_item_sizes", None) or [maxwg] * 3)
        budget = local_memory_budget(dev)
        self.ma_tiles = (coal and MA_TILE <= min(maxwg, sizes[0])
                         and (3 * MA_TILE + 3 * P + 4) * item <= budget)
        self.robust_wg = _pow2_at_most(min(ROBUST_WG, maxwg, sizes[0])) if coal else 0
        self.stats_wg_max = _pow2_at_most(min(STATS_WG, maxwg, sizes[0])) if coal else 0
        self.gather_tiled = (coal and GATHER[0] * GATHER[1] <= maxwg
                             and GATHER[0] <= sizes[0] and GATHER[1] <= sizes[1]
                             and 2 * 32 * 33 * item <= budget)
        self.nns_planes = coal
        # the outer LOESS's window loop (lanes 1) kept rolled on GPUs: IGC (Data Center GPU
        # Max) unrolls it at SIMD32 and spills 384-768 B of float64 moments; 0 = the compiler's
        self.window_unroll = 1 if coal else 0
        T = FINISH_TILE
        self.finish_tile = T if (coal and T * 8 <= maxwg and T <= sizes[0] and 8 <= sizes[1]
                                 and T * (T + 1) * (2 * item + 4) <= budget) else 0

    # -- template parameters (prebuild asks for the same programs as run) --------------------
    def ma_kw(self, TL):
        if self.ma_tiles:
            return dict(lanes=TL, tiles=True, MT=MA_TILE)
        return dict(lanes=TL, tiles=False, MT=0)

    def robust_kw(self, TL):
        return dict(lanes=TL, wg=self.robust_wg)

    def gather_kw(self, TL, CTL, hermite):
        return dict(lanes=TL, consumer_lanes=CTL, hermite=hermite, tiled=self.gather_tiled)

    def stats_wg(self, nmax: int) -> int:
        if not self.stats_wg_max:
            return 0
        if compiles_per_local_size(self.r.dev):
            # pocl compiles per local size: one group size whatever the segments' length
            return self.stats_wg_max
        return min(self.stats_wg_max, max(32, 1 << (max(1, nmax) - 1).bit_length()))

    def nns_kw(self, complete):
        # the group's local arrays sized for the largest work-group; the launch's work-group
        # (stats_wg, from the longest segment) is an argument of the enqueue, not of the build
        return dict(complete=complete, wg=0 if complete else self.stats_wg_max,
                    planes=self.nns_planes)

    # -- launches: each a prepared launch (``runtime.launch.prepare``), enqueued by calling it -
    def gather(self, prg, TL, y, t, rw, N, P, K, B, Bp, with_w, z, rwz):
        i32 = np.int32
        args = (y.data, t.data, rw.data, i32(N), i32(P), i32(K), i32(B), i32(Bp),
                i32(with_w), z.data, rwz.data)
        if self.gather_tiled and TL == 1:
            gx, gy = GATHER
            return prepare(self.r.dev, prg, "stl_gather_tiled",
                           (-(-P // 32) * gx, -(-K // 32) * gy, Bp), (gx, gy, 1), *args)
        else:
            return prepare(self.r.dev, prg, "stl_gather",
                           *fixed_local(self.r.dev, (K, P, Bp // TL), (1, GATHER_J, 1)), *args)

    def ma(self, prg, C, N, P, Bp, TL, ring, out):
        i32 = np.int32
        if self.ma_tiles:
            import pyopencl as cl
            item = self.r.dtype.itemsize
            return prepare(self.r.dev, prg, "stl_ma_tiles", (-(-N // MA_TILE) * MA_TILE, Bp),
                           (MA_TILE, 1), C.data, i32(N), i32(P), out.data,
                           cl.LocalMemory((MA_TILE + 2 * P + 1) * item),
                           cl.LocalMemory((MA_TILE + P + 1) * item),
                           cl.LocalMemory((MA_TILE + 2) * item))
        else:
            return prepare(self.r.dev, prg, "stl_ma",
                           *fixed_local(self.r.dev, Bp // TL, WALK_LOCAL),
                           C.data, i32(N), i32(P), i32(Bp // TL), ring.data, out.data)

    def robust(self, prg, y, t, s, N, B, scratch, rw, rwt):
        args = (y.data, t.data, s.data, np.int32(N), np.int32(B), scratch.data, rw.data,
                rwt.data)
        if self.robust_wg:
            wg = self.robust_wg
            return prepare(self.r.dev, prg, "stl_robust_group", B * wg, wg, *args)
        else:
            return prepare(self.r.dev, prg, "stl_robust", *fixed_local(self.r.dev, B, WALK_LOCAL),
                           *args)

    def stats(self, prg, complete, nmax, M, m_b, m_s, seg, S, Bn, npos, stats, pos):
        i32 = np.int32
        args = (M.data, i32(m_b), i32(m_s), seg, i32(S), i32(Bn), i32(npos), stats.data,
                pos.data)
        wg = 0 if complete else self.stats_wg(nmax)
        if wg:
            return prepare(self.r.dev, prg, "stl_stats_group", Bn * S * wg, wg, *args)
        else:
            return prepare(self.r.dev, prg, "stl_stats",
                           *fixed_local(self.r.dev, Bn * S, WALK_LOCAL), *args)
