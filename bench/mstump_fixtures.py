"""stumpy.mstump (and stumpy.mdl) on the inputs of tests/test_mp_mstump.py, saved to
tests/data/mstump_stumpy.npz, and stumpy.mstump(normalize=False, p=...) (stumpy.maamp),
stumpy.subspace and the plain stumpy.mdl on the same inputs, saved to
tests/data/mstump_plain_stumpy.npz (tests/test_mp_mstump_plain.py); run again after changing
the inputs (stumpy 1.14; ``plain``: only the second file):

    python bench/mstump_fixtures.py [plain]
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
#: (name, stumpy.mstump keywords) of the plain (normalize=False) calls
PLAIN_CASES = [(f"p2{c}", dict(kw, normalize=False)) for c, kw in CASES] + [
    ("p1", {"normalize": False, "p": 1.0}),
    ("p1incdisc", {"normalize": False, "p": 1.0, "include": [3, 1], "discords": True}),
    ("p3", {"normalize": False, "p": 3.0})]
#: (name, stumpy.subspace keywords) for every k on each case's motifs (MDL_CASES' names)
SUBSPACE_CASES = MDL_CASES


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


def _padded(S, d):
    return np.array([np.r_[s, -np.ones(d - len(s), int)] for s in S])


def plain_main():
    """tests/data/mstump_plain_stumpy.npz: for each input, ``{name}_{case}_P`` / ``_I`` of the
    plain cases; ``_sub{c}`` [d, d] (row k: stumpy.subspace(..., k) on the k-th motif, -1
    padded) and ``_mdl`` / ``_mdl_S`` (plain cases: with the case's normalize and p) for the
    z-normalised cases (from mstump_stumpy.npz's calls) and the plain ones."""
    import stumpy
    out = {}
    for name, T in inputs().items():
        d = len(T)
        out[f"{name}_T"] = T
        for case, kw in CASES + PLAIN_CASES:
            P, I = stumpy.mstump(T, M, **kw)
            dist = {k: v for k, v in kw.items() if k in ("normalize", "p")}
            if dist:
                out[f"{name}_{case}_P"], out[f"{name}_{case}_I"] = P, I
            mot = np.argmin(P, axis=1)
            nn = I[np.arange(d), mot]
            for c, kw2 in SUBSPACE_CASES:
                out[f"{name}_{case}_sub{c}"] = _padded(
                    [stumpy.subspace(T, M, mot[k], nn[k], k, **kw2, **dist) for k in range(d)], d)
            if dist:
                bits, S = stumpy.mdl(T, M, mot, nn, **dist)
                out[f"{name}_{case}_mdl"], out[f"{name}_{case}_mdl_S"] = bits, _padded(S, d)
    path = Path(__file__).resolve().parents[1] / "tests" / "data" / "mstump_plain_stumpy.npz"
    np.savez_compressed(path, **out)
    print(path, len(out), "arrays")


if __name__ == "__main__":
    import sys
    if sys.argv[1:] != ["plain"]:
        main()
    plain_main()
