"""``clts.matrix_profile``: exact matrix profile (self-join and AB-join), top-k, on one or
several OpenCL devices: the public callable and its result, input checks, and the computation
that ties the parts together (series.py, diagonal.py, topk.py, exact.py, estimate.py). See
docs/matrix-profile.md and ``plan.py``."""
from __future__ import annotations

import math
import time
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np

from ..runtime import integrations
from ..runtime.integrations import time_axis_of
from ..runtime import get_device
from ..runtime.arrays import device_input, is_device_array
from ..runtime.resident import Lazy, LazyDict
from ..runtime.outputs import deliver, out_arrays
from ..vocabulary import renamed
from . import flags
from ..runtime.programs import built, prebuild
from ..runtime.plans import plan_once
from .diagonal import _top1, diag_spec
from .exact import exact_spec
from .estimate import _model, _recording_runs, _self_pairs, record_run
from .plan import Plan, Problem, make_plan
from .join import Join
from .series import PAD_SLACK, prep_spec, stats_spec
from .topk import _topk
from . import replay
from ..runtime.capturing import capture


@dataclass
class MatrixProfileResult:
    """Result of :func:`clts.matrix_profile`.

    Attributes
    ----------
    P, I : numpy.ndarray, shape (l, k)
        Distances and indices of the k nearest neighbours of each subsequence, best first
        (inf / -1 where none); ``profile`` / ``index`` are their first columns.
    m : int
        Subsequence length.
    exclusion_zone : int or None
        The exclusion zone of a self-join (None for AB-joins).
    self_join, normalize : bool
    plan : clts.mp.Plan
        The plan that ran.
    left_P, left_I, right_P, right_I : numpy.ndarray or None
        Self-joins: the nearest neighbour before / after each subsequence.
    P_B, I_B : numpy.ndarray or None
        AB-joins with ``both=True``: T_B's profile against T_A.
    diagnostics : dict
        Devices used, seconds, counts of constant / ill-conditioned windows.
    times : numpy.ndarray or None
        The window start times of a pandas / xarray input (its time labels cut to l):
        ``profile`` and ``index`` are then pandas Series indexed by them.
    series : numpy.ndarray or None
        Self-joins: the series (for motifs and ``plot()``, which marks motifs and discords).
    name : str or None
        The name of a pandas Series or DataArray ``T_A`` (``plot()`` names the variable).

    Examples
    --------
    >>> import numpy as np, clts
    >>> T = np.cumsum(np.random.default_rng(1).standard_normal(500))
    >>> r = clts.matrix_profile(T, 32)
    >>> bool(np.array_equal(r.profile, r.P[:, 0])), int(r.left_I[0])
    (True, -1)
    """
    P: np.ndarray
    I: np.ndarray
    m: int
    exclusion_zone: int | None
    self_join: bool
    normalize: bool
    plan: Plan
    left_P: np.ndarray | None = None
    left_I: np.ndarray | None = None
    right_P: np.ndarray | None = None
    right_I: np.ndarray | None = None
    P_B: np.ndarray | None = None
    I_B: np.ndarray | None = None
    diagnostics: dict = field(default_factory=dict)
    times: np.ndarray | None = field(default=None, repr=False)
    series: np.ndarray | None = field(default=None, repr=False)
    #: the name of a pandas Series / DataArray input (plots name the variable)
    name: str | None = field(default=None, repr=False)
    #: device temporaries that queued kernels still read (device-array calls), until read
    _keep: list | None = field(default=None, repr=False, compare=False)

    def to_numpy(self):
        """A copy whose device arrays (device-array calls) are numpy arrays (waits for the
        device); ``clts.to_numpy(result)`` is the same."""
        from ..runtime.resident import result_to_numpy
        return result_to_numpy(self)

    @property
    def profile(self):
        """The nearest-neighbour distance of each window (a pandas Series indexed by the window
        start times for a labelled input)."""
        return self._labelled(self.P[:, 0], "profile")

    @property
    def index(self):
        """Each window's nearest neighbour (positions; labelled like ``profile``)."""
        return self._labelled(self.I[:, 0], "index")

    def _labelled(self, a, name):
        if self.times is None:
            return a
        import pandas as pd
        return pd.Series(a, index=pd.Index(self.times, name="start"), name=name)

    def plot(self, *, max_motifs=1, discords=1, fig=None, title=None):
        """The series with its top motifs and discords marked above the profile (self-joins);
        needs matplotlib."""
        return integrations.plot("mp", self, max_motifs=max_motifs, n_discords=discords, fig=fig, title=title)


