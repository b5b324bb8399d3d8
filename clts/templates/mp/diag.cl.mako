## Matrix profile: the diagonal kernel (STOMP / GPU-STOMP_OPT / SCAMP update on diagonals).
##
## A work-item owns a band of D = G*W adjacent diagonals k0 .. k0+D-1 (j = i + k) and a segment
## of rows [ilo, ihi) (at most R rows: the covariance is computed exactly at ilo, then updated in
## O(1) per step: cov(i,j) = cov(i-1,j-1) + df[i] dg[j] + df[j] dg[i]). The W diagonals of a group
## are the lanes of a realW vector (pocl vectorises only explicit vector types), so the column
## values at j .. j+W-1 are one unaligned vload. The score is the Pearson correlation
## cov * r_i * r_j (NORMALIZE) or -d^2/2 = cov + h_i + h_j (plain Euclidean), maximised.
## Row bests are reduced over the band per row. Column bests (LOCAL = 0, store="private"): PACK
## (float64) in registers that shift one lane per row, else in private arrays for a tile of L
## rows merged at the tile end; LOCAL = 1 (store="local"): for a tile of L rows in this
## work-item's slice of a __local array (nothing shared, no barrier), merged at the tile end.
## UNROLL: unroll factor of the row loops (a #pragma unroll hint; 1 leaves it to the compiler).
## Merge: ATOMIC -> 64-bit atomic minimum (compare-and-swap loop, cl_khr_int64_base_atomics) on
## a key packing (1 - score or -score, index), smaller index on ties; else per-work-item partial
## profiles (no races) that reduce_rows / reduce_cols fold into the global profile.
<%include file="/common/real.cl.mako"/>
<%
    VT = real if W == 1 else f"{real}{W}"
    ITS = "long" if real == "double" else "int"
    IT = ITS if W == 1 else f"{ITS}{W}"
    D = G * W
    def LOAD(p):
        return f"(*({p}))" if W == 1 else f"vload{W}(0, {p})"
    def SEL(a, b, c):
        return f"(({c}) ? ({b}) : ({a}))" if W == 1 else f"select({a}, {b}, {c})"
    SPACE = "__local" if LOCAL else "__private"
    # unroll hint for the row loops (UNROLL rows per iteration; 1: the compiler's choice)
    ROW_UNROLL = f"#pragma unroll {UNROLL}" if UNROLL > 1 else ""
    IOTA = "0" if W == 1 else "(" + IT + ")(" + ", ".join(str(x) for x in range(W)) + ")"
%>
% if ATOMIC:
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
% endif
#define D ${D}
#define L ${L}

% if ATOMIC:
inline ulong make_key(real score, int idx, ulong idxmask)
{
%   if NORMALIZE:
    real v = (real)1 - score;
%   else:
    real v = -score;
%   endif
    v = fmax(v, (real)0);
%   if real == "double":
    return (as_ulong(v) & ~idxmask) | (ulong)idx;
%   else:
    return ((ulong)as_uint(v) << 32) | (ulong)(uint)idx;
%   endif
}
% endif

% if ATOMIC:
inline void key_min(volatile __global ulong *p, ulong key)
{
%   if PRECHECK:
    // a plain read first (a benign race: the compare-and-swap loop below corrects it) skips
    // the atomic for nearly every candidate, as in GPU-STOMP_OPT
    ulong cur = *p;
%   else:
    ulong cur = atom_cmpxchg(p, 0UL, 0UL);     // race-free read (for Oclgrind's checker)
%   endif
    while (key < cur) {
        const ulong old = atom_cmpxchg(p, cur, key);
        if (old == cur) break;
        cur = old;
    }
}
% endif

inline int better(real s, int i, real bs, int bi)
{
    return s > bs || (s == bs && i >= 0 && (bi < 0 || i < bi));
}

## PACK (double only): the index is packed into the low IDXBITS bits of a non-negative score,
## so that one fmax (fmin) keeps the best value and its index together (ties: smallest index).
## NORMALIZE: score = 1 + corr in [0, 2], maximised, index stored complemented;
## plain: score = d^2 / 2 >= 0, minimised, index stored as is.
<%
    BEST = "fmax" if NORMALIZE else "fmin"
    WORST = "-INFINITY" if NORMALIZE else "INFINITY"
%>
% if PACK:
typedef ${"ulong" if W == 1 else f"ulong{W}"} UT;
#define AS_U(x) ${"as_ulong" if W == 1 else f"as_ulong{W}"}(x)
#define AS_R(x) ${"as_double" if W == 1 else f"as_double{W}"}(x)
% endif

