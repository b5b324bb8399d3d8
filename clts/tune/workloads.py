"""The workloads the offline collector runs on an emulated GPU to see what every public function
builds: tiny inputs with every code version forced (``forced_calls``), and ``auto`` on
realistic shapes (``auto_calls``: what a user's ordinary work builds, the sources the resource
gate judges by occupancy and coalescing).
"""
from __future__ import annotations

import numpy as np

from .. import options

TRIDIAG = {"thomas": "thomas", "coalesced": "thomas-coalesced", "unrolled": "thomas-unrolled",
           "pcr": "pcr", "flat": "flat"}
#: the realistic shapes ``auto`` is judged on (ordinary work of each algorithm)
SHAPES = {"stl": (512, 368), "bfast": (274, 32, 32), "mp": (8192, 128), "mstump": (8, 4096, 64),
          "tridiag": ((15, 65536), (115, 8192), (10000, 32)), "ocean": 2 ** 16,
          "breaks": (274, 8, 32), "trend": (512, 368)}


def selection() -> list[str]:
    """The label prefixes of the option ``gpu_gate_calls`` (``CLTS_GPU_GATE_CALLS``, comma-
    separated, e.g. ``mp,tke``): a developer's quick run of the collector over some algorithms
    only; empty: every call."""
    text = options.get("gpu_gate_calls") or ""
    return [p.strip() for p in text.split(",") if p.strip()]


def select(calls):
    """``calls`` whose label starts with one of ``selection()`` (all of them when it is empty)."""
    only = selection()
    return [c for c in calls if not only or any(c[0].startswith(p) for p in only)]


def tiny_inputs():
    rng = np.random.default_rng(11)
    t = np.arange(96)
    y = np.sin(2 * np.pi * t / 12)[None] + rng.normal(size=(3, 96))
    y[1, 5:9] = np.nan
    a, c, d = (rng.random((12, 40)) for _ in range(3))
    b = 3 + rng.random((12, 40))
    T = np.cumsum(rng.standard_normal(200))
    N, M = 60, 16
    tb = np.arange(N) * 16.0
    cube = 3 + np.sin(2 * np.pi * tb[:, None] / 365) + 0.3 * rng.standard_normal((N, M))
    cube[rng.random((N, M)) < 0.2] = np.nan
    from ..ocean.inputs import scaled_inputs
    return dict(y=y, tri=(a, b, c, d), T=T, cube=cube, tb=tb, ocean=scaled_inputs((8, 9, 5)))


def _ocean(dev, inp, dt, **params):
    import clts.ocean as oc
    x = {k: (v.astype(dt) if v.dtype.kind == "f" else v) for k, v in inp.items()}

    def superbee(version="auto", **kw):
        return oc.superbee_fluxes(x["tke"][..., 0], x["u"][..., 0], x["v"][..., 0],
                                  x["w"][..., 0], x["maskW"], x["dxt"], x["dyt"], x["dzw"],
                                  x["cost"], x["cosu"], 1.0, device=dev, version=version, **kw)

    def tke(**kw):
        return oc.tke(**x, device=dev, **kw)
    return superbee, tke


