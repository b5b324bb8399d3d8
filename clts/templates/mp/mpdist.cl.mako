<%namespace name="sg" file="/common/subgroup.cl.mako"/>\
## Batched AB-joins for MPdist (clts.mpdist): for every (A series, B series) pair of a batch,
## the best Pearson correlation of each window of A against all windows of B (a row maximum)
## and of each window of B against the windows of A (a column maximum): both directions of the
## AB-join in one pass over the pair's distance matrix, O(1) per cell.
##
## A work-item owns a block of consecutive rows (windows of A) of one pair: its first row's dot
## products QT[i0, j] are computed directly (O(m) each), the next rows by the sliding update
## QT[i, j] = QT[i - 1, j - 1] - a[i - 1] b[j - 1] + a[i + m - 1] b[j + m - 1] (two row buffers
## in global scratch, so the j loop carries no dependency and runs in explicit vectors of LANES;
## the columns in chunks, all rows of a chunk before the next: see rows_loop). Its row maxima
## are final; its column maxima are partial, one row per block, combined (and clamped to 1, as
## the row maxima are in the kernel) by the host. The series arrive centred on their own mean
## with NaN / inf set to 0; per window the host gives the mean, 1 / standard deviation and `sp`:
## NaN for a regular window, 0.5 for a constant one, -inf for a window with NaN / inf (stumpy's
## conventions: constant against regular is at sqrt(m), two constants at 0, a non-finite window
## is nobody's neighbour), and the offset added to a correlation (0, or `sp` where not NaN).
## Grid: (row blocks, pairs). ``abjoin_runs``: the same rows, without the columns, for a list of
## (A series, B series, first row, rows) items, several items of one B series per work-item (the
## candidates' runs of clts.ostinato).
<%include file="/common/real.cl.mako"/>
<%
    W = LANES
    V = "real" if W == 1 else f"real{W}"
    def LD(p):
        return f"(*({p}))" if W == 1 else f"vload{W}(0, {p})"
    def ST(v, p):
        return f"*({p}) = {v}" if W == 1 else f"vstore{W}({v}, 0, {p})"
%>

// the larger of x and y (no NaN among them): one comparison
#define MAXV(x, y) ${"((y) > (x) ? (y) : (x))" if W == 1 else "select((x), (y), (y) > (x))"}

## the rows i0 .. i1 - 1 of one pair (a, b): row maxima to rb[i - i0], with COLS the column
## maxima into cb. The columns go in chunks of CHUNK, all rows of a chunk before the next one,
## so that a chunk's slices of b, the statistics, the two row buffers and cb stay in L1 while
## its rows run; edge[i - i0] carries row i's last dot product of a chunk into the next chunk
## (the sliding update of its first column). Every dot product is the one of the row-by-row
## order: direct at the first row and at column 0, the same update between.
## the sliding update of the dot products at columns j .. j + W - 1 (SLIDE_V) or j (SLIDE_S)
<%def name="SLIDE_V()">${LD("prev + j - 1")} - aout * ${LD("b + j - 1")}
                                   + ain * ${LD("b + j + m - 1")}</%def>
<%def name="SLIDE_S()">prev[j - 1] - aout * b[j - 1] + ain * b[j + m - 1]</%def>
## the correlation (before the clamp) of the columns j .. j + W - 1 from their dot products qt,
## into the row's maximum (and the columns' with COLS)
<%def name="rho_v(qt, COLS)">
                        {
                            const ${V} r = ((${qt}) * minv - mi * ${LD("mub + j")}) * si
                                           * ${LD("isb + j")} + ${LD("ofb + j")};
                            best = MAXV(best, r);
% if COLS:
                            const ${V} c = ${LD("cb + j")};
                            ${ST("MAXV(c, r)", "cb + j")};
% endif
                        }
</%def>
<%def name="rho_s(qt, jj, COLS)">
                        {
                            const real r = ((${qt}) * minv - mi * mub[${jj}]) * si * isb[${jj}]
                                           + ofb[${jj}];
                            bs = r > bs ? r : bs;
% if COLS:
                            cb[${jj}] = r > cb[${jj}] ? r : cb[${jj}];
% endif
                        }
