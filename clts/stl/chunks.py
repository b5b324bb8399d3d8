"""The data side of one STL call (:func:`clts.stl.api.decompose`): the check of numpy input,
and the chunk loops - numpy data through the pipeline of uploads, kernels and downloads with
the host's part of each chunk; device arrays in place, every step a kernel and nothing read
back (docs/device-arrays.md)."""
from __future__ import annotations

import numpy as np

from ..runtime import chunk_sizes, launch
from ..runtime.launch import fixed_local
from ..runtime.faults import enter_chunk, with_smaller_chunks
from ..runtime.memory import empty_device, host_empty, progress as progress_bar
from ..runtime.pipeline import (ChunkIO, aligned_multiple, device_marker, device_wait,
                                run_pipelined)
from ..runtime.arrays import float_array
from ..runtime.resident import aligned_chunks, device_rows, rows_multiple
from ..runtime.staging import finish, in_parts, in_parts_started
from .params import periodic_mean

#: the components ``out=`` takes, in the order the call computes them
COMPONENTS = ("seasonal", "trend", "weights", "resid")
#: values (series x length) from which a one-chunk call shows a bar over its iterations
PASS_BAR_MIN = 1 << 20


def validate(y):
    return validated(y)[0]


def validated(y):
    """``(y, complete)``: ``y`` as C-contiguous native floats (any layout numpy allows:
    Fortran order, strided, big-endian), checked (+-inf refused), and whether it has no NaN.
    One pass over the values, split over the copy threads where it is large."""
    y = float_array(y, "y")
    if y.ndim < 1:
        raise ValueError(f"y must have a time axis, got shape {y.shape}")
    flat = y.reshape(-1)
    found = []                                 # per part: (all finite, any inf)

    def scan(a, b):
        part = flat[a:b]
        ok = bool(np.isfinite(part).all())
        found.append((ok, not ok and bool(np.isinf(part).any())))
    in_parts(flat.size, scan, y.nbytes)
    if any(inf for _, inf in found):
        raise ValueError("y holds +-inf; only finite values and NaN (= missing) are accepted")
    return y, all(ok for ok, _ in found)


def weights_started(y_host, w_h) -> list:
    """The weights of a non-robust fit (1 where ``y_host`` has a value, 0 where NaN) into
    ``w_h``, started on the copy threads (their futures; :func:`finish_host` waits for them):
    they need only the input, so they run while the device computes the chunk."""
    return in_parts_started(len(y_host), lambda a, b: np.logical_not(
        np.isnan(y_host[a:b]), out=w_h[a:b], casting="unsafe"), w_h.nbytes)


def finish_host(y_host, s_h, t_h, w_h, failed, robust, weights=None, r_h=None):
    """Host part of a chunk once its results are in ``s_h``, ``t_h`` (and ``w_h`` when
    ``robust``): weights of a non-robust fit (or the futures of :func:`weights_started`,
    ``weights``, waited for), failed series set NaN (weights 0; in ``r_h`` too, a residual
    computed as the trend came in). A component the call does not return is None."""
    if w_h is not None:
        if not robust:
            finish(weights_started(y_host, w_h) if weights is None else weights)
        w_h[failed] = 0
    for h in (s_h, t_h, r_h):
        if h is not None:
            h[failed] = np.nan


def residual(y, s, t, r) -> None:
    """``r = y - s - t`` (views of one range of the four arrays), with no temporary."""
    np.subtract(y, s, out=r)
    r -= t


def residual_as_trend_lands(y2, S, T, R, a):
    """``then`` of the trend's download (``ChunkIO.out``) of the chunk from row ``a``: the
    :func:`residual` of the elements just in, by the copy thread that brought them (the
    seasonal is in: it comes back first), instead of a pass over the whole batch after the
    loop. The four arrays C-contiguous (flat views)."""
    yf, sf, tf, rf = (X.reshape(-1) for X in (y2, S, T, R))
    base = a * y2.shape[1]

    def then(e0, e1):
        lo, hi = base + e0, base + e1
        residual(yf[lo:hi], sf[lo:hi], tf[lo:hi], rf[lo:hi])
    return then


def per_series_bytes(p, N, item):
    return (9 * N + 4 * (N + 2 * p["period"])) * item + 64 * N


