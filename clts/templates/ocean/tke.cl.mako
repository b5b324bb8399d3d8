<%namespace name="sg" file="/common/subgroup.cl.mako"/>\
## The turbulent kinetic energy step around the batched tridiagonal solve (docs/ocean.md). Both
## kernels are cell-parallel over the whole grid (lanes cells per work-item, see common):
##   tke_systems  row k of every column's implicit vertical-diffusion system (ta, tb, tc, td: a, b, c, d in the
##                grid's own [x][y][z] layout: the solver's natural layout with one system per
##                column) and, from the k = 0 cell, the column's start row ks = kbot - 1
##                (-1 for land and for the ghost columns: the solver gives them zeros); and q3,
##                tke[..., tau] as a contiguous [x][y][z] array (the tracer the later kernels
##                read at neighbouring cells with whole-vector loads).
##   tke_step     after the solve: the new tke[taup1] (solution on wet levels, surface
##                correction, lateral diffusion, Adams-Bashforth step), the advection tendency
##                dtke[tau] (advection "inline": the six Superbee face fluxes of the cell from
##                the tracer read once; "stored": read from the flux arrays the superbee kernel
##                wrote), every other time level copied, and tke_surf_corr from the top cells.
## Parameters: real; lanes; COLS2 (lanes <= nz: a work-item's cells span at most two
## columns, see codegen.gat); T (time levels on the last axis of tke, dtke, u, v, w); TAU, TAUP1,
## TAUM1; advection; stream (non-temporal stores of the outputs where aligned); subgroup (the
## step's required sub-group size, 0: none); tile (0, or the work-group size of lanes = 1 with
## the time-level arrays staged through a local-memory tile, codegen.Tile: GPUs coalesce).
<%! from clts.ocean import codegen as cg %>\
<%namespace name="C" file="/ocean/common.cl.mako"/>\
<%include file="/ocean/common.cl.mako"/>
% if advection == "inline":
${C.flux_function(1)}
%   if lanes > 1:
${C.flux_function(lanes)}
%   endif
% endif

<%def name="systems_body(W, clamp, tl=None)">
<%
    V = cg.vtype("real", W); IV = cg.itype(real, W); IB = cg.itype(real, 1)
    L = lambda arr, off="0": cg.ld(W, clamp, arr, off)
    G = lambda arr, idx, lo=None, hi=None: cg.gat(W, arr, idx, lo, hi, two=COLS2)
%>
        {
${C.lane_indices(W)}
            const ${IV} inside = iv >= 2 && iv <= nx - 3 && jv >= 2 && jv <= ny - 3;
            const ${IV} ks = ${cg.gat(W, "kbot", "col_{l}", base=IB, two=COLS2)} - 1;
            const ${IV} top = kv == nz - 1;
            /* delta[k] = dt / dzt[k+1] * alpha * (kappaM[k] + kappaM[k+1]) / 2, 0 at the top */
            const ${V} kM = ${L("kappaM")};
            const ${V} dk = top ? (${V})0 : dt / ${G("dzt", "k_{l} + 1", None, "nz - 1")} * alpha
                * (real)0.5 * (kM + ${L("kappaM", "1")});
            const ${V} dkm1 = kv == 0 ? (${V})0 : dt / ${G("dzt", "k_{l}")} * alpha * (real)0.5
                * (${L("kappaM", "-1")} + kM);
<% tk = cg.Block(W, clamp, T, "tke", "0", "tk") if tl is None else tl.view("tke") %>\
            ${tk.decl()}
            const ${V} t0 = ${tk.lev(TAU)};
            ${cg.st(W, "q3", "t0", stream)}
            const ${V} sq = sqrt(fmax((${V})0, t0));
            const ${V} ml = ${L("mxl")};
            const real half_top = (real)0.5 * dzw[nz - 1];
            const ${V} dz = ${G("dzw", "k_{l}")};
            ${V} av = top ? -dkm1 / half_top : -dkm1 / dz;
            ${V} bv = top ? (real)1 + dkm1 / half_top + dt_c_eps / ml * sq
                          : (real)1 + (dk + dkm1) / dz + dt_c_eps * sq / ml;
            ${V} cv = top ? (${V})0 : -dk / dz;
            /* the bottom edge of the column: no coupling below */
            bv = kv == ks ? (real)1 + dk / dz + dt_c_eps / ml * sq : bv;
            ${V} dv = t0 + dt * ${L("forc")};
            dv = top ? dv + dt * ${G("forc_surf", "col_{l}")} / half_top : dv;
            /* ghost columns: decoupled identity rows (the solver leaves them 0 anyway) */
            ${cg.st(W, "ta", "inside ? av : (%s)0" % V, stream)}
            ${cg.st(W, "tb", "inside ? bv : (%s)1" % V, stream)}
            ${cg.st(W, "tc", "inside ? cv : (%s)0" % V, stream)}
            ${cg.st(W, "td", "inside ? dv : (%s)0" % V, stream)}
% for l in range(W):
            if (k_${l} == 0)
                start[col_${l}] = (i_${l} >= 2 && i_${l} <= nx - 3 && j_${l} >= 2 && j_${l} <= ny - 3)
                                  ? kbot[col_${l}] - 1 : -1;
% endfor
        }
