## Matrix profile, the diagonal kernel for k = 1 (STOMP / GPU-STOMP_OPT / SCAMP update on
## diagonals); bands, segments, scores and the O(1) update: diag_common.cl.mako.
## Row bests are reduced over the band per row. Column bests (LOCAL = 0, store="private"): PACK
## (float64) in registers that shift one lane per row, else in private arrays for a tile of
## `tile` rows (the C macro L) merged at the tile end; LOCAL = 1 (store="local"): for a tile of `tile` rows in this
## work-item's slice of a __local array (nothing shared, no barrier), merged at the tile end;
## interleave = 1: the slices interleaved by work-item (slot u of work-item l at u * wg + l), so that
## adjacent work-items touch adjacent words (no local-memory bank conflicts; a contiguous slice
## of tile + D doubles put 8 or more lanes of a warp on the same bank).
## Merge: ATOMIC -> 64-bit atomic minimum (compare-and-swap loop, cl_khr_int64_base_atomics) on
## a key packing (1 - score or -score, index), smaller index on ties; else per-work-item partial
## profiles (no races) that reduce_rows / reduce_cols fold into the global profile.
<%namespace name="shared" file="/mp/diag_common.cl.mako"/>
<%include file="/common/real.cl.mako"/>
<%
    VT, ITS, IT, D, LOAD, SEL, ROW_UNROLL, IOTA = shared.attr.names(real, lanes, groups, unroll)
    SPACE = "__local" if LOCAL else "__private"
    # slot stride and per-work-item offset of the local tile arrays (interleave: interleaved)
    CST = wg if (LOCAL and COLS and interleave) else 1
    COFF = 1 if CST > 1 else tile + D
    def SL(x):
        return x if CST == 1 else f"({x}) * {CST}"
%>
${shared.prelude()}

## PACK (double only): the index is packed into the low IDXBITS bits of a non-negative score,
## so that one fmax (fmin) keeps the best value and its index together (ties: smallest index).
## NORMALIZE: score = 1 + corr in [0, 2], maximised, index stored complemented;
## plain: score = d^2 / 2 >= 0, minimised, index stored as is.
<%
    BEST = "fmax" if NORMALIZE else "fmin"
    WORST = "-INFINITY" if NORMALIZE else "INFINITY"
%>
% if PACK:
typedef ${"ulong" if lanes == 1 else f"ulong{lanes}"} UT;
#define AS_U(x) ${"as_ulong" if lanes == 1 else f"as_ulong{lanes}"}(x)
#define AS_R(x) ${"as_double" if lanes == 1 else f"as_double{lanes}"}(x)
%   if keep == "select":
## keep = "select": a packed candidate v into the running best a is v where strictly better,
## else a. a is never NaN (it starts at the worst value and only takes candidates that compared
## better), so this equals fmax / fmin (which drop a NaN candidate: a lane with j < 0) bit for
## bit, in one compare-select (x86: one vmaxpd / vminpd), where fmax / fmin's NaN rule costs a
## compare and a blend more; keep = "minmax": fmax / fmin (one instruction on GPUs)
<% op = ">" if NORMALIZE else "<" %>\
inline ${VT} keep_best(const ${VT} a, const ${VT} v) { return ${f"v {op} a ? v : a" if lanes == 1 else f"select(a, v, v {op} a)"}; }
%   endif
% endif

<%def name="merge_column()">
## a packed column best ``best`` of column ``j`` into the profile (key_min or the partial list)
<% WORST = "-INFINITY" if NORMALIZE else "INFINITY" %>\
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
</%def>

<%def name="pack_flush(TL)">
<%
    BEST = "fmax" if NORMALIZE else "fmin"
    WORST = "-INFINITY" if NORMALIZE else "INFINITY"
%>
        {
            // tile end: column it + k0 + c is the best over lanes l of slot c - l
%   if CST == 1:
            __local const real *cs = (__local const real *)cl;
%   endif
            const int ncol = ${TL} + D - 1;
            for (int c = 0; c < ncol; ++c) {
                real best = ${WORST};
                for (int l = 0; l < ${lanes}; ++l) {
                    const int u = c - l;
%   if CST == 1:
                    if (u >= 0) best = ${BEST}(best, cs[u * ${lanes} + l]);
%   else:
                    if (u >= 0) best = ${BEST}(best, ((__local const real *)(cl + ${SL("u")}))[l]);
%   endif
                }
                const int j = it + k0 + c;
${merge_column()}
            }
        }
