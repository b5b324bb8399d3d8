"""The chunks of ``bfast_monitor``'s kernels, shared by the numpy path (``run_host``: host
cube, pipelined uploads and downloads) and the device path (``device.run_monitor``): the chunk
sizes, the programs of a call, R's boundary table and the kernels of one chunk.

Internal interface of ``clts.bfast`` (``api`` and ``device``): ``run_host``, ``monitor_chunks``,
``programs``, ``bounds_table``, ``launch_chunk``, ``DETAILED_KEYS``."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..runtime import chunk_sizes, launch, round_up
from ..runtime.memory import host_empty, scratch as scratch_array
from ..runtime.pipeline import ChunkIO, device_wait, run_pipelined
from ..runtime.programs import build_program, prebuild
from .common import ZERO_VARIANCE_ULPS
from .plan import chunk_cap, rows_group


def monitor_chunks(dev, plan, M, N, n, K, tpl, isz, rs, max_items=None):
    """The chunks ``[(a, b), ...]`` of ``M`` pixels: what one pixel needs on the device (cube
    of ``isz``-byte values, scratch and results of ``rs``-byte reals) within the device's
    memory, the profile's cache-sized cap and ``max_items``."""
    W = plan.lanes
    per = [N * isz, N * rs, 4 + 3 * rs + 8]
    if tpl["history"] == "ROC":
        per += [4, N * 8]
    if plan.version == "multi":
        per += [(K * (K + 1) // 2 + K + 2) * rs, (K + 1) * rs]
    if tpl["detailed"]:
        per += [K * rs, rs, (N - n) * rs, (N - n) * rs, N * rs]
    if tpl.get("q"):        # per-pixel regressors, in the estimates' and the ROC's precision
        per += [(N + 2) * tpl["q"] * 8] * (2 if tpl["history"] == "ROC" else 1)
    cap = chunk_cap(plan, N, isz, rs)          # the profile's cache-sized chunks
    if cap is not None:
        max_items = cap if max_items is None else min(max_items, cap)
    return chunk_sizes(M, per, dev, fixed_bytes=(N * K + N) * rs, multiple=W * plan.wg,
                       max_items=max_items)


def run_host(dev, plan, flat, N, n, K, X, bounds_t, tpl, *, dtype, crit, hfrac, nodata,
             roc_bounds, progress_bar, max_items=None, pre_hs=None, dests=None, XP=None):
    """``bfast_monitor``'s kernels over the host cube ``flat`` ``[N, M]``, chunk by chunk, the
    next chunk's upload and the previous one's download overlapping the kernels; ``pre_hs``:
    the history starts (given or Bai-Perron), ``dests``: ``out=`` arrays the kernels write
    into, ``XP``: the per-pixel regressors ``[(N + 2) q, M]`` (``api.pixel_regressors``;
    None: none). Returns the dict of results (``breaks``, ``means``, ``valids``, ``status``, ``mags``,
    ``hist_start``, the ``DETAILED_KEYS``)."""
    import pyopencl as cl

    M = flat.shape[1]
    W = plan.lanes
    rs = dtype.itemsize
    detailed = tpl["detailed"]
    chunks = monitor_chunks(dev, plan, M, N, n, K, tpl, flat.dtype.itemsize, rs, max_items)
    ctx = dev.context
    mf = cl.mem_flags
    Xd = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(X, dtype))
    Bd = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR,
                   hostbuf=np.ascontiguousarray(bounds_t, bounds_dtype(tpl, dtype)))
    kp = programs(dev, plan, tpl, dtype, pre_hs is not None)
    roc, bt = kp.roc, kp.bt
    if roc:
        Xroc = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR,
                         hostbuf=np.ascontiguousarray(X, kp.roc_dtype))
    dests = dests or {}

    def result(key, dt):
        # the caller's out= array where it is a view of M values, else a fresh (pooled) one
        d = dests.get(key)
        return d if d is not None else host_empty(dev, (M,), dt)

    out = {"breaks": result("breaks", np.int32), "means": result("means", dtype),
           "valids": result("valids", np.int32), "status": result("status", np.int32)}
    if tpl["magnitudes"]:
        out["mags"] = result("mags", dtype)
    if tpl["history"] == "ROC":
        # the Rec-CUSUM kernel writes the padded rows of the last chunk too (up to W - 1
        # beyond M): room for them, cut off below
        hist_full = np.zeros(M + W, np.int32)
        if pre_hs is not None:
            hist_full[:M] = pre_hs
        out["hist_start"] = hist_full[:M]
    if detailed:
        out.update(coef=np.empty((K, M), dtype), sigma=np.empty(M, dtype),
                   mosum=np.empty((N - n, M), dtype), bounds=np.empty((N - n, M), dtype),
                   pred=np.empty((N, M), dtype))
    cmax = max(b - a for a, b in chunks) if chunks else 0
    cpad = round_up(max(cmax, 1), W)

    def buf(nbytes):
        # from the device's scratch pool: a fresh buffer costs a page fault per 4 KB the first
        # time a kernel touches it (docs/performance.md, "Figures behind the code")
        return scratch_array(dev, (max(int(nbytes), 1),), np.uint8).data
    # shared by the chunks: their kernels run in order on the device queue
    scratch = buf(cpad * N * rs)
    roc_scratch = buf(cpad * N * 8) if roc else None
    if plan.version == "multi":
        gd = buf((K * (K + 1) // 2 + K + 2) * cmax * rs)
        betad = buf((K + 1) * cmax * rs)
    if bt:
        btab = buf((n + 1) * (N - n + 1) * rs)
        bounds_table(dev, plan, kp, n, N, dtype, crit, btab).wait()  # before a chunk reads it
    keys1 = ("breaks", "means", "valids", "status") + (("mags",) if tpl["magnitudes"] else ())
    inputs, hs_in, xp_in, xr_in = {}, {}, {}, {}

    def upload(i, a, b, slot, queue):
        # rows padded to a multiple of the lanes (every vloadW aligned: faster, and Oclgrind's
        # uninitialised-value checker misreads unaligned vector loads), W zeros after them
        m = b - a
        mp = round_up(m, W)
        # (GPUs: W = 1, no padding: straight from the cube into pinned pieces, by the threads)
        inputs[slot], events = io.put(slot, "y", flat[:, a:b], queue, pad=W, cols=mp)
        if pre_hs is not None:
            hs_in[slot], ev = io.put(slot, "hs", hist_full[a:a + mp], queue)
            events = list(events) + list(ev)
        if XP is not None:      # rows of mp values, zeros after the chunk's pixels
            xp_in[slot], ev = io.put(slot, "xp", XP[:, a:b], queue,
                                     dtype=bounds_dtype(tpl, dtype), cols=mp)
            events = list(events) + list(ev)
            if roc:
                xr_in[slot], ev = io.put(slot, "xpr", XP[:, a:b], queue, dtype=kp.roc_dtype,
                                         cols=mp)
                events = list(events) + list(ev)
        return events

    def compute(i, a, b, slot, wait_for):
        m = b - a
        mp = round_up(m, W)
        yd = inputs.pop(slot).data
        od = {key: io.out(slot, key, out[key][a:b]).data for key in keys1}
        if not tpl["magnitudes"]:
            od["mags"] = io.temp(slot, "mags", (1,), dtype).data
        if pre_hs is not None:
            hsd = hs_in.pop(slot).data
        else:
            hsd = (io.out(slot, "hist_start", hist_full[a:a + mp]).data
                   if tpl["history"] == "ROC" else None)
        device_wait(dev, wait_for)
        tail = [od["breaks"], od["means"], od["mags"], od["valids"], od["status"]]
        det = ([io.out(slot, key, out[key][..., a:b]).data for key in DETAILED_KEYS]
               if detailed else [])
        ek = launch_chunk(dev, plan, kp, yd, m, mp, Xd, Bd, Xroc if roc else None, hsd, tail,
                          det, scratch, roc_scratch, gd if plan.version == "multi" else None,
                          betad if plan.version == "multi" else None, btab if bt else None,
                          dtype=dtype, crit=crit, hfrac=hfrac, nodata=nodata,
                          roc_bounds=roc_bounds,
                          XP=xp_in.pop(slot).data if XP is not None else None,
                          XProc=xr_in.pop(slot).data if XP is not None and roc else None)
        return [ek]

    def download(i, a, b, slot, queue, wait_for):
        return io.fetch(slot, queue, wait_for)

    # the next chunk's upload and the previous one's download overlap this one's kernels
    with ChunkIO(dev) as io:
        run_pipelined(dev, chunks, upload=upload, compute=compute, download=download,
                      desc="bfast_monitor", disable=None if progress_bar else True)
    return out


#: the detailed results in the order the kernels take them
DETAILED_KEYS = ("coef", "sigma", "mosum", "bounds", "pred")


def programs(dev, plan, tpl, dtype, starts_given):
    """The programs of one call and what their launches need: ``prg`` (the fused or the
    multi-kernel version), ``prg_roc`` (the Rec-CUSUM test, when ``history="ROC"`` and the
    starts are not given), ``roc``, ``roc_dtype``, ``gp`` / ``roc_gp`` (pixels per work-group of
    the "rows" kernels, 0: one work-item per lanes pixels), ``bt`` (R's boundary tabulated).
    Made once per device, Plan, kernel parameters and dtype (read-only: shared by calls)."""
    try:
        key = (plan, tuple(sorted(tpl.items())), np.dtype(dtype), bool(starts_given))
        hash(key)
    except TypeError:
        return _programs(dev, plan, tpl, dtype, starts_given)
    cache = dev.state.constant("bfast.programs", dict)
    kp = cache.get(key)
    if kp is None:
        kp = _programs(dev, plan, tpl, dtype, starts_given)
        if len(cache) >= 256:
            cache.clear()
        cache[key] = kp
    return kp


def _programs(dev, plan, tpl, dtype, starts_given):
    TM = int(plan.scratch == "time")    # time-major residual scratch (GPUs: coalesced)
    # the history length n and the number of dates N are kernel arguments (``nh``, ``Nt``):
    # no unroll depends on them, so a new start date or series length builds nothing
    params = {k: v for k, v in tpl.items() if k not in ("n", "N")}
    params.update(lanes=plan.lanes, tol=_tol(dtype), zv_tol=_zv_tol(dtype), TM=TM)
    K = tpl["K"]
    rows = plan.matrix == "rows"        # K work-items per pixel hold the K x K matrices (GPUs)
    gp = rows_group(K, plan.wg) if rows else 0
    # R's boundary tabulated once per call by bfast_bounds (GPUs: registers of the sweep)
    bt = int(plan.version == "multi" and plan.bounds == "table" and tpl["convention"] == "r")
    LS = state_group(dev, plan, tpl)    # RE / ME on GPUs: their K x K arrays in local memory
    if LS:
        params["LS"] = LS
    # AMD: the fused kernel of the OLS processes fitted to the Plan's waves per SIMD (ME / RE
    # hold K x K state per date: the hint stays off for them)
    waves = plan.waves if tpl.get("process") in ("mosum", "cusum") else 0
    specs = [("bfast/fused.cl.mako", dict(params, BT=0, **({"WAVES": waves} if waves else {})))
             if plan.version == "fused" else
             ("bfast/multi.cl.mako", dict(params, GP=gp, BT=bt, SG=plan.subgroup))]
    roc = tpl["history"] == "ROC" and not starts_given     # else the starts are given
    roc_dtype = roc_gp = prg_roc = None
    if roc:
        # the Rec-CUSUM test runs in double where the device has it (recursive residuals of
        # nearly collinear first values need it), else in the data's precision
        roc_dtype = np.dtype(np.float64) if dev.fp64 else dtype
        roc_gp = rows_group(K, plan.roc_wg) if rows else 0
        specs.append(("bfast/roc.cl.mako", dict(real="double" if dev.fp64 else tpl["real"],
                      in_type=tpl["in_type"], has_nodata=tpl["has_nodata"], lanes=plan.lanes,
                      K=K, tol=_tol(roc_dtype), zv_tol=_zv_tol(roc_dtype),
                      TM=TM, GP=roc_gp, **({"q": tpl["q"]} if tpl.get("q") else {}))))
    prebuild(dev, specs)                 # a first call: both programs built at once
    prg = build_program(dev, *specs[0])
    if roc:
        prg_roc = build_program(dev, *specs[1])
    return SimpleNamespace(prg=prg, prg_roc=prg_roc, roc=roc, roc_dtype=roc_dtype, gp=gp,
                           roc_gp=roc_gp, bt=bt, K=K, nN=(np.int32(tpl["n"]), np.int32(tpl["N"])),
                           swg=LS or plan.wg)


def state_group(dev, plan, tpl):
    """The sweep's work-group when RE / ME keep their K x K work arrays (the root's matrix and
    eigenvectors, ME's product: 2 or 3 K^2 values of the estimates' precision) in local memory,
    0 when they keep them in private arrays. Local memory on the GPU layout (``matrix="rows"``):
    in private arrays the GPU compilers spill them (K = 8 in double: 1-2 KB of scratch a
    work-item on sm_80 and gfx908); the group is the plan's ``wg`` halved until the arrays fit
    the device's local memory. The CPUs keep the private arrays (their sources unchanged)."""
    if plan.matrix != "rows" or tpl["process"] not in ("re", "me"):
        return 0
    from ..runtime.plans import local_memory_budget
    K = tpl["K"]
    per = (2 if tpl["process"] == "re" else 3) * (K * K + 1) * \
        (8 if tpl["ereal"] == "double" else 4)
    g = max(1, int(plan.wg))
    while g > 1 and g * per > local_memory_budget(dev):
        g //= 2
    return g


def bounds_table(dev, plan, kp, n, N, dtype, crit, btab):
    """R's boundary per (monitoring count, history count), once per call (``kp.bt``)."""
    return launch(dev, kp.prg.kernel("bfast_bounds"), (round_up(n + 1, plan.wg), N - n + 1),
                  (plan.wg, 1), dtype.type(crit), btab, *kp.nN)


def launch_chunk(dev, plan, kp, yd, m, mp, Xd, Bd, Xroc, hsd, tail, det, scratch, roc_scratch,
                 gd, betad, btab, *, dtype, crit, hfrac, nodata, roc_bounds, XP=None,
                 XProc=None):
    """The kernels of one chunk of ``m`` pixels (``mp``: rows padded to the lanes) of cube
    ``yd``: the Rec-CUSUM test (``kp.roc``) into ``hsd``, then the fit and the sweep into the
    outputs ``tail`` (breaks, means, magnitudes, valids, status) and ``det`` (the detailed ones,
    ``DETAILED_KEYS``); ``XP`` / ``XProc``: the chunk's per-pixel regressors (rows of ``mp``)
    for the fit and the sweep / the Rec-CUSUM test (None: none). Returns the last kernel's
    event."""
    K, W = kp.K, plan.lanes
    Mi, Mpad = np.int32(m), np.int32(mp)
    xp = () if XP is None else (XP,)
    rargs = (yd, Mpad, Mi, Xd, *xp, dtype.type(nodata))
    if kp.roc:
        if kp.roc_gp:
            rg = (-(-mp // kp.roc_gp) * kp.roc_gp * K, kp.roc_gp * K)
        else:
            rg = (round_up(-(-m // W), plan.roc_wg), plan.roc_wg)
        rd = kp.roc_dtype.type
        xr = () if XProc is None else (XProc,)
        launch(dev, kp.prg_roc.kernel("bfast_roc"), *rg, yd, Mpad, Xroc, *xr, rd(nodata),
               rd(roc_bounds[0]), rd(roc_bounds[1]), roc_scratch, hsd, *kp.nN)
    tail = list(tail)
    if hsd is not None:
        tail.append(hsd)
    if kp.bt:
        tail.append(btab)
    tail += list(det) + list(kp.nN)
    gsize = round_up(-(-m // W), kp.swg)
    prg = kp.prg
    if plan.version == "fused":
        return launch(dev, prg.kernel("bfast_fused"), gsize, kp.swg, *rargs, dtype.type(crit),
                      dtype.type(hfrac), Bd, scratch, *tail)
    gp = kp.gp
    hs_args = [hsd] if hsd is not None else []
    gg = (-(-m // gp) * gp * K, gp * K) if gp else (round_up(-(-m // W), plan.wg), plan.wg)
    launch(dev, prg.kernel("bfast_gram"), *gg, *rargs, gd, *hs_args, *kp.nN)
    launch(dev, prg.kernel("bfast_invert"), (2 * K * m, K), (2 * K, K), gd, Mi, betad)
    return launch(dev, prg.kernel("bfast_sweep"), gsize, kp.swg, *rargs, dtype.type(crit),
                  dtype.type(hfrac), Bd, scratch, betad, gd, *tail)


def bounds_dtype(tpl, dtype):
    """The dtype of the ``bounds_t`` buffer: the estimates' precision ``ereal`` (RE / ME: R's
    trend column and the design matrix, double where the device has it), else ``dtype``."""
    return np.dtype(np.float64) if tpl["ereal"] == "double" else dtype


def _tol(dtype):  # relative pivot below which a history fit counts as singular
    return "1e-10" if dtype == np.float64 else "1e-5f"


def _zv_tol(dtype):
    """sigma (of residuals divided by the largest |y| of the history) at or below which a
    history counts as fitted exactly (see ``common.ZERO_VARIANCE_ULPS``)."""
    tol = ZERO_VARIANCE_ULPS * float(np.finfo(dtype).eps)
    return repr(tol) if dtype == np.float64 else f"{tol!r}f"
