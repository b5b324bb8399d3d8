## history="ROC": R's history_roc (reverse-ordered Rec-CUSUM test), one pixel per work-item.
## Recursive residuals of the reversed valid history by Givens updates of a QR factor (stable where
## the first K values are nearly collinear, as R's exact refits are); sigma = sd(w); process cumsum(w)/(sigma
## sqrt(n-K)); cut when max |x_i| / (1 + 2 i/m) > b_level, at the first crossing of the alpha 0.05
## boundary (as R does). Writes the index of the first history date used.
## Variables: real, in_type, has_nodata, W (=1), K, N, n, tol.
<%include file="/bfast/common.cl.mako"/>
__kernel void bfast_roc(__global const in_t* restrict y, const int Mp,
                        __global const real* restrict X, const real nodata,
                        const real b_level, const real b_05,
                        __global real* restrict scratch, __global int* restrict hist_start)
{
    const int p = get_global_id(0);
    if (p >= Mp) return;
    __global real* w = scratch + (long)p * ${N};
    // square-root information filter: R upper triangular, z = Q'y; appending a row by Givens
    // rotations leaves the recursive residual in the row's y position
    real Rm[${K}][${K}];
    real z[${K}];
    real xr[${K}];
    for (int a = 0; a < ${K}; ++a) {
        z[a] = 0;
        for (int b = 0; b < ${K}; ++b) Rm[a][b] = 0;
    }
    int c = 0, ok = 1;
    for (int t = ${n} - 1; t >= 0; --t) {
        real yy = load_y(y, (long)t * Mp + p, nodata);
        if (isnan(yy)) continue;
        __global const real* xt = X + t * ${K};
        for (int a = 0; a < ${K}; ++a) xr[a] = xt[a];
        for (int k = 0; k < ${K}; ++k) {
            const real rr = hypot(Rm[k][k], xr[k]);
            if (rr == (real)0) continue;
            const real cc = Rm[k][k] / rr, ss = xr[k] / rr;
            for (int b = k; b < ${K}; ++b) {
                const real rk = Rm[k][b];
                Rm[k][b] = cc * rk + ss * xr[b];
                xr[b] = -ss * rk + cc * xr[b];
            }
            const real zk = z[k];
            z[k] = cc * zk + ss * yy;
            yy = -ss * zk + cc * yy;
        }
        if (c >= ${K}) w[c - ${K}] = yy;
        ++c;
        if (c == ${K}) {        // the first K values must determine the fit (else no ROC cut)
            real dmax = 0, dmin = REAL_MAX;
            for (int a = 0; a < ${K}; ++a) { dmax = fmax(dmax, fabs(Rm[a][a])); dmin = fmin(dmin, fabs(Rm[a][a])); }
            if (!(dmin > (real)${tol} * dmax)) { ok = 0; break; }
        }
    }
    const int m = c - ${K};          // number of recursive residuals
    int s0 = 0;
    if (ok && m >= 2) {
        real mean = 0;
        for (int i = 0; i < m; ++i) mean += w[i];
        mean /= (real)m;
        real ss = 0;
        for (int i = 0; i < m; ++i) ss += (w[i] - mean) * (w[i] - mean);
        const real sigma = sqrt(ss / (real)(m - 1));
        if (sigma > 0) {
            const real norm = (real)1 / (sigma * sqrt((real)m));
            real cs = 0;
            int cut = 0, first = 0;
            for (int i = 1; i <= m; ++i) {
                cs += w[i - 1];
                const real x = fabs(cs * norm);
                const real shape = (real)1 + (real)2 * (real)i / (real)m;
                if (x > b_level * shape) cut = 1;
                if (!first && x > b_05 * shape) first = i;
            }
            if (cut && first) s0 = m + 1 - first;   // 0-based, among the valid history values
        }
    }
    int start = 0, cnt = 0;
    for (int t = 0; t < ${n}; ++t) {
        const real yv = load_y(y, (long)t * Mp + p, nodata);
        if (isnan(yv)) continue;
        if (cnt == s0) { start = t; break; }
        ++cnt;
    }
    hist_start[p] = start;
}
