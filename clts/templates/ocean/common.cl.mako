## Shared pieces of the ocean kernels. Rendered (include) it gives the real type and no
## contraction of a*b+c into fma (the float64 results then round like the numpy reference,
## operation for operation); as a namespace it gives the Superbee face flux and the pieces of
## the cell-parallel kernels.
##
## Cell-parallel kernels run W consecutive cells of the flattened [x][y][z] grid (z contiguous)
## per work-item as one realW vector (W = lanes: pocl vectorises only explicit vector types; the
## Intel CPU runtime and GPUs take W = 1). Every branch is a ?: on lane masks (a comparison of
## realW values gives the integer vector of the same width, cg.itype). A work-item whose cells
## and their neighbours up to two x planes away lie inside the array reads them with unclamped
## loads (values read for ghost lanes are masked out afterwards); the work-items at the two ends
## of the array run their cells one at a time with every address clamped into the array.
<%! from clts.ocean import codegen as cg %>\
<%include file="/common/real.cl.mako"/>
#pragma OPENCL FP_CONTRACT OFF
/* non-temporal vector stores (clang's builtin; plain stores where the compiler lacks it or
   the address is not aligned to the vector) */
#if defined(__has_builtin)
#if __has_builtin(__builtin_nontemporal_store)
#define NT_STORE(v, p) __builtin_nontemporal_store((v), (p))
#endif
#endif
#ifdef NT_STORE
#define STORE_STREAM(v, p, T) { if ((((size_t)(p)) & (sizeof(T) - 1)) == 0) NT_STORE((v), (__global T*)(p)); else *(__global T*)(p) = (v); }
#else
#define STORE_STREAM(v, p, T) { *(__global T*)(p) = (v); }
#endif

<%def name="flux_function(W)">
<% V = cg.vtype("real", W) %>
/* Superbee flux through the face between cells 0 and +1 along one axis, W cells at once.
   vel: the raw face velocity (its sign picks the upwind side); fv: the transporting velocity
   (vel times the metric factor of the axis); q*: tracer at cells -1, 0, +1, +2; m*: face masks
   of faces -1, 0, +1 (1 where both cells are wet); dx: the face's grid spacing. */
inline ${V} superbee_flux${W}(const ${V} vel, const ${V} fv, const ${V} qm1, const ${V} q0,
                              const ${V} qp1, const ${V} qp2, const ${V} mm1, const ${V} m0,
                              const ${V} mp1, const ${V} dx, const real dt)
{
    const ${V} rjp = (qp2 - qp1) * mp1;
    const ${V} rj = (qp1 - q0) * m0;
    const ${V} rjm = (q0 - qm1) * mm1;
    const ${V} den = fabs(rj) < (${V})1e-20 ? (${V})1e-20 : rj;
    const ${V} r = (vel > (${V})0 ? rjm : rjp) / den;
    /* psi = max(0, min(1, 2r), min(2, r)) with compare-selects (fmin / fmax spend extra
       instructions on NaN rules that a finite ratio does not need) */
    const ${V} r2 = (${V})2 * r;
    const ${V} lo = r2 < (${V})1 ? r2 : (${V})1, hi = r < (${V})2 ? r : (${V})2;
    const ${V} top = lo > hi ? lo : hi;
    const ${V} cr = top > (${V})0 ? top : (${V})0;
    const ${V} ucfl = fabs(fv * dt / dx);
    return fv * (qp1 + q0) * (${V})0.5 - fabs(fv) * (((${V})1 - cr) + ucfl * cr) * rj * (${V})0.5;
}
</%def>

<%def name="lane_indices(W)">\
## From the work-item's first cell c: per lane l the scalars i_l, j_l, k_l and col_l (= i*ny + j),
## and the index vectors iv, jv, kv (cg.itype); cells are < 2^31 (checked by the caller).
## The quotients by nz and ny are mul_hi by ceil(2^64 / d) (exact for n * d < 2^64; magic 0
## stands for d = 1), not integer divisions: LLVM's freeze of a div/rem pair stops Oclgrind.
<% IV = cg.itype(real, W); IB = cg.itype(real, 1) %>\
        const int col_0 = magic_nz ? (int)mul_hi((ulong)c, magic_nz) : (int)c;
        const int k_0 = (int)c - col_0 * nz;
        const int i_0 = magic_ny ? (int)mul_hi((ulong)col_0, magic_ny) : col_0;
        const int j_0 = col_0 - i_0 * ny;
% for l in range(1, W):
        const int wk_${l} = k_${l - 1} + 1 == nz, wj_${l} = wk_${l} && j_${l - 1} + 1 == ny;
        const int k_${l} = wk_${l} ? 0 : k_${l - 1} + 1;
        const int j_${l} = wj_${l} ? 0 : j_${l - 1} + wk_${l};
        const int i_${l} = i_${l - 1} + wj_${l};
        const int col_${l} = col_${l - 1} + wk_${l};
% endfor
        const ${IV} iv = ${cg.vec(W, ["(%s)i_%d" % (IB, l) for l in range(W)], IB)};
        const ${IV} jv = ${cg.vec(W, ["(%s)j_%d" % (IB, l) for l in range(W)], IB)};
        const ${IV} kv = ${cg.vec(W, ["(%s)k_%d" % (IB, l) for l in range(W)], IB)};
</%def>

<%def name="dispatch(W, body)">\
## body(w, clamp) for the work-item's W cells: unclamped inside the array, else cell by cell
    const long N = (long)nx * ny * nz, sx = (long)ny * nz;
    const long c0 = (long)get_global_id(0) * ${W};
    if (c0 >= N) return;
    if (c0 >= 2 * sx && c0 + ${W} + 2 * sx <= N) {
        const long c = c0;
${body(W, False)}
    } else {
        for (long c = c0; c < min(c0 + ${W}, N); ++c) {
${body(1, True)}
        }
    }
</%def>\

<%def name="tile_dispatch(tl, body, stream)">\
## ocean.tke.tile: one cell per work-item, work-groups of tl.WG; the group's tile (codegen.Tile)
## is read coalesced into local memory, then body(1, clamp, tl) runs the work-item's cell
## (clamped addresses at the two ends, as dispatch), then the written tiles go back coalesced.
## Every work-item reaches both barriers (cells past the end only load and store).
    const long N = (long)nx * ny * nz, sx = (long)ny * nz;
    const int lid = (int)get_local_id(0);
    const long g0 = (long)get_group_id(0) * ${tl.WG};
    const long c = g0 + lid;
    ${tl.decl()}
    ${tl.load()}
    barrier(CLK_LOCAL_MEM_FENCE);
    if (c < N) {
        if (c >= 2 * sx && c + 1 + 2 * sx <= N) {
${body(1, False, tl)}
        } else {
${body(1, True, tl)}
        }
    }
% if tl.fulls:
    barrier(CLK_LOCAL_MEM_FENCE);
    ${tl.store(stream)}
% endif
</%def>\
