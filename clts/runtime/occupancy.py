"""Theoretical occupancy of a kernel on a GPU, from the vendors' published limits and the
kernel's register and local-memory figures (recorded offline, so nothing compiles at run time).

One model per vendor family; a *target* names the chip generation the offline compiles use:

    ========  ==========================  =============================================
    target    GPUs                        unit of residency ("CU" below)
    ========  ==========================  =============================================
    sm_80     NVIDIA A100 (Ampere)        SM: 65,536 regs, 64 warps, 32 blocks, 164 KiB
    sm_90     NVIDIA H100 (Hopper)        SM: 65,536 regs, 64 warps, 32 blocks, 228 KiB
    gfx908    AMD MI100 (CDNA 1)          CU: 4 SIMD x 10 waves, 256 VGPRs/lane, 64 KiB LDS
    gfx90a    AMD MI200 (CDNA 2)          CU: 4 SIMD x 8 waves, 512 unified V/AGPRs, 64 KiB
    pvc       Intel Data Center GPU Max   Xe-core: 8 XVE x 8 threads (128 GRF) / 4 (256),
                                          128 KiB SLM, 64 groups, 32 barriers
    dg2       Intel Arc (Xe-HPG)          Xe-core: 16 XVE x 8 threads (128 GRF) / 4 (256),
                                          128 KiB SLM (64 per group), 128 groups, 32 barriers
    tgllp     Intel Iris Xe (Xe-LP)       sub-slice: 16 EU x 7 threads, 128 GRF, 64 KiB SLM,
                                          112 groups, 32 barriers
    ========  ==========================  =============================================

Intel (the model of Intel's GPU Occupancy Calculator): a work-group of ``work_group`` work-items
at the SIMD width IGC picked (``simd``: 8 / 16 / 32, the sub-group size) takes
``ceil(work_group / simd)`` hardware threads, all on one Xe-core (sub-slice); the groups per
Xe-core are the fewest of: hardware threads (XVEs x threads per XVE in the GRF mode IGC chose:
large GRF halves them), SLM (the group's local memory rounded up to the allocation sizes), the
work-group limit, and - for kernels with a barrier (IGC's ``sync.bar``, recorded as ``barrier``)
- the barrier registers. Occupancy is resident threads over the Xe-core's threads in small-GRF
mode (large GRF tops out at 50 %).

API (import early; no OpenCL needed)::

    from clts.runtime import occupancy as occ
    lim = occ.limits("gfx908")                      # or occ.limits_for(device) -> Limits | None
    o = occ.occupancy(lim, regs=124, work_group=64, local_mem=18432)
    o.fraction        # 0.075: resident waves / max waves per CU (3 of 40)
    o.resident        # 3 waves (NVIDIA: warps; Intel: hardware threads) per CU / SM / Xe-core
    o.groups          # 3 work-groups per CU
    o.limiter         # "local memory" | "registers" | "waves" | "groups" | "work-group"
    occ.max_local_mem(lim, work_group=64, regs=124, groups=4)   # bytes per group that keep 4
    occ.best(lim, [(choice, regs, wg, local), ...])  # the candidate of highest occupancy
    occ.recorded("gfx908", "mp/diag_topk.cl.mako", "diag_topk", {"LOCAL": 1})
        # -> KernelRecord(regs=..., spill=..., ...) from clts/devices/resources/<target>.yaml,
        #    the figures of the offline compiles (python -m clts.tune.offline --record)
    occ.kernel_occupancy(device_or_target, template, kernel, params, work_group, local_mem)
        # recorded registers + the model: Occupancy, or None (CPU, or nothing recorded)

``regs`` is what the back end reports per work-item: NVIDIA registers (ptxas), AMD VGPRs
(gfx90a: architectural VGPRs + AGPRs, as the remark's "VGPRs" + "AGPRs"), Intel GRF registers
per hardware thread (``grf``: 128 or 256, the mode IGC chose). ``local_mem`` counts the static
local memory plus ``__local`` arguments of one work-group. Occupancy is *theoretical*: how many
warps / waves / threads may be resident, which bounds how much memory latency a kernel can hide;
it is not a speed. The gate (tests/test_gpu_resources.py) asks for at least 25 %.

Published sources: NVIDIA CUDA C++ Programming Guide, "Compute Capabilities" table (8.0 and 9.0:
65,536 32-bit registers per SM, 64 resident warps, 32 resident blocks, 164 / 228 KiB shared
memory per SM, 1 KiB reserved per block) and the CUDA Occupancy Calculator (register allocation
per warp in units of 256); AMD "AMD Instinct MI100 / CDNA ISA" and LLVM's AMDGPU usage notes
(gfx908: 256 VGPRs per lane and SIMD, granule 4, 10 waves per SIMD; gfx90a: 512 unified VGPRs +
AGPRs, granule 8, 8 waves per SIMD; 4 SIMDs and 64 KiB LDS per CU; 800 SGPRs per SIMD, granule
16; at most 16 multi-wave work-groups per CU (barriers), as LLVM's getMaxWorkGroupsPerCU);
Intel's oneAPI GPU Optimization Guide ("Xe GPU architecture", "Small register
mode vs. large register mode": 8 threads per XVE with 128 GRF, 4 with 256 GRF on Xe-HPC / Xe-HPG;
Xe-LP 7 threads per EU) and Intel's GPU Occupancy Calculator (oneAPI samples,
Tools/GPU-Occupancy-Calculator: per Xe-core / sub-slice 64 / 128 / 112 threads, 128 / 128 / 64 KiB
SLM (Arc: at most 64 KiB per group), SLM allocated in 1, 2, 4, ... 64 KiB steps (Max: also 48,
96, 128), at most 64 / 128 / 112 work-groups, 32 barrier registers, for Max / Arc / Iris Xe).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml


@dataclass(frozen=True)
class Limits:
    target: str
    family: str               # "nvidia" | "amd" | "intel"
    lanes: int                # warp / wavefront / default SIMD width
    units_per_cu: int         # SIMDs per CU (AMD), XVEs per Xe-core (Intel), 1 (NVIDIA)
    max_waves: int            # per unit: warps per SM, waves per SIMD, threads per XVE
    regs: int                 # register file per unit (NVIDIA: per SM, AMD: per lane of a SIMD)
    reg_granule: int          # allocation unit (NVIDIA: per warp; AMD: per lane)
    local_mem: int            # shared memory / LDS / SLM per SM / CU / Xe-core
    local_reserved: int = 0   # per work-group (NVIDIA: 1 KiB)
    max_groups: int = 32      # resident work-groups per SM / CU / Xe-core
    sgprs: int = 0            # AMD scalar registers per SIMD
    sgpr_granule: int = 16
    grf_threads: tuple = ()   # Intel: ((GRF mode, threads per XVE), ...)
    barriers: int = 0         # Intel: barrier registers per Xe-core (groups with a barrier)
    slm_sizes: tuple = ()     # Intel: SLM allocation sizes (KiB) a group's local memory rounds up to

    @property
    def cu_waves(self) -> int:
        """Most warps / waves / threads resident per SM / CU / Xe-core."""
        return self.max_waves * self.units_per_cu


_KIB = 1024
LIMITS = {
    "sm_80": Limits("sm_80", "nvidia", 32, 1, 64, 65536, 256, 164 * _KIB, _KIB, 32),
    "sm_90": Limits("sm_90", "nvidia", 32, 1, 64, 65536, 256, 228 * _KIB, _KIB, 32),
    "gfx908": Limits("gfx908", "amd", 64, 4, 10, 256, 4, 64 * _KIB, 0, 16, 800, 16),
    "gfx90a": Limits("gfx90a", "amd", 64, 4, 8, 512, 8, 64 * _KIB, 0, 16, 800, 16),
    "pvc": Limits("pvc", "intel", 16, 8, 8, 128, 1, 128 * _KIB, 0, 64,
                  grf_threads=((128, 8), (256, 4)), barriers=32,
                  slm_sizes=(1, 2, 4, 8, 16, 32, 48, 64, 96, 128)),
    "dg2": Limits("dg2", "intel", 16, 16, 8, 128, 1, 128 * _KIB, 0, 128,
                  grf_threads=((128, 8), (256, 4)), barriers=32,
                  slm_sizes=(1, 2, 4, 8, 16, 32, 64)),
    "tgllp": Limits("tgllp", "intel", 16, 16, 7, 128, 1, 64 * _KIB, 0, 112,
                    grf_threads=((128, 7),), barriers=32, slm_sizes=(1, 2, 4, 8, 16, 32, 64)),
}


def limits(target: str) -> Limits:
    try:
        return LIMITS[target]
    except KeyError:
        raise ValueError(f"target must be one of {', '.join(LIMITS)}, got {target!r}") from None


#: (vendor / name pattern, target) for real devices; the first match wins
_NAMES = [(r"H100|H200|GH200", "sm_90"), (r"A100|A30|A800|A10\b|RTX A|RTX 30", "sm_80"),
          (r"gfx90a|MI2[0-9]0", "gfx90a"), (r"gfx908|MI100", "gfx908"),
          (r"Max 1[0-9]{3}|Ponte|PVC", "pvc"), (r"Arc|DG2|Flex", "dg2"),
          (r"Iris|UHD|Xe Graphics|TGL", "tgllp")]
_VENDOR_DEFAULT = [("nvidia", "sm_80"), ("advanced micro", "gfx908"), ("amd", "gfx908"),
                   ("intel", "tgllp")]


def target_of(device) -> str | None:
    """The target whose limits apply to ``device`` (a Device or DeviceInfo): an emulated
    description's ``offline_target`` (``cpu``), else by name, else by vendor; None for CPUs."""
    desc = getattr(device, "description", None) or {}
    cpu = (desc.get("offline_target") or {}).get("cpu")
    if cpu in LIMITS:
        return cpu
    gpu = (desc.get("offline_target") or {}).get("gpu")
    if gpu in LIMITS:
        return gpu
    info = getattr(device, "info", device)
    if getattr(info, "type", "gpu") == "cpu":
        return None
    name = getattr(info, "name", "")
    for pat, t in _NAMES:
        if re.search(pat, name, re.I):
            return t
    vendor = getattr(info, "vendor", "").lower()
    for v, t in _VENDOR_DEFAULT:
        if v in vendor:
            return t
    return None


