## clts.aamp with p != 2 on device arrays: the windows of a block of rows gathered as queries for
## the distance-profile kernel (mass.cl.mako), then each row of the block's distances folded
## into its k best (ascending, ties to the smaller index), and for a self-join the nearest
## neighbour before and after the row, past the exclusion zone: the host path's selection
## (clts/mp/aamp.py, _topk_rows), one work-item per row.
<%include file="/common/real.cl.mako"/>
<% oreal = "double" if out_double else "float" %>

// Q[r, t] = A[a + r + t]: the windows of rows a .. a + nr - 1
kernel void aamp_windows(global const real* A, const int a, const int nr, const int m,
                         global real* Q) {
    const long g = get_global_id(0);
    if (g >= (long)nr * m) return;
    const int r = g / m, t = g % m;
    Q[g] = A[(long)a + r + t];
}

// rows a + r of P / I [l, k] (and LP / LI / RP / RI [l] of a self-join) from D [nr, lB]
kernel void aamp_topk(global const real* D, const int nr, const int lB, const int a,
                      const int self_join, const int ez, const int k,
                      global ${oreal}* P, global long* I, global ${oreal}* LP,
                      global long* LI, global ${oreal}* RP, global long* RI) {
    const int r = get_global_id(0);
    if (r >= nr) return;
    const long i = (long)a + r;
    global ${oreal}* p = P + i * k;
    global long* ix = I + i * k;
    for (int t = 0; t < k; ++t) {
        p[t] = INFINITY;
        ix[t] = -1;
    }
    ${oreal} lb = INFINITY, rb = INFINITY, last = INFINITY;
    long lj = -1, rj = -1;
    global const real* d = D + (long)r * lB;
    for (int j = 0; j < lB; ++j) {
        const ${oreal} v = (${oreal})d[j];
        if (self_join) {
            if (abs((long)j - i) <= ez) continue;
            if (j < i) {
                if (v < lb) { lb = v; lj = j; }
            } else if (v < rb) { rb = v; rj = j; }
        }
        if (!(v < last)) continue;      // inf and NaN are never neighbours
        int t = k - 1;
        while (t > 0 && p[t - 1] > v) {
            p[t] = p[t - 1];
            ix[t] = ix[t - 1];
            --t;
        }
        p[t] = v;
        ix[t] = j;
        last = p[k - 1];
    }
    if (self_join) {
        LP[i] = lb;
        LI[i] = lj;
        RP[i] = rb;
        RI[i] = rj;
    }
}

// clts.mstump with normalize=False and p != 2 (stumpy.maamp's conventions): rows s0 + r of
// P / I [d, lP] from the distance profiles X [d, nr, l] of those windows in every dimension
// (dimensions in the call's order: the ninc forced ones first). For each candidate j outside
// the exclusion zone: the forced distances, the others sorted (descending for discords), their
// running sums / (k + 1); per k the smallest over j (the smaller j on ties): the host path's
// sort, cumsum and argmin (clts/mp/mstump.py, _profile_rows), in the same order.
kernel void maamp_rows(global const real* X, const int nr, const int l, const int s0,
                       const int d, const int ninc, const int discords, const int ez,
                       const int lP, global ${oreal}* P, global long* I) {
    const int r = get_global_id(0);
    if (r >= nr) return;
    const long s = (long)s0 + r;
    ${oreal} best[${max_dim}], x[${max_dim}];
    long bj[${max_dim}];
    for (int k = 0; k < d; ++k) {
        best[k] = INFINITY;
        bj[k] = -1;
    }
    for (int j = 0; j < l; ++j) {
        if (abs((long)j - s) <= ez) continue;       // inf there: never the smallest
        for (int q = 0; q < d; ++q) x[q] = (${oreal})X[((long)q * nr + r) * l + j];
        for (int a = ninc + 1; a < d; ++a) {        // insertion sort of the free dimensions
            const ${oreal} v = x[a];
            int b = a;
            while (b > ninc && (discords ? x[b - 1] < v : x[b - 1] > v)) {
                x[b] = x[b - 1];
                --b;
            }
            x[b] = v;
        }
        ${oreal} c = 0;
        for (int k = 0; k < d; ++k) {
            c = k ? c + x[k] : x[0];
            const ${oreal} mean = c / (${oreal})(k + 1);
            if (mean < best[k]) {
                best[k] = mean;
                bj[k] = j;
            }
        }
    }
    for (int k = 0; k < d; ++k) {
        P[(long)k * lP + s] = best[k];
        I[(long)k * lP + s] = bj[k];
    }
}
