"""``clts.ocean.superbee_fluxes`` and ``clts.ocean.tke``: the Superbee advection fluxes and the
turbulent kinetic energy step of the Veros ocean model, on any OpenCL device.

Both take numpy arrays (any layout and byte order; results come back as fresh C-ordered numpy
arrays) or ``pyopencl.array.Array`` device arrays (C-contiguous; results stay on the device,
nothing is waited for). docs/ocean.md has the semantics step by step. A numpy grid too large
for the device runs in slabs of x rows with halos, bit-identical to a whole run (slabs.py).
"""
from __future__ import annotations

import functools
import math
import numbers
from contextlib import contextmanager

import numpy as np

from ..errors import DeviceError
from ..runtime import faults

from ..runtime import get_device
from ..runtime.arrays import c_array, float_array, float_dtype_of, is_device_array, values_of
from ..runtime.launch import device_int32, pyopencl_kernels
from ..runtime.memory import c_contiguous, keep_on_simulator, pooled_empty, scratch, upload_scratch
from ..runtime.replay import Recorder, Same, run_recorded
from ..runtime.staging import download
from ..tridiag.api import replace_nsys, scratch_factor
from .inputs import NAMES
from .launches import _cached_tke_plan, _solver_plan, run_superbee, run_tke
from .plan import Problem, SuperbeePlan, TkePlan, make_superbee_plan
from . import slabs
from .reference import CONSTANTS
from ..vocabulary import renamed

__all__ = ["superbee_fluxes", "tke"]


