"""Running a tridiagonal Plan on device buffers: the launches of every version, the Plans and
programs of repeated calls cached per device, the temporaries allocated before the first
launch. Internal interface (``clts.solve_tridiagonal`` and the ocean's TKE step):
``cached_plan``, ``plan_temps``, ``run_plan``, ``new_counter``, ``shared_counter``."""
from __future__ import annotations

import numpy as np

from ..runtime import launch, round_up
from ..runtime.memory import upload_scratch
from ..runtime.plans import cached_under_profile
from ..runtime.programs import build_program, built, prebuild
from ..runtime.temps import temp, temps
from .plan import Plan, Problem, make_plan
from .programs import (copy_tile, flat_chunked, flat_spec, pcr_spec, plan_specs, thomas_spec,
                       transpose_spec, unrolled_transposed)


#: most Plans kept per device by :func:`cached_plan` (then the cache starts again)
PLAN_CACHE_SIZE = 256


def cached_plan(dev, n: int, nsys: int, layout: str, dtype, has_start: bool,
                **overrides) -> Plan:
    """``make_plan(dev, Problem(n, nsys, layout, dtype, has_start), **overrides)``, made once
    per device, problem, keywords and state of the profile's ``tridiag`` section (a tuner or
    a test may change it in memory): a repeated call (a model's time loop) skips the profile
    reads and checks, and the Problem is made only for a Plan not cached yet. Internal
    interface (ocean)."""
    try:
        dt = dtype if type(dtype) is np.dtype else np.dtype(dtype)
        key = (n, nsys, layout, dt, has_start,
               tuple(sorted(overrides.items())) if overrides else ())
        hash(key)
    except TypeError:                 # an unhashable keyword value: make_plan names it
        return make_plan(dev, Problem(n, nsys, layout, dtype, has_start), **overrides)
    return cached_under_profile(
        dev, "tridiag.plans", key, "tridiag",
        lambda: make_plan(dev, Problem(n, nsys, layout, dtype, has_start), **overrides),
        PLAN_CACHE_SIZE)


def _transposed(plan: Plan) -> bool:
    """Whether ``plan``'s Thomas kernel reads transposed copies of natural-layout data."""
    return bool(unrolled_transposed(plan) or (plan.method == "thomas-coalesced"
                                              and plan.layout == "natural"))


def plan_temps(dev, plan: Plan, dtype):
    """The temporaries :func:`run_plan` needs for ``plan`` (thomas versions: the transposed
    copies and the c'/d' scratch), for a caller that allocates everything before its first
    launch (TKE); None for the versions that allocate their own."""
    if plan.method not in ("thomas", "thomas-unrolled", "thomas-coalesced"):
        return None
    n, nsys = plan.n, plan.nsys
    transposed, work = _cached(dev, plan, "temps", lambda: (_transposed(plan),
                                                             _thomas_work_size(plan)))
    tmp = temps(dev, [(n, nsys)] * 5, dtype) if transposed else []
    return tmp, (None if work is None else temp(dev, work, dtype))


