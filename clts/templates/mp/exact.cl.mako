<%namespace name="sg" file="/common/subgroup.cl.mako"/>\
## Matrix profile: exact distances, O(m) each, in the precision of ``real``.
## pair_dist: the distance of given pairs (the winners of the diagonal kernel are re-evaluated,
##   so P does not carry the cancellation of 2m(1 - corr)).
## scan_rows / scan_cols: exact nearest neighbours for the "special" subsequences (constant or
##   too ill-conditioned for the O(1) update: see plan.py), best left (j < i) and right (j > i).
## block: a block of B rows of the distance matrix (k > 16), special pairs exact.
## scan_rows_k / scan_cols_k (K > 0): k-lists of the special windows (k = 2 .. 16).
## Conventions: NaN/inf window -> inf; both constant -> 0; one constant -> sqrt(m).
<%! from clts.mp.network import batcher %>\
<%include file="/common/real.cl.mako"/>
<%
    VV = real if lanes == 1 else f"{real}{lanes}"
    COOP = context.get("coop", 0)     # pair_dist_coop's work-items per pair (0: none)
    def VL(p):
        return f"(*({p}))" if lanes == 1 else f"vload{lanes}(0, {p})"
    def LANE(x, l):
        return x if lanes == 1 else f"{x}.s{l:x}"
%>

inline real wdist(__global const real *x, real mx, real sx, int fx,
                  __global const real *y, real my, real sy, int fy, int m)
{
    if ((fx & ${FLAG_NONFINITE}) || (fy & ${FLAG_NONFINITE})) return INFINITY;
% if NORMALIZE:
    if ((fx & ${FLAG_CONSTANT}) && (fy & ${FLAG_CONSTANT})) return 0;
    if ((fx & ${FLAG_CONSTANT}) || (fy & ${FLAG_CONSTANT})) return sqrt((real)m);
    // z-normalise with the population standard deviation sqrt(ss/m); VW lanes (pocl vectorises
    // only explicit vector types), then the remainder
    const real ix = sqrt((real)m / sx), iy = sqrt((real)m / sy);
    ${VV} acc8 = 0;
    int t = 0;
    for (; t + ${lanes} <= m; t += ${lanes}) {
        const ${VV} d = (${VL('x + t')} - mx) * ix - (${VL('y + t')} - my) * iy;
        acc8 = fma(d, d, acc8);
    }
    real acc = ${' + '.join(LANE('acc8', l) for l in range(lanes))};
    for (; t < m; ++t) {
        const real d = (x[t] - mx) * ix - (y[t] - my) * iy;
        acc = fma(d, d, acc);
    }
    return sqrt(acc);
% else:
    ${VV} acc8 = 0;
    int t = 0;
    for (; t + ${lanes} <= m; t += ${lanes}) {
        const ${VV} d = ${VL('x + t')} - ${VL('y + t')};
        acc8 = fma(d, d, acc8);
    }
    real acc = ${' + '.join(LANE('acc8', l) for l in range(lanes))};
    for (; t < m; ++t) {
        const real d = x[t] - y[t];
        acc = fma(d, d, acc);
    }
    return sqrt(acc);
% endif
}

__kernel void pair_dist(const int n, const int m, const int ident, __global const int *ia,
                        __global const int *ib,
                        __global const real *TA, __global const real *muA,
                        __global const real *ssA, __global const int *fA,
                        __global const real *TB, __global const real *muB,
                        __global const real *ssB, __global const int *fB,
                        __global real *out)
{
    const int p = get_global_id(0);
    if (p >= n) return;
    const int a = ident ? p / ident : ia[p], b = ib[p];
    if (a < 0 || b < 0) { out[p] = INFINITY; return; }
    out[p] = wdist(TA + a, muA[a], ssA[a], fA[a], TB + b, muB[b], ssB[b], fB[b], m);
}

% if COOP:
<%
    CG = max(64, COOP)          # work-group: CG / COOP pairs of COOP work-items
