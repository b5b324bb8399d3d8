## Matrix profile on the device from end to end: a series' scaling, cleaning, window flags,
## ill-conditioning test, update coefficients and the diagonal kernels' work descriptors
## (before the diagonal kernel); the decoding, merging and finishing of the k = 1 results
## (after it). Everything series.py / diagonal.py computed on the host, with the same
## arithmetic: float64 where the host used float64 (``sreal``: the scaling; ``real``: the
## statistics' precision), so that a double-precision run gives the host path's bits.
## Parameters: real (exact precision), kreal (diagonal kernel's), tin (input series), sreal
## (scaling), NORMALIZE, SINGLE (round the cleaned series to float, precision="single"), wg
## (the single-work-group reductions), the FLAG_* values of clts/mp/flags.py.
<%include file="/common/real.cl.mako"/>
% if real != "double" and "double" in (kreal, tin, sreal):
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
% endif
typedef ${kreal} kreal;
typedef ${tin} tin;
typedef ${sreal} sreal;
#define WG ${wg}

// a power of two above |top| (1 for top = 0 or none): dividing by it is exact. frexp's
// exponent, ilogb(top) + 1 (subnormals too), without its private pointer (Oclgrind stops at
// it); infinity: frexp's exponent 0, as numpy's
inline sreal pow2_above(sreal top)
{
    if (!(top > 0) || isinf(top)) return 1;
    return ldexp((sreal)1, ilogb(top) + 1);
}