</%def>

% if tile:
__attribute__((reqd_work_group_size(${tile}, 1, 1)))
% endif
__kernel void tke_systems(__global const int* restrict kbot, __global const real* restrict kappaM,
                          __global const real* restrict mxl, __global const real* restrict forc,
                          __global const real* restrict forc_surf,
                          __global const real* restrict tke, __global const real* restrict dzt,
                          __global const real* restrict dzw, const real dt, const real alpha,
                          const real dt_c_eps,
                          __global real* restrict ta, __global real* restrict tb,
                          __global real* restrict tc, __global real* restrict td,
                          __global int* restrict start, __global real* restrict q3,
                          const int nx, const int ny, const int nz, const ulong magic_ny, const ulong magic_nz)
{
% if tile:
${C.tile_dispatch(cg.systems_tile(tile, T, TAU), systems_body, stream)}
% else:
${C.dispatch(lanes, systems_body)}
% endif
}

<%def name="step_body(W, clamp, tl=None)">
<%
    V = cg.vtype("real", W); IV = cg.itype(real, W); IB = cg.itype(real, 1)
    L = lambda arr, off="0": cg.ld(W, clamp, arr, off)
    def VEL(arr, off, name):
        if tl is not None:
            return "", tl.val(arr, off)
        b = cg.Block(W, clamp, T, arr, off, name)
        return b.decl(), b.lev(TAU)
    G = lambda arr, idx, lo=None, hi=None: cg.gat(W, arr, idx, lo, hi, two=COLS2)
    OFF = {"x": "sx", "y": "nz", "z": "1"}
