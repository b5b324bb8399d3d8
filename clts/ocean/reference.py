"""Plain numpy float64 reference of the Superbee advection fluxes and the TKE routine.

Slow-ish and obvious, written from the semantics of the turbulent kinetic energy routine of the
Veros ocean model as the pyhpc-benchmarks suite times it (docs/ocean.md writes the steps out).
Arithmetic is done in the same order as the kernels do it, so that float64 results agree to a
few ulps wherever the data are not ill-conditioned; the tridiagonal systems are solved with the
Thomas algorithm (no pivoting), vectorised over the water columns.

Grid conventions: arrays are ``[x, y, z]`` (z innermost), time-level arrays ``[x, y, z, 3]``;
two ghost cells on each side in x and y; z has no ghost cells.
"""
from __future__ import annotations

import numpy as np

#: guard of the Superbee ratio's denominator (its magnitude is clamped to at least this)
EPS = 1e-20
#: the benchmark's model constants (keywords of ``tke``)
CONSTANTS = dict(dt_tracer=1.0, dt_mom=1.0, AB_eps=0.1, alpha_tke=1.0, c_eps=0.7, K_h_tke=2000.0)


def superbee_limiter(cr):
    """psi(cr) = max(0, min(1, 2 cr), min(2, cr))."""
    return np.maximum(0.0, np.maximum(np.minimum(1.0, 2.0 * cr), np.minimum(2.0, cr)))


def _face_flux(vel, velfac, qm1, q0, qp1, qp2, mm1, m0, mp1, dx, dt):
    """Superbee flux through the face between cells 0 and +1 along one axis.

    ``vel``: the raw face velocity (its sign picks the upwind side), ``velfac * vel`` the
    transporting one; ``m*``: face masks of the faces -1, 0, +1 (1 where both cells are wet).
    """
    rjp = (qp2 - qp1) * mp1
    rj = (qp1 - q0) * m0
    rjm = (q0 - qm1) * mm1
    cr = superbee_limiter(np.where(vel > 0.0, rjm, rjp) / np.where(np.abs(rj) < EPS, EPS, rj))
    fv = velfac * vel
    ucfl = np.abs(fv * dt / dx)
    return fv * (qp1 + q0) * 0.5 - np.abs(fv) * ((1.0 - cr) + ucfl * cr) * rj * 0.5


def superbee_fluxes(q, u, v, w, maskW, dxt, dyt, dzw, cost, cosu, dt):
    """``(flux_east, flux_north, flux_top)`` of tracer ``q`` ([x, y, z]), each [x, y, z].

    flux_east is set for x in 1 .. nx-3 and y in 2 .. ny-3, flux_north for x in 2 .. nx-3 and
    y in 1 .. ny-3, flux_top for x, y in 2 .. n-3 and z in 0 .. nz-2; zero elsewhere.
    """
    q, u, v, w, maskW = (np.asarray(a, np.float64) for a in (q, u, v, w, maskW))
    dxt, dyt, dzw, cost, cosu = (np.asarray(a, np.float64) for a in (dxt, dyt, dzw, cost, cosu))
    nx, ny, nz = q.shape
    # face masks: wet on both sides, 0 at the last index of the axis
    mx = np.zeros_like(maskW)
    mx[:-1] = maskW[:-1] * maskW[1:]
    my = np.zeros_like(maskW)
    my[:, :-1] = maskW[:, :-1] * maskW[:, 1:]
    mz = np.zeros_like(maskW)
    mz[:, :, :-1] = maskW[:, :, :-1] * maskW[:, :, 1:]

    fe = np.zeros_like(q)
    i = slice(1, nx - 2)
    J = slice(2, ny - 2)
    sh = lambda a, d: a[1 + d:nx - 2 + d, J]  # noqa: E731  x-shifted interior view
    fe[i, J] = _face_flux(u[i, J], 1.0, sh(q, -1), sh(q, 0), sh(q, 1), sh(q, 2),
                          sh(mx, -1), sh(mx, 0), sh(mx, 1),
                          cost[None, J, None] * dxt[i, None, None], dt)

    fn = np.zeros_like(q)
    I = slice(2, nx - 2)
    j = slice(1, ny - 2)
    sh = lambda a, d: a[I, 1 + d:ny - 2 + d]  # noqa: E731
    fn[I, j] = _face_flux(v[I, j], cosu[None, j, None], sh(q, -1), sh(q, 0), sh(q, 1), sh(q, 2),
                          sh(my, -1), sh(my, 0), sh(my, 1), (cost * dyt)[None, j, None], dt)

    ft = np.zeros_like(q)
    # z has no ghost cells: values beyond the column are 0 (and so are their face masks)
    pad = lambda a: np.concatenate([np.zeros_like(a[:, :, :1]), a,  # noqa: E731
                                    np.zeros_like(a[:, :, :1])], axis=2)[I, J]
    qp, mp = pad(q), pad(mz)
    k = slice(0, nz - 1)
    sh = lambda a, d: a[:, :, 1 + d:nz + d]  # noqa: E731  padded index 1 + k + d
    ft[I, J, k] = _face_flux(w[I, J, k], 1.0, sh(qp, -1), sh(qp, 0), sh(qp, 1), sh(qp, 2),
                             sh(mp, -1), sh(mp, 0), sh(mp, 1), dzw[None, None, k], dt)
    return fe, fn, ft


