## Per-window statistics of a series, one work-item per window, stable: a compensated (Kahan)
## sum for the mean, then a second pass for the centred sum of squares (never a difference of
## prefix sums of squares), on the series with NaN/inf replaced by 0 (the host flags those
## windows, bit 0); flags constant windows (bit 1). NORMALIZE == 0: ``ss`` = plain sum of squares.
<%include file="/common/real.cl.mako"/>

__kernel void window_stats(__global const real *T, const int n_windows, const int m,
                           __global real *mu, __global real *ss, __global int *flags)
{
    const int i = get_global_id(0);
    if (i >= n_windows) return;
    __global const real *x = T + i;
    // 8 compensated (Kahan) partial sums per pass (pocl vectorises only explicit vector
    // types), combined with a compensated sum; the centred second pass is exact up to rounding
    const real x0 = x[0];
    ${real}8 s8 = 0, c8 = 0;
    int cst = 1;
    int t = 0;
    for (; t + 8 <= m; t += 8) {
        const ${real}8 v = vload8(0, x + t);
        cst &= all(v == (${real}8)x0);
        const ${real}8 y = v - c8;
        const ${real}8 z = s8 + y;
        c8 = (z - s8) - y;
        s8 = z;
    }
    real s = 0, c = 0;
% for l in range(8):
    { const real y = (s8.s${l} - c8.s${l}) - c; const real z = s + y; c = (z - s) - y; s = z; }
% endfor
    for (; t < m; ++t) {
        const real v = x[t];
        cst &= (v == x0);
        const real y = v - c;
        const real z = s + y;
        c = (z - s) - y;
        s = z;
    }
% if NORMALIZE:
    const real mean = s / m;
    const ${real}8 mean8 = (${real}8)mean;
% else:
    const ${real}8 mean8 = (${real}8)0;
% endif
    ${real}8 q8 = 0, d8 = 0;
    t = 0;
    for (; t + 8 <= m; t += 8) {
        const ${real}8 dv = vload8(0, x + t) - mean8;
        const ${real}8 y = dv * dv - d8;
        const ${real}8 z = q8 + y;
        d8 = (z - q8) - y;
        q8 = z;
    }
    real q = 0, cq = 0;
% for l in range(8):
    { const real y = (q8.s${l} - d8.s${l}) - cq; const real z = q + y; cq = (z - q) - y; q = z; }
% endfor
    for (; t < m; ++t) {
        const real dv = x[t] - mean8.s0;
        const real y = dv * dv - cq;
        const real z = q + y;
        cq = (z - q) - y;
        q = z;
    }
    mu[i] = s / m;
% if NORMALIZE:
    ss[i] = cst ? (real)0 : q;
% else:
    ss[i] = q;
% endif
    flags[i] = cst ? 2 : 0;
}