<%def name="cov_init(VT, LOAD)">
    // exact covariance (or dot product) at row ilo for every diagonal of the band
% for g in range(G):
    ${VT} cov${g} = 0;
% endfor
    {
        const int jb = ilo + k0;
% if NORMALIZE:
        const real ma = muA[ilo];
%   for g in range(G):
        const ${VT} mb${g} = ${LOAD(f"muBp + jb + {g * W}")};
%   endfor
% endif
        for (int t = 0; t < m; ++t) {
% if NORMALIZE:
            const real a = TA[ilo + t] - ma;
%   for g in range(G):
            cov${g} = fma((${VT})a, ${LOAD(f"TBp + jb + t + {g * W}")} - mb${g}, cov${g});
%   endfor
% else:
            const real a = TA[ilo + t];
%   for g in range(G):
            cov${g} = fma((${VT})a, ${LOAD(f"TBp + jb + t + {g * W}")}, cov${g});
%   endfor
% endif
        }
    }
</%def>

<%def name="pack_flush(TL)">
<%
    BEST = "fmax" if NORMALIZE else "fmin"
    WORST = "-INFINITY" if NORMALIZE else "INFINITY"
%>
        {
            // tile end: column it + k0 + c is the best over lanes l of slot c - l
            __local const real *cs = (__local const real *)cl;
            const int ncol = ${TL} + D - 1;
            for (int c = 0; c < ncol; ++c) {
                real best = ${WORST};
                for (int l = 0; l < ${W}; ++l) {
                    const int u = c - l;
                    if (u >= 0) best = ${BEST}(best, cs[u * ${W} + l]);
                }
                const int j = it + k0 + c;
                if (best ${">" if NORMALIZE else "<"} ${WORST} && j >= 0 && j < lB) {
% if ATOMIC:
                    key_min((volatile __global ulong *)(colKey + j), ${"~" if NORMALIZE else ""}as_ulong(best));
% else:
                    const ulong bu = ${"~" if NORMALIZE else ""}as_ulong(best);
                    const real bs = ${"" if NORMALIZE else "-"}as_double(as_ulong(best) & ~idxmask);
                    const int bi = (int)(bu & idxmask);
                    const int q = j - s0 - k0;
                    if (better(bs, bi, cpv[q], cpi[q])) { cpv[q] = bs; cpi[q] = bi; }
% endif
                }
            }
        }
</%def>

