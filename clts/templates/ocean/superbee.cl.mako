## Superbee advection fluxes of a tracer on the W grid: flux_east, flux_north, flux_top of every
## cell of an nx x ny x nz grid (zero outside the ranges Veros computes them on).
## Two code versions:
##   superbee_fused  one work-item per cell; the ten tracer and ten mask values its three
##                   fluxes need are read once (from global memory / the caches) for all three.
##   superbee_tiled  overlapped 3-D tiling: a work-group of TZ x TY x TX cells first copies the
##                   (TZ+3) x (TY+3) x (TX+3) box of tracer and mask values its fluxes read
##                   (one cell below, two above on every axis) into local memory, z fastest,
##                   then every work-item computes its cell's fluxes from there.
## Parameters: real; TX, TY, TZ (tile of the tiled version; 0: only the fused kernel is built).
## Velocities are read as vel[cell * vs + vo] (vs = 1, vo = 0 for [x, y, z] arrays; vs = T,
## vo = tau for [x, y, z, T] arrays).
<%include file="/ocean/common.cl.mako"/>

<%def name="fluxes(Q, M)">
## Q(di, dj, dk) / M(di, dj, dk): expressions of the tracer / mask at cell (i+di, j+dj, k+dk),
## zero beyond the column in z; writes fe, fn, ft at cell c.
    {
        const real q0 = ${Q(0, 0, 0)}, m0 = ${M(0, 0, 0)};
        const bool jin = j >= 2 && j <= ny - 3, iin = i >= 2 && i <= nx - 3;
        /* east face (x): cells i-1 .. i+2 */
        {
            const real qm1 = ${Q(-1, 0, 0)}, qp1 = ${Q(1, 0, 0)}, qp2 = ${Q(2, 0, 0)};
            const real mm1 = ${M(-1, 0, 0)}, mp1 = ${M(1, 0, 0)}, mp2 = ${M(2, 0, 0)};
            const real vel = u[c * vs + vo];
            const real f = superbee_flux(vel, vel, qm1, q0, qp1, qp2, mm1 * m0, m0 * mp1,
                                         mp1 * mp2, cost[j] * dxt[i], dt);
            fe[c] = (i >= 1 && i <= nx - 3 && jin) ? f : (real)0;
        }
        /* north face (y): cells j-1 .. j+2, transport cosu * v */
        {
            const real qm1 = ${Q(0, -1, 0)}, qp1 = ${Q(0, 1, 0)}, qp2 = ${Q(0, 2, 0)};
            const real mm1 = ${M(0, -1, 0)}, mp1 = ${M(0, 1, 0)}, mp2 = ${M(0, 2, 0)};
            const real vel = v[c * vs + vo];
            const real f = superbee_flux(vel, cosu[j] * vel, qm1, q0, qp1, qp2, mm1 * m0,
                                         m0 * mp1, mp1 * mp2, cost[j] * dyt[j], dt);
            fn[c] = (iin && j >= 1 && j <= ny - 3) ? f : (real)0;
        }
        /* top face (z): cells k-1 .. k+2, zero beyond the column */
        {
            const real qm1 = ${Q(0, 0, -1)}, qp1 = ${Q(0, 0, 1)}, qp2 = ${Q(0, 0, 2)};
            const real mm1 = ${M(0, 0, -1)}, mp1 = ${M(0, 0, 1)}, mp2 = ${M(0, 0, 2)};
            const real vel = w[c * vs + vo];
            const real f = superbee_flux(vel, vel, qm1, q0, qp1, qp2, mm1 * m0, m0 * mp1,
                                         mp1 * mp2, dzw[min(k, nz - 2)], dt);
            ft[c] = (iin && jin && k <= nz - 2) ? f : (real)0;
        }
    }
</%def>

#define SUPERBEE_ARGS \
    __global const real* restrict q, __global const real* restrict u, \
    __global const real* restrict v, __global const real* restrict w, \
    __global const real* restrict mw, __global const real* restrict dxt, \
    __global const real* restrict dyt, __global const real* restrict dzw, \
    __global const real* restrict cost, __global const real* restrict cosu, const real dt, \
    const int vs, const int vo, __global real* restrict fe, __global real* restrict fn, \
    __global real* restrict ft, const int nx, const int ny, const int nz

<%
    def gq(arr):
        # global read at a clamped neighbour (always in bounds; zero beyond the column in z)
        def f(di, dj, dk):
            if di:
                return "%s[CELL(clamp(i %+d, 0, nx - 1), j, k)]" % (arr, di)
            if dj:
                return "%s[CELL(i, clamp(j %+d, 0, ny - 1), k)]" % (arr, dj)
            if dk:
                return "(k %+d >= 0 && k %+d < nz ? %s[CELL(i, j, clamp(k %+d, 0, nz - 1))] : (real)0)" % (
                    dk, dk, arr, dk)
            return "%s[c]" % arr
        return f
%>
__kernel void superbee_fused(SUPERBEE_ARGS)
{
    const int k = get_global_id(0), j = get_global_id(1), i = get_global_id(2);
    if (k >= nz || j >= ny || i >= nx) return;
    const size_t c = CELL(i, j, k);
${fluxes(gq("q"), gq("mw"))}
}

% if TX:
<% BX, BY, BZ = TX + 3, TY + 3, TZ + 3 %>
__kernel __attribute__((reqd_work_group_size(${TZ}, ${TY}, ${TX})))
void superbee_tiled(SUPERBEE_ARGS)
{
    __local real sq[${BX}][${BY}][${BZ}];
    __local real sm[${BX}][${BY}][${BZ}];
    const int lk = get_local_id(0), lj = get_local_id(1), li = get_local_id(2);
    const int k0 = get_group_id(0) * ${TZ}, j0 = get_group_id(1) * ${TY},
              i0 = get_group_id(2) * ${TX};
    /* the box of cells (i0-1 .. i0+TX+1) x (j0-1 .. ) x (k0-1 .. ), z fastest; rows outside
       the grid in x / y are clamped copies (their fluxes are not set), z outside is 0 */
    for (int e = (li * ${TY} + lj) * ${TZ} + lk; e < ${BX * BY * BZ}; e += ${TX * TY * TZ}) {
        const int bz = e % ${BZ}, by = (e / ${BZ}) % ${BY}, bx = e / ${BY * BZ};
        const int gi = clamp(i0 - 1 + bx, 0, nx - 1), gj = clamp(j0 - 1 + by, 0, ny - 1);
        const int gk = k0 - 1 + bz;
        const bool in = gk >= 0 && gk < nz;
        const size_t g = CELL(gi, gj, clamp(gk, 0, nz - 1));
        sq[bx][by][bz] = in ? q[g] : (real)0;
        sm[bx][by][bz] = in ? mw[g] : (real)0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int i = i0 + li, j = j0 + lj, k = k0 + lk;
    if (k >= nz || j >= ny || i >= nx) return;
    const size_t c = CELL(i, j, k);
<%
    def lq(arr):
        return lambda di, dj, dk: "%s[li + %d][lj + %d][lk + %d]" % (arr, 1 + di, 1 + dj, 1 + dk)
%>
${fluxes(lq("sq"), lq("sm"))}
}
% endif
