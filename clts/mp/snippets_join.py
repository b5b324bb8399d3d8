"""The MPdist profiles of ``clts.snippets`` on the device when the MPdist window s is shorter
than the segment length m (snippets.cl.mako): each segment's j = m - s + 1 windows against the
series by the sliding update (O(1) per distance after each block's first row), the rolling row
minima and the column minima in the same pass, the k-th value per position in a second kernel.
z-normalised distances; the k of MPdist at most ``KP_MAX - 1`` (else the host path)."""
from __future__ import annotations

import numpy as np

from ..runtime import get_device, launch, round_up
from ..runtime.launch import fixed_local
from ..runtime.memory import chunk_sizes
from .local_size import WALK_LOCAL
from .mass_plan import call_precision
from .mpdist import LANES, SeriesSet, join_params

#: longest sorted list of the k-th value kernel (private memory per work-item)
KP_MAX = 64
#: work-group of the k-th value kernel (its lists in local memory: KTH_WG * KP values)
KTH_WG = 32
#: consecutive positions per work-item of the k-th value kernel (each one's answer is the
#: next one's threshold)
KTH_RUN = 16
#: columns per work-item of the minima kernel (its first row costs O(s) per column, the next
#: j - 1 rows O(1)); at least a few runs of j so the rolling minima's overlap stays small
BLOCK_COLUMNS = 1024


def usable(j, k):
    """Whether the device path takes a call: windows shorter than the segments (j > 1) and a
    k whose list fits the kernel."""
    return j > 1 and k + 1 <= KP_MAX


def segment_profiles(Tp, m, s, nseg, k, device=None, precision=None):
    """The profiles [nseg, len(Tp) - m + 1] of the first ``nseg`` segments of ``Tp`` (the
    NaN-padded series): for each position i, the k-th smallest (stumpy's rule) of the row
    minima of the segment's windows over the windows i .. i + j - 1 and those windows' minima
    over the segment's windows."""
    import pyopencl.array as cla
    dev = get_device(device)
    prec = call_precision(dev, precision)
    dtype = np.dtype(np.float64 if prec == "double" else np.float32)
    real = "double" if prec == "double" else "float"
    n = len(Tp)
    j, l, nv = m - s + 1, n - s + 1, n - m + 1
    side = SeriesSet(np.asarray(Tp, np.float64)[None], s, dev, prec)    # window statistics
    q = dev.queue
    arrs = side.arrays
    prg = dev.program("mp/snippets.cl.mako", real=real, KP=int(k) + 1, LANES=LANES,
                      KTH_WG=KTH_WG, KTH_RUN=KTH_RUN,
                      SUBGROUP=join_params(dev)["SUBGROUP"])     # mp.mpdist.subgroup
    bc = max(BLOCK_COLUMNS, 4 * j)
    nblk = -(-l // bc)
    wp = bc + j
    item = dtype.itemsize
    per = [nblk * 4 * wp * item, j * nv * item, l * item, nv * item]
    out = np.empty((nseg, nv))
    fixed = sum(a.nbytes for a in arrs)
    for a, b in chunk_sizes(nseg, per, dev, fixed_bytes=fixed):
        G = b - a
        scratch = cla.empty(q, G * nblk * 4 * wp, dtype)
        rowmin = cla.empty(q, G * j * nv, dtype)
        colmin = cla.empty(q, G * l, dtype)
        prof = cla.empty(q, (G, nv), dtype)
        launch(dev, prg.kernel("seg_minima"), *fixed_local(dev, (nblk, G), WALK_LOCAL),
               *[x.data for x in arrs],
               np.int32(l), np.int32(s), np.int32(j), np.int32(m), np.int32(a), np.int32(bc),
               np.int32(nv), scratch.data, np.int32(wp), rowmin.data, colmin.data)
        launch(dev, prg.kernel("seg_kth"), (round_up(-(-nv // KTH_RUN), KTH_WG), G),
               (KTH_WG, 1), rowmin.data,
               colmin.data, np.int32(l), np.int32(j), np.int32(nv), np.int32(k), np.int32(s),
               prof.data)
        out[a:b] = prof.get()
    return out
