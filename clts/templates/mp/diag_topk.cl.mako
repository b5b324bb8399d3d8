<%namespace name="sg" file="/common/subgroup.cl.mako"/>\
## Matrix profile, the diagonal kernel for k > 1 (top-k). Same band / segment / O(1) update as
## the k = 1 kernel (diag_common.cl.mako), unpacked scores (real) and
## indices (int). A row's K best over the band are kept sorted in registers and written to the
## work-item's partial row list. Column lists: for the `tile` (L) rows of a tile, every column the band
## touches (it + k0 + u, u < tl + D - 1) has a sorted K-list in private memory or (LOCAL,
## topk_store="local") in this work-item's slice of a __local array (nothing shared, no
## barrier), plus its entry threshold in a separate array so that the lanes are tested with one
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
## interleave = 1 (GPUs): the local tile lists and the partial lists rowPV / colPV interleaved by
## work-item (element e of work-item w at e * wg + lid locally, e * nws + w globally, nws the
## work-items the partial buffers hold), so that adjacent work-items touch adjacent words:
## coalesced global stores and no local bank conflicts. interleave = 0: a slice per work-item.
## WINDOW = 1 (topk_store="window", GPUs, lanes = 1): diag_topk keeps only the lists of the D
## columns its band reaches at the current row, in registers (diag_topk_window.cl.mako); the
## folds below are the same. subgroup (mp.topk.subgroup): the sub-group size diag_topk requires
## where the compiler knows intel_reqd_sub_group_size (Intel GPUs; 0: the compiler picks).
<%namespace name="shared" file="/mp/diag_common.cl.mako"/>
<%include file="/common/real.cl.mako"/>
<%
    VT, ITS, IT, D, LOAD, SEL, ROW_UNROLL, IOTA = shared.attr.names(real, lanes, groups, unroll)
%>
${shared.prelude()}
<%
    SLOT = tile + D
    def ANYGT(a, b):
        return f"(({a}) > ({b}))" if lanes == 1 else f"any(({a}) > ({b}))"
    def LANE(x, l):
        return x if lanes == 1 else f"{x}.s{l:x}"
    SPACES = ["__private", "__global"] + (["__local"] if LOCAL and COLS else [])
    MT = ("long" if real == "double" else "int") + ("" if lanes == 1 else str(lanes))
    MT = "int" if lanes == 1 else MT
    # topk_store="window" (GPUs, one lane): the band's column lists in registers (own file)
    WINDOW = context.get("WINDOW", 0) and COLS
    # the sub-group size required on Intel GPUs (mp.topk.subgroup; 0: the compiler picks)
    SUBGROUP = context.get("subgroup", 0)
    # local lists: element stride and per-work-item offset; global partial lists: stride nws
    CST = wg if (LOCAL and COLS and interleave) else 1
    def SL(x):
        return x if CST == 1 else f"({x}) * {CST}"
    def GX(x):
        return x if not interleave else f"({x}) * nws"
    def IX(q, sp):
        if sp == "__local":
            return SL(q)
        return GX(q) if sp == "__global" else q
    def CTH(t, g):
        if CST == 1:
            return LOAD(f"cth + {t} + {g * lanes}")
        el = [f"cth[{SL(f'{t} + {g * lanes + l}')}]" for l in range(lanes)]
        return el[0] if lanes == 1 else f"(({VT})({', '.join(el)}))"
%>
% for sp in SPACES:
// insert (s, i) into the sorted K-list v / ix (best first; ties: smaller index first)
inline void ins${sp}(${sp} real *v, ${sp} int *ix, real s, int i${", const int nws" if interleave and sp == "__global" else ""})
{
%   for q in range(K):
<% e = IX(q, sp) %>\
    if (better(s, i, v[${e}], ix[${e}])) {
        const real tv = v[${e}]; const int ti = ix[${e}];
        v[${e}] = s; ix[${e}] = i; s = tv; i = ti;
    }
%   endfor
}
% endfor

% if WINDOW:
<%include file="/mp/diag_topk_window.cl.mako"/>
% else:


