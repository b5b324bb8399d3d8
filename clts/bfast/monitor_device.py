"""``bfast_monitor`` on a device cube: one call's kernels and its result (:func:`monitor`), and
the repeated calls of a pipeline made again without their checks and set-up (:func:`repeat`).

A device-array call checks its arguments, derives the time axis, the design and the Plan,
sets up its chunks and scratch and enqueues one to a few kernels: ~200 µs of host time on
pocl for one launch, where the launch itself is ~15. The same call made again (a time loop
over tiles of one shape, with the same dates and options) repeats all of that for the same
outcome. So the arguments of a call that ran are remembered (:class:`Prepared`, keyed by
every argument but the cube's values: ``call_memo.call_key``), and from a key's second call
on its launches and fills are captured (``runtime.capturing``) and kept (``runtime.replay``'s
``Recorder``, its budgets and its one-call-at-a-time rule); a later call of the same key binds
its own cube and fresh result arrays into them and enqueues them again, nothing else.

Not remembered: numpy cubes, covariates (``regressors``, ``formula``), a given ``plan`` or
``out=``, arguments that cannot be hashed, dates that are not one numpy array
(``axis.monitor_axis``' memo rule). Not recorded: simulators, calls whose capture is
incomplete (a copy between chunks, an allocation retry: ``Capture.complete``).
A change of the device profile's ``bfast`` section or of the ``max_chunk`` option makes the
next call check and plan again.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..runtime import round_up
from ..runtime.faults import with_smaller_chunks
from ..runtime.memory import reshaped
from ..runtime.replay import Recorder, run_recorded
from . import device as dv
from .call_memo import recall, remember
from .common import STATUS, rec_cusum_bound
from .result import BfastResult

#: calls of a key made before one is recorded (a recording keeps its temporaries out of the
#: pool: ever-new shapes would otherwise each take fresh memory; see ``clts.mp.replay``)
RECORD_AFTER = 1
#: the memo of remembered calls (``call_memo``) on each device
MEMO = "bfast.monitor_calls"


#: a BfastResult's fields as its constructor leaves them (``_result`` sets them at once);
#: ``break_dates`` and ``diagnostics`` are computed on first access
_FIELDS = {name: value for name, value in vars(BfastResult(None, None, None, None, None)).items()
           if name not in ("break_dates", "diagnostics")}


class Prepared(NamedTuple):
    """What a device call derives from its arguments, everything but the cube itself."""
    dev: Any
    plan: Any
    pix_shape: tuple
    N: int
    n: int
    K: int
    X: np.ndarray
    bounds_t: np.ndarray
    tpl: dict
    history: Any
    hs_index: int | None    # a given history start's date index (None: "all", "ROC", "BP")
    mon: np.ndarray
    fill: Any
    bd_src: np.ndarray
    dtype: np.dtype
    crit: float
    hfrac: float
    nodata: Any
    level_roc: float
    trend: bool
    center: float
    scale: float
    terms: Any


def _recorder(dev) -> Recorder:
    return dev.state.constant("bfast.recorder", lambda: Recorder(after=RECORD_AFTER))


def repeat(dev, key, y):
    """The call of ``key`` on cube ``y`` made again from its remembered arguments (replayed
    where a recording of it is free), or None when none are remembered (or the profile's
    ``bfast`` section changed since)."""
    prep = recall(dev, MEMO, key)
    if prep is None:
        return None
    return monitor(prep, reshaped(y, (prep.N, math.prod(prep.pix_shape))), key)


def monitor(prep: Prepared, flat, key=None):
    """``bfast_monitor``'s kernels on device cube ``flat`` ``[N, M]``: every step a kernel,
    the result's arrays device arrays, nothing read back or waited for (``clts.bfast.device``).
    Per-pixel regressors (``terms.device``): their columns and the cube with the values they
    make missing (and ``nodata``) NaN made on the device first (``pixel_device.prepare``).
    ``key``: the call's memo key (``call_memo.call_key``; None: not remembered); its
    arguments are kept, and from its second call on its launches."""
    dev, terms, tpl, nodata = prep.dev, prep.terms, prep.tpl, prep.nodata
    rkey = None
    if key is not None:
        remember(dev, MEMO, key, prep)          # a first call, or one checked anew
        # recordings by Plan too: one made under another profile section is never taken
        rkey = (key, prep.plan)
    y_in = flat
    keep = []
    xp = None
    if terms is not None and terms.device is not None:     # (never remembered: key None)
        from .pixel_device import prepare
        flat, xp, keep = prepare(dev, flat, nodata, terms, prep.dtype)
        tpl = dict(tpl, in_type=tpl["real"], has_nodata=False)
        nodata = None
    out = run_recorded(dev, _recorder(dev), rkey, {"y": flat.base_data},
                       lambda: _launches(prep, flat, tpl, nodata, xp, keep), keep)
    return _result(prep, out, y_in, keep)


def _launches(prep: Prepared, flat, tpl, nodata, xp, keep):
    """Enqueue the call's kernels; returns its device outputs by ``run_monitor``'s names."""
    dev, N, n, K, dtype = prep.dev, prep.N, prep.n, prep.K, prep.dtype
    M = flat.shape[1]
    hs = None
    if prep.hs_index is not None:
        hs = dv.fill_int(dev, round_up(M, 16) + 16, prep.hs_index)
    elif prep.history == "BP":
        hs, kk = dv.history_starts(dev, flat, n, prep.X, nodata, xp=xp)
        keep += kk
    nd = 0.0 if nodata is None else float(nodata)
    roc_bounds = (rec_cusum_bound(prep.level_roc), rec_cusum_bound(0.05)) \
        if tpl["history"] == "ROC" else None
    out, kk = with_smaller_chunks(
        lambda max_items: dv.run_monitor(dev, prep.plan, flat, N, n, K, prep.X, prep.bounds_t,
                                         tpl, dtype=dtype, crit=prep.crit, hfrac=prep.hfrac,
                                         nodata=nd, roc_bounds=roc_bounds,
                                         max_items=max_items, hs=hs, xp=xp),
        device=dev, what="bfast_monitor")
    keep += kk
    if hs is not None:
        keep.append(hs)
        out["hist_start"] = dv.first_valid_starts(dev, flat, dtype.type(nd), tpl, hs, n, N,
                                                  prep.hs_index is not None)
    if tpl["detailed"]:
        dv.coef_post(dev, out, tpl, K, N, M, prep.trend, prep.center, prep.scale)
    return out


def _result(prep: Prepared, out, flat, keep):
    """The call's ``BfastResult``: its outputs shaped like the cube without its time axis;
    ``break_dates`` and ``diagnostics`` read on first access."""
    dev, pix_shape, N, n, K = prep.dev, prep.pix_shape, prep.N, prep.n, prep.K
    mon, fill = prep.mon, prep.fill

    def shaped(a, lead=()):
        return None if a is None else reshaped(a, tuple(lead) + pix_shape)

    fields = dict(_FIELDS, breaks=shaped(out["breaks"]), magnitudes=shaped(out.get("mags")),
                  means=shaped(out["means"]), valids=shaped(out["valids"]),
                  history_start=shaped(out.get("hist_start")), status=shaped(out["status"]),
                  plan=prep.plan, monitor_dates=mon, _keep=keep)
    if prep.tpl["detailed"]:
        fields.update(mosum=shaped(out["mosum"], (N - n,)), bounds=shaped(out["bounds"], (N - n,)),
                      prediction=shaped(out["pred"], (N,)), coef=shaped(out["coef"], (K,)),
                      sigma=shaped(out["sigma"]), dates=prep.bd_src,
                      observed=reshaped(flat, (N,) + pix_shape))
    # the dataclass's fields set at once (its __init__ sets each through LazyFields'
    # __setattr__: ~10 µs of a replayed call's ~90 on pocl)
    res = BfastResult.__new__(BfastResult)
    vars(res).update(fields)
    nodata = None if prep.terms is not None and prep.terms.device is not None else prep.nodata

    def break_dates():
        b = res.breaks.get()
        return np.where(b >= 0, mon[np.clip(b, 0, None)], fill)

    def diagnostics():
        status = res.status.get()
        counts = {name: int(np.sum(status == code)) for code, name in STATUS.items() if code}
        return dict(n_history_dates=n, n_monitor_dates=N - n, n_coef=K, critval=prep.crit,
                    failed=int(np.sum(status != 0)), **counts, device=str(dev.slug),
                    nodata=nodata)
    res._set_lazy("break_dates", break_dates)
    res._set_lazy("diagnostics", diagnostics)
    return res