def _series(T, name):
    if T is None:
        return None
    if is_device_array(T):
        return T
    a = np.asarray(T)
    if a.dtype.kind not in "fiub":
        raise TypeError(f"{name} must be a real-valued 1-D array, got dtype {a.dtype}")
    a = a.astype(np.float64)
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    return a


def check_arguments(T_A, m, T_B, k, exclusion_zone, precision):
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)):
        raise TypeError(f"m must be an int, got {type(m).__name__}")
    m = int(m)
    if m < 3:
        raise ValueError(f"m must be >= 3, got {m}")
    for name, t in (("T_A", T_A), ("T_B", T_B)):
        if t is not None and len(t) < m:
            raise ValueError(f"{name} has {len(t)} values, fewer than m={m}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    if exclusion_zone is not None and (not isinstance(exclusion_zone, (int, np.integer))
                                       or exclusion_zone < 0):
        raise ValueError(f"exclusion_zone must be None or an int >= 0, got {exclusion_zone!r}")
    if precision not in ("double", "mixed", "single"):
        raise ValueError(f"precision must be 'double', 'mixed' or 'single', got {precision!r}")
    return m


def _out_arrays(out, T_A, m, T_B, k, exclusion_zone, precision, both):
    """The caller's ``out=`` arrays checked against the results of this call (see
    ``clts.runtime.outputs``), before any work."""
    if out is None:
        return {}
    m = check_arguments(_series(T_A, "T_A"), m, _series(T_B, "T_B"), k, exclusion_zone,
                        precision or "double")
    lA = len(T_A) - m + 1
    f8, i8 = np.dtype(np.float64), np.dtype(np.int64)
    specs = {"P": ((lA, k), f8), "I": ((lA, k), i8)}
    if T_B is None:
        specs.update({f"{side}_{v}": ((lA,), dt) for side in ("left", "right")
                      for v, dt in (("P", f8), ("I", i8))})
    elif both:
        lB = len(T_B) - m + 1
        specs.update(P_B=((lB, k), f8), I_B=((lB, k), i8))
    return out_arrays(out, specs, {"T_A": T_A, "T_B": T_B}, "matrix_profile")


def _devices(devices):
    if devices is None:
        return [get_device(None)]
    if isinstance(devices, (list, tuple)):
        if not devices:
            raise ValueError("devices must be None, a device, or a non-empty list of devices")
        return [get_device(d) for d in devices]
    return [get_device(devices)]


def _compute(*args, **kwargs):
    """:func:`_compute_once` with device failures reported as ``DeviceError`` (an allocation
    failure in the band loop first retries with fewer bands per launch)."""
    from ..runtime.faults import with_smaller_chunks
    devs = _devices(args[7] if len(args) > 7 else kwargs.get("devices"))
    return with_smaller_chunks(lambda _: _compute_once(*args, **kwargs), device=devs[0],
                               what="matrix_profile")


def _device_series(T, name, dev, fp64):
    """A device-array argument checked (context, C order, dtype, 1-D), not copied; a slice
    starting inside its buffer as a sub-buffer of its own (a device copy where the start
    misses the device's sub-buffer alignment)."""
    from ..runtime.resident import device_rows
    dts = (np.float32, np.float64) if fp64 else (np.float32,)
    return device_rows(device_input(T, name, dev, dtypes=dts, ndim=1), 0, T.shape[0])


