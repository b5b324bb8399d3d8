"""The programs a tridiagonal plan runs: (template, parameters) as ``Device.program`` and
``clts.runtime.programs.prebuild`` take them, one place for the launches in ``api`` and for a
caller that builds them ahead (``clts.ocean``'s TKE step)."""
from __future__ import annotations


def thomas_spec(dev, plan, layout):
    """The Thomas kernel of ``plan`` (``thomas`` or ``thomas-unrolled``) in ``layout``."""
    lanes = plan.params["lanes"]
    if plan.method == "thomas-unrolled":
        return "tridiag/thomas_unrolled.cl.mako", dict(
            real=plan.real, N=plan.n, lanes=lanes, chains=1, LAYOUT=layout,
            HAS_START=plan.has_start, block=int(plan.params.get("block", 0)))
    priv = plan.cp_private
    return "tridiag/thomas.cl.mako", dict(
        real=plan.real, lanes=lanes, chains=plan.chains, LAYOUT=layout,
        HAS_START=plan.has_start, CP_PRIVATE=priv, stream=int(plan.stream),
        fixed_n=plan.n if plan.params.get("fixed_n", 0) else 0,
        block=int(plan.params.get("block", 0)),
        prefetch_items=int(plan.params.get("prefetch_items", 0)),
        CPU_PREFETCH=dev.type == "cpu" and not dev.info.simulator,
        SCRATCH_CONTIGUOUS=int(dev.type == "cpu" and not priv))


def transpose_spec(plan):
    tile = plan.params["tile"]
    return "tridiag/transpose.cl.mako", dict(real=plan.real, tile=tile,
                                             tile_y=plan.params["tile_y"] if tile else 1)


def pcr_spec(plan):
    return "tridiag/pcr.cl.mako", dict(real=plan.real, LAYOUT=plan.layout,
                                       HAS_START=plan.has_start, wg=plan.params["wg"],
                                       ROWS=plan.pcr_rows)


def flat_spec(plan):
    return "tridiag/flat.cl.mako", dict(real=plan.real, LAYOUT=plan.layout,
                                        HAS_START=plan.has_start)


def plan_specs(dev, plan) -> list:
    """Every program :func:`clts.tridiag.api.run_plan` builds for ``plan``."""
    if plan.method in ("thomas", "thomas-unrolled"):
        return [thomas_spec(dev, plan, plan.layout)]
    if plan.method == "thomas-coalesced":
        specs = [thomas_spec(dev, plan, "interleaved")]
        return specs if plan.layout == "interleaved" else specs + [transpose_spec(plan)]
    if plan.method == "pcr":
        return [pcr_spec(plan)]
    return [flat_spec(plan)]