% if K == 1:
__kernel void diag(
    __global const int4 *desc, const int doff, const int n_work, const int s0, const int m,
    const int lA, const int lB, const int PAD, const ulong idxmask,
    __global const real *TA, __global const real *muA,
    __global const real *dfA, __global const real *dgA, __global const real *rA,
    __global const real *TB, __global const real *muB,
    __global const real *dfB, __global const real *dgB, __global const real *rB
% if ATOMIC:
    , __global ulong *rowKey
%   if COLS:
    , __global ulong *colKey
%   endif
% else:
    , __global real *rowPV, __global int *rowPI
%   if COLS:
    , __global real *colPV, __global int *colPI
%   endif
% endif
    )
{
% if COLS and LOCAL:
    // store="local": this work-item's slice of the tile's column bests (nothing shared)
%   if PACK:
    __local ${VT} lcl[${WG * (L + D)}];
    __local ${VT} *cl = lcl + get_local_id(0) * ${L + D};
%   else:
    __local ${VT} lcacc[${WG * (L + D)}];
    __local ${IT} lcidx[${WG * (L + D)}];
    __local ${VT} *cacc = lcacc + get_local_id(0) * ${L + D};
    __local ${IT} *cidx = lcidx + get_local_id(0) * ${L + D};
%   endif
% endif
    const int w = get_global_id(0);
    if (w >= n_work) return;
    const int4 dd = desc[doff + w];
    const int k0 = dd.x, ilo = dd.y, ihi = dd.z;
    // column-side arrays are offset by PAD so that j in [-PAD, lB + PAD) can be read
    __global const real *TBp = TB + PAD, *muBp = muB + PAD, *dfBp = dfB + PAD,
                        *dgBp = dgB + PAD, *rBp = rB + PAD;
% if not ATOMIC:
    __global real *rpv = rowPV + (size_t)w * ${R};
    __global int *rpi = rowPI + (size_t)w * ${R};
    for (int r = 0; r < ${R}; ++r) { rpv[r] = -INFINITY; rpi[r] = -1; }
%   if COLS:
    __global real *cpv = colPV + (size_t)w * ${R + D};
    __global int *cpi = colPI + (size_t)w * ${R + D};
    for (int r = 0; r < ${R + D}; ++r) { cpv[r] = -INFINITY; cpi[r] = -1; }
%   endif
% endif

${cov_init(VT, LOAD)}

% if PACK:
<%
    def SHIFT(x, y):
        # lanes 1..W-1 of x, then lane 0 of y (one valignq on AVX-512)
        if W == 1:
            return y
        # swizzles of length 1, 2, 4, 8 only: split lanes 1..W-1 into pieces
        lanes = list(range(1, W))
        parts = []
        for size in (8, 4, 2, 1):   # no 3-lane pieces (Oclgrind mis-handles vec3)
            while len(lanes) >= size and size <= len(lanes):
                parts.append(lanes[:size])
                lanes = lanes[size:]
        sw = ", ".join(f"{x}.s" + "".join("%x" % l for l in p) for p in parts)
        return f"(({VT})({sw}, {y}.s0))"
%>
    const UT hmask = (UT)(~idxmask);
%   if COLS and LOCAL:
    // column bests of a tile of L rows in local memory: slot u = t + g*W, lane l holds
    // column it + k0 + u + l (aligned vectors, no overlap between rows); merged at tile end
    int it = ilo;
    for (int u = 0; u < ${L + D}; ++u) cl[u] = (${VT})${WORST};
%   elif COLS:
    // column bests in registers: cc<g> lane l holds column i + k0 + g*W + l of the current row;
    // per row they shift down one lane (the column leaving lane 0 of group 0 is complete)
%     for g in range(G):
    ${VT} cc${g} = ${WORST};
%     endfor
%   endif
%   if NORMALIZE:
    // packed column index, linear in j: mask - j (= ~j & mask for 0 <= j <= mask); lanes with
    // j < 0 have NaN scores, which stay NaN whatever mantissa bits the OR sets
    UT jp = (UT)((long)idxmask - (long)(ilo + k0)) - (UT)${IOTA.replace(IT, "ulong" if W == 1 else f"ulong{W}") if W > 1 else "0"};
%   else:
    UT jp = (UT)(long)(ilo + k0) + (UT)${IOTA.replace(IT, "ulong" if W == 1 else f"ulong{W}") if W > 1 else "0"};
%   endif
    ${ROW_UNROLL}
    for (int i = ilo; i < ihi; ++i) {
        const int jb = i + k0;
        const real fa = dfA[i], ga = dgA[i], ra = rA[i];
%   if NORMALIZE:
        const UT ip = (UT)(~(ulong)i & idxmask);
%   else:
        const UT ip = (UT)((ulong)i & idxmask);
%   endif
%   if COLS and LOCAL:
        if (i - it == L) {
${pack_flush("L")}
            it = i;
            for (int u = 0; u < ${L + D}; ++u) cl[u] = (${VT})${WORST};
        }
%   elif COLS:
        if (i > ilo) {
            // column jb - 1 is complete: merge it, then shift every group down one lane
            const real best = ${"cc0" if W == 1 else "cc0.s0"};
            const int j = jb - 1;
            if (best ${">" if NORMALIZE else "<"} ${WORST} && j >= 0 && j < lB) {
%     if ATOMIC:
                key_min((volatile __global ulong *)(colKey + j), ${"~" if NORMALIZE else ""}as_ulong(best));
%     else:
                const ulong bu = ${"~" if NORMALIZE else ""}as_ulong(best);
                const real bs = ${"" if NORMALIZE else "-"}as_double(as_ulong(best) & ~idxmask);
                const int bi = (int)(bu & idxmask);
                const int q = j - s0 - k0;
                if (better(bs, bi, cpv[q], cpi[q])) { cpv[q] = bs; cpi[q] = bi; }
%     endif
            }
%     for g in range(G - 1):
            cc${g} = ${SHIFT(f"cc{g}", f"cc{g + 1}")};
%     endfor
            cc${G - 1} = ${SHIFT(f"cc{G - 1}", f"(({VT}){WORST})")};
        }
%   endif
        const int upd = i > ilo;
        ${VT} rb = ${WORST};
%   for g in range(G):
        {
            const ${VT} fb = ${LOAD(f"dfBp + jb + {g * W}")};
            const ${VT} gb = ${LOAD(f"dgBp + jb + {g * W}")};
            const ${VT} rbv = ${LOAD(f"rBp + jb + {g * W}")};
            if (upd) cov${g} = fma((${VT})fa, gb, fma((${VT})ga, fb, cov${g}));
%     if NORMALIZE:
            const ${VT} s = fma(cov${g} * ra, rbv, (${VT})1);
            const UT jpg = jp - (UT)${g * W};
%     else:
            const ${VT} s = fabs(cov${g} + ra + rbv);   // d^2/2 >= 0 (|.| of rounding noise)
            const UT jpg = jp + (UT)${g * W};
%     endif
            const UT sh = AS_U(s) & hmask;
            rb = ${BEST}(rb, AS_R(sh | jpg));
%     if COLS and LOCAL:
            cl[i - it + ${g * W}] = ${BEST}(cl[i - it + ${g * W}], AS_R(sh | ip));
%     elif COLS:
            cc${g} = ${BEST}(cc${g}, AS_R(sh | ip));
%     endif
        }
%   endfor
%   if NORMALIZE:
        jp -= (UT)1;
%   else:
        jp += (UT)1;
%   endif
        // the row's best over the lanes (packed: value and index together)
%   if W == 1:
        const real best = rb;
%   else:
        real best = rb.s0;
%     for l in range(1, W):
        best = ${BEST}(best, rb.s${"%x" % l});
%     endfor
%   endif
        if (best ${">" if NORMALIZE else "<"} ${WORST}) {
%   if ATOMIC:
            key_min((volatile __global ulong *)(rowKey + i), ${"~" if NORMALIZE else ""}as_ulong(best));
%   else:
            const ulong bu = ${"~" if NORMALIZE else ""}as_ulong(best);
            rpv[i - s0] = ${"" if NORMALIZE else "-"}as_double(as_ulong(best) & ~idxmask);
            rpi[i - s0] = (int)(bu & idxmask);
%   endif
        }
    }
%   if COLS and LOCAL:
    if (ihi > ilo) {
${pack_flush("(ihi - it)")}
    }
%   elif COLS:
    // segment end: the columns still in registers (column ihi - 1 + k0 + g*W + l)
    if (ihi > ilo) {
        real tail[D];
%     for g in range(G):
%       if W == 1:
        tail[${g}] = cc${g};
%       else:
        vstore${W}(cc${g}, 0, tail + ${g * W});
%       endif
%     endfor
        for (int c = 0; c < D; ++c) {
            const real best = tail[c];
            const int j = ihi - 1 + k0 + c;
            if (best ${">" if NORMALIZE else "<"} ${WORST} && j >= 0 && j < lB) {
%     if ATOMIC:
                key_min((volatile __global ulong *)(colKey + j), ${"~" if NORMALIZE else ""}as_ulong(best));
%     else:
                const ulong bu = ${"~" if NORMALIZE else ""}as_ulong(best);
                const real bs = ${"" if NORMALIZE else "-"}as_double(as_ulong(best) & ~idxmask);
                const int bi = (int)(bu & idxmask);
                const int q = j - s0 - k0;
                if (better(bs, bi, cpv[q], cpi[q])) { cpv[q] = bs; cpi[q] = bi; }
%     endif
            }
        }
    }
%   endif
% else:
% if COLS and not LOCAL:
    ${VT} cacc[L + D];
    ${IT} cidx[L + D];
% endif
    for (int it = ilo; it < ihi; it += L) {
        const int tl = min(L, ihi - it);
% if COLS:
        for (int u = 0; u < L + D; ++u) { cacc[u] = -INFINITY; cidx[u] = -1; }
% endif
        ${ROW_UNROLL}
        for (int t = 0; t < tl; ++t) {
            const int i = it + t;
            const int jb = i + k0;
            const real fa = dfA[i], ga = dgA[i], ra = rA[i];
            const int upd = i > ilo;
            ${VT} rb = -INFINITY;
            ${IT} rj = -1;
% for g in range(G):
            {
                __global const real *pb = dfBp + jb + ${g * W};
                const ${VT} fb = ${LOAD("pb")};
                const ${VT} gb = ${LOAD(f"dgBp + jb + {g * W}")};
                const ${VT} rbv = ${LOAD(f"rBp + jb + {g * W}")};
                if (upd) cov${g} = fma((${VT})fa, gb, fma((${VT})ga, fb, cov${g}));
% if NORMALIZE:
                const ${VT} s = cov${g} * ra * rbv;
% else:
                const ${VT} s = cov${g} + ra + rbv;
% endif
                const ${IT} jv = (${IT})(jb + ${g * W}) + ${IOTA};
                const ${IT} mr = s > rb;
                rb = ${SEL("rb", "s", "mr")};
                rj = ${SEL("rj", "jv", "mr")};
% if COLS:
                const ${IT} mc = s > cacc[t + ${g * W}];
                cacc[t + ${g * W}] = ${SEL(f"cacc[t + {g * W}]", "s", "mc")};
                cidx[t + ${g * W}] = ${SEL(f"cidx[t + {g * W}]", f"(({IT})i)", "mc")};
% endif
            }
% endfor
            // reduce the row's lanes: best score, smallest index on ties
            real bs = -INFINITY;
            int bj = -1;
% if W == 1:
            bs = rb; bj = (int)rj;
% else:
%   for l in range(W):
            if (better(rb.s${"%x" % l}, (int)rj.s${"%x" % l}, bs, bj)) { bs = rb.s${"%x" % l}; bj = (int)rj.s${"%x" % l}; }
%   endfor
% endif
            if (bj >= 0) {
% if ATOMIC:
                key_min((volatile __global ulong *)(rowKey + i), make_key(bs, bj, idxmask));
% else:
                rpv[i - s0] = bs; rpi[i - s0] = bj;
% endif
            }
        }
% if COLS:
        // tile end: merge the tile's column bests (column it + k0 + u + lane)
        {
            ${SPACE} const real *cv = (${SPACE} const real *)cacc;
            ${SPACE} const ${ITS} *ci = (${SPACE} const ${ITS} *)cidx;
            const int ncol = tl + D - 1;
            for (int c = 0; c < ncol; ++c) {
                real bs = -INFINITY;
                int bi = -1;
                for (int l = 0; l < ${W}; ++l) {
                    const int u = c - l;
                    if (u >= 0 && u < L + D) {
                        const real s = cv[u * ${W} + l];
                        const int ii = (int)ci[u * ${W} + l];
                        if (ii >= 0 && better(s, ii, bs, bi)) { bs = s; bi = ii; }
                    }
                }
                const int j = it + k0 + c;
                if (bi >= 0 && j >= 0 && j < lB) {
% if ATOMIC:
                    key_min((volatile __global ulong *)(colKey + j), make_key(bs, bi, idxmask));
% else:
                    const int q = j - s0 - k0;
                    if (better(bs, bi, cpv[q], cpi[q])) { cpv[q] = bs; cpi[q] = bi; }
% endif
                }
            }
        }
% endif
    }
% endif
}