def _compute_once(T_A, m, T_B, k, exclusion_zone, normalize, precision, devices, both, plan,
                  overrides, show_progress, bands=None):
    T_A = _series(T_A, "T_A")
    T_B = _series(T_B, "T_B")
    devs = _devices(devices)
    on_device = is_device_array(T_A) or is_device_array(T_B)
    self_join = T_B is None
    dev = devs[0]
    if on_device:
        if len(devs) != 1:
            raise ValueError("device arrays T_A / T_B take one device (device=), not a list")
        if not (is_device_array(T_A) and (self_join or is_device_array(T_B))):
            raise TypeError("T_A and T_B must both be device arrays or both host arrays")
        T_A = _device_series(T_A, "T_A", dev, dev.fp64)
        if not self_join:
            T_B = _device_series(T_B, "T_B", dev, dev.fp64)
            if T_B.dtype != T_A.dtype:
                raise TypeError(f"device arrays T_A and T_B must have one dtype, got "
                                f"{T_A.dtype} and {T_B.dtype}")
    if precision is None:   # float64 where every device has it, else float32 throughout
        precision = "double" if all(d.fp64 for d in devs) else "single"
    m = check_arguments(T_A, m, T_B, k, exclusion_zone, precision)
    self_join = T_B is None
    for d in devs:
        if precision != "single" and not d.fp64:
            from ..errors import DeviceError
            raise DeviceError(f"device {d} lacks cl_khr_fp64 (double precision), needed by "
                              f"precision={precision!r}; use precision='single' (the default "
                              "on such devices)")
    p = plan_once(dev, "mp", make_plan, Problem(m, precision), plan=plan, **overrides)
    ez = int(math.ceil(m / 4)) if exclusion_zone is None else int(exclusion_zone)
    t0 = time.perf_counter()
    rkey = replay.call_key(dev, p, T_A, T_B, m, ez, k, both, normalize) \
        if on_device and bands is None else None
    got = replay.replayed(dev, rkey, T_A, T_B) if rkey is not None else None
    if got is not None:         # the launches of an earlier call of this shape, made again
        arrays, rec = got
        return _result(dev, m, ez, self_join, normalize, p, arrays, rec, t0)
    rkey = replay.wanted(dev, rkey)
    job = Join(devs, p, T_A, None if self_join else T_B, m, ez, k, both, normalize,
               p.band + p.tile + PAD_SLACK, show_progress and not on_device)
    tin = T_A.dtype if on_device else np.float64
    for d in devs if k == 1 else ():    # a first call builds its four programs at once
        if not built(d, *stats_spec(d, p, normalize)) or not built(d, *prep_spec(d, p, normalize,
                                                                               tin)):
            prebuild(d, [stats_spec(d, p, normalize), prep_spec(d, p, normalize, tin),
                         diag_spec(d, p, normalize, job.cols), exact_spec(d, p, normalize)])
    if bands is not None and len(devs) != 1:
        raise ValueError("a band range (part of a distributed run) takes one device")
    job.bands = bands
    job.calibrate = _compute
    # a call that may be replayed collects its launches from the sides' preparation on
    with capture() if rkey is not None else nullcontext() as cap:
        A, B = job.A, job.B
        res, keep = _topk(job) if k > 1 else _top1(job)

    def count(X, bits):     # read from the device on first access (the flags once a side)
        return Lazy(lambda: int(np.sum((X.flags & bits) > 0)))
    Bs = A if self_join else B
    diag = LazyDict(special_A=count(A, flags.SPECIAL), special_B=count(Bs, flags.SPECIAL),
                    nan_A=count(A, flags.NONFINITE), nan_B=count(Bs, flags.NONFINITE),
                    devices=[d.slug for d in devs])
    if rkey is not None and keep is not None:
        rec = replay.record(dev, rkey, cap, T_A, T_B, res,
                            {"A": A.fl} if self_join else {"A": A.fl, "B": B.fl})
        if rec is not None:
            keep.append(rec)
    if keep is None:        # k > TOPK_MAX: the blocked path's top-k lists are host arrays
        unit = float(A.scale.get()[3]) if not normalize else 1.0
        if unit != 1.0:          # plain Euclidean distances scale with the series
            for key in ("P", "left_P", "right_P", "P_B"):
                if res.get(key) is not None:
                    res[key] = res[key] * unit
        if on_device:       # ... copied to the device
            import pyopencl.array as cla
            res = {key: cla.to_device(dev.queue, np.ascontiguousarray(v))
                   for key, v in res.items()}
    elif not on_device:     # numpy in, numpy out (the one read of the call)
        res = {key: v.get().astype(np.float64 if v.dtype.kind == "f" else np.int64)
               for key, v in res.items()}
        keep = None
    diag["seconds"] = time.perf_counter() - t0
    if not on_device:
        diag.copy()         # numpy in: the counts now (the results were read)
    return MatrixProfileResult(m=m, exclusion_zone=ez if self_join else None,
                               self_join=self_join, normalize=normalize, plan=p,
                               diagnostics=diag, _keep=keep, **res)


