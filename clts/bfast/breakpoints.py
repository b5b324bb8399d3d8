"""Batched Bai-Perron ``breakpoints`` on the device: the run path shared by
``clts.bfast_breaks`` and ``bfast_monitor(history="BP")``.

``run_breakpoints`` takes a float cube ``[N, M]`` (NaN = missing), the regressors ``X`` [N, K]
and R's ``h`` / ``breaks``, and returns per pixel the number of valid values, the minimal
segment h, the cap on the breaks, a status code, the m-break RSS (m = 0..breaks) and the
breakpoints of every m (date indices of the last value of each segment). ``criteria`` adds
strucchange's BIC and the LWZ criterion and the selected number of breaks. Formulas: the
module docstring of ``breakpoints_reference``.
"""
from __future__ import annotations

import math

import numpy as np

from ..runtime import chunk_sizes, launch, round_up
from ..runtime.faults import with_smaller_chunks
from ..runtime.memory import scratch as scratch_array
from ..runtime.pipeline import ChunkIO, device_wait, run_pipelined
from .breakpoints_plan import chunk_cap, pixels_per_group
from .breakpoints_reference import RANK_TOL

CRITERIA = ("BIC", "LWZ")


def segment_table(h, N: int) -> np.ndarray:
    """h per number of valid values 0..N, as strucchange computes it: floor(n h) (float64) for
    h < 1, else h."""
    nv = np.arange(N + 1)
    if h < 1:
        return np.floor(nv * float(h)).astype(np.int32)
    return np.full(N + 1, int(h), np.int32)


