<%namespace name="sg" file="/common/subgroup.cl.mako"/>\
<%namespace name="best" file="/mp/prescreen_best.cl.mako"/>\
## Matrix profile over a chosen set of diagonals (the anytime profile, SCRIMP's random order of
## diagonals): sub_pairs scores every pair of the given diagonals, sub_reduce folds them into
## each row's best (and, for self-joins, its left and right best and the mirrored pairs).
##
## sub_pairs: work-item (diagonal q of the launch, block b of blk rows of it): the covariance
##   of the block's first pair exactly (O(m)), then SCAMP's O(1) update along the diagonal
##   (cov(i, j) = cov(i-1, j-1) + df[i] dg[j] + dg[i] df[j]); the score of pair (i, i + d) goes
##   to buf[q * lA + i]. Score: the Pearson correlation cov r_i r_j (NORMALIZE) or
##   -d^2 / 2 = cov + h_i + h_j (plain Euclidean), larger is better; -inf where either window
##   holds NaN / inf. Windows flagged constant or ill-conditioned (r = NaN) take the exact
##   path: both constant 1, one constant 1/2 (stumpy's distances 0 and sqrt(m)), ill-conditioned
##   the centred covariance over sqrt(ss_i ss_j) in the exact precision.
## sub_reduce: work-item per row i, over the launch's diagonals: the candidates (i, i + d) and,
##   SELF, the mirrored (i, i - d); the K best kept sorted (larger score first, then smaller
##   index) and merged into the running lists of the update; SELF also the best left (j < i)
##   and right (j > i) neighbour.
## Parameters: real (the kernel precision), ereal (exact), NORMALIZE, SELF, K, SROWS (rows per
## work-item of sub_reduce at K = 1), FLAG_*; the
## rows per block (blk) and the sizes are kernel arguments (no build per length).
<%include file="/common/real.cl.mako"/>
% if ereal == "double" and real != "double":
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
% endif

inline int sub_better(real s, int i, real bs, int bi)
{
    return s > bs || (s == bs && i >= 0 && (bi < 0 || i < bi));
}

__kernel void sub_pairs(__global const int *diags, const int q0, const int nq, const int nb,
                        const int blk, const int m, const int lA, const int lB,
                        __global const real *TA, __global const real *muA,
                        __global const real *dfA, __global const real *dgA,
                        __global const real *rA,
                        __global const real *TB, __global const real *muB,
                        __global const real *dfB, __global const real *dgB,
                        __global const real *rB,
                        __global const ${ereal} *TeA, __global const ${ereal} *meA,
                        __global const ${ereal} *ssA, __global const int *flA,
                        __global const ${ereal} *TeB, __global const ${ereal} *meB,
                        __global const ${ereal} *ssB, __global const int *flB,
                        __global real *buf)
{
    const int g = get_global_id(0);
    const int q = g / nb, b = g - (g / nb) * nb;
    if (q >= nq) return;
    const int d = diags[q0 + q];
    const int lo = max(0, -d), hi = min(lA, lB - d);
    const int i0 = lo + b * blk;
    if (i0 >= hi) return;
    const int i1 = min(hi, i0 + blk);
    __global real *out = buf + (size_t)q * lA;
    real cov = 0;
    {
        const int j0 = i0 + d;
% if NORMALIZE:
        const real ma = muA[i0], mb = muB[j0];
        for (int t = 0; t < m; ++t) cov = fma(TA[i0 + t] - ma, TB[j0 + t] - mb, cov);
% else:
        for (int t = 0; t < m; ++t) cov = fma(TA[i0 + t], TB[j0 + t], cov);
% endif
    }
    for (int i = i0; i < i1; ++i) {
        const int j = i + d;
        if (i > i0) cov = fma(dfA[i], dgB[j], fma(dgA[i], dfB[j], cov));
% if NORMALIZE:
        real s = cov * rA[i] * rB[j];
% else:
        real s = cov + rA[i] + rB[j];
% endif
        if (isnan(s)) {
            const int fa = flA[i], fb = flB[j];
            if ((fa | fb) & ${FLAG_NONFINITE}) {
                s = -INFINITY;
% if NORMALIZE:
            } else if ((fa & ${FLAG_CONSTANT}) && (fb & ${FLAG_CONSTANT})) {
                s = 1;
            } else if ((fa | fb) & ${FLAG_CONSTANT}) {
                s = (real)0.5;
            } else {
                // ill-conditioned: the centred covariance in the exact precision
                const ${ereal} ma = meA[i], mb = meB[j];
                ${ereal} c = 0;
                for (int t = 0; t < m; ++t) c = fma(TeA[i + t] - ma, TeB[j + t] - mb, c);
                s = (real)(c / sqrt(ssA[i] * ssB[j]));
% else:
            } else {
                s = -INFINITY;
% endif
            }
        }
        out[i] = s;
    }
}

