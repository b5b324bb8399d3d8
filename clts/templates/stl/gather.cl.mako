## The cycle-subseries extraction fused as a change of layout: z[b, j, m] = y[b, m np + j] - t[..]
## (NaN-padded to K per subseries), with the robustness weights in the same layout; and the
## element-wise season/detrend update. lanes > 1 writes the batch-interleaved layout the vector
## (LANES = lanes) LOESS reads with vloadN: [b / lanes][...][b % lanes]; rows of the padded batch Bp
## beyond B repeat the last series.
<%include file="/common/real.cl.mako"/>

kernel void stl_gather(global const real* y, global const real* t, global const real* rw,
                       int N, int P, int K, int B, int Bp, int with_w, global real* z,
                       global real* rwz) {
    // with_w = 0: the robustness weights are not used yet (first pass): z only
    // 3-D range (m, j, tile): no division (Oclgrind cannot check LLVM's freeze of a div/rem
    // pair); a work-item writes the TL series of a tile (one vector store when TL > 1)
    const int m = get_global_id(0), j = get_global_id(1), tile = get_global_id(2);
    if (m >= K || j >= P || tile * ${lanes} >= Bp) return;
    const long dst = ((long)tile * P + j) * K + m;
    const int i = m * P + j;
% if lanes > 1:
<% V = "real%d" % lanes %>
    if (i < N) {
        ${V} zv, wv;
%   for k in range(lanes):
        {
            const long src = (long)min(tile * ${lanes} + ${k}, B - 1) * N + i;
            zv.s${"%x" % k} = y[src] - t[src];
            wv.s${"%x" % k} = with_w ? rw[src] : (real)0;
        }
%   endfor
        vstore${lanes}(zv, dst, z);
        if (with_w) vstore${lanes}(wv, dst, rwz);
    } else {
        vstore${lanes}((${V})(REAL_NAN), dst, z);
        if (with_w) vstore${lanes}((${V})(0), dst, rwz);
    }
% else:
    if (i < N) {
        const long src = (long)min(tile, B - 1) * N + i;
        z[dst] = y[src] - t[src];
        if (with_w) rwz[dst] = rw[src];
    } else {
        z[dst] = REAL_NAN;
        if (with_w) rwz[dst] = 0;
    }
% endif
}

% if tiled:
// The GPU mapping (Plan steps "coalesced", TL = 1): the same change of layout as a tiled
// transpose of each series' [K][P] grid through local memory, 32 x 32 per work-group of 32 x 8:
// the reads run along j (consecutive positions of y), the writes along m (consecutive slots of
// z): both coalesced.
kernel void stl_gather_tiled(global const real* y, global const real* t, global const real* rw,
                             int N, int P, int K, int B, int Bp, int with_w, global real* z,
                             global real* rwz) {
    // range (ceil(P / 32) * 32, ceil(K / 32) * 8, Bp), local (32, 8, 1)
    local real tz[32][33], tw[32][33];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int j0 = get_group_id(0) * 32, m0 = get_group_id(1) * 32, b = get_global_id(2);
    const long row = (long)min(b, B - 1) * N;
    for (int r = ly; r < 32; r += 8) {
        const int m = m0 + r, j = j0 + lx, i = m * P + j;
        real zv = REAL_NAN, wv = 0;
        if (m < K && j < P && i < N) {
            zv = y[row + i] - t[row + i];
            if (with_w) wv = rw[row + i];
        }
        tz[r][lx] = zv;
        tw[r][lx] = wv;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r = ly; r < 32; r += 8) {
        const int j = j0 + r, m = m0 + lx;
        if (j < P && m < K) {
            const long dst = ((long)b * P + j) * K + m;
            z[dst] = tz[lx][r];
            if (with_w) rwz[dst] = tw[lx][r];
        }
    }
}

% endif
kernel void stl_season(global const real* y, global const real* C, global const real* lp,
                       int N, int P, int B, int Bp, global real* s, global real* u,
                       int ljump${", global const real* slp" if hermite else ""}) {
    // s = C - low-pass, u = y - s. lp holds the low-pass LOESS only at its fit points (jump
    // ljump): the values between them are interpolated here, with the formula (and rounding)
    // of stl_interp, instead of in a pass of their own
    const int i = get_global_id(0), b = get_global_id(1);
    if (i >= N || b >= Bp) return;
    const long bs = min(b, B - 1);
    const long src = bs * N + i;
    global const real* L = lp + bs * N;
    const int nj = min(ljump, N - 1);
    const int x = i + 1;                        // grid position
    const int left = nj > 1 ? 1 + ((x - 1) / nj) * nj : x;
    real lv;
    if (left == x || x == N) {
        lv = L[i];
    } else {
        const int right = min(left + nj, N);
        const real yl = L[left - 1], yr = L[right - 1];
% if hermite:
        global const real* sl = slp + bs * N;
        const real d = (real)(right - left);
        const real ml = sl[left - 1] * d, mr = sl[right - 1] * d;
        const real t = (real)(x - left) / d, t2 = t * t, t3 = t2 * t;
        lv = ((real)2 * t3 - (real)3 * t2 + (real)1) * yl + (t3 - (real)2 * t2 + t) * ml
             + ((real)3 * t2 - (real)2 * t3) * yr + (t3 - t2) * mr;
% else:
        const real delta = (yr - yl) / (real)(right - left);
        lv = yl + delta * (real)(x - left);
% endif
    }
% if consumer_lanes > 1:
    // C interleaved by CTL series (the vector moving averages' layout)
    const real sv = C[((bs >> ${consumer_lanes.bit_length() - 1}) * (N + 2 * P) + P + i) * ${consumer_lanes}
                      + (bs & ${consumer_lanes - 1})] - lv;
% else:
    const real sv = C[bs * (N + 2 * P) + P + i] - lv;
% endif
    if (b < B) s[src] = sv;
% if lanes > 1:
    u[((long)(b >> ${lanes.bit_length() - 1}) * N + i) * ${lanes} + (b & ${lanes - 1})] = y[src] - sv;
% else:
    u[src] = y[src] - sv;
% endif
}

kernel void stl_init(long n, long np, global real* t, global real* s, global real* rw,
                     global real* rwt) {
    // n = B * N (t, s, rw), np = Bp * N (rwt, the interleaved weights of the vector LOESS)
    const long gid = get_global_id(0);
    if (gid < n) {
        t[gid] = 0;
        s[gid] = 0;
        rw[gid] = 1;
    }
    if (gid < np) rwt[gid] = 1;
}
