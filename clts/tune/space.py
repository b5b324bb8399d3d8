"""What an algorithm registers with the tuner (its ``tuning.py`` calls ``register``).

Two kinds of entries:

``Tunable``: a parameter space for one code version (work-group size, tile, unroll, lanes ...).
    ``params``   {name: [candidate values]}; the winner is written to the profile under
                 ``section`` (dotted, e.g. ``"tridiag.thomas"``), one key per parameter, so the
                 names must be keys of the generic profiles.
    ``constraint(params, device) -> bool`` rejects impossible candidates before any build
                 (work-group limits, local memory, divisibility).
    ``workloads(quick, device) -> list`` synthetic inputs (any objects) the candidates are timed
                 on (``workloads(quick)`` is accepted too); on a GPU they fill the device
                 (``tune/sizing.py``), on a CPU they do not depend on ``device``.
    ``sizes(quick, device) -> list[dict]`` optional: the workloads' dimensions, recorded in the
                 profile's provenance and printed by ``clts-tune --dry-run``.
    ``wg_params`` the parameters holding a work-group size (default ``("wg",)``): on a GPU only
                 0 and values of at least the SIMD width are candidates; ``()`` for a kernel
                 that runs one work-item per group by design.
    ``work_group(params) -> int`` optional: the work-group of a candidate whose size is a
                 product of parameters (tiles); below the SIMD width it is rejected on GPUs.
    ``occupancy(params, device) -> float | None`` optional: the occupancy model's rating of a
                 candidate on a GPU; below the resource gate's 25 % it is skipped there.
    ``run(device, params, workload) -> result`` runs the public code path with ``params`` forced.
    ``check(result, workload) -> bool`` compares with ``reference.py``; a wrong candidate is
                 never timed or chosen.

``Crossover``: a threshold between two code versions, found by sweeping a data parameter.
    ``key``      dotted profile key receiving the threshold (e.g. ``"tridiag.auto.flat_max_batch"``)
    ``versions`` (below, above): ``below`` is expected to win for small values of the swept
                 parameter, ``above`` for large ones; the threshold written is the split of
                 the sweep that loses least (on monotone data the smallest swept value at which
                 ``above`` wins; 2^31 - 1, never, when it never does).
    ``values``   the swept values, increasing; ``quick_values`` a shorter sweep for ``--quick``.
    ``workload(value) -> object``; ``run(device, version, workload) -> result``;
    ``check(result, workload) -> bool`` as above.
    ``sweepable(value, device) -> bool`` optional: False for a swept value at which ``auto``
                 can never use one of the versions on ``device`` (its profile caps it there):
                 the value is left out of the sweep, since its winner could change nothing
                 (NVIDIA's driver took 190 s to build ``thomas-unrolled`` at n = 128, a size
                 the GPU profiles never unroll).

Timing uses OpenCL profiling events of every launch inside ``run`` (see
``clts.runtime.timing``), so ``run`` must go through the normal launch path. Optional field
``timing`` on both kinds: ``"kernel"`` (default: the summed kernel execution times),
``"span"`` (first kernel start to last kernel end, gaps included) or ``"wall"`` (host wall time
of the whole ``run``, transfers and host work included) for entries whose versions differ in
more than kernels.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Tunable:
    name: str
    section: str
    params: dict[str, list]
    workloads: Callable[[bool], list]
    run: Callable[[Any, dict, Any], Any]
    check: Callable[[Any, Any], bool]
    constraint: Callable[[dict, Any], bool] | None = None
    description: str = ""
    timing: str = "kernel"
    sizes: Callable[[bool, Any], list] | None = None
    wg_params: tuple = ("wg",)
    occupancy: Callable[[dict, Any], float | None] | None = None
    work_group: Callable[[dict], int] | None = None


@dataclass
class Crossover:
    name: str
    key: str
    versions: tuple[str, str]
    values: list
    workload: Callable[[Any], Any]
    run: Callable[[Any, str, Any], Any]
    check: Callable[[Any, Any], bool]
    quick_values: list | None = None
    description: str = ""
    timing: str = "kernel"
    sweepable: Callable[[Any, Any], bool] | None = None


@dataclass
class Registry:
    tunables: dict[str, Tunable] = field(default_factory=dict)
    crossovers: dict[str, Crossover] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)   # module -> why it failed to import

    def add(self, entry):
        table = self.tunables if isinstance(entry, Tunable) else self.crossovers
        if entry.name in table:
            raise ValueError(f"tuner entry {entry.name!r} registered twice")
        table[entry.name] = entry
        return entry
