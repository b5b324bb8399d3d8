## Superbee advection fluxes of a tracer on the W grid: flux_east, flux_north, flux_top of every
## cell of an nx x ny x nz grid (zero outside the ranges Veros computes them on).
## Two code versions:
##   superbee_fused  lanes consecutive cells per work-item (realLANES vectors, see common); the
##                   ten tracer and ten mask values the three fluxes of a cell need are read
##                   once for all three.
##   superbee_tiled  overlapped 3-D tiling: a work-group of tile_z x tile_y x tile_x cells first copies the
##                   (tile_z+3) x (tile_y+3) x (tile_x+3) box of tracer and mask values its fluxes read
##                   (one cell below, two above on every axis) into local memory, z fastest,
##                   then each work-item computes its cell's fluxes from there.
## Parameters: real; lanes; COLS2 (lanes <= nz: a work-item's cells span at most two
## columns, see codegen.gat); tile_x, tile_y, tile_z (tiled; 0: only the fused kernel is built); VS, VO:
## velocities are read as vel[cell * VS + VO] (VS = 1, VO = 0 for [x, y, z] arrays; VS = T,
## VO = tau for [x, y, z, T] arrays); tile (0, or with VS > 1 and lanes 1 the work-group size:
## level VO of u, v, w staged through a local-memory tile per work-group, codegen.superbee_tile,
## so that GPU loads coalesce instead of reading one value every VS).
<%! from clts.ocean import codegen as cg %>\
<%namespace name="C" file="/ocean/common.cl.mako"/>\
<%include file="/ocean/common.cl.mako"/>
${C.flux_function(1)}
% if lanes > 1:
${C.flux_function(lanes)}
% endif

#define SUPERBEE_ARGS \
    __global const real* restrict q, __global const real* restrict u, \
    __global const real* restrict v, __global const real* restrict w, \
    __global const real* restrict mw, __global const real* restrict dxt, \
    __global const real* restrict dyt, __global const real* restrict dzw, \
    __global const real* restrict cost, __global const real* restrict cosu, const real dt, \
    __global real* restrict fe, __global real* restrict fn, __global real* restrict ft, \
    const int nx, const int ny, const int nz, const ulong magic_ny, const ulong magic_nz

<%def name="fluxes(W, Q, M, VEL, G)">\
## VEL(name) -> (declarations, expression) of the cell's velocity
## Q(axis, d) / M(axis, d): tracer / mask of the cell d away along axis ("x", "y", "z"; z zero
## beyond the column); VEL(name): the cell's velocity; G(arr, index, lo, hi): per-lane gather;
## iv, jv, kv: lane indices. Writes fe, fn, ft at the W cells from c.
<% V = cg.vtype("real", W); IV = cg.itype(real, W) %>
        {
            const ${V} q0 = ${Q("x", 0)}, m0 = ${M("x", 0)};
            const ${IV} iin = iv >= 2 && iv <= nx - 3, jin = jv >= 2 && jv <= ny - 3;
            const ${V} cost_j = ${G("cost", "j_{l}", None, None)};
            {   /* east face: cells i-1 .. i+2 */
<% vd, ve = VEL("u") %>\
                ${vd}
                const ${V} vel = ${ve};
                const ${V} mm1 = ${M("x", -1)}, mp1 = ${M("x", 1)}, mp2 = ${M("x", 2)};
                const ${V} f = superbee_flux${W}(vel, vel, ${Q("x", -1)}, q0, ${Q("x", 1)},
                    ${Q("x", 2)}, mm1 * m0, m0 * mp1, mp1 * mp2,
                    cost_j * ${G("dxt", "i_{l}", None, None)}, dt);
                ${cg.st(W, "fe", "(iv >= 1 && iv <= nx - 3 && jin) ? f : (%s)0" % V)}
            }
            {   /* north face: cells j-1 .. j+2, transport cosu * v */
<% vd, ve = VEL("v") %>\
                ${vd}
                const ${V} vel = ${ve};
                const ${V} mm1 = ${M("y", -1)}, mp1 = ${M("y", 1)}, mp2 = ${M("y", 2)};
                const ${V} f = superbee_flux${W}(vel, ${G("cosu", "j_{l}", None, None)} * vel,
                    ${Q("y", -1)}, q0, ${Q("y", 1)}, ${Q("y", 2)}, mm1 * m0, m0 * mp1, mp1 * mp2,
                    cost_j * ${G("dyt", "j_{l}", None, None)}, dt);
                ${cg.st(W, "fn", "(iin && jv >= 1 && jv <= ny - 3) ? f : (%s)0" % V)}
            }
            {   /* top face: cells k-1 .. k+2, zero beyond the column */
<% vd, ve = VEL("w") %>\
                ${vd}
                const ${V} vel = ${ve};
                const ${V} mm1 = ${M("z", -1)}, mp1 = ${M("z", 1)}, mp2 = ${M("z", 2)};
                const ${V} f = superbee_flux${W}(vel, vel, ${Q("z", -1)}, q0, ${Q("z", 1)},
                    ${Q("z", 2)}, mm1 * m0, m0 * mp1, mp1 * mp2,
                    ${G("dzw", "k_{l}", "0", "max(nz - 2, 0)")}, dt);
                ${cg.st(W, "ft", "(iin && jin && kv <= nz - 2) ? f : (%s)0" % V)}
            }
        }
