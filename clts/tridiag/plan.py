"""Plan: the code version and every template parameter of one tridiagonal solve.

Chosen from the device profile (section ``tridiag``) and the data shape; a user ``method=``
or explicit parameters override the profile.

Code versions:

``thomas``            one work-item per ``chains x lanes`` systems (``chains`` independent realN
                      vectors swept together: the forward sweep's dependent divisions leave a
                      CPU core idle with one), n known at run time, c'/d' in private arrays
                      (n <= ``private_max``) or global scratch; reads either layout (natural
                      layout with ``block=1``: ``lanes`` rows per vloadN, transposed in
                      registers; ``prefetch_items=P``: the contiguous blocks of the work-items P
                      ahead are software-prefetched into L2 during the sweep); ``stream=1``
                      writes x with non-temporal stores (natural layout with private c'/d':
                      staged per work-item and streamed out as whole lines; interleaved: rows
                      of whole aligned lines), saving the read-for-ownership of x.
                      ``fixed_n=1`` builds the kernel for this n (constant trip counts).
``thomas-coalesced``  the same kernel on the interleaved layout (``vloadN`` of ``lanes``
                      neighbouring systems; ``prefetch_items=P``: row k of the work-item P ahead is
                      prefetched into L2 with row k, P capped by ``PREFETCH_ROWS_BYTES``);
                      natural-layout data goes through a local-memory
                      tiled transposition first and back afterwards.
``thomas-unrolled``   n fixed at build time, both sweeps unrolled, c'/d' in registers.
                      ``transpose=1`` (GPU profiles): natural-layout data goes through the
                      local-memory tiled transposition first and back afterwards, so that a
                      warp reads row k of adjacent systems together (read in place, systems n
                      words apart, every work-item touches its own 128-byte segment).
                      ``subgroup`` (0: the compiler picks): the sub-group size the kernel
                      requires on Intel GPUs (Data Center GPU Max: 16; IGC spilled the
                      interleaved float32 n = 15 build at SIMD32, 2,432 B, none at SIMD16).
``pcr``               parallel cyclic reduction, one work-group per system in local memory.
``flat``              scan-based: chunk sweeps + sequential scans over chunk aggregates.
                      ``interleave=1`` (GPU profiles): work-items chunk-major (adjacent
                      work-items: the same chunk of adjacent systems), the chunk aggregates and
                      carries in planes indexed the same way, and natural-layout data copied
                      into a chunked layout (row r of every chunk together) through local-memory
                      tiles and x back: every warp access covers adjacent words. ``0`` (CPUs):
                      system-major work-items, in place.

``auto`` (see :func:`choose_method`):

1. ``flat``              if n >= auto.flat_min_n and batch < auto.flat_max_batch
2. ``pcr``               if n <= pcr.max_n (and fits local memory) and batch is below the
                         crossover at n (:func:`pcr_max_batch_at`: measured by clts-tune at
                         n = 16, 128 and 512, keys auto.pcr_max_batch_n16, _n128 and
                         pcr_max_batch, interpolated between them; a key at -1 is not
                         measured, and without any measured per-n key pcr_max_batch holds at
                         every n)
3. interleaved data (system axis first, read in place): ``thomas-unrolled`` if
   n < auto.unrolled_interleaved_below_n and n <= unrolled.max_n, else ``thomas-coalesced``
   if auto.coalesced_interleaved_min_n <= n < auto.coalesced_interleaved_max_n, else
   ``thomas`` (the same kernel on the same layout, with the ``thomas`` section's parameters:
   private c'/d' arrays, no prefetch; on CPUs it wins again for long systems, whose rows of
   one work-item are too far apart for the coalesced version's prefetch to pay)
4. ``thomas-unrolled``   if n < auto.unrolled_below_n and n <= unrolled.max_n, and n x itemsize
                         <= unrolled.max_bytes (0: no cap; registers: c'/d' of the whole
                         system live in them), else ``thomas-coalesced`` (the transposed path)
5. ``thomas-coalesced``  if n >= auto.coalesced_min_n (natural layout)
6. ``thomas``            otherwise
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..runtime.plans import SUBGROUPS, PlanBase, read_tunables

VERSIONS = ("thomas", "thomas-coalesced", "thomas-unrolled", "pcr", "flat")
LAYOUTS = ("natural", "interleaved")
#: largest n the unrolled kernel is ever built for (code size / build time)
UNROLLED_HARD_MAX = 512
#: parameters a caller may force, per version section of the profile
PARAMS = {
    "thomas": ("wg", "lanes", "chains", "private_max", "block", "prefetch_items", "stream",
               "fixed_n"),
    "thomas-coalesced": ("wg", "lanes", "chains", "private_max", "prefetch_items", "stream",
                         "fixed_n", "tile", "tile_y"),
    "thomas-unrolled": ("wg", "lanes", "block", "transpose", "subgroup"),
    "pcr": ("wg",),
    "flat": ("wg", "chunk", "interleave"),
}
SECTION = {"thomas": "thomas", "thomas-coalesced": "coalesced", "thomas-unrolled": "unrolled",
           "pcr": "pcr", "flat": "flat"}
ALL_PARAMS = sorted({p for ps in PARAMS.values() for p in ps})
#: auto thresholds a caller may force (``tridiag.auto.<key>`` in the profile)
AUTO_KEYS = ("flat_min_n", "flat_max_batch", "pcr_max_batch", "pcr_max_batch_n16",
             "pcr_max_batch_n128", "unrolled_below_n", "unrolled_interleaved_below_n",
             "coalesced_min_n", "coalesced_interleaved_min_n", "coalesced_interleaved_max_n")
#: the system sizes at which clts-tune measures the pcr / thomas crossover (a number of
#: systems), and the ``tridiag.auto`` key of each; between them ``auto`` interpolates
#: (:func:`pcr_max_batch_at`); -1 in a profile: not measured there
PCR_CROSSOVER_N = {16: "pcr_max_batch_n16", 128: "pcr_max_batch_n128", 512: "pcr_max_batch"}
#: size limits of ``auto`` a caller may force: keyword -> (profile section, key)
LIMIT_KEYS = {"pcr_max_n": ("pcr", "max_n"), "unrolled_max_n": ("unrolled", "max_n"),
              "unrolled_max_bytes": ("unrolled", "max_bytes")}
#: every keyword of solve_tridiagonal that steers ``auto`` (only with method="auto")
AUTO_PARAMS = AUTO_KEYS + tuple(LIMIT_KEYS)


#: most bytes of private c'/d' arrays per work-group; beyond it they go to global scratch
PRIVATE_GROUP_BYTES = 1 << 20
#: natural-layout prefetch of the next work-items' blocks only while one block (lanes * chains
#: * n items per array) is at most this many bytes: long systems are contiguous runs the hardware
#: prefetchers follow, and prefetching them costs time (docs/performance.md, "Figures behind the
#: code"); a caller's prefetch_items= is used as given
PREFETCH_BLOCK_BYTES = 8192
#: interleaved-layout prefetch (the rows of the work-item P ahead, fetched with this one's):
#: P is capped so that the P work-items' rows of a, b, c, d in flight stay within this many
#: bytes of L2 (at least 1 work-item ahead; docs/performance.md, "Figures behind the code")
PREFETCH_ROWS_BYTES = 128 * 1024


@dataclass(frozen=True)
class Problem:
    """The data shape of one call: ``nsys`` systems of ``n`` rows in ``layout``, of
    ``dtype``, with or without per-system start rows."""

    n: int
    nsys: int
    layout: str
    dtype: object
    has_start: bool


@dataclass(frozen=True)
class Plan(PlanBase):
    method: str
    layout: str
    n: int
    nsys: int
    real: str
    has_start: bool
    params: dict          # the template parameters of ``method`` (PARAMS[method])

    def get(self, key):
        return self.params[key]

    def describe(self) -> str:
        items = " ".join(f"{k}={v}" for k, v in self.params.items())
        return f"tridiag Plan: version={self.method} layout={self.layout} {items}"

    def validate(self, dev):
        """The one check of a Plan against ``dev`` (``make_plan``'s result and a Plan given
        as ``plan=``): every parameter in range, and the version within the device's limits.
        Raises ``ValueError`` naming what does not fit."""
        def bad(k, message):
            return ValueError(f"{k} {message}")
        if self.method not in VERSIONS:
            raise ValueError(f"method must be one of {', '.join(VERSIONS)}; got {self.method!r}")
        _check_params(self.params, bad, dev, self.method)
        if self.params.get("wg", 1) > dev.max_work_group:
            raise bad("wg", f"must be <= {dev.max_work_group} (the device's largest "
                            f"work-group), not {self.params['wg']}")
        itemsize = 8 if self.real == "double" else 4
        if self.method == "thomas-unrolled" and self.n > UNROLLED_HARD_MAX:
            raise ValueError(f"method 'thomas-unrolled' builds one kernel per system size and "
                             f"takes n <= {UNROLLED_HARD_MAX}; got n = {self.n} (use 'thomas')")
        if self.method == "pcr" and not pcr_fits(dev, self.n, itemsize, self.params["wg"]):
            raise ValueError(f"method 'pcr' keeps a system in local memory: n = {self.n} needs "
                             f"{4 * self.n * itemsize} bytes, device {dev} has {dev.local_mem}")
        if self.method == "thomas-coalesced" and self.layout == "natural":
            t, ty = self.params["tile"], self.params["tile_y"]
            if not transpose_tile_fits(dev, t, ty):
                raise ValueError(f"tile {t} x tile_y {ty}: tile_y must divide tile and "
                                 f"tile*tile_y <= {dev.max_work_group}")
        return self

    # -- derived template parameters -------------------------------------------------------
    @cached_property
    def cp_private(self) -> int:
        """Private-array length for c'/d' (0: global scratch)."""
        pm = int(self.params.get("private_max", 0))
        if self.n > pm or pm <= 0:
            return 0
        size = 16
        while size < self.n:
            size *= 2
        size = min(size, pm) if size >= self.n else 0
        # c' and d' (and a staged x) of every lane of every work-item of a group: CPU drivers
        # put them on a thread's stack (pocl segfaulted at wg 128 x 16 lanes x 1024 rows = 32 MiB)
        item = 8 if self.real == "double" else 4
        arrays = 3 if self.stream and self.layout == "natural" else 2
        group = (arrays * size * item * int(self.params.get("lanes", 1)) * self.chains
                 * int(self.params.get("wg", 1)))
        return size if group <= PRIVATE_GROUP_BYTES else 0

    @property
    def chains(self) -> int:
        return int(self.params.get("chains", 1))

    @property
    def stream(self) -> bool:
        return bool(self.params.get("stream", 0))

    @property
    def pcr_rows(self) -> int:
        wg = self.params["wg"]
        return max(1, -(-self.n // wg))



def profile_keys(method: str) -> dict:
    """Template parameter -> profile key of ``method``'s section."""
    return {k: f"tridiag.{SECTION[method]}.{k}" for k in PARAMS[method]}