def run_plan(dev, plan: Plan, a, b, c, d, x, start, counter, temps=None):
    """Run ``plan`` on device arrays (natural [nsys, n] or interleaved [n, nsys] in memory);
    ``temps``: :func:`plan_temps` of the plan, allocated by the caller (None: here).

    Returns the temporaries the enqueued kernels use: the caller keeps them alive until the
    work is done (the OpenCL spec defers a release, Oclgrind does not)."""
    n, nsys = plan.n, plan.nsys
    dummy_start = start if start is not None else _dummy_int(dev)
    ready = _cached(dev, plan, "ready")
    if ready is None:
        specs = plan_specs(dev, plan)
        if not built(dev, *specs[0]):
            prebuild(dev, specs)        # a first call: its programs built at once
        ready = _cached(dev, plan, "ready", lambda: _ready(dev, plan))
    if type(ready) is tuple:            # the Thomas kernel alone, on x: one launch
        kern, gsize, wg, n32, nsys32 = ready
        launch(dev, kern, gsize, wg, a.data, b.data, c.data, d.data, x.data, x.data,
               dummy_start.data, counter.data, n32, nsys32)
        return []
    if plan.method in ("thomas", "thomas-unrolled", "thomas-coalesced"):
        # every temporary before the first launch: no allocation between the kernels
        tmp, work = temps if temps is not None else plan_temps(dev, plan, x.dtype)
        work = x if work is None else work
        if not ready:
            _run_thomas(dev, plan, plan.layout, a, b, c, d, x, work, dummy_start, counter)
            return [work] if work is not x else []
        # GPUs: the systems of natural-layout data are n words apart, so a warp's reads of
        # row k touch one segment per work-item; transposed (local-memory tiles, coalesced)
        # the Thomas kernel reads adjacent systems' words together. a, b, c, d in one launch.
        tile, tile_y = (copy_tile(dev) if unrolled_transposed(plan)
                        else (plan.params["tile"], plan.params["tile_y"]))
        _transpose(dev, plan, (a, b, c, d), tmp[:4], nsys, n, tile, tile_y)
        _run_thomas(dev, plan, "interleaved", *tmp[:4], tmp[4], work, dummy_start, counter)
        _transpose(dev, plan, (tmp[4],), (x,), n, nsys, tile, tile_y)
        return ([work] if work is not x else []) + tmp
    if plan.method == "pcr":
        prg = _program(dev, plan, ("pcr",), lambda: pcr_spec(plan))
        wg = plan.params["wg"]
        launch(dev, prg.kernel("pcr"), nsys * wg, wg, a.data, b.data, c.data, d.data, x.data,
               x.data, dummy_start.data, counter.data, np.int32(n), np.int32(nsys))
        return []
    elif plan.method == "flat":
        return _run_flat(dev, plan, a, b, c, d, x, dummy_start, counter)
    else:  # pragma: no cover - make_plan validates
        raise ValueError(plan.method)


def _ready(dev, plan):
    """What :func:`run_plan` needs to know of ``plan`` once its programs are built: whether its
    Thomas kernel reads transposed copies (True / False), or, for a Thomas version whose
    kernel alone solves in x (no transposes, no c'/d' scratch), that kernel's launch
    (kernel, (global size,), (work-group,), n, systems): a repeated call makes one look-up
    and the enqueue."""
    transposed = _transposed(plan)
    if (plan.method in ("thomas", "thomas-unrolled", "thomas-coalesced") and not transposed
            and _thomas_work_size(plan) is None):
        kern, gsize, wg, n32, nsys32 = _thomas_launch(dev, plan, plan.layout)
        return kern, (gsize,), (wg,), n32, nsys32
    return transposed


def _cached(dev, plan, what, make=None):
    """A value derived from ``plan`` on ``dev`` (its programs), kept per Plan object: the
    cached Plans of repeated calls (``cached_plan``) skip the spec, key and cache look-ups of
    ``build_program``. None when absent and no ``make`` is given."""
    cache = dev.state.constant("tridiag.plan_programs", dict)
    key = (id(plan), what)
    hit = cache.get(key)
    if hit is not None and hit[0] is plan:
        return hit[1]
    if make is None:
        return None
    value = make()
    if len(cache) >= 4 * PLAN_CACHE_SIZE:
        cache.clear()
    cache[key] = (plan, value)        # the Plan kept alive: its id is not reused meanwhile
    return value


def _program(dev, plan, what, spec):
    """The program ``spec()`` of ``plan`` (``what`` names it among the plan's programs)."""
    return _cached(dev, plan, what, lambda: build_program(dev, *spec()))


class _Ints:
    """int32 zeros in a buffer of the device's pool (``data``), filled on the queue without
    waiting; ``get()`` reads them back (after the queue's earlier work, as an Array's would).
    ~2.5 µs against ~25 µs for ``cla.zeros`` (a fresh buffer and an Array; pocl)."""

    __slots__ = ("data", "queue", "size", "_temp")

    def __init__(self, dev, size):
        import pyopencl as cl
        self._temp = temp(dev, size, np.int32)
        self.data, self.queue, self.size = self._temp.data, dev.queue, int(size)
        cl.enqueue_fill_buffer(dev.queue, self.data, np.zeros(1, np.int32), 0, 4 * self.size)

    def get(self):
        import pyopencl as cl
        out = np.empty(self.size, np.int32)
        cl.enqueue_copy(self.queue, out, self.data)
        return out


def _zeros_int(dev, size):
    """int32 zeros, enqueued without waiting for the queue (a blocking upload would wait for
    every kernel before it); on Oclgrind an upload (it does not see fills as initialising)."""
    if getattr(dev.info, "simulator", False):
        return upload_scratch(dev, np.zeros(size, np.int32))
    return _Ints(dev, size)