def forced_calls(dev, x, dt):
    """(label, callable) of every algorithm and code version with the profile's values, and
    ``candidate(section, params)`` running one tuner candidate."""
    import clts
    a, b, c, d = (v.astype(dt) for v in x["tri"])
    y, T, cube = x["y"].astype(dt), x["T"], x["cube"].astype(dt)
    prec = "double" if dt == np.float64 else "single"

    def stl(version, **params):
        return clts.stl(y, 12, seasonal_jump=2, trend_jump=3, robust=True, outer_iter=1,
                        device=dev, version=version, **params)

    def tri(method, layout="natural", **params):
        if layout == "interleaved":
            return clts.solve_tridiagonal(a.T, b.T, c.T, d.T, axis=0, version=method,
                                          device=dev, **params)
        return clts.solve_tridiagonal(a, b, c, d, version=method, device=dev, **params)

    def mp(k=1, **params):
        return clts.matrix_profile(T, 10, k=k, device=dev, precision=prec, progress=False,
                                   **params)

    def bfast(version, history="all", **params):
        return clts.bfast_monitor(cube, x["tb"], x["tb"][40], device=dev, version=version,
                                  history=history, progress=False, **params)
    superbee, tke = _ocean(dev, x["ocean"], dt)

    def breaks(**params):
        return clts.bfast_breaks(cube, x["tb"], order=1, h=8, breaks=3, dtype=dt, device=dev,
                                 magnitudes=False, progress=False, **params)

    def trend(variant="original", **params):
        return clts.trend_test(y, variant=variant, period=12 if variant == "seasonal" else None,
                               device=dev, **params)

    def mass(normalize=True, p=2.0, **params):
        return clts.mass(T[5:15], T[None].repeat(2, 0), normalize=normalize, p=p, device=dev,
                         precision=prec, progress=False, **params)

    calls = [(f"stl {v}", lambda v=v: stl(v)) for v in ("auto", "outer", "intragroup", "flat")]
    # the fused STL with missing values and (its other layout) on complete series
    calls += [("stl fused", lambda: stl("auto", fused=64)),
              ("stl fused complete", lambda: clts.stl(np.nan_to_num(y), 12, robust=True,
                                                      outer_iter=1, device=dev, fused=64))]
    calls += [(f"tridiag {m} {l}", lambda m=m, l=l: tri(m, l))
              for m in ("auto",) + tuple(TRIDIAG.values()) for l in ("natural", "interleaved")]
    calls += [(f"mp k={k} {kw}", lambda k=k, kw=kw: mp(k, **kw)) for k in (1, 3)
              for kw in ({}, {"store": "local", "topk_store": "local"},
                         {"store": "private", "topk_store": "private"}, {"merge": "partial"},
                         {"topk_store": "window"})]
    calls += [(f"bfast {v} {h}", lambda v=v, h=h: bfast(v, h)) for v in ("auto", "fused", "multi")
              for h in ("all", "ROC")]
    calls += [(f"superbee {v}", lambda v=v: superbee(v)) for v in ("auto", "fused", "tiled")]
    calls += [(f"tke advection={a}", lambda a=a: tke(advection=a)) for a in ("inline", "stored")]
    calls += [("tke auto", tke)]
    calls += [("bfast BP", lambda: bfast("auto", "BP")), ("bfast_breaks", breaks)]
    # on the A100 and the MI100: strucchange's other monitoring processes (RE / ME: K x K
    # estimates per work-item, in double; docs/bfast.md "Monitoring processes") and per-pixel
    # regressors (the design's last column read per pixel)
    if (getattr(dev, "description", None) or {}).get("_name") in ("a100", "mi100"):
        calls += [(f"bfast {v} type={ty}", lambda v=v, ty=ty: bfast(v, type=ty))
                  for v in ("multi", "fused") for ty in ("OLS-CUSUM", "RE", "ME")]
        calls += [(f"bfast {v} {h} pixel regressors", lambda v=v, h=h: bfast(
            v, h, regressors=np.sin(np.arange(x["cube"].size)).reshape(x["cube"].shape + (1,))))
            for v in ("auto", "fused") for h in ("all", "ROC")]
    calls += [(f"trend {v} {m}", lambda v=v, m=m: trend(v, median=m))
              for v in ("original", "hamed_rao", "yue_wang", "seasonal")
              for m in ("select", "sort")]
    # the covariance kernel of the correlated tests and the pair kernel without slopes of the
    # pre-whitening tests (the others reuse the pair kernel as it is)
    calls += [("trend correlated_multivariate", lambda: clts.trend_test(
        y.reshape(1, *y.shape), variant="correlated_multivariate", device=dev)),
        ("trend pre_whitening", lambda: clts.trend_test(y, variant="pre_whitening",
                                                        device=dev))]
    calls += [(f"mass normalize={z} p={p}", lambda z=z, p=p: mass(z, p))
              for z, p in ((True, 2.0), (False, 2.0), (False, 1.0), (False, 3.0),
                           (False, float("inf")))]

    def mstump(include=None, discords=False, normalize=True, **params):
        X = np.stack([T, T[::-1], np.sin(np.arange(T.size) / 5.0)])
        return clts.mstump(X, 10, include=include, discords=discords, normalize=normalize,
                           device=dev, precision=prec, **params)
    calls += [(f"mstump include={i} discords={dc} normalize={z}",
               lambda i=i, dc=dc, z=z: mstump(i, dc, z))
              for i, dc, z in ((None, False, True), ([2], True, True), ([2], True, False))]

    from .workloads_more import device_calls, mp_calls
    calls += mp_calls(dev, x, dt) + device_calls(dev, x, dt)

    def candidate(section, params):
        algo, _, sub = section.partition(".")
        if section == "stl.fused":
            return stl("auto", fused=params["fused"])
        if algo == "stl":
            return stl(sub, **params)
        if algo == "tridiag":
            tri(TRIDIAG[sub], "natural", **params)
            return tri(TRIDIAG[sub], "interleaved", **params)
        if section == "mp.mass":
            mass(True, 2.0, **params)
            return mass(False, 3.0, **params)
        if section == "mp.mstump":
            return mstump(**params)
        if section in ("mp.subdiag", "mp.mpdist"):     # profile values only, no keywords
            with dev.profile.overlay(section, **params):
                if sub == "subdiag":
                    return clts.prescrump(T, 10, device=dev)
                return clts.ostinato([T[:120], T[40:200], T[::2]], 10, device=dev)
        if algo == "mp":
            return mp(3 if "topk_store" in params else 1, **params)
        if algo == "trend":
            return trend(**params)
        if algo == "bfast":
            if sub == "roc":
                return bfast("auto", "ROC", roc_wg=params["wg"])
            if sub == "breakpoints":
                return breaks(**params)
            return bfast(sub, **params)
        if algo == "ocean" and sub.startswith("superbee"):
            return superbee(sub.partition(".")[2] or "auto", **params)
        if algo == "ocean" and sub.startswith("tke"):
            return tke(**params)
        if algo == "bfast" and not sub:
            return bfast("auto", **params)
        raise ValueError(f"no tiny workload for tuner section {section!r}")
    return select(calls), candidate


