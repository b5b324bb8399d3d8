<%namespace name="sg" file="/common/subgroup.cl.mako"/>\
## clts.aamp with p != 2 on device arrays: the windows of a block of rows gathered as queries for
## the distance-profile kernel (mass.cl.mako), then each row of the block's distances folded
## into its k best (ascending, ties to the smaller index), and for a self-join the nearest
## neighbour before and after the row, past the exclusion zone: the host path's selection
## (clts/mp/aamp.py, _topk_rows), one work-item per row; with DIM, mstump's maamp_rows.
<%! from clts.mp.network import batcher %>\
<%include file="/common/real.cl.mako"/>
<%
    oreal = "double" if out_double else "float"
    DIM = context.get("DIM", 0)     # maamp_rows' dimensions (mstump's programs only)
    NINC = context.get("NINC", 0)
    DISCORDS = context.get("DISCORDS", 0)
    SG = context.get("SG", 0)       # its required sub-group size (Intel GPUs; 0: IGC's)
%>

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

% if DIM:
<%
    # the free dimensions' sorting network (Batcher's, clts/mp/network.py): registers, not a
    # per-work-item array the sort indexes by the data
    NET = [(NINC + a, NINC + b) for a, b in batcher(DIM - NINC)]
    LO, HI = ("fmax", "fmin") if DISCORDS else ("fmin", "fmax")
%>\
// clts.mstump with normalize=False and p != 2 (stumpy.maamp's conventions), DIM dimensions
// (the NINC forced ones first): rows s0 + r of P / I [DIM, lP] from the distance profiles X
// [DIM, nr, l] of those windows in every dimension. For each candidate j outside the exclusion
// zone: the forced distances, the others sorted (descending for discords; distances are never
// NaN: non-finite windows give inf), their running sums / (k + 1); per k the smallest over j
// (the smaller j on ties): the host path's sort, cumsum and argmin (clts/mp/mstump.py,
// _profile_rows), in the same order.
${sg.reqd(SG)}\
kernel void maamp_rows(global const real* X, const int nr, const int l, const int s0,
                       const int ez, const int lP, global ${oreal}* P, global long* I) {
    const int r = get_global_id(0);
    if (r >= nr) return;
    const long s = (long)s0 + r;
% for k in range(DIM):
    ${oreal} best${k} = INFINITY;
    long bj${k} = -1;
% endfor
    for (int j = 0; j < l; ++j) {
        if (abs((long)j - s) <= ez) continue;       // inf there: never the smallest
% for q in range(DIM):
        ${oreal} x${q} = (${oreal})X[((long)${q} * nr + r) * l + j];
% endfor
% for a, b in NET:
        { const ${oreal} u = ${LO}(x${a}, x${b}); x${b} = ${HI}(x${a}, x${b}); x${a} = u; }
% endfor
        ${oreal} c = x0;
% for k in range(DIM):
%   if k:
        c = c + x${k};
%   endif
        {
            const ${oreal} mean = c / (${oreal})${k + 1};
            if (mean < best${k}) {
                best${k} = mean;
                bj${k} = j;
            }
        }
% endfor
    }
% for k in range(DIM):
    P[${k}L * lP + s] = best${k};
    I[${k}L * lP + s] = bj${k};
% endfor
}
% endif
