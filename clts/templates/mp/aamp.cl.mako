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
