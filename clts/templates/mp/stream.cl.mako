<%namespace name="sg" file="/common/subgroup.cl.mako"/>\
## clts.stumpi with its state on the device (stream.py, device mode): a block of b appended
## points folded into the k-lists.
## stream_update: per window of the new state (egress: the first b windows leave), the k best
##   (distance, index), ascending: an old window's list with the new windows as candidates,
##   a new window's list and left neighbour over every window; pairs within the exclusion
##   zone ez, and with egress pairs with the windows that left before the row arrived, are no
##   candidates; non-finite distances neither. The candidates come in increasing index and
##   are inserted after the entries of equal distance: the lists numpy's merge by (distance,
##   index) gives (stream_topk.py). Its distances:
## - plain (QT == 0): the new windows' distance profiles D [b][l1] against every window of the
##   extended series (mass' kernels; stream_windows: their values [b][m], mass' queries);
## - z-normalised (QT == 1): from the sliding dot products, as a filter:
##   stream_center: the offset cen (the finite values' mean, at a refresh) and amax, the
##     largest |x - cen| the dot products have seen;
##   stream_stats: the series centred (tc) and per window mass' statistics (zstats: mean, f,
##     g, flags) and the filter's (the centred window's mean MC, 1 / std IC), kept in S as
##     6 planes ls apart (mean, f, g, flags, the centred mean, 1 / std or -1), window i at i;
##   stream_qt: per diagonal (lag g > ez between a new window and an earlier one) the dot
##     product of the centred windows along it (stumpy.stumpi's recurrence, from the previous
##     block's last row, or directly at a refresh) and the squared distance's bounds [lo, hi]
##     (stream_host.py's error bound), for the pair both ways when both windows are new;
##   stream_thr: per new window (a work-group) its k-th smallest hi and its left part's
##     smallest, plus slack;
##   stream_update then computes mass' distance (exact_d, from the stored statistics: the
##     same bits) only for the pairs whose lo reaches a decision (the row's k-th, its left
##     neighbour, the old window's current k-th); every other pair is farther than the
##     decision, so the lists are those of every distance.
<%include file="/common/real.cl.mako"/>
<%namespace name="mass" file="/mp/mass.cl.mako"/>
% if oreal == "double" and real != "double":
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
% endif
// the filter's rounding unit: the coarser of the series' and the filter's arithmetic
#define FEPS ((${oreal})REAL_EPS)

__kernel void stream_windows(__global const real *x, const int start, const int b, const int m,
                             __global real *Q)
{
    const int g = get_global_id(0);
    if (g >= b * m) return;
    const int r = g / m, t = g - r * m;
    Q[g] = x[start + r + t];
}

## (d, i) into the ascending k-list (v, ix) when it beats the last entry (ties: the smaller
## index): into the last place, then moved up past every entry it precedes; the list is K
## scalars v0.., ix0.. (no private array: registers on every back end, no stack or scratch)
<%def name="kinsert(d, i)">
    if (${d} < v${K - 1} || (${d} == v${K - 1} && ${i} < ix${K - 1})) {
        v${K - 1} = ${d}; ix${K - 1} = ${i};
% for p in range(K - 1, 0, -1):
        if (v${p - 1} > v${p} || (v${p - 1} == v${p} && ix${p - 1} > ix${p})) {
            const ${oreal} tv = v${p - 1}; const long ti = ix${p - 1};
            v${p - 1} = v${p}; ix${p - 1} = ix${p}; v${p} = tv; ix${p} = ti;
        }
% endfor
    }
</%def>

% if QT:
// mass' distance between windows q (the query, z-normalised as zquery does) and c (as mass
// does), from their stored statistics (S: the planes of stream_stats, ls apart): the same bits
inline real exact_d(__global const real *x, __global const ${oreal} *S, const int ls,
                    const int q, const int c, const int m)
{
    const int fq = (int)S[3 * (size_t)ls + q], fc = (int)S[3 * (size_t)ls + c];
    if (fq == 1 || fc == 1) return INFINITY;
    if (fq == 2 || fc == 2) return (fq == 2 && fc == 2) ? (real)0 : sqrt((real)m);
    const real muq = (real)S[q], f_q = (real)S[(size_t)ls + q], g_q = (real)S[2 * (size_t)ls + q];
    const real muc = (real)S[c], f_c = (real)S[(size_t)ls + c], g_c = (real)S[2 * (size_t)ls + c];
    real acc = 0;
    for (int t = 0; t < m; ++t) {
        const real zt = fma(x[q + t] - muq, f_q, g_q);
        const real e = fma(x[c + t] - muc, f_c, g_c) - zt;
        acc = fma(e, e, acc);
    }
    return sqrt(acc);
}
% endif

