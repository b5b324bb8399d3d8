"""clts on a Dask cluster: one device per worker process, and a matrix profile split over it.

Each worker process opens its own OpenCL context the first time a task needs a device; OpenCL
objects never travel between processes (a :class:`clts.Device` pickles as its name and is
looked up again where it lands). Which device a worker uses:

- ``CLTS_DEVICE`` in the worker's environment (the default of the ``device`` option) (``LocalCluster(..., env={"CLTS_DEVICE": "1"})``,
  or exported before ``dask worker`` starts), else the default device there; or
- :class:`DevicePlugin`: ``client.register_plugin(DevicePlugin(["0", "1"]))`` gives the
  worker named i (LocalCluster's 0, 1, ...; ``dask worker --name i``) device
  ``devices[i % len(devices)]``: one GPU per worker (other names: by a hash of the name).
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

from .mp.parts import merge_parts, one_series, run_part
from .runtime.devices import portable

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
    return run_part(T_A, m, T_B, part, parts, **kw)


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
    A, times = one_series(T_A, "T_A", kwargs.pop("time_axis", None))
    B, _ = one_series(T_B, "T_B", None)
    from .mp.api import check_arguments        # here, not once per worker inside its task
    check_arguments(np.asarray(A), m, None if B is None else np.asarray(B), kwargs.get("k", 1),
                    kwargs.get("exclusion_zone"), kwargs.get("precision") or "double")
    kw = dict(kwargs, device=portable(device))
    # hash=False: a key of its own per call; a content-hashed key is shared by every call on
    # the same series, and the release of an earlier call's future could cancel this one's
    fa = client.scatter(A, broadcast=True, hash=False)
    fb = client.scatter(B, broadcast=True, hash=False) if B is not None else None
    futures = [client.submit(_part, fa, m, fb, i, int(parts), kw, pure=False)
               for i in range(int(parts))]
    results = client.gather(futures)
    res = merge_parts(results)
    if times is not None:
        res.times = np.asarray(times)[:res.P.shape[0]]
    if B is None:
        res.series = A
    return res

