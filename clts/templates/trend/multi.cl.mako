## The transform and multi-variable variants of the trend test on device arrays
## (clts/trend/multi_device.py): the layouts the pair kernel and mk_cross read, built on the
## device (the variables interleaved time-major, one variable's rows, the complete time steps
## compacted), the pre-whitening of each series, and the statistics the host forms for numpy
## input (clts/trend/multi.py), operation by operation in `stat` (double where the device has
## it): Gamma from mk_cross' integers, Var(S) summed in numpy's order (its pairwise sum), rho,
## Z, the significance, and the fields of series with too few values.
<%include file="/common/real.cl.mako"/>
% if stat == "double" and real != "double":
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
% endif
#pragma OPENCL FP_CONTRACT OFF
typedef ${stat} stat;
#define SQRT1_2 ${"M_SQRT1_2" if stat == "double" else "M_SQRT1_2_F"}
#define STAT_NAN ((stat)NAN)

// a + b, rounded, in the order written: Intel's CPU compiler reassociates the additions of a
// loop-carried sum (vectorising it) unless the partial sum goes through a volatile, which the
// GPUs' compilers keep on the stack; their additions stay in order without it (no fast-math)
inline stat add(const stat a, const stat b) {
% if cpu_sums:
    volatile stat t = a + b;
    return t;
% else:
    return a + b;
% endif
}

// out[b, t * C + c] = y[b, c, t]: the variables interleaved time-major (a season a variable)
kernel void mk_interleave(global const real* y, const int C, const int N, const long BCN,
                          global real* out) {
    const long g = get_global_id(0);
    if (g >= BCN) return;
    const long CN = (long)C * N;
    const long b = g / CN;
    const int c = (int)((g / N) % C), t = (int)(g % N);
    out[b * CN + (long)t * C + c] = y[g];
}

// out[b, t] = y[b * stride + t]: one variable's rows
kernel void mk_take(global const real* y, const long stride, const int N, const long BN,
                    global real* out) {
    const long g = get_global_id(0);
    if (g >= BN) return;
    out[g] = y[(g / N) * stride + g % N];
}

// The time steps of series b where no variable is missing, compacted in order:
// xc[b, c, j] for j < nvalid[b]. Variables: P == 0, y[b, c, t] (C variables, Ns = N steps);
// P > 0, the seasons of y[b, :] (C = P, Ns cycles; y[b, t P + c], NaN past N).
kernel void mk_complete(global const real* y, const int N, const int C, const int Ns,
                        const int P, const int B, global real* xc, global int* nvalid) {
    const int b = get_global_id(0);
    if (b >= B) return;
    global real* out = xc + (long)b * C * Ns;
    int j = 0;
    for (int t = 0; t < Ns; ++t) {
        int ok = 1;
        for (int c = 0; c < C && ok; ++c) {
            const long i = P ? (long)t * P + c : (long)c * N + t;
            ok = (!P || i < N) && !isnan(y[(long)b * (P ? N : (long)C * N) + i]);
        }
        if (!ok) continue;
        for (int c = 0; c < C; ++c) {
            const long i = P ? (long)t * P + c : (long)c * N + t;
            out[(long)c * Ns + j] = y[(long)b * (P ? N : (long)C * N) + i];
        }
        ++j;
    }
    nvalid[b] = j;
}

// numpy's pairwise sum of a[0], a[s], .., a[(n - 1) s], n <= 128: eight accumulators, then
// the rest
inline stat pairwise_block(global const stat* a, const long s, const int n) {
    if (n < 8) {
        stat res = -0.0;
        for (int i = 0; i < n; ++i) res = add(res, a[i * s]);
        return res;
    }
    stat r0 = a[0], r1 = a[s], r2 = a[2 * s], r3 = a[3 * s], r4 = a[4 * s], r5 = a[5 * s],
         r6 = a[6 * s], r7 = a[7 * s];
    int i = 8;
    for (; i < n - (n % 8); i += 8) {
        global const stat* b = a + i * s;
        r0 = add(r0, b[0]); r1 = add(r1, b[s]); r2 = add(r2, b[2 * s]); r3 = add(r3, b[3 * s]);
        r4 = add(r4, b[4 * s]); r5 = add(r5, b[5 * s]); r6 = add(r6, b[6 * s]);
        r7 = add(r7, b[7 * s]);
    }
    stat res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
    for (; i < n; ++i) res = add(res, a[i * s]);
    return res;
}

// the halves numpy splits a block of len > 128 values into: the first h, h = len / 2 rounded
// down to a multiple of 8, then the rest
inline int left_half(const int len) {
    const int h = len / 2;
    return h - h % 8;
}

