## The cycle-subseries extraction fused as a change of layout: z[b, j, m] = y[b, m np + j] - t[..]
## (NaN-padded to K per subseries), with the robustness weights in the same layout; and the
## element-wise season/detrend update.
<%include file="/common/real.cl.mako"/>

kernel void stl_gather(global const real* y, global const real* t, global const real* rw,
                       int N, int P, int K, int B, global real* z, global real* rwz) {
    const long gid = get_global_id(0);
    if (gid >= (long)B * P * K) return;
    // (no % next to / : Oclgrind cannot check LLVM's freeze of a div/rem pair)
    const long bj = gid / K;
    const int m = (int)(gid - bj * K);
    const long b = bj / P;
    const int j = (int)(bj - b * P);
    const int i = m * P + j;
    if (i < N) {
        const long src = b * N + i;
        z[gid] = y[src] - t[src];
        rwz[gid] = rw[src];
    } else {
        z[gid] = REAL_NAN;
        rwz[gid] = 0;
    }
}

kernel void stl_season(global const real* y, global const real* C, global const real* lp,
                       int N, int P, int B, global real* s, global real* u) {
    const long gid = get_global_id(0);
    if (gid >= (long)B * N) return;
    const long b = gid / N;
    const int i = (int)(gid - b * N);
    const real sv = C[b * (N + 2 * P) + P + i] - lp[gid];
    s[gid] = sv;
    u[gid] = y[gid] - sv;
}

kernel void stl_init(long n, global real* t, global real* s, global real* rw) {
    const long gid = get_global_id(0);
    if (gid >= n) return;
    t[gid] = 0;
    s[gid] = 0;
    rw[gid] = 1;
}