def _result(dev, m, ez, self_join, normalize, p, arrays, rec, t0):
    """The result of a replayed device-array call (``replay``): its arrays, and diagnostics
    counting the flags of its windows on first access, as the call's own would."""
    fl_A = arrays.pop("flags:A")
    fl_B = arrays.pop("flags:B", fl_A)

    def count(fl, bits):
        return Lazy(lambda: int(np.sum((fl.get() & bits) > 0)))
    diag = LazyDict(special_A=count(fl_A, flags.SPECIAL), special_B=count(fl_B, flags.SPECIAL),
                    nan_A=count(fl_A, flags.NONFINITE), nan_B=count(fl_B, flags.NONFINITE),
                    devices=[dev.slug], seconds=time.perf_counter() - t0)
    return MatrixProfileResult(m=m, exclusion_zone=ez if self_join else None,
                               self_join=self_join, normalize=normalize, plan=p,
                               diagnostics=diag, _keep=[rec], **arrays)


def _one_series(T, name, time_axis):
    """A 1-D series from ``T`` (numpy, pandas Series, one-column DataFrame, DataArray): its
    time axis ``time_axis``; any other axis must have length 1. Returns (series, times)."""
    if T is None:
        return None, None
    if is_device_array(T):
        return T, None
    lab = time_axis_of(T, time_axis, -1, name)
    a = lab.to_last(T)
    if a.ndim > 1:
        if int(np.prod(a.shape[:-1])) != 1:
            shape = np.shape(T)
            long = [j for j, s in enumerate(shape) if s > 1]
            hint = (f"; its values run along axis {long[0]}: give time_axis={long[0]}"
                    if len(long) == 1 and long[0] != lab.axis else "")
            raise ValueError(f"{name} must hold one series: its axes other than time_axis "
                             f"(axis {lab.axis}) must have length 1, got shape {shape}{hint}")
        a = a.reshape(-1)
    return a, lab.times()