def auto_calls(dev, dt, scale: float = 1.0):
    """(label, callable) of ``auto`` on realistic shapes (``SHAPES``; ``scale`` < 1 shrinks the
    batch dimensions, not the series lengths that decide the plans)."""
    import clts
    from ..ocean.inputs import grid_shape, scaled_inputs
    from .workloads_more import stream_call
    rng = np.random.default_rng(5)
    prec = "double" if dt == np.float64 else "single"
    s = lambda n: max(1, int(n * scale))  # noqa: E731
    out = []
    nser, n = SHAPES["stl"]
    t = np.arange(n)
    y = (np.sin(2 * np.pi * t / 23)[None] + rng.normal(size=(s(nser), n))).astype(dt)
    y[0, 10:14] = np.nan
    out.append((f"stl auto {y.shape}", lambda: clts.stl(y, 23, robust=True, device=dev,
                                                          progress=False)))
    N, h, w = SHAPES["bfast"]
    tb = np.arange(N) * 16.0
    cube = (3 + np.sin(2 * np.pi * tb[:, None, None] / 365)
            + 0.3 * rng.standard_normal((N, h, s(w)))).astype(dt)
    for hist in ("all", "ROC"):
        out.append((f"bfast auto {hist} {cube.shape}", lambda hist=hist: clts.bfast_monitor(
            cube, tb, tb[180], history=hist, device=dev, progress=False)))
    nT, m = SHAPES["mp"]
    T = np.cumsum(rng.standard_normal(s(nT)))
    for k in (1, 3):
        out.append((f"mp auto k={k} n={T.size}", lambda k=k: clts.matrix_profile(
            T, m, k=k, device=dev, precision=prec, progress=False)))
    d, nT, m = SHAPES["mstump"]
    X = np.cumsum(rng.standard_normal((d, s(nT))), axis=1)
    out.append((f"mstump auto d={d} n={X.shape[1]}", lambda: clts.mstump(
        X, m, device=dev, precision=prec)))
    out.append((f"stumpi auto n={T.size}", lambda: stream_call(dev, T, m, dt)))
    for nsys, batch in SHAPES["tridiag"]:
        a, c, d = (rng.random((s(batch), nsys)).astype(dt) for _ in range(3))
        b = (3 + rng.random((s(batch), nsys))).astype(dt)
        out.append((f"tridiag auto n={nsys}", lambda a=a, b=b, c=c, d=d:
                    clts.solve_tridiagonal(a, b, c, d, device=dev)))
    inp = scaled_inputs(grid_shape(max(64, int(SHAPES["ocean"] * scale))))
    superbee, tke = _ocean(dev, inp, dt)
    out += [("superbee auto 2^16", superbee), ("tke auto 2^16", tke)]
    # bfast_breaks and trend_test with their own defaults (order=3: K = 8 regressors,
    # breaks=5), only the precision set: what a user's first call builds
    rng2 = np.random.default_rng(6)
    N, h, w = SHAPES["breaks"]
    bcube = cube[:N, :h, :s(w)].copy()
    out.append((f"bfast_breaks auto {bcube.shape}", lambda: clts.bfast_breaks(
        bcube, tb[:N], dtype=dt, device=dev, progress=False)))
    nser, n = SHAPES["trend"]
    ty = (0.01 * np.arange(n) + rng2.normal(size=(s(nser), n))).astype(dt)
    ty[0, 3:7] = np.nan
    out.append((f"trend auto {ty.shape}", lambda: clts.trend_test(ty, device=dev)))
    return select(out)