${sg.reqd(SUBGROUP)}\
__kernel void diag_topk(
    __global const int4 *desc, const int doff, const int n_work, const int s0, const int m,
    const int lA, const int lB, const int PAD, const int SEG, const ulong idxmask,
    __global const real *TA, __global const real *muA,
    __global const real *dfA, __global const real *dgA, __global const real *rA,
    __global const real *TB, __global const real *muB,
    __global const real *dfB, __global const real *dgB, __global const real *rB,
    __global real *rowPV, __global int *rowPI, __global const real *gRV, __global int *wflag,
    const int nws
% if COLS:
    , __global real *colPV, __global int *colPI, __global const real *gCV
% endif
    )
{
% if COLS and LOCAL:
    __local real lcv[${wg * SLOT * K}];
    __local int lci[${wg * SLOT * K}];
    __local real lth[${wg * SLOT}];
    __local real *cv = lcv + get_local_id(0) * ${1 if CST > 1 else SLOT * K};
    __local int *ci = lci + get_local_id(0) * ${1 if CST > 1 else SLOT * K};
    __local real *cth = lth + get_local_id(0) * ${1 if CST > 1 else SLOT};
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
    __global real *rpv = rowPV + (size_t)w${"" if interleave else f" * SEG * {K}"};
    __global int *rpi = rowPI + (size_t)w${"" if interleave else f" * SEG * {K}"};
% if COLS:
    // partial column lists of columns s0 + k0 + q, q in [ilo - s0, ihi - s0 + D - 1)
    __global real *cpv = colPV + (size_t)w${"" if interleave else f" * (SEG + D) * {K}"};
    __global int *cpi = colPI + (size_t)w${"" if interleave else f" * (SEG + D) * {K}"};
    for (int q = ${"0" if FOLD else f"(ilo - s0) * {K}"}; q < ${f"(SEG + D - 1) * {K}" if FOLD else f"(ihi - s0 + D - 1) * {K}"}; ++q) {
        cpv[${GX("q")}] = -INFINITY; cpi[${GX("q")}] = -1;
    }
% endif
${shared.cov_init(VT, LOAD)}
    // whether this work-item left any row / column entry: the reductions skip it otherwise
    int anyr = 0, anyc = 0;
    for (int it = ilo; it < ihi; it += L) {
        const int tl = min(L, ihi - it);
% if COLS:
        for (int u = 0; u < tl + D - 1; ++u) {
            const int j = it + k0 + u;
            cth[${SL("u")}] = (j >= 0 && j < lB) ? nextafter(gCV[(size_t)j * ${K} + ${K - 1}], (real)-INFINITY)
                                        : (real)-INFINITY;
        }
        for (int u = 0; u < (tl + D - 1) * ${K}; ++u) { cv[${SL("u")}] = -INFINITY; ci[${SL("u")}] = -1; }
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
% for g in range(groups):
            ${VT} sc${g};
            {
                const ${VT} fb = ${LOAD(f"dfBp + jb + {g * lanes}")};
                const ${VT} gb = ${LOAD(f"dgBp + jb + {g * lanes}")};
                const ${VT} rbv = ${LOAD(f"rBp + jb + {g * lanes}")};
                if (upd) cov${g} = fma((${VT})fa, gb, fma((${VT})ga, fb, cov${g}));
%   if NORMALIZE:
                sc${g} = cov${g} * ra * rbv;
%   else:
                sc${g} = cov${g} + ra + rbv;
%   endif
                hit |= sc${g} > (${VT})rth;
%   if COLS:
                hit |= sc${g} > ${CTH("t", g)};
%   endif
            }
% endfor
% if lanes == 1:
            if (hit) {
                // rare once the floors are set: a loop over the D lanes that picks each
                // lane's score from its register (no private array indexed at run time, which
                // ptxas puts on the stack; not unrolled: small code keeps the hot path above
                // in registers)
                #pragma unroll 1
                for (int d = 0; d < D; ++d) {
                    const real x = ${"".join(f"d == {g} ? sc{g} : " for g in range(groups - 1))}sc${groups - 1};
                    if (x > rth) {
${shared.ins_reg("x", "jb + d")}
                    }
%   if COLS:
                    // column jb + d: tile slot t + d, candidate row i
                    const int u = t + d;
                    if (x > cth[${SL("u")}]) {
                        ins${"__local" if LOCAL else "__private"}(cv + ${SL(f"u * {K}")}, ci + ${SL(f"u * {K}")}, x, i);
                        cth[${SL("u")}] = fmax(cth[${SL("u")}], cv[${SL(f"u * {K} + {K - 1}")}]);
                    }
%   endif
                }
            }
% else:
            if (any(hit)) {
                // rare once the floors are set: a plain loop over the D lanes (small code
                // keeps the hot path above in registers)
                real sa[D];
% for g in range(groups):
%   if lanes == 1:
                sa[${g}] = sc${g};
%   else:
                vstore${lanes}(sc${g}, 0, sa + ${g * lanes});
%   endif
% endfor
                for (int d = 0; d < D; ++d) {
                    const real x = sa[d];
                    if (x > rth) {
${shared.ins_reg("x", "jb + d")}
                    }
% if COLS:
                    // column jb + d: tile slot t + d, candidate row i
                    const int u = t + d;
                    if (x > cth[${SL("u")}]) {
                        ins${"__local" if LOCAL else "__private"}(cv + ${SL(f"u * {K}")}, ci + ${SL(f"u * {K}")}, x, i);
                        cth[${SL("u")}] = fmax(cth[${SL("u")}], cv[${SL(f"u * {K} + {K - 1}")}]);
                    }
% endif
                }
            }
% endif
            {
                __global real *pv = rpv + ${GX(f"(size_t)(i - s0) * {K}") if interleave else f"(i - s0) * {K}"};
                __global int *pi = rpi + ${GX(f"(size_t)(i - s0) * {K}") if interleave else f"(i - s0) * {K}"};
                pi[0] = ri0;
                if (ri0 >= 0) {         // else the reduction stops at the first entry
                    anyr = 1;
                    pv[0] = rv0;
% for q in range(1, K):
                    pv[${GX(q)}] = rv${q}; pi[${GX(q)}] = ri${q};
% endfor
                }
            }
        }
% if COLS:
        // tile end: merge the tile's column lists into the partial ones (sorted: stop at the
        // first entry that does not enter)
        for (int u = 0; u < tl + D - 1; ++u) {
            __global real *gv = cpv + ${GX(f"(size_t)(it - s0 + u) * {K}") if interleave else f"(it - s0 + u) * {K}"};
            __global int *gi = cpi + ${GX(f"(size_t)(it - s0 + u) * {K}") if interleave else f"(it - s0 + u) * {K}"};
            for (int e = 0; e < ${K}; ++e) {
                const int ii = ci[${SL(f"u * {K} + e")}];
                const real x = cv[${SL(f"u * {K} + e")}];
                if (ii < 0 || !better(x, ii, gv[${GX(K - 1)}], gi[${GX(K - 1)}])) break;
                ins__global(gv, gi, x, ii${", nws" if interleave else ""});
                anyc = 1;
            }
        }
% endif
    }
    wflag[2 * w] = anyr;
    wflag[2 * w + 1] = anyc;
}
% endif

