## Batched AB-joins for MPdist (clts.mpdist): for every (A series, B series) pair of a batch,
## the best Pearson correlation of each window of A against all windows of B (a row maximum)
## and of each window of B against the windows of A (a column maximum): both directions of the
## AB-join in one pass over the pair's distance matrix, O(1) per cell.
##
## A work-item owns a block of consecutive rows (windows of A) of one pair: its first row's dot
## products QT[i0, j] are computed directly (O(m) each), the next rows by the sliding update
## QT[i, j] = QT[i - 1, j - 1] - a[i - 1] b[j - 1] + a[i + m - 1] b[j + m - 1] (two row buffers
## in global scratch, so the j loop carries no dependency and runs in explicit vectors of LANES).
## Its row maxima are final; its column maxima are partial, one row per block, combined by the
## host. The series arrive centred on their own mean with NaN / inf set to 0; per window the
## host gives the mean, 1 / standard deviation and `sp`: NaN for a regular window, 0.5 for a
## constant one, -inf for a window with NaN / inf (stumpy's conventions: constant against
## regular is at sqrt(m), two constants at 0, a non-finite window is nobody's neighbour).
## Grid: (row blocks, pairs). ``abjoin_runs_given``: the same rows, without the columns, for a
## list of (A series, B series, first row, rows) items, one per work-item, their first rows from
## ``first_rows`` (the candidates' runs of clts.ostinato).
<%include file="/common/real.cl.mako"/>
<%
    W = LANES
    V = "real" if W == 1 else f"real{W}"
    def LD(p):
        return f"(*({p}))" if W == 1 else f"vload{W}(0, {p})"
    def ST(v, p):
        return f"*({p}) = {v}" if W == 1 else f"vstore{W}({v}, 0, {p})"
%>

// rho of the windows j .. j + W - 1 of B against row window (mi, si) of A, from their QT
#define RHO(qt, mu, is, sp) \
    (${"(isnan(sp) ? fmin((real)1, ((qt) * minv - mi * (mu)) * si * (is)) : (sp))" if W == 1 else "select((sp), fmin((" + V + ")1, ((qt) * minv - mi * (mu)) * si * (is)), isnan(sp))"})