def max_breaks(h, N: int, K: int) -> int:
    """The most breaks any pixel of N dates can hold (R's cap ceil(n / h) - 2 at its largest,
    at least 1: with h = n / 2 R caps ``breaks`` at 0 but its RSS table, and BIC's choice,
    still hold the one break at h)."""
    hs = segment_table(h, N)
    nv = np.arange(N + 1)
    ok = (hs > K) & (hs <= nv // 2)
    if not ok.any():
        return 0
    return int(max(1, np.max(-(-nv[ok] // hs[ok]) - 2)))


def check_h_breaks(h, breaks, n_dates=None):
    """``h`` a fraction of the valid values or a whole number of them; a fraction that leaves
    no room for two segments on ``n_dates`` dates (R's rule) is refused (see
    :func:`check_half`); a count above half a pixel's valid values is that pixel's status 2."""
    if isinstance(h, bool) or not isinstance(h, (int, float, np.integer, np.floating)) \
            or not (h > 0 and math.isfinite(h)) or (h >= 1 and float(h) != int(h)):
        raise ValueError(f"h must be a fraction in (0, 1) of the valid values or a whole "
                         f"number of values >= 1, got {h!r}")
    if h < 1:
        check_half("h", h, n_dates)
    if isinstance(breaks, bool) or not isinstance(breaks, (int, np.integer)) or breaks < 1:
        raise ValueError(f"breaks must be an integer >= 1, got {breaks!r}")


def check_half(name, h, n_dates=None):
    """A minimal segment ``h`` with which no pixel of ``n_dates`` dates can hold two segments is
    a ValueError, by R's rule (strucchange's breakpoints: ``floor(n h)`` for a fraction, or the
    count, above ``floor(n / 2)``), every pixel would fail; nothing without ``n_dates``."""
    if n_dates is None:
        return
    size = math.floor(n_dates * h) if h < 1 else int(h)
    if size > n_dates // 2:
        raise ValueError(f"{name}={h!r}: a minimal segment of {size} of the {n_dates} dates "
                         f"leaves no room for a break (at most {n_dates // 2}, half of them)")


#: designs whose kept columns :func:`independent_columns` remembers (up to this many, each of
#: at most :data:`MEMO_BYTES`): a call on the same dates asks again
MEMO_KEPT, MEMO_BYTES = 32, 1 << 20
_memo: dict = {}


def independent_columns(X, dtype=np.float64) -> list:
    """Indices of the columns of the design ``X`` [N, K] a fit keeps, in order: a column whose
    distance from the span of the kept ones is at most ``RANK_TOL`` (of ``dtype``) times the
    largest singular value of ``X`` is a linear combination of them up to rounding and is
    dropped (the cosines of yearly dates with freq = 1 are the intercept, their sines 1e-13
    noise). The design's columns are all of order 1 (intercept, the scaled trend, harmonics),
    so the largest singular value is the scale of every column. Remembered per design values
    (~0.3 ms of SVD and Gram-Schmidt on 128 dates, asked by every call)."""
    X = np.ascontiguousarray(X, np.float64)
    if X.nbytes > MEMO_BYTES:
        return _independent_columns(X, dtype)
    key = (X.shape, np.dtype(dtype).itemsize, X.tobytes())
    hit = _memo.get(key)
    if hit is None:
        hit = tuple(_independent_columns(X, dtype))
        if len(_memo) >= MEMO_KEPT:
            _memo.clear()
        _memo[key] = hit
    return list(hit)


def _independent_columns(X, dtype) -> list:
    tol = RANK_TOL[np.dtype(dtype).itemsize] * (np.linalg.norm(X, 2) if X.size else 0.0)
    keep, Q = [], np.zeros((X.shape[0], 0))
    for j in range(X.shape[1]):
        v = X[:, j] - Q @ (Q.T @ X[:, j])
        v = v - Q @ (Q.T @ v)                          # twice: Gram-Schmidt loses orthogonality
        nv = float(np.linalg.norm(v))
        if nv > tol:
            keep.append(j)
            Q = np.column_stack([Q, v / nv])
    return keep


def rank_deficient_pixels(flat, X, dtype, candidates=None, block=1 << 15, XP=None) -> np.ndarray:
    """[M] bool: pixels of ``flat`` [N, M] whose valid dates' rows of ``X`` have a singular
    value below ``RANK_TOL`` times their largest (e.g. every valid date in the same season:
    the harmonics repeat the intercept). From the eigenvalues of each pixel's Gram matrix (one
    matrix product per block of pixels); only ``candidates`` (default: the pixels with a
    missing value; a full pixel has the design's rank) are looked at. ``XP`` [N, q, M]: per-pixel
    columns after those of ``X`` (then every pixel is a candidate)."""
    N, M = flat.shape
    K = X.shape[1] + (0 if XP is None else XP.shape[1])
    out = np.zeros(M, bool)
    if candidates is None:
        candidates = np.isnan(flat).any(axis=0) if XP is None else np.ones(M, bool)
    cols = np.nonzero(candidates)[0]
    if cols.size == 0 or K == 0:
        return out
    X = np.asarray(X, np.float64)
    tol2 = RANK_TOL[np.dtype(dtype).itemsize] ** 2
    if XP is not None:
        block = min(block, 1 << 11)
    else:
        P = (X[:, :, None] * X[:, None, :]).reshape(N, K * K)      # x_t x_t' per date
    for a in range(0, cols.size, block):
        c = cols[a:a + block]
        v = ~np.isnan(np.asarray(flat[:, c], np.float64))
        if XP is None:
            G = (v.T.astype(np.float64) @ P).reshape(c.size, K, K)
        else:
            Xc = pixel_design(X, XP[:, :, c])
            G = np.einsum("tpk,tpl,tp->pkl", Xc, Xc, v)
        ev = np.linalg.eigvalsh(G)
        out[c] = ~(ev[:, 0] > tol2 * ev[:, -1])
    return out


def pixel_design(X, XP):
    """[N, P, K] design of each pixel: the shared columns ``X`` [N, Ks] and the per-pixel ones
    ``XP`` [N, q, P] (None: ``X`` for every pixel, a broadcast view of P = 1)."""
    X = np.asarray(X, np.float64)
    if XP is None:
        return X[:, None, :]
    N, q, P = XP.shape
    return np.concatenate([np.broadcast_to(X[:, None, :], (N, P, X.shape[1])),
                           np.moveaxis(np.asarray(XP, np.float64), 1, 2)], axis=2)


def run_breakpoints(dev, plan, flat, X, h, breaks, dtype, *, progress=False, k_check=None,
                    XP=None):
    """The two kernels over the chunks of ``flat`` [N, M]; see the module docstring.
    ``k_check``: the number of coefficients the h > K check and the cap on the breaks count
    (the design's columns before :func:`independent_columns` dropped any; default ``X``'s).
    ``XP`` [N, q, M]: regressors per pixel, the design's last q columns (None: none)."""
    N, M = flat.shape
    K = X.shape[1] + (0 if XP is None else XP.shape[1])
    kc = K if k_check is None else int(k_check)
    BREAKS = max(1, min(int(breaks), max_breaks(h, N, kc)))
    NB = BREAKS * (BREAKS + 1) // 2
    out = {"nobs": np.empty(M, np.int32), "h": np.empty(M, np.int32),
           "bmax": np.empty(M, np.int32), "status": np.empty(M, np.int32),
           "rss": np.empty((BREAKS + 1, M), dtype), "bp": np.empty((NB, M), np.int32)}
    if M == 0:
        out["breaks"] = BREAKS
        return out
    out = with_smaller_chunks(lambda max_items: _run(dev, plan, flat, X, h, BREAKS, dtype, out,
                                                      progress, max_items, XP),
                              device=dev, what="bfast_breaks")
    if kc > K:       # h <= the design's column count: status 1, as R (its k counts them all)
        fail(out, (out["status"] == 0) & (out["h"] <= kc), 1)
    out["breaks"] = BREAKS
    return out


def fail(out, mask, code):
    """Mark the pixels of ``mask`` failed with status ``code``, as the kernel leaves a failed
    pixel: no RSS, no breakpoints, cap 0."""
    out["status"][mask] = code
    out["bmax"][mask] = 0
    out["rss"][:, mask] = np.nan
    out["bp"][:, mask] = -1


def _run(dev, plan, flat, X, h, BREAKS, dtype, out, progress, max_items, XP=None):
    import pyopencl as cl

    N, M = flat.shape
    q = 0 if XP is None else XP.shape[1]
    K = X.shape[1] + q
    T = N * (N + 1) // 2
    rs = dtype.itemsize
    G = plan.interleave
    chunks = chunk_ranges(dev, plan, N, M, K, BREAKS, dtype, max_items, q)
    ctx = dev.context
    mf = cl.mem_flags
    Xd = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(X, dtype))
    hsd = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=segment_table(h, N))
    kern = kernels(dev, plan, K, N, BREAKS, dtype, q)
    cmax = max(b - a for a, b in chunks)
    cpad = round_up(cmax, G)

    def buf(nbytes):
        return scratch_array(dev, (max(int(nbytes), 1),), np.uint8).data

    tri = buf(cpad * T * rs)
    cost = buf(BREAKS * N * cpad * rs)
    arg = buf(BREAKS * N * cpad * 4)
    vidx = buf(N * cpad * 4)
    inputs = {}
    keys = ("nobs", "h", "bmax", "status", "rss", "bp")

    def upload(i, a, b, slot, queue):
        m = b - a
        mp = round_up(m, G)
        hb = io.host(slot, "y", (N, mp), dtype)
        hb[:, :m] = flat[:, a:b]
        hb[:, m:] = np.nan
        inputs[slot], events = io.send(slot, "y", hb, queue)
        if q:
            hx = io.host(slot, "xp", (N, q, mp), dtype)
            hx[:, :, :m] = XP[:, :, a:b]
            hx[:, :, m:] = 0
            xp, ev = io.send(slot, "xp", hx, queue)
            inputs[(slot, "xp")] = xp
            events = list(events) + list(ev)
        return events

    def compute(i, a, b, slot, wait_for):
        m = b - a
        mp = round_up(m, G)
        yd = inputs.pop(slot).data
        xpd = inputs.pop((slot, "xp")).data if q else None
        od = [io.out(slot, k, out[k][..., a:b]).data for k in keys]
        device_wait(dev, wait_for)
        return [launch_chunk(dev, plan, kern, yd, m, mp, Xd, hsd, tri, cost, arg, vidx, od,
                             xpd)]

    def download(i, a, b, slot, queue, wait_for):
        return io.fetch(slot, queue, wait_for)

    with ChunkIO(dev) as io:
        run_pipelined(dev, chunks, upload=upload, compute=compute, download=download,
                      desc="bfast_breaks", disable=None if progress else True)
    return out


def chunk_ranges(dev, plan, N, M, K, BREAKS, dtype, max_items, q=0):
    """The chunks of M pixels (device limits, the Plan's ``chunk_bytes``); ``q`` per-pixel
    regressors of the K."""
    T = N * (N + 1) // 2
    rs = dtype.itemsize
    per = [N * rs, T * rs, BREAKS * N * (rs + 4), N * 4, 16 + (BREAKS + 1) * rs,
           BREAKS * (BREAKS + 1) // 2 * 4] + ([N * q * rs] if q else [])
    cap = chunk_cap(plan, N, rs)
    if cap is not None:
        max_items = cap if max_items is None else min(max_items, cap)
    return chunk_sizes(M, per, dev, fixed_bytes=(N * (K - q) + N + 1) * rs, multiple=plan.interleave,
                       max_items=max_items)


def kernels(dev, plan, K, N, BREAKS, dtype, q=0):
    """(``bp_rss``, ``bp_dp``, pixels per work-group of the split ``bp_rss`` or 0, K, N, q)."""
    spec = dict(real="double" if dtype == np.float64 else "float", lanes=plan.lanes,
                interleave=plan.interleave, K=K, BREAKS=BREAKS, subgroup=plan.subgroup)
    if plan.scan:       # absent otherwise: the CPU source renders as before
        spec["scan"] = 1
    if q:               # per-pixel regressors (bp_rss's XP argument)
        spec["q"] = int(q)
    tpl = "bfast/breakpoints.cl.mako"
    pix = pixels_per_group(plan, K, dev)
    if pix:     # bp_rss split over K work-items per (pixel, start): a small state, no grf
        prg_rss = prg = dev.program(tpl, kernels="all", pix=pix, **spec)
    elif plan.grf:    # the Plan's register file for the rotation state only: the programme,
        # reading the triangle, keeps the driver's (twice the hardware threads)
        prg_rss = dev.program(tpl, kernels="bp_rss", grf=plan.grf, **spec)
        prg = dev.program(tpl, kernels="bp_dp", **spec)
    else:
        prg_rss = prg = dev.program(tpl, kernels="all", **spec)
    return prg_rss.kernel("bp_rss"), prg.kernel("bp_dp"), pix, K, N


def launch_chunk(dev, plan, kern, yd, m, mp, Xd, hsd, tri, cost, arg, vidx, od, xpd=None):
    """The two kernels on a chunk of ``m`` pixels (rows of ``mp``) of ``yd``; outputs ``od``
    (nobs, h, bmax, status, rss, bp); ``xpd``: the chunk's per-pixel regressors (a kernel
    built with ``q``). Returns the last event."""
    k_rss, k_dp, pix, K, N = kern
    xs = (Xd,) if xpd is None else (Xd, xpd)
    if pix:
        launch(dev, k_rss, (K, round_up(mp, pix), N), (K, pix, 1), yd, np.int32(mp), *xs, hsd,
               tri, np.int32(N))
    else:
        launch(dev, k_rss, (round_up(mp // plan.lanes, plan.wg), N), (plan.wg, 1), yd,
               np.int32(mp), *xs, hsd, tri, np.int32(N))
    return launch(dev, k_dp, round_up(m, plan.dp_wg), plan.dp_wg, yd, np.int32(mp),
                  np.int32(m), hsd, tri, cost, arg, vidx, *od, np.int32(N))


def rss_floor(flat, dtype) -> np.ndarray:
    """Per pixel of ``flat`` [N, M] (NaN = missing) the RSS at or below which a fit counts as
    exact: n eps^2 sum y^2 over the n valid values, eps that of ``dtype`` (the precision the
    RSS were computed in). The rounding noise of an exact fit measured 0.002-0.05 of it
    (constant, harmonic and noise-free step series, 161-1,000 dates, with and without gaps,
    float32 and float64); BIC on the logarithm of that noise picks the most breaks, so the
    criteria read RSS below the floor as the floor (see :func:`criteria`). Never below the
    smallest normal float64 (an all-zero series)."""
    eps = float(np.finfo(dtype).eps)
    N, M = flat.shape
    s = np.zeros(M)
    n = np.zeros(M)
    for row in flat:                         # one date at a time: no [N, M] float64 copy
        r = np.asarray(row, np.float64)
        ok = ~np.isnan(r)
        s += np.where(ok, r * r, 0.0)
        n += ok
    with np.errstate(over="ignore", invalid="ignore"):
        f = n * eps * eps * s
    return np.maximum(np.where(np.isfinite(f), f, 0.0), np.finfo(np.float64).tiny)


def criteria(out, K: int, floor=None):
    """BIC and LWZ [breaks + 1, M] from the m-break RSS (NaN beyond a pixel's cap), an RSS
    below ``floor`` (per pixel, :func:`rss_floor`) read as the floor: segmentations that all
    fit exactly tie on the RSS and the penalty chooses the fewest breaks."""
    rss = np.asarray(out["rss"], np.float64)
    if floor is not None:
        rss = np.maximum(rss, np.asarray(floor, np.float64)[None, :])    # NaN stays NaN
    n = out["nobs"].astype(np.float64)
    m = np.arange(rss.shape[0], dtype=np.float64)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        logn = np.log(n)
        bic = n * (np.log(rss) + 1 - logn + math.log(2 * math.pi)) + logn * (K + 1) * (m + 1)
        p = (K + 1) * (m + 1) - 1
        lwz = np.log(rss / (n - p)) + p * 0.299 * logn ** 2.1 / n
    return bic, lwz


def select(out, values):
    """Number of breaks with the smallest criterion (the first, as ``which.min``), -1 for a
    failed pixel, and its breakpoints [breaks, M] (-1 padded)."""
    v = np.where(np.isnan(values), np.inf, values)
    sel = np.argmin(v, axis=0).astype(np.int32)
    sel[out["status"] != 0] = -1
    B = out["rss"].shape[0] - 1
    bp = np.full((B, sel.size), -1, np.int32)
    for mm in range(1, B + 1):
        row = mm * (mm - 1) // 2
        hit = sel == mm
        bp[:mm, hit] = out["bp"][row:row + mm][:, hit]
    return sel, bp


def history_starts(dev, plan, hist, X, dtype, XP=None):
    """``bfast_monitor(history="BP")``: per pixel the date index where the stable history
    starts, as bfast's ``history_break``: ``breakpoints`` on the valid history values with
    h = 6 K and as many breaks as fit, BIC; the start is the first valid date after the last
    break (the first valid date without one); -1 where the history is too short for h (fewer than 12 K values).
    ``XP`` [n, q, M]: per-pixel regressors, the design's last q columns (None: none); a pixel
    whose design they make rank-deficient starts at 0 (its monitoring fit is singular)."""
    n, M = hist.shape
    q = 0 if XP is None else XP.shape[1]
    K = X.shape[1] + q
    h = 6 * K
    B = max_breaks(h, n, K)
    if B == 0:
        return np.full(M, -1, np.int32)
    keep = independent_columns(X, dtype)          # the rank the history's design has
    Xr = X[:, keep]
    out = run_breakpoints(dev, plan, hist, Xr, h, B, dtype, k_check=K, XP=XP)
    singular = None
    if XP is not None:
        singular = rank_deficient_pixels(hist, Xr, dtype, out["status"] == 0, XP=XP)
        fail(out, singular, 4)
    bic, _ = criteria(out, Xr.shape[1] + q, rss_floor(hist, dtype))
    sel, bp = select(out, bic)
    cols = np.arange(M)
    last = np.where(sel > 0, bp[np.clip(sel - 1, 0, None), cols], -1)
    valid = ~np.isnan(hist)
    after = valid & (np.arange(n)[:, None] > last)
    start = np.argmax(after, axis=0).astype(np.int32)       # first valid date without a break
    start[sel < 0] = -1
    if singular is not None:
        start[singular] = 0
    return start