def thomas_columns(a, b, c, d):
    """Thomas algorithm along the last axis, vectorised over the others (no pivoting)."""
    n = b.shape[-1]
    cp = np.empty_like(b)
    dp = np.empty_like(b)
    cp[..., 0] = c[..., 0] / b[..., 0]
    dp[..., 0] = d[..., 0] / b[..., 0]
    for k in range(1, n):
        den = b[..., k] - a[..., k] * cp[..., k - 1]
        cp[..., k] = c[..., k] / den
        dp[..., k] = (d[..., k] - a[..., k] * dp[..., k - 1]) / den
    x = np.empty_like(b)
    x[..., n - 1] = dp[..., n - 1]
    for k in range(n - 2, -1, -1):
        x[..., k] = dp[..., k] - cp[..., k] * x[..., k + 1]
    return x


def tke_systems(kbot, kappaM, mxl, forc, forc_tke_surface, tke_tau, dzt, dzw, *, dt_tke,
                alpha_tke, c_eps):
    """The implicit vertical-diffusion systems of the interior columns (x, y in 2 .. n-3).

    Returns ``(ks, a, b, c, d)``: ``ks = kbot - 1`` is each column's first wet level (< 0: land),
    rows ``k >= ks`` form the system (row ks uses the bottom-edge diagonal, its ``a`` unused).
    """
    I = (slice(2, -2), slice(2, -2))
    nz = kappaM.shape[2]
    ks = np.asarray(kbot)[I].astype(np.int64) - 1
    kM, ml, fo = kappaM[I], mxl[I], forc[I]
    sq = np.sqrt(np.maximum(0.0, tke_tau[I]))
    delta = np.zeros_like(kM)
    delta[..., :-1] = dt_tke / dzt[1:] * alpha_tke * 0.5 * (kM[..., :-1] + kM[..., 1:])
    a = np.zeros_like(kM)
    b = np.zeros_like(kM)
    c = np.zeros_like(kM)
    half_top = 0.5 * dzw[-1]
    a[..., 1:-1] = -delta[..., :-2] / dzw[1:-1]
    a[..., -1] = -delta[..., -2] / half_top
    b[..., 1:-1] = 1.0 + (delta[..., 1:-1] + delta[..., :-2]) / dzw[1:-1] + \
        dt_tke * c_eps * sq[..., 1:-1] / ml[..., 1:-1]
    b[..., -1] = 1.0 + delta[..., -2] / half_top + dt_tke * c_eps / ml[..., -1] * sq[..., -1]
    b_edge = 1.0 + delta / dzw + dt_tke * c_eps / ml * sq
    c[..., :-1] = -delta[..., :-1] / dzw[:-1]
    d = tke_tau[I] + dt_tke * fo
    d[..., -1] += dt_tke * forc_tke_surface[I] / half_top
    lev = np.arange(nz)
    edge = lev == ks[..., None]
    b = np.where(edge, b_edge, b)
    return ks, a, b, c, d


