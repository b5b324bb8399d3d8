## Robustness weights: r = |y - (t + s)| over the valid points, 6 * median(r) by a batched
## quickselect (one work-item per series, in a scratch row), then bisquare weights.
<%include file="/common/real.cl.mako"/>

kernel void stl_robust(global const real* y, global const real* t, global const real* s,
                       int N, int B, global real* scratch, global real* rw,
                       global real* rwt) {
    const int b = get_global_id(0);
    if (b >= B) return;
    global const real* yr = y + (long)b * N;
    global const real* tr = t + (long)b * N;
    global const real* sr = s + (long)b * N;
    global real* a = scratch + (long)b * N;
    global real* w = rw + (long)b * N;
    int n = 0;
    for (int i = 0; i < N; ++i) {
        const real r = fabs(yr[i] - (tr[i] + sr[i]));
        if (!isnan(r)) a[n++] = r;
    }
    if (n == 0) {
        for (int i = 0; i < N; ++i) {
            w[i] = 0;
% if lanes > 1:
            rwt[((long)(b >> ${lanes.bit_length() - 1}) * N + i) * ${lanes} + (b & ${lanes - 1})] = 0;
% endif
        }
        return;
    }
    // quickselect (Hoare partition, median-of-three pivot) for the k-th smallest, k = n / 2
    const int k = n / 2;
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        real x0 = a[lo], x1 = a[mid], x2 = a[hi];
        real piv = fmax(fmin(x0, x1), fmin(fmax(x0, x1), x2));
        int i = lo, j = hi;
        while (i <= j) {
            while (a[i] < piv) ++i;
            while (a[j] > piv) --j;
            if (i <= j) {
                const real tmp = a[i]; a[i] = a[j]; a[j] = tmp;
                ++i; --j;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else break;
    }
    const real m1 = a[k];
    real m2 = m1;
    if (n - k - 1 != k) {          // even n: the (k-1)-th smallest = max of a[0..k-1]
        m2 = a[0];
        for (int i = 1; i < k; ++i) m2 = fmax(m2, a[i]);
    }
    const real cmad = (real)3 * (m1 + m2);
    const real c9 = (real)0.999 * cmad, c1 = (real)0.001 * cmad;
    for (int i = 0; i < N; ++i) {
        const real r = fabs(yr[i] - (tr[i] + sr[i]));
        real v;
        if (isnan(r)) v = 0;
        else if (cmad == (real)0) v = 1;
        else if (r <= c1) v = 1;
        else if (r <= c9) { const real u = r / cmad; v = ((real)1 - u * u) * ((real)1 - u * u); }
        else v = 0;
        w[i] = v;
% if lanes > 1:
        rwt[((long)(b >> ${lanes.bit_length() - 1}) * N + i) * ${lanes} + (b & ${lanes - 1})] = v;
% endif
    }
}