% if not ATOMIC:
// fold the partial row profiles of one launch (all work-items share rows s0 .. s0+R-1)
__kernel void reduce_rows(const int n_work, const int s0, const int lA,
                          __global const real *rowPV, __global const int *rowPI,
                          __global real *gV, __global int *gI)
{
    const int r = get_global_id(0);
    const int i = s0 + r;
    if (r >= ${R} || i >= lA) return;
    real bs = gV[i];
    int bi = gI[i];
    for (int w = 0; w < n_work; ++w) {
        const real s = rowPV[(size_t)w * ${R} + r];
        const int ii = rowPI[(size_t)w * ${R} + r];
        if (ii >= 0 && better(s, ii, bs, bi)) { bs = s; bi = ii; }
    }
    gV[i] = bs; gI[i] = bi;
}

%   if COLS:
// fold the partial column profiles; work-item w owns band k0 = kb + w*D and columns
// s0 + k0 + q for q in [0, R + D - 1)
__kernel void reduce_cols(const int n_work, const int s0, const int kb, const int cbase,
                          const int ncols, const int lB,
                          __global const real *colPV, __global const int *colPI,
                          __global real *gV, __global int *gI)
{
    const int c = cbase + (int)get_global_id(0);
    if ((int)get_global_id(0) >= ncols || c < 0 || c >= lB) return;
    const int rel = c - s0 - kb;            // = w*D + q
    int whi = rel >= 0 ? rel / D : -((-rel + D - 1) / D);
    const int lo = rel - ${R + D - 2};
    int wlo = lo >= 0 ? (lo + D - 1) / D : -((-lo) / D);
    wlo = max(wlo, 0);
    whi = min(whi, n_work - 1);
    real bs = gV[c];
    int bi = gI[c];
    for (int w = wlo; w <= whi; ++w) {
        const int q = rel - w * D;
        const real s = colPV[(size_t)w * ${R + D} + q];
        const int ii = colPI[(size_t)w * ${R + D} + q];
        if (ii >= 0 && better(s, ii, bs, bi)) { bs = s; bi = ii; }
    }
    gV[c] = bs; gI[c] = bi;
}
%   endif
% endif
% else:
## ---------------------------------------------------------------------------------------------
## Top-k (K > 1). Same band / segment / O(1) update as above, unpacked scores (real) and
## indices (int). A row's K best over the band are kept sorted in registers and written to the
## work-item's partial row list. Column lists: for the L rows of a tile, every column the band
## touches (it + k0 + u, u < tl + D - 1) has a sorted K-list in private memory or (LOCAL,
## topk_store="local") in this work-item's slice of a __local array (nothing shared, no
## barrier), plus its entry threshold in a separate array so that W lanes are tested with one
## vector compare; at the tile end the tile's lists are merged into the work-item's partial
## column lists. Per row, one mask over all lanes (row and column thresholds); only when a lane
## passes does a plain loop over the D lanes insert (increasing column order, so a strict > is
## the smaller-index tie rule). reduce_rows_k / reduce_cols_k fold the partial lists of one
## launch into the global [l, K] lists, skipping work-items that left nothing (wflag). Order:
## score descending, then index ascending, so results are deterministic.
## Pruning: a candidate enters a list only if it is at least the K-th score of the global list
## of its row / column so far (gRV / gCV, written by the previous launches' reductions, read
## only here): after the first launches nearly every candidate is rejected by one vector
## compare. (At least: an equal score with a smaller index may still be better.)
<%
    SLOT = L + D
    def ANYGT(a, b):
        return f"(({a}) > ({b}))" if W == 1 else f"any(({a}) > ({b}))"
    def LANE(x, l):
        return x if W == 1 else f"{x}.s{l:x}"
    SPACES = ["__private", "__global"] + (["__local"] if LOCAL and COLS else [])
    MT = ("long" if real == "double" else "int") + ("" if W == 1 else str(W))
    MT = "int" if W == 1 else MT
