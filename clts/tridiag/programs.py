"""The programs a tridiagonal plan runs: (template, parameters) as ``Device.program`` and
``clts.runtime.programs.prebuild`` take them, one place for the launches in ``api`` and for a
caller that builds them ahead (``clts.ocean``'s TKE step)."""
from __future__ import annotations

#: the flat version's natural <-> chunked copies (interleave = 1) and the unrolled Thomas
#: kernel's transposes (transpose = 1): tile x tile blocks through local memory, work-groups of
#: tile x tile_y (tile_y shrunk to the device's work-group limit)
FLAT_TILE, FLAT_TILE_Y = 32, 8


def copy_tile(dev):
    """(tile, tile_y) of the GPU paths' local-memory copies on ``dev``."""
    return FLAT_TILE, max(1, min(FLAT_TILE_Y, dev.max_work_group // FLAT_TILE))


def unrolled_transposed(plan) -> bool:
    """Whether ``plan`` runs the unrolled Thomas kernel on a transposed copy of natural data."""
    return (plan.method == "thomas-unrolled" and plan.layout == "natural"
            and bool(plan.params.get("transpose", 0)))


def flat_chunked(plan) -> bool:
    """Whether ``plan``'s flat version copies natural data into the chunked layout."""
    return bool(int(plan.params.get("interleave", 0))) and plan.layout == "natural"


def thomas_spec(dev, plan, layout):
    """The Thomas kernel of ``plan`` (``thomas`` or ``thomas-unrolled``) in ``layout``."""
    lanes = plan.params["lanes"]
    if plan.method == "thomas-unrolled":
        return "tridiag/thomas_unrolled.cl.mako", dict(
            real=plan.real, N=plan.n, lanes=lanes, chains=1, LAYOUT=layout,
            HAS_START=plan.has_start, block=int(plan.params.get("block", 0)),
            subgroup=int(plan.params.get("subgroup", 0)))
    priv = plan.cp_private
    return "tridiag/thomas.cl.mako", dict(
        real=plan.real, lanes=lanes, chains=plan.chains, LAYOUT=layout,
        HAS_START=plan.has_start, CP_PRIVATE=priv, stream=int(plan.stream),
        fixed_n=plan.n if plan.params.get("fixed_n", 0) else 0,
        block=int(plan.params.get("block", 0)),
        prefetch_items=int(plan.params.get("prefetch_items", 0)),
        CPU_PREFETCH=dev.type == "cpu" and not dev.info.simulator,
        SCRATCH_CONTIGUOUS=int(dev.type == "cpu" and not priv))


def transpose_spec(plan, tile=None, tile_y=None):
    """The transpose of ``plan`` (its own tile, or the given one)."""
    if tile is None:
        tile, tile_y = plan.params["tile"], plan.params["tile_y"]
    return "tridiag/transpose.cl.mako", dict(real=plan.real, tile=tile,
                                             tile_y=tile_y if tile else 1)


def pcr_spec(plan):
    return "tridiag/pcr.cl.mako", dict(real=plan.real, LAYOUT=plan.layout,
                                       HAS_START=plan.has_start, wg=plan.params["wg"],
                                       ROWS=plan.pcr_rows)


def flat_spec(dev, plan):
    chunked = flat_chunked(plan)
    tile, tile_y = copy_tile(dev) if chunked else (0, 0)
    return "tridiag/flat.cl.mako", dict(
        real=plan.real, LAYOUT="chunked" if chunked else plan.layout, HAS_START=plan.has_start,
        interleave=int(plan.params.get("interleave", 0)), tile=tile, tile_y=tile_y)


def plan_specs(dev, plan) -> list:
    """Every program :func:`clts.tridiag.run.run_plan` builds for ``plan``."""
    if unrolled_transposed(plan):
        return [thomas_spec(dev, plan, "interleaved"), transpose_spec(plan, *copy_tile(dev))]
    if plan.method in ("thomas", "thomas-unrolled"):
        return [thomas_spec(dev, plan, plan.layout)]
    if plan.method == "thomas-coalesced":
        specs = [thomas_spec(dev, plan, "interleaved")]
        return specs if plan.layout == "interleaved" else specs + [transpose_spec(plan)]
    if plan.method == "pcr":
        return [pcr_spec(plan)]
    return [flat_spec(dev, plan)]
