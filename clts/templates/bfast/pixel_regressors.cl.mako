## Per-pixel regressors of BFAST on device cubes (clts.bfast.pixel_device): the columns a host cube
## gets from clts.bfast.regressors (model_terms, Terms.pixel_columns, api.pixel_regressors), made
## on the device from device arrays.
##   preg_stats   one regressor column j of q, source element (t, p) at off + t st + p sp (sp = 0:
##                a column shared by the pixels): per pixel its centre (the mean of its non-NaN
##                values) and scale (their largest distance from it, 1 where 0; from the extremes,
##                one pass) at rows N q + j and (N + 1) q + j of xp
##   preg_scale   then per (pixel, date) the scaled column (NaN read as 0) at xp[(t q + j) M + p];
##                a NaN value makes y's value missing (ym[t M + p] = NaN)
##   preg_gather  rows of xp [rows, ld] (columns a .. a + m) into [rows, mp] of out_t, zeros after
##                column m: the chunk layout the breakpoint and monitor kernels read
## The host's order of operations (sums date by date, FP_CONTRACT off).
## Variables: real (ym's type), acc (float64 where the device has it), src_t, out_t.
<%include file="/common/real.cl.mako"/>
% if "double" in (acc, out_t) and real != "double":
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
% endif
#pragma OPENCL FP_CONTRACT OFF
typedef ${acc} acc;
typedef ${src_t} src_t;
typedef ${out_t} out_t;

__kernel void preg_stats(__global const src_t* restrict src, const long off, const long st,
                          const long sp, const int M, const int N, const int q, const int j,
                          __global acc* restrict xp, __global real* restrict ym)
{
    const int p = get_global_id(0);
    if (p >= M) return;
    __global const src_t* s = src + off + (long)p * sp;
    // one pass: the sum (NaN as 0, as the host's where(ok, R, 0).sum()), the count, the
    // extremes; max |v - centre| = max(hi - centre, centre - lo) (rounding is monotone)
    acc sum = 0, lo = INFINITY, hi = -INFINITY;
    int cnt = 0;
    for (int t = 0; t < N; ++t) {
        const acc v = (acc)s[(long)t * st];
        const int ok = !isnan(v);
        sum = sum + (ok ? v : (acc)0);
        cnt += ok;
        lo = fmin(lo, v);
        hi = fmax(hi, v);
    }
    const acc center = sum / (acc)max(cnt, 1);
    acc scale = cnt ? fmax(hi - center, center - lo) : (acc)0;
    if (!(scale > 0)) scale = 1;        // constant: the intercept's column (a singular design)
    xp[((long)N * q + j) * M + p] = center;
    xp[((long)(N + 1) * q + j) * M + p] = scale;
}

__kernel void preg_scale(__global const src_t* restrict src, const long off, const long st,
                         const long sp, const int M, const int N, const int q, const int j,
                         __global acc* restrict xp, __global real* restrict ym)
{
    const int p = get_global_id(0), t = get_global_id(1);
    if (p >= M) return;
    const acc v = (acc)src[off + (long)p * sp + (long)t * st];
    const acc center = xp[((long)N * q + j) * M + p], scale = xp[((long)(N + 1) * q + j) * M + p];
    const acc r = isnan(v) ? (acc)0 : v;
    xp[((long)t * q + j) * M + p] = (r - center) / scale;
    if (isnan(v)) ym[(long)t * M + p] = REAL_NAN;
}

__kernel void preg_gather(__global const acc* restrict src, const int ld, const int a,
                          const int m, const int mp, __global out_t* restrict dst)
{
    const int c = get_global_id(0), r = get_global_id(1);
    if (c >= mp) return;
    dst[(long)r * mp + c] = c < m ? (out_t)src[(long)r * ld + a + c] : (out_t)0;
}
