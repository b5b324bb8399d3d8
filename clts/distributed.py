"""clts on a Dask cluster: one device per worker process, and a matrix profile split over it.

Each worker process opens its own OpenCL context the first time a task needs a device; OpenCL
objects never travel between processes (a :class:`clts.Device` pickles as its name and is
looked up again where it lands). Which device a worker uses:

- ``CLTS_DEVICE`` in the worker's environment (the default of the ``device`` option) (``LocalCluster(..., env={"CLTS_DEVICE": "1"})``,
  or exported before ``dask worker`` starts), else the default device there; or
- :class:`DevicePlugin`: ``client.register_plugin(DevicePlugin(["0", "1"]))`` gives worker i
  (in the order of their names) device ``devices[i % len(devices)]``: one GPU per worker.
  Worker resources (``dask worker --resources GPU=1``) then keep GPU tasks one per worker:
  ``client.compute(x, resources={"GPU": 1})``.

``clts.xarray`` functions on Dask-backed arrays run under a distributed client unchanged
(``device=None``: each worker's own device). :func:`matrix_profile` splits one long series'
diagonals between the workers by work (pairs, as stumpy's ``stumped`` does) and merges the
parts' (top-k) lists exactly.
"""
from __future__ import annotations

import zlib

import numpy as np

try:
    from distributed.diagnostics.plugin import WorkerPlugin as _WorkerPlugin
except ImportError:  # pragma: no cover - the plugin needs distributed; the rest imports
    _WorkerPlugin = object


class DevicePlugin(_WorkerPlugin):
    """Assigns each worker one of ``devices`` (index / name substring, as ``clts devices``
    lists them) through the worker process's ``device`` option (``clts.set_options``): worker ``i`` gets ``devices[i % len(devices)]``, where
    ``i`` is the worker's name when it is an integer (``LocalCluster`` names its workers 0, 1,
    ...; ``dask worker --name 3``), else a number derived from the name."""

    name = "clts-device"

    def __init__(self, devices):
        if isinstance(devices, (str, int)) or not devices:
            raise ValueError("devices must be a non-empty list of device specs")
        self.devices = [str(d) for d in devices]

    def device_for(self, worker_name) -> str:
        try:
            i = int(worker_name)
        except (TypeError, ValueError):
            i = zlib.crc32(str(worker_name).encode())
        return self.devices[i % len(self.devices)]

    def setup(self, worker):
        from .options import set_options
        set_options(device=self.device_for(worker.name))     # the process's, every thread


def worker_device() -> str:
    """The device a task in this process uses (its slug); for checks and logs."""
    from .runtime import get_device
    return get_device(None).slug


def _part(T_A, m, T_B, part, parts, kw):
    from .mp.api import matrix_profile as _mp
    return _mp(T_A, m, T_B, progress=False, _bands=(part, parts), **kw)


def matrix_profile(client, T_A, m, T_B=None, *, parts=None, device=None, **kwargs):
    """Exact matrix profile of ``T_A`` (self-join, or AB-join with ``T_B``; ``k`` nearest
    neighbours and the other ``kwargs`` as :func:`clts.matrix_profile`) with the diagonals
    split into ``parts`` runs of about equal work (default: one per worker), one task each on
    the client's workers (k > 16, the blocked path: runs of rows). Each part is re-evaluated
    exactly on its worker; the parts are merged by (distance, index), the rule that merges
    several devices in one process, each neighbour index once. Returns a
    ``MatrixProfileResult``."""
    if parts is None:
        parts = max(1, len(client.scheduler_info().get("workers", {})))
    if isinstance(parts, bool) or not isinstance(parts, (int, np.integer)) or parts < 1:
        raise ValueError(f"parts must be an int >= 1, got {parts!r}")
    from .mp.api import _one_series
    A, times = _one_series(T_A, "T_A", kwargs.pop("time_axis", None))
    B, _ = _one_series(T_B, "T_B", None)
    kw = dict(kwargs, device=_portable(device))
    fa = client.scatter(A, broadcast=True)
    fb = client.scatter(B, broadcast=True) if B is not None else None
    futures = [client.submit(_part, fa, m, fb, i, int(parts), kw, pure=False)
               for i in range(int(parts))]
    results = client.gather(futures)
    res = merge_parts(results)
    if times is not None:
        res.times = np.asarray(times)[:res.P.shape[0]]
    if B is None:
        res.series = A
    return res


def merge_parts(results):
    """One ``MatrixProfileResult`` from the parts of a distributed run (each over its own
    diagonals, all over the same windows): the k-lists (``P``/``I``, ``P_B``/``I_B``) merged
    by (distance, index) with each neighbour index once, the left / right neighbours by the
    same rule; a k = 1 self-join's profile is the better of left and right, as in one
    process."""
    from .mp.exact import _better
    from .mp.topk import _merge_k
    res = results[0]
    k = res.P.shape[1]
    lists = [("P", "I")] + ([("P_B", "I_B")] if res.P_B is not None else [])
    tops = [("left_P", "left_I"), ("right_P", "right_I")] if res.self_join else []
    for other in results[1:]:
        for pk, ik in lists:
            d, i = _merge_k(getattr(res, pk), getattr(res, ik), getattr(other, pk),
                            getattr(other, ik), k, unique=True)
            setattr(res, pk, d)
            setattr(res, ik, i)
        for pk, ik in tops:
            d, i = _better(getattr(res, pk), getattr(res, ik), getattr(other, pk),
                           getattr(other, ik))
            setattr(res, pk, d)
            setattr(res, ik, i)
    if res.self_join and k == 1:
        P, I = _better(res.right_P, res.right_I, res.left_P, res.left_I)
        res.P, res.I = P[:, None], I[:, None]
    res.diagnostics["parts"] = len(results)
    res.diagnostics["devices"] = sorted({d for r in results for d in r.diagnostics["devices"]})
    return res


def _portable(device):
    from .xarray import _portable as p
    return p(device)
