<%namespace name="sg" file="/common/subgroup.cl.mako"/>\
## The MPdist profiles of clts.snippets (stumpy's ``_get_all_profiles``) when the MPdist window
## s is shorter than the segment length m: every segment's j = m - s + 1 windows (length s)
## against every window of the series, the row minima over each run of j columns and the
## column minima, then per position the k-th smallest of those 2 j values. Distances are
## decreasing in the Pearson correlation rho (d = sqrt(|2 s (1 - rho)|)): the minima are
## taken as maxima of rho and only the k-th values become distances (the same numbers).
##
## ``seg_minima``: a work-item owns one segment and a block of columns [c0, c1). It walks the
## segment's j windows (rows) in order: the first row's dot products directly (O(s) each), the
## next ones by the sliding update QT[r, c] = QT[r - 1, c - 1] - x[q - 1] x[c - 1]
## + x[q + s - 1] x[c + s - 1] (the block's first column directly), their correlations
## (stumpy's conventions: constant against regular 0.5, i.e. sqrt(s); two constants 1; a window
## with NaN / inf -inf, i.e. inf; a window against itself 1), the column maxima of its columns,
## and each row's maxima over the j columns i .. i + j - 1 (runs of 2^t columns by doubling,
## log2 j contiguous vector passes, then two overlapping runs) into ``rowmin`` [G, j, nv].
## ``seg_kth``: per (position, segment), the k-th smallest distance (0-based) of the j row
## minima and the column minima of columns i .. i + j - 1 (stumpy's rule where it is not
## finite), from a sorted list of the KP = k + 1 largest correlations.
## The series arrive centred on their mean, NaN / inf set to 0, with each window's mean,
## 1 / standard deviation and `sp` (NaN regular, 0.5 constant, -inf NaN / inf), as mpdist's.
<%include file="/common/real.cl.mako"/>
<%
    W = LANES
    V = "real" if W == 1 else f"real{W}"
    def LD(p):
        return f"(*({p}))" if W == 1 else f"vload{W}(0, {p})"
    def ST(v, p):
        return f"*({p}) = {v}" if W == 1 else f"vstore{W}({v}, 0, {p})"
    def SEL(a, b, c):
        return f"(({c}) ? ({b}) : ({a}))" if W == 1 else f"select({a}, {b}, {c})"
%>


## correlations of the columns c .. c + W - 1 with row q from their dot products ``qt``, by
## the query's kind (KIND: 0 regular, 1 constant), into ``d``
<%def name="dist(KIND)">
            const ${V} mc = ${LD("mu + c")}, ic = ${LD("isd + c")}, spc = ${LD("sp + c")};
% if KIND == 0:
            const ${V} rho = ${SEL("spc", "fmin((" + V + ")1, (qt * sinv - mq * mc) * iq * ic)", "isnan(spc)")};
% else:
            const ${V} rho = ${SEL(SEL("spc", "(" + V + ")1", "spc > (" + V + ")0"), "(" + V + ")0.5", "isnan(spc)")};
% endif
            const ${V} d = rho;
</%def>

