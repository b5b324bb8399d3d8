## Fill the grid positions between jumped LOESS fits, in place in the output: by linear
## interpolation (statsmodels / netlib formula), or with hermite by cubic Hermite interpolation
## from the fitted values and the slopes of the local fits (slp, laid out as the output: the
## method of Serykh et al. 2023 and stlplus). A work-item fills IPW consecutive intervals of one
## segment (IPW = 1 on GPUs; on CPUs a whole segment, as pocl pays per work-item). With extend,
## the first work-item of a segment also replaces a failed end fit (positions 0 and n+1 of a
## cycle-subseries) by its neighbour. An output interleaved by out_lanes > 1 series (the seasonal
## fits C, laid out for the vector moving averages) is filled out_lanes series per work-item with
## realN vectors: B is then the number of tiles of out_lanes series.
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
% if out_lanes > 1:
<% V = "real%d" % out_lanes %>
    // b = tile of OTL series; element at position p: vload${out_lanes}(p * o_p, o)
    const long base = (b * o_b + (long)s * o_s + o_off) * ${out_lanes};
#define LD(p, ptr) vload${out_lanes}((size_t)(p) * o_p, ptr)
#define ST(v, p, ptr) vstore${out_lanes}(v, (size_t)(p) * o_p, ptr)
    typedef ${V} rv;
% else:
    const long base = b * o_b + (long)s * o_s + o_off;
#define LD(p, ptr) (ptr)[(long)(p) * o_p]
#define ST(v, p, ptr) (ptr)[(long)(p) * o_p] = (v)
    typedef real rv;
% endif
    global real* o = out + base;
% if hermite:
    global const real* sl = slp + base;
% endif
% if extend:
    if (g == 0) {
        const rv e0 = LD(0, o), e1 = LD(n + 1, o);
%   if out_lanes > 1:
        ST(select(e0, LD(1, o), isnan(e0)), 0, o);
        ST(select(e1, LD(n, o), isnan(e1)), n + 1, o);
%   else:
        if (isnan(e0)) ST(LD(1, o), 0, o);
        if (isnan(e1)) ST(LD(n, o), n + 1, o);
%   endif
    }
% endif
    if (n < 2) return;
    const int nj = min(jump, n - 1);
    if (nj == 1) return;
    for (int k = g * IPW; k < (g + 1) * IPW; ++k) {
        const int left = 1 + k * nj;
        if (left >= n) return;
        const int right = min(left + nj, n);
        const rv yl = LD(left, o), yr = LD(right, o);
% if hermite:
        const real d = (real)(right - left);
        const rv ml = LD(left, sl) * d, mr = LD(right, sl) * d;
        for (int p = left + 1; p < right; ++p) {
            const real t = (real)(p - left) / d, t2 = t * t, t3 = t2 * t;
            ST(((real)2 * t3 - (real)3 * t2 + (real)1) * yl + (t3 - (real)2 * t2 + t) * ml
               + ((real)3 * t2 - (real)2 * t3) * yr + (t3 - t2) * mr, p, o);
        }
% else:
        const rv delta = (yr - yl) / (real)(right - left);
        for (int p = left + 1; p < right; ++p)
            ST(yl + delta * (real)(p - left), p, o);
% endif
    }
}