% if not NORMALIZE:
## sub_pairs_p: sub_pairs for plain Minkowski distances of order p != 2 (stumpy's scraamp):
## the score of pair (i, i + d) is -sum_t |TA[i + t] - TB[j + t]|^p (larger is better), the
## block's first pair summed exactly, then stumpy's rolling update along the diagonal (the
## term leaving subtracted, the one entering added, the absolute value kept); p = inf: -max_t
## |TA[i + t] - TB[j + t]| summed afresh for every pair. TA / TB: the raw series with
## non-finite values as 0; okA / okB: 1 where a window is finite (else the score is -inf).
## The winners' distances are evaluated exactly afterwards.
inline ${ereal} sub_pterm(const ${ereal} x, const ${ereal} p, const int p1)
{
    return p1 ? fabs(x) : pow(fabs(x), p);
}

__kernel void sub_pairs_p(__global const int *diags, const int q0, const int nq, const int nb,
                          const int blk, const int m, const int lA, const int lB,
                          const ${ereal} p, __global const ${ereal} *TA,
                          __global const ${ereal} *TB, __global const int *okA,
                          __global const int *okB, __global real *buf)
{
    const int g = get_global_id(0);
    const int q = g / nb, b = g - (g / nb) * nb;
    if (q >= nq) return;
    const int d = diags[q0 + q];
    const int lo = max(0, -d), hi = min(lA, lB - d);
    const int i0 = lo + b * blk;
    if (i0 >= hi) return;
    const int i1 = min(hi, i0 + blk);
    __global real *out = buf + (size_t)q * lA;
    const int pinf = isinf(p), p1 = p == 1;
    ${ereal} acc = 0;
    for (int i = i0; i < i1; ++i) {
        const int j = i + d;
        if (pinf) {
            acc = 0;
            for (int t = 0; t < m; ++t) acc = fmax(acc, fabs(TA[i + t] - TB[j + t]));
        } else if (i == i0) {
            for (int t = 0; t < m; ++t) acc += sub_pterm(TA[i + t] - TB[j + t], p, p1);
        } else {
            acc = fabs(acc - sub_pterm(TA[i - 1] - TB[j - 1], p, p1)
                       + sub_pterm(TA[i + m - 1] - TB[j + m - 1], p, p1));
        }
        out[i] = (okA[i] && okB[j]) ? (real)(-acc) : (real)(-INFINITY);
    }
}
% endif

## the list insertion of candidate (x, column j) into row r's K best lv[r][..] / li[r][..]
<%def name="insert(s, x, r)">
            if (sub_better(${s}, ${x}, lv[${r}][${K - 1}], li[${r}][${K - 1}])) {
                real cs = ${s};
                int ci = ${x};
                for (int u = 0; u < ${K}; ++u) {
                    if (sub_better(cs, ci, lv[${r}][u], li[${r}][u])) {
                        const real tv = lv[${r}][u]; const int ti = li[${r}][u];
                        lv[${r}][u] = cs; li[${r}][u] = ci; cs = tv; ci = ti;
                    }
                }
            }