%>
% for sp in SPACES:
// insert (s, i) into the sorted K-list v / ix (best first; ties: smaller index first)
inline void ins${sp}(${sp} real *v, ${sp} int *ix, real s, int i)
{
%   for q in range(K):
    if (better(s, i, v[${q}], ix[${q}])) {
        const real tv = v[${q}]; const int ti = ix[${q}];
        v[${q}] = s; ix[${q}] = i; s = tv; i = ti;
    }
%   endfor
}
% endfor

<%def name="ins_reg(x, j)">
                    {
                        real cs = ${x};
                        int ci = ${j};
                        if (cs > rth) {
%   for q in range(K):
                            if (cs > rv${q} || (cs == rv${q} && ci < ri${q})) {
                                const real tv = rv${q}; const int ti = ri${q};
                                rv${q} = cs; ri${q} = ci; cs = tv; ci = ti;
                            }
%   endfor
                            rth = fmax(rth, rv${K - 1});
                        }
                    }
</%def>

__kernel void diag_topk(
    __global const int4 *desc, const int doff, const int n_work, const int s0, const int m,
    const int lA, const int lB, const int PAD, const ulong idxmask,
    __global const real *TA, __global const real *muA,
    __global const real *dfA, __global const real *dgA, __global const real *rA,
    __global const real *TB, __global const real *muB,
    __global const real *dfB, __global const real *dgB, __global const real *rB,
    __global real *rowPV, __global int *rowPI, __global const real *gRV, __global int *wflag
% if COLS:
    , __global real *colPV, __global int *colPI, __global const real *gCV
% endif
    )
{
% if COLS and LOCAL:
    __local real lcv[${WG * SLOT * K}];
    __local int lci[${WG * SLOT * K}];
    __local real lth[${WG * SLOT}];
    __local real *cv = lcv + get_local_id(0) * ${SLOT * K};
    __local int *ci = lci + get_local_id(0) * ${SLOT * K};
    __local real *cth = lth + get_local_id(0) * ${SLOT};
% elif COLS:
    real cv[${SLOT * K}];
    int ci[${SLOT * K}];
    real cth[${SLOT}];
% endif
    const int w = get_global_id(0);
    if (w >= n_work) return;
    const int4 dd = desc[doff + w];
    const int k0 = dd.x, ilo = dd.y, ihi = dd.z;
    __global const real *TBp = TB + PAD, *muBp = muB + PAD, *dfBp = dfB + PAD,
                        *dgBp = dgB + PAD, *rBp = rB + PAD;
    __global real *rpv = rowPV + (size_t)w * ${R * K};
    __global int *rpi = rowPI + (size_t)w * ${R * K};
% if COLS:
    // partial column lists of columns s0 + k0 + q, q in [ilo - s0, ihi - s0 + D - 1)
    __global real *cpv = colPV + (size_t)w * ${(R + D) * K};
    __global int *cpi = colPI + (size_t)w * ${(R + D) * K};
    for (int q = (ilo - s0) * ${K}; q < (ihi - s0 + D - 1) * ${K}; ++q) {
        cpv[q] = -INFINITY; cpi[q] = -1;
    }
% endif
${cov_init(VT, LOAD)}
    // whether this work-item left any row / column entry: the reductions skip it otherwise
    int anyr = 0, anyc = 0;
    for (int it = ilo; it < ihi; it += L) {
        const int tl = min(L, ihi - it);
% if COLS:
        for (int u = 0; u < tl + D - 1; ++u) {
            const int j = it + k0 + u;
            cth[u] = (j >= 0 && j < lB) ? nextafter(gCV[(size_t)j * ${K} + ${K - 1}], (real)-INFINITY)
                                        : (real)-INFINITY;
        }
        for (int u = 0; u < (tl + D - 1) * ${K}; ++u) { cv[u] = -INFINITY; ci[u] = -1; }
% endif
        ${ROW_UNROLL}
        for (int t = 0; t < tl; ++t) {
            const int i = it + t;
            const int jb = i + k0;
            const real fa = dfA[i], ga = dgA[i], ra = rA[i];
            const int upd = i > ilo;
% for q in range(K):
            real rv${q} = -INFINITY;
            int ri${q} = -1;
% endfor
            // the row's entry threshold: max(K-th of its list, floor from the global list)
            real rth = nextafter(gRV[(size_t)i * ${K} + ${K - 1}], (real)-INFINITY);
            // scores of the row's D diagonals; one mask: does any lane beat its row or column
            // entry threshold (NaN scores, from invalid or padded windows, never do)
            ${MT} hit = 0;
% for g in range(G):
            ${VT} sc${g};
            {
                const ${VT} fb = ${LOAD(f"dfBp + jb + {g * W}")};
                const ${VT} gb = ${LOAD(f"dgBp + jb + {g * W}")};
                const ${VT} rbv = ${LOAD(f"rBp + jb + {g * W}")};
                if (upd) cov${g} = fma((${VT})fa, gb, fma((${VT})ga, fb, cov${g}));
%   if NORMALIZE:
                sc${g} = cov${g} * ra * rbv;
%   else:
                sc${g} = cov${g} + ra + rbv;
%   endif
                hit |= sc${g} > (${VT})rth;
%   if COLS:
                hit |= sc${g} > ${LOAD(f"cth + t + {g * W}")};
%   endif
            }
% endfor
            if (${"hit" if W == 1 else "any(hit)"}) {
                // rare once the floors are set: a plain loop over the D lanes (small code
                // keeps the hot path above in registers)
                real sa[D];
% for g in range(G):
%   if W == 1:
                sa[${g}] = sc${g};
%   else:
                vstore${W}(sc${g}, 0, sa + ${g * W});
%   endif
% endfor
                for (int d = 0; d < D; ++d) {
                    const real x = sa[d];
                    if (x > rth) {
${ins_reg("x", "jb + d")}
                    }
% if COLS:
                    // column jb + d: tile slot t + d, candidate row i
                    const int u = t + d;
                    if (x > cth[u]) {
                        ins${"__local" if LOCAL else "__private"}(cv + u * ${K}, ci + u * ${K}, x, i);
                        cth[u] = fmax(cth[u], cv[u * ${K} + ${K - 1}]);
                    }
% endif
                }
            }
            {
                __global real *pv = rpv + (i - s0) * ${K};
                __global int *pi = rpi + (i - s0) * ${K};
                pi[0] = ri0;
                if (ri0 >= 0) {         // else the reduction stops at the first entry
                    anyr = 1;
                    pv[0] = rv0;
% for q in range(1, K):
                    pv[${q}] = rv${q}; pi[${q}] = ri${q};
% endfor
                }
            }
        }
% if COLS:
        // tile end: merge the tile's column lists into the partial ones (sorted: stop at the
        // first entry that does not enter)
        for (int u = 0; u < tl + D - 1; ++u) {
            __global real *gv = cpv + (it - s0 + u) * ${K};
            __global int *gi = cpi + (it - s0 + u) * ${K};
            for (int e = 0; e < ${K}; ++e) {
                const int ii = ci[u * ${K} + e];
                const real x = cv[u * ${K} + e];
                if (ii < 0 || !better(x, ii, gv[${K - 1}], gi[${K - 1}])) break;
                ins__global(gv, gi, x, ii);
                anyc = 1;
            }
        }
% endif
    }
    wflag[2 * w] = anyr;
    wflag[2 * w + 1] = anyc;
}