// numpy's add.reduce of a[0], a[s], .., a[(n - 1) s]: its recursion (blocks of more than 128
// values split in halves, left + right) walked leaf by leaf, without arrays in private memory.
// Bit k of path says the block at depth k + 1 is its parent's right half; each new left-most
// leaf is found again from the top. A finished left half waits in pend[(depth - 1) ps] while its
// right half is summed: depth <= sum_depth(n) of clts/trend/multi_device.py.
inline stat numpy_sum(global const stat* a, const long s, const int n, global stat* pend,
                      const long ps) {
    uint path = 0;
    int d = 0, o = 0, len = n;
    for (;;) {
        while (len > 128) {             // down the left halves to a leaf
            len = left_half(len);
            ++d;
        }
        stat ret = pairwise_block(a + (long)o * s, s, len);
        while (d > 0 && (path >> (d - 1)) & 1u) {       // a right half: left + right
            --d;
            path &= ~(1u << d);
            ret = pend[d * ps] + ret;
        }
        if (d == 0) return ret;
        pend[(d - 1) * ps] = ret;       // a left half: its right half next
        path |= 1u << (d - 1);
        o = 0;
        len = n;
        for (int k = 0; k < d; ++k) {
            const int h = left_half(len);
            if ((path >> k) & 1u) {
                o += h;
                len -= h;
            } else {
                len = h;
            }
        }
    }
}

// 2 (1 - Phi(|z|)), Phi as scipy's ndtr (as mk_finish)
static inline stat two_sided(const stat zz) {
    const stat x = fabs(zz) * (stat)SQRT1_2;
    const stat c = x < (stat)SQRT1_2 ? (stat)0.5 + (stat)0.5 * erf(x)
                                       : (stat)1 - (stat)0.5 * erfc(x);
    return (stat)2 * ((stat)1 - c);
}

// the fields of series b past the statistics: status from n, every statistic NaN (h 0, trend
// 0) where n < MIN_VALID
inline void finish_status(const int b, const long n, global char* trend, global uchar* h,
                          global stat* p, global stat* z, global stat* tau, global stat* s,
                          global stat* var_s, global stat* slope, global stat* intercept,
                          global stat* slope_low, global stat* slope_high,
                          global char* status) {
    if (n >= ${min_valid}) {
        status[b] = ${ok};
        return;
    }
    status[b] = ${too_few};
    trend[b] = 0;
    h[b] = 0;
    p[b] = z[b] = tau[b] = s[b] = var_s[b] = STAT_NAN;
    slope[b] = intercept[b] = slope_low[b] = slope_high[b] = STAT_NAN;
}

// Libiseller and Grimvall's statistics from mk_cross' K, RR ([B, C, C], i <= j) and S
// ([B, C]) over nvalid complete steps: partial (variable 0 given variable 1) or the
// correlated multivariate / seasonal test; the fields of the pair kernel's test (Sen's slope)
// updated in place. gam: scratch of [C * C + sum_depth(C * C), B] values.
kernel void mk_correlated(global const long* K, global const long* RR, global const long* S,
                          global const int* nvalid, const int C, const int B,
                          const int partial, const stat zq, global stat* gam,
                          global char* trend, global uchar* h, global stat* p, global stat* z,
                          global stat* tau, global stat* s, global stat* var_s,
                          global stat* slope, global stat* intercept, global stat* slope_low,
                          global stat* slope_high, global long* n, global char* status) {
    const int b = get_global_id(0);
    if (b >= B) return;
    const long CC = (long)C * C;
    const long nv = nvalid[b];
    const long base = nv * (nv + 1) * (nv + 1);
    global const long* k = K + b * CC;
    global const long* rr = RR + b * CC;
    stat ss, var, ta;
    if (partial) {
        const long v = nv * (nv - 1) * (2 * nv + 5);
        const stat g01 = (stat)(k[1] + rr[1] - base) / (stat)3;
        const stat rho = g01 / ((stat)v / (stat)18);
        const stat sx = (stat)S[b * C], sy = (stat)S[b * C + 1];
        ss = sx - rho * sy;
        var = (((stat)1 - rho * rho) * (stat)v) / (stat)18;
        ta = sx / (((stat)0.5 * (stat)nv) * (stat)(nv - 1));
    } else {
        // Gamma [C, C] in numpy's order (row by row; below the diagonal from above), summed
        // as numpy sums it; gam: [C * C + depth, B], the entries then the pending sums
        global stat* gs = gam + b;
        for (int i = 0; i < C; ++i)
            for (int j = 0; j < C; ++j) {
                const long ij = i <= j ? (long)i * C + j : (long)j * C + i;
                gs[((long)i * C + j) * B] = (stat)(k[ij] + rr[ij] - base) / (stat)3;
            }
        var = numpy_sum(gs, B, (int)CC, gs + CC * B, B);
        long st = 0;
        for (int c = 0; c < C; ++c) st += S[b * C + c];      // integers: any order
        ss = (stat)st;
        ta = ss / ((stat)C * (((stat)0.5 * (stat)nv) * (stat)(nv - 1)));
    }
    const stat zz = ss / sqrt(var);
    const int sig = fabs(zz) > zq;
    n[b] = nv;
    s[b] = ss;
    var_s[b] = var;
    tau[b] = ta;
    z[b] = zz;
    p[b] = two_sided(zz);
    h[b] = sig;
    trend[b] = sig ? (zz > 0 ? 1 : (zz < 0 ? -1 : 0)) : 0;
    finish_status(b, nv, trend, h, p, z, tau, s, var_s, slope, intercept, slope_low,
                  slope_high, status);
}