</%def>

## SROWS consecutive rows per work-item of sub_reduce at K = 1
#define SROWS ${SROWS}

__kernel void sub_reduce(__global const int *diags, const int q0, const int nq,
                         const int lA, const int lB, __global const real *buf,
                         __global real *rowS, __global int *rowI
% if SELF:
                         , __global real *leftS, __global int *leftI
                         , __global real *rightS, __global int *rightI
% endif
                         )
{
% if K == 1:
    // k = 1: the row's best is the better of its left and right best (self-joins)
    const int i0 = get_global_id(0) * SROWS;
    if (i0 >= lA) return;
    real br[SROWS];
    int jr[SROWS];
%   if SELF:
    real bl[SROWS];
    int jl[SROWS];
%   endif
    for (int r = 0; r < SROWS; ++r) {
        const int i = min(i0 + r, lA - 1);
%   if SELF:
        br[r] = rightS[i]; jr[r] = rightI[i]; bl[r] = leftS[i]; jl[r] = leftI[i];
%   else:
        br[r] = rowS[i]; jr[r] = rowI[i];
%   endif
    }
    for (int q = 0; q < nq; ++q) {
        const int d = diags[q0 + q];
        __global const real *row = buf + (size_t)q * lA;
        for (int r = 0; r < SROWS; ++r) {
            const int i = i0 + r;
            const int j = i + d;
            if (i < lA && j >= 0 && j < lB) {
                const real sc = row[i];
                if (sub_better(sc, j, br[r], jr[r])) { br[r] = sc; jr[r] = j; }
            }
%   if SELF:
            const int x = i - d;
            if (i < lA && x >= 0) {
                const real sc = row[x];
                if (sub_better(sc, x, bl[r], jl[r])) { bl[r] = sc; jl[r] = x; }
            }
%   endif
        }
    }
    for (int r = 0; r < SROWS; ++r) {
        const int i = i0 + r;
        if (i >= lA) break;
%   if SELF:
        rightS[i] = br[r]; rightI[i] = jr[r]; leftS[i] = bl[r]; leftI[i] = jl[r];
        real bs = rowS[i];
        int bi = rowI[i];
        if (sub_better(br[r], jr[r], bs, bi)) { bs = br[r]; bi = jr[r]; }
        if (sub_better(bl[r], jl[r], bs, bi)) { bs = bl[r]; bi = jl[r]; }
        rowS[i] = bs; rowI[i] = bi;
%   else:
        rowS[i] = br[r]; rowI[i] = jr[r];
%   endif
    }
% else:
    // k > 1: a work-item per row, its k-list in registers
    const int i = get_global_id(0);
    if (i >= lA) return;
    real lv[1][${K}];
    int li[1][${K}];
    for (int u = 0; u < ${K}; ++u) { lv[0][u] = rowS[(size_t)i * ${K} + u]; li[0][u] = rowI[(size_t)i * ${K} + u]; }
%   if SELF:
    real bl = leftS[i], br = rightS[i];
    int jl = leftI[i], jr = rightI[i];
%   endif
    for (int q = 0; q < nq; ++q) {
        const int d = diags[q0 + q];
        const int j = i + d;
        if (j >= 0 && j < lB) {
            const real sc = buf[(size_t)q * lA + i];
            if (sc > -INFINITY) {
${insert("sc", "j", "0")}
%   if SELF:
                if (sub_better(sc, j, br, jr)) { br = sc; jr = j; }
%   endif
            }
        }
%   if SELF:
        const int x = i - d;
        if (x >= 0) {
            const real sc = buf[(size_t)q * lA + x];
            if (sc > -INFINITY) {
${insert("sc", "x", "0")}
                if (sub_better(sc, x, bl, jl)) { bl = sc; jl = x; }
            }
        }
%   endif
    }
    for (int u = 0; u < ${K}; ++u) { rowS[(size_t)i * ${K} + u] = lv[0][u]; rowI[(size_t)i * ${K} + u] = li[0][u]; }
%   if SELF:
    leftS[i] = bl; leftI[i] = jl; rightS[i] = br; rightI[i] = jr;
%   endif
% endif
}

