## STL fused per series: one work-group of WG work-items per series holds the series in local
## memory and runs whole inner iterations there (the cycle-subseries LOESS, the three moving
## averages, the low-pass LOESS, the deseasonalising, the trend LOESS, the interpolation between
## jumped fits), then the robustness weights of the outer iteration: one launch per outer
## iteration instead of seven or more per inner iteration. This is Serykh et al.'s intra-group
## mapping taken from one LOESS to the whole inner loop, for series that fit a work-group's
## local memory: the fit points of each step strided over the work-items, a barrier between
## steps, nothing to global memory but the results.
##
## The same definitions as the separate kernels (and the numpy reference): windows of the
## min(q, n_valid) valid points nearest each anchor (ties to the left) by a binary search and
## an interval grown one valid point at a time (as stl_nns), the moments in window-centred
## coordinates and their finish (as loess_common), a failed fit falling back to the nearest
## valid value, the ends of the cycle-subseries to their neighbours, linear interpolation with
## stl_interp's formula, the median of the residuals by stl_robust_group's radix select (the
## same two middle values). The moving averages are direct sums (a few ulp from netlib's running
## updates, as the tiled moving averages).
##
## Template parameters: real, wg (work-items per series), complete (no missing value in the
## batch: valid positions are the identity and are not stored), sdeg / tdeg / ldeg (degrees),
## quad_tol. Everything else is a kernel argument.
<%include file="/common/real.cl.mako"/>
<%
    U, AS_U, AS_R, BITS = ("ulong", "as_ulong", "as_double", 64) if real == "double" else \
                          ("uint", "as_uint", "as_float", 32)
