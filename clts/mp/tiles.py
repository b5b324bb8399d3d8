"""Rows per tile of the diagonal kernels (``mp/diag_top1.cl.mako``, ``diag_topk.cl.mako``,
``diag_topk_window.cl.mako``): the plan's tile, cut to what fits the device's local or private
memory (and the occupancy model's cut); used by the diagonal driver (``diagonal.py``)."""
from __future__ import annotations

from .plan import fit_tile, local_tile_rows, topk_window_local, topk_window_rows
from ..errors import warn_caller


#: private-memory budget of one work-item's top-k column lists (the tile is cut to fit)
TOPK_PRIVATE_BYTES = 48 << 10


#: ... and of a work-group's (pocl gives each work-group one stack: 32 MiB segfaulted it)
TOPK_PRIVATE_GROUP_BYTES = 1 << 20


def local_tile(dev, plan):
    """Rows per tile of the k = 1 kernel with store="local": ``plan.tile``, fewer where the
    work-group's column bests ((tile + band) slots of ``lanes`` values) would not fit its
    share of a compute unit's local memory (``plan.groups_per_cu``), cut to the rows that
    reach the occupancy model's MIN_FRACTION where any do (:func:`fit_tile`)."""
    per = plan.lanes * 8   # 8 bytes a slot: a packed key (double) or a float value + int index
    L = local_tile_rows(dev, plan.lanes, plan.groups, plan.wg, plan.tile, plan.groups_per_cu,
                        plan.kernel_real)
    if L < 1:
        from ..runtime import DeviceError
        raise DeviceError(f"device {dev}: store='local' needs {(plan.band + 1) * per} bytes "
                          f"of local memory per work-item (band {plan.band}, wg {plan.wg}), "
                          f"{dev.local_mem} available; use store='private' or a smaller wg")
    return L


def topk_tile(dev, plan, k):
    """(rows per tile, local) of the top-k kernel: ``plan.tile``, fewer where a tile's column
    lists ((tile + band) x k entries) would not fit the device's local memory (per work-item of
    a group; topk_store="local": its share of a compute unit's, ``plan.groups_per_cu``, and
    the occupancy model's cut, :func:`fit_tile`) or
    TOPK_PRIVATE_BYTES of private memory. Where not even one row fits in local memory,
    private memory, with a warning."""
    rs = 8 if plan.kernel_real == "double" else 4
    per = k * (rs + 4) + rs
    local = plan.topk_store == "local"
    if local and fit_tile(dev, per, plan.band, plan.wg, plan.tile, plan.groups_per_cu) < 1:
        warn_caller(f"clts.matrix_profile: k={k} lists of band {plan.band} x wg {plan.wg} do "
                    f"not fit the {dev.local_mem} bytes of local memory of {dev}; "
                    "topk_store='private' used")
        local = False
    if local:
        kernel = ("mp/diag_topk.cl.mako", "diag_topk",
                  dict(K=k, LOCAL=1, real=plan.kernel_real, lanes=plan.lanes,
                       groups=plan.groups, wg=plan.wg))
        return fit_tile(dev, per, plan.band, plan.wg, plan.tile, plan.groups_per_cu,
                        kernel), local
    budget = min(TOPK_PRIVATE_BYTES, TOPK_PRIVATE_GROUP_BYTES // max(plan.wg, 1))
    L = min(plan.tile, budget // per - plan.band)
    if L < 1:
        from ..runtime import DeviceError
        raise DeviceError(f"device {dev}: the top-k column lists of one work-item (band "
                          f"{plan.band}, k={k}) need {(plan.band + 1) * per} bytes of "
                          f"private memory, {budget} available; use a smaller band")
    return L, local


def window_tile(dev, plan):
    """(rows per tile, local) of topk_store="window": ``plan.tile``, fewer where the
    work-group's floors would not fit the device's local memory (:func:`topk_window_rows`)."""
    L = topk_window_rows(dev, plan.band, plan.wg, plan.tile, plan.kernel_real)
    if L < 1:
        from ..runtime import DeviceError
        raise DeviceError(f"device {dev}: topk_store='window' needs "
                          f"{topk_window_local(1, plan.band, plan.wg, plan.kernel_real)} bytes "
                          f"of local memory per work-group (band {plan.band}, wg {plan.wg}), "
                          f"{dev.local_mem} available; use a smaller wg")
    return L, False