// The pre-whitened series (Yue and Wang 2002) of the rows of y [B, N]: the valid values x in
// order (trend-free: detrended by (i + 1) slope first), x_(i+1) - r1 x_i with r1 their lag-1
// autocorrelation (trend-free: i slope added back), into w [B, N1] (NaN past them), in real;
// flat[b]: r1 undefined (constant valid values). xs: scratch of [N + sum_depth(N), B] values
// (the valid values, then numpy_sum's pending sums; adjacent series adjacent).
kernel void mk_whiten(global const real* y, const int N, const int N1, const int B,
                      global const stat* slope, const int trend_free, global stat* xs,
                      global real* w, global uchar* flat) {
    const int b = get_global_id(0);
    if (b >= B) return;
    global const real* row = y + (long)b * N;
    global stat* x = xs + b;
    global real* out = w + (long)b * N1;
    const stat sl = trend_free ? slope[b] : (stat)0;
    int n = 0;
    for (int i = 0; i < N; ++i) {
        const real v = row[i];
        if (isnan(v)) continue;
        x[(long)n * B] = trend_free ? (stat)v - (stat)(n + 1) * sl : (stat)v;
        ++n;
    }
    for (int i = 0; i < N1; ++i) out[i] = REAL_NAN;
    flat[b] = 0;
    if (n < 2) return;
    // the mean as numpy's (pairwise sum / n), then c0 and c1
    const stat sum = numpy_sum(x, B, n, x + (long)N * B, B);
    const stat mean = sum / (stat)n;
    stat c0 = 0, c1 = 0;
    for (int i = 0; i < n; ++i) {
        const stat d = x[(long)i * B] - mean;
        c0 = add(c0, d * d);
        if (i) c1 = add(c1, d * (x[(long)(i - 1) * B] - mean));
    }
    const stat r1 = (c1 / (stat)n) / (c0 / (stat)n);
    flat[b] = isnan(r1);
    for (int i = 0; i + 1 < n; ++i) {
        stat v = x[(long)(i + 1) * B] - x[(long)i * B] * r1;
        if (trend_free) v = v + (stat)(i + 1) * sl;
        out[i] = (real)v;
    }
}

// The pre-whitening tests' fields: the whitened series' test (in place) with Sen's slope of
// the series (sl*, sn: the pair kernel's fields of the series as given); flat series (constant
// valid values: whitened values all NaN, pymannkendall's n - 1 untied values of S = 0)
kernel void mk_prewhite(const int B, global const uchar* flat, global const stat* sslope,
                        global const stat* sintercept, global const stat* slow,
                        global const stat* shigh, global const long* sn,
                        global char* trend, global uchar* h, global stat* p, global stat* z,
                        global stat* tau, global stat* s, global stat* var_s,
                        global stat* slope, global stat* intercept, global stat* slope_low,
                        global stat* slope_high, global long* n, global char* status) {
    const int b = get_global_id(0);
    if (b >= B) return;
    slope[b] = sslope[b];
    intercept[b] = sintercept[b];
    slope_low[b] = slow[b];
    slope_high[b] = shigh[b];
    if (flat[b]) {
        const long m = max(sn[b] - 1, 0L);
        n[b] = m;
        s[b] = 0;
        z[b] = 0;
        p[b] = 1;
        tau[b] = 0;
        h[b] = 0;
        trend[b] = 0;
        var_s[b] = (stat)(m * (m - 1) * (2 * m + 5)) / (stat)18;
    }
    finish_status(b, n[b], trend, h, p, z, tau, s, var_s, slope, intercept, slope_low,
                  slope_high, status);
}
