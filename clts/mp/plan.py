"""Plan for the matrix profile: every template parameter and code version of one run.

Chosen from the device profile (section ``mp``) and the data; any field can be forced by the
caller (``matrix_profile(..., plan=Plan(...))`` or keyword overrides), which is what the tuner does.

- ``lanes``: adjacent diagonals per vector lane group (1, 2, 4, 8, 16): pocl needs 8.
- ``groups``: lane groups per work-item; a band is D = lanes * groups diagonals.
- ``tile``: rows per tile; a tile's column bests are kept privately and merged at its end.
- ``segment``: rows per work-item; the covariance is recomputed exactly every ``segment``
  steps.
- ``wg``: work-group size (work-items share nothing, so this is a scheduling choice).
- ``store``: where a tile's best values live: "private" (registers / private arrays) or "local"
  (a per-work-item slice of a __local array; nothing shared, so no barrier). ``topk_store``:
  the same for the sorted k-lists of a tile's columns (k > 1), where the best choice differs;
  or "window" (GPUs, lanes = 1): only the D lists of the columns the band reaches at the
  current row, in registers, each stored to the partial lists as its column leaves the band,
  and the tile's entry floors read by the work-group together through local memory (tile:
  rows per such read). GPU profiles (``groups_per_cu`` > 0) with topk_store="local" get the
  one of "local" and "window" the occupancy model rates higher (:func:`topk_store_by_model`)
  unless the caller forces it. Results are identical.
- ``groups_per_cu``: work-groups that must fit on one compute unit together (GPUs: 4): the
  local-memory tile (store / topk_store "local") is cut so that its group takes at most
  1 / groups_per_cu of the CU's local memory (the occupancy model of clts.runtime.occupancy,
  published per-CU limits of the device's GPU family); 0: the whole
  per-group budget (one group may fill a CU). Where not one row fits, fewer groups.
- ``interleave``: 1 lays the per-work-item slices of the local tile arrays and the top-k
  kernel's partial lists (rowPV / colPV) out interleaved by work-item (element e of work-item
  w at e * n + w: adjacent work-items touch adjacent words, coalesced on GPUs and free of local
  bank conflicts), and merges the top-k lists with a work-item per candidate (``merge_k``:
  the lanes of a row read its entries together); 0: one contiguous slice per work-item and a
  work-item per merged row (CPUs, where a work-item's data stays in its cache lines). Results
  are identical.
- ``fold``: work-group size of the work-group-cooperative folds of the top-k partial lists
  (GPUs; a power of two): a work-group per row (its work-items stride over the launch's
  work-items, then a tree of list merges in local memory) and per block of column groups
  (adjacent work-items read adjacent work-items' lists; the block's global lists read and
  written together), both reading in lockstep (:func:`topk_fold_cols` sizes the block; on Intel
  GPUs the sub-group size is pinned to FOLD_SIMD_INTEL); 0: a work-item per row / column
  (CPUs). Results are identical.
- ``keep``: how the k = 1 float64 kernel keeps the better of the running best and a packed
  candidate: "minmax" (OpenCL fmax / fmin: one instruction on GPUs) or "select" (a compare and
  a select: CPUs, where fmax / fmin's rule for NaN arguments costs two more instructions per
  pair; 1.17x fewer CPU seconds on pocl). Results are identical (the running best is never NaN).
- ``subgroup`` (profile key ``mp.topk.subgroup``; 0: the compiler picks): the sub-group size
  the top-k diagonal kernel requires where the compiler knows ``intel_reqd_sub_group_size``
  (Intel GPUs). IGC compiles it at SIMD32 on a Data Center GPU Max and spills the k-lists at
  128 GRF (local tile and window); at SIMD16 it does not. Other compilers ignore it.
- ``merge``: "atomic" (64-bit packed atomic minimum, needs cl_khr_int64_base_atomics) or
  "partial" (per-work-item partial profiles + a reduction kernel; any device).
- ``precision``: "double" (everything float64), "mixed" (float32 diagonal kernel, float64
  statistics and exact float64 re-evaluation of the winners), "single" (float32 throughout).
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace

from ..runtime.plans import (PlanBase, PlanValueError, check_choice, check_int, check_subgroup,
                             check_work_group, read_tunables, validated)

PRECISIONS = ("double", "mixed", "single")
MERGES = ("atomic", "partial")
STORES = ("private", "local")
TOPK_STORES = STORES + ("window",)
KEEPS = ("minmax", "select")

#: factor C of the ill-conditioning test (``Side.mark_ill`` in series.py): a window whose centred
#: norm^2 is below C * eps * R * S^2 goes to the exact path
ILL_FACTOR = {"double": 1e8, "mixed": 1e3, "single": 1e3}


@dataclass(frozen=True)
class Problem:
    """The data shape of one matrix-profile run: window length ``m`` (None: not known, no
    segment floor from it) and ``precision`` ("double" or "single")."""

    m: int | None = None
    precision: str = "double"


@dataclass(frozen=True)
class Plan(PlanBase):
    lanes: int
    groups: int
    tile: int
    segment: int
    wg: int
    merge: str
    store: str
    topk_store: str
    precision: str
    block_rows: int
    unroll: int
    groups_per_cu: int = 0
    interleave: int = 0
    fold: int = 0
    keep: str = "minmax"
    subgroup: int = 0

    @property
    def band(self) -> int:
        return self.lanes * self.groups

    @property
    def kernel_real(self) -> str:
        return "double" if self.precision == "double" else "float"

    @property
    def exact_real(self) -> str:
        return "float" if self.precision == "single" else "double"

    def validate(self, dev=None):
        """Raise ``PlanValueError`` (a ValueError naming the field) for a bad value; with
        ``dev``, also for a work-group beyond the device's limit."""
        from ..runtime.plans import LANE_WIDTHS, UNROLL_MAX
        check_choice(self, "lanes", LANE_WIDTHS)
        for name in ("tile", "segment", "wg", "block_rows"):
            check_int(self, name)
        check_int(self, "groups", hi=64, note=" (lane groups)")
        check_int(self, "unroll", hi=UNROLL_MAX)
        check_int(self, "groups_per_cu", lo=0, note=" (0: one group may fill a compute unit)")
        check_int(self, "interleave", lo=0, hi=1)
        check_int(self, "fold", lo=0)
        if self.fold & (self.fold - 1):
            raise PlanValueError("fold", f"must be 0 or a power of two, got {self.fold}")
        check_work_group(self, dev, "wg", "fold")
        if self.segment < self.band:
            raise PlanValueError("segment", f"({self.segment}) must be >= lanes*groups "
                                            f"({self.band})")
        check_choice(self, "store", STORES)
        check_choice(self, "topk_store", TOPK_STORES)
        if self.topk_store == "window" and self.lanes != 1:
            raise PlanValueError("topk_store", f"'window' needs lanes=1 (one diagonal per "
                                               f"lane group), got lanes={self.lanes}")
        check_subgroup(self.subgroup)
        check_choice(self, "keep", KEEPS)
        check_choice(self, "merge", MERGES)
        check_choice(self, "precision", PRECISIONS)
        return self