%>
// pair_dist_coop (GPUs): the same distances, COOP = ${COOP} adjacent work-items per pair, so a
// warp reads ${COOP} adjacent values of one window per access (coalesced) instead of one value
// of each of 32 scattered windows. Work-item u of a pair sums the squares of t = u, u + COOP,
// ... below m rounded down to COOP (what lane u of wdist's vector does at lanes = COOP) and
// computes the difference of t = (m / COOP) * COOP + u (the remainder); the pair's first
// work-item adds the COOP sums left to right and then the remainder's squares in order, as
// wdist does: the result is wdist's at lanes = COOP, bit for bit.
__kernel __attribute__((reqd_work_group_size(${CG}, 1, 1)))
void pair_dist_coop(const int n, const int m, const int ident, __global const int *ia,
                    __global const int *ib,
                    __global const real *TA, __global const real *muA,
                    __global const real *ssA, __global const int *fA,
                    __global const real *TB, __global const real *muB,
                    __global const real *ssB, __global const int *fB,
                    __global real *out)
{
    __local real part[${CG}];
    __local real rest[${CG}];
    const int lid = get_local_id(0);
    // shifts and masks, not / and % (LLVM's freeze of a divided value stops Oclgrind)
    const int u = lid & ${COOP - 1};
    const int p = (int)get_group_id(0) * ${CG // COOP} + (lid >> ${COOP.bit_length() - 1});
    int a = -1, b = -1;
    if (p < n) { a = ident ? p / ident : ia[p]; b = ib[p]; }
    // what the pair's distance is: 0 a sum, 1 inf, 2 zero, 3 sqrt(m) (no early return: every
    // work-item reaches the barrier)
    int kind = 1;
    real acc = 0, dr = 0;
    if (a >= 0 && b >= 0) {
        const int fx = fA[a], fy = fB[b];
        kind = (fx & ${FLAG_NONFINITE}) || (fy & ${FLAG_NONFINITE}) ? 1 : 0;
% if NORMALIZE:
        if (!kind && ((fx & ${FLAG_CONSTANT}) || (fy & ${FLAG_CONSTANT})))
            kind = (fx & ${FLAG_CONSTANT}) && (fy & ${FLAG_CONSTANT}) ? 2 : 3;
% endif
    }
    const int full = m & ~${COOP - 1};
    if (kind == 0) {
        __global const real *x = TA + a;
        __global const real *y = TB + b;
% if NORMALIZE:
        const real mx = muA[a], my = muB[b];
        const real ix = sqrt((real)m / ssA[a]), iy = sqrt((real)m / ssB[b]);
        for (int t = u; t < full; t += ${COOP}) {
            const real d = (x[t] - mx) * ix - (y[t] - my) * iy;
            acc = fma(d, d, acc);
        }
        if (full + u < m)
            dr = (x[full + u] - mx) * ix - (y[full + u] - my) * iy;
% else:
        for (int t = u; t < full; t += ${COOP}) {
            const real d = x[t] - y[t];
            acc = fma(d, d, acc);
        }
        if (full + u < m)
            dr = x[full + u] - y[full + u];
% endif
    }
    part[lid] = acc;
    rest[lid] = dr;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (u == 0 && p < n) {
        real s = INFINITY;
        if (kind == 0) {
            s = part[lid];
            for (int v = 1; v < ${COOP}; ++v) s += part[lid + v];
            for (int v = 0; v < m - full; ++v) s = fma(rest[lid + v], rest[lid + v], s);
            s = sqrt(s);
        } else if (kind == 2) {
            s = 0;
        } else if (kind == 3) {
            s = sqrt((real)m);
        }
        out[p] = s;
    }
}

% endif
// for each query window q = qs[p] of A: best over all windows j of B; with ez >= 0 (self-join)
// pairs |q - j| <= ez are skipped and the best is split into left (j < q) and right (j > q)
__kernel void scan_rows(__global const int *nqp, const int m, const int lB, const int ez,
                        __global const int *qs,
                        __global const real *TA, __global const real *muA,
                        __global const real *ssA, __global const int *fA,
                        __global const real *TB, __global const real *muB,
                        __global const real *ssB, __global const int *fB,
                        __global real *lv, __global int *li, __global real *rv, __global int *ri)
{
    const int p = get_global_id(0);
    if (p >= *nqp) return;
    const int q = qs[p];
    real bl = INFINITY, br = INFINITY;
    int il = -1, ir = -1;
    for (int j = 0; j < lB; ++j) {
        if (ez >= 0 && abs(j - q) <= ez) continue;
        if (fB[j] & ${FLAG_NONFINITE}) continue;
        const real d = wdist(TA + q, muA[q], ssA[q], fA[q], TB + j, muB[j], ssB[j], fB[j], m);
        if (ez >= 0 && j < q) { if (d < bl) { bl = d; il = j; } }
        else { if (d < br) { br = d; ir = j; } }
    }
    lv[p] = bl; li[p] = il; rv[p] = br; ri[p] = ir;
}

// for each window j of B: best over the query windows qs of A (sorted increasingly)
__kernel void scan_cols(__global const int *nqp, const int m, const int lB, const int ez,
                        __global const int *qs,
                        __global const real *TA, __global const real *muA,
                        __global const real *ssA, __global const int *fA,
                        __global const real *TB, __global const real *muB,
                        __global const real *ssB, __global const int *fB,
                        __global real *lv, __global int *li, __global real *rv, __global int *ri)
{
    const int j = get_global_id(0);
    if (j >= lB) return;
    real bl = INFINITY, br = INFINITY;
    int il = -1, ir = -1;
    const int nq = *nqp;
    if (!(fB[j] & ${FLAG_NONFINITE})) {
        for (int p = 0; p < nq; ++p) {
            const int q = qs[p];
            if (ez >= 0 && abs(j - q) <= ez) continue;
            const real d = wdist(TA + q, muA[q], ssA[q], fA[q], TB + j, muB[j], ssB[j], fB[j], m);
            // left of j means q < j
            if (ez >= 0 && q < j) { if (d < bl) { bl = d; il = q; } }
            else { if (d < br) { br = d; ir = q; } }
        }
    }
    lv[j] = bl; li[j] = il; rv[j] = br; ri[j] = ir;
}

// rows i0 .. i0+B-1 of the distance matrix, one work-item per diagonal start (j0 = i0 + k);
// special pairs (flag bit 1 or 2 or 4) are evaluated exactly, the others from the O(1) update
__kernel void block(const int i0, const int nrows, const int m, const int lA, const int lB,
                    __global const real *TA, __global const real *muA,
                    __global const real *ssA, __global const int *fA,
                    __global const real *dfA, __global const real *dgA, __global const real *rA,
                    __global const real *TB, __global const real *muB,
                    __global const real *ssB, __global const int *fB,
                    __global const real *dfB, __global const real *dgB, __global const real *rB,
                    __global real *out)
{
    const int g = get_global_id(0);          // j = (i - i0) + k, k = g - (nrows - 1)
    const int k = g - (nrows - 1);
    if (k >= lB) return;
    real cov = 0;
    int have = 0;
    for (int t = 0; t < nrows; ++t) {
        const int i = i0 + t, j = t + k;
        if (i >= lA) break;
        if (j < 0) continue;
        if (j >= lB) break;
        if (!have) {
            real acc = 0;
% if NORMALIZE:
            for (int s = 0; s < m; ++s) acc = fma(TA[i + s] - muA[i], TB[j + s] - muB[j], acc);
% else:
            for (int s = 0; s < m; ++s) acc = fma(TA[i + s], TB[j + s], acc);
% endif
            cov = acc; have = 1;
        } else {
            cov = fma(dfA[i], dgB[j], fma(dgA[i], dfB[j], cov));
        }
        real d;
        const int fx = fA[i], fy = fB[j];
        if ((fx | fy) & ${FLAG_NONFINITE}) d = INFINITY;
        else if ((fx | fy) & ${FLAG_SPECIAL})
            d = wdist(TA + i, muA[i], ssA[i], fx, TB + j, muB[j], ssB[j], fy, m);
        else {
% if NORMALIZE:
            d = sqrt(fmax((real)(2 * m) * ((real)1 - cov * rA[i] * rB[j]), (real)0));
% else:
            d = sqrt(fmax((real)-2 * (cov + rA[i] + rB[j]), (real)0));
% endif
        }
        out[(size_t)t * lB + j] = d;
    }
}

<%
    KL = context.get("K", 0)
    KSG = context.get("KSG", 0)     # the k-scans' sub-group size (Intel GPUs; 0: IGC's)
%>
% if KL:

// k nearest (ascending distance, ties: smaller index first) of the special windows of the
// top-k path, in KL scalars v0.. / ix0.. (no array: IGC kept the lists' arrays in scratch).
// Candidates arrive in increasing index order, so a strict < admits a new one; displaced
// entries move down with the full (distance, index) order. d, i: the candidate (overwritten).
<%def name="ins_min(v, ix, d, i)">\
%   for q in range(KL):
        if (${d} < ${v}${q} || (${d} == ${v}${q} && ${i} >= 0 && (${ix}${q} < 0 || ${i} < ${ix}${q}))) {
            const real tv = ${v}${q}; const int ti = ${ix}${q};
            ${v}${q} = ${d}; ${ix}${q} = ${i}; ${d} = tv; ${i} = ti;
        }
%   endfor
</%def>
<%def name="lists()">\
%   for e in range(KL):
    real bl${e} = INFINITY, br${e} = INFINITY;
    int il${e} = -1, ir${e} = -1;
%   endfor
</%def>
## the lists column-major, [KL, ldo] (entry e of row o at e * ldo + o): adjacent work-items
## store adjacent words (merge_k reads them so, NB = ldo)
<%def name="store(o)">\
%   for e in range(KL):
    lv[(size_t)${e} * ldo + ${o}] = bl${e}; li[(size_t)${e} * ldo + ${o}] = il${e};
    rv[(size_t)${e} * ldo + ${o}] = br${e}; ri[(size_t)${e} * ldo + ${o}] = ir${e};
%   endfor
</%def>

// rows: for each query window q = qs[p] of A, its K nearest windows of B; with ez >= 0
// (self-join) |q - j| <= ez skipped and the lists split into left (j < q) and right (j > q)
${sg.reqd(KSG)}\
__kernel void scan_rows_k(__global const int *nqp, const int m, const int lB, const int ez,
                          const int ldo, __global const int *qs,
                          __global const real *TA, __global const real *muA,
                          __global const real *ssA, __global const int *fA,
                          __global const real *TB, __global const real *muB,
                          __global const real *ssB, __global const int *fB,
                          __global real *lv, __global int *li, __global real *rv, __global int *ri)
{
    const int p = get_global_id(0);
    if (p >= *nqp) return;
    const int q = qs[p];
${lists()}\
    for (int j = 0; j < lB; ++j) {
        if (ez >= 0 && abs(j - q) <= ez) continue;
        if (fB[j] & ${FLAG_NONFINITE}) continue;
        real d = wdist(TA + q, muA[q], ssA[q], fA[q], TB + j, muB[j], ssB[j], fB[j], m);
        int i = j;
        if (ez >= 0 && j < q) {
            if (d < bl${KL - 1}) {
${ins_min("bl", "il", "d", "i")}\
            }
        } else if (d < br${KL - 1}) {
${ins_min("br", "ir", "d", "i")}\
        }
    }
${store("p")}\
}

// columns: for each window j of B, its K nearest among the query windows qs (increasing) of A,
// except B's special windows (those have their own exact rows); left of j: q < j
${sg.reqd(KSG)}\
__kernel void scan_cols_k(__global const int *nqp, const int m, const int lB, const int ez,
                          const int ldo, __global const int *qs,
                          __global const real *TA, __global const real *muA,
                          __global const real *ssA, __global const int *fA,
                          __global const real *TB, __global const real *muB,
                          __global const real *ssB, __global const int *fB,
                          __global real *lv, __global int *li, __global real *rv, __global int *ri)
{
    const int j = get_global_id(0);
    if (j >= lB) return;
${lists()}\
    const int nq = *nqp;
    if (!(fB[j] & (${FLAG_NONFINITE} | ${FLAG_SPECIAL}))) {
        for (int p = 0; p < nq; ++p) {
            const int q = qs[p];
            if (ez >= 0 && abs(j - q) <= ez) continue;
            real d = wdist(TA + q, muA[q], ssA[q], fA[q], TB + j, muB[j], ssB[j], fB[j], m);
            int i = q;
            if (ez >= 0 && q < j) {
                if (d < bl${KL - 1}) {
${ins_min("bl", "il", "d", "i")}\
                }
            } else if (d < br${KL - 1}) {
${ins_min("br", "ir", "d", "i")}\
            }
        }
    }
${store("j")}\
}
% endif
% if context.get("MDIM", 0):
## ---------------------------------------------------------------- clts.mstump (MDIM > 0)
## The multi-dimensional profile's exact steps on the device (mstump.py): MDIM dimensions,
## the first NINC forced (kept first, unsorted), the rest sorted ascending (DISCORDS:
## descending); a candidate's k-th value is the running mean of the first k + 1, summed left
## to right in oreal (what numpy's cumsum over the sorted float64 distances does). Each
## dimension's arrays are stacked: T [MDIM][ntot], mu / ss / fl [MDIM][l].
<%
    D_ = context.get("MDIM")
    NI = context.get("NINC")
    DSC = context.get("DISCORDS")
    oreal = context.get("oreal")
    ureal = context.get("ureal")
    MWG = context.get("MWG")    # mscan_rows' work-group
    LO, HI = ("fmax", "fmin") if DSC else ("fmin", "fmax")
    MSG = context.get("MSG", 0)         # the scans' sub-group size (Intel GPUs; 0: IGC's)
    MWAVES = context.get("MWAVES", 0)   # their fewest waves per SIMD (AMD GPUs; 0: LLVM's)
%>
<%def name="fit()">\
${sg.reqd(MSG)}\
${sg.waves(MWAVES)}\
</%def>
// forced dimensions first, the others sorted by Batcher's network (clts/mp/network.py): fixed
// positions, so that v stays in registers where the loops over it unroll (an insertion sort's
// data-dependent positions kept it on the GPUs' stack). Distances are never NaN here (a
// non-finite window's are inf), so min / max order them as the host's sort does.
static inline void msort(${oreal} *v)
{
% for a, b in [(NI + a, NI + b) for a, b in batcher(D_ - NI)]:
    { const ${oreal} u = ${LO}(v[${a}], v[${b}]); v[${b}] = ${HI}(v[${a}], v[${b}]); v[${a}] = u; }
% endfor
}

// the better of two candidates: smaller distance, then smaller index; index -1: none
inline int mtake(${oreal} d1, long i1, ${oreal} d2, long i2)
{
    return i2 >= 0 && (i1 < 0 || d2 < d1 || (d2 == d1 && i2 < i1));
}

// ia[p] = p % l: the row of pair p = k l + i (the winners' re-evaluation, pair_dist)
__kernel void mrows(const int n, const int l, __global int *ia)
{
    const int p = get_global_id(0);
    if (p < n) ia[p] = p % l;
}

// the windows ill-conditioned in some dimension (any[i] = ILL, else 0), and the diagonal
// kernel's r of every dimension [MDIM][nw]: NaN for those windows and the non-finite ones,
// -1 for constant ones (the others keep coef_k_r's 1 / centred norm)
__kernel void mflags(const int l, const int nw, __global const int *fl, __global int *any,
                     __global real *r)
{
    const int i = get_global_id(0);
    if (i >= l) return;
    int a = 0;
    for (int q = 0; q < ${D_}; ++q) a |= fl[q * l + i] & ${FLAG_ILL};
    any[i] = a;
% if NORMALIZE:
    for (int q = 0; q < ${D_}; ++q) {
        const int f = fl[q * l + i];
        if (a || (f & ${FLAG_NONFINITE})) r[(size_t)q * nw + i] = NAN;
        else if (f & ${FLAG_CONSTANT}) r[(size_t)q * nw + i] = -1;
    }
% endif
}

// each dimension's unit (the plain distances' scale, sc[4 q + 3]) in the kernel precision
__kernel void munits(__global const ${ureal} *sc, __global real *u)
{
    const int q = get_global_id(0);
    if (q < ${D_}) u[q] = (real)sc[4 * q + 3];
}

// P[k][i], I[k][i] of the winners: X [q][k][i] the exact distances of pair (i, I32[k][i]) in
// dimension q, times its unit (plain distances); I = -1 where P is not finite, P = inf there
__kernel void mexact(const int l, __global const real *X, __global const int *I32,
                     __global const ${ureal} *sc, __global ${oreal} *P, __global long *I)
{
    const int g = get_global_id(0);
    if (g >= ${D_} * l) return;
    const int k = g / l;
    ${oreal} v[${D_}];
    #pragma unroll
    for (int q = 0; q < ${D_}; ++q) {
        v[q] = (${oreal})X[(size_t)q * ${D_} * l + g];
% if not NORMALIZE:
        v[q] *= (${oreal})sc[4 * q + 3];
% endif
    }
    msort(v);
    ${oreal} s = 0;
    #pragma unroll
    for (int t = 0; t < ${D_}; ++t)     // the first k + 1, in order (fixed positions)
        if (t <= k) s += v[t];
    ${oreal} p = s / (${oreal})(k + 1);
    long j = I32[g];
    if (!isfinite(p)) j = -1;
    if (j < 0) p = INFINITY;
    P[g] = p;
    I[g] = j;
}

// the distances of windows a, b in every dimension, sorted (msort)
static inline void mpair(int a, int b, int m, int l, int ntot, __global const real *T,
                  __global const real *mu, __global const real *ss, __global const int *fl,
                  ${oreal} *v)
{
    #pragma unroll
    for (int q = 0; q < ${D_}; ++q) {
        const int oa = q * l + a, ob = q * l + b;
        v[q] = (${oreal})wdist(T + (size_t)q * ntot + a, mu[oa], ss[oa], fl[oa],
                               T + (size_t)q * ntot + b, mu[ob], ss[ob], fl[ob], m);
    }
    msort(v);
}

// the rows of the ill-conditioned windows s = qs[p] (p < *nqp) in full, exactly: for each k
// the best j outside the exclusion zone (the smallest on ties), merged into P / I [k][l]. A
// work-group per window (the groups stride over them: their number is known on the device
// only), its work-items over the columns, then a tree of (value, index) minima
${fit()}\
__kernel __attribute__((reqd_work_group_size(${MWG}, 1, 1)))
void mscan_rows(__global const int *nqp, const int m, const int l, const int ez,
                const int ntot, __global const int *qs, __global const real *T,
                __global const real *mu, __global const real *ss,
                __global const int *fl, __global ${oreal} *P, __global long *I)
{
    __local ${oreal} rv[${MWG}];
    __local int ri[${MWG}];
    const int lid = get_local_id(0), nq = *nqp;
    for (int p = get_group_id(0); p < nq; p += get_num_groups(0)) {
        const int s = qs[p];
        ${oreal} best[${D_}], v[${D_}];
        int bj[${D_}];
        #pragma unroll
        for (int k = 0; k < ${D_}; ++k) { best[k] = INFINITY; bj[k] = -1; }
        for (int j = lid; j < l; j += ${MWG}) {
            if (abs(j - s) <= ez) continue;
            mpair(s, j, m, l, ntot, T, mu, ss, fl, v);
            ${oreal} c = 0;
            #pragma unroll
            for (int k = 0; k < ${D_}; ++k) {
                c += v[k];
                const ${oreal} a = c / (${oreal})(k + 1);
                if (a < best[k]) { best[k] = a; bj[k] = j; }
            }
        }
        #pragma unroll
        for (int k = 0; k < ${D_}; ++k) {
            rv[lid] = best[k]; ri[lid] = bj[k];
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int st = ${MWG} / 2; st > 0; st >>= 1) {
                if (lid < st && ri[lid + st] >= 0 && (ri[lid] < 0 || rv[lid + st] < rv[lid]
                        || (rv[lid + st] == rv[lid] && ri[lid + st] < ri[lid]))) {
                    rv[lid] = rv[lid + st]; ri[lid] = ri[lid + st];
                }
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            if (lid == 0) {
                const ${oreal} b = rv[0];
                const long j = isfinite(b) ? ri[0] : -1;
                const size_t o = (size_t)k * l + s;
                if (mtake(P[o], I[o], b, j)) { P[o] = b; I[o] = j; }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
}

// every window j against the ill-conditioned windows qs (increasing): for each k the best
// of them (the smallest on ties), merged into P / I [k][l]
${fit()}\
__kernel void mscan_cols(__global const int *nqp, const int m, const int l, const int ez,
                         const int ntot, __global const int *qs, __global const real *T,
                         __global const real *mu, __global const real *ss,
                         __global const int *fl, __global ${oreal} *P, __global long *I)
{
    const int j = get_global_id(0);
    if (j >= l) return;
    const int nq = *nqp;
    if (nq == 0) return;
    ${oreal} best[${D_}], v[${D_}];
    int bs[${D_}];
    #pragma unroll
    for (int k = 0; k < ${D_}; ++k) { best[k] = INFINITY; bs[k] = -1; }
    for (int p = 0; p < nq; ++p) {
        const int s = qs[p];
        if (abs(j - s) <= ez) continue;
        mpair(s, j, m, l, ntot, T, mu, ss, fl, v);
        ${oreal} c = 0;
        #pragma unroll
        for (int k = 0; k < ${D_}; ++k) {
            c += v[k];
            const ${oreal} a = c / (${oreal})(k + 1);
            if (a < best[k]) { best[k] = a; bs[k] = s; }
        }
    }
    #pragma unroll
    for (int k = 0; k < ${D_}; ++k) {
        const long s = isfinite(best[k]) ? bs[k] : -1;
        const size_t o = (size_t)k * l + j;
        if (mtake(P[o], I[o], best[k], s)) { P[o] = best[k]; I[o] = s; }
    }
}
% endif