% if K == 1 and SELF:
<% iv8 = "long8" if real == "double" else "int8" %>
## sub_reduce of a self-join at k = 1 with 8 rows a work-item as 8-wide vectors (the rows' scores
## of a diagonal are contiguous in buf, the mirrored ones too): per diagonal two vector loads
## and sub_better's rule lane by lane, so the same lists as sub_reduce; the last rows of the
## series and the rows where a diagonal's mirrored pairs begin lane by lane.
inline void sub_take8(const real8 sc, const ${iv8} j, const ${iv8} ok, real8 *bs, ${iv8} *bj)
{
    // sub_better lane by lane, in the lanes ok
    const ${iv8} t = ok & ((sc > *bs) | ((sc == *bs) & (j >= 0) & ((*bj < 0) | (j < *bj))));
    *bs = select(*bs, sc, t);
    *bj = select(*bj, j, t);
}

${sg.reqd(SUBGROUP)}\
__kernel void sub_reduce_self8(__global const int *diags, const int q0, const int nq,
                               const int lA, const int lB, __global const real *buf,
                               __global real *rowS, __global int *rowI,
                               __global real *leftS, __global int *leftI,
                               __global real *rightS, __global int *rightI)
{
    const int i0 = get_global_id(0) * 8;
    if (i0 >= lA) return;
    if (i0 + 8 > lA) {      // the last rows: sub_reduce's loop
        for (int i = i0; i < lA; ++i) {
            real br = rightS[i], bl = leftS[i];
            int jr = rightI[i], jl = leftI[i];
            for (int q = 0; q < nq; ++q) {
                const int d = diags[q0 + q];
                __global const real *row = buf + (size_t)q * lA;
                if (i + d < lB && sub_better(row[i], i + d, br, jr)) { br = row[i]; jr = i + d; }
                if (i - d >= 0 && sub_better(row[i - d], i - d, bl, jl)) { bl = row[i - d]; jl = i - d; }
            }
            rightS[i] = br; rightI[i] = jr; leftS[i] = bl; leftI[i] = jl;
            real bs = rowS[i];
            int bi = rowI[i];
            if (sub_better(br, jr, bs, bi)) { bs = br; bi = jr; }
            if (sub_better(bl, jl, bs, bi)) { bs = bl; bi = jl; }
            rowS[i] = bs; rowI[i] = bi;
        }
        return;
    }
    const ${iv8} lane = (${iv8})(0, 1, 2, 3, 4, 5, 6, 7), iv = (${iv8})(i0) + lane;
    real8 br = vload8(0, rightS + i0), bl = vload8(0, leftS + i0);
    ${iv8} jr = convert_${iv8}(vload8(0, rightI + i0)), jl = convert_${iv8}(vload8(0, leftI + i0));
    for (int q = 0; q < nq; ++q) {
        const int d = diags[q0 + q];
        __global const real *row = buf + (size_t)q * lA;
        if (i0 < lB - d)        // the pairs (i, i + d), i + d < lB
            sub_take8(vload8(0, row + i0), iv + d, iv < (${iv8})(lB - d), &br, &jr);
        if (i0 + 7 >= d) {      // the mirrored pairs (i, i - d), i - d >= 0
            real8 sc;
            if (i0 >= d) {
                sc = vload8(0, row + i0 - d);
            } else {        // static lanes: no private array
                sc = (real8)(${", ".join(f"i0 + {c} >= d ? row[i0 + {c} - d] : 0" for c in range(8))});
            }
            sub_take8(sc, iv - d, iv >= (${iv8})(d), &bl, &jl);
        }
    }
    vstore8(br, 0, rightS + i0);
    vstore8(convert_int8(jr), 0, rightI + i0);
    vstore8(bl, 0, leftS + i0);
    vstore8(convert_int8(jl), 0, leftI + i0);
    real8 bs = vload8(0, rowS + i0);
    ${iv8} bi = convert_${iv8}(vload8(0, rowI + i0));
    const ${iv8} all = (${iv8})(-1);
    sub_take8(br, jr, all, &bs, &bi);
    sub_take8(bl, jl, all, &bs, &bi);
    vstore8(bs, 0, rowS + i0);
    vstore8(convert_int8(bi), 0, rowI + i0);
}
% endif

