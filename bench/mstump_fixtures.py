"""stumpy.mstump (and stumpy.mdl) on the inputs of tests/test_mp_mstump.py, saved to
tests/data/mstump_stumpy.npz (run again after changing the inputs; stumpy 1.14):

    python bench/mstump_fixtures.py
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

M = 20
#: (name, stumpy keywords) of each anchored call
CASES = [("plain", {}), ("inc", {"include": [2]}), ("disc", {"discords": True}),
         ("incdisc", {"include": [3, 1], "discords": True})]

#: (name, stumpy.mdl keywords) on each case's motifs
MDL_CASES = [("", {}), ("inc", {"include": [3]}), ("disc", {"discords": True}),
             ("nbit", {"n_bit": 4})]


def inputs():
    """Random walks (d = 4), plateaus (constant runs in three dimensions, one shared, a
    1e-9-noise run, NaN and inf) and a real-looking sensor set (daily cycles, trend, noise,
    a dropout), each 4 x 420."""
    rng = np.random.default_rng(28)
    n = 420
    walk = np.cumsum(rng.standard_normal((4, n)), axis=1)
    plat = rng.standard_normal((4, n))
    plat[0, 60:110] = 2.5
    plat[1, 60:110] = -1.0           # the same windows constant in two dimensions
    plat[2, 200:240] = 0.5
    plat[3, 300:340] = 1.0 + 1e-9 * rng.standard_normal(40)
    plat[1, 250] = np.nan
    plat[2, 380] = np.inf
    t = np.arange(n)
    sensor = np.stack([20 + 5 * np.sin(2 * np.pi * (t + 9 * q) / 72) + 0.002 * t * q
                       + 0.3 * rng.standard_normal(n) for q in range(4)])
    sensor[2, 150:160] = np.nan
    return {"walk": walk, "plat": plat, "sensor": sensor}


def main():
    import stumpy
    out = {}
    for name, T in inputs().items():
        out[f"{name}_T"] = T
        for case, kw in CASES:
            P, I = stumpy.mstump(T, M, **kw)
            out[f"{name}_{case}_P"], out[f"{name}_{case}_I"] = P, I
            mot = np.argmin(P, axis=1)
            nn = I[np.arange(len(P)), mot]
            for c, kw2 in MDL_CASES:
                bits, S = stumpy.mdl(T, M, mot, nn, **kw2)
                out[f"{name}_{case}_mdl{c}"] = bits
                out[f"{name}_{case}_mdl{c}_S"] = np.array(
                    [np.r_[s, -np.ones(len(T) - len(s), int)] for s in S])
    path = Path(__file__).resolve().parents[1] / "tests" / "data" / "mstump_stumpy.npz"
    np.savez_compressed(path, **out)
    print(path, len(out), "arrays")


if __name__ == "__main__":
    main()