#: profile key of each Plan field read from the profile, and of ``segment_per_m``
PROFILE_KEYS = {"lanes": "mp.diag.lanes", "groups": "mp.diag.groups", "tile": "mp.diag.tile",
                "segment": "mp.diag.segment", "wg": "mp.diag.wg", "store": "mp.diag.store",
                "topk_store": "mp.diag.topk_store", "unroll": "mp.diag.unroll",
                "block_rows": "mp.block_rows", "merge": "mp.merge",
                "groups_per_cu": "mp.diag.groups_per_cu", "interleave": "mp.diag.interleave",
                "fold": "mp.diag.fold", "keep": "mp.diag.keep", "subgroup": "mp.topk.subgroup",
                "segment_per_m": "mp.diag.segment_per_m"}


def fit_tile(dev, per: int, band: int, wg: int, tile: int, groups_per_cu: int = 0,
             kernel=None) -> int:
    """Rows per tile (at most ``tile``) whose (rows + band) slots of ``per`` bytes per
    work-item of a ``wg`` group fit the local memory that leaves room for ``groups_per_cu``
    groups per compute unit (``local_memory_share``), or for as many as allow one row; < 1
    where not even one row fits one group. With ``groups_per_cu`` (GPU profiles) and
    ``kernel`` ((template, kernel name, parameters) of the kernel the tile is for), the tile is
    cut further to the most rows at which the occupancy model reaches ``MIN_FRACTION`` of the
    compute unit's warps / waves / threads (:func:`occupancy_rows`), where any does."""
    from ..runtime.plans import local_memory_share
    L = None
    for g in range(groups_per_cu, 0, -1):
        L = min(tile, local_memory_share(dev, g, wg) // max(wg, 1) // per - band)
        if L >= 1:
            break
    else:
        L = min(tile, local_memory_share(dev, 0, wg) // max(wg, 1) // per - band)
    if groups_per_cu > 0 and kernel is not None and L > 1:
        return occupancy_rows(dev, per, band, wg, L, kernel)
    return L


def modelled(dev, kernel, wg: int, local_mem: int):
    """Occupancy of a ``wg`` group of ``kernel`` ((template, name, parameters)) with
    ``local_mem`` bytes of local memory by the device's GPU family model, with the kernel's
    registers and SIMD width recorded by the offline compiles (``occupancy.recorded``; none
    recorded: registers left out, the family's lane width); None on CPUs."""
    from ..runtime import occupancy as occ
    target = occ.target_of(dev)
    if target is None:
        return None
    lim = occ.limits(target)
    template, name, params = kernel
    r = occ.recorded(target, template, name, params)
    regs = min(r.regs, 255) if r is not None and lim.family == "nvidia" else \
        (r.regs if r is not None else 0)
    kw = dict(sgprs=r.sgprs, grf=r.grf or 128, simd=r.simd or None,
              barrier=r.barrier) if r is not None else {}
    return occ.occupancy(lim, regs=regs, work_group=wg, local_mem=local_mem, **kw)


def occupancy_rows(dev, per: int, band: int, wg: int, rows: int, kernel) -> int:
    """The most rows (at most ``rows``) of a local-memory tile of (rows + band) slots of
    ``per`` bytes per work-item at which a ``wg`` group of ``kernel`` (template, name,
    parameters) keeps at least ``occupancy.MIN_FRACTION`` of the device's compute unit busy,
    by the device's GPU family model with the kernel's registers and SIMD width recorded by
    the offline compiles (``occupancy.recorded``; none recorded: registers left out, the
    family's lane width); ``rows`` where no tile reaches it (registers or the band's own
    slots bound the occupancy: a smaller tile would only merge more often) or on CPUs."""
    from ..runtime import occupancy as occ
    for L in range(rows, 0, -1):
        o = modelled(dev, kernel, wg, wg * (L + band) * per)
        if o is None:
            return rows
        if o.fraction >= occ.MIN_FRACTION:
            return L
    return rows


#: k of the recorded top-k builds the layout choice reads (the offline compiles' workload)
TOPK_MODEL_K = 3


def topk_window_rows(dev, band: int, wg: int, tile: int, real: str = "double") -> int:
    """Rows per tile of topk_store="window" (the rows whose entry floors a work-group reads
    together): ``tile``, fewer where the group's (rows + wg * band) floors and its row range
    would not fit the device's local memory; < 1 where not even one row fits."""
    rs = 8 if real == "double" else 4
    return min(tile, (dev.local_mem - 8) // rs - wg * band)


def topk_window_local(rows: int, band: int, wg: int, real: str = "double") -> int:
    """Local memory (bytes) of a topk_store="window" group: its tile's floors, its row range."""
    return (rows + wg * band) * (8 if real == "double" else 4) + 8


def amd_waves(dev) -> int:
    """AMD GPUs: the waves per SIMD that reach ``occupancy.MIN_FRACTION`` of a compute unit
    (gfx908: 3 of 10, gfx90a: 2 of 8), which the top-k window kernel asks the back end to
    leave room for (``amdgpu_waves_per_eu``: it keeps values in AGPRs rather than take more
    VGPRs; 104 VGPRs in float64 on gfx908 without, 2 waves); 0 elsewhere."""
    from ..runtime import occupancy as occ
    lim = occ.limits_for(dev)
    if lim is None or lim.family != "amd":
        return 0
    return -(-int(occ.MIN_FRACTION * lim.max_waves * 100) // 100)


def topk_store_by_model(dev, p, k: int = TOPK_MODEL_K) -> str:
    """"window" or "local" for a GPU profile's top-k kernel (``p.topk_store`` "local", one
    lane): the one of higher occupancy by the device's family model with the recorded
    figures of both builds ("local": its tile cut by :func:`fit_tile`; "window": no k-lists in
    local memory, its registers instead), "window" on a tie (its floors are read coalesced);
    ``p.topk_store`` on CPUs, where "window" does not fit and where its recorded build spills."""
    real = p.kernel_real
    rows = topk_window_rows(dev, p.band, p.wg, p.tile, real)
    if p.lanes != 1 or rows < 1:
        return p.topk_store
    common = dict(K=k, real=real, lanes=1, groups=p.groups, wg=p.wg)
    win = modelled(dev, ("mp/diag_topk.cl.mako", "diag_topk", dict(common, WINDOW=1, LOCAL=0)),
                   p.wg, topk_window_local(rows, p.band, p.wg, real))
    if win is None:
        return p.topk_store
    from ..runtime import occupancy as occ
    r = occ.recorded(occ.target_of(dev), "mp/diag_topk.cl.mako", "diag_topk",
                     dict(common, WINDOW=1, LOCAL=0))
    if r is not None and r.params.get("WINDOW") and r.spill > 0:
        return p.topk_store         # its lists spill (IGC at SIMD32: pvc)
    rs = 8 if real == "double" else 4
    per = k * (rs + 4) + rs
    kernel = ("mp/diag_topk.cl.mako", "diag_topk", dict(common, LOCAL=1))
    L = fit_tile(dev, per, p.band, p.wg, p.tile, p.groups_per_cu, kernel)
    loc = modelled(dev, kernel, p.wg, p.wg * (L + p.band) * per) if L >= 1 else None
    return "window" if loc is None or win.fraction >= loc.fraction else "local"


#: local memory of the cooperative top-k column fold's lists (one copy of a block's, the
#: launch's entries merged into them in place): at most 6 KiB, so that ten work-groups share a
#: 64 KiB compute unit (an MI100's 25 % at one wave a group)
TOPK_FOLD_LOCAL_BYTES = 6 << 10

#: sub-group size the top-k folds require where the compiler has
#: cl_intel_required_subgroup_size (intel_reqd_sub_group_size in mp/diag_topk.cl.mako): the
#: width the occupancy model counts their groups' hardware threads at on Intel GPUs, so that
#: the cut below does not depend on the width IGC picked for the build that was recorded
#: (the 8-group build at SIMD8 made 16 groups look like two threads, compiled at SIMD16: one)
FOLD_SIMD_INTEL = 16


def topk_fold_local(kernel: str, groups: int, band: int, k: int, real: str = "double") -> int:
    """Bytes of local memory of a cooperative top-k fold's work-group (``kernel``
    "reduce_rows_k": ``groups`` work-items' k-lists; "reduce_cols_k": the lists of a block of
    ``groups`` column groups of ``band`` columns), with the three step flags of either."""
    rs = 8 if real == "double" else 4
    n = groups * k if kernel == "reduce_rows_k" else groups * band * k
    return n * (rs + 4) + 3 * 4


def topk_fold_cols(fold: int, band: int, k: int, dev=None, real: str = "double") -> int:
    """Work-items (column groups of ``band`` columns) per work-group of the cooperative top-k
    column fold: ``fold``, halved until the block's k-lists (12 bytes an entry, at most 8
    bytes of score) fit TOPK_FOLD_LOCAL_BYTES; at least 1. With ``dev`` (a GPU of a modelled
    family), halved further to the largest block at which the occupancy model, with
    ``reduce_cols_k``'s recorded registers (Intel: at the pinned FOLD_SIMD_INTEL, not the
    recorded build's width), reaches ``occupancy.MIN_FRACTION``, where a smaller one does."""
    g = fold
    while g > 1 and g * band * k * 12 > TOPK_FOLD_LOCAL_BYTES:
        g //= 2
    g = max(1, g)
    if dev is None:
        return g
    from ..runtime import occupancy as occ
    target = occ.target_of(dev)
    if target is None:
        return g
    family = occ.limits(target).family
    r = occ.recorded(target, "mp/diag_topk.cl.mako", "reduce_cols_k",
                     dict(K=k, real=real, FOLD=fold))
    kw = dict(regs=min(r.regs, 255) if family == "nvidia" else r.regs,
              sgprs=r.sgprs, grf=r.grf or 128, simd=r.simd or None,
              barrier=r.barrier) if r is not None else dict(regs=0)
    if family == "intel":
        kw["simd"] = FOLD_SIMD_INTEL
    c = g
    while c >= 1:
        o = occ.occupancy(target, work_group=c,
                          local_mem=topk_fold_local("reduce_cols_k", c, band, k, real), **kw)
        if o.fraction >= occ.MIN_FRACTION:
            return c
        c //= 2
    return g


def local_tile_rows(dev, lanes: int, groups: int, wg: int, tile: int,
                    groups_per_cu: int = 0, real: str = "double") -> int:
    """Rows per tile of the k = 1 kernel with store="local": ``tile``, fewer where a
    work-group's column bests ((rows + band) slots of ``lanes`` values, 8 bytes a slot: a
    packed key or a float value + int index) would not fit the device's local memory (its
    1 / groups_per_cu share of a compute unit's, and the occupancy model's cut for the
    ``real`` kernel, :func:`fit_tile`); < 1 where not even one row fits. The run path and the
    tuner's constraint both use it."""
    kernel = ("mp/diag_top1.cl.mako", "diag",
              dict(K=1, LOCAL=1, real=real, lanes=lanes, groups=groups, wg=wg))
    return fit_tile(dev, lanes * 8, lanes * groups, wg, tile, groups_per_cu, kernel)


#: the exact covariance at a segment start costs O(m) per diagonal, and the O(1) update's
#: rounding grows ~ eps * rows against |QT| ~ m: segments are at least segment_per_m * m rows
#: (profile key mp.diag.segment_per_m, tuned by clts-tune) unless ``segment`` is forced, so
#: that the run time and the relative drift stay independent of m


def make_plan(device, problem: Problem, **overrides) -> Plan:
    """The Plan of one run from ``device``'s profile (section ``mp``) and the ``problem``
    (window length ``m``, precision), with the caller's keywords over it (the Plan's fields
    and ``segment_per_m``; None = not given), or ``plan=`` as given (keywords still override
    its fields); checked against the device (:meth:`Plan.validate`)."""
    dev, m, precision = device, problem.m, problem.precision
    plan = overrides.pop("plan", None)
    segment_per_m = overrides.pop("segment_per_m", None)
    known = {f.name for f in fields(Plan)}
    bad = set(overrides) - known
    if bad:
        from ..vocabulary import UnknownParameterError
        accepted = sorted(known | {"segment_per_m"})
        raise UnknownParameterError(f"unknown plan parameter(s) {', '.join(sorted(bad))}; "
                                    f"accepted: {', '.join(accepted)}", sorted(bad), accepted)
    if plan is not None and not isinstance(plan, Plan):
        raise TypeError(f"plan must be a clts.mp.plan.Plan, got {type(plan).__name__}")
    if plan is None:
        v = read_tunables(dev, PROFILE_KEYS, {"segment_per_m": segment_per_m}).values
        spm = v.pop("segment_per_m")
        if v["merge"] == "auto":
            v["merge"] = "atomic" if dev.int64_atomics else "partial"
        v["store"], v["topk_store"], v["keep"] = (str(v["store"]), str(v["topk_store"]),
                                                  str(v["keep"]))
        p = Plan(precision=precision, **v)
    else:
        spm, p = segment_per_m, plan
    if spm is not None and (isinstance(spm, bool) or not isinstance(spm, int) or spm < 1):
        raise ValueError(f"segment_per_m must be a positive int, got {spm!r}")
    if plan is None and m is not None and overrides.get("segment") is None:
        seg = p.segment if isinstance(p.segment, int) else 0
        p = replace(p, segment=max(seg, -(-spm * m // 1024) * 1024) if seg > 0 else p.segment)
    p = replace(p, **{k: v for k, v in overrides.items() if v is not None})
    if plan is None or "precision" not in overrides:
        p = replace(p, precision=precision if plan is None else p.precision)
    if p.merge == "atomic" and not dev.int64_atomics:
        from ..runtime import DeviceError
        raise DeviceError(f"device {dev} lacks cl_khr_int64_base_atomics needed by "
                          "merge='atomic'; use merge='partial'")
    forced = set(PROFILE_KEYS) if plan is not None else {
        k for k, v in overrides.items() if v is not None}
    p = _fit_local_store(dev, validated(p, dev, PROFILE_KEYS, forced), forced)
    if p.topk_store == "local" and p.groups_per_cu > 0 and "topk_store" not in forced:
        p = replace(p, topk_store=topk_store_by_model(dev, p))
    return p


def _fit_local_store(dev, p: Plan, forced) -> Plan:
    """``p`` with store="local" made to fit the device's local memory by the fields the caller
    did not force (the profile chose them for its own band): a work-group halved until one
    row of the tile fits, else store="private". A forced combination that does not fit is left
    as it is (the run raises a DeviceError naming it)."""
    if p.store != "local":
        return p

    def fits(q):
        return local_tile_rows(dev, q.lanes, q.groups, q.wg, q.tile, q.groups_per_cu) >= 1
    if fits(p):
        return p
    if "wg" not in forced:
        q = p
        while q.wg > 1 and not fits(q):
            q = replace(q, wg=q.wg // 2)
        if fits(q):
            return q
    if "store" not in forced:
        return replace(p, store="private")
    return p
