## Fill the grid positions between jumped LOESS fits by linear interpolation (statsmodels /
## netlib formula), in place in the output; with extend, replace a failed end fit (positions 0
## and n+1 of a cycle-subseries) by its neighbour.
<%include file="/common/real.cl.mako"/>

kernel void stl_interp(global real* out, int o_b, int o_s, int o_p, int o_off,
                       global const int* seg_n, int S, int B, int G, int jump) {
    // G = grid positions per segment handled (max n + 2); position p = gid % G (+1 unless extend)
    const long gid = get_global_id(0);
    if (gid >= (long)B * S * G) return;
    const long bs = gid / G;
    const long b = bs / S;
    const int s = (int)(bs - b * S);
    const int p = (int)(gid - bs * G)${"" if extend else " + 1"};
    const int n = seg_n[s];
    global real* o = out + b * o_b + (long)s * o_s + o_off;
% if extend:
    if (p > n + 1) return;
    if (p == 0 || p == n + 1) {
        const int nb = p == 0 ? 1 : n;
        if (isnan(o[(long)p * o_p])) o[(long)p * o_p] = o[(long)nb * o_p];
        return;
    }
% else:
    if (p > n) return;
% endif
    if (n < 2) return;
    const int nj = min(jump, n - 1);
    if (nj == 1) return;
    const int left = 1 + ((p - 1) / nj) * nj;
    if (left == p) return;
    const int right = min(left + nj, n);
    if (right == p) return;
    const real yl = o[(long)left * o_p], yr = o[(long)right * o_p];
    const real delta = (yr - yl) / (real)(right - left);
    o[(long)p * o_p] = yl + delta * (real)(p - left);
}
