"""A single-threaded numba version of the TKE step (the benchmark's numba anchor), written from
the semantics in docs/ocean.md: loops over the grid, one Thomas solve per wet column.

``tke_numba(*inputs)`` takes the 21 inputs in ``clts.ocean.inputs.NAMES`` order and returns new
``(tke, dtke, tke_surf_corr)`` (inputs are not modified); the model constants are the
benchmark's. ``None`` when numba is not installed.
"""
from __future__ import annotations

import numpy as np

try:
    import numba
except ImportError:  # pragma: no cover
    numba = None


def _build():
    jit = numba.njit(cache=True, fastmath=True, nogil=True)

    @jit
    def limiter(cr):
        return max(0.0, max(min(1.0, 2.0 * cr), min(2.0, cr)))

    @jit
    def face(vel, fv, qm1, q0, qp1, qp2, mm1, m0, mp1, dx, dt):
        rjp = (qp2 - qp1) * mp1
        rj = (qp1 - q0) * m0
        rjm = (q0 - qm1) * mm1
        den = 1e-20 if abs(rj) < 1e-20 else rj
        cr = limiter((rjm if vel > 0.0 else rjp) / den)
        ucfl = abs(fv * dt / dx)
        return fv * (qp1 + q0) * 0.5 - abs(fv) * ((1.0 - cr) + ucfl * cr) * rj * 0.5

    @jit
    def step(u, v, w, maskU, maskV, maskW, dxt, dxu, dyt, dyu, dzt, dzw, cost, cosu, kbot,
             kappaM, mxl, forc, forc_tke_surface, tke_in, dtke_in):
        tau, taup1, taum1 = 0, 1, 2
        dt_tracer, dt, AB_eps, alpha, c_eps, K = 1.0, 1.0, 0.1, 1.0, 0.7, 2000.0
        nx, ny, nz = maskW.shape
        tke = tke_in.copy()
        dtke = dtke_in.copy()
        corr = np.zeros((nx, ny))
        a = np.empty(nz)
        b = np.empty(nz)
        c = np.empty(nz)
        d = np.empty(nz)
        delta = np.empty(nz)
        half = 0.5 * dzw[nz - 1]
        # 1-2. vertical implicit solve per wet column, surface correction
        for i in range(2, nx - 2):
            for j in range(2, ny - 2):
                ks = kbot[i, j] - 1
                if ks >= 0:
                    for k in range(nz - 1):
                        delta[k] = dt / dzt[k + 1] * alpha * 0.5 * (kappaM[i, j, k] + kappaM[i, j, k + 1])
                    delta[nz - 1] = 0.0
                    for k in range(ks, nz):
                        sq = np.sqrt(max(0.0, tke[i, j, k, tau]))
                        if k == nz - 1:
                            a[k] = -delta[k - 1] / half if k > 0 else 0.0
                            b[k] = 1.0 + (delta[k - 1] / half if k > 0 else 0.0) + dt * c_eps / mxl[i, j, k] * sq
                            c[k] = 0.0
                        else:
                            a[k] = -delta[k - 1] / dzw[k] if k > 0 else 0.0
                            b[k] = 1.0 + (delta[k] + (delta[k - 1] if k > 0 else 0.0)) / dzw[k] + dt * c_eps * sq / mxl[i, j, k]
                            c[k] = -delta[k] / dzw[k]
                        if k == ks:
                            b[k] = 1.0 + delta[k] / dzw[k] + dt * c_eps / mxl[i, j, k] * sq
                        d[k] = tke[i, j, k, tau] + dt * forc[i, j, k]
                    d[nz - 1] += dt * forc_tke_surface[i, j] / half
                    for k in range(ks + 1, nz):       # Thomas, forward
                        m = a[k] / b[k - 1]
                        b[k] -= m * c[k - 1]
                        d[k] -= m * d[k - 1]
                    x = d[nz - 1] / b[nz - 1]
                    tke[i, j, nz - 1, taup1] = x
                    for k in range(nz - 2, ks - 1, -1):
                        x = (d[k] - c[k] * x) / b[k]
                        tke[i, j, k, taup1] = x
                top = tke[i, j, nz - 1, taup1]
                if top < 0.0:
                    corr[i, j] = -top * 0.5 * dzw[nz - 1] / dt
                    tke[i, j, nz - 1, taup1] = 0.0
        # 3-4. lateral diffusion and Superbee advection
        q = tke_in[:, :, :, tau]
        mw = maskW
        for i in range(2, nx - 2):
            for j in range(2, ny - 2):
                cdx = cost[j] * dxt[i]
                cdy = cost[j] * dyt[j]
                ft_below = 0.0
                for k in range(nz):
                    t0 = tke[i, j, k, tau]
                    fe1 = K * (tke[i + 1, j, k, tau] - t0) / (cost[j] * dxu[i]) * maskU[i, j, k]
                    fe0 = K * (t0 - tke[i - 1, j, k, tau]) / (cost[j] * dxu[i - 1]) * maskU[i - 1, j, k]
                    fn1 = K * (tke[i, j + 1, k, tau] - t0) / dyu[j] * maskV[i, j, k] * cosu[j]
                    fn0 = K * (t0 - tke[i, j - 1, k, tau]) / dyu[j - 1] * maskV[i, j - 1, k] * cosu[j - 1]
                    tke[i, j, k, taup1] += dt * maskW[i, j, k] * ((fe1 - fe0) / cdx + (fn1 - fn0) / cdy)
                    ae0 = face(u[i - 1, j, k, tau], u[i - 1, j, k, tau], q[i - 2, j, k],
                               q[i - 1, j, k], t0, q[i + 1, j, k], mw[i - 2, j, k] * mw[i - 1, j, k],
                               mw[i - 1, j, k] * mw[i, j, k], mw[i, j, k] * mw[i + 1, j, k],
                               cost[j] * dxt[i - 1], dt_tracer)
                    ae1 = face(u[i, j, k, tau], u[i, j, k, tau], q[i - 1, j, k], t0, q[i + 1, j, k],
                               q[i + 2, j, k], mw[i - 1, j, k] * mw[i, j, k],
                               mw[i, j, k] * mw[i + 1, j, k], mw[i + 1, j, k] * mw[i + 2, j, k],
                               cdx, dt_tracer)
                    v0 = v[i, j - 1, k, tau]
                    v1 = v[i, j, k, tau]
                    an0 = face(v0, cosu[j - 1] * v0, q[i, j - 2, k], q[i, j - 1, k], t0, q[i, j + 1, k],
                               mw[i, j - 2, k] * mw[i, j - 1, k], mw[i, j - 1, k] * mw[i, j, k],
                               mw[i, j, k] * mw[i, j + 1, k], cost[j - 1] * dyt[j - 1], dt_tracer)
                    an1 = face(v1, cosu[j] * v1, q[i, j - 1, k], t0, q[i, j + 1, k], q[i, j + 2, k],
                               mw[i, j - 1, k] * mw[i, j, k], mw[i, j, k] * mw[i, j + 1, k],
                               mw[i, j + 1, k] * mw[i, j + 2, k], cdy, dt_tracer)
                    ft = 0.0
                    if k < nz - 1:
                        qm1 = q[i, j, k - 1] if k > 0 else 0.0
                        mm1 = mw[i, j, k - 1] * mw[i, j, k] if k > 0 else 0.0
                        qp2 = q[i, j, k + 2] if k + 2 < nz else 0.0
                        mp1 = mw[i, j, k + 1] * mw[i, j, k + 2] if k + 2 < nz else 0.0
                        vel = w[i, j, k, tau]
                        ft = face(vel, vel, qm1, q[i, j, k], q[i, j, k + 1], qp2, mm1,
                                  mw[i, j, k] * mw[i, j, k + 1], mp1, dzw[k], dt_tracer)
                    dnew = maskW[i, j, k] * (-(ae1 - ae0) / cdx - (an1 - an0) / cdy)
                    if k == 0:
                        dnew += -ft / dzw[0]
                    elif k < nz - 1:
                        dnew += -(ft - ft_below) / dzw[k]
                    else:
                        dnew += -(ft - ft_below) / half
                    dtke[i, j, k, tau] = dnew
                    ft_below = ft
        # 5. Adams-Bashforth over the whole grid
        for i in range(nx):
            for j in range(ny):
                for k in range(nz):
                    tke[i, j, k, taup1] += dt_tracer * ((1.5 + AB_eps) * dtke[i, j, k, tau]
                                                        - (0.5 + AB_eps) * dtke[i, j, k, taum1])
        return tke, dtke, corr

    return step


tke_numba = _build() if numba is not None else None
