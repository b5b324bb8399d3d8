"""``clts.solve_tridiagonal``: batched tridiagonal solves in five code versions.

Internal interface for the ocean routines (their vertical solves): ``replace_nsys`` and
``scratch_factor``."""
from __future__ import annotations

import math

import numpy as np

from ..runtime import chunk_sizes, get_device
from ..runtime.launch import device_int32
from ..runtime.faults import with_smaller_chunks
from ..runtime.arrays import is_device_array, to_numpy
from ..runtime.outputs import overlaps
from ..runtime.memory import c_contiguous, host_empty, keep_on_simulator, release_scratch, scratch
from ..runtime.pipeline import (ChunkIO, aligned_multiple, device_marker, device_wait,
                                run_pipelined)
from ..vocabulary import renamed
from .plan import Plan
from .programs import flat_chunked, unrolled_transposed
from .run import cached_plan, new_counter, run_plan

__all__ = ["solve_tridiagonal", "TridiagonalResult", "release_scratch"]


class TridiagonalResult:
    """Result of :func:`clts.solve_tridiagonal`.

    Attributes
    ----------
    x : numpy.ndarray or pyopencl.array.Array
        The solution, same shape as ``d``; a numpy array for numpy input, a device array (still
        on the device, nothing waited for) for device input. ``np.asarray(result)`` gives it as
        numpy.
    method : str
        The code version that ran.
    plan : clts.tridiag.Plan
        Every parameter it used (pass it as ``plan=`` to run it again as is).
    zero_pivots : int
        Number of systems that met a zero pivot (NaN in ``x``); read from the device on first
        access.
    backward_error, pivot_growth : numpy.ndarray of float64 (the batch shape)
        Each system's normwise backward error and the growth of its LU factors without
        pivoting (see :mod:`clts.tridiag.reliability`): one host-side formula whatever version
        ran; ``inf`` where ``x`` is not finite or a pivot is zero. Computed on first access
        from a, b, c, d and x (device arrays are downloaded for it): change none of them
        before. After an in-place solve (``out=d``) the right-hand side is gone: the backward
        error is NaN (``inf`` where ``x`` is not finite) and ``unreliable`` goes by the pivot
        growth alone.
    unreliable : int
        Systems where ``max(backward_error, eps * pivot_growth)`` exceeds ``sqrt(eps)`` or is
        not finite: no version pivots, and a tiny pivot made their answer unreliable.
    diagnostics : dict
        ``zero_pivots``, ``unreliable``, ``max_backward_error``, ``max_pivot_growth``,
        ``method``, ``systems``, ``n``.

    Examples
    --------
    >>> import numpy as np, clts
    >>> one = np.ones((2, 4))
    >>> r = clts.solve_tridiagonal(0 * one, one, 0 * one, 3 * one)   # the identity
    >>> np.asarray(r).tolist()
    [[3.0, 3.0, 3.0, 3.0], [3.0, 3.0, 3.0, 3.0]]
    >>> r.diagnostics["systems"], r.diagnostics["n"]
    (2, 4)
    """

    def __init__(self, x, plan: Plan, counter, keep=(), systems=None, batch_shape=None,
                 in_place=False):
        self.x = x
        self._in_place = in_place   # d solved over: its backward error is unknown
        self._keep = list(keep)   # temporaries of queued kernels (some drivers free early)
        self.plan = plan
        self.method = plan.method
        self._counter = counter
        self._zero = None
        self._systems = systems   # () -> a, b, c, d, x [systems, n] and start (host arrays)
        self._batch = batch_shape
        self._eta = None

    def _assess(self):
        if self._eta is None:
            from .reliability import assess
            z = np.zeros(self.plan.nsys)
            vals = self._systems() if self._systems is not None else None
            eta, growth = assess(*vals) if vals is not None else (z, z)
            if self._in_place and vals is not None:
                eta = np.where(np.isfinite(vals[4]).all(axis=1), np.nan, np.inf)
            shape = self._batch if self._batch is not None else eta.shape
            self._eta = (eta.reshape(shape), growth.reshape(shape))
        return self._eta

    @property
    def backward_error(self) -> np.ndarray:
        return self._assess()[0]

    @property
    def pivot_growth(self) -> np.ndarray:
        return self._assess()[1]

    @property
    def unreliable(self) -> int:
        from .reliability import unreliable
        return int(np.count_nonzero(unreliable(*self._assess(), self.x.dtype)))

    @property
    def zero_pivots(self) -> int:
        if self._zero is None:
            self._zero = int(self._counter.get()[0]) if self._counter is not None else 0
        return self._zero

    @property
    def diagnostics(self) -> dict:
        eta, growth = self._assess()
        return {"zero_pivots": self.zero_pivots, "unreliable": self.unreliable,
                "max_backward_error": float(np.fmax.reduce(eta, axis=None)) if eta.size else 0.0,
                "max_pivot_growth": float(growth.max()) if growth.size else 0.0,
                "method": self.method, "systems": self.plan.nsys, "n": self.plan.n}

    def __array__(self, dtype=None, copy=None):
        x = self.x if isinstance(self.x, np.ndarray) else self.x.get()
        return x if dtype is None else x.astype(dtype)

    def to_numpy(self) -> "TridiagonalResult":
        """This result with ``x`` as numpy (a device array read back; ``clts.to_numpy``)."""
        from ..runtime.resident import result_to_numpy
        return result_to_numpy(self)

    def __getstate__(self):
        """Pickled (dask, multiprocessing) with ``x`` as numpy and the diagnostics evaluated:
        the device counter, the queued kernels' buffers and the lazy inputs stay behind."""
        state = dict(self.__dict__)
        state.update(x=to_numpy(self.x), _keep=[], _counter=None, _zero=self.zero_pivots,
                     _eta=self._assess(), _systems=None)
        return state

    def __repr__(self):
        return (f"TridiagonalResult(method={self.method!r}, shape={tuple(self.x.shape)}, "
                f"zero_pivots={self.zero_pivots})")


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_REAL = {_F32: "float", _F64: "double"}     # a Plan's ``real`` of each computation dtype