def tke(u, v, w, maskU, maskV, maskW, dxt, dxu, dyt, dyu, dzt, dzw, cost, cosu, kbot, kappaM,
        mxl, forc, forc_tke_surface, tke, dtke, *, tau=0, taup1=1, taum1=2, **constants):
    """One TKE step; returns new ``(tke, dtke, tke_surf_corr)`` (inputs are not modified).

    ``constants``: ``dt_tracer``, ``dt_mom``, ``AB_eps``, ``alpha_tke``, ``c_eps``, ``K_h_tke``
    (defaults: the benchmark's, ``CONSTANTS``).
    """
    cst = dict(CONSTANTS)
    unknown = set(constants) - set(cst)
    if unknown:
        raise TypeError(f"unknown constant(s) {sorted(unknown)}")
    cst.update(constants)
    f64 = lambda a: np.array(a, np.float64)  # noqa: E731  fresh copies
    u, v, w, maskU, maskV, maskW, kappaM, mxl, forc, forc_tke_surface = (
        f64(a) for a in (u, v, w, maskU, maskV, maskW, kappaM, mxl, forc, forc_tke_surface))
    dxt, dxu, dyt, dyu, dzt, dzw, cost, cosu = (
        f64(a) for a in (dxt, dxu, dyt, dyu, dzt, dzw, cost, cosu))
    tke, dtke = f64(tke), f64(dtke)
    dt = cst["dt_mom"]                  # the TKE equation steps with the momentum time step
    nx, ny, nz = maskW.shape
    I = (slice(2, nx - 2), slice(2, ny - 2))
    t0 = tke[..., tau]

    # 1. implicit vertical diffusion and dissipation: a tridiagonal system per wet column
    ks, a, b, c, d = tke_systems(kbot, kappaM, mxl, forc, forc_tke_surface, t0, dzt, dzw,
                                 dt_tke=dt, alpha_tke=cst["alpha_tke"], c_eps=cst["c_eps"])
    lev = np.arange(nz)
    wet = (ks[..., None] >= 0) & (lev >= ks[..., None])
    a = np.where(wet & (lev != ks[..., None]), a, 0.0)   # rows decoupled below the start row
    b = np.where(wet, b, 1.0)
    c = np.where(wet, c, 0.0)
    d = np.where(wet, d, 0.0)
    sol = thomas_columns(a, b, c, d)
    t1 = tke[..., taup1]
    t1[I] = np.where(wet, sol, t1[I])

    # 2. surface correction: TKE drained by the surface density flux is put back
    corr = np.zeros((nx, ny))
    top = t1[I][..., -1]
    corr[I] = np.where(top < 0.0, -top * 0.5 * dzw[-1] / dt, 0.0)
    t1[I + (nz - 1,)] = np.maximum(0.0, top)

    # 3. lateral diffusion (explicit)
    fe = np.zeros((nx, ny, nz))
    fn = np.zeros((nx, ny, nz))
    K = cst["K_h_tke"]
    fe[:-1] = K * (t0[1:] - t0[:-1]) / (cost[None, :, None] * dxu[:-1, None, None]) * maskU[:-1]
    fn[:, :-1] = K * (t0[:, 1:] - t0[:, :-1]) / dyu[None, :-1, None] * maskV[:, :-1] * \
        cosu[None, :-1, None]
    cdx = cost[None, 2:-2, None] * dxt[2:-2, None, None]
    cdy = cost[None, 2:-2, None] * dyt[None, 2:-2, None]
    div_e = lambda f: (f[2:-2, 2:-2] - f[1:-3, 2:-2]) / cdx  # noqa: E731
    div_n = lambda f: (f[2:-2, 2:-2] - f[2:-2, 1:-3]) / cdy  # noqa: E731
    t1[I] += dt * maskW[I] * (div_e(fe) + div_n(fn))

    # 4. advection of tke by Superbee fluxes -> tendency dtke[tau]
    fe, fn, ft = superbee_fluxes(t0, u[..., tau], v[..., tau], w[..., tau], maskW, dxt, dyt,
                                 dzw, cost, cosu, cst["dt_tracer"])
    d0 = dtke[..., tau]
    d0[I] = maskW[I] * (-div_e(fe) - div_n(fn))
    d0[:, :, 0] += -ft[:, :, 0] / dzw[0]
    d0[:, :, 1:-1] += -(ft[:, :, 1:-1] - ft[:, :, :-2]) / dzw[1:-1]
    d0[:, :, -1] += -(ft[:, :, -1] - ft[:, :, -2]) / (0.5 * dzw[-1])

    # 5. Adams-Bashforth step of tke[taup1] over the whole grid
    eps = cst["AB_eps"]
    t1 += cst["dt_tracer"] * ((1.5 + eps) * d0 - (0.5 + eps) * dtke[..., taum1])
    return tke, dtke, corr