## one row: columns [c0, E) (the first directly, the others by the sliding update unless
## FIRST), correlations to pre, column maxima for c < c1
<%def name="row(KIND, FIRST)">
        {
            int c = c0;
% if not FIRST:
            {                            // the block's first column: directly
                real acc = 0;
                for (int t = 0; t < s; ++t) acc = fma(x[q + t], x[c + t], acc);
                cur[0] = acc;
                const real mcs = mu[c], ics = isd[c], spcs = sp[c];
% if KIND == 0:
                const real rho = isnan(spcs) ? fmin((real)1, (acc * sinv - mq * mcs) * iq * ics)
                                             : spcs;
% else:
                const real rho = isnan(spcs) ? (real)0.5 : (spcs > (real)0 ? (real)1 : spcs);
% endif
                pre[0] = rho;
                if (c < c1) col[c] = fmax(col[c], rho);
                ++c;
            }
% endif
            for (; c + ${W} <= E; c += ${W}) {
                const int o = c - c0;
% if FIRST:
                ${V} qt = 0;
                for (int t = 0; t < s; ++t) qt = fma((${V})x[q + t], ${LD("x + c + t")}, qt);
% else:
                const ${V} qt = ${LD("prev + o - 1")} - xout * ${LD("x + c - 1")}
                                + xin * ${LD("x + c + s - 1")};
% endif
                ${ST("qt", "cur + o")};
${dist(KIND)}
                ${ST("d", "pre + o")};
                if (c + ${W} <= c1) {
                    ${ST("fmax(" + LD("col + c") + ", d)", "col + c")};
                } else {
                    for (int w = 0; w < ${W}; ++w)
                        if (c + w < c1) col[c + w] = fmax(col[c + w], pre[o + w]);
                }
            }
            for (; c < E; ++c) {             // the tail, one column at a time
                const int o = c - c0;
% if FIRST:
                real qt = 0;
                for (int t = 0; t < s; ++t) qt = fma(x[q + t], x[c + t], qt);
% else:
                const real qt = prev[o - 1] - xout * x[c - 1] + xin * x[c + s - 1];
% endif
                cur[o] = qt;
                const real mcs = mu[c], ics = isd[c], spcs = sp[c];
% if KIND == 0:
                const real rho = isnan(spcs) ? fmin((real)1, (qt * sinv - mq * mcs) * iq * ics)
                                             : spcs;
% else:
                const real rho = isnan(spcs) ? (real)0.5 : (spcs > (real)0 ? (real)1 : spcs);
% endif
                pre[o] = rho;
                if (c < c1) col[c] = fmax(col[c], rho);
            }
        }
</%def>

${sg.reqd(SUBGROUP)}\
__kernel void seg_minima(
    __global const real *x, __global const real *mu, __global const real *isd,
    __global const real *sp, const int l, const int s, const int j, const int m,
    const int seg0, const int bc, const int nv, __global real *scratch, const int wp,
    __global real *rowmin, __global real *colmin)
{
    const int blk = get_global_id(0);
    const int nblk = get_global_size(0);
    const int g = get_global_id(1);
    const int c0 = blk * bc;
    if (c0 >= l) return;
    const int c1 = min(l, c0 + bc);
    const int E = min(l, c1 + j - 1);          // columns whose distances the minima need
    const int iend = min(c1, nv);              // positions of this block
    __global real *prev = scratch + ((long)g * nblk + blk) * 4 * wp;
    __global real *cur = prev + wp;
    __global real *pre = cur + wp;             // distances, then their prefix minima
    __global real *suf = pre + wp;             // the doubling's second buffer
    __global real *col = colmin + (long)g * l;
    __global real *rm = rowmin + (long)g * j * nv;
    const int q0 = (seg0 + g) * m;
    const real sinv = (real)1 / (real)s;
    for (int c = c0; c < c1; ++c) col[c] = -INFINITY;
    for (int r = 0; r < j; ++r) {
        const int q = q0 + r;
        const real mq = mu[q], iq = isd[q], spq = sp[q];
        const real xout = r ? x[q - 1] : (real)0, xin = x[q + s - 1];
        if (spq == -INFINITY) {                // NaN / inf in the row's window: inf throughout
            for (int c = c0; c < E; ++c) pre[c - c0] = -INFINITY;
            if (r + 1 < j) {                   // the next row still needs the dot products
                for (int c = c0; c < E; ++c) {
                    const int o = c - c0;
                    real qt;
                    if (r == 0 || c == c0) {
                        qt = 0;
                        for (int t = 0; t < s; ++t) qt = fma(x[q + t], x[c + t], qt);
                    } else {
                        qt = prev[o - 1] - xout * x[c - 1] + xin * x[c + s - 1];
                    }
                    cur[o] = qt;
                }
            }
        } else if (isnan(spq)) {
            if (r == 0) {
${row(0, True)}
            } else {
${row(0, False)}
            }
        } else {
            if (r == 0) {
${row(1, True)}
            } else {
${row(1, False)}
            }
        }
        if (q >= c0 && q < E && !(spq == -INFINITY)) {     // a window against itself: 0
            pre[q - c0] = 1;
            if (q < c1) col[q] = 1;
        }
        // maxima over runs of j columns: runs of 1, 2, 4, ... p <= j columns by doubling
        // (contiguous, in vectors), then two overlapping runs of p per position
        {
            __global real *ra = pre, *rb = suf;
            int p = 1, len = E - c0;               // positions whose run of p is known
            while (2 * p <= j) {
                len -= p;
                int o = 0;
                for (; o + ${W} <= len; o += ${W})
                    ${ST("fmax(" + LD("ra + o") + ", " + LD("ra + o + p") + ")", "rb + o")};
                for (; o < len; ++o) rb[o] = fmax(ra[o], ra[o + p]);
                __global real *t = ra; ra = rb; rb = t;
                p *= 2;
            }
            __global real *out = rm + (long)r * nv + c0;
            const int no = iend - c0, sh = j - p;
            int o = 0;
            for (; o + ${W} <= no; o += ${W})
                ${ST("fmax(" + LD("ra + o") + ", " + LD("ra + o + sh") + ")", "out + o")};
            for (; o < no; ++o) out[o] = fmax(ra[o], ra[o + sh]);
        }
        __global real *t = prev; prev = cur; cur = t;
    }
}