def _result_dtype(arrs):
    dt = arrs[0].dtype
    if (dt == _F32 or dt == _F64) and all(v.dtype == dt for v in arrs):
        return _F32 if dt == _F32 else _F64       # one float type (a model's arrays): ~1 µs
    dt = np.result_type(*[v.dtype for v in arrs])
    if dt.kind == "c":
        raise TypeError("solve_tridiagonal takes real float32/float64 coefficients, not complex")
    if dt.kind not in "fiub":
        raise TypeError(f"solve_tridiagonal takes real numeric arrays, not dtype {dt}")
    if dt == np.float32:
        return np.dtype(np.float32)
    if dt.kind == "f" and dt.itemsize < 4:
        return np.dtype(np.float32)
    return np.dtype(np.float64)


@renamed(method="version", prefetch="prefetch_items")
def solve_tridiagonal(a, b, c, d, *, axis: int = -1, version: str = "auto", start=None,
                      device=None, out=None, plan: Plan | None = None, **plan_overrides):
    """Solve a batch of tridiagonal systems ``a[i]*x[i-1] + b[i]*x[i] + c[i]*x[i+1] = d[i]``.

    Parameters
    ----------
    a, b, c, d : numpy arrays (anything ``np.asarray`` takes) or ``pyopencl.array.Array``, all
        the same shape. ``axis`` is the system axis; every other axis is a batch axis.
        ``a[..., 0]`` and ``c[..., -1]`` (along ``axis``) are ignored; inputs are never modified.
        float32 (and float16) is solved in float32, everything else in float64. Device arrays
        must be C-contiguous with the system axis first (interleaved layout) or last (natural
        layout); their solution stays on the device.
    version : ``"auto"`` (from the device profile and the shape) or one of ``"thomas"``,
        ``"thomas-coalesced"``, ``"thomas-unrolled"``, ``"pcr"``, ``"flat"`` (``method=`` is
        its deprecated name; the result's ``method`` says which version ran).
    start : integer array over the batch (the shape without ``axis``), optional. A system
        begins at row ``start``: rows below come back 0; a start outside ``0..n-1`` is land
        (all zeros).
    device : a device, index or name substring (default device when None).
    out : array like ``d`` (numpy or device, result dtype) receiving the solution.
    plan : a :class:`~clts.tridiag.plan.Plan` to run as is (the tuner's path).
    **plan_overrides : force tunable parameters of the chosen version: ``wg``, ``lanes``,
        ``private_max``, ``block``, ``prefetch_items``, ``tile``, ``tile_y``, ``chunk``,
        ``interleave`` (flat), ``transpose`` (thomas-unrolled; see clts.tridiag.plan); with
        ``version="auto"`` also the profile's thresholds (``tridiag.auto``): ``flat_min_n``,
        ``flat_max_batch``, ``pcr_max_batch`` (alone: at every n), ``pcr_max_batch_n16``,
        ``pcr_max_batch_n128`` (the crossovers measured at n = 16 and 128; -1: not measured;
        auto interpolates between sizes), ``unrolled_below_n``,
        ``unrolled_interleaved_below_n``, ``coalesced_min_n``, ``coalesced_interleaved_min_n``,
        ``coalesced_interleaved_max_n``,
        and the size limits ``pcr_max_n`` / ``unrolled_max_n`` / ``unrolled_max_bytes``
        (``tridiag.pcr.max_n`` / ``tridiag.unrolled.max_n`` / ``tridiag.unrolled.max_bytes``:
        the n x itemsize cap of the unrolled kernel, whose registers grow with n; 0: none).

    Returns
    -------
    TridiagonalResult
        With ``x``, ``method``, ``plan``, ``zero_pivots``. A system with a zero pivot comes
        back NaN and is counted; it never fails the batch. No version pivots: they are meant
        for diagonally dominant systems.

    Raises
    ------
    ValueError
        Shapes that differ, an ``axis`` out of range, an unknown ``method``, a ``start`` of the
        wrong shape, or a forced parameter the device cannot run.
    TypeError
        A mix of numpy and device arrays, complex or non-numeric data, a threshold keyword with
        a forced ``method``, or an unknown keyword.
    clts.DeviceError
        float64 on a device without ``cl_khr_fp64``.

    References
    ----------
    .. [1] T. Grenzdörffer, "Accelerating Ocean Modelling: Addressing performance bottlenecks
       of the ocean modelling framework Veros", project report, Department of Computer
       Science, University of Copenhagen.

    Examples
    --------
    >>> import numpy as np, clts
    >>> rng = np.random.default_rng(0)
    >>> a, c, d = rng.standard_normal((3, 200, 50))      # 200 systems of 50 rows
    >>> b = 4 + np.abs(a) + np.abs(c)                     # diagonally dominant
    >>> r = clts.solve_tridiagonal(a, b, c, d)
    >>> x = r.x
    >>> lhs = b * x
    >>> lhs[:, 1:] += a[:, 1:] * x[:, :-1]
    >>> lhs[:, :-1] += c[:, :-1] * x[:, 1:]
    >>> bool(np.allclose(lhs, d)), r.zero_pivots
    (True, 0)
    >>> xt = clts.solve_tridiagonal(a.T, b.T, c.T, d.T, axis=0).x    # system axis first
    >>> bool(np.allclose(xt.T, x))
    True
    """
    method = version
    dev = get_device(device)
    arrs = [a, b, c, d]
    on_dev = [is_device_array(v) for v in arrs]
    if any(on_dev) and not all(on_dev):
        raise TypeError("a, b, c, d must be all numpy arrays or all pyopencl arrays, not a mix")
    device_input = all(on_dev)
    if not device_input:
        arrs = [np.asarray(v) for v in arrs]
    shape = tuple(arrs[1].shape)
    for name, v in zip("abcd", arrs):
        if tuple(v.shape) != shape:
            raise ValueError(f"a, b, c, d must have the same shape; {name} has {tuple(v.shape)}, "
                             f"b has {shape}")
    if len(shape) == 0:
        raise ValueError("a, b, c, d must have at least one dimension (the system axis)")
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"axis must be an int, not {type(axis).__name__}")
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"axis {axis} is out of range for arrays of {len(shape)} dimension(s)")
    axis = int(axis) % len(shape)
    if not isinstance(method, str):
        raise TypeError(f"version must be a string, not {type(method).__name__}")
    dtype = _result_dtype(arrs)
    dev.require_dtype(dtype)
    n = shape[axis]
    batch_shape = shape[:axis] + shape[axis + 1:]
    nsys = math.prod(batch_shape)

    # layout: natural = system axis last and contiguous, interleaved = system axis first
    if axis == len(shape) - 1 or len(shape) == 1:
        layout, move = "natural", False
    elif axis == 0:
        layout, move = "interleaved", False
    else:
        layout, move = "natural", True
    if device_input:
        if move:
            raise ValueError("device arrays must have the system axis first or last "
                             f"(axis 0 or {len(shape) - 1}); got axis {axis}")
        for name, v in zip("abcd", arrs):
            if not c_contiguous(v):
                raise ValueError(f"device array {name} must be C-contiguous")
            if v.dtype != dtype:
                raise TypeError(f"device arrays must all be float32 or all float64; {name} "
                                f"is {v.dtype}")
            if v.context != dev.context:
                raise ValueError(f"device array {name} lives in another OpenCL context than "
                                 f"device {dev}; pass device= the device that holds it")

    # start mask
    st = None
    if start is not None:
        if is_device_array(start):
            if not device_input:
                raise TypeError("start may be a device array only when a, b, c, d are")
            if start.dtype.kind not in "iu":
                raise TypeError(f"start must be an integer array, not {start.dtype}")
            if start.size != nsys:
                raise ValueError(f"start must have one entry per system ({nsys}), got "
                                 f"{start.size}")
            st = device_int32(start, -1, n)        # clipped to -1..n as numpy starts
        else:
            sa = np.asarray(start)
            if sa.dtype.kind not in "iu" and not (sa.dtype.kind == "b"):
                raise TypeError(f"start must be an integer array, not {sa.dtype}")
            if sa.shape != batch_shape and not (sa.ndim == 1 and sa.size == nsys):
                raise ValueError(f"start must have the batch shape {batch_shape} (the shape "
                                 f"without axis {axis}), got {sa.shape}")
            st = np.clip(sa.astype(np.int64), -1, n).astype(np.int32).reshape(-1)
            if device_input:   # non-blocking upload; the host copy is kept with the result
                import pyopencl.array as cla
                st_host = st
                st = keep_on_simulator(dev, cla.to_device(dev.queue, st_host, async_=True))
                st.host_copy = st_host

    # out
    if out is not None:
        if not (isinstance(out, np.ndarray) or is_device_array(out)):
            raise TypeError(f"out must be a numpy array (or a device array for device input), "
                            f"not {type(out).__name__}")
        if tuple(out.shape) != shape:
            raise ValueError(f"out must have shape {shape}, got {tuple(out.shape)}")
        if out.dtype.newbyteorder("=") != dtype or (device_input and out.dtype != dtype):
            raise TypeError(f"out must have dtype {dtype}, got {out.dtype}")
        if device_input != is_device_array(out):
            raise TypeError("out must be a device array for device input and a numpy array "
                            "for numpy input")
        if device_input and not c_contiguous(out):
            raise ValueError("out must be C-contiguous")
        if not device_input and not out.flags.writeable:
            raise ValueError("out is read-only (out.flags.writeable is False); give a writable "
                             "array")
        for name, v in zip("abc", arrs[:3]):       # d alone may be written over
            if overlaps(out, v):
                raise ValueError(f"out overlaps the input {name}; out may be d (solved in "
                                 "place) or an array of its own")

    if plan is None:
        plan = cached_plan(dev, n, nsys, layout, dtype, st is not None, version=method,
                           **plan_overrides)
    elif not isinstance(plan, Plan):
        raise TypeError(f"plan must be a clts.tridiag.plan.Plan, got {type(plan).__name__}")
    elif plan_overrides or method != "auto":
        raise TypeError("give either plan= or version=/parameters, not both")
    elif (plan.n, plan.nsys, plan.layout, plan.has_start, plan.real) != (
            n, nsys, layout, st is not None, _REAL[dtype]):
        raise ValueError(f"plan is for n={plan.n}, {plan.nsys} systems, {plan.layout} layout, "
                         f"start={'yes' if plan.has_start else 'no'}, {plan.real}; these data "
                         f"have n={n}, {nsys} systems, {layout} layout, start="
                         f"{'yes' if st is not None else 'no'}, {_REAL[dtype]} (a plan's "
                         "kernels are built for one precision)")
    else:
        plan.validate(dev)
    counter = new_counter(dev)

    if nsys == 0 or n == 0:
        import pyopencl.array as cla
        x = out if out is not None else (cla.empty(dev.queue, shape, dtype) if device_input
                                         else np.empty(shape, dtype))
        return TridiagonalResult(x, plan, counter)

    if device_input:                        # (their dtypes are checked above: all dtype)
        a2, b2, c2, d2 = arrs
        if a2.offset or b2.offset or c2.offset or d2.offset:
            a2, b2, c2, d2 = [v.copy() if v.offset else v for v in (a2, b2, c2, d2)]
        x = out if (out is not None and not out.offset) else scratch(dev, shape, dtype)
        keep = run_plan(dev, plan, a2, b2, c2, d2, x, st, counter)
        if out is not None and x is not out:
            out[...] = x
            x = out
        return TridiagonalResult(x, plan, counter, keep + [a2, b2, c2, d2, st],
                                 _on_host(layout, (a2, b2, c2, d2, x), st, n, nsys),
                                 batch_shape, in_place=out is not None and overlaps(out, d2))

    # numpy: normalise to [nsys, n] (natural) or [n, nsys] (interleaved), run chunk by chunk
    # (runtime.pipeline: the next chunk's transfer overlaps this one's solve). On CPU devices
    # the numpy memory is used in place (no upload, no download) where the device can;
    # elsewhere each chunk is copied through the pooled buffers of its slot.
    if move:
        arrs = [np.moveaxis(v, axis, -1) for v in arrs]
    rshape = (nsys, n) if layout == "natural" else (n, nsys)
    arrs = [v.reshape(rshape) for v in arrs]
    if (out is not None and not move and out.flags.c_contiguous and out.flags.writeable
            and out.dtype.isnative and not any(np.shares_memory(out, v) for v in arrs)):
        res = out.reshape(rshape)           # written in place
    else:
        res = host_empty(dev, rshape, dtype)
    item = dtype.itemsize
    per = [n * item] * 5 + [4] + [n * item * f for f in scratch_factor(plan)]
    mult = plan.params.get("lanes", 1) * plan.chains * plan.params.get("wg", 1)

    def run(max_items):
        # natural layout: chunks of the aligned result start aligned (written in place)
        m = aligned_multiple(dev, n * item, mult) if layout == "natural" else mult
        chunks = chunk_sizes(nsys, per, dev, multiple=m,
                             max_items=None if max_items is None else max(1, max_items))
        inputs = {}

        def cut(s0, s1):
            return (slice(s0, s1),) if layout == "natural" else (slice(None), slice(s0, s1))

        def upload(i, s0, s1, slot, queue):
            parts, events = io.put_many(
                slot, [(key, v[cut(s0, s1)], dtype) for key, v in zip("abcd", arrs)], queue)
            stc = None
            if st is not None:
                stc, ev = io.put(slot, "start", st[s0:s1], queue)
                events += ev
            inputs[slot] = (parts, stc)
            return events

        def compute(i, s0, s1, slot, wait_for):
            parts, stc = inputs.pop(slot)
            xs = io.out(slot, "x", res[cut(s0, s1)])
            p = plan if (s0, s1) == (0, nsys) else replace_nsys(plan, s1 - s0)
            device_wait(dev, wait_for)
            run_plan(dev, p, *parts, xs, stc, counter)
            return device_marker(dev)

        def download(i, s0, s1, slot, queue, wait_for):
            return io.fetch(slot, queue, wait_for)

        with ChunkIO(dev) as io:
            run_pipelined(dev, chunks, upload=upload, compute=compute, download=download,
                          desc="tridiag")
    with_smaller_chunks(run, device=dev, what="solve_tridiagonal")
    solved = res                           # [nsys, n] / [n, nsys], for the backward error
    if layout == "natural":
        res = res.reshape(shape[:axis] + shape[axis + 1:] + (n,)) if move else res.reshape(shape)
        if move:
            res = np.moveaxis(res, -1, axis)
    else:
        res = res.reshape(shape)
    if out is not None:
        if not np.shares_memory(out, res):
            out[...] = res
        res = out
    return TridiagonalResult(res, plan, counter, (), _on_host(layout, arrs, st, n, nsys, solved),
                             batch_shape, in_place=out is not None and overlaps(out, arrs[3]))


