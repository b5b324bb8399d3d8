"""Exact distances on the device (``exact.cl.mako``): of given pairs (the winners'
re-evaluation) and of whole rows / columns for the constant and ill-conditioned windows."""
from __future__ import annotations


import numpy as np

from ..runtime.memory import scratch, upload_scratch
from ..runtime import launch, round_up
from ..runtime.launch import fixed_local
from .local_size import ITEM_LOCAL
from ..runtime.plans import profile_value
from ..runtime.programs import build_program
from . import flags
from .series import _vw


#: the values ``coop`` may take (work-items per pair of ``pair_dist_coop``; 0: ``pair_dist``)
COOPS = (0, 1, 2, 4, 8, 16, 32, 64)


def pair_coop(dev, plan=None) -> int:
    """Work-items per pair of the winners' re-evaluation: the plan's ``coop`` where it has
    one (``clts.mstump``), else the profile's ``mp.exact.coop`` (GPUs 32: a warp reads 32
    adjacent values of one window; CPUs 0: ``pair_dist``, a work-item per pair)."""
    c = getattr(plan, "coop", None)
    if c is None:
        c = profile_value(dev, "mp.exact.coop")
    if isinstance(c, bool) or c not in COOPS:
        raise ValueError(f"coop (profile key mp.exact.coop) must be one of {COOPS}, got {c!r}")
    return int(c)


def exact_spec(dev, plan, normalize):
    """(template, parameters) of the exact-distance kernels (:func:`_pair_dist`, :func:`_scan`);
    ``coop`` only where it is not 0 (the CPUs' programs keep their parameters)."""
    coop = pair_coop(dev, plan)
    return "mp/exact.cl.mako", dict(**flags.TEMPLATE, real=plan.exact_real,
                                    NORMALIZE=int(normalize), lanes=_vw(dev),
                                    **({"coop": coop} if coop else {}))


def _pair_dist(dev, plan, A, B, ia, ib, n=None, per=1):
    """Distances of the pairs (ia[p], ib[p]) of windows of A and B (inf where either is < 0):
    ``pair_dist`` (a work-item per pair: wdist at the device's lanes) or, with ``coop`` > 0,
    ``pair_dist_coop`` (wdist at lanes = coop, bit for bit; exact.cl.mako). ``ib`` a device
    array (int32; ``ia`` None: p // per, ``n`` pairs): a device array of distances in the
    exact precision, nothing read back; else host arrays in and float64 distances out."""
    from ..runtime.arrays import is_device_array
    on_device = is_device_array(ib)
    n = len(ib) if n is None else n
    if n == 0:
        return np.zeros(0) if not on_device else scratch(dev, 1, A.er)
    spec = exact_spec(dev, plan, A.normalize)
    coop = spec[1].get("coop", 0)
    prg = build_program(dev, *spec)
    if on_device:
        db = ib
        da = ib if ia is None else ia
    else:
        da = upload_scratch(dev, np.asarray(ia).astype(np.int32))
        db = upload_scratch(dev, np.asarray(ib).astype(np.int32))
    out = scratch(dev, n, A.er)
    args = (np.int32(n), np.int32(A.m), np.int32(per if on_device and ia is None else 0), da.data, db.data,
            A.Td.data, A.mu.data, A.ss.data, A.flags_on(dev).data, B.Td.data, B.mu.data,
            B.ss.data, B.flags_on(dev).data, out.data)
    if coop:
        wg = max(64, coop)
        launch(dev, prg.kernel("pair_dist_coop"), round_up(n * coop, wg), wg, *args)
    else:
        launch(dev, prg.kernel("pair_dist"), *fixed_local(dev, round_up(n, 64), ITEM_LOCAL), *args)
    if on_device:
        return out
    d = out.get().astype(np.float64)
    d[(ia < 0) | (ib < 0)] = np.inf
    return d


def _scan(dev, plan, kind, qs, X, Y, ez):
    """kind 'rows': for each q in qs (windows of X) best over Y; 'cols': for each window of Y,
    best over qs of X. ``qs``: (indices, count) device arrays (``diagonal._special``).
    Returns device arrays (lv, li, rv, ri): per query (rows) or per window of Y (cols)."""
    prg = build_program(dev, *exact_spec(dev, plan, X.normalize))
    idx, count = qs
    nout = idx.shape[0] if kind == "rows" else Y.l
    outs = [scratch(dev, max(nout, 1), t) for t in (X.er, np.int32, X.er, np.int32)]
    launch(dev, prg.kernel("scan_" + kind),
           *fixed_local(dev, round_up(max(nout, 1), 64), ITEM_LOCAL),
           count.data,
           np.int32(X.m), np.int32(Y.l), np.int32(ez), idx.data,
           X.Td.data, X.mu.data, X.ss.data, X.flags_on(dev).data,
           Y.Td.data, Y.mu.data, Y.ss.data, Y.flags_on(dev).data, *[o.data for o in outs])
    return outs


def _better(d1, i1, d2, i2):
    """Element-wise best of two candidate sets: smaller distance, then smaller index."""
    take = (i2 >= 0) & ((i1 < 0) | (d2 < d1) | ((d2 == d1) & (i2 < i1)))
    return np.where(take, d2, d1), np.where(take, i2, i1)