class _Staging:
    """Device views of one call's arrays and its numpy outputs (see plan ``transfer``)."""

    def __init__(self, dev, dtype, transfer):
        self.dev, self.dtype, self.transfer = dev, np.dtype(dtype), transfer
        if dev.info.simulator:
            self.transfer = "copy"
        self.keep = []          # host arrays / temporaries the queued kernels use
        self.downloads = []     # (device array or buffer, numpy array)
        self._ring = None       # the pinned ring the call's transfers share (GPUs)

    def ring(self):
        """The call's pinned ring (``runtime.staging``): its uploads and downloads reuse one
        pinned buffer instead of one each."""
        if self._ring is None:
            from ..runtime.staging import PinnedRing
            self._ring = PinnedRing(self.dev)
        return self._ring

    def _wrap(self, host, flags):
        import pyopencl as cl
        import pyopencl.array as cla
        if self.transfer == "host_ptr":
            buf = cl.Buffer(self.dev.context, flags | cl.mem_flags.USE_HOST_PTR, hostbuf=host)
            self.keep.append(host)
            return cla.Array(self.dev.queue, host.shape, host.dtype, data=buf)
        return upload_scratch(self.dev, host, self.ring())

    def upload_all(self, host: dict) -> dict:
        """The numpy arrays of ``host`` (name -> C-contiguous array) on the device: one stream
        of pinned pieces through the call's ring where the device stages pinned
        (``staging.upload_many``: no drain between fields), else each as before (``kbot``
        copied, the float fields wrapped in place where the plan says so)."""
        import pyopencl as cl

        from ..runtime import staging
        if self.transfer == "host_ptr" or not staging.pinned(self.dev):
            return {n: (upload_scratch(self.dev, a, self.ring()) if n == "kbot"
                        else self._wrap(a, cl.mem_flags.READ_ONLY)) for n, a in host.items()}
        out = {n: scratch(self.dev, a.shape, a.dtype.newbyteorder("=")) for n, a in host.items()}
        staging.upload_many(self.dev, self.dev.queue, [(out[n], a) for n, a in host.items()],
                            self.ring())
        return out

    def floats(self, x, name, shape):
        """``x`` (numpy or device) as a C-contiguous device array of the call's dtype."""
        if is_device_array(x):
            if (x.dtype == self.dtype and not x.offset and x.shape == shape
                    and x.context == self.dev.context and c_contiguous(x)):
                return x                # a model's own arrays, as they are: nothing to check
            _check_shape(name, x.shape, shape)
            self._check_device(x, name)
            if x.dtype.kind != "f" and x.dtype.kind not in "biu":
                raise TypeError(f"{name} must hold real numbers, got dtype {x.dtype}")
            if x.dtype != self.dtype or x.offset:
                if x.dtype != self.dtype:
                    with pyopencl_kernels():        # pyopencl's shared astype kernel
                        x = x.astype(self.dtype)
                else:
                    x = x.copy()
                self.keep.append(x)
            return x
        import pyopencl as cl
        return self._wrap(_host_floats(x, name, shape, self.dtype), cl.mem_flags.READ_ONLY)

    def ints(self, x, name, shape):
        """An integer array ``x`` as an int32 device array."""
        if is_device_array(x):
            _check_shape(name, x.shape, shape)
            self._check_device(x, name)
            if x.dtype.kind not in "iu":
                raise TypeError(f"{name} must be an integer array, not {x.dtype}")
            if x.dtype != np.int32:             # clipped as numpy's (not wrapped)
                x = device_int32(x, np.iinfo(np.int32).min, np.iinfo(np.int32).max)
                self.keep.append(x)
            elif x.offset:
                with pyopencl_kernels():        # pyopencl's shared astype kernel
                    x = x.astype(np.int32)
                self.keep.append(x)
            return x
        return upload_scratch(self.dev, _host_ints(x, name, shape), self.ring())

    def _check_device(self, x, name):
        if not c_contiguous(x):
            raise ValueError(f"device array {name} must be C-contiguous")
        if x.context != self.dev.context:
            raise ValueError(f"device array {name} lives in another OpenCL context than device "
                             f"{self.dev}; pass device= the device that holds it")

    def output(self, shape, on_device: bool, dtype=None, host=None):
        """A C-ordered result: a device array, or a numpy array the kernels fill (``host``, a
        caller's ``out=`` array, or a fresh one)."""
        import pyopencl as cl
        dtype = np.dtype(dtype or self.dtype)
        if on_device:
            return scratch(self.dev, shape, dtype)
        if host is None:
            host = _aligned_empty(shape, dtype)
        mapped = self.transfer == "host_ptr" and host.ctypes.data % _ALIGN == 0
        if mapped:
            dev_arr = self._wrap(host, cl.mem_flags.READ_WRITE)
        else:
            dev_arr = scratch(self.dev, shape, dtype)
        self.downloads.append((dev_arr, host, mapped))
        return dev_arr

    def finish(self):
        """Bring the numpy outputs home (blocking); returns them in creation order."""
        import pyopencl as cl
        out = []
        for dev_arr, host, mapped in self.downloads:
            if mapped:
                m, ev = cl.enqueue_map_buffer(self.dev.queue, dev_arr.data, cl.map_flags.READ,
                                              0, host.shape, host.dtype)
                ev.wait()
                m.base.release(self.dev.queue)
            else:
                download(self.dev, dev_arr, host, ring=self.ring())
            out.append(host)
        self.dev.queue.finish()
        if self._ring is not None:
            self._ring.close()
        return out


def _host_floats(x, name, shape, dtype):
    """numpy ``x`` checked (real, of ``shape``) as a C-contiguous array of ``dtype``."""
    a = values_of(x)
    float_dtype_of(a, name)          # a TypeError naming the argument for non-real data
    _check_shape(name, a.shape, shape)
    return float_array(a, name, dtype=dtype)


def _host_ints(x, name, shape):
    """numpy integer ``x`` checked (of ``shape``) as a C-contiguous int32 array."""
    a = values_of(x)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer array, not dtype {a.dtype}")
    _check_shape(name, a.shape, shape)
    return c_array(np.clip(a, np.iinfo(np.int32).min, np.iinfo(np.int32).max).astype(np.int32))


#: byte alignment of numpy results the kernels write in place (whole-vector stores)
_ALIGN = 64