def _dummy_int(dev):
    """One int32 zero per device (the kernels' unused ``start`` argument)."""
    return dev.state.constant("tridiag.dummy_int", lambda: _zeros_int(dev, 1))


def _thomas_geometry(plan):
    """(work-group, global size, systems per work-item) of ``plan``'s Thomas kernel."""
    lanes, wg = plan.params["lanes"], plan.params["wg"]
    chains = plan.chains if plan.method != "thomas-unrolled" else 1
    nwi = -(-plan.nsys // (lanes * chains))
    wg = max(1, min(wg, nwi)) if nwi < wg else wg
    return wg, round_up(nwi, wg), lanes * chains


def _thomas_work_size(plan):
    """Elements of the global c'/d' scratch of ``plan``'s Thomas kernel (None where none is
    needed: the kernel gets x there)."""
    if plan.method == "thomas-unrolled" or plan.cp_private:
        return None
    _, gsize, per = _thomas_geometry(plan)
    return 2 * plan.n * gsize * per


def _thomas_launch(dev, plan, layout):
    """(kernel, global size, work-group, n, systems) of ``plan``'s Thomas launch."""
    wg, gsize, _ = _thomas_geometry(plan)
    prg = build_program(dev, *thomas_spec(dev, plan, layout))
    kern = prg.kernel("thomas_unrolled" if plan.method == "thomas-unrolled" else "thomas")
    return kern, gsize, wg, np.int32(plan.n), np.int32(plan.nsys)


def _run_thomas(dev, plan, layout, a, b, c, d, x, work, start, counter):
    kern, gsize, wg, n, nsys = _cached(dev, plan, ("thomas", layout),
                                       lambda: _thomas_launch(dev, plan, layout))
    launch(dev, kern, gsize, wg, a.data, b.data, c.data, d.data, x.data, work.data,
           start.data, counter.data, n, nsys)


def _transpose(dev, plan, srcs, dsts, rows, cols, tile, ty):
    """``dsts[i]`` = ``srcs[i]`` ([rows, cols]) transposed; four pairs in one launch."""
    four = len(srcs) == 4
    kern, g, l, dims = _cached(dev, plan, ("transpose", four, rows, cols, tile, ty),
                               lambda: _transpose_launch(dev, plan, four, rows, cols, tile, ty))
    launch(dev, kern, g, l, *[v.data for v in srcs], *[v.data for v in dsts], *dims)


def _transpose_launch(dev, plan, four, rows, cols, tile, ty):
    """(kernel, global size, local size, (rows, cols)) of a transpose launch of ``plan``."""
    prg = _program(dev, plan, ("transpose", tile, ty), lambda: transpose_spec(plan, tile, ty))
    kern = prg.kernel("transpose4" if four else "transpose")
    dims = (np.int32(rows), np.int32(cols))
    if tile == 0:
        return kern, (rows, cols, 4) if four else (rows, cols), None, dims
    g = (round_up(cols, tile), -(-rows // tile) * ty)
    return kern, g + (4,) if four else g, (tile, ty, 1) if four else (tile, ty), dims


def _run_flat(dev, plan, a, b, c, d, x, start, counter):
    n, nsys = plan.n, plan.nsys
    C = max(1, min(plan.params["chunk"], n))
    nc = -(-n // C)
    wg = plan.params["wg"]
    # interleave on natural-layout data: a, b, c, d, x copied into the chunked layout
    # ([row of the chunk][chunk, system]) and x back (flat.cl.mako); interleaved data is read
    # in place (adjacent work-items are adjacent systems of the same chunk there)
    chunked = flat_chunked(plan)
    total = C * nc * nsys if chunked else n * nsys
    work = temp(dev, 2 * total, x.dtype)
    mat = temp(dev, nsys * nc * 4, x.dtype)
    aff = temp(dev, nsys * nc * 2, x.dtype)
    carry = temp(dev, nsys * nc, x.dtype)
    status = _zeros_int(dev, nsys)
    tiles = []
    if chunked:
        tile, tile_y = copy_tile(dev)
        tiles = [temp(dev, total, x.dtype) for _ in range(5)]
    prg = _program(dev, plan, ("flat",), lambda: flat_spec(dev, plan))
    k = prg.kernel
    i32 = np.int32
    if chunked:
        gt = (round_up(nc * nsys, tile), -(-C // tile) * tile_y)
        for src, dst in zip((a, b, c, d), tiles):
            launch(dev, k("flat_gather"), gt, (tile, tile_y), src.data, dst.data, i32(n),
                   i32(nsys), i32(C), i32(nc))
        a, b, c, d, xc = tiles
    else:
        xc = x
    base = (a.data, b.data, c.data, d.data, start.data, np.int32(n), np.int32(nsys),
            np.int32(C), np.int32(nc))
    gch = round_up(nsys * nc, wg)
    gsys = round_up(nsys, min(wg, 64))
    lsys = min(wg, 64)
    launch(dev, k("flat_mat"), gch, wg, *base, mat.data)
    launch(dev, k("flat_scan_mat"), gsys, lsys, mat.data, carry.data, i32(nsys), i32(nc))
    launch(dev, k("flat_fwd1"), gch, wg, *base, carry.data, work.data, aff.data, status.data)
    launch(dev, k("flat_scan_fwd"), gsys, lsys, aff.data, carry.data, status.data, counter.data,
           i32(nsys), i32(nc))
    launch(dev, k("flat_fwd2"), gch, wg, *base, carry.data, work.data, aff.data, xc.data)
    launch(dev, k("flat_scan_bwd"), gsys, lsys, aff.data, carry.data, i32(nsys), i32(nc))
    launch(dev, k("flat_bwd"), gch, wg, *base, carry.data, work.data, status.data, xc.data)
    if chunked:
        launch(dev, k("flat_scatter"), gt, (tile, tile_y), xc.data, x.data, i32(n), i32(nsys),
               i32(C), i32(nc))
    return [work, mat, aff, carry, status] + tiles


#: zero-pivot counters per slab (:func:`new_counter`)
COUNTER_SLAB = 256


class _CounterSlab:
    """``COUNTER_SLAB`` int32 zeros, one per ``mem_base_addr_align`` bytes (a sub-buffer's
    origin must be aligned so), in a buffer made initialised (copied from the host when it is
    created: no command on any queue, so every queue sees the zeros)."""

    def __init__(self, dev):
        import pyopencl as cl
        try:
            align = max(4, int(dev.cl_device.mem_base_addr_align) // 8)
        except (AttributeError, TypeError):   # pragma: no cover - a stand-in device
            align = 128
        self.stride = align
        zeros = np.zeros(COUNTER_SLAB * align // 4, np.int32)
        self.buffer = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE
                                | cl.mem_flags.COPY_HOST_PTR, hostbuf=zeros)
        self.next = 0


class _Counter:
    """One zero-pivot counter: a slot of a slab (``data``, a sub-buffer); ``get()`` reads it
    back (after the queue's earlier work, as an Array's would)."""

    __slots__ = ("data", "queue", "size", "_slab")

    def __init__(self, slab, i, queue):
        self._slab = slab.buffer          # the slab stays alive while a slot of it is read
        self.data = slab.buffer.get_sub_region(i * slab.stride, 4)
        self.queue, self.size = queue, 1

    get = _Ints.get


def new_counter(dev):
    """A fresh zeroed int32 counter for one solve, without a command on the queue: the slot
    after the last of a slab of zeros made once per ``COUNTER_SLAB`` calls (~1 µs a call; a
    fill per call cost an enqueue, 6-20 µs on pocl, more on an idle GPU queue). On a
    simulator an upload, as before (Oclgrind checks what the kernels read)."""
    if dev.info.simulator:
        return _zeros_int(dev, 1)
    holder = dev.state.constant("tridiag.counter_slabs", lambda: [None])
    with dev.state.lock:
        slab = holder[0]
        if slab is None or slab.next >= COUNTER_SLAB:
            slab = holder[0] = _CounterSlab(dev)
        i = slab.next
        slab.next = i + 1
    return _Counter(slab, i, dev.queue)


def shared_counter(dev):
    """A zero-pivot counter for solves whose count nobody reads (the TKE step: diagonally
    dominant systems): one per device, never zeroed, so no fill per call; on a simulator a
    fresh zeroed one (Oclgrind checks what the kernels read)."""
    if getattr(dev.info, "simulator", False):
        return _zeros_int(dev, 1)
    return dev.state.constant("tridiag.shared_counter", lambda: _zeros_int(dev, 1))

