## The turbulent kinetic energy step around the batched tridiagonal solve (docs/ocean.md):
##   tke_systems  one work-item per cell of the interior columns: row k of the column's implicit
##                vertical-diffusion system (a, b, c, d, natural layout [column][z]) and, from
##                the k = 0 work-item, the column's start row ks = kbot - 1 (< 0: land).
##   tke_step     one work-item per cell of the whole grid, after the solve: the new tke[taup1]
##                (solution on wet levels, surface correction, lateral diffusion, Adams-Bashforth
##                step), the Superbee advection tendency dtke[tau] (the six face fluxes of the
##                cell computed in place from the tracer read once), every other time level
##                copied, and tke_surf_corr from the top work-item of each column.
## Parameters: real; T (time levels of tke, dtke, u, v, w: their last axis), TAU, TAUP1, TAUM1.
<%include file="/ocean/common.cl.mako"/>
#define AT(c, lev) ((c) * ${T} + (lev))

__kernel void tke_systems(__global const int* restrict kbot, __global const real* restrict kappaM,
                          __global const real* restrict mxl, __global const real* restrict forc,
                          __global const real* restrict forc_surf,
                          __global const real* restrict tke, __global const real* restrict dzt,
                          __global const real* restrict dzw, const real dt, const real alpha,
                          const real dt_c_eps,
                          __global real* restrict a, __global real* restrict b,
                          __global real* restrict c, __global real* restrict d,
                          __global int* restrict start, const int nx, const int ny, const int nz)
{
    const int k = get_global_id(0), jj = get_global_id(1), ii = get_global_id(2);
    if (k >= nz || jj >= ny - 4 || ii >= nx - 4) return;
    const int i = ii + 2, j = jj + 2;
    const size_t cell = CELL(i, j, k);
    const size_t col = (size_t)ii * (size_t)(ny - 4) + (size_t)jj;
    const size_t r = col * (size_t)nz + (size_t)k;
    const int ks = kbot[(size_t)i * ny + j] - 1;
    if (k == 0)
        start[col] = ks;
    const bool top = k == nz - 1;
    /* delta[k] = dt / dzt[k+1] * alpha * (kappaM[k] + kappaM[k+1]) / 2, 0 at the top */
    const real dk = top ? (real)0 :
        dt / dzt[min(k + 1, nz - 1)] * alpha * (real)0.5 * (kappaM[cell] + kappaM[cell + (top ? 0 : 1)]);
    const real dkm1 = k == 0 ? (real)0 :
        dt / dzt[k] * alpha * (real)0.5 * (kappaM[cell - (k == 0 ? 0 : 1)] + kappaM[cell]);
    const real t0 = tke[AT(cell, ${TAU})];
    const real sq = sqrt(fmax((real)0, t0));
    const real ml = mxl[cell];
    const real half_top = (real)0.5 * dzw[nz - 1];
    const real dz = dzw[k];
    real av, bv, cv;
    if (top) {
        av = -dkm1 / half_top;
        bv = (real)1 + dkm1 / half_top + dt_c_eps / ml * sq;
        cv = (real)0;
    } else {
        av = -dkm1 / dz;
        bv = (real)1 + (dk + dkm1) / dz + dt_c_eps * sq / ml;
        cv = -dk / dz;
    }
    if (k == ks)                       /* bottom edge of the column: no coupling below */
        bv = (real)1 + dk / dz + dt_c_eps / ml * sq;
    real dv = t0 + dt * forc[cell];
    if (top)
        dv += dt * forc_surf[(size_t)i * ny + j] / half_top;
    a[r] = av;
    b[r] = bv;
    c[r] = cv;
    d[r] = dv;
}

<%def name="face(axis, lo)">\
## Superbee flux through face (lo -> lo+1) along axis, of the cell's own line of values
## Q[-2..2], M[-2..2] (index + 2 in the arrays q_, m_ of that axis)
superbee_flux(${axis}vel[${lo + 2}], ${axis}fv[${lo + 2}], q${axis}[${lo + 1}], q${axis}[${lo + 2}], q${axis}[${lo + 3}], q${axis}[${lo + 4}], m${axis}[${lo + 1}] * m${axis}[${lo + 2}], m${axis}[${lo + 2}] * m${axis}[${lo + 3}], m${axis}[${lo + 3}] * m${axis}[${lo + 4}], ${axis}dx[${lo + 2}], dt_tracer)\
</%def>

