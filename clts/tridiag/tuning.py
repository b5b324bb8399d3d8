"""Tridiagonal search spaces and version crossovers for clts-tune.

Every candidate runs through ``clts.solve_tridiagonal`` with ``method=`` and its parameters
forced, on float64 diagonally dominant systems, and is checked against the vectorised float64
reference Thomas (``reference.thomas_numpy``)."""
from __future__ import annotations

import numpy as np

from ..tune import Crossover, Tunable, register
from ..tune.sizing import grow, grow_pow2
from .api import solve_tridiagonal
from .plan import PCR_CROSSOVER_N, UNROLLED_HARD_MAX, pcr_fits, transpose_tile_fits
from .reference import thomas_numpy


def _systems(batch: int, n: int, layout: str = "natural", seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (batch, n))
    c = rng.uniform(-1, 1, (batch, n))
    b = np.abs(a) + np.abs(c) + rng.uniform(0.5, 2, (batch, n))
    d = rng.standard_normal((batch, n))
    ref = thomas_numpy(a, b, c, d)
    if layout == "interleaved":
        a, b, c, d = (np.ascontiguousarray(v.T) for v in (a, b, c, d))
    return {"abcd": (a, b, c, d), "ref": ref, "layout": layout, "batch": batch, "n": n}


def _check(result, w) -> bool:
    x = np.asarray(result.x)
    if w["layout"] == "interleaved":
        x = x.T
    ref = w["ref"]
    scale = np.maximum(np.abs(ref).max(axis=1), 1e-300)
    return bool(np.all(np.abs(x - ref).max(axis=1) / scale <= 1e-9))


def _solve(device, w, method, **params):
    axis = 0 if w["layout"] == "interleaved" else -1
    return solve_tridiagonal(*w["abcd"], axis=axis, version=method, device=device, **params)


def _wg_ok(params, device):
    return params.get("wg", 1) <= device.max_work_group


#: float64 bytes a system row moves (a, b, c, d, x)
_ROW = 5 * 8


def _batch(device, cpu, n, wg):
    """``cpu`` systems of ``n`` rows on a CPU; on a GPU enough for ``wg``-wide groups on every
    compute unit (one system per work-item), within the workload byte limits."""
    return grow(device, cpu, n * _ROW, wg=wg)


def _tunable(name, method, section, params, sizes, constraint=_wg_ok, description=""):
    """``sizes(quick, device)``: [(batch, n, layout, seed), ...], one per workload."""
    register(Tunable(
        name=name, section=section, params=params,
        workloads=lambda quick, device=None: [_systems(b, n, lay, seed)
                                              for b, n, lay, seed in sizes(quick, device)],
        sizes=lambda quick, device=None: [{"batch": b, "n": n} for b, n, _, _ in
                                          sizes(quick, device)],
        run=lambda device, p, w, m=method: _solve(device, w, m, **p),
        check=_check, constraint=constraint, description=description))


_tunable("tridiag.thomas", "thomas", "tridiag.thomas",
         {"wg": [1, 4, 16, 64], "lanes": [1, 2, 4, 8, 16], "chains": [1, 2, 4],
          "private_max": [0, 1024], "block": [0, 1], "prefetch_items": [0, 1, 2], "stream": [0, 1],
          "fixed_n": [0, 1]},
         lambda quick, dev: [(_batch(dev, 4000 if quick else 20000, 115, 64), 115, "natural", 0),
                             (_batch(dev, 40 if quick else 200, 1000, 64), 1000, "natural", 1)],
         description="thomas (natural layout): work-group size, systems per work-item (realN "
                     "lanes x independent chains), c'/d' in private arrays up to private_max rows, "
                     "natural-layout rows read lanes at a time and transposed in registers "
                     "(block), the blocks of the next prefetch_items work-items prefetched (natural "
                     "layout, block 1), x written with non-temporal stores (stream), n built in (fixed_n)")

