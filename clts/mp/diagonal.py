"""The diagonal driver: work lists of bands and segments, the diagonal kernels
(``diag_top1.cl.mako`` / ``diag_topk.cl.mako``) over a band range on one device, the split of
the diagonals over several devices, and the k = 1 result (exact re-evaluation of the winners,
exact paths for special windows). ``band_area`` and ``split_bands`` (the split by work) are
public for tests."""
from __future__ import annotations

import functools

import numpy as np

from .. import options
from ..runtime.memory import empty_device, fill, reshaped, scratch
from ..runtime import launch, progress, round_up
from ..runtime.launch import fixed_local
from .local_size import ITEM_LOCAL
from .plan import amd_waves, topk_fold_cols
from .tiles import local_tile, topk_tile, window_tile
from .estimate import progress_estimate
from .exact import _pair_dist, _scan as _scan_dev
from .series import PAD_SLACK


ULONG_MAX = np.uint64(0xFFFFFFFFFFFFFFFF)


#: bytes of the top-k partial lists of one launch (bands per launch are cut to fit): at least
#: TOPK_PARTIAL_BYTES, else 1 / TOPK_PARTIAL_ALLOC_SHARE of the device's largest allocation.
#: A GPU segment of 8,192 rows (segment_per_m * m at m = 256) gives 786 KB of lists per band at
#: k = 4, so a fixed 64 MB cut an H100's launches to 85 bands: 256 launches at n = 2^15 and 900
#: at n = 2^16, each costing one work-item's whole segment (7.7 ms measured per launch)
TOPK_PARTIAL_BYTES = 64 << 20
TOPK_PARTIAL_ALLOC_SHARE = 16


#: work-items (bands) per compute unit in one top-k launch: fewer launches cost reductions,
#: larger ones insert more (their floors are older; docs/performance.md, "Figures behind the
#: code")
TOPK_ITEMS_PER_CU = 4


#: local size of the reductions of the partial profiles (a work-item per row / column) where the
#: driver compiles per local size (pocl): one size whatever the segment (which grows with m)
#: and the launch's columns (which grow with its bands), so that a new window or series length
#: compiles no reduction again at its first enqueue (``runtime.launch.fixed_local``'s buckets
#: follow the range: a new bucket per doubling of the segment)
REDUCE_LOCAL = 64