__kernel void tke_step(__global const real* restrict tke, __global const real* restrict dtke,
                       __global const real* restrict u, __global const real* restrict v,
                       __global const real* restrict w, __global const real* restrict maskU,
                       __global const real* restrict maskV, __global const real* restrict maskW,
                       __global const real* restrict dxt, __global const real* restrict dxu,
                       __global const real* restrict dyt, __global const real* restrict dyu,
                       __global const real* restrict dzw, __global const real* restrict cost,
                       __global const real* restrict cosu, __global const int* restrict kbot,
                       __global const real* restrict sol, const real dt, const real dt_tracer,
                       const real K_h, const real ab_new, const real ab_old,
                       __global real* restrict tke_out, __global real* restrict dtke_out,
                       __global real* restrict corr, const int nx, const int ny, const int nz)
{
    const int k = get_global_id(0), j = get_global_id(1), i = get_global_id(2);
    if (k >= nz || j >= ny || i >= nx) return;
    const size_t c = CELL(i, j, k);
    const size_t sx = (size_t)ny * nz;
    const real t0 = tke[AT(c, ${TAU})];
    real t1 = tke[AT(c, ${TAUP1})];
    real d0 = dtke[AT(c, ${TAU})];
    const real dold = dtke[AT(c, ${TAUM1})];
    const bool top = k == nz - 1;
    if (i >= 2 && i <= nx - 3 && j >= 2 && j <= ny - 3) {
        /* 1. the implicit vertical solve on the column's wet levels k >= ks */
        const int ks = kbot[(size_t)i * ny + j] - 1;
        if (ks >= 0 && k >= ks)
            t1 = sol[((size_t)(i - 2) * (size_t)(ny - 4) + (size_t)(j - 2)) * (size_t)nz + k];
        /* 2. surface correction: negative tke in the top box is put back as a flux */
        if (top) {
            corr[(size_t)i * ny + j] = t1 < (real)0 ? -t1 * (real)0.5 * dzw[nz - 1] / dt : (real)0;
            t1 = t1 < (real)0 ? (real)0 : t1;
        }
        const real mw = maskW[c];
        const real cdx = cost[j] * dxt[i], cdy = cost[j] * dyt[j];
        /* 3. lateral diffusion of tke[tau] */
        {
            const real te = tke[AT(c + sx, ${TAU})], tw = tke[AT(c - sx, ${TAU})];
            const real tn = tke[AT(c + nz, ${TAU})], ts = tke[AT(c - nz, ${TAU})];
            const real fe1 = K_h * (te - t0) / (cost[j] * dxu[i]) * maskU[c];
            const real fe0 = K_h * (t0 - tw) / (cost[j] * dxu[i - 1]) * maskU[c - sx];
            const real fn1 = K_h * (tn - t0) / dyu[j] * maskV[c] * cosu[j];
            const real fn0 = K_h * (t0 - ts) / dyu[j - 1] * maskV[c - nz] * cosu[j - 1];
            t1 += dt * mw * ((fe1 - fe0) / cdx + (fn1 - fn0) / cdy);
        }
        /* 4. Superbee advection of tke[tau]: fluxes through the six faces of the cell */
        {
            real qx[5], mx[5], qy[5], my[5], qz[5], mz[5];
%   for o in range(-2, 3):
            qx[${o + 2}] = tke[AT(c ${"%+d" % o} * (long)sx, ${TAU})]; mx[${o + 2}] = maskW[c ${"%+d" % o} * (long)sx];
            qy[${o + 2}] = tke[AT(c ${"%+d" % o} * (long)nz, ${TAU})]; my[${o + 2}] = maskW[c ${"%+d" % o} * (long)nz];
%     if o == 0:
            qz[2] = t0; mz[2] = mw;
%     else:
            {
                const bool in = k ${"%+d" % o} >= 0 && k ${"%+d" % o} < nz;
                const size_t cz = CELL(i, j, clamp(k ${"%+d" % o}, 0, nz - 1));
                qz[${o + 2}] = in ? tke[AT(cz, ${TAU})] : (real)0;
                mz[${o + 2}] = in ? maskW[cz] : (real)0;
            }
%     endif
%   endfor
            /* face velocities and spacings of faces -1 (index 1) and 0 (index 2) */
            real xvel[3], xfv[3], xdx[3], yvel[3], yfv[3], ydx[3], zvel[3], zfv[3], zdx[3];
            xvel[1] = u[AT(c - sx, ${TAU})]; xvel[2] = u[AT(c, ${TAU})];
            xfv[1] = xvel[1]; xfv[2] = xvel[2];
            xdx[1] = cost[j] * dxt[i - 1]; xdx[2] = cdx;
            yvel[1] = v[AT(c - nz, ${TAU})]; yvel[2] = v[AT(c, ${TAU})];
            yfv[1] = cosu[j - 1] * yvel[1]; yfv[2] = cosu[j] * yvel[2];
            ydx[1] = cost[j - 1] * dyt[j - 1]; ydx[2] = cdy;
            zvel[1] = w[AT(CELL(i, j, max(k - 1, 0)), ${TAU})]; zvel[2] = w[AT(c, ${TAU})];
            zfv[1] = zvel[1]; zfv[2] = zvel[2];
            zdx[1] = dzw[max(k - 1, 0)]; zdx[2] = dzw[min(k, nz - 2)];
            const real fe1 = ${face("x", 0)};
            const real fe0 = ${face("x", -1)};
            const real fn1 = ${face("y", 0)};
            const real fn0 = ${face("y", -1)};
            const real ft1 = top ? (real)0 : ${face("z", 0)};
            const real ft0 = k == 0 ? (real)0 : ${face("z", -1)};
            d0 = mw * (-(fe1 - fe0) / cdx - (fn1 - fn0) / cdy);
            if (k == 0)
                d0 += -ft1 / dzw[0];
            else if (!top)
                d0 += -(ft1 - ft0) / dzw[k];
            else
                d0 += -(ft1 - ft0) / ((real)0.5 * dzw[nz - 1]);
        }
    } else if (top) {
        corr[(size_t)i * ny + j] = (real)0;
    }
    /* 5. Adams-Bashforth step over the whole grid */
    t1 += dt_tracer * (ab_new * d0 - ab_old * dold);
%   for lev in range(T):
%     if lev == TAUP1:
    tke_out[AT(c, ${lev})] = t1;
%     else:
    tke_out[AT(c, ${lev})] = tke[AT(c, ${lev})];
%     endif
%   endfor
%   for lev in range(T):
%     if lev == TAU:
    dtke_out[AT(c, ${lev})] = d0;
%     else:
    dtke_out[AT(c, ${lev})] = dtke[AT(c, ${lev})];
%     endif
%   endfor
}