class _MatrixProfile:
    """clts.matrix_profile(T_A, m, T_B=None, *, k=1, exclusion_zone=None, normalize=True,
    precision=None, device=None, both=False, plan=None, progress=True, time_axis=None,
    **plan_overrides)

    Exact matrix profile: the nearest neighbours of every length-``m`` subsequence.

    Self-join when ``T_B`` is None, else AB-join of every subsequence of ``T_A`` against those
    of ``T_B``. Computed along diagonals with an O(1) covariance update (STOMP / GPU-STOMP);
    the winners are re-evaluated exactly. Conventions are stumpy's.

    Parameters
    ----------
    T_A : array_like, 1-D
        The series; NaN / inf make every subsequence containing them invalid (P = inf, I = -1,
        never a neighbour). A pandas Series or 1-D DataArray gives ``profile`` / ``index``
        labelled by the window start times.
    m : int
        Subsequence length, 3 <= m <= len(T_A).
    T_B : array_like, 1-D, optional
        Second series for an AB-join.
    k : int, optional
        Neighbours per subsequence (default 1).
    exclusion_zone : int, optional
        Self-joins exclude pairs with |i - j| <= exclusion_zone (default ceil(m / 4)).
    normalize : bool, optional
        z-normalised Euclidean distance (default) or plain Euclidean.
    precision : {"double", "mixed", "single"}, optional
        float64 throughout; float32 diagonal kernel with float64 statistics and exact
        re-evaluation; float32 throughout. Default: "double" where every device has
        ``cl_khr_fp64``, else "single".
    device : device or list of devices, optional
        A list splits the diagonals so each device gets the same number of pairs
        (``devices`` is its deprecated name).
    both : bool, optional
        AB-joins: also return T_B's profile against T_A (``P_B``, ``I_B``).
    plan : clts.mp.Plan, optional
        A plan to run as is.
    progress : bool, optional
        Progress bar (with the predicted time) when ``tqdm`` is installed.
    time_axis : int, optional
        The time axis of an input with extra length-1 axes (default the last); a column
        ``[n, 1]`` read with the default is a ValueError naming ``time_axis=0``.
    out : dict of numpy arrays, or MatrixProfileResult, optional
        Arrays that receive the results: a dict with any of ``P``, ``I`` (``[l, k]``
        float64 / int64), ``left_P``, ``left_I``, ``right_P``, ``right_I`` (self-joins, k = 1:
        ``[l]``), ``P_B``, ``I_B`` (``both=True``), any layout, or the result of an earlier
        call of the same sizes. The same bits as without ``out=``; checked before any work
        (shape, dtype, writeable, no overlap with ``T_A`` / ``T_B`` or with one another).
    **plan_overrides
        Plan fields forced by keyword: ``lanes``, ``groups``, ``tile``, ``segment``,
        ``segment_per_m``, ``wg``, ``merge``, ``store``, ``topk_store`` (``"private"``,
        ``"local"``, ``"window"``), ``block_rows``, ``unroll``, ``subgroup`` (see
        :mod:`clts.mp.plan`).

    Returns
    -------
    MatrixProfileResult

    Raises
    ------
    ValueError
        ``m`` out of range, a series that is not 1-D, bad ``k`` / ``exclusion_zone`` /
        ``precision`` / plan fields.
    clts.DeviceError
        ``precision="double"`` or ``"mixed"`` on a device without ``cl_khr_fp64``.

    Notes
    -----
    ``clts.matrix_profile.estimate(n, m, device)`` predicts the run time of a k = 1 self-join.

    References
    ----------
    .. [1] Y. Zhu, Z. Zimmerman, N. Shakibay Senobari, C.-C. M. Yeh, G. Funning, A. Mueen,
       P. Brisk, E. Keogh, "Exploiting a novel algorithm and GPUs to break the ten quadrillion
       pairwise comparisons barrier for time series motifs and joins", Knowledge and
       Information Systems, 2017.

    Examples
    --------
    >>> import numpy as np, clts
    >>> T = np.cumsum(np.random.default_rng(0).standard_normal(2000))
    >>> r = clts.matrix_profile(T, 64)
    >>> r.P.shape, r.I.shape                       # [l, k], l = n - m + 1
    ((1937, 1), (1937, 1))
    >>> i = 100; j = int(r.I[i, 0])                # the nearest neighbour of subsequence 100
    >>> z = lambda x: (x - x.mean()) / x.std()
    >>> bool(np.isclose(r.P[i, 0], np.linalg.norm(z(T[i:i + 64]) - z(T[j:j + 64]))))
    True
    >>> r3 = clts.matrix_profile(T, 64, k=3)       # three nearest neighbours, best first
    >>> bool(np.all(np.diff(r3.P, axis=1) >= 0))
    True
    """
    @renamed("matrix_profile", devices="device")
    def __call__(self, T_A, m, T_B=None, *, k=1, exclusion_zone=None, normalize=True,
                 precision=None, device=None, both=False, plan=None, progress=True,
                 time_axis=None, out=None, **plan_overrides):
        return self.compute(T_A, m, T_B, k=k, exclusion_zone=exclusion_zone,
                            normalize=normalize, precision=precision, device=device, both=both,
                            plan=plan, progress=progress, time_axis=time_axis, out=out,
                            **plan_overrides)

    def compute(self, T_A, m, T_B=None, *, k=1, exclusion_zone=None, normalize=True,
                precision=None, device=None, both=False, plan=None, progress=True,
                time_axis=None, out=None, bands=None, **plan_overrides):
        """The call with ``bands=(part, parts)``: only that part of the diagonals, no run
        recorded (the internal interface of :func:`clts.mp.parts.run_part`)."""
        devices = device
        name = getattr(T_A, "name", None)
        T_A, times = _one_series(T_A, "T_A", time_axis)
        T_B, _ = _one_series(T_B, "T_B", time_axis)
        if out is not None and (is_device_array(T_A) or is_device_array(T_B)):
            raise TypeError("out= takes numpy arrays: a call on device arrays returns new "
                            "device arrays")
        given = _out_arrays(out, T_A, m, T_B, k, exclusion_zone, precision, both)
        res = _compute(T_A, m, T_B, k, exclusion_zone, bool(normalize), precision, devices,
                       bool(both), plan, plan_overrides, progress, bands)
        if times is not None:
            res.times = np.asarray(times)[:res.P.shape[0]]
        if T_B is None:
            res.series = T_A if is_device_array(T_A) else np.asarray(T_A)
        res.name = None if name is None else str(name)
        if bands is not None:
            return res
        for key, a in given.items():        # the out= arrays: the results copied in
            setattr(res, key, deliver(a, getattr(res, key)))
        if (T_B is None and k == 1 and normalize and plan is None and not plan_overrides
                and not is_device_array(T_A)
                and len(res.diagnostics.get("devices", ())) == 1 and _recording_runs()):
            # opted in: a k = 1 self-join with the default plan on one device is one more
            # point of the run-time law that ``estimate`` uses (see record_run)
            record_run(_devices(devices)[0], res.plan, _self_pairs(len(T_A), res.m,
                                                                   res.exclusion_zone),
                       res.diagnostics["seconds"], (len(T_A) - res.m + 1) * res.m)
        return res

    def estimate(self, n, m, device=None, *, n_B=None, precision="double", recalibrate=False):
        """Predicted seconds of a k = 1 matrix profile on ``device``.

        From the n^2 law of Zhu et al. plus a window-length term, through the fastest measured
        run of each size: a one-time calibration (a ladder of sizes from 2^14 until two are in
        the n^2 regime, and two runs at m = 2048; minimum of repeats; on a CPU device the
        idle-machine seconds; cached in the user cache directory), refined, with
        ``CLTS_MP_RECORD_RUNS=1``, by the k = 1 self-joins this device has run since
        (``docs/matrix-profile.md``, "Run-time estimate").

        Parameters
        ----------
        n : int
            Length of the series (of ``T_A`` for an AB-join).
        m : int
            Subsequence length.
        device : int, str or Device, optional
            The default device if None.
        n_B : int, optional
            Length of ``T_B``: an AB-join.
        precision : {"double", "mixed", "single"}, optional
        recalibrate : bool, optional
            Measure the calibration again.

        Returns
        -------
        float
            Seconds on an otherwise idle device.
        """
        dev = get_device(device)
        pred = _model(dev, precision, recalibrate, _compute)
        l = n - m + 1
        if n_B is None:
            pairs, lm = _self_pairs(n, m, math.ceil(m / 4)), l * m
        else:
            pairs, lm = l * (n_B - m + 1), (l + n_B - m + 1) * m / 2
        return pred(pairs, lm)

    def __repr__(self):
        return "<clts.matrix_profile>"


matrix_profile = _MatrixProfile()