${sg.reqd(SUBGROUP)}\
__kernel void stream_update(const int b, const int l0, const int l1, const int ez,
                            const int egress, const long a,
% if QT:
                            __global const real *x, const int m, __global const ${oreal} *S,
                            const int ls, __global const ${oreal} *LO, __global const ${oreal} *TH,
% else:
                            __global const real *D,
% endif
                            __global const ${oreal} *P, __global const long *I,
                            __global const ${oreal} *lP, __global const long *lI,
                            __global ${oreal} *P2, __global long *I2,
                            __global ${oreal} *lP2, __global long *lI2)
{
    const int L = egress ? l1 - b : l1;
    const int w = get_global_id(0);
    if (w >= L) return;
    const int j = w + (egress ? b : 0);
% if QT:
    const ${oreal} c0 = 256 * FEPS * m * (m + 1);
% endif
% for k in range(K):
    ${oreal} v${k};
    long ix${k};
% endfor
    if (j < l0) {               // an old window: the new windows are its candidates
% for k in range(K):
        v${k} = P[(size_t)j * ${K} + ${k}]; ix${k} = I[(size_t)j * ${K} + ${k}];
% endfor
        for (int r = 0; r < b; ++r) {
            if (abs(j - (l0 + r)) <= ez || (egress && j <= r)) continue;
% if QT:
            // the pair counts only if its bound reaches the list's last entry
            const ${oreal} pk = v${K - 1};
            if (isfinite(pk) && !(LO[(size_t)r * l1 + j] <= pk * pk * (1 + (${oreal})1e-9) + c0))
                continue;
            const ${oreal} d = (${oreal})exact_d(x, S, ls, l0 + r, j, m);
% else:
            const ${oreal} d = (${oreal})D[(size_t)r * l1 + j];
% endif
            if (isfinite(d)) {
                const long di = (long)(l0 + r) + a;
${kinsert("d", "di")}
            }
        }
        lP2[w] = lP[j]; lI2[w] = lI[j];
    } else {                    // a new window: every window is a candidate
        const int r = j - l0;
% for k in range(K):
        v${k} = INFINITY; ix${k} = -1;
% endfor
        ${oreal} lb = INFINITY;
        long li = -1;
% if QT:
        const ${oreal} th = TH[2 * r], lt = TH[2 * r + 1];
% endif
        for (int c = 0; c < l1; ++c) {
            if (abs(c - j) <= ez || (egress && c <= r)) continue;
% if QT:
            // the pair counts only if its bound reaches the row's k-th or left threshold
            if (!(LO[(size_t)r * l1 + c] <= (c < j ? fmax(th, lt) : th))) continue;
            const ${oreal} d = (${oreal})exact_d(x, S, ls, j, c, m);
% else:
            const ${oreal} d = (${oreal})D[(size_t)r * l1 + c];
% endif
            if (!isfinite(d)) continue;
            const long di = (long)c + a;
${kinsert("d", "di")}
            if (c < j && d < lb) { lb = d; li = (long)c + a; }
        }
        lP2[w] = lb; lI2[w] = li;
    }
% for k in range(K):
    P2[(size_t)w * ${K} + ${k}] = v${k}; I2[(size_t)w * ${K} + ${k}] = ix${k};
% endfor
}

% if QT:
// per window: mass' statistics from w0 on (the new windows), and with filt the filter's
// values: the mean of the centred window (from tc: no cancellation against the offset;
// again for every window at a refresh, when cen changes) as MC, 1 / std as IC (-1:
// undecidable, NaN: NaN / inf in the window)
// (and the series centred as tc: NaN / inf as 0, their windows flagged, the dot products
// finite)
__kernel void stream_stats(__global const real *x, const int n, __global ${oreal} *tc,
                           __global const ${oreal} *C, const int l, const int w0,
                           const int fresh, const int m, __global ${oreal} *S, const int ls,
                           const int filt,
                           __global ${oreal} *MC, __global ${oreal} *IC)
{
    const int i = get_global_id(0);
    const ${oreal} cen = filt ? C[0] : 0;
    if (i < n) tc[i] = isfinite(x[i]) ? (${oreal})x[i] - cen : (${oreal})0;
    if (i >= l) return;
    __global ${oreal} *o = S + i;      // plane k of window i: o[k ls]
    const size_t L1 = ls, L2 = 2 * L1, L3 = 3 * L1, L4 = 4 * L1, L5 = 5 * L1;
    if (i >= w0) {
${mass.zstats(1, 1, "x + i")}
        const int bad = isnan(s0) | isinf(mx0);
        const int kc = cst0 | (ss0 <= 0);
        o[0] = mu0; o[L1] = f0; o[L2] = g0; o[L3] = bad ? 1 : (kc ? 2 : 0);
        o[L5] = (bad || kc || !(f0 <= (real)1e30) || !(f0 > 0)) ? -1 : (${oreal})f0;
    }
    if (!filt) {            // the stream's first statistics: the centred means come with
        if (i >= w0) o[L4] = 0; // its first update (a refresh); set, not left undefined
        return;
    }
    if (i >= w0 || fresh) {
        ${oreal} acc = 0;
        for (int t = 0; t < m; ++t)
            acc += isfinite(x[i + t]) ? (${oreal})x[i + t] - cen : (${oreal})0;
        o[L4] = acc / m;
    }
    MC[i] = o[L4];
    IC[i] = o[L3] == 1 ? (${oreal})NAN : o[L5];
}

