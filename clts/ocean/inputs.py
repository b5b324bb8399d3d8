"""Inputs of the TKE routine: the pyhpc-benchmarks generator and a well-scaled variant.

``benchmark_inputs(size)`` draws the same arrays in the same order from the same seeded numpy
generator as the pyhpc-benchmarks TKE benchmark, so results can be compared with its backends.
Its grid is ``nx = ny = ceil(2 size^(1/3))``, ``nz = ceil(size^(1/3) / 4)``.
"""
from __future__ import annotations

import math

import numpy as np

#: the order of ``tke``'s positional arguments
NAMES = ("u", "v", "w", "maskU", "maskV", "maskW", "dxt", "dxu", "dyt", "dyu", "dzt", "dzw",
         "cost", "cosu", "kbot", "kappaM", "mxl", "forc", "forc_tke_surface", "tke", "dtke")


def grid_shape(size: int) -> tuple[int, int, int]:
    """(nx, ny, nz) of problem size ``size`` as the benchmark defines it."""
    r = size ** (1 / 3)
    return math.ceil(2 * r), math.ceil(2 * r), math.ceil(0.25 * r)


def benchmark_inputs(size: int, seed: int = 17) -> dict:
    """The benchmark's random inputs (``randn`` fields, 0/1 masks wet with probability 0.8,
    ``kbot`` uniform in 0 .. nz-1), as a dict in ``NAMES`` order."""
    np.random.seed(seed)
    shape = grid_shape(size)
    out = {}
    for name in ("maskU", "maskV", "maskW"):
        out[name] = (np.random.rand(*shape) < 0.8).astype(np.float64)
    for pair, n in ((("dxt", "dxu"), shape[0]), (("dyt", "dyu"), shape[1]),
                    (("dzt", "dzw"), shape[2]), (("cost", "cosu"), shape[1])):
        for name in pair:
            out[name] = np.random.randn(n)
    out["kbot"] = np.random.randint(0, shape[2], size=shape[:2])
    out["forc_tke_surface"] = np.random.randn(*shape[:2])
    for name in ("kappaM", "mxl", "forc"):
        out[name] = np.random.randn(*shape)
    for name in ("u", "v", "w", "tke", "dtke"):
        out[name] = np.random.randn(*shape, 3)
    return {name: out[name] for name in NAMES}


def scaled_inputs(shape, seed: int = 0) -> dict:
    """Physically scaled inputs (positive spacings and mixing lengths, cosines in (0.5, 1],
    tke >= 0): well-conditioned systems and O(1) results, the float32 test case."""
    rng = np.random.default_rng(seed)
    nx, ny, nz = shape
    u01 = lambda *s: rng.uniform(0.0, 1.0, s)  # noqa: E731
    out = {
        "u": rng.normal(0, 0.1, (nx, ny, nz, 3)), "v": rng.normal(0, 0.1, (nx, ny, nz, 3)),
        "w": rng.normal(0, 0.01, (nx, ny, nz, 3)),
        "maskU": (u01(nx, ny, nz) < 0.9).astype(np.float64),
        "maskV": (u01(nx, ny, nz) < 0.9).astype(np.float64),
        "maskW": (u01(nx, ny, nz) < 0.9).astype(np.float64),
        "dxt": 1.0 + u01(nx), "dxu": 1.0 + u01(nx), "dyt": 1.0 + u01(ny), "dyu": 1.0 + u01(ny),
        "dzt": 0.5 + u01(nz), "dzw": 0.5 + u01(nz),
        "cost": 0.5 + 0.5 * u01(ny), "cosu": 0.5 + 0.5 * u01(ny),
        "kbot": rng.integers(0, nz + 1, (nx, ny)),
        "kappaM": 0.1 * u01(nx, ny, nz), "mxl": 0.5 + u01(nx, ny, nz),
        "forc": rng.normal(0, 0.1, (nx, ny, nz)), "forc_tke_surface": rng.normal(0, 0.1, (nx, ny)),
        "tke": u01(nx, ny, nz, 3), "dtke": rng.normal(0, 0.1, (nx, ny, nz, 3)),
    }
    return {name: out[name] for name in NAMES}


#: constants that keep the well-scaled case well-scaled (a small lateral diffusivity)
SCALED_CONSTANTS = dict(K_h_tke=0.05, dt_tracer=0.5, dt_mom=0.5)