% if FOLD:
<%
    BLK = FOLDC * D * K                 # entries of a column block's lists
%>
// Work-group-cooperative folds (FOLD > 0, GPUs). The fold of lists is the K best of their
// union (score descending, then index ascending: a total order), whatever the order of the
// merges, so the results are those of the one-work-item-per-row / -column folds below.
// Both read in lockstep: in every step of their loops all work-items read the same entry of
// the same slot of adjacent work-items' interleaved lists (adjacent words), and a work-item
// whose list is empty or has stopped entering only masks its merge; a step is skipped by the
// whole group (a flag in local memory) when no list of it has an entry (85 % of the steps at
// n = 2^15, k = 3, segment 2048). Where the compiler has cl_intel_required_subgroup_size
// (Intel GPUs) the sub-group size is pinned to 16: clts.mp.plan.FOLD_SIMD_INTEL, the width
// the occupancy model counts the groups' hardware threads at, whatever width IGC would pick.
#ifdef cl_intel_required_subgroup_size
#define FOLD_SIMD __attribute__((intel_reqd_sub_group_size(16)))
#else
#define FOLD_SIMD
#endif
<%def name="merge(src_v, src_i, dst_v, dst_i)">
            for (int e = 0; e < ${K}; ++e) {
                const int ii = ${src_i};
                const real s = ${src_v};
                if (ii < 0 || !better(s, ii, ${dst_v}[${K - 1}], ${dst_i}[${K - 1}])) break;
                ins__private(${dst_v}, ${dst_i}, s, ii);
            }