## preSCRIMP's reductions of a block of distance profiles D [nq, lB] (clts.mass, in the exact
## precision) of the windows idx[q] of T_A, nothing read back: pre_rows, each profile's nearest
## neighbour (the first minimum; self-joins outside the exclusion zone |j - idx[q]| <= ez,
## ez < 0: none); pre_cols (self-joins), each window j's K best among the profiles (ascending,
## then the smaller index), merged into the running lists colP / colI.
__kernel void pre_rows(__global const ${ereal} *D, const int nq, const int lB,
                       __global const int *idx, const int ez, __global int *nn,
                       __global ${ereal} *dn)
{
    const int q = get_global_id(0);
    if (q >= nq) return;
    const int i = idx[q];
    __global const ${ereal} *row = D + (size_t)q * lB;
    ${ereal} best = INFINITY;
    int bj = -1;
    for (int j = 0; j < lB; ++j) {
        if (ez >= 0 && abs(j - i) <= ez) continue;
        const ${ereal} d = row[j];
        if (d < best) { best = d; bj = j; }
    }
    nn[q] = bj;
    dn[q] = best;
}

% if SELF:
__kernel void pre_cols(__global const ${ereal} *D, const int nq, const int lB,
                       __global const int *idx, const int ez, __global ${ereal} *colP,
                       __global int *colI)
{
    const int j = get_global_id(0);
    if (j >= lB) return;
    ${ereal} lv[${K}];
    int li[${K}];
    for (int u = 0; u < ${K}; ++u) { lv[u] = colP[(size_t)j * ${K} + u]; li[u] = colI[(size_t)j * ${K} + u]; }
    for (int q = 0; q < nq; ++q) {
        const int i = idx[q];
        if (abs(j - i) <= ez) continue;
        ${ereal} cs = D[(size_t)q * lB + j];
        int ci = i;
        if (!(cs < lv[${K - 1}] || (cs == lv[${K - 1}] && (li[${K - 1}] < 0 || ci < li[${K - 1}])))) continue;
        if (!(cs < INFINITY)) continue;
        for (int u = 0; u < ${K}; ++u) {
            if (cs < lv[u] || (cs == lv[u] && (li[u] < 0 || ci < li[u]))) {
                const ${ereal} tv = lv[u]; const int ti = li[u];
                lv[u] = cs; li[u] = ci; cs = tv; ci = ti;
            }
        }
    }
    for (int u = 0; u < ${K}; ++u) { colP[(size_t)j * ${K} + u] = lv[u]; colI[(size_t)j * ${K} + u] = li[u]; }
}
% endif