</%def>

__kernel void diag(
    __global const int4 *desc, const int doff, const int n_work, const int s0, const int m,
    const int lA, const int lB, const int PAD, const int SEG, const ulong idxmask,
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
    __local ${VT} lcl[${wg * (tile + D)}];
    __local ${VT} *cl = lcl + get_local_id(0) * ${COFF};
%   else:
    __local ${VT} lcacc[${wg * (tile + D)}];
    __local ${IT} lcidx[${wg * (tile + D)}];
    __local ${VT} *cacc = lcacc + get_local_id(0) * ${COFF};
    __local ${IT} *cidx = lcidx + get_local_id(0) * ${COFF};
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
    __global real *rpv = rowPV + (size_t)w * SEG;
    __global int *rpi = rowPI + (size_t)w * SEG;
    for (int r = 0; r < SEG; ++r) { rpv[r] = -INFINITY; rpi[r] = -1; }
%   if COLS:
    __global real *cpv = colPV + (size_t)w * (SEG + D);
    __global int *cpi = colPI + (size_t)w * (SEG + D);
    for (int r = 0; r < SEG + D; ++r) { cpv[r] = -INFINITY; cpi[r] = -1; }
%   endif
% endif

${shared.cov_init(VT, LOAD)}

% if PACK:
<%
    def SHIFT(x, y):
        # lanes 1..lanes-1 of x, then lane 0 of y (one valignq on AVX-512)
        if lanes == 1:
            return y
        # swizzles of length 1, 2, 4, 8 only: split lanes 1..lanes-1 into pieces
        rest = list(range(1, lanes))
        parts = []
        for size in (8, 4, 2, 1):   # no 3-lane pieces (Oclgrind mis-handles vec3)
            while len(rest) >= size and size <= len(rest):
                parts.append(rest[:size])
                rest = rest[size:]
        sw = ", ".join(f"{x}.s" + "".join("%x" % l for l in p) for p in parts)
        return f"(({VT})({sw}, {y}.s0))"
%>
    const UT hmask = (UT)(~idxmask);
<%
    def KEEP(a, v):
        if keep != "select":
            return f"{BEST}({a}, {v})"
        return f"keep_best({a}, {v})"
%>
%   if COLS and LOCAL:
    // column bests of a tile of L rows in local memory: slot u = t + g*W, lane l holds
    // column it + k0 + u + l (aligned vectors, no overlap between rows); merged at tile end
    int it = ilo;
    for (int u = 0; u < ${tile + D}; ++u) cl[${SL("u")}] = (${VT})${WORST};
%   elif COLS:
    // column bests in registers: cc<g> lane l holds column i + k0 + g*W + l of the current row;
    // per row they shift down one lane (the column leaving lane 0 of group 0 is complete)
%     for g in range(groups):
    ${VT} cc${g} = ${WORST};
%     endfor
%   endif
%   if NORMALIZE:
    // packed column index, linear in j: mask - j (= ~j & mask for 0 <= j <= mask); lanes with
    // j < 0 have NaN scores, which stay NaN whatever mantissa bits the OR sets
    UT jp = (UT)((long)idxmask - (long)(ilo + k0)) - (UT)${IOTA.replace(IT, "ulong" if lanes == 1 else f"ulong{lanes}") if lanes > 1 else "0"};
%   else:
    UT jp = (UT)(long)(ilo + k0) + (UT)${IOTA.replace(IT, "ulong" if lanes == 1 else f"ulong{lanes}") if lanes > 1 else "0"};
%   endif
    // the first row apart (no update: its covariance is the exact one), so that the loop over
    // the others updates without a per-row test
%   for first in (True, False):
%     if first:
    if (ilo < ihi) {
        const int i = ilo;
%     else:
    ${ROW_UNROLL}
    for (int i = ilo + 1; i < ihi; ++i) {
%     endif
        const int jb = i + k0;
%     if first:
        const real ra = rA[i];
%     else:
        const real fa = dfA[i], ga = dgA[i], ra = rA[i];
%     endif
%   if NORMALIZE:
        const UT ip = (UT)(~(ulong)i & idxmask);
%   else:
        const UT ip = (UT)((ulong)i & idxmask);
%   endif
%   if COLS and LOCAL and not first:
        if (i - it == L) {
${pack_flush("L")}
            it = i;
            for (int u = 0; u < ${tile + D}; ++u) cl[${SL("u")}] = (${VT})${WORST};
        }
%   elif COLS and not first:
        {
            // column jb - 1 is complete: merge it, then shift every group down one lane
            const real best = ${"cc0" if lanes == 1 else "cc0.s0"};
            const int j = jb - 1;
${merge_column()}
%     for g in range(groups - 1):
            cc${g} = ${SHIFT(f"cc{g}", f"cc{g + 1}")};
%     endfor
            cc${groups - 1} = ${SHIFT(f"cc{groups - 1}", f"(({VT}){WORST})")};
        }
%   endif
        ${VT} rb = ${WORST};
%   for g in range(groups):
        {
            const ${VT} rbv = ${LOAD(f"rBp + jb + {g * lanes}")};
%     if not first:
            const ${VT} fb = ${LOAD(f"dfBp + jb + {g * lanes}")};
            const ${VT} gb = ${LOAD(f"dgBp + jb + {g * lanes}")};
            cov${g} = fma((${VT})fa, gb, fma((${VT})ga, fb, cov${g}));
%     endif
%     if NORMALIZE:
            // 1 + corr >= 0: rounding puts it just below 0 for corr = -1 (a sine half a period
            // away), and a negative packed score's key would win every atomic minimum; NaN
            // (lanes with j < 0) stays NaN
            const ${VT} sr = fma(cov${g} * ra, rbv, (${VT})1);
            const ${VT} s = sr < (${VT})0 ? (${VT})0 : sr;
            const UT jpg = jp - (UT)${g * lanes};
%     else:
            const ${VT} s = fabs(cov${g} + ra + rbv);   // d^2/2 >= 0 (|.| of rounding noise)
            const UT jpg = jp + (UT)${g * lanes};
%     endif
            const UT sh = AS_U(s) & hmask;
            rb = ${KEEP("rb", "AS_R(sh | jpg)")};
%     if COLS and LOCAL:
            cl[${SL(f"i - it + {g * lanes}")}] = ${KEEP(f"cl[{SL(f'i - it + {g * lanes}')}]", "AS_R(sh | ip)")};
%     elif COLS:
            cc${g} = ${KEEP(f"cc{g}", "AS_R(sh | ip)")};
%     endif
        }
%   endfor
%   if NORMALIZE:
        jp -= (UT)1;
%   else:
        jp += (UT)1;
%   endif
        // the row's best over the lanes (packed: value and index together)
%   if lanes == 1:
        const real best = rb;
%   elif keep == "select":
        // halves against halves (no two lanes hold the same packed value: their indices differ,
        // so the order does not matter), compare and select: rb is never NaN
<%
    op = ">" if NORMALIZE else "<"
    w, cur = lanes, "rb"
%>\
%     while w > 2:
<% w //= 2 %>\
        const ${real}${w} rb${w} = select(${cur}.lo, ${cur}.hi, ${cur}.hi ${op} ${cur}.lo);
<% cur = f"rb{w}" %>\
%     endwhile
        const real best = ${cur}.s1 ${op} ${cur}.s0 ? ${cur}.s1 : ${cur}.s0;
%   else:
        real best = rb.s0;
%     for l in range(1, lanes):
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
%   endfor
%   if COLS and LOCAL:
    if (ihi > ilo) {
${pack_flush("(ihi - it)")}
    }
%   elif COLS:
    // segment end: the columns still in registers (column ihi - 1 + k0 + g*W + l)
    if (ihi > ilo) {
        real tail[D];
%     for g in range(groups):
%       if lanes == 1:
        tail[${g}] = cc${g};
%       else:
        vstore${lanes}(cc${g}, 0, tail + ${g * lanes});
%       endif
%     endfor
        for (int c = 0; c < D; ++c) {
            const real best = tail[c];
            const int j = ihi - 1 + k0 + c;
${merge_column()}
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
        for (int u = 0; u < L + D; ++u) { cacc[${SL("u")}] = -INFINITY; cidx[${SL("u")}] = -1; }
% endif
        ${ROW_UNROLL}
        for (int t = 0; t < tl; ++t) {
            const int i = it + t;
            const int jb = i + k0;
            const real fa = dfA[i], ga = dgA[i], ra = rA[i];
            const int upd = i > ilo;
            ${VT} rb = -INFINITY;
            ${IT} rj = -1;
% for g in range(groups):
            {
                __global const real *pb = dfBp + jb + ${g * lanes};
                const ${VT} fb = ${LOAD("pb")};
                const ${VT} gb = ${LOAD(f"dgBp + jb + {g * lanes}")};
                const ${VT} rbv = ${LOAD(f"rBp + jb + {g * lanes}")};
                if (upd) cov${g} = fma((${VT})fa, gb, fma((${VT})ga, fb, cov${g}));
% if NORMALIZE:
                const ${VT} s = cov${g} * ra * rbv;
% else:
                const ${VT} s = cov${g} + ra + rbv;
% endif
                const ${IT} jv = (${IT})(jb + ${g * lanes}) + ${IOTA};
                const ${IT} mr = s > rb;
                rb = ${SEL("rb", "s", "mr")};
                rj = ${SEL("rj", "jv", "mr")};
% if COLS:
<% cu = SL(f"t + {g * lanes}") %>\
                const ${IT} mc = s > cacc[${cu}];
                cacc[${cu}] = ${SEL(f"cacc[{cu}]", "s", "mc")};
                cidx[${cu}] = ${SEL(f"cidx[{cu}]", f"(({IT})i)", "mc")};
% endif
            }
% endfor
            // reduce the row's lanes: best score, smallest index on ties
            real bs = -INFINITY;
            int bj = -1;
% if lanes == 1:
            bs = rb; bj = (int)rj;
% else:
%   for l in range(lanes):
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
% if CST == 1:
            ${SPACE} const real *cv = (${SPACE} const real *)cacc;
            ${SPACE} const ${ITS} *ci = (${SPACE} const ${ITS} *)cidx;
% endif
            const int ncol = tl + D - 1;
            for (int c = 0; c < ncol; ++c) {
                real bs = -INFINITY;
                int bi = -1;
                for (int l = 0; l < ${lanes}; ++l) {
                    const int u = c - l;
                    if (u >= 0 && u < L + D) {
% if CST == 1:
                        const real s = cv[u * ${lanes} + l];
                        const int ii = (int)ci[u * ${lanes} + l];
% else:
                        const real s = ((${SPACE} const real *)(cacc + ${SL("u")}))[l];
                        const int ii = (int)((${SPACE} const ${ITS} *)(cidx + ${SL("u")}))[l];
% endif
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
__kernel void reduce_rows(const int n_work, const int s0, const int lA, const int SEG,
                          __global const real *rowPV, __global const int *rowPI,
                          __global real *gV, __global int *gI)
{
    const int r = get_global_id(0);
    const int i = s0 + r;
    if (r >= SEG || i >= lA) return;
    real bs = gV[i];
    int bi = gI[i];
    for (int w = 0; w < n_work; ++w) {
        const real s = rowPV[(size_t)w * SEG + r];
        const int ii = rowPI[(size_t)w * SEG + r];
        if (ii >= 0 && better(s, ii, bs, bi)) { bs = s; bi = ii; }
    }
    gV[i] = bs; gI[i] = bi;
}

%   if COLS:
// fold the partial column profiles; work-item w owns band k0 = kb + w*D and columns
// s0 + k0 + q for q in [0, R + D - 1)
__kernel void reduce_cols(const int n_work, const int s0, const int kb, const int cbase,
                          const int ncols, const int lB, const int SEG,
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
    real bs = gV[c];
    int bi = gI[c];
    for (int w = wlo; w <= whi; ++w) {
        const int q = rel - w * D;
        const real s = colPV[(size_t)w * (SEG + D) + q];
        const int ii = colPI[(size_t)w * (SEG + D) + q];
        if (ii >= 0 && better(s, ii, bs, bi)) { bs = s; bi = ii; }
    }
    gV[c] = bs; gI[c] = bi;
}
%   endif
% endif