## the rows i0 .. i1 - 1 of one pair (a, b): row maxima to rb[i - i0], with COLS the column
## maxima into cb
<%def name="rows_loop(COLS, GIVEN=False)">
    for (int i = i0; i < i1; ++i) {
% if GIVEN:
        if (i == i0) {                  // the first row's dot products: given in cur
        } else if (0) {
% else:
        if (i == i0) {                  // the block's first row: direct dot products
% endif
            int j = 0;
            for (; j + ${4 * W} <= lB; j += ${4 * W}) {     // four independent chains
                ${V} acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0;
                for (int t = 0; t < m; ++t) {
                    const real at = a[i + t];
                    acc0 = fma((${V})at, ${LD("b + j + t")}, acc0);
                    acc1 = fma((${V})at, ${LD("b + j + t + " + str(W))}, acc1);
                    acc2 = fma((${V})at, ${LD("b + j + t + " + str(2 * W))}, acc2);
                    acc3 = fma((${V})at, ${LD("b + j + t + " + str(3 * W))}, acc3);
                }
                ${ST("acc0", "cur + j")};
                ${ST("acc1", "cur + j + " + str(W))};
                ${ST("acc2", "cur + j + " + str(2 * W))};
                ${ST("acc3", "cur + j + " + str(3 * W))};
            }
            for (; j + ${W} <= lB; j += ${W}) {
                ${V} acc = 0;
                for (int t = 0; t < m; ++t) acc = fma((${V})a[i + t], ${LD("b + j + t")}, acc);
                ${ST("acc", "cur + j")};
            }
            for (; j < lB; ++j) {
                real acc = 0;
                for (int t = 0; t < m; ++t) acc = fma(a[i + t], b[j + t], acc);
                cur[j] = acc;
            }
        } else {                        // the sliding update from the row before
            const real aout = a[i - 1], ain = a[i + m - 1];
            {
                real acc = 0;
                for (int t = 0; t < m; ++t) acc = fma(a[i + t], b[t], acc);
                cur[0] = acc;
            }
            int j = 1;
            for (; j + ${W} <= lB; j += ${W}) {
                const ${V} v = ${LD("prev + j - 1")} - aout * ${LD("b + j - 1")}
                               + ain * ${LD("b + j + m - 1")};
                ${ST("v", "cur + j")};
            }
            for (; j < lB; ++j) cur[j] = prev[j - 1] - aout * b[j - 1] + ain * b[j + m - 1];
        }
        const real spi = spa[i];
        if (isnan(spi)) {               // a regular window of A
            const real mi = mua[i], si = isa[i];
            ${V} best = -INFINITY;
            int j = 0;
            for (; j + ${W} <= lB; j += ${W}) {
                const ${V} r = RHO(${LD("cur + j")}, ${LD("mub + j")}, ${LD("isb + j")},
                                   ${LD("spb + j")});
                best = fmax(best, r);
% if COLS:
                ${ST("fmax(" + LD("cb + j") + ", r)", "cb + j")};
% endif
            }
            real bs = -INFINITY;
            for (; j < lB; ++j) {
                const real r = (isnan(spb[j]) ? fmin((real)1, (cur[j] * minv - mi * mub[j])
                                                     * si * isb[j]) : spb[j]);
                bs = fmax(bs, r);
% if COLS:
                cb[j] = fmax(cb[j], r);
% endif
            }
% if W == 1:
            rb[i - i0] = fmax(bs, best);
% else:
            for (int w = 0; w < ${W}; ++w) bs = fmax(bs, ((real *)&best)[w]);
            rb[i - i0] = bs;
% endif
        } else if (spi > (real)0) {     // a constant window of A: 1 to constants, 0.5 else
            real bs = -INFINITY;
            for (int j = 0; j < lB; ++j) {
                const real s = spb[j];
                const real r = isnan(s) ? (real)0.5 : (s > (real)0 ? (real)1 : s);
                bs = fmax(bs, r);
% if COLS:
                cb[j] = fmax(cb[j], r);
% endif
            }
            rb[i - i0] = bs;
        } else {                        // NaN / inf in the window of A: nobody's neighbour
            rb[i - i0] = -INFINITY;
        }
        __global real *t = prev; prev = cur; cur = t;
    }
</%def>

__kernel void abjoin_best(
    __global const real *SA, const int nA, __global const real *muA,
    __global const real *isA, __global const real *spA, const int lA,
    __global const real *SB, const int nB, __global const real *muB,
    __global const real *isB, __global const real *spB, const int lB,
    __global const int *pa, __global const int *pb, const int m, const int rows,
    __global real *scratch, const int lBp,
    __global real *rowbest, __global real *colbest)
{
    const int blk = get_global_id(0);
    const int nblk = get_global_size(0);
    const int p = get_global_id(1);
    const int ia = pa[p], ib = pb[p];
    __global const real *a = SA + (long)ia * nA;
    __global const real *b = SB + (long)ib * nB;
    __global const real *mua = muA + (long)ia * lA;
    __global const real *isa = isA + (long)ia * lA;
    __global const real *spa = spA + (long)ia * lA;
    __global const real *mub = muB + (long)ib * lB;
    __global const real *isb = isB + (long)ib * lB;
    __global const real *spb = spB + (long)ib * lB;
    __global real *cb = colbest + ((long)p * nblk + blk) * lB;
    __global real *prev = scratch + ((long)p * nblk + blk) * 2 * lBp;
    __global real *cur = prev + lBp;
    const real minv = (real)1 / (real)m;
    for (int j = 0; j < lB; ++j) cb[j] = -INFINITY;
    const int i0 = blk * rows;
    const int i1 = min(lA, i0 + rows);
    __global real *rb = rowbest + (long)p * lA + i0;
${rows_loop(True)}
}

// the window statistics of ``window_stats`` (mpdist.py) on the device: per (window w, series
// r) of the centred series S (rows nS apart), its mean and 1 / standard deviation (two passes,
// as numpy's mean and std) and `sp`; ``bad``: windows holding NaN / inf (flagged by the host)
__kernel void series_stats(__global const real *S, const int nS, const int l, const int m,
                           __global const uchar *bad, __global real *mu, __global real *isd,
                           __global real *sp)
{
    const int w = get_global_id(0);
    const int r = get_global_id(1);
    if (w >= l) return;
    const long o = (long)r * l + w;
    if (bad[o]) {
        mu[o] = 0;
        isd[o] = 0;
        sp[o] = -INFINITY;
        return;
    }
    __global const real *x = S + (long)r * nS + w;
    real acc = 0, hi = x[0], lo = x[0];
    for (int t = 0; t < m; ++t) {
        const real v = x[t];
        acc += v;
        hi = fmax(hi, v);
        lo = fmin(lo, v);
    }
    const real mean = acc / (real)m;
    real ss = 0;
    for (int t = 0; t < m; ++t) {
        const real d = x[t] - mean;
        ss = fma(d, d, ss);
    }
    if (hi == lo) {                     // constant: stumpy's test (max == min)
        mu[o] = 0;
        isd[o] = 0;
        sp[o] = (real)0.5;
    } else {
        mu[o] = mean;
        isd[o] = (real)1 / sqrt(ss / (real)m);
        sp[o] = NAN;
    }
}

// the first rows of items (ia, ib, r0, cnt) of ``abjoin_runs_given``: the dot products of
// window r0 of series ia with every window of series ib, into qt + item * lBp; RI items
// (consecutive, of one series ib: the host pads each target's items to a multiple of RI) by
// CI x LANES columns per work-item, so each load of B feeds RI multiply-adds
<% RI, CI = FIRST_ITEMS, FIRST_VECTORS %>
__kernel void first_rows(
    __global const real *SA, const int nA, __global const real *SB, const int nB,
    const int lB, __global const int4 *items, const int nitems, const int m,
    __global real *qt, const int lBp)
{
    const int j0 = get_global_id(0) * ${CI * W};
    const int it0 = get_global_id(1) * ${RI};
    if (j0 >= lB || it0 >= nitems) return;
    __global const real *b = SB + (long)items[it0].y * nB;
% for r in range(RI):
    __global const real *a${r} = SA + (long)items[min(it0 + ${r}, nitems - 1)].x * nA
                                 + items[min(it0 + ${r}, nitems - 1)].z;
% endfor
    if (j0 + ${CI * W} <= lB) {
% for r in range(RI):
%   for c in range(CI):
        ${V} acc${r}_${c} = 0;
%   endfor
% endfor
        for (int t = 0; t < m; ++t) {
% for c in range(CI):
            const ${V} b${c} = ${LD("b + j0 + t + " + str(c * W))};
% endfor
% for r in range(RI):
            { const ${V} x = (${V})a${r}[t];
%   for c in range(CI):
              acc${r}_${c} = fma(x, b${c}, acc${r}_${c});
%   endfor
            }
% endfor
        }
% for r in range(RI):
        if (it0 + ${r} < nitems) {
%   for c in range(CI):
            ${ST("acc" + str(r) + "_" + str(c), "qt + (long)(it0 + " + str(r) + ") * lBp + j0 + " + str(c * W))};
%   endfor
        }
% endfor
    } else {                            // the last columns, one at a time
        for (int j = j0; j < lB; ++j) {
% for r in range(RI):
            {
                real acc = 0;
                for (int t = 0; t < m; ++t) acc = fma(a${r}[t], b[j + t], acc);
                if (it0 + ${r} < nitems) qt[(long)(it0 + ${r}) * lBp + j] = acc;
            }
% endfor
        }
    }
}

// the rows r0 .. r0 + cnt - 1 of pair (ia, ib) for each item (ia, ib, r0, cnt) of ``items``, their
// row maxima to rowbest[offs[item] ..]; the first row of dot products given (first_rows) in
// qt + item * lBp, which the run then uses as one of its two row buffers
__kernel void abjoin_runs_given(
    __global const real *SA, const int nA, __global const real *muA,
    __global const real *isA, __global const real *spA, const int lA,
    __global const real *SB, const int nB, __global const real *muB,
    __global const real *isB, __global const real *spB, const int lB,
    __global const int4 *items, __global const long *offs, const int nitems, const int m,
    __global real *scratch, __global real *qt, const int lBp, __global real *rowbest)
{
    const int it = get_global_id(0);
    if (it >= nitems) return;
    const int4 w = items[it];
    const int ia = w.x, ib = w.y;
    __global const real *a = SA + (long)ia * nA;
    __global const real *b = SB + (long)ib * nB;
    __global const real *mua = muA + (long)ia * lA;
    __global const real *isa = isA + (long)ia * lA;
    __global const real *spa = spA + (long)ia * lA;
    __global const real *mub = muB + (long)ib * lB;
    __global const real *isb = isB + (long)ib * lB;
    __global const real *spb = spB + (long)ib * lB;
    __global real *prev = scratch + (long)it * lBp;
    __global real *cur = qt + (long)it * lBp;
    __global real *rb = rowbest + offs[it];
    const real minv = (real)1 / (real)m;
    const int i0 = w.z;
    const int i1 = min(lA, i0 + w.w);
${rows_loop(False, True)}
}