% if NORMALIZE:
## pre_dist's / pre_fused's distances of query i against windows j0 .. j0 + 7 under the
## exact rules (flagged windows; lanes past l: inf), from the dot products acc
static inline ${ereal} pre_exact1(const ${ereal} dot, const int j, const int l, const int m,
                          const int i, const int fi, __global const ${ereal} *Tp,
                          __global const ${ereal} *mu, __global const ${ereal} *ss,
                          __global const ${ereal} *r, __global const int *fl)
{
    if (j >= l) return INFINITY;
    const int fj = fl[j];
    if ((fi | fj) & ${FLAG_NONFINITE}) return INFINITY;
    if ((fi & ${FLAG_CONSTANT}) && (fj & ${FLAG_CONSTANT})) return 0;
    if ((fi | fj) & ${FLAG_CONSTANT}) return m;
    ${ereal} corr;
    if ((fi | fj) & ${FLAG_SPECIAL}) {
        const ${ereal} ma = mu[i], mb = mu[j];
        ${ereal} cv = 0;
        for (int t = 0; t < m; ++t) cv = fma(Tp[i + t] - ma, Tp[j + t] - mb, cv);
        corr = cv / sqrt(ss[i] * ss[j]);
    } else {
        corr = dot * r[j];
    }
    return fmax((${ereal})0, (${ereal})(2 * m) * (1 - fmin(corr, (${ereal})1)));
}