%>
        {
${C.lane_indices(W)}
            const ${IV} inside = iv >= 2 && iv <= nx - 3 && jv >= 2 && jv <= ny - 3;
            const ${IV} top = kv == nz - 1;
<%
    if tl is None:
        tk, dk = cg.Block(W, clamp, T, "tke", "0", "tk"), cg.Block(W, clamp, T, "dtke", "0", "dk")
    else:
        tk, dk = tl.view("tke"), tl.view("dtke")
%>\
            ${tk.decl()}
            ${dk.decl()}
            const ${V} t0 = ${L("q3")};
            ${V} t1 = ${tk.lev(TAUP1)};
            /* 1. the implicit vertical solve on the wet levels k >= ks of interior columns */
            const ${IV} ks = ${cg.gat(W, "kbot", "col_{l}", base=IB, two=COLS2)} - 1;
            t1 = (inside && ks >= 0 && kv >= ks) ? ${L("sol")} : t1;
            /* 2. surface correction: negative tke in the top box is put back as a flux */
            const ${IV} drain = inside && top && t1 < (${V})0;
            const ${V} corr_v = drain ? -t1 * (real)0.5 * dzw[nz - 1] / dt : (${V})0;
% for l in range(W):
            if (k_${l} == nz - 1)
                corr[col_${l}] = ${cg.lane(W, "corr_v", l)};
% endfor
            t1 = drain ? (${V})0 : t1;
            const ${V} mw = ${L("maskW")};
            const ${V} cost_j = ${G("cost", "j_{l}")};
            const ${V} cdx = cost_j * ${G("dxt", "i_{l}")}, cdy = cost_j * ${G("dyt", "j_{l}")};
            /* 3. lateral diffusion of tke[tau] */
            {
                const ${V} te = ${L("q3", "sx")}, tw = ${L("q3", "-sx")};
                const ${V} tn = ${L("q3", "nz")}, ts = ${L("q3", "-nz")};
                const ${V} fe1 = K_h * (te - t0) / (cost_j * ${G("dxu", "i_{l}")}) * ${L("maskU")};
                const ${V} fe0 = K_h * (t0 - tw) / (cost_j * ${G("dxu", "i_{l} - 1", "0")})
                                 * ${L("maskU", "-sx")};
                const ${V} fn1 = K_h * (tn - t0) / ${G("dyu", "j_{l}")} * ${L("maskV")}
                                 * ${G("cosu", "j_{l}")};
                const ${V} fn0 = K_h * (t0 - ts) / ${G("dyu", "j_{l} - 1", "0")} * ${L("maskV", "-nz")}
                                 * ${G("cosu", "j_{l} - 1", "0")};
                t1 = inside ? t1 + dt * mw * ((fe1 - fe0) / cdx + (fn1 - fn0) / cdy) : t1;
            }
            /* 4. advection of tke[tau]: the Superbee fluxes through the cell's six faces */
            const ${V} dz = ${G("dzw", "k_{l}")};
% if advection == "inline":
<%
    def Q(axis, d):
        if d == 0:
            return "t0"
        e = L("q3", "%d * %s" % (d, OFF[axis]))
        if axis == "z":
            return "((kv %+d >= 0 && kv %+d < nz) ? %s : (%s)0)" % (d, d, e, V)
        return e
    def M(axis, d):
        if d == 0:
            return "mw"
        e = L("maskW", "%d * %s" % (d, OFF[axis]))
        if axis == "z":
            return "((kv %+d >= 0 && kv %+d < nz) ? %s : (%s)0)" % (d, d, e, V)
        return e
%>
            ${V} fe1, fe0, fn1, fn0, ft1, ft0;
            {
                const ${V} m_2 = ${M("x", -2)}, m_1 = ${M("x", -1)}, m1 = ${M("x", 1)}, m2 = ${M("x", 2)};
                const ${V} q_2 = ${Q("x", -2)}, q_1 = ${Q("x", -1)}, q1 = ${Q("x", 1)}, q2 = ${Q("x", 2)};
<% d1, e1 = VEL("u", "0", "u1b"); d0_, e0 = VEL("u", "-sx", "u0b") %>\
                ${d1} ${d0_}
                const ${V} u1 = ${e1}, u0 = ${e0};
                fe1 = superbee_flux${W}(u1, u1, q_1, t0, q1, q2, m_1 * mw, mw * m1, m1 * m2, cdx, dt_tracer);
                fe0 = superbee_flux${W}(u0, u0, q_2, q_1, t0, q1, m_2 * m_1, m_1 * mw, mw * m1,
                                        cost_j * ${G("dxt", "i_{l} - 1", "0")}, dt_tracer);
            }
            {
                const ${V} m_2 = ${M("y", -2)}, m_1 = ${M("y", -1)}, m1 = ${M("y", 1)}, m2 = ${M("y", 2)};
                const ${V} q_2 = ${Q("y", -2)}, q_1 = ${Q("y", -1)}, q1 = ${Q("y", 1)}, q2 = ${Q("y", 2)};
<% d1, e1 = VEL("v", "0", "v1b"); d0_, e0 = VEL("v", "-nz", "v0b") %>\
                ${d1} ${d0_}
                const ${V} v1 = ${e1}, v0 = ${e0};
                fn1 = superbee_flux${W}(v1, ${G("cosu", "j_{l}")} * v1, q_1, t0, q1, q2, m_1 * mw, mw * m1,
                                        m1 * m2, cdy, dt_tracer);
                fn0 = superbee_flux${W}(v0, ${G("cosu", "j_{l} - 1", "0")} * v0, q_2, q_1, t0, q1,
                                        m_2 * m_1, m_1 * mw, mw * m1,
                                        ${G("cost", "j_{l} - 1", "0")} * ${G("dyt", "j_{l} - 1", "0")},
                                        dt_tracer);
            }
            {
                const ${V} m_2 = ${M("z", -2)}, m_1 = ${M("z", -1)}, m1 = ${M("z", 1)}, m2 = ${M("z", 2)};
                const ${V} q_2 = ${Q("z", -2)}, q_1 = ${Q("z", -1)}, q1 = ${Q("z", 1)}, q2 = ${Q("z", 2)};
<% d1, e1 = VEL("w", "0", "w1b"); d0_, e0 = VEL("w", "-1", "w0b") %>\
                ${d1} ${d0_}
                const ${V} w1 = ${e1}, w0 = ${e0};
                ft1 = top ? (${V})0 : superbee_flux${W}(w1, w1, q_1, t0, q1, q2, m_1 * mw, mw * m1,
                                                        m1 * m2, dz, dt_tracer);
                ft0 = kv == 0 ? (${V})0 : superbee_flux${W}(w0, w0, q_2, q_1, t0, q1, m_2 * m_1,
                                                            m_1 * mw, mw * m1,
                                                            ${G("dzw", "k_{l} - 1", "0")}, dt_tracer);
            }
% else:
            const ${V} fe1 = ${L("fe")}, fe0 = ${L("fe", "-sx")};
            const ${V} fn1 = ${L("fn")}, fn0 = ${L("fn", "-nz")};
            const ${V} ft1 = ${L("ft")}, ft0 = kv == 0 ? (${V})0 : ${L("ft", "-1")};
% endif
            ${V} dnew = mw * (-(fe1 - fe0) / cdx - (fn1 - fn0) / cdy);
            dnew = dnew + (kv == 0 ? -ft1 / dz
                           : top ? -(ft1 - ft0) / ((real)0.5 * dzw[nz - 1])
                                 : -(ft1 - ft0) / dz);
            const ${V} d0 = inside ? dnew : ${dk.lev(TAU)};
            /* 5. Adams-Bashforth step over the whole grid */
            t1 = t1 + dt_tracer * (ab_new * d0 - ab_old * ${dk.lev(TAUM1)});
% if tl is None:
            ${cg.st4(W, T, "tke_out", tk, TAUP1, "t1", stream)}
            ${cg.st4(W, T, "dtke_out", dk, TAU, "d0", stream)}
% else:
            ${tl.put("tke", TAUP1, "t1")}
            ${tl.put("dtke", TAU, "d0")}
% endif
        }