</%def>
## the lockstep merge of the list at pv / pi (entry e at pv[GX(e)]) into a sorted list whose
## entry q is at DV(q) / DI(q): every entry read, merged while ``go`` (the list still enters)
<%def name="merge_lockstep(DV, DI, go)">
            for (int e = 0; e < ${K}; ++e) {
                int si = pi[${GX("e")}];
                real s = pv[${GX("e")}];
                ${go} = ${go} && si >= 0 && better(s, si, ${DV(K - 1)}, ${DI(K - 1)});
                if (${go}) {
%   for q in range(K):
                    if (better(s, si, ${DV(q)}, ${DI(q)})) {
                        const real tv = ${DV(q)}; const int ti = ${DI(q)};
                        ${DV(q)} = s; ${DI(q)} = si; s = tv; si = ti;
                    }
%   endfor
                }
            }
</%def>

// the heads of the partial row lists set to -1 (empty lists) before a call's first launch
__kernel void clear_heads_k(__global int *rowPI, const int nws, const int SEG)
{
    const int w = get_global_id(0);     // work-item w's heads, rows 0 .. segment - 1
    if (w >= nws) return;
    for (int r = 0; r < SEG; ++r)
% if interleave:
        rowPI[(size_t)r * ${K} * nws + w] = -1;
% else:
        rowPI[((size_t)w * SEG + r) * ${K}] = -1;
% endif
}

