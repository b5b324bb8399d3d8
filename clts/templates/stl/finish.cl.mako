## The end of an STL call whose results stay on the device (what the host does for numpy
## results): the failed-series mask from the cycle-subseries' valid counts, the weights of a
## non-robust fit, failed series set NaN (weights 0), R's periodic seasonal, the remainder; and
## MSTL's steps between its STL rounds.
<%include file="/common/real.cl.mako"/>
#pragma OPENCL FP_CONTRACT OFF

// failed[b0 + b]: a cycle-subseries without a valid value, or fewer valid values than two
// periods. counts: the seasonal NNS statistics (two ints per cycle-subseries, the count first),
// series b's at row b * bstride * P (bstride 0: one set for every series, complete data)
kernel void stl_failed(global const int* counts, const int P, const int B, const int bstride,
                       const int b0, global uchar* failed) {
    const int b = get_global_id(0);
    if (b >= B) return;
    global const int* c = counts + 2 * (long)b * bstride * P;
    int total = 0, empty = 0;
    for (int j = 0; j < P; ++j) {
        total += c[2 * j];
        empty |= c[2 * j] == 0;
    }
    failed[b0 + b] = empty || total < 2 * P;
}

// per value of [B, N]: failed series NaN (weights 0), the weights of a non-robust fit (1 where
// y is valid), and the remainder y - seasonal - trend unless the periodic step computes it
kernel void stl_finish(global const real* y, global real* s, global real* t, global real* w,
                       global real* r, global const uchar* failed, const int N, const long BN,
                       const int robust, const int resid) {
    const long i = get_global_id(0);
    if (i >= BN) return;
    const real yi = y[i];
    if (failed[i / N]) {
        s[i] = REAL_NAN;
        t[i] = REAL_NAN;
        w[i] = 0;
    } else if (!robust) {
        w[i] = isnan(yi) ? (real)0 : (real)1;
    }
    if (resid) {
        const real d = yi - s[i];
        r[i] = d - t[i];
    }
}

// R's periodic seasonal: each cycle position j of series b replaced by its mean; then the
// remainder there. One work-item per (series, position).
kernel void stl_periodic(global const real* y, global real* s, global const real* t,
                         global real* r, const int N, const int P, const int B) {
    const long g = get_global_id(0);
    if (g >= (long)B * P) return;
    const long row = (g / P) * N;
    const int j = g % P;
    real sum = 0;
    int n = 0;
    for (int i = j; i < N; i += P, ++n) sum += s[row + i];
    const real mean = sum / (real)n;
    for (int i = j; i < N; i += P) {
        s[row + i] = mean;
        const real d = y[row + i] - mean;
        r[row + i] = d - t[row + i];
    }
}

// MSTL: x[b, :] = fill where failed[b]
kernel void stl_fill_failed(global real* x, global const uchar* failed, const int N,
                            const long BN, const real fill) {
    const long i = get_global_id(0);
    if (i < BN && failed[i / N]) x[i] = fill;
}

// MSTL: failed |= more
kernel void stl_or(global uchar* failed, global const uchar* more, const int B) {
    const int b = get_global_id(0);
    if (b < B && more[b]) failed[b] = 1;
}

// MSTL's element-wise steps between rounds (numpy's operations, value by value)
kernel void stl_add(global real* x, global const real* s, const long n) {
    const long i = get_global_id(0);
    if (i < n) x[i] += s[i];
}

kernel void stl_sub(global real* x, global const real* s, const long n) {
    const long i = get_global_id(0);
    if (i < n) x[i] -= s[i];
}

kernel void stl_diff(global const real* a, global const real* b, global real* out,
                     const long n) {
    const long i = get_global_id(0);
    if (i < n) out[i] = a[i] - b[i];
}

// MSTL's Box-Cox transform with a given lambda (scipy.special.boxcox's formula, numpy's
// operations in order): expm1(lambda log y) / lambda; missing and non-positive values NaN
// (numpy input refuses the latter: device data are not scanned)
kernel void stl_boxcox(global const real* y, global real* out, const long n, const real lam) {
    const long i = get_global_id(0);
    if (i >= n) return;
    const real v = y[i];
    out[i] = v > 0 ? expm1(lam * log(v)) / lam : REAL_NAN;
}