</%def>

% if tile:
__attribute__((reqd_work_group_size(${tile}, 1, 1)))
% endif
${sg.reqd(subgroup)}\
__kernel void tke_step(__global const real* restrict tke, __global const real* restrict dtke,
                       __global const real* restrict u, __global const real* restrict v,
                       __global const real* restrict w, __global const real* restrict maskU,
                       __global const real* restrict maskV, __global const real* restrict maskW,
                       __global const real* restrict dxt, __global const real* restrict dxu,
                       __global const real* restrict dyt, __global const real* restrict dyu,
                       __global const real* restrict dzw, __global const real* restrict cost,
                       __global const real* restrict cosu, __global const int* restrict kbot,
                       __global const real* restrict sol, __global const real* restrict q3,
                       __global const real* restrict fe,
                       __global const real* restrict fn, __global const real* restrict ft,
                       const real dt, const real dt_tracer, const real K_h, const real ab_new,
                       const real ab_old, __global real* restrict tke_out,
                       __global real* restrict dtke_out, __global real* restrict corr,
                       const int nx, const int ny, const int nz, const ulong magic_ny, const ulong magic_nz)
{
% if tile:
${C.tile_dispatch(cg.step_tile(tile, T, TAU, advection), step_body, stream)}
% else:
${C.dispatch(lanes, step_body)}
% endif
}