def _aligned_empty(shape, dtype, align: int = _ALIGN):
    """A fresh C-ordered array whose data start on an ``align``-byte boundary (whole-vector
    and non-temporal stores of a host_ptr buffer need it; numpy aligns to 16 bytes)."""
    pooled = pooled_empty(shape, dtype)   # page-aligned, from the pool of dropped results
    if pooled is not None:
        return pooled
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(n + align, np.uint8)
    off = (-raw.ctypes.data) % align
    return raw[off:off + n].view(dtype).reshape(shape)


def _outputs(out, shapes, dtype, inputs, what):
    """The caller's ``out=`` arrays checked against the result ``shapes`` and ``dtype`` (None:
    fresh ones are allocated). They must not overlap an input: the kernels read the inputs
    while they write the results."""
    if out is None:
        return [None] * len(shapes)
    if not isinstance(out, (tuple, list)) or len(out) != len(shapes):
        raise TypeError(f"{what}: out must be a tuple of {len(shapes)} numpy arrays (the "
                        "results of an earlier call will do)")
    for i, (o, shape) in enumerate(zip(out, shapes)):
        if not isinstance(o, np.ndarray):
            raise TypeError(f"{what}: out[{i}] must be a numpy array, not {type(o).__name__}")
        if o.shape != tuple(shape) or o.dtype != dtype or not o.flags.c_contiguous or \
                not o.flags.writeable:
            why = [w for w, bad in (("not C-contiguous", not o.flags.c_contiguous),
                                    ("read-only", not o.flags.writeable)) if bad]
            raise ValueError(f"{what}: out[{i}] must be a writeable C-contiguous {dtype} array "
                             f"of shape {tuple(shape)}, got {o.dtype} {o.shape}"
                             + (f" ({', '.join(why)})" if why else ""))
        for name, x in inputs.items():
            if isinstance(x, np.ndarray) and np.shares_memory(o, x):
                raise ValueError(f"{what}: out[{i}] overlaps input {name}; pass other arrays "
                                 "(two sets of results, used in turn, for a time loop)")
        for j in range(i):
            if np.shares_memory(o, out[j]):
                raise ValueError(f"{what}: out[{i}] overlaps out[{j}]; each result needs its "
                                 "own array")
    return list(out)


def _check_shape(name, got, want):
    got = tuple(got)
    if got != tuple(want):
        raise ValueError(f"{name} must have shape {tuple(want)}, got {got}")


def _grid_of(name, x, ndim):
    shape = tuple(x.shape) if is_device_array(x) else np.shape(values_of(x))
    if len(shape) != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {shape}")
    return shape