_tunable("tridiag.coalesced", "thomas-coalesced", "tridiag.coalesced",
         {"wg": [1, 4, 16, 64, 128], "lanes": [1, 4, 8, 16], "chains": [1, 2],
          "private_max": [0, 1024], "prefetch_items": [0, 1, 2, 4, 8], "stream": [0, 1],
          "fixed_n": [0, 1], "tile": [8, 16, 32], "tile_y": [2, 4, 8]},
         lambda quick, dev: [(_batch(dev, 4000 if quick else 20000, 115, 128), 115,
                              "interleaved", 0),
                             (_batch(dev, 4000 if quick else 20000, 115, 128), 115, "natural", 2)],
         constraint=lambda p, d: (p["wg"] <= d.max_work_group
                                  and transpose_tile_fits(d, p["tile"], p["tile_y"])),
         description="thomas-coalesced: interleaved vloadN lanes x chains, work-group, "
                     "local-memory transposition tile (natural-layout input), software prefetch "
                     "distance (work-items ahead), non-temporal stores of x (stream)")

_tunable("tridiag.unrolled", "thomas-unrolled", "tridiag.unrolled",
         {"wg": [4, 16, 64], "lanes": [1, 4, 8, 16], "block": [0, 1]},
         lambda quick, dev: [(_batch(dev, 4000 if quick else 20000, 32, 64), 32, "natural", 0)],
         description="thomas-unrolled (n fixed at build time): work-group, lanes")

_tunable("tridiag.pcr", "pcr", "tridiag.pcr",
         {"wg": [16, 32, 64, 128, 256, 512]},
         # one system per work-group: a system gives wg work-items
         lambda quick, dev: [(grow(dev, 64 if quick else 256, 512 * _ROW, wg=512,
                                   items_per_unit=512), 512, "natural", 0)],
         constraint=lambda p, d: pcr_fits(d, 512, 8, p["wg"]),   # the workload's n, float64
         description="pcr: work-group size (rows per work-item = n / wg)")

_tunable("tridiag.flat", "flat", "tridiag.flat",
         {"wg": [1, 16, 64, 256], "chunk": [256, 1024, 4096, 16384]},
         # two long systems: a row pair moves 2 rows, a work-item takes a chunk of >= 256
         lambda quick, dev: [(2, grow_pow2(dev, 1 << (16 if quick else 19), 2 * _ROW,
                                           items_per_unit=1 / 256), "natural", 0)],
         description="flat: rows per chunk (one work-item each), work-group size")


def _crossover(name, key, versions, values, quick_values, workload, description,
               sweepable=None):
    register(Crossover(
        name=name, key=key, versions=versions, values=values, quick_values=quick_values,
        workload=workload, run=lambda device, method, w: _solve(device, w, method),
        check=_check, description=description, sweepable=sweepable))


def _unrollable(n, device) -> bool:
    """``auto`` may choose thomas-unrolled for float64 systems of ``n`` on ``device``
    (``tridiag.unrolled.max_n`` / ``max_bytes`` of its profile; GPUs cap the bytes)."""
    from ..runtime.plans import read_tunables
    lim = read_tunables(device, {"max_n": "tridiag.unrolled.max_n",
                                 "max_bytes": "tridiag.unrolled.max_bytes"}, {}).values
    return (n <= min(lim["max_n"], UNROLLED_HARD_MAX)
            and (not lim["max_bytes"] or n * 8 <= lim["max_bytes"]))


_crossover("tridiag.flat_max_batch", "tridiag.auto.flat_max_batch", ("flat", "thomas"),
           [1, 2, 4, 8, 16, 32, 64], [1, 4, 16],
           lambda batch: _systems(batch, 1 << 17, seed=batch),
           "number of long systems (n = 2^17) from which thomas beats flat")
_crossover("tridiag.flat_min_n", "tridiag.auto.flat_min_n", ("thomas", "flat"),
           [1024, 4096, 16384, 65536, 262144, 1048576], [4096, 65536, 1048576],
           lambda n: _systems(1, n, seed=n),
           "system size from which flat beats thomas on a single system")
#: the version PCR is measured against: what ``auto`` runs where PCR is not chosen (on GPUs'
#: natural-layout data the transposes around thomas-unrolled / thomas-coalesced, on CPUs
#: thomas), so that the crossover is the one ``auto`` decides
NO_PCR = "thomas-auto"
_NO_PCR_KEYS = {k: 0 for k in PCR_CROSSOVER_N.values()}


