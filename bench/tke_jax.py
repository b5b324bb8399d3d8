"""The TKE step in JAX, the GPU anchor of ``clts.ocean.tke`` (bench/gpu_scale.py times it).

How pyhpc-benchmarks runs its JAX backend (benchmarks/turbulent_kinetic_energy/tke_jax.py and
backends.py of github.com/dionhaefner/pyhpc-benchmarks): 64-bit floats enabled
(``jax_enable_x64``), the whole step one ``jax.jit`` function, the implicit vertical systems
solved by the Thomas algorithm as two ``jax.lax.scan`` sweeps over the levels, inputs placed
on the device beforehand, and each timed call waiting on its outputs (``block_until_ready``).
This port follows those choices; its arithmetic is written from clts's own numpy reference
(clts/ocean/reference.py, the same model constants), so its results can be compared with
``clts.ocean.reference.tke`` and ``clts.ocean.tke``.

    python bench/tke_jax.py [--size 16]   # checks the port against the numpy reference
"""
from __future__ import annotations

import argparse
import sys

EPS = 1e-20
CONSTANTS = dict(dt_tracer=1.0, dt_mom=1.0, AB_eps=0.1, alpha_tke=1.0, c_eps=0.7, K_h_tke=2000.0)


def _jax():
    import os
    # JAX would take 75 % of the GPU's memory at its first array: the OpenCL calls measured
    # after it in the same process (bench/gpu_scale.py) need theirs
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def build():
    """The jitted step ``step(*inputs) -> (tke, dtke, tke_surf_corr)`` (inputs in
    ``clts.ocean.inputs.NAMES`` order)."""
    jax = _jax()
    import jax.numpy as jnp
    lax = jax.lax

    def limiter(cr):
        return jnp.maximum(0.0, jnp.maximum(jnp.minimum(1.0, 2.0 * cr), jnp.minimum(2.0, cr)))

    def face(vel, velfac, qs, ms, dx, dt):
        qm1, q0, qp1, qp2 = qs
        mm1, m0, mp1 = ms
        up, here, down = (qp2 - qp1) * mp1, (qp1 - q0) * m0, (q0 - qm1) * mm1
        ratio = jnp.where(vel > 0.0, down, up) / jnp.where(jnp.abs(here) < EPS, EPS, here)
        cr = limiter(ratio)
        fv = velfac * vel
        cfl = jnp.abs(fv * dt / dx)
        return fv * (qp1 + q0) * 0.5 - jnp.abs(fv) * ((1.0 - cr) + cfl * cr) * here * 0.5

    def fluxes(q, u, v, w, maskW, dxt, dyt, dzw, cost, cosu, dt):
        nx, ny, nz = q.shape
        zero = jnp.zeros_like(q)
        mx = zero.at[:-1].set(maskW[:-1] * maskW[1:])
        my = zero.at[:, :-1].set(maskW[:, :-1] * maskW[:, 1:])
        mz = zero.at[:, :, :-1].set(maskW[:, :, :-1] * maskW[:, :, 1:])
        # east faces: x in 1 .. nx-3, y interior
        xs = lambda a, s: a[1 + s:nx - 2 + s, 2:ny - 2]  # noqa: E731
        fe = zero.at[1:nx - 2, 2:ny - 2].set(face(
            u[1:nx - 2, 2:ny - 2], 1.0, [xs(q, s) for s in (-1, 0, 1, 2)],
            [xs(mx, s) for s in (-1, 0, 1)], cost[None, 2:ny - 2, None] * dxt[1:nx - 2, None, None],
            dt))
        ys = lambda a, s: a[2:nx - 2, 1 + s:ny - 2 + s]  # noqa: E731
        fn = zero.at[2:nx - 2, 1:ny - 2].set(face(
            v[2:nx - 2, 1:ny - 2], cosu[None, 1:ny - 2, None], [ys(q, s) for s in (-1, 0, 1, 2)],
            [ys(my, s) for s in (-1, 0, 1)], (cost * dyt)[None, 1:ny - 2, None], dt))
        # top faces: no ghost levels, zeros beyond the column
        pad = lambda a: jnp.pad(a[2:nx - 2, 2:ny - 2], ((0, 0), (0, 0), (1, 1)))  # noqa: E731
        qp, mp = pad(q), pad(mz)
        zs = lambda a, s: a[:, :, 1 + s:nz + s]  # noqa: E731
        ft = zero.at[2:nx - 2, 2:ny - 2, :nz - 1].set(face(
            w[2:nx - 2, 2:ny - 2, :nz - 1], 1.0, [zs(qp, s) for s in (-1, 0, 1, 2)],
            [zs(mp, s) for s in (-1, 0, 1)], dzw[None, None, :nz - 1], dt))
        return fe, fn, ft

    def thomas(a, b, c, d):
        """Thomas sweeps along the last axis as two scans over the levels."""
        rows = tuple(jnp.moveaxis(x, -1, 0) for x in (a, b, c, d))

        def forward(carry, row):
            cp, dp = carry
            ak, bk, ck, dk = row
            den = bk - ak * cp
            nxt = (ck / den, (dk - ak * dp) / den)
            return nxt, nxt

        zero = jnp.zeros_like(rows[1][0])
        _, (cps, dps) = lax.scan(forward, (zero, zero), rows)

        def backward(x, row):
            cp, dp = row
            x = dp - cp * x
            return x, x

        _, xs = lax.scan(backward, zero, (cps, dps), reverse=True)
        return jnp.moveaxis(xs, 0, -1)

    def step(u, v, w, maskU, maskV, maskW, dxt, dxu, dyt, dyu, dzt, dzw, cost, cosu, kbot,
             kappaM, mxl, forc, forc_tke_surface, tke, dtke):
        tau, taup1, taum1 = 0, 1, 2
        c = CONSTANTS
        dt = c["dt_mom"]
        nx, ny, nz = maskW.shape
        I = (slice(2, nx - 2), slice(2, ny - 2))
        t0 = tke[..., tau]
        # 1. implicit vertical diffusion and dissipation, one system per wet column
        ks = kbot[I] - 1
        kM, ml, fo = kappaM[I], mxl[I], forc[I]
        sq = jnp.sqrt(jnp.maximum(0.0, t0[I]))
        half = 0.5 * dzw[-1]
        delta = jnp.zeros_like(kM).at[..., :-1].set(
            dt / dzt[1:] * c["alpha_tke"] * 0.5 * (kM[..., :-1] + kM[..., 1:]))
        lo = jnp.zeros_like(kM).at[..., 1:-1].set(-delta[..., :-2] / dzw[1:-1])
        lo = lo.at[..., -1].set(-delta[..., -2] / half)
        diag = jnp.zeros_like(kM).at[..., 1:-1].set(
            1.0 + (delta[..., 1:-1] + delta[..., :-2]) / dzw[1:-1]
            + dt * c["c_eps"] * sq[..., 1:-1] / ml[..., 1:-1])
        diag = diag.at[..., -1].set(
            1.0 + delta[..., -2] / half + dt * c["c_eps"] / ml[..., -1] * sq[..., -1])
        edge_diag = 1.0 + delta / dzw + dt * c["c_eps"] / ml * sq
        up = jnp.zeros_like(kM).at[..., :-1].set(-delta[..., :-1] / dzw[:-1])
        rhs = (t0[I] + dt * fo).at[..., -1].add(dt * forc_tke_surface[I] / half)
        lev = jnp.arange(nz)
        edge = lev == ks[..., None]
        wet = (ks[..., None] >= 0) & (lev >= ks[..., None])
        sol = thomas(jnp.where(wet & ~edge, lo, 0.0),
                     jnp.where(wet, jnp.where(edge, edge_diag, diag), 1.0),
                     jnp.where(wet, up, 0.0), jnp.where(wet, rhs, 0.0))
        t1 = tke[..., taup1]
        t1 = t1.at[I].set(jnp.where(wet, sol, t1[I]))
        # 2. surface correction
        top = t1[I][..., -1]
        corr = jnp.zeros((nx, ny), tke.dtype).at[I].set(
            jnp.where(top < 0.0, -top * half / dt, 0.0))
        t1 = t1.at[I + (nz - 1,)].set(jnp.maximum(0.0, top))
        # 3. lateral diffusion
        K = c["K_h_tke"]
        fe = jnp.zeros_like(t0).at[:-1].set(
            K * (t0[1:] - t0[:-1]) / (cost[None, :, None] * dxu[:-1, None, None]) * maskU[:-1])
        fn = jnp.zeros_like(t0).at[:, :-1].set(
            K * (t0[:, 1:] - t0[:, :-1]) / dyu[None, :-1, None] * maskV[:, :-1]
            * cosu[None, :-1, None])
        cdx = cost[None, 2:-2, None] * dxt[2:-2, None, None]
        cdy = cost[None, 2:-2, None] * dyt[None, 2:-2, None]

        def div(fe, fn):
            return ((fe[2:-2, 2:-2] - fe[1:-3, 2:-2]) / cdx
                    + (fn[2:-2, 2:-2] - fn[2:-2, 1:-3]) / cdy)

        t1 = t1.at[I].add(dt * maskW[I] * div(fe, fn))
        # 4. Superbee advection -> dtke[tau]
        fe, fn, ft = fluxes(t0, u[..., tau], v[..., tau], w[..., tau], maskW, dxt, dyt, dzw,
                            cost, cosu, c["dt_tracer"])
        d0 = dtke[..., tau].at[I].set(-maskW[I] * div(fe, fn))
        d0 = d0.at[:, :, 0].add(-ft[:, :, 0] / dzw[0])
        d0 = d0.at[:, :, 1:-1].add(-(ft[:, :, 1:-1] - ft[:, :, :-2]) / dzw[1:-1])
        d0 = d0.at[:, :, -1].add(-(ft[:, :, -1] - ft[:, :, -2]) / half)
        # 5. Adams-Bashforth
        eps = c["AB_eps"]
        t1 = t1 + c["dt_tracer"] * ((1.5 + eps) * d0 - (0.5 + eps) * dtke[..., taum1])
        return tke.at[..., taup1].set(t1), dtke.at[..., tau].set(d0), corr

    return jax.jit(step)