def _real_scalar(name, value):
    if type(value) is float and math.isfinite(value):      # the common case, without the ABC
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, not {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def _dtype_of(name, x):
    if is_device_array(x):
        if x.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold real numbers, got dtype {x.dtype}")
        return np.dtype(np.float32) if x.dtype == np.float32 else np.dtype(np.float64)
    return float_dtype_of(values_of(x), name)


def _device_kind(dev, dtype, main, name):
    dev.require_dtype(dtype)
    return is_device_array(main)


# -- Superbee ----------------------------------------------------------------------------------

@renamed()
def superbee_fluxes(q, u, v, w, maskW, dxt, dyt, dzw, cost, cosu, dt, *, device=None,
                    version: str = "auto", plan: SuperbeePlan | None = None, out=None,
                    **plan_overrides):
    """Superbee advection fluxes of tracer ``q`` on the W grid, as in Veros.

    Parameters
    ----------
    q, u, v, w, maskW : [nx, ny, nz] arrays (tracer, velocities, wet mask); x, y have two ghost
        cells on each side, z none.
    dxt, dyt, dzw : grid spacings (lengths nx, ny, nz); cost, cosu : cosines of latitude at
        T and U points (length ny); dt : the tracer time step.
    version : ``"auto"`` (the profile's ``ocean.superbee.version``), ``"fused"`` (one
        work-item per cell) or ``"tiled"`` (overlapped 3-D tiles in local memory).
    plan : a :class:`~clts.ocean.plan.SuperbeePlan` to run as is.
    **plan_overrides : ``lanes``, ``wg`` (fused: cells per work-item, work-group size),
        ``tile`` (fused: velocities with time levels staged in local memory; only TKE's stored
        advection has such velocities), ``tile_z``, ``tile_y``, ``tile_x`` (tiled),
        ``transfer`` (``"copy"`` | ``"host_ptr"``).
    out : tuple of 3 numpy arrays, optional
        Where to write the fluxes (numpy calls; not overlapping an input): the results of an
        earlier call will do, without the page faults of fresh arrays.

    Returns
    -------
    ``(flux_east, flux_north, flux_top)``, each [nx, ny, nz], float32 for float32 ``q`` and
    float64 otherwise; numpy arrays for a numpy ``q``, device arrays for a device ``q``.
    flux_east is set for x in 1 .. nx-3 and y in 2 .. ny-3, flux_north for x in 2 .. nx-3 and
    y in 1 .. ny-3, flux_top for x, y in 2 .. n-3 and z in 0 .. nz-2; zero elsewhere.

    Examples
    --------
    >>> import numpy as np, clts
    >>> rng = np.random.default_rng(0)
    >>> q, u, v, w = (rng.standard_normal((8, 9, 5)) for _ in range(4))
    >>> ones = np.ones
    >>> fe, fn, ft = clts.ocean.superbee_fluxes(q, u, v, w, ones((8, 9, 5)), ones(8), ones(9),
    ...                                         ones(5), ones(9), ones(9), 0.1)
    >>> fe.shape, float(abs(ft[:, :, -1]).max()), float(abs(fn[:, 0]).max())
    ((8, 9, 5), 0.0, 0.0)
    """
    dev = get_device(device)
    shape = _grid_of("q", q, 3)
    nx, ny, nz = shape
    if min(shape) < 1:
        raise ValueError(f"q must not be empty, got shape {shape}")
    dtype = _dtype_of("q", q)
    on_device = _device_kind(dev, dtype, q, "q")
    dt = _real_scalar("dt", dt)
    if plan is None:
        plan = make_superbee_plan(dev, Problem(dtype.itemsize), version=version,
                                  **plan_overrides)
    elif plan_overrides or version != "auto":
        raise TypeError("give either plan= or version=/parameters, not both")
    elif not isinstance(plan, SuperbeePlan):
        raise TypeError(f"plan must be a clts.ocean.SuperbeePlan, got {type(plan).__name__}")
    else:
        plan.validate(dev, dtype.itemsize)
    given = {"q": q, "u": u, "v": v, "w": w, "maskW": maskW, "dxt": dxt, "dyt": dyt,
             "dzw": dzw, "cost": cost, "cosu": cosu}
    want = dict.fromkeys(("q", "u", "v", "w", "maskW"), shape)
    want.update({"dxt": (nx,), "dyt": (ny,), "dzw": (nz,), "cost": (ny,), "cosu": (ny,)})
    if out is not None and (on_device or any(is_device_array(x) for x in given.values())):
        raise TypeError("superbee_fluxes: out= takes numpy arrays for a numpy call; device "
                        "results are fresh device arrays")
    outs_given = _outputs(out, (shape,) * 3, dtype, given, "superbee_fluxes")
    if on_device or any(is_device_array(x) for x in given.values()):
        _check_cells(nx * ny * nz)
        st = _Staging(dev, dtype, plan.transfer)
        with _allocation_errors(dev, "superbee_fluxes", 8 * nx * ny * nz * dtype.itemsize):
            arrs = [st.floats(given[n], n, want[n]) for n in given]
            outs = [st.output(shape, on_device) for _ in range(3)]
            run_superbee(dev, plan, dtype, arrs, outs, shape, dt)
            if on_device:
                keep_on_simulator(dev, st.keep)
                return tuple(outs)
            return tuple(st.finish())
    # numpy in and out: the whole grid at once, or in slabs of x rows when it does not fit
    host = {n: _host_floats(x, n, want[n], dtype) for n, x in given.items()}

    def whole():
        st = _Staging(dev, dtype, plan.transfer)
        arrs = list(st.upload_all(host).values())
        run_superbee(dev, plan, dtype, arrs, [st.output(shape, False, host=o)
                                              for o in outs_given], shape, dt)
        return tuple(st.finish())

    def slab(d, outs, rows):
        run_superbee(dev, plan, dtype, [d[n] for n in given], outs, (rows, ny, nz), dt)
        return []

    return slabs.run_grid(dev, "superbee_fluxes", nx, inputs=host,
                          sliced=("q", "u", "v", "w", "maskW", "dxt"),
                          outputs=[o if o is not None else _aligned_empty(shape, dtype)
                                   for o in outs_given],
                          temp_row_bytes=(), whole=whole, slab=slab, row_cells=ny * nz,
                          in_place=plan.transfer == "host_ptr")


@contextmanager
def _allocation_errors(dev, what, nbytes):
    """An allocation failure on device arrays (not split into chunks) as a DeviceError."""
    try:
        yield
    except Exception as exc:
        if faults.is_allocation_failure(exc):
            raise DeviceError(f"{what}: could not allocate the {nbytes / 2**20:.1f} MiB a grid "
                              f"of this size needs on device {dev} (max allocation "
                              f"{dev.max_alloc}, global memory {dev.global_mem}); grids of "
                              f"device arrays are not split (numpy grids are)") from exc
        raise


def _check_cells(ncells):
    if ncells >= 2 ** 31:
        raise ValueError(f"grids of up to 2^31 - 1 cells are supported, got {ncells}")


# -- TKE ---------------------------------------------------------------------------------------

#: the device outputs of a TKE step, by slot name (``runtime.replay``)
_TKE_OUTPUTS = ("tke_out", "dtke_out", "corr_out")


def _tke_on_device(dev, st, plan, solver, dtype, d, dims, levels, cst):
    """A TKE step on device arrays ``d`` (checked, by name) into fresh device results. A step
    whose inputs are all used as they are (no conversion) is remembered by its grid, levels,
    constants and Plans (``runtime.replay``): from its second call on, its launches are
    captured and the next steps replay them with their own arrays and fresh results (no
    Plan look-ups, temporaries or kernel geometry made again)."""
    nx, ny, nz, T = dims
    key = None if st.keep or dev.info.simulator else (
        Same(plan), Same(solver), dims, levels["tau"], levels["taup1"], levels["taum1"],
        dtype.str, *cst.values())

    def make():
        outs = (st.output((nx, ny, nz, T), True), st.output((nx, ny, nz, T), True),
                st.output((nx, ny), True))
        keep.extend(run_tke(dev, plan, dtype, d, outs, dims, levels, cst, solver))
        return dict(zip(_TKE_OUTPUTS, outs))

    keep = []
    out = run_recorded(dev, dev.state.constant("ocean.tke_recorder", _tke_recorder), key,
                       {n: a.base_data for n, a in d.items()}, make, keep,
                       pooled=_TKE_OUTPUTS)
    keep_on_simulator(dev, st.keep + keep)
    return tuple(out[n] for n in _TKE_OUTPUTS)


def _tke_recorder():
    """TKE steps on device arrays, recorded from a grid's second step on (a one-off grid keeps
    no temporaries)."""
    return Recorder(after=1)


@functools.lru_cache(maxsize=64)
def _tke_shapes(shape4) -> dict:
    """Each TKE input's shape for a grid of ``shape4`` (nx, ny, nz, T): made once per grid (a
    model's time loop repeats it; read, never changed)."""
    nx, ny, nz, _ = shape4
    want = {n: shape4 for n in ("u", "v", "w", "tke", "dtke")}
    want.update({n: (nx, ny, nz) for n in ("maskU", "maskV", "maskW", "kappaM", "mxl", "forc")})
    want.update({"dxt": (nx,), "dxu": (nx,), "dyt": (ny,), "dyu": (ny,), "cost": (ny,),
                 "cosu": (ny,), "dzt": (nz,), "dzw": (nz,), "forc_tke_surface": (nx, ny),
                 "kbot": (nx, ny)})
    return want


@renamed()
def tke(u, v, w, maskU, maskV, maskW, dxt, dxu, dyt, dyu, dzt, dzw, cost, cosu, kbot, kappaM,
        mxl, forc, forc_tke_surface, tke, dtke, *, tau: int = 0, taup1: int = 1,
        taum1: int = 2, dt_tracer: float = CONSTANTS["dt_tracer"],
        dt_mom: float = CONSTANTS["dt_mom"], AB_eps: float = CONSTANTS["AB_eps"],
        alpha_tke: float = CONSTANTS["alpha_tke"], c_eps: float = CONSTANTS["c_eps"],
        K_h_tke: float = CONSTANTS["K_h_tke"], device=None, plan: TkePlan | None = None,
        out=None, **plan_overrides):
    """One step of the turbulent kinetic energy equation (Veros, as pyhpc-benchmarks times it).

    Parameters
    ----------
    u, v, w, tke, dtke : [nx, ny, nz, T] arrays, time levels on the last axis (T >= 3; levels
        ``tau`` (now), ``taup1`` (next), ``taum1`` (previous)).
    maskU, maskV, maskW, kappaM, mxl, forc : [nx, ny, nz]; x, y have two ghost cells per side.
    dxt, dxu : length nx; dyt, dyu, cost, cosu : length ny; dzt, dzw : length nz.
    kbot : [nx, ny] integers, the bottom level + 1 of each column (0: land).
    forc_tke_surface : [nx, ny].
    dt_tracer, dt_mom, AB_eps, alpha_tke, c_eps, K_h_tke : model constants (defaults: the
        benchmark's).
    plan / **plan_overrides : ``lanes``, ``wg``, ``advection``, ``inline_max_itemsize``, ``stream``,
        ``subgroup``, ``tile``, ``transfer`` (see clts.ocean.plan) and ``solver=dict(...)``: keywords forced on
        ``clts.solve_tridiagonal``.
    out : tuple of 3 numpy arrays, optional
        Where to write ``(tke, dtke, tke_surf_corr)`` (numpy calls): the results of an earlier
        call will do. A model's time loop that passes two sets in turn (not overlapping the
        inputs) saves the first-touch page faults of fresh results on every step.

    Returns
    -------
    ``(tke, dtke, tke_surf_corr)``: new arrays, or the ``out=`` arrays (the inputs are not
    modified); tke and dtke
    [nx, ny, nz, T] with tke[..., taup1] and dtke[..., tau] updated and every other level
    copied, tke_surf_corr [nx, ny]. float32 when ``tke`` is float32, float64 otherwise; numpy
    for a numpy ``tke``, device arrays (not waited for) for a device ``tke``.

    Examples
    --------
    The pyhpc-benchmarks inputs of problem size 2^12 (a 32 x 32 x 4 grid):

    >>> import numpy as np, clts
    >>> from clts.ocean.inputs import benchmark_inputs
    >>> from clts.ocean import reference
    >>> x = benchmark_inputs(2 ** 12)
    >>> tke, dtke, corr = clts.ocean.tke(*x.values())
    >>> tke.shape, corr.shape
    ((32, 32, 4, 3), (32, 32))
    >>> all(np.allclose(a, b, rtol=1e-10, atol=0)
    ...     for a, b in zip((tke, dtke, corr), reference.tke(*x.values())))
    True
    """
    args = dict(zip(NAMES, (u, v, w, maskU, maskV, maskW, dxt, dxu, dyt, dyu, dzt, dzw, cost,
                            cosu, kbot, kappaM, mxl, forc, forc_tke_surface, tke, dtke)))
    dev = get_device(device)
    shape4 = _grid_of("tke", args["tke"], 4)
    nx, ny, nz, T = shape4
    if nx < 5 or ny < 5 or nz < 2:
        raise ValueError(f"tke needs nx, ny >= 5 (two ghost cells on each side) and nz >= 2, "
                         f"got {(nx, ny, nz)}")
    levels = {}
    for name, lev in (("tau", tau), ("taup1", taup1), ("taum1", taum1)):
        if type(lev) is not int and (isinstance(lev, bool)
                                     or not isinstance(lev, numbers.Integral)):
            raise TypeError(f"{name} must be an int, not {type(lev).__name__}")
        if not 0 <= lev < T:
            raise ValueError(f"{name} = {lev} is not a time level of arrays with {T} levels")
        levels[name] = int(lev)
    if len(set(levels.values())) != 3:
        raise ValueError(f"tau, taup1, taum1 must be three different levels, got {levels}")
    cst = {n: _real_scalar(n, x) for n, x in (("dt_tracer", dt_tracer), ("dt_mom", dt_mom),
                                               ("AB_eps", AB_eps), ("alpha_tke", alpha_tke),
                                               ("c_eps", c_eps), ("K_h_tke", K_h_tke))}
    dtype = _dtype_of("tke", args["tke"])
    on_device = _device_kind(dev, dtype, args["tke"], "tke")
    if plan is None:
        plan = _cached_tke_plan(dev, Problem(dtype.itemsize, T), plan_overrides)
    elif plan_overrides:
        raise TypeError("give either plan= or parameters, not both")
    elif not isinstance(plan, TkePlan):
        raise TypeError(f"plan must be a clts.ocean.TkePlan, got {type(plan).__name__}")
    else:
        plan.validate(dev, dtype.itemsize, T)

    want = _tke_shapes(shape4)
    dims = (nx, ny, nz, T)
    if out is not None and (on_device or any(is_device_array(x) for x in args.values())):
        raise TypeError("tke: out= takes numpy arrays for a numpy call; device results are "
                        "fresh device arrays")
    outs_given = _outputs(out, (shape4, shape4, (nx, ny)), dtype, args, "tke")
    # every slab's solve runs the version and parameters the whole grid's would
    solver = _solver_plan(dev, nz, nx * ny, dtype, dict(plan.solver))
    if on_device or any(is_device_array(x) for x in args.values()):
        _check_cells(nx * ny * nz)
        st = _Staging(dev, dtype, plan.transfer)
        with _allocation_errors(dev, "tke", (7 * T + 16) * nx * ny * nz * dtype.itemsize):
            d = {n: st.floats(args[n], n, want[n]) for n in NAMES if n != "kbot"}
            d["kbot"] = st.ints(args["kbot"], "kbot", (nx, ny))
            if on_device:
                return _tke_on_device(dev, st, plan, solver, dtype, d, dims, levels, cst)
            outs = (st.output(shape4, False), st.output(shape4, False),
                    st.output((nx, ny), False))
            keep = run_tke(dev, plan, dtype, d, outs, dims, levels, cst, solver)
            result = tuple(st.finish())
            del keep
            return result
    # numpy in and out: the whole grid at once, or in slabs of x rows when it does not fit
    host = {n: (_host_ints(x, n, want[n]) if n == "kbot" else _host_floats(x, n, want[n], dtype))
            for n, x in args.items()}

    def whole():
        st = _Staging(dev, dtype, plan.transfer)
        d = st.upload_all(host)
        outs = tuple(st.output(sh, False, host=o) for sh, o in zip(
            (shape4, shape4, (nx, ny)), outs_given))
        keep = run_tke(dev, plan, dtype, d, outs, dims, levels, cst, solver)
        result = tuple(st.finish())
        del keep
        return result

    def slab(d, outs, rows):
        return run_tke(dev, plan, dtype, d, outs, (rows, ny, nz, T), levels, cst,
                       replace_nsys(solver, rows * ny))

    cell = ny * nz * dtype.itemsize
    temps = [cell] * 6 + [ny * 4] + [cell * f for f in scratch_factor(solver)]
    if plan.advection == "stored":
        temps += [cell] * 3
    return slabs.run_grid(
        dev, "tke", nx, inputs=host,
        sliced=[n for n in NAMES if n not in ("dyt", "dyu", "dzt", "dzw", "cost", "cosu")],
        outputs=[o if o is not None else _aligned_empty(sh, dtype) for sh, o in zip(
            (shape4, shape4, (nx, ny)), outs_given)],
        temp_row_bytes=temps, whole=whole, slab=slab, row_cells=ny * nz,
        in_place=plan.transfer == "host_ptr")