__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void stream_center(__global const real *x, const int n, const int fresh, const int new0,
                   __global ${oreal} *C)
{
    __local ${oreal} red[256];
    __local ${oreal} cnt[256];
    const int lid = get_local_id(0);
    ${oreal} cen = C[0], top = fresh ? 0 : C[1];
    if (fresh) {
        ${oreal} s = 0, k = 0;
        for (int i = lid; i < n; i += 256)
            if (isfinite(x[i])) { s += x[i]; k += 1; }
        red[lid] = s; cnt[lid] = k;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int h = 128; h > 0; h >>= 1) {
            if (lid < h) { red[lid] += red[lid + h]; cnt[lid] += cnt[lid + h]; }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        cen = cnt[0] > 0 ? red[0] / cnt[0] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    ${oreal} a = 0;
    for (int i = (fresh ? 0 : new0) + lid; i < n; i += 256)
        if (isfinite(x[i])) a = fmax(a, fabs((${oreal})x[i] - cen));
    red[lid] = a;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = 128; h > 0; h >>= 1) {
        if (lid < h) red[lid] = fmax(red[lid], red[lid + h]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) { C[0] = cen; C[1] = fmax(top, red[0]); }
}

<%
    V = oreal + str(DW)
    IV = ("long" if oreal == "double" else "int") + str(DW)
%>
// the bounds [lo, hi] of the squared distance from a dot product (stumpy.stumpi's formula,
// stream_host.py's bound; |mean - cen| <= amax): NaN / inf -> inf, undecidable -> [-inf, inf]
#define BOUNDS(T, qt, iq, mq, ic, mc, lo, hi) { \
    const T d2 = 2 * m - 2 * (iq) * (ic) * ((qt) - m * (mq) * (mc)); \
    const T e = eq * (ic); \
    lo = d2 - e; hi = d2 + e; }

