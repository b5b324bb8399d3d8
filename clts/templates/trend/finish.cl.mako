## The host part of the trend test (numpy results) as kernels, for results that stay on the
## device: the autocorrelation input of mk_acf (each series' valid values in order, detrended
## by Sen's slope) and, per series, the statistics from the pair kernel's counts and slopes
## (pymannkendall's formulas, in `stat`: double where the device has it). Every expression is
## numpy's, operation by operation (no contraction into fused multiply-adds), so the values
## are the numpy path's bits except p, whose normal tail comes from the device's erf / erfc.
<%include file="/common/real.cl.mako"/>
% if stat == "double" and real != "double":
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
% endif
#pragma OPENCL FP_CONTRACT OFF
typedef ${stat} stat;
#define SQRT1_2 ${"M_SQRT1_2" if stat == "double" else "M_SQRT1_2_F"}

// numpy's nan_to_num: NaN 0, +-inf the largest finite value of its sign
inline real finite_or_zero(const real v) {
    return isnan(v) ? (real)0 : (isinf(v) ? copysign(REAL_MAX, v) : v);
}

// xd[b, k] = k-th valid value - (k + 1) * slope (0 past the valid values), nvalid[b]
kernel void mk_detrend(global const real* y, global const real* sen, const int N, const int B,
                       global real* xd, global int* nvalid) {
    const int b = get_global_id(0);
    if (b >= B) return;
    const real slope = sen[3 * (long)b];
    global const real* row = y + (long)b * N;
    global real* out = xd + (long)b * N;
    int k = 0;
    for (int i = 0; i < N; ++i) {
        const real v = row[i];
        if (!isnan(v)) {
            const real m = (real)(k + 1) * slope;
            out[k] = finite_or_zero(v - m);
            ++k;
        }
    }
    nvalid[b] = k;
    for (int i = k; i < N; ++i) out[i] = 0;
}

// the k-th smallest of a[0 .. n - 1] (N. Wirth's selection; reorders a)
inline real kth(global real* a, const int n, const int k) {
    int l = 0, m = n - 1;
    while (l < m) {
        const real x = a[k];
        int i = l, j = m;
        do {
            while (a[i] < x) ++i;
            while (x < a[j]) --j;
            if (i <= j) {
                const real t = a[i];
                a[i] = a[j];
                a[j] = t;
                ++i;
                --j;
            }
        } while (i <= j);
        if (j < k) l = i;
        if (k < i) m = j;
    }
    return a[k];
}

// one series per work-item: every field of the result at b0 + b. stats: S, the two variance
// sums, the pair count, the valid count; sen: slope, low, high; factor: the variance
// correction (corrected variants); zq: the normal quantile of alpha; scratch: N per series
kernel void mk_finish(global const real* y, global const long* stats, global const real* sen,
                      global const real* factor, const int corrected, const int N, const int B,
                      const int P, const stat zq, const int b0, global real* scratch,
                      global char* trend, global uchar* h, global stat* p, global stat* z,
                      global stat* tau, global stat* s, global stat* var_s, global stat* slope,
                      global stat* intercept, global stat* slope_low, global stat* slope_high,
                      global long* n, global char* status) {
    const int b = get_global_id(0);
    if (b >= B) return;
    global const long* st = stats + 5 * (long)b;
    const long nv = st[4];
    const int o = b0 + b;
    n[o] = nv;
    if (nv < ${min_valid}) {
        status[o] = ${too_few};
        trend[o] = 0;
        h[o] = 0;
        p[o] = z[o] = tau[o] = s[o] = var_s[o] = slope[o] = intercept[o] = NAN;
        slope_low[o] = slope_high[o] = NAN;
        return;
    }
    status[o] = ${ok};
    const stat S = (stat)st[0];
    const stat var0 = (stat)(st[1] - st[2]) / (stat)18;
    const stat var = corrected ? var0 * (stat)factor[b] : var0;
    const stat sd = sqrt(var);
    const stat zz = S > 0 ? (S - 1) / sd : (S < 0 ? (S + 1) / sd : (stat)0);
    // 2 (1 - Phi(|z|)), Phi as scipy's ndtr
    const stat x = fabs(zz) * (stat)SQRT1_2;
    const stat c = x < (stat)SQRT1_2 ? (stat)0.5 + (stat)0.5 * erf(x)
                                       : (stat)1 - (stat)0.5 * erfc(x);
    const int sig = fabs(zz) > zq;
    const stat sl = (stat)sen[3 * (long)b];
    // the median of the valid values and of their positions
    global const real* row = y + (long)b * N;
    global real* a = scratch + (long)b * N;
    int k = 0;
    for (int i = 0; i < N; ++i)
        if (!isnan(row[i])) a[k++] = row[i];
    const int lo = (k - 1) / 2, hi = k / 2;
    const real xlo = kth(a, k, lo);
    real xhi = xlo;
    if (hi != lo) {
        xhi = a[hi];
        for (int i = hi + 1; i < k; ++i) xhi = a[i] < xhi ? a[i] : xhi;
    }
    long tlo = 0, thi = 0;
    for (int i = 0, j = 0; i < N; ++i) {
        if (isnan(row[i])) continue;
        if (j == lo) tlo = i;
        if (j == hi) thi = i;
        ++j;
    }
    const stat med_x = ((stat)xlo + (stat)xhi) / (stat)2;
    const stat med_t = (stat)(tlo + thi) / (stat)2;
    const stat step = med_t / (stat)P;
    const stat off = step * sl;
    z[o] = zz;
    p[o] = (stat)2 * ((stat)1 - c);
    h[o] = sig;
    trend[o] = sig ? (zz > 0 ? 1 : (zz < 0 ? -1 : 0)) : 0;
    tau[o] = S / ((stat)0.5 * (stat)st[3]);
    s[o] = S;
    var_s[o] = var;
    slope[o] = sl;
    intercept[o] = med_x - off;
    slope_low[o] = (stat)sen[3 * (long)b + 1];
    slope_high[o] = (stat)sen[3 * (long)b + 2];
}