</%def>
## One chunk [c0, c1) of the rows: the row buffers buf0 / buf1 hold the chunk's columns (from
## index 0); GIVEN: the first row's dot products are already in buf1.
<%def name="rows_chunk(COLS, GIVEN)">
    {
        __global real *prev = buf0 - c0, *cur = buf1 - c0;      // indexed by column
        real carry = 0;                 // the last chunk's dot product of row i - 1 at c0 - 1
        for (int i = i0; i < i1; ++i) {
% if GIVEN:
            if (i == i0) {              // the first row's dot products: given in cur
            } else {
% else:
            if (i == i0) {              // the block's first row: direct dot products
                int j = c0;
                for (; j + ${4 * W} <= c1; j += ${4 * W}) {     // four independent chains
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
                for (; j + ${W} <= c1; j += ${W}) {
                    ${V} acc = 0;
                    for (int t = 0; t < m; ++t) acc = fma((${V})a[i + t], ${LD("b + j + t")}, acc);
                    ${ST("acc", "cur + j")};
                }
                for (; j < c1; ++j) {
                    real acc = 0;
                    for (int t = 0; t < m; ++t) acc = fma(a[i + t], b[j + t], acc);
                    cur[j] = acc;
                }
            } else {
% endif
                // the sliding update from the row before (a regular window of A: in the
                // correlation's pass below)
                const real aout = a[i - 1], ain = a[i + m - 1];
                if (c0 == 0) {
                    real acc = 0;
                    for (int t = 0; t < m; ++t) acc = fma(a[i + t], b[t], acc);
                    cur[0] = acc;
                } else {
                    cur[c0] = carry - aout * b[c0 - 1] + ain * b[c0 + m - 1];
                }
                if (!isnan(spa[i])) {
                    int j = c0 + 1;
                    for (; j + ${W} <= c1; j += ${W}) {
                        const ${V} v = ${SLIDE_V()};
                        ${ST("v", "cur + j")};
                    }
                    for (; j < c1; ++j) cur[j] = ${SLIDE_S()};
                }
            }
            const real spi = spa[i];
            if (isnan(spi)) {           // a regular window of A
                // rho before the clamp to 1 (taken after the maxima: the same maxima) plus
                // the column's offset (0, or the constant / NaN windows' value: their 1 / std
                // and mean are 0, so the product is 0); maxima by comparison (no NaN here)
                const real mi = mua[i], si = isa[i];
                const real aout = a[max(i - 1, 0)], ain = a[i + m - 1];
                ${V} best = -INFINITY;
                real bs = rb[i - i0];
                int j = c0;
                if (i > i0) {           // the update and the correlation in one pass
                    ${rho_s("cur[c0]", "c0", COLS)}
                    for (j = c0 + 1; j + ${W} <= c1; j += ${W}) {
                        const ${V} v = ${SLIDE_V()};
                        ${ST("v", "cur + j")};
                        ${rho_v("v", COLS)}
                    }
                    for (; j < c1; ++j) {
                        const real v = ${SLIDE_S()};
                        cur[j] = v;
                        ${rho_s("v", "j", COLS)}
                    }
                } else {
                    for (; j + ${W} <= c1; j += ${W}) {
                        ${rho_v(LD("cur + j"), COLS)}
                    }
                    for (; j < c1; ++j) {
                        ${rho_s("cur[j]", "j", COLS)}
                    }
                }
% if W == 1:
                bs = best > bs ? best : bs;
% else:
                bs = ${"fmax(" * W}bs, ${"), ".join(f"best.s{w:x}" for w in range(W))});   // lane by lane (static lanes)
% endif
                rb[i - i0] = bs;
            } else if (spi > (real)0) { // a constant window of A: 1 to constants, 0.5 else
                real bs = rb[i - i0];
                for (int j = c0; j < c1; ++j) {
                    const real s = spb[j];
                    const real r = isnan(s) ? (real)0.5 : (s > (real)0 ? (real)1 : s);
                    bs = fmax(bs, r);
% if COLS:
                    cb[j] = fmax(cb[j], r);
% endif
                }
                rb[i - i0] = bs;
            }                           // NaN / inf in the window of A: nobody's neighbour
            carry = edge[i - i0];
            edge[i - i0] = cur[c1 - 1];
            __global real *t = prev; prev = cur; cur = t;
        }
    }
</%def>

<%def name="rows_loop(COLS)">
    for (int i = i0; i < i1; ++i) rb[i - i0] = -INFINITY;
    for (int c0 = 0; c0 < lB; c0 += ${CHUNK}) {
        const int c1 = min(lB, c0 + ${CHUNK});
${rows_chunk(COLS, False)}
    }
    for (int i = i0; i < i1; ++i) rb[i - i0] = fmin((real)1, rb[i - i0]);
</%def>

${sg.reqd(SUBGROUP)}\
__kernel void abjoin_best(
    __global const real *SA, const int nA, __global const real *muA,
    __global const real *isA, __global const real *spA, const int lA,
    __global const real *SB, const int nB, __global const real *muB,
    __global const real *isB, __global const real *spB, const int lB,
    __global const real *ofB, __global const int *pa, __global const int *pb, const int m,
    const int rows,
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
    __global const real *ofb = ofB + (long)ib * lB;
    __global real *buf0 = scratch + ((long)p * nblk + blk) * (2 * ${CHUNK} + rows);
    __global real *buf1 = buf0 + ${CHUNK};
    __global real *edge = buf1 + ${CHUNK};
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
                           __global real *sp, __global real *of)
{
    const int w = get_global_id(0);
    const int r = get_global_id(1);
    if (w >= l) return;
    const long o = (long)r * l + w;
    if (bad[o]) {
        mu[o] = 0;
        isd[o] = 0;
        sp[o] = -INFINITY;
        of[o] = -INFINITY;
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
        of[o] = (real)0.5;
    } else {
        mu[o] = mean;
        isd[o] = (real)1 / sqrt(ss / (real)m);
        sp[o] = NAN;
        of[o] = 0;
    }
}

// the rows r0 .. r0 + cnt - 1 of pair (ia, ib) for each item (ia, ib, r0, cnt) of ``items``,
// their row maxima to rowbest[offs[item] ..]. A work-item takes RI consecutive items of one
// target series ib (the host pads each target's items to a multiple of RI with empty ones) and
// goes through the columns in chunks: the chunk's first rows of its RI items first (direct dot
// products, CI x LANES columns at a time, so each load of the target feeds RI multiply-adds),
// then each item's next rows by the sliding update, all in the L1 cache.
<% RI, CI = FIRST_ITEMS, FIRST_VECTORS %>
${sg.reqd(SUBGROUP)}\
__kernel void abjoin_runs(
    __global const real *SA, const int nA, __global const real *muA,
    __global const real *isA, __global const real *spA, const int lA,
    __global const real *SB, const int nB, __global const real *muB,
    __global const real *isB, __global const real *spB, const int lB,
    __global const real *ofB, __global const int4 *items, __global const long *offs,
    const int nitems, const int m, __global real *scratch, const int sst,
    __global real *rowbest)
{
    const int it0 = get_global_id(0) * ${RI};
    if (it0 >= nitems) return;
    const int ib = items[it0].y;
    __global const real *b = SB + (long)ib * nB;
    __global const real *mub = muB + (long)ib * lB;
    __global const real *isb = isB + (long)ib * lB;
    __global const real *spb = spB + (long)ib * lB;
    __global const real *ofb = ofB + (long)ib * lB;
    const real minv = (real)1 / (real)m;
    // per item: its two row buffers (the first row in the second) and its chunk edges
    __global real *base = scratch + (long)get_global_id(0) * ${RI} * sst;
% for r in range(RI):
    const int4 w${r} = items[min(it0 + ${r}, nitems - 1)];
    __global const real *a${r} = SA + (long)w${r}.x * nA + w${r}.z;
    __global real *first${r} = base + ${r} * sst + ${CHUNK};
% endfor
    for (int r = 0; r < ${RI} && it0 + r < nitems; ++r) {
        const int4 w = items[it0 + r];
        for (int i = 0; i < w.w; ++i) rowbest[offs[it0 + r] + i] = -INFINITY;
    }
    for (int c0 = 0; c0 < lB; c0 += ${CHUNK}) {
        const int c1 = min(lB, c0 + ${CHUNK});
        int j0 = c0;
        for (; j0 + ${CI * W} <= c1; j0 += ${CI * W}) {
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
%   for c in range(CI):
            ${ST("acc" + str(r) + "_" + str(c), "first" + str(r) + " + j0 - c0 + " + str(c * W))};
%   endfor
% endfor
        }
        for (int j = j0; j < c1; ++j) {  // the chunk's last columns, one at a time
% for r in range(RI):
            {
                real acc = 0;
                for (int t = 0; t < m; ++t) acc = fma(a${r}[t], b[j + t], acc);
                first${r}[j - c0] = acc;
            }
% endfor
        }
        for (int r = 0; r < ${RI} && it0 + r < nitems; ++r) {
            const int4 w = items[it0 + r];
            const int ia = w.x;
            __global const real *a = SA + (long)ia * nA;
            __global const real *mua = muA + (long)ia * lA;
            __global const real *isa = isA + (long)ia * lA;
            __global const real *spa = spA + (long)ia * lA;
            __global real *buf0 = base + r * sst;
            __global real *buf1 = buf0 + ${CHUNK};
            __global real *edge = buf1 + ${CHUNK};
            __global real *rb = rowbest + offs[it0 + r];
            const int i0 = w.z;
            const int i1 = min(lA, i0 + w.w);
${rows_chunk(False, True)}
        }
    }
    for (int r = 0; r < ${RI} && it0 + r < nitems; ++r) {
        const int4 w = items[it0 + r];
        __global real *rb = rowbest + offs[it0 + r];
        for (int i = 0; i < w.w; ++i) rb[i] = fmin((real)1, rb[i]);
    }
}