def _work_lists(lA, lB, self_join, D, R, b_lo, b_hi, kstart):
    """Per segment s: (s0, desc[int4], kb) of the bands b_lo..b_hi-1 touching rows sR..sR+R."""
    b = np.arange(b_lo, b_hi, dtype=np.int64)
    k0 = kstart + b * D
    if self_join:
        lo = np.zeros_like(k0)
        hi = lA - k0
    else:
        lo = np.maximum(0, -k0 - D + 1)
        hi = np.minimum(lA, lB - k0)
    out = []
    if len(b) == 0:
        return out
    smax = int((hi.max() - 1) // R) if hi.max() > 0 else -1
    for s in range(smax + 1):
        s0 = s * R
        ilo = np.maximum(lo, s0)
        ihi = np.minimum(hi, s0 + R)
        sel = ilo < ihi
        if not sel.any():
            continue
        idx = np.nonzero(sel)[0]
        f, last = idx[0], idx[-1]       # touching bands are consecutive
        assert len(idx) == last - f + 1
        desc = np.zeros((len(idx), 4), np.int32)
        desc[:, 0] = k0[f:last + 1]
        desc[:, 1] = ilo[f:last + 1]
        desc[:, 2] = ihi[f:last + 1]
        out.append((s0, desc, int(k0[f])))
    return out


def split_bands(area, parts: int) -> list[int]:
    """Band bounds ``[0, b1, ..., len(area)]``: ``parts`` runs of consecutive bands with about
    equal total area (pairs), i.e. the triangle split by work, not by diagonal count; each run
    is within one band's area of ``sum / parts``."""
    area = np.asarray(area, float)
    cum = np.concatenate([[0.0], np.cumsum(area)])
    total = cum[-1]
    return ([0] + [int(np.searchsorted(cum, total * i / parts)) for i in range(1, parts)]
            + [len(area)])


@functools.lru_cache(maxsize=256)
def _split(lA, lB, self_join, D, nb, kstart, parts):
    """(pairs in all bands, :func:`split_bands` of them in ``parts``), once per geometry."""
    area = band_area(lA, lB, self_join, D, nb, kstart)
    return float(area.sum()), tuple(split_bands(area, parts))


def band_area(lA, lB, self_join, D, nb, kstart):
    """Pairs in each of the ``nb`` bands of ``D`` diagonals from diagonal ``kstart`` (what
    ``split_bands`` balances)."""
    k0 = kstart + np.arange(nb) * D
    if self_join:
        return np.maximum(lA - k0, 0).astype(float) * D
    lo = np.maximum(0, -k0 - D + 1)
    hi = np.minimum(lA, lB - k0)
    return np.maximum(hi - lo, 0).astype(float) * D


def diag_spec(dev, plan, normalize, cols, k=1):
    """(template, parameters) of the diagonal kernel of a call (``cols``: column profiles too;
    ``k``: neighbours per window), as :meth:`Device.program` and
    :func:`clts.runtime.programs.prebuild` take them. The plan's ``segment`` is not among
    them: the kernels take it as an argument (SEG), so that every window length (whose plan's
    segment grows with m) and series length runs the same programs."""
    atomic = plan.merge == "atomic" and k == 1      # top-k: partial lists, any device
    local = (plan.store if k == 1 else plan.topk_store) == "local"
    params = dict(real=plan.kernel_real, lanes=plan.lanes, groups=plan.groups, tile=plan.tile,
                  NORMALIZE=int(normalize), COLS=int(cols),
                  ATOMIC=int(atomic), PACK=int(plan.kernel_real == "double" and k == 1), K=k,
                  LOCAL=int(local), wg=plan.wg if local else 0, unroll=plan.unroll,
                  interleave=plan.interleave if local else 0,
                  PRECHECK=int(not getattr(dev.info, "simulator", False)), keep=plan.keep)
    if k > 1:
        window = plan.topk_store == "window" and cols
        L, local = window_tile(dev, plan) if window else topk_tile(dev, plan, k)
        # ILV: local k-lists and the partial lists rowPV / colPV interleaved by work-item
        params.update(tile=L, LOCAL=int(local), wg=plan.wg if local or window else 0,
                      interleave=plan.interleave, FOLD=plan.fold,
                      FOLDC=topk_fold_cols(plan.fold, plan.band, k, dev, plan.kernel_real)
                      if plan.fold else 0)
        if window:
            params.update(WINDOW=1)
            if amd_waves(dev):
                params.update(waves=amd_waves(dev))
        if plan.subgroup:
            params.update(subgroup=plan.subgroup)
    elif local and cols:
        params.update(tile=local_tile(dev, plan))
    return ("mp/diag_top1.cl.mako" if k == 1 else "mp/diag_topk.cl.mako"), params


def _run_diag(dev, plan, A, B, dB, self_join, cols, b_lo, b_hi, kstart, bar, chunk_bands,
              k=1):
    D, R = plan.band, plan.segment
    lA, lB = A.l, B.l
    # room for every column index a padded lane can reach, so packed indices never carry
    idxbits = max(1, int(max(lA, lB) + D + PAD_SLACK).bit_length())
    template, params = diag_spec(dev, plan, A.normalize, cols, k)
    atomic = params["ATOMIC"]
    if k > 1:
        # few bands per launch: each launch's reduction raises the entry floors of the next
        budget = max(TOPK_PARTIAL_BYTES, dev.max_alloc // TOPK_PARTIAL_ALLOC_SHARE)
        chunk_bands = max(1, min(chunk_bands, budget // ((2 * R + D) * k * 12),
                                 TOPK_ITEMS_PER_CU * dev.info.compute_units * plan.wg))
    prg = dev.program(template, **params)
    kern = prg.kernel("diag" if k == 1 else "diag_topk")
    kr = A.kr
    if k > 1:
        gRV = _filled(dev, lA * k, kr, -np.inf)
        gRI = _filled(dev, lA * k, np.int32, -1)
        gCV = _filled(dev, lB * k, kr, -np.inf) if cols else None
        gCI = _filled(dev, lB * k, np.int32, -1) if cols else None
        nwmax = max(1, min(chunk_bands, b_hi - b_lo))
        if plan.interleave:     # each entry's run of the interleaved lists on a 128-byte boundary
            nwmax = round_up(nwmax, 32)
        rPV = scratch(dev, nwmax * R * k, kr)
        rPI = scratch(dev, nwmax * R * k, np.int32)
        if cols:
            cPV = scratch(dev, nwmax * (R + D) * k, kr)
            cPI = scratch(dev, nwmax * (R + D) * k, np.int32)
        wfl = scratch(dev, 2 * nwmax, np.int32)
        red_r = prg.kernel("reduce_rows_k")
        red_c = prg.kernel("reduce_cols_k") if cols else None
        if plan.fold:   # the row fold reads a head of -1 as an empty list (and clears those it read)
            launch(dev, prg.kernel("clear_heads_k"),
                   *fixed_local(dev, round_up(nwmax, 64), ITEM_LOCAL),
                   rPI.data,
                   np.int32(nwmax), np.int32(R))
    elif atomic:
        rowKey = _filled(dev, lA, np.uint64, ULONG_MAX)
        colKey = _filled(dev, lB, np.uint64, ULONG_MAX) if cols else None
        outs = [rowKey.data] + ([colKey.data] if cols else [])
    else:
        gRV = _filled(dev, lA, kr, -np.inf)
        gRI = _filled(dev, lA, np.int32, -1)
        gCV = _filled(dev, lB, kr, -np.inf) if cols else None
        gCI = _filled(dev, lB, np.int32, -1) if cols else None
        nwmax = max(1, min(chunk_bands, b_hi - b_lo))
        rPV = scratch(dev, nwmax * R, kr)
        rPI = scratch(dev, nwmax * R, np.int32)
        if cols:
            cPV = scratch(dev, nwmax * (R + D), kr)
            cPI = scratch(dev, nwmax * (R + D), np.int32)
        red_r = prg.kernel("reduce_rows")
        red_c = prg.kernel("reduce_cols") if cols else None
    idxmask = (1 << idxbits) - 1 if plan.kernel_real == "double" else (1 << 32) - 1
    common = [np.int32(A.m), np.int32(lA), np.int32(lB), np.int32(B.pad), np.int32(R),
              np.uint64(idxmask),
              A.dev_arrays["T"].data, A.dev_arrays["mu"].data, A.dev_arrays["df"].data,
              A.dev_arrays["dg"].data, A.dev_arrays["r"].data,
              dB["T"].data, dB["mu"].data, dB["df"].data, dB["dg"].data, dB["r"].data]
    # every launch's work descriptors made on the device before the launches (nothing
    # uploaded, nothing waited for: several devices then run at the same time)
    plan_l, dd, offs = _descriptors(dev, A, lA, lB, self_join, D, R, b_lo, b_hi, kstart,
                                    chunk_bands, k)
    events = []
    from ..runtime.faults import enter_chunk
    for li, (s0, dsub) in enumerate(plan_l):
        nw, off = len(dsub), int(offs[li])
        enter_chunk(li, off, off + nw, len(plan_l), int(offs[-1]))
        gsz = round_up(nw, plan.wg)
        head = (dd.data, np.int32(off), np.int32(nw), np.int32(s0))
        if k > 1:
            pout = [rPV.data, rPI.data, gRV.data, wfl.data, np.int32(nwmax)] + \
                ([cPV.data, cPI.data, gCV.data] if cols else [])
            launch(dev, kern, gsz, plan.wg, *head, *common, *pout)
            ncols = (nw - 1) * D + R + D - 1
            if plan.fold:   # a work-group per row / per block of column groups
                fc = params["FOLDC"]
                rows = (R * plan.fold, plan.fold)
                colsz = (-(-(-(-ncols // D)) // fc) * fc, fc)
            else:           # a work-item per row / column
                rows = fixed_local(dev, round_up(R, 64), REDUCE_LOCAL)
                colsz = fixed_local(dev, round_up(ncols, 64), REDUCE_LOCAL)
            ev = launch(dev, red_r, *rows, *head[:3], np.int32(s0), np.int32(lA),
                        np.int32(R), wfl.data, np.int32(nwmax), rPV.data, rPI.data, gRV.data,
                        gRI.data)
            if cols:
                kbc = int(dsub[0, 0])
                ev = launch(dev, red_c, *colsz, *head[:3], np.int32(s0),
                            np.int32(kbc), np.int32(s0 + kbc), np.int32(ncols),
                            np.int32(lB), np.int32(R), wfl.data, np.int32(nwmax), cPV.data,
                            cPI.data, gCV.data, gCI.data)
        elif atomic:
            ev = launch(dev, kern, gsz, plan.wg, *head, *common, *outs)
        else:
            pout = [rPV.data, rPI.data] + ([cPV.data, cPI.data] if cols else [])
            launch(dev, kern, gsz, plan.wg, *head, *common, *pout)
            ev = launch(dev, red_r, *fixed_local(dev, round_up(R, 64), REDUCE_LOCAL), np.int32(nw),
                        np.int32(s0), np.int32(lA), np.int32(R), rPV.data, rPI.data, gRV.data, gRI.data)
            if cols:
                kbc = int(dsub[0, 0])
                ncols = (nw - 1) * D + R + D - 1
                ev = launch(dev, red_c, *fixed_local(dev, round_up(ncols, 64), REDUCE_LOCAL),
                            np.int32(nw), np.int32(s0),
                            np.int32(kbc), np.int32(s0 + kbc), np.int32(ncols),
                            np.int32(lB), np.int32(R), cPV.data, cPI.data, gCV.data,
                            gCI.data)
        area = float(np.sum((dsub[:, 2] - dsub[:, 1]).astype(float))) * D
        events.append((ev, area))
    yield None          # everything is enqueued: the caller may start the next device
    for e, a in events if bar is not None else ():
        if e is not None:
            e.wait()
        bar.update(a)
    if k == 1:          # device arrays of column indices (-1: none), read by _top1
        keep = [dd]
        if atomic:
            ri, ci = _decode(dev, A, rowKey, idxbits, plan), \
                (_decode(dev, A, colKey, idxbits, plan) if cols else None)
            keep += [rowKey, colKey]
        else:
            ri, ci = gRI, gCI
            keep += [rPV, rPI] + ([cPV, cPI] if cols else [])
        yield ri, ci, keep
        return
    # top-k: the [l, k] lists' indices (int32, -1: none) as device arrays, read by _topk
    yield gRI, gCI, [dd, gRV, gCV, rPV, rPI, wfl] + ([cPV, cPI] if cols else [])


def _filled(dev, n, dtype, value):
    """A scratch device array of ``n`` values ``value`` (filled on the device)."""
    return fill(dev, scratch(dev, n, dtype), value)


def _decode(dev, side, keys, idxbits, plan):
    """The column indices (int32, -1: none) of the packed keys of the atomic merge."""
    mask = (1 << 32) - 1 if plan.kernel_real == "float" else (1 << idxbits) - 1
    idx = scratch(dev, keys.shape[0], np.int32)
    launch(dev, side.prg.kernel("decode_keys"),
           *fixed_local(dev, round_up(keys.shape[0], 64), ITEM_LOCAL),
           keys.data,
           np.int32(keys.shape[0]), np.uint64(mask), idx.data)
    return idx


def _descriptors(dev, side, lA, lB, self_join, D, R, b_lo, b_hi, kstart, chunk_bands, k):
    """The launches (s0, bands) of the band range, and their work descriptors made on the
    device (``prep.cl.mako``'s ``work_desc``, one launch per segment): k = 1 in launches of
    ``chunk_bands`` bands; top-k in launches of 2, 4, 8, ... bands, so that the global lists
    (the entry floor of the next launches) fill from few candidates and later launches
    insert almost nothing, from one band per compute unit on (a launch costs at least one
    work-item's segment: on a GPU, launches smaller than the device cost as much as a full
    one). Each launch's descriptors start on a 128-byte boundary (8 int4): the top-k folds
    read them with adjacent work-items (an unaligned run of 32 spans 5 segments, not 4).
    Returns (launches as (s0, desc) with desc the host copy, device array, offsets)."""
    plan_l, segs, o, offs = _layout(lA, lB, self_join, D, R, b_lo, b_hi, kstart, chunk_bands, k,
                                    dev.info.compute_units)
    dd = scratch(dev, (max(o, 1), 4), np.int32)
    kern = side.prg.kernel("work_desc")
    for seg_off, total, b0, nbands, size0, s0 in segs:
        launch(dev, kern, *fixed_local(dev, round_up(total, 64), ITEM_LOCAL),
               dd.data, np.int32(seg_off),
               np.int32(total), np.int32(b0), np.int32(nbands), np.int32(size0),
               np.int32(chunk_bands), np.int32(kstart), np.int32(D), np.int32(s0), np.int32(R),
               np.int32(lA), np.int32(lB), np.int32(self_join))
    return plan_l, dd, offs


@functools.lru_cache(maxsize=256)
def _layout(lA, lB, self_join, D, R, b_lo, b_hi, kstart, chunk_bands, k, units):
    """:func:`_descriptors`' host part, a function of its integers alone (made once per
    geometry; a repeated call reuses it): the launches ``(s0, desc)`` (read-only), the
    segments' ``work_desc`` parameters, the descriptors' total and each launch's offset."""
    plan_l, segs, o = [], [], 0
    for s0, desc, kb in _work_lists(lA, lB, self_join, D, R, b_lo, b_hi, kstart):
        size0 = chunk_bands if k == 1 else min(max(2, units), chunk_bands)
        seg_off, c0, size = o, 0, size0
        desc.setflags(write=False)
        while c0 < len(desc):
            d = desc[c0:c0 + size]
            plan_l.append((s0, d))
            o += round_up(len(d), 8)
            c0 += size
            size = min(2 * size, chunk_bands)
        b0 = (int(desc[0, 0]) - kstart) // D
        segs.append((seg_off, o - seg_off, b0, len(desc), size0, s0))
    offs = np.cumsum([0] + [round_up(len(d), 8) for _, d in plan_l])
    offs.setflags(write=False)
    return tuple(plan_l), tuple(segs), o, offs


def _diag_all(job):
    """:func:`_diag_bands`, run again with fewer bands per launch after an allocation failure
    (``faults.with_smaller_chunks``); any other failure names the launch it happened in."""
    from ..runtime.faults import with_smaller_chunks
    return with_smaller_chunks(lambda max_bands: _diag_bands(job, max_bands),
                               device=job.devs[0], what="matrix_profile")


#: a bar from this predicted time (seconds), or without a prediction from this many pairs
#: (about 2 s on the development machine's pocl)
BAR_MIN_SECONDS = 1.0
BAR_MIN_PAIRS = 1.5e9

#: a bar's estimate is looked up from this many pairs (estimate.AUTO_CAL_PAIRS: calibrated)
EST_MIN_PAIRS = 1e8


def _duration(seconds):
    """1.5 s, 42 s, 2.7 min, 1.3 h."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


#: a progress bar's launches hold at most 1 / BAR_LAUNCHES of a segment's bands (so that it
#: moves), but never fewer bands than fill the device (BAR_FILL_GROUPS work-groups per compute
#: unit, at least the plan's groups_per_cu): launches of 1/32 of the bands of a 2^18 self-join
#: were 32 work-groups on an H100's 132 compute units, 528 launches and 4.3 times the kernel
#: time of the 80 launches without the bar
BAR_LAUNCHES = 32
BAR_FILL_GROUPS = 4


def launch_bands(dev, plan, nb, ndev=1, bar=False):
    """Bands per launch of the k = 1 diagonal kernel: as many as the device's largest
    allocation allows (at most 2^14); with a progress bar (``bar``) at most 1 / BAR_LAUNCHES
    of the ``nb`` bands split over ``ndev`` devices, but at least the bands that fill the
    device."""
    D = plan.band
    chunk = max(1, int(min(1 << 14, (dev.max_alloc // 4) // (plan.segment + D) // 8)))
    if bar:
        fill = dev.info.compute_units * plan.wg * max(BAR_FILL_GROUPS, plan.groups_per_cu)
        chunk = min(chunk, max(fill, -(-nb // (BAR_LAUNCHES * ndev))))
    return chunk


def _diag_bands(job, max_bands=None):
    """Run the diagonal kernel over all bands, split between ``job.devs`` by area; returns one
    (row indices, column indices) per device ([l] for k = 1, [l, k] for k > 1)."""
    devs, p, self_join, ez, k = job.devs, job.plan, job.self_join, job.ez, job.k
    D = p.band
    lA, lB = job.A.l, job.B.l
    kstart = ez + 1 if self_join else -(lA - 1)
    nb = 0
    if self_join:
        nb = max(0, -(-(lA - kstart) // D)) if lA > kstart else 0
    else:
        nb = -(-(lB - 1 - kstart + 1) // D)
    total, bounds = _split(lA, lB, self_join, D, nb, kstart, len(devs))
    if job.bands is not None:
        part, parts = job.bands
        full = _split(lA, lB, self_join, D, nb, kstart, parts)[1]
        bounds = [full[part], full[part + 1]]
    bar = None
    est = None
    if job.show_progress and k == 1 and job.bands is None and total > EST_MIN_PAIRS \
            and options.get("progress"):
        # the k = 1 estimate (top-k runs are several times slower); a large run calibrates
        # first where no calibration exists (estimate.AUTO_CAL_PAIRS)
        lm = (lA if self_join else (lA + lB) / 2) * job.A.m
        est = progress_estimate(devs[0], p, total, job.calibrate, lm)
    if job.show_progress and (total > BAR_MIN_PAIRS if est is None else est > BAR_MIN_SECONDS):
        desc = "matrix profile"
        if est is not None:
            desc += f" (estimate {_duration(est / len(devs))})"
        bar = progress(range(1), total=total, desc=desc, unit="pair")
        if not hasattr(bar, "update"):
            bar = None
        else:
            bar.unit_scale = True           # 1.8G/2.1G pairs
    chunk_bands = launch_bands(devs[0], p, nb, len(devs), bar is not None and k == 1)
    cap = options.get("max_chunk")
    if cap:
        chunk_bands = min(chunk_bands, cap)
    if max_bands:
        chunk_bands = max(1, min(chunk_bands, max_bands))
    running = []
    for di, d in enumerate(devs):
        b_lo, b_hi = bounds[di], bounds[di + 1]
        if b_hi <= b_lo:
            continue
        A, B = job.side(d, "A"), job.side(d, "B")
        A.dev_arrays = A.upload(d, as_columns=False)
        dB = B.upload(d, as_columns=True)
        run = _run_diag(d, p, A, B, dB, self_join, job.cols, b_lo, b_hi, kstart, bar,
                        chunk_bands, k)
        next(run)                       # enqueue on this device, then go to the next one
        running.append(run)
    partial = [next(run) for run in running]
    if bar is not None:
        bar.close()
    return partial


def _top1(job):
    """k = 1: the diagonal kernel's winners of every device, re-evaluated exactly; the
    constant and ill-conditioned windows from exact scans; all on the first device, nothing
    read back. Returns the result's fields as device arrays (P, I [l, 1]; distances in the
    exact precision, indices int64) and ``keep``, the temporaries queued kernels read."""
    p, self_join, both, cols = job.plan, job.self_join, job.both, job.cols
    ez = job.ez
    A, B = job.A, job.B
    lA, lB = A.l, B.l
    dev = job.devs[0]
    partial = _diag_all(job)
    keep = [job]
    rd = ri = cd = ci = None
    for di, (pri, pci, kept) in enumerate(partial):
        keep += kept
        if di:      # another device's winners (several devices: numpy inputs only)
            import pyopencl.array as cla
            pri = cla.to_device(dev.queue, pri.get())
            pci = cla.to_device(dev.queue, pci.get()) if cols else None
        keep += [pri, pci]
        d1 = _pair_dist(dev, p, A, B, None, pri, lA)
        rd, ri = (d1, pri) if rd is None else _better_all(dev, A, rd, ri, d1, pri)
        if cols:
            d2 = _pair_dist(dev, p, B, A, None, pci, lB)
            cd, ci = (d2, pci) if cd is None else _better_all(dev, A, cd, ci, d2, pci)
            keep.append(d2)
        keep.append(d1)
    if rd is None:          # no band on any device
        rd, ri = _filled(dev, lA, A.er, np.inf), _filled(dev, lA, np.int32, -1)
        if cols:
            cd, ci = _filled(dev, lB, A.er, np.inf), _filled(dev, lB, np.int32, -1)
    keep += [rd, ri, cd, ci]

    def _scan(*args):           # the scans' outputs stay referenced until the result is read
        outs = _scan_dev(*args)
        keep.extend(outs)
        return outs
    # special (constant / ill-conditioned) windows: exact scans
    SA = _special(dev, A)
    if self_join:
        left, right = (cd, ci), (rd, ri)
        lv, li, rv, rj = _scan(dev, p, "rows", SA, A, A, ez)
        _better_at(dev, A, SA, lv, li, *left)
        _better_at(dev, A, SA, rv, rj, *right)
        lv, li, rv, rj = _scan(dev, p, "cols", SA, A, A, ez)
        _better_all(dev, A, *left, lv, li)
        _better_all(dev, A, *right, rv, rj)
        out = _finish(dev, job, A, lA, right, left, ("P", "I", "right_P", "right_I", "left_P",
                                                       "left_I"))
        out["P"], out["I"] = reshaped(out["P"], (lA, 1)), reshaped(out["I"], (lA, 1))
        return out, keep + [SA]
    SB = _special(dev, B)
    _, _, rv, rj = _scan(dev, p, "rows", SA, A, B, -1)
    _better_at(dev, A, SA, rv, rj, rd, ri)
    _, _, rv, rj = _scan(dev, p, "cols", SB, B, A, -1)
    _better_all(dev, A, rd, ri, rv, rj)
    out = _finish(dev, job, A, lA, (rd, ri), None, ("P", "I"))
    out["P"], out["I"] = reshaped(out["P"], (lA, 1)), reshaped(out["I"], (lA, 1))
    if both:
        _, _, rv, rj = _scan(dev, p, "rows", SB, B, A, -1)
        _better_at(dev, A, SB, rv, rj, cd, ci)
        _, _, rv, rj = _scan(dev, p, "cols", SA, A, B, -1)
        _better_all(dev, A, cd, ci, rv, rj)
        o2 = _finish(dev, job, A, lB, (cd, ci), None, ("P_B", "I_B"))
        out.update(P_B=reshaped(o2["P_B"], (lB, 1)), I_B=reshaped(o2["I_B"], (lB, 1)))
    return out, keep + [SA, SB]


def _special(dev, X):
    """(indices, count) device arrays: X's windows with a SPECIAL flag, in order."""
    from .series import ILL_WG
    idx = scratch(dev, max(X.l, 1), np.int32)
    count = scratch(dev, 1, np.int32)
    launch(dev, X.prg.kernel("compact_special"), ILL_WG, ILL_WG, X.fl.data, np.int32(X.l),
           idx.data, count.data)
    return idx, count


def _better_at(dev, X, S, v, i, dv, di):
    """dv[S[p]], di[S[p]] <- the better of them and (v[p], i[p]) (``_better``'s rule)."""
    idx, count = S
    launch(dev, X.prg.kernel("better_at"),
           *fixed_local(dev, round_up(max(idx.shape[0], 1), 64), ITEM_LOCAL),
           count.data, idx.data, v.data, i.data, dv.data, di.data)


def _better_all(dev, X, dv, di, v, i):
    """dv, di <- the element-wise better of them and (v, i); returns (dv, di)."""
    n = dv.shape[0]
    launch(dev, X.prg.kernel("better_all"), *fixed_local(dev, round_up(n, 64), ITEM_LOCAL),
           np.int32(n), v.data,
           i.data, dv.data, di.data)
    return dv, di


def _finish(dev, job, X, n, first, second, names):
    """The result arrays ``names`` (P, I[, first's P, I, second's P, I]): P = the better of
    ``first`` and ``second`` (or ``first``), distances times the plain-Euclidean unit."""
    # results: fresh device arrays, never pool blocks a later call could reuse
    q, ctx = dev.queue, dev.context
    P = empty_device(q, ctx, n, X.er)
    I = empty_device(q, ctx, n, np.int64)
    two = second is not None
    sides = [empty_device(q, ctx, n, t) for t in (X.er, np.int64, X.er, np.int64)] if two \
        else [P, I] * 2
    v2, i2 = second if two else first
    launch(dev, X.prg.kernel("finish"), *fixed_local(dev, round_up(n, 64), ITEM_LOCAL),
           np.int32(n), np.int32(two),
           np.int32(not job.normalize), X.scale.data, first[0].data, first[1].data, v2.data,
           i2.data, P.data, I.data, *[a.data for a in sides])
    arrays = [P, I] + (sides if two else [])
    return dict(zip(names, arrays))
