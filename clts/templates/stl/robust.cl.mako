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
% if wg:
<%
    U, AS_U, AS_R, BITS = ("ulong", "as_ulong", "as_double", 64) if real == "double" else \
                          ("uint", "as_uint", "as_float", 32)
%>

## The GPU mapping (Plan steps "coalesced"): one work-group of wg work-items per series, every
## pass over the series strided over the group (adjacent work-items at adjacent positions:
## coalesced). The median's two middle values by a radix select on the bit patterns of the
## residuals (non-negative reals order as their bits), 8 bits per pass with a local histogram:
## the same values quickselect finds, so the weights are bit-identical to stl_robust's.
kernel void stl_robust_group(global const real* y, global const real* t, global const real* s,
                             int N, int B, global real* scratch, global real* rw,
                             global real* rwt) {
    local uint hist[256];
    local real red[${wg}];
    local int sh_n, sh_k;
    local ${U} sh_prefix;
    const int b = get_group_id(0), lid = get_local_id(0);
    global const real* yr = y + (long)b * N;
    global const real* tr = t + (long)b * N;
    global const real* sr = s + (long)b * N;
    global real* a = scratch + (long)b * N;
    global real* w = rw + (long)b * N;
    if (lid == 0) sh_n = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int cnt = 0;
    for (int i = lid; i < N; i += ${wg}) {
        const real r = fabs(yr[i] - (tr[i] + sr[i]));
        a[i] = r;
        cnt += !isnan(r);
    }
    atomic_add(&sh_n, cnt);
    barrier(CLK_LOCAL_MEM_FENCE);
    const int n = sh_n;
    real cmad = 0;
    if (n > 0) {                   // uniform: the whole group takes the same branch
        const int k = n / 2;
        ${U} prefix = 0, mask = 0;
        int kk = k;                // rank of the wanted value among those matching prefix
        for (int shift = ${BITS - 8}; shift >= 0; shift -= 8) {
            for (int d = lid; d < 256; d += ${wg}) hist[d] = 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int i = lid; i < N; i += ${wg}) {
                const real r = a[i];
                const ${U} u = ${AS_U}(r);
                if (!isnan(r) && (u & mask) == prefix) atomic_inc(&hist[(u >> shift) & 255]);
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid == 0) {
                int c = 0, d = 0;
                while (kk >= c + (int)hist[d]) c += hist[d++];
                sh_prefix = prefix | ((${U})d << shift);
                sh_k = kk - c;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            prefix = sh_prefix;
            kk = sh_k;
            mask |= (${U})255 << shift;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        const real m1 = ${AS_R}(prefix);
        real m2 = m1;
        // even n: the (k-1)-th smallest; m1 itself when an equal value ranks below it
        if (n - k - 1 != k && kk == 0) {
            real mx = -REAL_MAX;
            for (int i = lid; i < N; i += ${wg}) {
                const real r = a[i];
                if (r < m1) mx = fmax(mx, r);      // NaN compares false
            }
            red[lid] = mx;
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int h = ${wg // 2}; h > 0; h >>= 1) {
                if (lid < h) red[lid] = fmax(red[lid], red[lid + h]);
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            m2 = red[0];
        }
        cmad = (real)3 * (m1 + m2);
    }
    const real c9 = (real)0.999 * cmad, c1 = (real)0.001 * cmad;
    for (int i = lid; i < N; i += ${wg}) {
        const real r = a[i];
        real v;
        if (n == 0 || isnan(r)) v = 0;
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
% endif