## the sorted list of the KP largest correlations of each work-item in local memory (a private
## array indexed at run time miscompiles on Intel's CPU runtime; KP scalars bubbled branch-free
## cost pocl 4x)
<%def name="offer(v, cond)">
        {
            const real v_ = ${v};
            if (${cond} && v_ > lst[${KP - 1}]) {
                int p = ${KP - 1};
                while (p > 0 && lst[p - 1] < v_) {
                    lst[p] = lst[p - 1];
                    --p;
                }
                lst[p] = v_;
            }
        }
</%def>

## a work-item takes KTH_RUN consecutive positions: the k-th value of the one before is a
## threshold (tau): the values at or above it first, the others only when those are fewer
## than KP (the answers of neighbouring positions are close: about KP insertions, not
## KP (1 + ln(2 j / KP)) as in arbitrary order)
__kernel __attribute__((reqd_work_group_size(${KTH_WG}, 1, 1)))
void seg_kth(__global const real *rowmin, __global const real *colmin, const int l,
             const int j, const int nv, const int k, const int s, __global real *out)
{
    __local real lists[${KTH_WG * KP}];
    const int i0 = get_global_id(0) * ${KTH_RUN};
    const int g = get_global_id(1);
    if (i0 >= nv) return;
    __local real *lst = lists + get_local_id(0) * ${KP};
    real tau = -INFINITY;
    for (int i = i0; i < min(nv, i0 + ${KTH_RUN}); ++i) {
        for (int p = 0; p < ${KP}; ++p) lst[p] = -INFINITY;
        __global const real *rm = rowmin + (long)g * j * nv + i;
        __global const real *cm = colmin + (long)g * l + i;
        for (int t = 0; t < j; ++t) ${offer("rm[(long)t * nv]", "v_ >= tau")}
        for (int t = 0; t < j; ++t) ${offer("cm[t]", "v_ >= tau")}
        if (!(lst[${KP - 1}] >= tau)) {     // fewer than KP at or above tau: the others too
            for (int t = 0; t < j; ++t) ${offer("rm[(long)t * nv]", "v_ < tau")}
            for (int t = 0; t < j; ++t) ${offer("cm[t]", "v_ < tau")}
        }
        tau = lst[${KP - 1}];
        // the k-th distance (k = KP - 1: the KP-th largest correlation); where it is not
        // finite, the largest finite of the k smallest (the list is sorted, -inf last), the
        // first when none is
        real v = lst[${KP - 1}];
        for (int p = ${KP - 2}; p >= 0 && !isfinite(v); --p)
            if (isfinite(lst[p])) v = lst[p];
        out[(long)g * nv + i] = sqrt(fabs((real)2 * (real)s * ((real)1 - v)));
    }
}