// fold the partial row lists of one launch (work-item w holds rows [ilo_w, ihi_w) of
// s0 .. s0+R-1) into the global [lA, K] lists
__kernel void reduce_rows_k(__global const int4 *desc, const int doff, const int n_work,
                            const int s0, const int lA, __global const int *wflag,
                            __global const real *rowPV, __global const int *rowPI,
                            __global real *gV, __global int *gI)
{
    const int r = get_global_id(0);
    const int i = s0 + r;
    if (r >= ${R} || i >= lA) return;
    real v[${K}];
    int x[${K}];
    int loaded = 0;             // the global list is read (and written) only if a candidate came
    for (int w = 0; w < n_work; ++w) {
        if (!wflag[2 * w]) continue;
        const int4 dd = desc[doff + w];
        if (i < dd.y || i >= dd.z) continue;
        __global const real *pv = rowPV + ((size_t)w * ${R} + r) * ${K};
        __global const int *pi = rowPI + ((size_t)w * ${R} + r) * ${K};
        if (pi[0] < 0) continue;
        if (!loaded) {
            for (int q = 0; q < ${K}; ++q) { v[q] = gV[(size_t)i * ${K} + q]; x[q] = gI[(size_t)i * ${K} + q]; }
            loaded = 1;
        }
        for (int e = 0; e < ${K}; ++e) {
            const int ii = pi[e];
            const real s = pv[e];
            if (ii < 0 || !better(s, ii, v[${K - 1}], x[${K - 1}])) break;
            ins__private(v, x, s, ii);
        }
    }
    if (loaded)
        for (int q = 0; q < ${K}; ++q) { gV[(size_t)i * ${K} + q] = v[q]; gI[(size_t)i * ${K} + q] = x[q]; }
}