// rows: one work-group per row of the segment; its work-items take the launch's work-items
// ${FOLD} at a time (adjacent work-items: adjacent words of the interleaved lists), then a tree
// of list merges in local memory (element e of work-item j at e * FOLD + j). A list the fold
// merged gets its head cleared (-1), so that the heads of rows outside a work-item's next
// segment (which diag_topk does not write) read as empty: no work descriptor is read
// (clear_heads_k empties them all before a call's first launch)
__kernel __attribute__((reqd_work_group_size(${FOLD}, 1, 1))) FOLD_SIMD
void reduce_rows_k(__global const int4 *desc, const int doff, const int n_work,
                   const int s0, const int lA, const int SEG, __global const int *wflag,
                   const int nws, __global const real *rowPV, __global int *rowPI,
                   __global real *gV, __global int *gI)
{
    __local real lv[${FOLD * K}];
    __local int li[${FOLD * K}];
    __local int live[3];        // per step, rotating: whether a list of the step has an entry
    const int r = get_group_id(0);
    const int i = s0 + r;
    const int lid = get_local_id(0);
    // rows past the segment or the series: no work, but every barrier (no early return)
    const int nw = r < SEG && i < lA ? n_work : 0;
    real v[${K}];
    int x[${K}];
    for (int q = 0; q < ${K}; ++q) { v[q] = -INFINITY; x[q] = -1; }
    for (int j = lid; j < 3; j += ${FOLD}) live[j] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int c = 0;
    for (int w0 = 0; w0 < nw; w0 += ${FOLD}) {
        const int w = w0 + lid;
        const int own = w < nw;
% if interleave:
        __global const real *pv = rowPV + (size_t)r * ${K} * nws + w;
        __global int *pi = rowPI + (size_t)r * ${K} * nws + w;
% else:
        __global const real *pv = rowPV + ((size_t)w * SEG + r) * ${K};
        __global int *pi = rowPI + ((size_t)w * SEG + r) * ${K};
% endif
        const int head = own ? pi[0] : -1;
        if (head >= 0) atomic_or(live + c, 1);
        if (lid == 0) live[c == 2 ? 0 : c + 1] = 0;     // the next step's, last read two steps ago
        barrier(CLK_LOCAL_MEM_FENCE);
        if (live[c] && own) {
            int go = 1;
${merge_lockstep(lambda q: f"v[{q}]", lambda q: f"x[{q}]", "go")}
            pi[0] = -1;
        }
        c = c == 2 ? 0 : c + 1;
    }
    for (int q = 0; q < ${K}; ++q) { lv[q * ${FOLD} + lid] = v[q]; li[q * ${FOLD} + lid] = x[q]; }
    barrier(CLK_LOCAL_MEM_FENCE);
<% h = FOLD // 2 %>
% while h >= 1:
    if (lid < ${h}) {
${merge(f"lv[e * {FOLD} + lid + {h}]", f"li[e * {FOLD} + lid + {h}]", "v", "x")}
        for (int q = 0; q < ${K}; ++q) { lv[q * ${FOLD} + lid] = v[q]; li[q * ${FOLD} + lid] = x[q]; }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
<% h //= 2 %>
% endwhile
    if (lid == 0 && x[0] >= 0) {        // the global list is read (and written) only if a candidate came
        real g[${K}];
        int gx[${K}];
        for (int q = 0; q < ${K}; ++q) { g[q] = gV[(size_t)i * ${K} + q]; gx[q] = gI[(size_t)i * ${K} + q]; }
${merge("v[e]", "x[e]", "g", "gx")}
        for (int q = 0; q < ${K}; ++q) { gV[(size_t)i * ${K} + q] = g[q]; gI[(size_t)i * ${K} + q] = gx[q]; }
    }
}

%   if COLS:
// columns: work-item w owns band k0 = kb + w*D and columns s0 + k0 + q, q in
// [ilo_w - s0, ihi_w - s0 + D - 1); column rel = cg*D + t (c = cbase + rel) gets slot
// q = b*D + t of work-item w = cg - b. One work-group per ${FOLDC} column groups cg (adjacent
// work-items: adjacent cg, so adjacent w for the same slot: adjacent words of the interleaved
// lists; a work-item past the launch's work-items reads its nearest one's and merges nothing).
// The block's global lists (${FOLDC * D} columns, contiguous) are read into local memory
// together (column cg0*D + lid*D + t, entry e at (t * K + e) * FOLDC + lid: no bank
// conflicts), the launch's entries merged into them in place, and written back together
<%
    def GL(t, e):
        return f"(({t}) * {K} + {e}) * {FOLDC} + lid"
%>
__kernel __attribute__((reqd_work_group_size(${FOLDC}, 1, 1))) FOLD_SIMD
void reduce_cols_k(__global const int4 *desc, const int doff, const int n_work,
                   const int s0, const int kb, const int cbase, const int ncols,
                   const int lB, const int SEG, __global const int *wflag, const int nws,
                   __global const real *colPV, __global const int *colPI,
                   __global real *gV, __global int *gI)
{
    __local real gl[${BLK}];
    __local int gli[${BLK}];
    __local int live[3];        // per step, rotating: whether a list of the step has an entry
    const int lid = get_local_id(0);
    const int cg0 = (int)get_group_id(0) * ${FOLDC};
    const int cg = cg0 + lid;
    const int rel0 = cg0 * D;
    const int blo = max(0, cg0 - (n_work - 1));
    // slot rows b of a column (slot q = b * D + t): (SEG + D - 2) / D + 1
    const int bhi = min((SEG + D - 2) / D, cg0 + ${FOLDC - 1});
    for (int j = lid; j < 3; j += ${FOLDC}) live[j] = 0;
    for (int j = lid; j < ${BLK}; j += ${FOLDC}) {
        const int u = j / ${K};             // column of the block, = cg * D + t
        const int e = j - u * ${K};
        const int c = cbase + rel0 + u;
        const int l = ((u % D) * ${K} + e) * ${FOLDC} + u / D;
        const int ok = rel0 + u < ncols && c >= 0 && c < lB;
        gl[l] = ok ? gV[(size_t)c * ${K} + e] : -INFINITY;
        gli[l] = ok ? gI[(size_t)c * ${K} + e] : -1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int c3 = 0;
    for (int b = blo; b <= bhi; ++b) {
        const int w = cg - b;
        const int own = w >= 0 && w < n_work;
        const int wr = clamp(w, 0, n_work - 1);
        int any = 0;
        for (int t = 0; t < D; ++t) {
            const int q = b * D + t;
            if (q >= SEG + D - 1) break;
% if interleave:
            const int h = colPI[(size_t)q * ${K} * nws + wr];
% else:
            const int h = colPI[((size_t)wr * (SEG + D) + q) * ${K}];
% endif
            any |= own && h >= 0;
        }
        if (any) atomic_or(live + c3, 1);
        if (lid == 0) live[c3 == 2 ? 0 : c3 + 1] = 0;   // the next step's, last read two steps ago
        barrier(CLK_LOCAL_MEM_FENCE);
        if (live[c3]) {
            for (int t = 0; t < D; ++t) {
                const int q = b * D + t;
                if (q >= SEG + D - 1) break;
                const int u = lid * D + t;
                const int c = cbase + rel0 + u;
                int go = own && rel0 + u < ncols && c >= 0 && c < lB;
% if interleave:
                __global const real *pv = colPV + (size_t)q * ${K} * nws + wr;
                __global const int *pi = colPI + (size_t)q * ${K} * nws + wr;
% else:
                __global const real *pv = colPV + ((size_t)wr * (SEG + D) + q) * ${K};
                __global const int *pi = colPI + ((size_t)wr * (SEG + D) + q) * ${K};
% endif
${merge_lockstep(lambda e: f"gl[{GL('t', e)}]", lambda e: f"gli[{GL('t', e)}]", "go")}
            }
        }
        c3 = c3 == 2 ? 0 : c3 + 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = lid; j < ${BLK}; j += ${FOLDC}) {
        const int u = j / ${K};
        const int e = j - u * ${K};
        const int c = cbase + rel0 + u;
        const int l = ((u % D) * ${K} + e) * ${FOLDC} + u / D;
        if (rel0 + u < ncols && c >= 0 && c < lB) {
            const size_t o = (size_t)c * ${K} + e;
            gV[o] = gl[l];
            gI[o] = gli[l];
        }
    }
}
%   endif
% else:
// fold the partial row lists of one launch (work-item w holds rows [ilo_w, ihi_w) of
// s0 .. s0+R-1) into the global [lA, K] lists
__kernel void reduce_rows_k(__global const int4 *desc, const int doff, const int n_work,
                            const int s0, const int lA, const int SEG,
                            __global const int *wflag,
                            const int nws, __global const real *rowPV, __global const int *rowPI,
                            __global real *gV, __global int *gI)
{
    const int r = get_global_id(0);
    const int i = s0 + r;
    if (r >= SEG || i >= lA) return;
    real v[${K}];
    int x[${K}];
    int loaded = 0;             // the global list is read (and written) only if a candidate came
    for (int w = 0; w < n_work; ++w) {
        if (!wflag[2 * w]) continue;
        const int4 dd = desc[doff + w];
        if (i < dd.y || i >= dd.z) continue;
% if interleave:
        __global const real *pv = rowPV + (size_t)r * ${K} * nws + w;
        __global const int *pi = rowPI + (size_t)r * ${K} * nws + w;
% else:
        __global const real *pv = rowPV + ((size_t)w * SEG + r) * ${K};
        __global const int *pi = rowPI + ((size_t)w * SEG + r) * ${K};
% endif
        if (pi[0] < 0) continue;
        if (!loaded) {
            for (int q = 0; q < ${K}; ++q) { v[q] = gV[(size_t)i * ${K} + q]; x[q] = gI[(size_t)i * ${K} + q]; }
            loaded = 1;
        }
        for (int e = 0; e < ${K}; ++e) {
            const int ii = pi[${GX("e")}];
            const real s = pv[${GX("e")}];
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
                            const int lB, const int SEG, __global const int *wflag,
                            const int nws,
                            __global const real *colPV, __global const int *colPI,
                            __global real *gV, __global int *gI)
{
    const int c = cbase + (int)get_global_id(0);
    if ((int)get_global_id(0) >= ncols || c < 0 || c >= lB) return;
    const int rel = c - s0 - kb;            // = w*D + q
    int whi = rel >= 0 ? rel / D : -((-rel + D - 1) / D);
    const int lo = rel - (SEG + D - 2);
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
% if interleave:
        __global const real *pv = colPV + (size_t)q * ${K} * nws + w;
        __global const int *pi = colPI + (size_t)q * ${K} * nws + w;
% else:
        __global const real *pv = colPV + ((size_t)w * (SEG + D) + q) * ${K};
        __global const int *pi = colPI + ((size_t)w * (SEG + D) + q) * ${K};
% endif
        if (pi[0] < 0) continue;
        if (!loaded) {
            for (int e = 0; e < ${K}; ++e) { v[e] = gV[(size_t)c * ${K} + e]; x[e] = gI[(size_t)c * ${K} + e]; }
            loaded = 1;
        }
        for (int e = 0; e < ${K}; ++e) {
            const int ii = pi[${GX("e")}];
            const real s = pv[${GX("e")}];
            if (ii < 0 || !better(s, ii, v[${K - 1}], x[${K - 1}])) break;
            ins__private(v, x, s, ii);
        }
    }
    if (loaded)
        for (int q = 0; q < ${K}; ++q) { gV[(size_t)c * ${K} + q] = v[q]; gI[(size_t)c * ${K} + q] = x[q]; }
}
%   endif
% endif