def on_device(inputs):
    """The inputs (a dict or sequence of numpy arrays) placed on JAX's default device."""
    jax = _jax()
    vals = list(inputs.values()) if isinstance(inputs, dict) else list(inputs)
    out = [jax.device_put(v) for v in vals]
    for o in out:
        o.block_until_ready()
    return out


def runner(inputs):
    """(run, device name): ``run()`` makes one step on device-resident inputs and waits for
    it (pyhpc-benchmarks' convention); the first call compiles."""
    jax = _jax()
    step = build()
    dx = on_device(inputs)

    def run():
        out = step(*dx)
        for o in out:
            o.block_until_ready()
        return out
    return run, str(jax.devices()[0])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=16, help="problem size 2^SIZE (default 16)")
    args = ap.parse_args(argv)
    import numpy as np

    from clts.ocean import reference
    from clts.ocean.inputs import benchmark_inputs
    x = benchmark_inputs(2 ** args.size)
    run, where = runner(x)
    got = [np.asarray(o) for o in run()]
    want = reference.tke(*x.values())
    worst = max(float(np.max(np.abs(g - r) / (1 + np.abs(r)))) for g, r in zip(got, want))
    ok = all(np.allclose(g, r, rtol=1e-10, atol=1e-10) for g, r in zip(got, want))
    print(f"JAX on {where}: largest relative difference from the numpy reference {worst:.2e}"
          f" ({'ok' if ok else 'DIFFERS'})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
