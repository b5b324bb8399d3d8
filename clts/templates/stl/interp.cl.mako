## Fill the grid positions between jumped LOESS fits by linear interpolation (statsmodels /
## netlib formula), in place in the output: one work-item per interval between two fits. With
## extend, the first work-item of a segment also replaces a failed end fit (positions 0 and
## n+1 of a cycle-subseries) by its neighbour.
<%include file="/common/real.cl.mako"/>

kernel void stl_interp(global real* out, int o_b, int o_s, int o_p, int o_off,
                       global const int* seg_n, int S, int B, int G, int jump) {
    // G = intervals per segment handled
    const long gid = get_global_id(0);
    if (gid >= (long)B * S * G) return;
    const long bs = gid / G;
    const long b = bs / S;
    const int s = (int)(bs - b * S);
    const int k = (int)(gid - bs * G);
    const int n = seg_n[s];
    global real* o = out + b * o_b + (long)s * o_s + o_off;
% if extend:
    if (k == 0) {
        if (isnan(o[0])) o[0] = o[o_p];
        if (isnan(o[(long)(n + 1) * o_p])) o[(long)(n + 1) * o_p] = o[(long)n * o_p];
    }
% endif
    if (n < 2) return;
    const int nj = min(jump, n - 1);
    if (nj == 1) return;
    const int left = 1 + k * nj;
    if (left >= n) return;
    const int right = min(left + nj, n);
    const real yl = o[(long)left * o_p], yr = o[(long)right * o_p];
    const real delta = (yr - yl) / (real)(right - left);
    for (int p = left + 1; p < right; ++p)
        o[(long)p * o_p] = yl + delta * (real)(p - left);
}