def _on_host(layout, arrs, st, n, nsys, x=None):
    """A function giving a, b, c, d, x as host arrays [systems, n] and start, for the backward
    error (device arrays downloaded then)."""
    def get():
        vals = [v.get() if is_device_array(v) else v for v in (list(arrs) + ([x] if x is not None
                                                                    else []))]
        shape = (nsys, n) if layout == "natural" else (n, nsys)
        vals = [np.asarray(v).reshape(shape) for v in vals]
        if layout == "interleaved":
            vals = [v.T for v in vals]
        s = st
        if s is not None:
            s = getattr(s, "host_copy", None) if is_device_array(s) else s
            s = s if s is not None else st.get()
        return (*vals, s)
    return get


def replace_nsys(plan: Plan, nsys: int) -> Plan:
    """``plan`` for ``nsys`` systems: the same version and parameters (a chunk of the batch, or
    the ocean's slabs, run with the plan the whole batch got). Internal interface (ocean)."""
    from dataclasses import replace
    return replace(plan, nsys=nsys)


def scratch_factor(plan: Plan):
    """Extra device buffers per system, in units of n items (for chunking). Internal interface
    (ocean sizes its slabs with it)."""
    if plan.method in ("thomas", "thomas-coalesced") and not plan.cp_private:
        f = [2]
    elif plan.method == "flat":
        f = [2] + ([1] * 5 if flat_chunked(plan) else [])
    else:
        f = []
    if (plan.layout == "natural" and plan.method == "thomas-coalesced") \
            or unrolled_transposed(plan):
        f += [1] * 5
    return f
