"""The offline collector's tiny workloads beyond ``workloads.forced_calls``: the matrix-profile
functions built on the diagonal-set, distance-set and snippet kernels (scrump, prescrump, stimp,
mpdist, snippets, ostinato, aamp), and every function's device-array path, which builds kernels
of its own (results kept on the device: STL's finishing kernels, BFAST's device gathers and
breakpoint selection, the multi-variable trend tests, the stream of ``stumpi``, aamp's and
mstump's p-norm rows). Labels start with the family's name, as ``workloads.select`` expects."""
from __future__ import annotations

import numpy as np


def _on(dev, a, dt):
    from ..runtime.memory import to_device
    return to_device(dev, np.ascontiguousarray(a), dt)


def mp_calls(dev, x, dt):
    """(label, callable) of the matrix-profile functions ``forced_calls`` does not run."""
    import clts
    T = x["T"]
    prec = "double" if dt == np.float64 else "single"

    def scrump(T_B=None, **kw):
        s = clts.scrump(T[:150], 10, T_B, percentage=0.2, device=dev, **kw)
        s.update()
        return s.P_

    def stimp(**kw):
        s = clts.stimp(T[:120], 8, 12, percentage=0.3, device=dev, **kw)
        s.update()
        return s.PAN_
    Ts = [T[:90], T[50:140], T[110:]]
    calls = [
        ("scrump pre_scrump", lambda: scrump(pre_scrump=True)),
        ("scrump k=3", lambda: scrump(k=3)),
        ("scrump ab-join", lambda: scrump(T[60:])),
        ("scrump normalize=False p=1", lambda: scrump(normalize=False, p=1.0)),
        ("prescrump k=1", lambda: clts.prescrump(T, 10, device=dev)),
        ("prescrump k=3 ab-join", lambda: clts.prescrump(T[:120], 10, T[60:], k=3, device=dev)),
        ("prescrump normalize=False p=1", lambda: clts.prescrump(T, 10, normalize=False, p=1.0,
                                                                 device=dev)),
        ("stimp", stimp),
        ("stimp normalize=False", lambda: stimp(normalize=False)),
        ("mpdist", lambda: clts.mpdist(T[:100], T[100:], 10, precision=prec, device=dev)),
        ("mpdist normalize=False p=1", lambda: clts.mpdist(
            T[:100], T[100:], 10, normalize=False, p=1.0, precision=prec, device=dev)),
        ("mpdist pairwise", lambda: clts.mpdist(np.stack(Ts[:2]), np.stack(Ts[:2]), 10,
                                                pairwise=True, precision=prec, device=dev)),
        ("mpdist_vect", lambda: clts.mpdist_vect(T[:40], T, 10, precision=prec, device=dev)),
        ("snippets", lambda: clts.snippets(T, 20, 2, s=5, precision=prec, device=dev)),
        ("ostinato", lambda: clts.ostinato(Ts, 10, precision=prec, device=dev)),
        ("matrix_profile ab-join", lambda: clts.matrix_profile(
            T[:120], 10, T[60:], precision=prec, device=dev, progress=False)),
    ]
    calls += [(f"aamp p={p} k={k}", lambda p=p, k=k: clts.aamp(T, 10, p=p, k=k, precision=prec,
                                                              device=dev, progress=False))
              for p, k in ((1.0, 1), (3.0, 2))]
    return calls


def device_calls(dev, x, dt):
    """(label, callable) of the public functions on device arrays (their own kernels)."""
    import clts
    y, T, cube, tb = x["y"], x["T"], x["cube"], x["tb"]
    X = np.stack([T, T[::-1], np.sin(np.arange(T.size) / 5.0)])
    rng = np.random.default_rng(3)
    Y2 = np.sin(2 * np.pi * np.arange(96) / 12)[None, None] + rng.normal(size=(4, 2, 96))

    calls = [
        ("stl device", lambda: clts.stl(_on(dev, y, dt), 12, robust=True, outer_iter=1,
                                        device=dev, progress=False)),
        ("stl device complete", lambda: clts.stl(_on(dev, np.nan_to_num(y), dt), 12,
                                                 device=dev, progress=False)),
        ("mstl device", lambda: clts.mstl(_on(dev, np.nan_to_num(y), dt), (12, 24), lmbda=0.5,
                                          device=dev)),
        ("bfast device", lambda: clts.bfast_monitor(_on(dev, cube, dt), tb, tb[40], device=dev,
                                                    progress=False)),
        ("bfast device ROC", lambda: clts.bfast_monitor(_on(dev, cube, dt), tb, tb[40],
                                                        history="ROC", device=dev,
                                                        progress=False)),
        ("bfast device int16 nodata", lambda: clts.bfast_monitor(
            _on(dev, np.where(np.isnan(cube), -1, np.round(cube * 100)), np.int16), tb, tb[40],
            nodata=-1, dtype=dt, device=dev, progress=False)),
        ("bfast device pixel regressors", lambda: clts.bfast_monitor(
            _on(dev, cube, dt), tb, tb[40], k=1, formula="response ~ trend + harmon + z",
            regressors={"z": _on(dev, np.cos(np.arange(cube.size)).reshape(cube.shape), dt)},
            device=dev, progress=False)),
        ("bfast_breaks device", lambda: clts.bfast_breaks(
            _on(dev, cube, dt), tb, order=1, h=8, breaks=3, dtype=dt, device=dev,
            progress=False)),
        ("trend device original", lambda: clts.trend_test(_on(dev, y, dt), device=dev)),
        ("mstump device normalize=False p=1", lambda: clts.mstump(
            _on(dev, X, dt), 10, normalize=False, p=1.0, device=dev)),
        ("mstump device include", lambda: clts.mstump(_on(dev, X, dt), 10, include=[1],
                                                      device=dev)),
        ("aamp device p=1", lambda: clts.aamp(_on(dev, T, dt), 10, p=1.0, k=2, device=dev)),
    ]
    calls += [(f"trend device {v}", lambda v=v: clts.trend_test(
        _on(dev, Y2 if v in ("multivariate", "regional", "correlated_multivariate", "partial")
            else Y2[:, 0], dt), variant=v, period=12 if "seasonal" in v else None, device=dev))
        for v in ("pre_whitening", "trend_free_pre_whitening", "correlated_seasonal",
                  "multivariate", "regional", "correlated_multivariate", "partial")]
    calls += [(f"stumpi device normalize={z} p={p} k={k}",
               lambda z=z, p=p, k=k: stream_call(dev, T, 10, dt, 70, normalize=z, p=p, k=k))
              for z, p, k in ((True, 2.0, 1), (True, 2.0, 3), (False, 2.0, 1), (False, 1.0, 2))]
    return calls


def stream_call(dev, T, m, dt, block=100, **kw):
    """A device stream (stream.cl.mako): started on the device series ``T`` but its last
    ``block + 1`` points, one point appended, then a block of ``block`` (past a refresh of the
    dot products when it is over 64): ``auto_calls``' ordinary work and, on tiny inputs,
    ``device_calls``' every k-list and distance kind."""
    import clts
    s = clts.stumpi(_on(dev, T[:-block - 1], dt), m, device=dev, lazy_points=1, **kw)
    s.update(_on(dev, T[-block - 1:-block], dt))
    s.update(_on(dev, T[-block:], dt))
    return s.P_
