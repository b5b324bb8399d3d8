## The covariances of the Mann-Kendall scores of several variables observed at the same times
## (Libiseller and Grimvall 2002: the correlated multivariate, correlated seasonal and partial
## tests), one work-item per (series, variable i, variable j) with i <= j, on the series' complete
## time steps in order (compacted on the host: a time step with any variable missing is left
## out). For variables x = i, z = j over n complete steps:
##   K = sum_(a < b) sign((x_b - x_a) (z_b - z_a)),
##   RR = sum_a (2 R_x(a)) (2 R_z(a)), 2 R(a) = n + 1 + sum_b sign(v_a - v_b) (twice the average
##   rank: an integer, so RR is exact),
## and on the diagonal the score S_i = sum_(a < b) sign(x_b - x_a). The host forms
## Gamma_ij = (K + RR - n (n + 1)^2) / 3 from these integers.
<%include file="/common/real.cl.mako"/>
#pragma OPENCL FP_CONTRACT OFF

// x: [B, C, N] (the complete steps of series b first, n = nvalid[b] of them); k, rr: [B, C, C]
// (entries i <= j written); s: [B, C]
kernel void mk_cross(global const real* x, global const int* nvalid, const int N, const int C,
                     const int B, global long* k, global long* rr, global long* s) {
    const long g = get_global_id(0);
    const int CC = C * C;
    const int b = (int)(g / CC), ij = (int)(g % CC), i = ij / C, j = ij % C;
    if (b >= B || i > j) return;
    const int n = nvalid[b];
    global const real* xi = x + ((long)b * C + i) * N;
    global const real* xj = x + ((long)b * C + j) * N;
    long K = 0, R = 0, S = 0;
    for (int a = 0; a < n; ++a) {
        const real va = xi[a], wa = xj[a];
        long ri = 0, rj = 0;
        for (int c = 0; c < a; ++c) {
            const real vc = xi[c], wc = xj[c];
            ri += (va > vc) - (va < vc);
            rj += (wa > wc) - (wa < wc);
        }
        for (int c = a + 1; c < n; ++c) {
            const real vc = xi[c], wc = xj[c];
            const real dv = vc - va, dw = wc - wa;
            const real pr = dv * dw;
            ri -= (dv > 0) - (dv < 0);
            rj -= (dw > 0) - (dw < 0);
            K += (pr > 0) - (pr < 0);
            S += (dv > 0) - (dv < 0);
        }
        R += ((long)n + 1 + ri) * ((long)n + 1 + rj);
    }
    k[(long)b * CC + ij] = K;
    rr[(long)b * CC + ij] = R;
    if (i == j) s[(long)b * C + i] = S;
}