%>
#define BIG 0x3fffffff
// i = l, l + wg, ... < n, the loop itself taken by every work-item the same number of times
// (pocl mis-runs a kernel whose work-items take a strided loop 0 and 1 times before a barrier
// inside a loop: series shorter than the work-group came back wrong)
#define FOR_ITEMS(i, n) for (int i##_0 = 0; i##_0 < (n); i##_0 += ${wg}) \
                        for (int i = i##_0 + l; i < (n) && i < i##_0 + ${wg}; i += ${wg})
% if complete:
#define POS(pr, k) ((k) + 1)
% else:
#define POS(pr, k) (ident ? (k) + 1 : (pr)[k])
% endif

// number of packed positions <= x
inline int ub(local const int* pr, int ident, int nv, int x) {
% if complete:
    return clamp(x, 0, nv);
% else:
    if (ident) return clamp(x, 0, nv);
    int lo = 0, hi = nv;
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (pr[mid] <= x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
% endif
}

// fit points of a segment of n grid positions with jump `jump` (params.fit_points)
inline int n_fits(int n, int jump) {
    if (n < 2) return 1;
    const int nj = min(jump, n - 1);
    const int nreg = (n - 1) / nj + 1;
    return nreg + ((nreg - 1) * nj + 1 != n);
}

// the f-th fit point: (position, anchor)
inline int2 fit_point(int n, int jump, int f) {
    if (n < 2) return (int2)(1, 1);
    const int nj = min(jump, n - 1);
    const int nreg = (n - 1) / nj + 1;
    if (f < nreg) return (int2)(1 + f * nj, 1 + f * nj);
    return (int2)(n, (nreg - 1) * nj + 1);
}

// LOESS at xf with anchor a, degree deg, over a segment of grid positions 1..n whose position p
// holds X[xo + (p - 1) * xs] (NaN: not valid) and weight Wt[...] (use_w); valid positions pr
// (nv of them, or the identity), their span rng. *fb: the grid position of the fallback value
// (nearest valid point to xf). Returns NaN when every weight is zero.
inline real loess_fit(local const real* X, local const real* Wt, int use_w, int xo, int xs,
                      local const int* pr, int ident, int nv, int rng, int q, int deg, int xf,
                      int a, int* fb) {
    *fb = 0;
    if (nv == 0) return REAL_NAN;
    const int qh = min(q, nv);
    int R = ub(pr, ident, nv, a);
    int L = R - 1;
    for (int k = 0; k < qh; ++k) {
        const int dl = L >= 0 ? a - POS(pr, L) : BIG;
        const int dr = R < nv ? POS(pr, R) - a : BIG;
        if (dl <= dr) --L;
        else ++R;
    }
    const int lo = POS(pr, L + 1), hi = POS(pr, R - 1);
    int hi_ = max(xf - lo, hi - xf);
    if (q > nv) hi_ += (q - nv) / 2;
    const real h = (real)hi_;
    {
        const int r = ub(pr, ident, nv, xf);
        if (r == 0) *fb = POS(pr, 0);
        else if (r == nv) *fb = POS(pr, nv - 1);
        else {
            const int fl = POS(pr, r - 1), fr = POS(pr, r);
            *fb = (xf - fl <= fr - xf) ? fl : fr;
        }
    }
    const real inv_h = h > (real)0 ? (real)1 / h : (real)0;
    const real xc = (real)0.5 * (real)(lo + hi);
    const real e = ((real)xf - xc) * inv_h;
    real S0 = 0, S1 = 0, S2 = 0, T0 = 0, T1 = 0, S3 = 0, S4 = 0, T2 = 0;
    for (int p = lo; p <= hi; ++p) {
        const int i = xo + (p - 1) * xs;
        const real v = X[i];
        const real d = (real)(p - xf);
        const real r = fabs(d);
        const real t = r * inv_h;
        real w = (real)1 - t * t * t;
        w = (r <= (real)0.001 * h) ? (real)1 : ((r <= (real)0.999 * h) ? w * w * w : (real)0);
        w = isnan(v) ? (real)0 : (use_w ? w * Wt[i] : w);
        const real yv = isnan(v) ? (real)0 : v;
        const real u = ((real)p - xc) * inv_h;
        const real wu = w * u;
        S0 += w; S1 += wu; S2 += wu * u; T0 += w * yv; T1 += wu * yv;
        if (deg == 2) { S3 += wu * u * u; S4 += wu * u * u * u; T2 += wu * u * yv; }
    }
    if (!(S0 > (real)0)) return REAL_NAN;
    const real m0 = T0 / S0;
    if (deg == 0 || !(h > (real)0)) return m0;
    const real am = S1 / S0;
    const real r2 = S2 / S0;
    const real c = r2 - am * am;
    if (!(sqrt(fmax(c, (real)0)) * h > (real)0.001 * (real)rng)) return m0;
    const real m1 = T1 / S0 - am * m0;
    if (deg == 2) {
        const real r3 = S3 / S0, r4 = S4 / S0;
        const real c3 = r3 - (real)3 * am * r2 + (real)2 * am * am * am;
        const real c4 = r4 - (real)4 * am * r3 + (real)6 * am * am * r2 - (real)3 * am * am * am * am;
        const real det = c * (c4 - c * c) - c3 * c3;
        if (det > (real)${quad_tol} * c * c * c) {
            const real m2 = T2 / S0 - (real)2 * am * (T1 / S0) + am * am * m0;
            const real b2 = (c * m2 - c * c * m0 - c3 * m1) / det;
            const real b1 = (m1 - c3 * b2) / c;
            const real b0 = m0 - c * b2;
            const real tt = e - am;
            return b0 + b1 * tt + b2 * tt * tt;
        }
    }
    return m0 + ((e - am) / c) * m1;
}

// the positions between jumped fits of a segment (output O[oo + p * os], p = 1..n) by linear
// interpolation with stl_interp's formula; m: a grid position, 1..n
inline void interp_at(local real* O, int oo, int os, int n, int jump, int m) {
    if (n < 2) return;
    const int nj = min(jump, n - 1);
    if (nj == 1 || m >= n) return;
    const int left = 1 + ((m - 1) / nj) * nj;
    if (left == m) return;
    const int right = min(left + nj, n);
    const real yl = O[oo + left * os], yr = O[oo + right * os];
    const real delta = (yr - yl) / (real)(right - left);
    O[oo + m * os] = yl + delta * (real)(m - left);
}

// one launch = one outer iteration of `inner` inner iterations for every series (a work-group
// each): first = 1 the first (trend 0, weights unused), use_w = 1 the robustness weights in rw,
// robust = 1 computes the next weights into rw at the end. t, s: [B][N] results (t read back
// by the next launch). failed[row0 + b] (first launch): 1 for a cycle-subseries without a
// valid value, or fewer valid values than two periods. lm: 5N + 3P + 3 reals; li: the valid
// positions (not used with complete data): N + P K + P + 2 ints.
__attribute__((reqd_work_group_size(${wg}, 1, 1)))
kernel void stl_fused(global const real* y, global real* t, global real* s, global real* rw,
                      global uchar* failed, int row0, int N, int P, int K, int qs, int qt, int ql,
                      int js, int jt, int jl, int inner, int first, int use_w, int robust,
                      local real* lm, local int* li) {
    local uint hist[256];
    local real red[${wg}];
    local int sh_n, sh_k;
    local ${U} sh_prefix;
    const int b = get_group_id(0), l = get_local_id(0);
    const int NC = N + 2 * P;
    local real* T = lm;                // [N + 2]: the trend; the second moving average while
                                       // the trend is dead (from z = y - t to the trend LOESS)
    local real* W = T + N + 2;         // [N]: robustness weights
    local real* C = W + N;             // [N + 2P]: seasonal fits, cycle-subseries end fits
    local real* A = C + NC;            // [N + P + 1]: first moving average, then the low-pass
    local real* D = A + N + P + 1;     // [N]: the smoothers' input (z, low-pass input, y - s)
    local real* A2 = T;
    // the series stays in global memory (read a few times per iteration, cached)
    global const real* Y = y + (long)b * N;
    global real* tr = t + (long)b * N;
    global real* sr = s + (long)b * N;
    global real* wr = rw + (long)b * N;
    FOR_ITEMS(i, N) {
        T[i] = first ? (real)0 : tr[i];
        W[i] = use_w ? wr[i] : (real)1;
    }
% if complete:
    local const int* posY = li;
    local const int* posS = li;
    const int ident = 1;
    const int nvY = N, rngY = N - 1;
    barrier(CLK_LOCAL_MEM_FENCE);
% else:
    // valid positions: of the series (one work-item) and of each cycle-subseries (one work-item
    // each), packed in order; their counts and spans
    local int* posY = li;
    local int* posS = li + N;          // [P][K]
    local int* nvS = posS + P * K;     // [P]
    local int* stY = nvS + P;          // [2]: valid count and span of the series
    const int ident = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == ${wg - 1}) {
        int c = 0;
        for (int i = 0; i < N; ++i)
            if (!isnan(Y[i])) posY[c++] = i + 1;
        stY[0] = c;
        stY[1] = c ? posY[c - 1] - posY[0] : 0;
    }
    FOR_ITEMS(j, P) {
        const int n = (N - j - 1) / P + 1;
        int c = 0;
        for (int m = 0; m < n; ++m)
            if (!isnan(Y[j + m * P])) posS[j * K + c++] = m + 1;
        nvS[j] = c;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int nvY = stY[0], rngY = stY[1];
% endif
    if (first && l == 0) {
        int bad = nvY < 2 * P;
% if not complete:
        for (int j = 0; j < P; ++j) bad |= nvS[j] == 0;
% endif
        failed[row0 + b] = bad ? 1 : 0;
    }
    const int nfs = n_fits(K, js) + 2;      // fit points per cycle-subseries, ends included
    for (int it = 0; it < inner; ++it) {
        // z = y - t
        FOR_ITEMS(i, N) D[i] = Y[i] - T[i];
        barrier(CLK_LOCAL_MEM_FENCE);
        // the cycle-subseries LOESS at its fit points and the two end fits: C[j + P xf]
        FOR_ITEMS(g, P * nfs) {
            const int j = g / nfs, f = g - j * nfs;
            const int n = (N - j - 1) / P + 1;
            const int nf = n_fits(n, js);
            if (f >= nf + 2) continue;
            int2 xa = f < nf ? fit_point(n, js, f) : (f == nf ? (int2)(0, 0) : (int2)(n + 1, n + 1));
% if complete:
            const int nv = n;
% else:
            const int nv = nvS[j];
% endif
            const int rng = nv ? POS(posS + j * K, nv - 1) - POS(posS + j * K, 0) : 0;
            int fb;
            real v = loess_fit(D, W, use_w, j, P, posS + j * K, ident, nv, rng, qs, ${sdeg},
                               xa.x, xa.y, &fb);
            if (isnan(v) && f < nf && fb >= 1) v = D[j + (fb - 1) * P];
            C[j + P * xa.x] = v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // between the jumped fits; failed end fits take their neighbours
        FOR_ITEMS(i, NC) {
            const int j = i % P, m = i / P;
            const int n = (N - j - 1) / P + 1;
            if (m == 0) {
                if (isnan(C[j])) C[j] = C[j + P];
            } else if (m == n + 1) {
                if (isnan(C[j + P * m])) C[j + P * m] = C[j + P * n];
            } else if (m <= n) {
                interp_at(C, j, P, n, js, m);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // the low-pass filter: moving averages of lengths P, P, 3 (direct sums)
        const real inv_p = (real)1 / (real)P;
        FOR_ITEMS(i, N + P + 1) {
            real acc = 0;
            for (int k = 0; k < P; ++k) acc += C[i + k];
            A[i] = acc * inv_p;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        FOR_ITEMS(i, N + 2) {
            real acc = 0;
            for (int k = 0; k < P; ++k) acc += A[i + k];
            A2[i] = acc * inv_p;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        FOR_ITEMS(i, N) D[i] = (A2[i] + A2[i + 1] + A2[i + 2]) / (real)3;
        barrier(CLK_LOCAL_MEM_FENCE);
        // the low-pass LOESS (complete data) into A[x - 1]
        const int nfl = n_fits(N, jl);
        FOR_ITEMS(f, nfl) {
            const int2 xa = fit_point(N, jl, f);
            int fb;
            real v = loess_fit(D, W, 0, 0, 1, posY, 1, N, N - 1, ql, ${ldeg}, xa.x, xa.y, &fb);
            if (isnan(v) && fb >= 1) v = D[fb - 1];
            A[xa.x - 1] = v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        FOR_ITEMS(m, N) interp_at(A, -1, 1, N, jl, m + 1);
        barrier(CLK_LOCAL_MEM_FENCE);
        // s = C - low-pass; the trend LOESS's input y - s
        FOR_ITEMS(i, N) D[i] = Y[i] - (C[P + i] - A[i]);
        barrier(CLK_LOCAL_MEM_FENCE);
        const int nft = n_fits(N, jt);
        FOR_ITEMS(f, nft) {
            const int2 xa = fit_point(N, jt, f);
            int fb;
            real v = loess_fit(D, W, use_w, 0, 1, posY, ident, nvY, rngY, qt, ${tdeg}, xa.x,
                               xa.y, &fb);
            if (isnan(v) && fb >= 1) v = D[fb - 1];
            T[xa.x - 1] = v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        FOR_ITEMS(m, N) interp_at(T, -1, 1, N, jt, m + 1);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    FOR_ITEMS(i, N) {
        tr[i] = T[i];
        sr[i] = C[P + i] - A[i];
    }
    if (!robust) return;           // uniform: every work-item of every group
    // robustness weights: r = |y - (t + s)| over the valid points, 6 x their median by the
    // radix select of stl_robust_group (the same two middle values), bisquare weights
    if (l == 0) sh_n = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int cnt = 0;
    FOR_ITEMS(i, N) {
        const real r = fabs(Y[i] - (T[i] + (C[P + i] - A[i])));
        D[i] = r;
        cnt += !isnan(r);
    }
    atomic_add(&sh_n, cnt);
    barrier(CLK_LOCAL_MEM_FENCE);
    const int n = sh_n;
    real cmad = 0;
    if (n > 0) {                   // uniform: the whole group takes the same branch
        const int k = n / 2;
        ${U} prefix = 0, mask = 0;
        int kk = k;
        for (int shift = ${BITS - 8}; shift >= 0; shift -= 8) {
            FOR_ITEMS(d, 256) hist[d] = 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            FOR_ITEMS(i, N) {
                const real r = D[i];
                const ${U} u = ${AS_U}(r);
                if (!isnan(r) && (u & mask) == prefix) atomic_inc(&hist[(u >> shift) & 255]);
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            if (l == 0) {
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
        if (n - k - 1 != k && kk == 0) {
            real mx = -REAL_MAX;
            FOR_ITEMS(i, N) {
                const real r = D[i];
                if (r < m1) mx = fmax(mx, r);
            }
            red[l] = mx;
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int hh = ${wg // 2}; hh > 0; hh >>= 1) {
                if (l < hh) red[l] = fmax(red[l], red[l + hh]);
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            m2 = red[0];
        }
        cmad = (real)3 * (m1 + m2);
    }
    const real c9 = (real)0.999 * cmad, c1 = (real)0.001 * cmad;
    FOR_ITEMS(i, N) {
        const real r = D[i];
        real v;
        if (n == 0 || isnan(r)) v = 0;
        else if (cmad == (real)0) v = 1;
        else if (r <= c1) v = 1;
        else if (r <= c9) { const real u = r / cmad; v = ((real)1 - u * u) * ((real)1 - u * u); }
        else v = 0;
        wr[i] = v;
    }
}
