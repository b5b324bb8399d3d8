## clts.stumpi with its state on the device (stream.py, device mode): a block of b appended
## points, the new windows' distance profiles D [b][l1] against every window of the extended
## series (mass' kernels), folded into the k-lists.
## stream_windows: the new windows' values [b][m] (mass' queries).
## stream_update: per window of the new state (egress: the first b windows leave), the k best
##   (distance, index), ascending: an old window's list with the new windows as candidates,
##   a new window's list and left neighbour over every window; pairs within the exclusion
##   zone ez, and with egress pairs with the windows that left before the row arrived, are no
##   candidates; non-finite distances neither. The candidates come in increasing index and
##   are inserted after the entries of equal distance: the lists numpy's merge by (distance,
##   index) gives (stream_topk.py).
<%include file="/common/real.cl.mako"/>
% if oreal == "double" and real != "double":
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
% endif

__kernel void stream_windows(__global const real *x, const int start, const int b, const int m,
                             __global real *Q)
{
    const int g = get_global_id(0);
    if (g >= b * m) return;
    const int r = g / m, t = g - r * m;
    Q[g] = x[start + r + t];
}

// (d, i) into the ascending k-list (v, ix) when it beats the last entry (ties: smaller index)
inline void kinsert(${oreal} *v, long *ix, ${oreal} d, long i)
{
    if (!(d < v[${K - 1}] || (d == v[${K - 1}] && i < ix[${K - 1}]))) return;
    int p = ${K - 1};
    while (p > 0 && (v[p - 1] > d || (v[p - 1] == d && ix[p - 1] > i))) {
        v[p] = v[p - 1]; ix[p] = ix[p - 1]; --p;
    }
    v[p] = d; ix[p] = i;
}

__kernel void stream_update(const int b, const int l0, const int l1, const int ez,
                            const int egress, const long a, __global const real *D,
                            __global const ${oreal} *P, __global const long *I,
                            __global const ${oreal} *lP, __global const long *lI,
                            __global ${oreal} *P2, __global long *I2,
                            __global ${oreal} *lP2, __global long *lI2)
{
    const int L = egress ? l1 - b : l1;
    const int w = get_global_id(0);
    if (w >= L) return;
    const int j = w + (egress ? b : 0);
    ${oreal} v[${K}];
    long ix[${K}];
    if (j < l0) {               // an old window: the new windows are its candidates
        for (int k = 0; k < ${K}; ++k) { v[k] = P[(size_t)j * ${K} + k]; ix[k] = I[(size_t)j * ${K} + k]; }
        for (int r = 0; r < b; ++r) {
            if (abs(j - (l0 + r)) <= ez || (egress && j <= r)) continue;
            const ${oreal} d = (${oreal})D[(size_t)r * l1 + j];
            if (isfinite(d)) kinsert(v, ix, d, (long)(l0 + r) + a);
        }
        lP2[w] = lP[j]; lI2[w] = lI[j];
    } else {                    // a new window: every window is a candidate
        const int r = j - l0;
        for (int k = 0; k < ${K}; ++k) { v[k] = INFINITY; ix[k] = -1; }
        ${oreal} lb = INFINITY;
        long li = -1;
        for (int c = 0; c < l1; ++c) {
            if (abs(c - j) <= ez || (egress && c <= r)) continue;
            const ${oreal} d = (${oreal})D[(size_t)r * l1 + c];
            if (!isfinite(d)) continue;
            kinsert(v, ix, d, (long)c + a);
            if (c < j && d < lb) { lb = d; li = (long)c + a; }
        }
        lP2[w] = lb; lI2[w] = li;
    }
    for (int k = 0; k < ${K}; ++k) { P2[(size_t)w * ${K} + k] = v[k]; I2[(size_t)w * ${K} + k] = ix[k]; }
}