</%def>

<%def name="fused_body(W, clamp, tl=None)">
<%
    V = cg.vtype("real", W)
    OFF = {"x": "sx", "y": "nz", "z": "1"}
    def Q_(arr):
        def f(axis, d):
            if d == 0:
                return cg.ld(W, clamp, arr)
            e = cg.ld(W, clamp, arr, "%d * %s" % (d, OFF[axis]))
            if axis == "z":
                return "((kv %+d >= 0 && kv %+d < nz) ? %s : (%s)0)" % (d, d, e, V)
            return e
        return f
    def VEL(arr):
        if VS == 1:
            return "", cg.ld(W, clamp, arr)
        if tl is not None:
            return "", tl.val(arr, "0")
        b = cg.Block(W, clamp, VS, arr, "0", arr + "b")
        return b.decl(), b.lev(VO)
    G = lambda arr, idx, lo, hi: cg.gat(W, arr, idx, lo, hi, two=COLS2)
%>
        {
${C.lane_indices(W)}
${fluxes(W, Q_("q"), Q_("mw"), VEL, G)}
        }
</%def>

% if tile:
__attribute__((reqd_work_group_size(${tile}, 1, 1)))
% endif
__kernel void superbee_fused(SUPERBEE_ARGS)
{
% if tile:
${C.tile_dispatch(cg.superbee_tile(tile, VS, VO), fused_body, 0)}
% else:
${C.dispatch(lanes, fused_body)}
% endif
}

% if tile_x:
<% BX, BY, BZ = tile_x + 3, tile_y + 3, tile_z + 3 %>
__kernel __attribute__((reqd_work_group_size(${tile_z}, ${tile_y}, ${tile_x})))
void superbee_tiled(SUPERBEE_ARGS)
{
    __local real sq[${BX}][${BY}][${BZ}];
    __local real sm[${BX}][${BY}][${BZ}];
    const int lk = get_local_id(0), lj = get_local_id(1), li = get_local_id(2);
    const int k0 = get_group_id(0) * ${tile_z}, j0 = get_group_id(1) * ${tile_y},
              i0 = get_group_id(2) * ${tile_x};
    const long N = (long)nx * ny * nz;
    /* the box of cells (i0-1 .. i0+TX+1) x (j0-1 .. ) x (k0-1 .. ), z fastest; rows outside
       the grid in x / y are clamped copies (their fluxes are not set), z outside is 0; each
       work-item loads every TX-th / TY-th / TZ-th value (no division) */
    for (int bx = li; bx < ${BX}; bx += ${tile_x})
        for (int by = lj; by < ${BY}; by += ${tile_y})
            for (int bz = lk; bz < ${BZ}; bz += ${tile_z}) {
                const int gi = clamp(i0 - 1 + bx, 0, nx - 1), gj = clamp(j0 - 1 + by, 0, ny - 1);
                const int gk = k0 - 1 + bz;
                const bool inb = gk >= 0 && gk < nz;
                const long g = ((long)gi * ny + gj) * nz + clamp(gk, 0, nz - 1);
                sq[bx][by][bz] = inb ? q[g] : (real)0;
                sm[bx][by][bz] = inb ? mw[g] : (real)0;
            }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int i_0 = i0 + li, j_0 = j0 + lj, k_0 = k0 + lk;
    if (k_0 >= nz || j_0 >= ny || i_0 >= nx) return;
    const long iv = i_0, jv = j_0, kv = k_0;
    const long c = ((long)i_0 * ny + j_0) * nz + k_0;
<%
    AX = {"x": (1, 0, 0), "y": (0, 1, 0), "z": (0, 0, 1)}
    def LQ(arr):
        def f(axis, d):
            a, b, e = (1 + d * s for s in AX[axis])
            return "%s[li + %d][lj + %d][lk + %d]" % (arr, a, b, e)
        return f
    def VEL(arr):
        return "", ("%s[c * %d + %d]" % (arr, VS, VO) if VS != 1 else "%s[c]" % arr)
    G = lambda arr, idx, lo, hi: cg.gat(1, arr, idx, lo, hi)
%>
${fluxes(1, LQ("sq"), LQ("sm"), VEL, G)}
}
% endif