## the same for windows j0 .. j0 + 7, lane by lane (static lanes: no private array)
static inline ${ereal}8 pre_exact8(const ${ereal}8 acc, const int j0, const int l, const int m,
                           const int i, const int fi, __global const ${ereal} *Tp,
                           __global const ${ereal} *mu, __global const ${ereal} *ss,
                           __global const ${ereal} *r, __global const int *fl)
{
    return (${ereal}8)(
% for c in range(8):
        pre_exact1(acc.s${c}, j0 + ${c}, l, m, i, fi, Tp, mu, ss, r, fl)${"," if c < 7 else ");"}
% endfor
}

## preSCRIMP's z-normalised distance profiles as dot products: work-item (8 windows jb ..
## jb + 7, 4 queries): sum_t zq[t] T[j + t] for the 4 queries' unit-norm centred windows zq
## (the correlation times sqrt(ss_j)), one 8-wide load and 4 fused multiply-adds a step;
## D = 2 m (1 - corr), the squared distance (it ranks the candidates only: the chosen pairs are
## evaluated exactly afterwards, pair_dist). Windows flagged NaN / constant / ill-conditioned
## (either side) take the exact rules (inf; 0 and m; the centred covariance).
#define PQ 4
__kernel void pre_dist(const int nq, const int l, const int m,
                       __global const ${ereal} *zq, __global const int *qidx,
                       __global const ${ereal} *Tp, __global const ${ereal} *mu,
                       __global const ${ereal} *ss, __global const ${ereal} *r,
                       __global const int *fl, __global ${ereal} *D)
{
    const int jb = get_global_id(0) * 8, qb = get_global_id(1) * PQ;
    if (jb >= l || qb >= nq) return;
    const int nb = min(PQ, nq - qb);
    // the queries' rows (the last one repeated past nq), four accumulators in registers
% for b in range(4):
    __global const ${ereal} *z${b} = zq + (size_t)(qb + min(${b}, nb - 1)) * m;
    ${ereal}8 a${b} = (${ereal}8)0;
% endfor
    for (int t = 0; t < m; ++t) {
        const ${ereal}8 x = vload8(0, Tp + jb + t);
% for b in range(4):
        a${b} = fma((${ereal}8)z${b}[t], x, a${b});
% endfor
    }
    const ${ereal} twom = 2 * m;
    int fw = 0;
    const int full = jb + 8 <= l;
    for (int c = 0; c < 8; ++c) fw |= (jb + c < l) ? fl[jb + c] : 1;
% for b in range(4):
    if (${b} < nb) {
        const int q = qb + ${b}, i = qidx[q], fi = fl[i];
        __global ${ereal} *Dq = D + (size_t)q * l + jb;
        if (full && (fi | fw) == 0) {       // the common case: 8 plain windows at once
            const ${ereal}8 corr = fmin(a${b} * vload8(0, r + jb), (${ereal}8)1);
            vstore8(fmax((${ereal}8)0, twom * ((${ereal}8)1 - corr)), 0, Dq);
        } else {
            const ${ereal}8 dd = pre_exact8(a${b}, jb, l, m, i, fi, Tp, mu, ss, r, fl);
%   for c in range(8):
            if (jb + ${c} < l) Dq[${c}] = dd.s${c};
%   endfor
        }
    }
% endfor
}
% endif

% if NORMALIZE and SELF and K == 1 and ereal == "double":
## pre_fused: pre_dist, pre_rows and pre_cols in one pass (z-normalised self-joins, k = 1),
## the distance profiles never stored. Work-item: FC * 8 windows jb .. (FC 8-wide vectors),
## every query of the launch, FQ at a time (pre_dist's dot products, FQ * FC accumulators in
## registers: FC 8-wide loads per FQ * FC fused multiply-adds). Per query only the smallest
## distance among the work-item's windows goes to rowD [nq, nbk] (nbk = ceil(l / (8 FC)));
## pre_rowmin finds each query's first block holding its minimum and recomputes that block's
## distances (the same arithmetic, pre_d8) for the first window at it: pre_rows's first minimum.
## Each window's best query is kept in registers and merged into colP / colI: the queries come
## in ascending index order (the host sorts them), so a strict < keeps the smaller index on a
## tie, pre_cols's order. At small m the per-pair reductions, not the dot products, set the
## time: a vector min per pair and one 8-lane reduction per query and work-item.
<% FQ, FC = FUSED_FQ, FUSED_FC %>
#define FW ${8 * FC}

## query i's distances to windows jb .. jb + 7 from the dot products acc: plain (neither side
## flagged, all 8 windows inside l) from rj = r[jb ..], else pre_exact8; the exclusion zone
## |j - i| <= ez: inf
inline double8 pre_d8(const double8 acc, const int jb, const int plain, const double8 rj,
                      const int l, const int m, const int ez, const int i, const int fi,
                      __global const double *Tp, __global const double *mu,
                      __global const double *ss, __global const double *r,
                      __global const int *fl)
{
    double8 d8;
    if (plain) {
        const double8 corr = fmin(acc * rj, (double8)1);
        d8 = fmax((double8)0, (double)(2 * m) * ((double8)1 - corr));
    } else {
        d8 = pre_exact8(acc, jb, l, m, i, fi, Tp, mu, ss, r, fl);
    }
    if (jb + 7 >= i - ez && jb <= i + ez) {
        const long8 dj = (long8)(jb - i) + (long8)(0, 1, 2, 3, 4, 5, 6, 7);
        d8 = select(d8, (double8)INFINITY, (dj <= (long8)(ez)) & (dj >= (long8)(-ez)));
    }
    return d8;
}

## the work-item's windows: all FW inside l and none flagged (pre_d8's plain path for every
## query not flagged itself)
inline int pre_plain_block(const int jb, const int l, __global const int *fl)
{
    if (jb + FW > l) return 0;
    int fw = 0;
    for (int c = 0; c < FW; ++c) fw |= fl[jb + c];
    return fw == 0;
}

${sg.reqd(SUBGROUP)}\
__kernel void pre_fused(const int nq, const int l, const int m, const int ez,
                        __global const double *zq, __global const int *qidx,
                        __global const double *Tp, __global const double *mu,
                        __global const double *ss, __global const double *r,
                        __global const int *fl, __global double *colP,
                        __global int *colI, __global double *rowD)
{
    const int blk = get_global_id(0), jb = blk * FW, nbk = (l + FW - 1) / FW;
    if (jb >= l) return;
    const int pw = pre_plain_block(jb, l, fl);
% for h in range(FC):
    const double8 rj${h} = pw ? vload8(0, r + jb + ${8 * h}) : (double8)0;
    double8 cb${h};
    long8 ci${h};
% endfor
    // the windows' running best
${best.load("cb{}", "ci{}", FC)}    for (int qb = 0; qb < nq; qb += ${FQ}) {
        const int nb = min(${FQ}, nq - qb);
% for b in range(FQ):
        __global const double *z${b} = zq + (size_t)(qb + min(${b}, nb - 1)) * m;
%   for h in range(FC):
        double8 a${b}_${h} = (double8)0;
%   endfor
% endfor
        for (int t = 0; t < m; ++t) {
% for h in range(FC):
            const double8 x${h} = vload8(0, Tp + jb + ${8 * h} + t);
% endfor
% for b in range(FQ):
            {
                const double8 zb = (double8)z${b}[t];
%   for h in range(FC):
                a${b}_${h} = fma(zb, x${h}, a${b}_${h});
%   endfor
            }
% endfor
        }
% for b in range(FQ):
        if (${b} < nb) {
            const int q = qb + ${b}, i = qidx[q], fi = fl[i];
            const int plain = pw && fi == 0;
            const long8 iv = (long8)(i);
            double8 rm;
%   for h in range(FC):
            {
                const double8 d8 = pre_d8(a${b}_${h}, jb + ${8 * h}, plain, rj${h}, l, m, ez, i,
                                          fi, Tp, mu, ss, r, fl);
                const long8 take = d8 < cb${h};
                cb${h} = select(cb${h}, d8, take);
                ci${h} = select(ci${h}, iv, take);
                rm = ${"d8" if h == 0 else "select(rm, d8, d8 < rm)"};
            }
%   endfor
            const double4 r4 = select(rm.lo, rm.hi, rm.hi < rm.lo);
            const double2 r2 = select(r4.lo, r4.hi, r4.hi < r4.lo);
            rowD[(size_t)q * nbk + blk] = r2.y < r2.x ? r2.y : r2.x;
        }
% endfor
    }
${best.store("cb{}", "ci{}", FC)}}

<%include file="/mp/prescreen.cl.mako"/>

## pre_fused's per-query block minima: the first block holding the query's minimum, its
## distances recomputed as pre_fused made them (the same fused multiply-adds in the same order,
## pre_d8) for the first window at it: pre_rows's first minimum (-1 and inf where none)
__kernel void pre_rowmin(const int nq, const int nbk, const int l, const int m, const int ez,
                         __global const double *zq, __global const int *qidx,
                         __global const double *Tp, __global const double *mu,
                         __global const double *ss, __global const double *r,
                         __global const int *fl, __global const double *rowD,
                         __global int *nn, __global double *dn)
{
    const int q = get_global_id(0);
    if (q >= nq) return;
    double best = INFINITY;
    int bb = -1;
    for (int b = 0; b < nbk; ++b) {
        const double d = rowD[(size_t)q * nbk + b];
        if (d < best) { best = d; bb = b; }
    }
    int bj = -1;
    if (bb >= 0) {
        const int jb = bb * FW, i = qidx[q], fi = fl[i];
        const int plain = pre_plain_block(jb, l, fl) && fi == 0;
        __global const double *z = zq + (size_t)q * m;
% for h in range(FC):
        double8 a${h} = (double8)0;
% endfor
        for (int t = 0; t < m; ++t) {
            const double8 zb = (double8)z[t];
% for h in range(FC):
            a${h} = fma(zb, vload8(0, Tp + jb + ${8 * h} + t), a${h});
% endfor
        }
% for h in reversed(range(FC)):
        {
            const double8 d8 = pre_d8(a${h}, jb + ${8 * h}, plain,
                                      plain ? vload8(0, r + jb + ${8 * h}) : (double8)0, l, m,
                                      ez, i, fi, Tp, mu, ss, r, fl);
%   for c in reversed(range(8)):
            bj = d8.s${c} == best ? jb + ${8 * h + c} : bj;
%   endfor
        }
% endfor
    }
    nn[q] = bj;
    dn[q] = best;
}
% endif
