"""A numpy model of preSCRIMP's float screen (``pre_fused32``): for a random walk and a few
window lengths, the largest |distance in float - distance in double| against the bound the
kernel uses (any excess is a bug in the bound), and how much the screen leaves to re-check in
double: blocks of 32 windows per query (``pre_rowmin32``) and (query, 16 windows) pairs of
the column minima (queries in ascending order, as the kernel visits them). numpy's float32
matrix products sum in another order than the kernel; the bound holds for any order.

    python bench/prescrump_screen.py [--n 10000] [--ms 10,50,200,500]
"""
from __future__ import annotations

import argparse

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--ms", default="10,50,200,500")
    a = ap.parse_args()
    T = np.cumsum(np.random.default_rng(0).standard_normal(a.n))
    np.seterr(invalid="ignore")     # inf - inf in the exclusion zones (masked)
    u, u64 = 2.0 ** -24, 2.0 ** -53
    for m in map(int, a.ms.split(",")):
        s = -(-m // 4)
        W = np.lib.stride_tricks.sliding_window_view(T, m)
        l = len(W)
        mu = W.mean(1)
        c = W - mu[:, None]
        ss = (c * c).sum(1)
        r = 1 / np.sqrt(ss)
        qi = np.arange(0, l, s)
        z = c[qi] / np.sqrt(ss[qi])[:, None]
        D64 = np.maximum(0, 2 * m * (1 - np.minimum((z @ W.T) * r, 1)))
        corr32 = (z.astype(np.float32) @ W.astype(np.float32).T) * r.astype(np.float32)
        D32 = np.maximum(np.float32(0), np.float32(2 * m) * (np.float32(1) - np.minimum(
            corr32, np.float32(1)))).astype(np.float64)
        # the kernel's bound (clts/mp/prescrump.py _screen_bounds, pre_bw)
        g, g64 = ((m + 2) * e / (1 - (m + 2) * e) for e in (u, u64))
        c1 = 2 * m * (g * (1 + u) ** 2 * 1.0001 + g64 * 1.0001)
        c0 = 2 * m * (5 * u + 8 * u64) + 5 * m * u + 1e-30
        B = 2 * (c1 * np.sqrt(ss + m * mu * mu) * r * (1 + 1e-6) + c0)
        ex = np.abs(np.arange(l)[None, :] - qi[:, None]) <= s
        D64[ex] = np.inf
        D32[ex] = np.inf
        err = np.abs(D32 - D64)[~ex]
        over = int((np.abs(D32 - D64) > B[None, :])[~ex].sum())
        nb = -(-l // 32)
        pad = nb * 32 - l
        rmin = np.pad(D32, ((0, 0), (0, pad)), constant_values=np.inf).reshape(len(qi), nb,
                                                                               32).min(2)
        Bb = np.pad(B, (0, pad)).reshape(nb, 32).max(1)
        rows = ((rmin - Bb) <= (rmin + Bb).min(1, keepdims=True)).sum(1)
        cb = np.full(l, np.inf)
        G = -(-l // 16)
        hits = 0
        for k in range(len(qi)):
            need = np.pad(~(D32[k] - B > cb), (0, G * 16 - l))
            hits += need.reshape(G, 16).any(1).sum()
            take = D64[k] < cb
            cb[take] = D64[k][take]
        print(f"m = {m}: {len(qi)} queries; largest float error {err.max():.2e}, bound mean "
              f"{B.mean():.2e} (x{B.mean() / err.max():.1f}), exceeded {over} times; blocks "
              f"re-checked per query {rows.mean():.2f} (of {nb}); (query, 16 windows) pairs "
              f"re-checked {100 * hits / (len(qi) * G):.1f} %", flush=True)


if __name__ == "__main__":
    main()