%   if COLS:
// fold the partial column lists: work-item w owns band k0 = kb + w*D and columns s0 + k0 + q,
// q in [ilo_w - s0, ihi_w - s0 + D - 1)
__kernel void reduce_cols_k(__global const int4 *desc, const int doff, const int n_work,
                            const int s0, const int kb, const int cbase, const int ncols,
                            const int lB, __global const int *wflag,
                            __global const real *colPV, __global const int *colPI,
                            __global real *gV, __global int *gI)
{
    const int c = cbase + (int)get_global_id(0);
    if ((int)get_global_id(0) >= ncols || c < 0 || c >= lB) return;
    const int rel = c - s0 - kb;            // = w*D + q
    int whi = rel >= 0 ? rel / D : -((-rel + D - 1) / D);
    const int lo = rel - ${R + D - 2};
    int wlo = lo >= 0 ? (lo + D - 1) / D : -((-lo) / D);
    wlo = max(wlo, 0);
    whi = min(whi, n_work - 1);
    real v[${K}];
    int x[${K}];
    int loaded = 0;
    for (int w = wlo; w <= whi; ++w) {
        if (!wflag[2 * w + 1]) continue;
        const int4 dd = desc[doff + w];
        const int q = rel - w * D;
        if (q < dd.y - s0 || q >= dd.z - s0 + D - 1) continue;
        __global const real *pv = colPV + ((size_t)w * ${R + D} + q) * ${K};
        __global const int *pi = colPI + ((size_t)w * ${R + D} + q) * ${K};
        if (pi[0] < 0) continue;
        if (!loaded) {
            for (int e = 0; e < ${K}; ++e) { v[e] = gV[(size_t)c * ${K} + e]; x[e] = gI[(size_t)c * ${K} + e]; }
            loaded = 1;
        }
        for (int e = 0; e < ${K}; ++e) {
            const int ii = pi[e];
            const real s = pv[e];
            if (ii < 0 || !better(s, ii, v[${K - 1}], x[${K - 1}])) break;
            ins__private(v, x, s, ii);
        }
    }
    if (loaded)
        for (int q = 0; q < ${K}; ++q) { gV[(size_t)c * ${K} + q] = v[q]; gI[(size_t)c * ${K} + q] = x[q]; }
}
%   endif
% endif