def run_host(dev, runner, p, periodic, y2, *, dests, progress, wanted=COMPONENTS, keep=None):
    """The chunk loop of numpy data: uploads, kernels, downloads into ``dests`` or fresh
    arrays, the host's part of each chunk (:func:`finish_host`). Components not in
    ``wanted`` (nor needed for a wanted residual) stay on the device and come back None."""
    B, N = y2.shape
    item = y2.dtype.itemsize
    per_series = per_series_bytes(p, N, item)
    # fresh outputs, aligned for in-place use by the device (one chunk: no copy on Intel) from
    # the pool of dropped results, where no out= array is written in place; on the host: the
    # components asked for, and the seasonal and trend of the residual
    on_host = set(wanted) | ({"seasonal", "trend"} if "resid" in wanted else set())
    S, T, W, R = (None if k not in on_host else dests.get(k) if dests.get(k) is not None
                  else host_empty(dev, y2.shape, y2.dtype) for k in COMPONENTS)
    failed = np.zeros(B, bool)
    robust_w = p["outer_iter"] > 0
    # the residual as the trend comes in (not where the seasonal changes after the loop, nor
    # into strided arrays: a pass after the loop there)
    landing = (R is not None and not periodic
               and all(X.flags.c_contiguous for X in (y2, S, T, R)))

    def run(max_items):
        chunks = chunk_sizes(B, [per_series], dev, max_items=max_items,
                             multiple=aligned_multiple(dev, N * item)) if B else []
        inputs, weights = {}, {}

        def upload(i, a, b, slot, queue):
            inputs[slot], events = io.put(slot, "y", y2[a:b], queue)
            return events

        def compute(i, a, b, slot, wait_for):
            if W is not None and not robust_w:    # on the copy threads during the kernels
                weights[slot] = weights_started(y2[a:b], W[a:b])
            # a component not returned stays on the device (the kernels need it)
            hook = residual_as_trend_lands(y2, S, T, R, a) if landing else None
            outs = tuple(io.out(slot, key, H[a:b], then) if H is not None
                         else io.temp(slot, key, (b - a, N), y2.dtype)
                         for key, H, then in (("s", S, None), ("t", T, hook)))
            outs += ((io.out(slot, "w", W[a:b]) if W is not None else None)
                     if robust_w else None,)
            device_wait(dev, wait_for)
            # one chunk (the chunk loop's bar has one step): a bar over the iterations, shown
            # when the call lasts (large batches fit one chunk on CPUs)
            passes = [] if progress and len(chunks) == 1 and (b - a) * N >= PASS_BAR_MIN \
                else None
            runner.prebuild()       # a first call: every program built in parallel
            if runner.fused:        # the mask comes back with the results: nothing waits here
                mask = io.out(slot, "failed", failed.view(np.uint8)[a:b])
                runner.run(inputs.pop(slot), *outs, passes=passes, failed_out=mask)
            else:                   # read back mid-way (the flat LOESS sizes its sums by it)
                failed[a:b] = runner.run(inputs.pop(slot), *outs, passes=passes)
            for ev in progress_bar(passes or (), desc="stl", unit="iteration"):
                ev.wait()
            return device_marker(dev)

        def download(i, a, b, slot, queue, wait_for):
            return io.fetch(slot, queue, wait_for) + [lambda w=weights.pop(slot, None): (
                finish_host(y2[a:b], *(H if H is None else H[a:b] for H in (S, T, W)),
                            failed[a:b], robust_w, w, R[a:b] if landing else None))]

        with ChunkIO(dev) as io:
            run_pipelined(dev, chunks, upload=upload, compute=compute, download=download,
                          desc="stl", disable=None if progress else True)
    with_smaller_chunks(run, device=dev, what="stl")
    if periodic and S is not None:
        periodic_mean(S, p["period"])
    if R is not None and not landing:
        # on the copy threads where it is large
        in_parts(B, lambda a, b: residual(y2[a:b], S[a:b], T[a:b], R[a:b]), R.nbytes)
    return dict(zip(COMPONENTS, (S, T, W, R))), failed


def run_device(dev, runner, p, periodic, y2, *, dests, progress, wanted=COMPONENTS, keep=None):
    """The same on a device array: fresh device results, the chunks' kernels written into row
    blocks of them (sub-buffers), the failed mask and the host's part of the numpy path done
    by kernels (``stl/finish.cl.mako``). Nothing is transferred, mapped or waited for."""
    B, N = y2.shape
    dt, item, q = y2.dtype, y2.dtype.itemsize, dev.queue
    keep = [] if keep is None else keep
    keep.append(runner)                   # its fit tables, used by the queued kernels
    # fresh allocations (not the scratch pool, which recycles dropped buffers): the results
    # are the caller's until dropped
    S, T, W, R = (empty_device(q, dev.context, (B, N), dt) for _ in COMPONENTS)
    failed = empty_device(q, dev.context, (B,), np.bool_)
    robust_w = p["outer_iter"] > 0
    i32 = np.int32

    # the flat LOESS's partial sums, sized for windows as wide as a segment (Runner.run)
    part = max([sm["S"] * sm["NF"] * -(-sm["nmax"] // runner.versions[k].chunk) * 8 * item
                for k, sm in runner.smoothers.items() if runner.versions[k].version == "flat"]
               + [0])

    def run(max_items):
        chunks = aligned_chunks(B, [per_series_bytes(p, N, item), part], dev,
                                max_items=max_items,
                                multiple=rows_multiple(dev, N * item)) if B else []
        if chunks:
            runner.prebuild()
        for i, (a, b) in enumerate(chunks):
            enter_chunk(i, a, b, len(chunks), B)
            yc = device_rows(y2, a, b)
            keep.append(yc)
            outs = [device_rows(X, a, b, write=True) for X in (S, T)]
            outs.append(device_rows(W, a, b, write=True) if robust_w else None)
            keep.extend(o for o in outs if o is not None)
            runner.run(yc, *outs, failed_out=failed, row0=a, keep=keep)
    with_smaller_chunks(run, device=dev, what="stl")
    if B and N:
        prg = runner._prog("finish")
        launch(dev, runner._kernel(prg, "stl_finish"), *fixed_local(dev, B * N), y2.data, S.data,
               T.data,
               W.data, R.data, failed.data, i32(N), np.int64(B * N), i32(robust_w),
               i32(not periodic))
        if periodic:
            launch(dev, runner._kernel(prg, "stl_periodic"), *fixed_local(dev, B * p["period"]),
                   y2.data,
                   S.data, T.data, R.data, i32(N), i32(p["period"]), i32(B))
    return dict(zip(COMPONENTS, (S, T, W, R))), failed