def limits_for(device) -> Limits | None:
    t = target_of(device)
    return LIMITS[t] if t else None


@dataclass(frozen=True)
class Occupancy:
    resident: int           # warps (NVIDIA) / waves (AMD) / hardware threads (Intel) per CU
    max_resident: int
    groups: int             # work-groups resident per SM / CU / Xe-core
    limiter: str            # what bounds ``groups``
    target: str

    @property
    def fraction(self) -> float:
        return self.resident / self.max_resident

    def __str__(self) -> str:
        return (f"{self.resident}/{self.max_resident} ({100 * self.fraction:.1f} %, "
                f"{self.groups} groups, {self.limiter})")


#: the occupancy the resource gate asks of auto's kernels (clts.tune.gate.MIN_OCCUPANCY) and
#: that the Plans' local-memory tiles are cut to reach (clts.mp.plan.fit_tile)
MIN_FRACTION = 0.25


def _ceil(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def waves_per_simd(lim: Limits, regs: int, sgprs: int = 0) -> int:
    """AMD: waves one SIMD holds at ``regs`` VGPRs (+AGPRs) and ``sgprs`` per wave."""
    w = lim.max_waves
    if regs > 0:
        w = min(w, lim.regs // _ceil(regs, lim.reg_granule))
    if sgprs > 0 and lim.sgprs:
        w = min(w, lim.sgprs // _ceil(sgprs, lim.sgpr_granule))
    return w


def slm_allocation(lim: Limits, local_mem: int) -> int:
    """Intel: the SLM a group of ``local_mem`` bytes takes (the next allocation size up)."""
    for kib in lim.slm_sizes:
        if local_mem <= kib * _KIB:
            return kib * _KIB
    return local_mem


def occupancy(lim: Limits | str, *, regs: int, work_group: int, local_mem: int = 0,
              sgprs: int = 0, grf: int = 128, simd: int | None = None,
              barrier: bool = False) -> Occupancy:
    """Theoretical occupancy of one kernel launch (see the module docstring); ``barrier``:
    the kernel synchronises its work-group (Intel: groups bounded by the barrier registers)."""
    if isinstance(lim, str):
        lim = limits(lim)
    if work_group < 1:
        raise ValueError(f"work_group must be >= 1, got {work_group!r}")
    if regs < 0 or local_mem < 0:
        raise ValueError("regs and local_mem must be >= 0")
    width = simd or lim.lanes
    per_group = -(-work_group // width)          # warps / waves / threads of one group
    # AMD: single-wave groups take no barrier slot (16 per CU), so only waves bound them
    single = lim.family == "amd" and per_group == 1
    cap = {"groups": lim.cu_waves if single else lim.max_groups}
    if lim.family == "nvidia":
        if regs > 255:
            raise ValueError(f"regs must be <= 255 on {lim.target}, got {regs}")
        warp_regs = _ceil(max(regs, 1) * width, lim.reg_granule)
        cap["registers"] = (lim.regs // warp_regs) // per_group
        cap["waves"] = lim.max_waves // per_group
    elif lim.family == "amd":
        w = waves_per_simd(lim, regs, sgprs)
        cap["registers"] = (w * lim.units_per_cu) // per_group if w < lim.max_waves else 10**9
        cap["waves"] = lim.cu_waves // per_group
    else:
        threads = dict(lim.grf_threads).get(grf)
        if threads is None:
            raise ValueError(f"grf must be one of {[g for g, _ in lim.grf_threads]} on "
                             f"{lim.target}, got {grf!r}")
        cap["registers"] = (threads * lim.units_per_cu) // per_group \
            if threads < lim.max_waves else 10**9
        cap["waves"] = lim.cu_waves // per_group
        if barrier and lim.barriers:
            cap["barriers"] = lim.barriers
        if local_mem:
            local_mem = slm_allocation(lim, local_mem)
    if local_mem:
        cap["local memory"] = lim.local_mem // (local_mem + lim.local_reserved)
    limiter = min(cap, key=lambda k: (cap[k], k != "local memory"))
    groups = cap[limiter]
    if groups == 0:
        limiter = "work-group" if cap["waves"] == 0 else limiter
    return Occupancy(groups * per_group, lim.cu_waves, groups, limiter, lim.target)


def max_local_mem(lim: Limits | str, *, work_group: int, regs: int = 0, groups: int = 4,
                  sgprs: int = 0, grf: int = 128) -> int:
    """Most local memory (bytes) one work-group may take so that at least ``groups`` groups
    (or all that registers and waves allow, if fewer) stay resident per SM / CU / Xe-core."""
    if isinstance(lim, str):
        lim = limits(lim)
    o = occupancy(lim, regs=regs, work_group=work_group, sgprs=sgprs, grf=grf)
    n = max(1, min(groups, o.groups))
    share = lim.local_mem // n - lim.local_reserved
    fits = [k * _KIB for k in lim.slm_sizes if k * _KIB <= share]
    return fits[-1] if fits else share      # Intel: the largest allocation size within it


def best(lim: Limits | str, candidates, *, minimum: float = 0.25):
    """The first candidate ``(choice, regs, work_group, local_mem)`` reaching ``minimum``
    occupancy, else the one of highest occupancy; returns (choice, Occupancy)."""
    scored = []
    for c in candidates:
        choice, regs, wg, local = c
        o = occupancy(lim, regs=regs, work_group=wg, local_mem=local)
        if o.fraction >= minimum:
            return choice, o
        scored.append((o.fraction, -len(scored), choice, o))
    if not scored:
        raise ValueError("candidates must not be empty")
    _, _, choice, o = max(scored, key=lambda t: (t[0], t[1]))
    return choice, o


# -- recorded per-kernel figures ---------------------------------------------------------------
@dataclass(frozen=True)
class KernelRecord:
    template: str
    kernel: str
    params: dict              # the template parameters the figures were compiled with
    regs: int
    spill: int = 0            # bytes spilled (NVIDIA stores, AMD scratch per lane, Intel size)
    local_mem: int = 0        # static local memory
    sgprs: int = 0
    grf: int = 128
    simd: int = 0
    barrier: bool = False     # Intel: IGC's code has a work-group barrier (sync.bar)


def resources_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "devices" / "resources"


@lru_cache(maxsize=None)
def _records(target: str) -> tuple:
    path = resources_dir() / f"{target}.yaml"
    if not path.is_file():
        return ()
    with open(path, encoding="utf-8") as f:
        data = yaml.safe_load(f) or {}
    return tuple(KernelRecord(**{k: v for k, v in r.items() if k in _RECORD_KEYS})
                 for r in data.get("kernels", []))


_RECORD_KEYS = set(KernelRecord.__dataclass_fields__)


def recorded(target: str, template: str, kernel: str, params: dict | None = None):
    """The recorded figures of ``kernel`` in ``template`` for ``target`` whose parameters best
    match ``params`` (most equal values, then the highest register count: a conservative pick);
    None when nothing is recorded. Memoised (Plans ask it on every call, some many times)."""
    items = tuple(sorted((params or {}).items()))
    try:
        return _recorded(target, template, kernel, items)
    except TypeError:                       # an unhashable parameter value
        return _best(_by_kernel(target).get((template, kernel), ()), dict(items))


@lru_cache(maxsize=None)
def _by_kernel(target: str) -> dict:
    """``_records(target)`` grouped by (template, kernel)."""
    out: dict = {}
    for r in _records(target):
        out.setdefault((r.template, r.kernel), []).append(r)
    return out


@lru_cache(maxsize=4096)
def _recorded(target, template, kernel, items):
    return _best(_by_kernel(target).get((template, kernel), ()), dict(items))


def clear_records() -> None:
    """Forget the loaded figures (a test that points ``resources_dir`` elsewhere)."""
    for f in (_records, _by_kernel, _recorded):
        f.cache_clear()


def _best(records, params: dict):
    best_r, best_key = None, None
    for r in records:
        same = sum(1 for k, v in r.params.items() if params.get(k) == v)
        differ = sum(1 for k, v in r.params.items() if k in params and params[k] != v)
        key = (same - differ, r.regs)
        if best_key is None or key > best_key:
            best_r, best_key = r, key
    return best_r


def kernel_occupancy(device, template: str, kernel: str, params: dict | None, *,
                     work_group: int, local_mem: int | None = None):
    """Occupancy of a kernel with its recorded registers on ``device`` (a Device, DeviceInfo
    or target name); None on CPUs or when no figures are recorded for it."""
    target = device if isinstance(device, str) else target_of(device)
    if target is None:
        return None
    r = recorded(target, template, kernel, params)
    if r is None:
        return None
    return occupancy(target, regs=r.regs, work_group=work_group, sgprs=r.sgprs, grf=r.grf,
                     simd=r.simd or None, barrier=r.barrier,
                     local_mem=r.local_mem if local_mem is None else local_mem)


def percent(o: Occupancy | None) -> str:
    return "-" if o is None else f"{math.floor(100 * o.fraction + 0.5)} %"
