## Fill the grid positions between jumped LOESS fits, in place in the output: by linear
## interpolation (statsmodels / netlib formula), or with hermite by cubic Hermite interpolation
## from the fitted values and the slopes of the local fits (slp, laid out as the output: the
## seed's and stlplus' method). A work-item fills IPW consecutive intervals of one
## segment (IPW = 1 on GPUs; on CPUs a whole segment, as pocl pays per work-item). With extend,
## the first work-item of a segment also replaces a failed end fit (positions 0 and n+1 of a
## cycle-subseries) by its neighbour.
<%include file="/common/real.cl.mako"/>

kernel void stl_interp(global real* out, int o_b, int o_s, int o_p, int o_off,
                       global const int* seg_n, int S, int B, int G, int jump, int IPW${", global const real* slp" if hermite else ""}) {
    // G = work-items per segment, each for IPW intervals
    const long gid = get_global_id(0);
    if (gid >= (long)B * S * G) return;
    const long bs = gid / G;
    const long b = bs / S;
    const int s = (int)(bs - b * S);
    const int g = (int)(gid - bs * G);
    const int n = seg_n[s];
% if OTL > 1:
    // output interleaved by OTL series: [b / OTL][row][b % OTL]
    const long base = ((b >> ${OTL.bit_length() - 1}) * o_b + (long)s * o_s + o_off) * ${OTL}
                      + (b & ${OTL - 1});
    global real* o = out + base;
    o_p *= ${OTL};
% else:
    const long base = b * o_b + (long)s * o_s + o_off;
    global real* o = out + base;
% endif
% if hermite:
    global const real* sl = slp + base;
% endif
% if extend:
    if (g == 0) {
        if (isnan(o[0])) o[0] = o[o_p];
        if (isnan(o[(long)(n + 1) * o_p])) o[(long)(n + 1) * o_p] = o[(long)n * o_p];
    }
% endif
    if (n < 2) return;
    const int nj = min(jump, n - 1);
    if (nj == 1) return;
    for (int k = g * IPW; k < (g + 1) * IPW; ++k) {
        const int left = 1 + k * nj;
        if (left >= n) return;
        const int right = min(left + nj, n);
        const real yl = o[(long)left * o_p], yr = o[(long)right * o_p];
% if hermite:
        const real d = (real)(right - left);
        const real ml = sl[(long)left * o_p] * d, mr = sl[(long)right * o_p] * d;
        for (int p = left + 1; p < right; ++p) {
            const real t = (real)(p - left) / d, t2 = t * t, t3 = t2 * t;
            o[(long)p * o_p] = ((real)2 * t3 - (real)3 * t2 + (real)1) * yl
                               + (t3 - (real)2 * t2 + t) * ml
                               + ((real)3 * t2 - (real)2 * t3) * yr + (t3 - t2) * mr;
        }
% else:
        const real delta = (yr - yl) / (real)(right - left);
        for (int p = left + 1; p < right; ++p)
            o[(long)p * o_p] = yl + delta * (real)(p - left);
% endif
    }
}