def _solve_pcr_or_auto(device, method, w):
    if method == NO_PCR:
        return _solve(device, w, "auto", **_NO_PCR_KEYS)
    return _solve(device, w, method)


def _pcr_sweepable(n):
    """``auto`` can choose pcr for float64 systems of ``n`` on ``device`` (pcr.max_n)."""
    def ok(batch, device):
        from ..runtime.plans import read_tunables
        return n <= read_tunables(device, {"m": "tridiag.pcr.max_n"}, {}).values["m"]
    return ok


#: swept numbers of systems per system size (full sweep, --quick)
_PCR_BATCHES = {16: ([64, 256, 1024, 4096, 16384, 65536, 262144], [256, 4096, 65536]),
                128: ([16, 64, 256, 1024, 4096, 16384, 65536], [64, 1024, 16384]),
                512: ([1, 4, 16, 64, 256, 1024, 4096], [1, 16, 256])}

for _n, _key in PCR_CROSSOVER_N.items():
    register(Crossover(
        name=f"tridiag.{_key}", key=f"tridiag.auto.{_key}", versions=("pcr", NO_PCR),
        values=_PCR_BATCHES[_n][0], quick_values=_PCR_BATCHES[_n][1],
        workload=lambda batch, n=_n: _systems(batch, n, seed=batch),
        run=_solve_pcr_or_auto, check=_check, sweepable=_pcr_sweepable(_n),
        description=f"number of systems (n = {_n}) from which the Thomas version auto runs "
                    f"otherwise ({NO_PCR}: transposes included where it transposes) beats pcr; "
                    "auto interpolates between the measured system sizes"))
_crossover("tridiag.unrolled_below_n", "tridiag.auto.unrolled_below_n",
           ("thomas-unrolled", "thomas"),
           [n for n in (4, 8, 16, 32, 64, 128) if n <= UNROLLED_HARD_MAX], [8, 32, 128],
           lambda n: _systems(max(256, 2_000_000 // n), n, seed=n),
           "system size from which thomas (run-time n) beats thomas-unrolled",
           sweepable=_unrollable)
_crossover("tridiag.unrolled_interleaved_below_n", "tridiag.auto.unrolled_interleaved_below_n",
           ("thomas-unrolled", "thomas-coalesced"),
           [n for n in (4, 8, 16, 32, 64, 128) if n <= UNROLLED_HARD_MAX], [8, 32, 128],
           lambda n: _systems(max(256, 2_000_000 // n), n, "interleaved", seed=n),
           "interleaved data: system size from which thomas-coalesced beats thomas-unrolled",
           sweepable=_unrollable)
_crossover("tridiag.coalesced_min_n", "tridiag.auto.coalesced_min_n",
           ("thomas", "thomas-coalesced"),
           [8, 16, 32, 64, 128, 256, 512, 1024], [16, 128, 1024],
           lambda n: _systems(max(256, 2_000_000 // n), n, seed=n),
           "natural layout: system size from which transposing to thomas-coalesced beats "
           "thomas")
_crossover("tridiag.coalesced_interleaved_min_n", "tridiag.auto.coalesced_interleaved_min_n",
           ("thomas", "thomas-coalesced"),
           [16, 32, 64, 128, 256, 512, 1024, 2048], [32, 256, 2048],
           lambda n: _systems(max(256, 4_000_000 // n), n, "interleaved", seed=n),
           "interleaved data: system size from which thomas-coalesced (its own lanes, "
           "work-group, global scratch and prefetch) beats thomas (private c'/d' arrays)")
_crossover("tridiag.coalesced_interleaved_max_n", "tridiag.auto.coalesced_interleaved_max_n",
           ("thomas-coalesced", "thomas"),
           [128, 256, 512, 1024, 2048, 4096], [256, 1024, 4096],
           lambda n: _systems(max(256, 4_000_000 // n), n, "interleaved", seed=n),
           "interleaved data: system size from which thomas beats thomas-coalesced again "
           "(long systems: one work-item's rows too far apart for the prefetch)")