def transpose_tile_fits(dev, tile: int, tile_y: int) -> bool:
    """The natural-layout transposition of ``thomas-coalesced`` (``tile`` x ``tile_y``
    work-items, ``tile_y`` dividing ``tile``; tile 0: no local memory) fits ``dev``'s
    work-group limit. The run path and the tuner's constraint both use it."""
    return not tile or (tile * tile_y <= dev.max_work_group and tile % tile_y == 0)


def pcr_fits(dev, n: int, itemsize: int, wg: int) -> bool:
    rows = max(1, -(-n // wg))
    return 4 * wg * rows * itemsize + 64 <= dev.local_mem and wg <= dev.max_work_group


def choose_method(dev, n: int, nsys: int, layout: str, itemsize: int,
                  overrides: dict | None = None) -> str:
    """The code version ``auto`` runs (module docstring); ``overrides`` force thresholds
    (keys of ``AUTO_PARAMS``) over the profile's."""
    keys = {k: f"tridiag.auto.{k}" for k in AUTO_KEYS}
    keys.update({k: f"tridiag.{sec}.{key}" for k, (sec, key) in LIMIT_KEYS.items()})
    a = read_tunables(dev, dict(keys, pcr_wg="tridiag.pcr.wg"), dict(overrides or {})).values
    if n >= a["flat_min_n"] and nsys < a["flat_max_batch"]:
        return "flat"
    if (n <= a["pcr_max_n"] and nsys < pcr_max_batch_at(n, _pcr_points(a, overrides or {}))
            and pcr_fits(dev, n, itemsize, _pcr_wg(dev, n, a["pcr_wg"]))):
        return "pcr"
    unrollable = n <= min(a["unrolled_max_n"], UNROLLED_HARD_MAX)
    # the unrolled kernel keeps c' and d' of a whole system in registers: on GPUs only while
    # n x itemsize <= unrolled.max_bytes keeps the occupancy model's 25 % (A100: float64
    # n = 24 took 118 registers, n = 32 150; MI100: n = 11 80 VGPRs, n = 15 124)
    fits = not a["unrolled_max_bytes"] or n * itemsize <= a["unrolled_max_bytes"]
    if layout == "interleaved":
        if unrollable and n < a["unrolled_interleaved_below_n"] and fits:
            return "thomas-unrolled"
        if a["coalesced_interleaved_min_n"] <= n < a["coalesced_interleaved_max_n"]:
            return "thomas-coalesced"
        return "thomas"
    if unrollable and n < a["unrolled_below_n"]:
        return "thomas-unrolled" if fits else "thomas-coalesced"
    if n >= a["coalesced_min_n"]:
        return "thomas-coalesced"
    return "thomas"


def _pcr_points(a, forced) -> dict:
    """{n: crossover batch} of the measured (not -1) ``PCR_CROSSOVER_N`` keys in ``a``; a
    ``pcr_max_batch`` forced alone (without a per-n key) holds at every n."""
    if "pcr_max_batch" in forced and not any(k in forced for k in PCR_CROSSOVER_N.values()
                                             if k != "pcr_max_batch"):
        return {512: a["pcr_max_batch"]}
    return {m: int(a[k]) for m, k in PCR_CROSSOVER_N.items() if int(a[k]) >= 0}


def pcr_max_batch_at(n: int, points: dict) -> int:
    """The number of systems of ``n`` rows from which ``auto`` prefers Thomas over PCR:
    ``points`` {system size: measured crossover}; one point holds at every n; between two,
    geometric in both (log(batch + 1) linear in log n: PCR's work per system grows as
    n log n, Thomas's parallelism with the batch alone); beyond the ends, the nearest end's."""
    import math
    if not points:
        return 0
    ns = sorted(points)
    if n <= ns[0]:
        return int(points[ns[0]])
    if n >= ns[-1]:
        return int(points[ns[-1]])
    hi = next(i for i, m in enumerate(ns) if m >= n)
    n0, n1 = ns[hi - 1], ns[hi]
    b0, b1 = math.log(points[n0] + 1), math.log(points[n1] + 1)
    t = (math.log(n) - math.log(n0)) / (math.log(n1) - math.log(n0))
    return max(0, int(round(math.exp(b0 + t * (b1 - b0)) - 1)))


def _pcr_wg(dev, n, wg):
    """PCR work-group: the profile's size, shrunk (power of two) for small systems."""
    wg = max(1, min(int(wg), dev.max_work_group))
    while wg > 1 and wg // 2 >= n:
        wg //= 2
    return wg


def _check_params(params, bad, dev, method):
    """Every template parameter of ``method`` in range (before anything is derived from it)."""
    import numpy as np
    for k, v in params.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise bad(k, f"must be an integer, not {v!r}")
    if "lanes" in params and params["lanes"] not in (1, 2, 4, 8, 16):
        raise bad("lanes", f"must be 1, 2, 4, 8 or 16, not {params['lanes']}")
    for k in ("block", "stream", "fixed_n", "interleave", "transpose"):
        if k in params and params[k] not in (0, 1):
            raise bad(k, f"must be 0 or 1, not {params[k]}")
    if "subgroup" in params and params["subgroup"] not in SUBGROUPS:
        raise bad("subgroup", f"must be one of {SUBGROUPS}, not {params['subgroup']}")
    if "chains" in params and not 1 <= params["chains"] <= 8:
        raise bad("chains", f"must be 1 ... 8 vectors per work-item, not {params['chains']}")
    if not 0 <= params.get("prefetch_items", 0) <= 64:
        raise bad("prefetch_items", f"must be 0 ... 64 work-items ahead, not "
                                    f"{params['prefetch_items']}")
    if params.get("tile", 1) < 0:
        raise bad("tile", f"must be >= 0 (0: transpose without local memory), not "
                          f"{params['tile']}")
    for k in ("wg", "tile_y", "chunk", "private_max"):
        if k in params and params[k] < (0 if k == "private_max" else 1):
            raise bad(k, f"must be >= {0 if k == 'private_max' else 1}, not {params[k]}")


def make_plan(device, problem: Problem, **overrides) -> Plan:
    """The Plan of one call from ``device``'s profile (section ``tridiag``) and the
    ``problem``, with the keyword ``overrides`` (``version``, the template parameters of
    ``PARAMS``, the ``auto`` thresholds of ``AUTO_PARAMS``; None = not given) over it."""
    import numpy as np
    dev, n, nsys, layout = device, problem.n, problem.nsys, problem.layout
    dtype, has_start = problem.dtype, problem.has_start
    method = overrides.pop("version", None) or "auto"
    real = "double" if np.dtype(dtype) == np.float64 else "float"
    itemsize = np.dtype(dtype).itemsize
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, not {layout!r}")
    overrides = {k: v for k, v in overrides.items() if v is not None}
    bad = [k for k in overrides if k not in ALL_PARAMS and k not in AUTO_PARAMS]
    if bad:
        from ..vocabulary import UnknownParameterError
        accepted = ALL_PARAMS + list(AUTO_PARAMS)
        raise UnknownParameterError(f"unknown parameter(s) {', '.join(bad)}; accepted: "
                                    f"{', '.join(accepted)}", bad, accepted)
    thresholds = {k: overrides.pop(k) for k in list(overrides) if k in AUTO_PARAMS}
    for k, v in thresholds.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"{k} must be an integer >= 0, not {v!r}")
    if method == "auto":
        method = choose_method(dev, n, nsys, layout, itemsize, thresholds)
    elif method not in VERSIONS:
        raise ValueError(f"version must be 'auto' or one of {', '.join(VERSIONS)}; got {method!r}")
    elif thresholds:
        raise TypeError(f"{', '.join(sorted(thresholds))} steer(s) version='auto' only; "
                        f"version={method!r} was forced")
    params = read_tunables(dev, profile_keys(method), {}).values
    from ..runtime.profiles import value_error

    def bad(k, message):
        """A ValueError naming the keyword, or a ProfileError naming the file and key."""
        return value_error(dev.profile, f"tridiag.{SECTION[method]}.{k}", f"{k} {message}",
                           forced=k in overrides)
    _check_params(dict(params, **{k: v for k, v in overrides.items() if k in PARAMS[method]}),
                  bad, dev, method)
    per_item = lambda: params.get("lanes", 1) * params.get("chains", 1)
    if "chains" in params and "chains" not in overrides:
        # few systems: at least two work-items per compute unit before more chains per item
        while params["chains"] > 1 and -(-nsys // per_item()) < 2 * dev.compute_units:
            params["chains"] //= 2
    if "lanes" in params and "lanes" not in overrides:
        # no clamped duplicate lanes, and at least two work-items per compute unit
        while params["lanes"] > 1 and (params["lanes"] > nsys or
                                       -(-nsys // per_item()) < 2 * dev.compute_units):
            params["lanes"] //= 2
    if (method == "thomas" and layout == "natural" and "prefetch_items" not in overrides
            and per_item() * n * itemsize > PREFETCH_BLOCK_BYTES):
        params["prefetch_items"] = 0
    interleaved_kernel = layout == "interleaved" or method == "thomas-coalesced"
    if (interleaved_kernel and params.get("prefetch_items", 0) > 0
            and "prefetch_items" not in overrides):
        ahead = PREFETCH_ROWS_BYTES // (4 * per_item() * n * itemsize)
        params["prefetch_items"] = max(1, min(params["prefetch_items"], ahead))
    params.update({k: int(v) for k, v in overrides.items() if k in PARAMS[method]})
    if "wg" in overrides and overrides["wg"] > dev.max_work_group:
        raise bad("wg", f"must be <= {dev.max_work_group} (the device's largest work-group), "
                        f"not {overrides['wg']}")
    if method == "pcr":
        params["wg"] = _pcr_wg(dev, n, params["wg"])
    if "wg" in params:
        params["wg"] = min(params["wg"], dev.max_work_group)
    return Plan(method=method, layout=layout, n=int(n), nsys=int(nsys), real=real,
                has_start=bool(has_start), params=params).validate(dev)