// DW consecutive diagonals (lags g) per work-item: at each row their windows are consecutive
// (vector loads and stores), the new window's values shared; a work-item whose diagonals all
// start at the block's first row from the carried dot products (or a direct one) runs as
// vectors, the others (a block's last lags) one diagonal at a time
__kernel void stream_qt(__global const ${oreal} *tc, const int l0, const int b, const int m,
                        const int ez, const int fresh, const int steps, const int drop,
                        __global const ${oreal} *QT, __global ${oreal} *QT2,
                        __global const ${oreal} *MC, __global const ${oreal} *IC,
                        __global const ${oreal} *C,
                        __global ${oreal} *LO, __global ${oreal} *HI)
{
    const int gb = ez + 1 + (int)get_global_id(0) * ${DW};
    if (gb > l0 + b - 1) return;
    const int l1 = l0 + b;
    const ${oreal} amax = C[1];
    const ${oreal} kk = 8 * FEPS * (2 * m + 3 * steps + 8) * m;
    const ${oreal} ea = (${oreal})2.5 * amax * amax;
    if (gb + ${DW - 1} <= l0 - 1) {
        // lane w: lag gb + DW - 1 - w, window cb + w at row r (cb = l0 + r - gb - DW + 1)
        ${V} qt;
        int cb = l0 - gb - ${DW - 1};
        if (fresh) {
            qt = 0;
            for (int t = 0; t < m; ++t) qt += tc[l0 + t] * vload${DW}(0, tc + cb + t);
        } else {
            qt = vload${DW}(0, QT + cb - 1);
        }
        for (int r = 0; r < b; ++r, ++cb) {
            const int q = l0 + r;
            if (r || !fresh)
                qt += tc[q + m - 1] * vload${DW}(0, tc + cb + m - 1) - tc[q - 1] * vload${DW}(0, tc + cb - 1);
            const ${oreal} iq = IC[q], mq = MC[q];
            const ${oreal} eq = 2 * kk * iq * ea;
            const ${V} ic = vload${DW}(0, IC + cb), mc = vload${DW}(0, MC + cb);
            ${V} lo, hi;
            BOUNDS(${V}, qt, iq, mq, ic, mc, lo, hi)
            // (the row's scalars as vectors: a vector comparison's true is -1, select's)
            const ${V} iqv = (${V})iq;
            const ${IV} und = (ic < 0) | (iqv < 0) | !isfinite(lo) | !isfinite(hi);
            lo = select(lo, (${V})(-INFINITY), und);
            hi = select(hi, (${V})INFINITY, und);
            const ${IV} bad = isnan(ic) | isnan(iqv);
            lo = select(lo, (${V})INFINITY, bad);
            hi = select(hi, (${V})INFINITY, bad);
            vstore${DW}(lo, 0, LO + (size_t)r * l1 + cb);
            vstore${DW}(hi, 0, HI + (size_t)r * l1 + cb);
            if (cb + ${DW - 1} >= l0) {         // pairs of two new windows: both ways
% for w in range(DW):
                if (cb + ${w} >= l0) {
                    LO[(size_t)(cb + ${w} - l0) * l1 + q] = lo.s${w};
                    HI[(size_t)(cb + ${w} - l0) * l1 + q] = hi.s${w};
                }
% endfor
            }
            if (r == b - 1) {
% for w in range(DW):
                if (cb + ${w} >= drop) QT2[cb + ${w} - drop] = qt.s${w};
% endfor
            }
        }
        return;
    }
    for (int g = gb; g < gb + ${DW} && g <= l0 + b - 1; ++g) {
        const int r0 = max(0, g - l0), dir = fresh || l0 - g - 1 < 0;
        ${oreal} qt = dir ? 0 : QT[l0 - g - 1];
        for (int r = r0; r < b; ++r) {
            const int q = l0 + r, c = q - g;
            if (r == r0 && dir) {
                for (int t = 0; t < m; ++t) qt += tc[q + t] * tc[c + t];
            } else {
                qt += tc[q + m - 1] * tc[c + m - 1] - tc[q - 1] * tc[c - 1];
            }
            const ${oreal} iq = IC[q], mq = MC[q], ic = IC[c], mc = MC[c];
            const ${oreal} eq = 2 * kk * iq * ea;
            ${oreal} lo, hi;
            BOUNDS(${oreal}, qt, iq, mq, ic, mc, lo, hi)
            if (ic < 0 || iq < 0 || !isfinite(lo) || !isfinite(hi)) {
                lo = -INFINITY; hi = INFINITY;
            }
            if (isnan(ic) || isnan(iq)) { lo = INFINITY; hi = INFINITY; }
            LO[(size_t)r * l1 + c] = lo; HI[(size_t)r * l1 + c] = hi;
            if (c >= l0) {
                LO[(size_t)(c - l0) * l1 + q] = lo; HI[(size_t)(c - l0) * l1 + q] = hi;
            }
            if (r == b - 1 && c >= drop) QT2[c - drop] = qt;
        }
    }
}

## (d) into the ascending list v0.. of the K smallest (scalars, as kinsert)
<%def name="vinsert(d)">
    if (${d} < v${K - 1}) {
        v${K - 1} = ${d};
% for p in range(K - 1, 0, -1):
        if (v${p - 1} > v${p}) {
            const ${oreal} t = v${p - 1};
            v${p - 1} = v${p}; v${p} = t;
        }
% endfor
    }
</%def>

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void stream_thr(const int l0, const int b, const int ez, const int egress, const int m,
                __global const ${oreal} *HI, __global ${oreal} *TH)
{
    __local ${oreal} lv[64 * ${K}];
    __local ${oreal} ll[64];
    const int r = get_group_id(0), lid = get_local_id(0);
    const int l1 = l0 + b, q = l0 + r;
% for k in range(K):
    ${oreal} v${k} = INFINITY;
% endfor
    ${oreal} left = INFINITY;
    for (int c = lid; c < l1; c += 64) {
        if (abs(c - q) <= ez || (egress && c <= r)) continue;
        const ${oreal} h = HI[(size_t)r * l1 + c];
${vinsert("h")}
        if (c < q) left = fmin(left, h);
    }
% for k in range(K):
    lv[lid * ${K} + ${k}] = v${k};
% endfor
    ll[lid] = left;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        for (int i = 1; i < 64; ++i) {
            left = fmin(left, ll[i]);
            for (int k = 0; k < ${K}; ++k) {
                const ${oreal} h = lv[i * ${K} + k];
${vinsert("h")}
            }
        }
        const ${oreal} c0 = 256 * FEPS * m * (m + 1);
        TH[2 * r] = isfinite(v${K - 1}) ? v${K - 1} + 2 * c0 : INFINITY;
        TH[2 * r + 1] = isfinite(left) ? left + 2 * c0 : INFINITY;
    }
}

% endif