inline sreal wg_max(__local sreal *red, sreal v)
{
    const int lid = get_local_id(0);
    red[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (lid < s) red[lid] = fmax(red[lid], red[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const sreal r = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

inline sreal wg_sum(__local sreal *red, sreal v)
{
    const int lid = get_local_id(0);
    red[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (lid < s) red[lid] += red[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const sreal r = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

// sc = (s1, c, s2, s1 * s2) of the finite values of xa then xb: x -> ((x / s1) - c) / s2
// brings them near 1 (CENTRE: centred on their mean c; else c = 0, s2 = 1). One work-group.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void scale_reduce(__global const tin *xa, const int na, __global const tin *xb, const int nb,
                  const int CENTRE, __global sreal *sc)
{
    __local sreal red[WG];
    const int lid = get_local_id(0), n = na + nb;
    sreal top = 0;
    for (int i = lid; i < n; i += WG) {
        const sreal v = i < na ? (sreal)xa[i] : (sreal)xb[i - na];
        if (isfinite(v)) top = fmax(top, fabs(v));
    }
    const sreal s1 = pow2_above(wg_max(red, top));
    sreal c = 0, s2 = 1;
    if (CENTRE) {
        // compensated sums of each work-item's values, then their tree sum
        sreal s = 0, e = 0, cnt = 0;
        for (int i = lid; i < n; i += WG) {
            const sreal v = i < na ? (sreal)xa[i] : (sreal)xb[i - na];
            if (!isfinite(v)) continue;
            const sreal y = v / s1 - e;
            const sreal z = s + y;
            e = (z - s) - y;
            s = z;
            cnt += 1;
        }
        const sreal tot = wg_sum(red, s - e), count = wg_sum(red, cnt);
        c = count > 0 ? tot / count : 0;
        sreal t2 = 0;
        for (int i = lid; i < n; i += WG) {
            const sreal v = i < na ? (sreal)xa[i] : (sreal)xb[i - na];
            if (isfinite(v)) t2 = fmax(t2, fabs(v / s1 - c));
        }
        s2 = pow2_above(wg_max(red, t2));
    }
    if (lid == 0) { sc[0] = s1; sc[1] = c; sc[2] = s2; sc[3] = s1 * s2; }
}

// Tc: the scaled series with NaN / inf replaced by 0 and ntot - n zeros after it; nf: 1 where
// the value was not finite
__kernel void clean(__global const tin *x, const int n, const int ntot,
                    __global const sreal *sc, __global real *Tc, __global int *nf)
{
    const int i = get_global_id(0);
    if (i >= ntot) return;
    if (i >= n) { Tc[i] = 0; return; }
    const sreal v = (sreal)x[i];
    const int fin = isfinite(v);
    const sreal y = ((v / sc[0]) - sc[1]) / sc[2];
% if SINGLE:
    Tc[i] = fin ? (real)(float)y : 0;
% else:
    Tc[i] = fin ? (real)y : 0;
% endif
    nf[i] = !fin;
}

// windows holding a non-finite value get FLAG_NONFINITE (alone): a running count over NFB
// windows per work-item (CPUs: 64; GPUs: 1, so that adjacent work-items read adjacent values)
__kernel void nonfinite_windows(__global const int *nf, const int l, const int m,
                                __global int *fl)
{
    const int i0 = (int)get_global_id(0) * ${NFB};
    if (i0 >= l) return;
    const int i1 = min(i0 + ${NFB}, l);
    int c = 0;
    for (int t = 0; t < m; ++t) c += nf[i0 + t];
    for (int i = i0;;) {
        if (c) fl[i] = ${FLAG_NONFINITE};
        if (++i >= i1) break;
        c += nf[i + m - 1] - nf[i - 1];
    }
}

// the O(1) update terms of window w of the row series (w = 0: none)
inline void update_terms(__global const real *Tc, __global const real *mu, int w, int m,
                         real *df, real *dg)
{
    if (w == 0) { *df = 0; *dg = 0; return; }
    const real a = Tc[w + m - 1], b = Tc[w - 1];
% if NORMALIZE:
    *df = (a - b) / 2;
    *dg = (a - mu[w]) + (b - mu[w - 1]);
% else:
    *df = (a + b) / 2;
    *dg = a - b;
% endif
}

% if NORMALIZE:
// FLAG_ILL on the windows (flag 0) too ill-conditioned for the O(1) update: centred norm^2
// below K * max|df| * max|dg| + K0 * S0^2 (K = C * eps * R from the host; K0 = C * eps *
// (m + band) on the column side of an AB-join, whose diagonals enter it from its padding over
// S0 = max |Tc[t] - Tc[0]|, t < m, the first window's spread; else 0). One work-group.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void ill_flags(__global const real *Tc, __global const real *mu, __global const real *ss,
               const int l, const int m, const sreal K, const sreal K0, __global int *fl)
{
    __local sreal red[WG];
    const int lid = get_local_id(0);
    sreal adf = 0, adg = 0, s0 = 0;
    for (int w = lid; w < l; w += WG) {
        real df, dg;
        update_terms(Tc, mu, w, m, &df, &dg);
        adf = fmax(adf, (sreal)fabs(df));
        adg = fmax(adg, (sreal)fabs(dg));
    }
    for (int t = lid; t < m; t += WG)
        s0 = fmax(s0, (sreal)fabs(Tc[t] - Tc[0]));
    const sreal S2 = wg_max(red, adf) * wg_max(red, adg), S0 = wg_max(red, s0);
    const real thr = (real)((sreal)K * S2 + K0 * S0 * S0);
    for (int w = lid; w < l; w += WG)
        if (fl[w] == 0 && ss[w] < thr) fl[w] = ${FLAG_ILL};
}
% endif

<%def name="coefficients(name, out)">
// the diagonal kernels' arrays of one side: the series extended by P copies of its first value
// before and copies of its last after (T: nw + m values), and its nw windows' means, update terms; windows in the padding
// have their means summed here (the row side: P = 0, nw = l)
__kernel void ${name}(__global const real *Tc, const int n, __global const real *mu,
                      const int l, const int m, const int P, const int nw,
                      __global ${out} *T, __global ${out} *muo, __global ${out} *df,
                      __global ${out} *dg)
{
    const int w = get_global_id(0);
    if (w >= nw + m) return;
// the padding repeats the end values: a diagonal entering the series from it steps over no
// jump of the series' offset (ill_flags' K0 term covers the spread of the first window)
#define TE(t) ((t) < P ? Tc[0] : (t) < P + n ? Tc[(t) - P] : Tc[n - 1])
    T[w] = (${out})TE(w);
    if (w >= nw) return;
    real mw, mp = 0;
    for (int v = w - 1; v <= w; ++v) {
        if (v < 0) continue;
        real s;
        if (v >= P && v < P + l) {
            s = mu[v - P];
        } else {
            s = 0;
            for (int t = 0; t < m; ++t) s += TE(v + t);
            s /= m;
        }
        if (v == w) mw = s; else mp = s;
    }
    muo[w] = (${out})mw;
    if (w == 0) { df[w] = 0; dg[w] = 0; return; }
    const real a = TE(w + m - 1), b = TE(w - 1);
% if NORMALIZE:
    df[w] = (${out})((a - b) / 2);
    dg[w] = (${out})((a - mw) + (b - mp));
% else:
    df[w] = (${out})((a + b) / 2);
    dg[w] = (${out})(a - b);
% endif
#undef TE
}

// r of the nw windows of a side: 1 / sqrt(centred norm^2) of the ordinary windows, NaN for
// flagged ones and the padding (plain Euclidean: -|w|^2 / 2, NaN for non-finite windows)
__kernel void ${name}_r(__global const real *ss, __global const int *fl, const int l,
                        const int P, const int nw, __global ${out} *r)
{
    const int w = get_global_id(0);
    if (w >= nw) return;
    const int i = w - P;
    if (i < 0 || i >= l) { r[w] = (${out})NAN; return; }
% if NORMALIZE:
    r[w] = fl[i] == 0 ? (${out})(1 / sqrt(fmax(ss[i], (real)${"1e-300" if real == "double" else "FLT_MIN"})))
                      : (${out})NAN;
% else:
    r[w] = (fl[i] & ${FLAG_NONFINITE}) ? (${out})NAN : (${out})(-ss[i] / 2);
% endif
}
</%def>
${coefficients("coef_k", "kreal")}
${coefficients("coef_e", "real")}

// the diagonal kernels' work descriptors (k0, first row, end row, 0) of one segment s0: its
// bands b0 .. b0 + nbands - 1 in launches of size0, then doubling (top-k) up to cap bands,
// each launch's entries from a multiple of 8 (the padding entries zero); what the host's
// work lists held, made here so that nothing is uploaded
__kernel void work_desc(__global int4 *desc, const int off, const int total, const int b0,
                        const int nbands, const int size0, const int cap, const int kstart,
                        const int D, const int s0, const int R, const int lA, const int lB,
                        const int self_join)
{
    const int g = get_global_id(0);
    if (g >= total) return;
    int o = 0, b = b0, rem = nbands, size = size0;
    while (rem > 0) {
        if (size == cap && rem > cap) {       // steady launches of cap bands: jump
            const int pc = (cap + 7) & ~7;
            const int skip = min((g - o) / pc, (rem - 1) / cap);
            o += skip * pc; b += skip * cap; rem -= skip * cap;
        }
        const int s = min(size, rem), ps = (s + 7) & ~7;
        if (g < o + ps) {
            const int j = g - o;
            if (j >= s) { desc[off + g] = (int4)(0); return; }
            const long k0 = (long)kstart + (long)(b + j) * D;
            long lo, hi;
            if (self_join) { lo = 0; hi = lA - k0; }
            else { lo = max(0L, -k0 - D + 1); hi = min((long)lA, (long)lB - k0); }
            desc[off + g] = (int4)((int)k0, (int)max(lo, (long)s0), (int)min(hi, (long)s0 + R), 0);
            return;
        }
        o += ps; b += s; rem -= s; size = min(2 * size, cap);
    }
}

// ---------------------------------------------------------------- after the diagonal kernel
// the column index of a packed (value, index) key; -1 for an untouched one
__kernel void decode_keys(__global const ulong *keys, const int n, const ulong mask,
                          __global int *idx)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const ulong k = keys[i];
    idx[i] = k == (ulong)0xFFFFFFFFFFFFFFFFUL ? -1 : (int)(k & mask);
}

// the windows with a SPECIAL flag in increasing order, and their count. One work-group.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void compact_special(__global const int *fl, const int l, __global int *idx,
                     __global int *count)
{
    __local int pre[WG];
    const int lid = get_local_id(0);
    int base = 0;
    for (int i0 = 0; i0 < l; i0 += WG) {
        const int i = i0 + lid;
        const int s = i < l && (fl[i] & ${FLAG_SPECIAL}) != 0;
        pre[lid] = s;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int d = 1; d < WG; d <<= 1) {        // inclusive scan
            const int v = lid >= d ? pre[lid - d] : 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            pre[lid] += v;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (s) idx[base + pre[lid] - 1] = i;
        const int tot = pre[WG - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
        base += tot;
    }
    if (lid == 0) *count = base;
}

// the better of two candidates: smaller distance, then smaller index; index -1: none
inline int take(real d1, int i1, real d2, int i2)
{
    return i2 >= 0 && (i1 < 0 || d2 < d1 || (d2 == d1 && i2 < i1));
}

// dst[q] <- the better of dst[q] and (v[p], i[p]) for q = at[p], p < *count
__kernel void better_at(__global const int *count, __global const int *at,
                        __global const real *v, __global const int *ix,
                        __global real *dv, __global int *di)
{
    const int p = get_global_id(0);
    if (p >= *count) return;
    const int q = at[p];
    if (take(dv[q], di[q], v[p], ix[p])) { dv[q] = v[p]; di[q] = ix[p]; }
}

// dst <- the better of dst and (v, i), element-wise
__kernel void better_all(const int n, __global const real *v, __global const int *ix,
                         __global real *dv, __global int *di)
{
    const int p = get_global_id(0);
    if (p >= n) return;
    if (take(dv[p], di[p], v[p], ix[p])) { dv[p] = v[p]; di[p] = ix[p]; }
}

// the results: P, I (the better of (v1, i1) and (v2, i2) when TWO, else (v1, i1)), and the
// sides as they are (self-joins: left / right), distances times unit (sc[3]; plain Euclidean)
__kernel void finish(const int n, const int TWO, const int UNIT, __global const sreal *sc,
                     __global const real *v1, __global const int *i1,
                     __global const real *v2, __global const int *i2,
                     __global real *P, __global long *I,
                     __global real *P1, __global long *I1, __global real *P2, __global long *I2)
{
    const int p = get_global_id(0);
    if (p >= n) return;
    const real u = UNIT ? (real)sc[3] : (real)1;
    real a = v1[p];
    int ia = i1[p];
    if (TWO) {
        P1[p] = a * u; I1[p] = ia;
        P2[p] = v2[p] * u; I2[p] = i2[p];
        if (take(a, ia, v2[p], i2[p])) { a = v2[p]; ia = i2[p]; }
    }
    P[p] = a * u; I[p] = ia;
}

// ---------------------------------------------------------------- top-k (k <= 16) lists
// the sort key of a candidate: distance, then index; none (index -1 or a distance not finite)
// last, as (inf, -1)
inline int before(real v1, int i1, real v2, int i2)
{
    const int k1 = i1 < 0 ? INT_MAX : i1, k2 = i2 < 0 ? INT_MAX : i2;
    return v1 < v2 || (v1 == v2 && k1 < k2);
}

// candidate c of a row: entry c of list a (row-major, from ra), else entry e = c - k of
// list b (rb + e * sb: sb = 1 row-major, sb = its row count column-major); none as (inf, -1)
inline void cand(__global const real *Pa, __global const int *Ia, __global const real *Pb,
                 __global const int *Ib, size_t ra, size_t rb, size_t sb, int k, int c,
                 real *v, int *i)
{
    real d;
    int x;
    if (c < k) { d = Pa[ra + c]; x = Ia[ra + c]; }
    else { d = Pb[rb + (c - k) * sb]; x = Ib[rb + (c - k) * sb]; }
    if (x < 0 || !isfinite(d)) { d = INFINITY; x = -1; }
    *v = d;
    *i = x;
}

// the k best of the 2k candidates of row r = AT ? at[p] : p (list a row r, list b row p), by
// rank (the candidates before it, ties in list order: a stable sort), into row p (AT) or r of
// o, which is neither a nor b. PER = 1 (GPUs): a work-item per candidate c of a row, 2k per
// row: the lanes of a row read the same entries together and adjacent rows' entries lie
// together, so a warp's reads and writes take one or two segments (a work-item per row reads
// entries k apart); PER = 0 (CPUs): a work-item per row ranks its 2k candidates, each row's
// entries read from its own cache lines. List a and o are [rows, k]; list b [rows, k] (NB = 0)
// or [k, NB] (column-major, NB > 0: the exact scans' lists, stored coalesced). Scalars only:
// no private array indexed at run time.
__kernel void merge_k(const int n, const int k, const int AT, const int NB, const int PER,
                      __global const int *count, __global const int *at,
                      __global const real *Pa, __global const int *Ia,
                      __global const real *Pb, __global const int *Ib,
                      __global real *Po, __global int *Io)
{
    const size_t g = get_global_id(0);
    const int p = PER ? (int)(g / (size_t)(2 * k)) : (int)g;
    if (p >= (AT ? *count : n)) return;
    const int r = AT ? at[p] : p;
    const size_t ra = (size_t)r * k, ro = (size_t)(AT ? p : r) * k;
    const size_t rb = NB ? (size_t)p : (size_t)p * k, sb = NB ? (size_t)NB : 1;
    const int c0 = PER ? (int)(g % (size_t)(2 * k)) : 0, c1 = PER ? c0 + 1 : 2 * k;
    for (int c = c0; c < c1; ++c) {
        real v;
        int i;
        cand(Pa, Ia, Pb, Ib, ra, rb, sb, k, c, &v, &i);
        int rank = 0;
        for (int d = 0; d < 2 * k && rank < k; ++d) {
            real w;
            int j;
            cand(Pa, Ia, Pb, Ib, ra, rb, sb, k, d, &w, &j);
            rank += before(w, j, v, i) || (d < c && !before(v, i, w, j));
        }
        if (rank < k) { Po[ro + rank] = v; Io[ro + rank] = i; }
    }
}

// rows p < *count of (P, I) into rows at[p] of (Pd, Id)
__kernel void scatter_rows(const int k, __global const int *count, __global const int *at,
                           __global const real *P, __global const int *I,
                           __global real *Pd, __global int *Id)
{
    const int p = get_global_id(0);
    if (p >= *count) return;
    const size_t r = (size_t)at[p] * k;
    for (int e = 0; e < k; ++e) { Pd[r + e] = P[(size_t)p * k + e]; Id[r + e] = I[(size_t)p * k + e]; }
}

// the [n, k] lists as results: distances times unit (plain Euclidean), indices int64; with
// FIRST the first entries of (P1, I1) and (P2, I2) too (self-joins: right / left neighbours)
__kernel void topk_out(const int n, const int k, const int UNIT, __global const sreal *sc,
                       __global const real *P, __global const int *I, __global real *Po,
                       __global long *Io, const int FIRST,
                       __global const real *P1, __global const int *I1,
                       __global const real *P2, __global const int *I2,
                       __global real *P1o, __global long *I1o, __global real *P2o,
                       __global long *I2o)
{
    // a work-item per entry (adjacent work-items, adjacent entries)
    const size_t g = get_global_id(0);
    if (g >= (size_t)n * k) return;
    const real u = UNIT ? (real)sc[3] : (real)1;
    Po[g] = P[g] * u;
    Io[g] = I[g];
    const int r = g / k;
    if (FIRST && g == (size_t)r * k) {
        P1o[r] = P1[(size_t)r * k] * u; I1o[r] = I1[(size_t)r * k];
        P2o[r] = P2[(size_t)r * k] * u; I2o[r] = I2[(size_t)r * k];
    }
}
