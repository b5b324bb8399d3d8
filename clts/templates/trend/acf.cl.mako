## The autocorrelation corrections of the Mann-Kendall variance, one work-item per series, on
## the series' valid values in order (compacted on the host, detrended by Sen's slope):
## Hamed and Rao (1998): the ranks' autocorrelations r_k outside +-z / sqrt(n), weighted by
## (n - k)(n - k - 1)(n - k - 2); Yue and Wang (2004): the values' r_k weighted by 1 - k / n.
## Writes the factor n / n* that multiplies Var(S) (NaN with fewer than 3 values).
<%include file="/common/real.cl.mako"/>

kernel void mk_acf(global const real* x, global const int* nvalid, const int N, const int B,
                   const int lag, const real zq, global real* work, global real* factor) {
    const int b = get_global_id(0);
    if (b >= B) return;
    const int n = nvalid[b];
    if (n < 3) {
        factor[b] = NAN;
        return;
    }
    global const real* xr = x + (long)b * N;
    global real* w = work + (long)b * N;
% if ranks:
    // average ranks with ties: (n + 1 + sum_i sign(x_j - x_i)) / 2
    for (int j = 0; j < n; ++j) {
        const real xj = xr[j];
        int s = 0;
        for (int i = 0; i < n; ++i) s += (xj > xr[i]) - (xj < xr[i]);
        w[j] = (real)(n + 1 + s) * (real)0.5;
    }
% else:
    for (int j = 0; j < n; ++j) w[j] = xr[j];
% endif
    real mean = 0;
    for (int j = 0; j < n; ++j) mean += w[j];
    mean /= (real)n;
    real c0 = 0;
    for (int j = 0; j < n; ++j) {
        w[j] -= mean;
        c0 += w[j] * w[j];
    }
    c0 /= (real)n;
    const int L = (lag > 0 && lag + 1 < n) ? lag + 1 : n;
    real sni = 0;
% if ranks:
    const real bound = zq / sqrt((real)n);
% endif
    for (int k = 1; k < L; ++k) {
        real ck = 0;
        for (int t = 0; t + k < n; ++t) ck += w[t] * w[t + k];
        const real r = (ck / (real)n) / c0;
% if ranks:
        if (!(r <= bound && r >= -bound))
            sni += (real)((long)(n - k) * (n - k - 1) * (n - k - 2)) * r;
% else:
        sni += ((real)1 - (real)k / (real)n) * r;
% endif
    }
% if ranks:
    factor[b] = 1 + ((real)2 / (real)((long)n * (n - 1) * (n - 2))) * sni;
% else:
    factor[b] = 1 + 2 * sni;
% endif
}
