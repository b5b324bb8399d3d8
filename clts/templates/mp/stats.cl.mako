## Per-window statistics of a series, one work-item per window, stable: a compensated (Kahan)
## sum for the mean, then a second pass for the centred sum of squares (never a difference of
## prefix sums of squares). Also flags windows with NaN/inf (bit 0) and constant ones (bit 1).
## For NORMALIZE == 0, ``ss`` is the plain sum of squares (compensated).
<%include file="/common/real.cl.mako"/>

__kernel void window_stats(__global const real *T, const int n_windows, const int m,
                           __global real *mu, __global real *ss, __global int *flags)
{
    const int i = get_global_id(0);
    if (i >= n_windows) return;
    __global const real *x = T + i;
    real s = 0, c = 0;
    int bad = 0, cst = 1;
    const real x0 = x[0];
    for (int t = 0; t < m; ++t) {
        const real v = x[t];
        bad |= !isfinite(v);
        cst &= (v == x0);
        const real y = v - c;
        const real z = s + y;
        c = (z - s) - y;
        s = z;
    }
    if (bad) {
        mu[i] = 0; ss[i] = 0; flags[i] = 1;
        return;
    }
% if NORMALIZE:
    const real mean = s / m;
    real q = 0, cq = 0;
    for (int t = 0; t < m; ++t) {
        const real d = x[t] - mean;
        const real y = d * d - cq;
        const real z = q + y;
        cq = (z - q) - y;
        q = z;
    }
    mu[i] = mean;
    ss[i] = cst ? (real)0 : q;
% else:
    real q = 0, cq = 0;
    for (int t = 0; t < m; ++t) {
        const real y = x[t] * x[t] - cq;
        const real z = q + y;
        cq = (z - q) - y;
        q = z;
    }
    mu[i] = s / m;
    ss[i] = q;
% endif
    flags[i] = cst ? 2 : 0;
}
