<%namespace name="sg" file="/common/subgroup.cl.mako"/>\
## BFAST on device-resident cubes: the steps that the numpy path does on the host, as kernels, so
## that a call on a pyopencl array neither transfers nor waits (clts.bfast.device).
##   gather_raw     a chunk of pixel columns of the cube [rows, ld] (element offset off) copied into
##                  [rows, mp] rows padded with zeros, then `tail` zeros: the monitor's chunk layout
##   gather_real    the same converted to real, nodata -> NaN, padded with NaN (breakpoints' input)
##   first_valid    the history start of a given date / the Bai-Perron start: the first valid date
##                  at or after hs[p] before n (-1: none); given = 0: hs >= N -> -1
##   coef_post      detailed results: coefficients in the units of the time axis, NaN coefficients /
##                  prediction / sigma where no fit was made
##   bp_post        the failed pixels' marks after the breakpoints and the RSS floor (host: fail(),
##                  rank_deficient_pixels(), rss_floor() of breakpoints.py)
##   bp_select      strucchange's BIC and the LWZ criterion per number of breaks, the number the
##                  criterion selects (the first minimum, -1 for a failed pixel) and its breakpoints
##   bp_start       bfast's history_break start: the first valid history date after the last
##                  selected break (date 0 when none; -1 -> N for a pixel without a test)
##   bp_magnitudes  fit after minus fit before at the first valid date after each selected break
##                  (segment least squares in acc, Cholesky; a pivot below K eps of the diagonal's
##                  largest marks a segment rank-deficient: NaN)
## Two builds (variable kernels): "steps" the first five kernels above; "fit" bp_post, bp_start and
## bp_magnitudes, one pixel a work-item with its K x K system in registers, fitted to the device by
## the breakpoints Plan's fit_params (SG: Intel's sub-group size, grf: its register mode, a build
## parameter; WAVES: AMD's fewest waves per SIMD), which the first part has no use for (on Intel's
## Max the large-GRF build would halve the steps' hardware threads for nothing).
## The formulas are those of the host code (bfast/api.py, breaks_api.py, breakpoints.py), in the
## same order of operations (FP_CONTRACT off: no fused multiply-adds the host has not).
## Variables: real (the data's computation type), acc (float64 where the device has it, else
## real), in_type, has_nodata, K, kernels; q (optional): the last q of the K columns are per pixel, read
## from XP[(t q + j) M + p] (clts.bfast.pixel_device), bp_post / bp_start / bp_magnitudes take it.
<%include file="/common/real.cl.mako"/>
<%
    q = context.get("q", 0)
    XPA = ", __global const acc* restrict XP" if q else ""
%>\
% if acc == "double" and real != "double":
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
% endif
#pragma OPENCL FP_CONTRACT OFF
typedef ${in_type} in_t;
typedef ${acc} acc;

inline real load_real(__global const in_t* y, const long i, const real nodata)
{
    real v = (real)y[i];
% if has_nodata:
    if (v == nodata) v = REAL_NAN;
% endif
    return v;
}
% if kernels == "steps":

__kernel void gather_raw(__global const in_t* restrict src, const long off, const int ld,
                         const int a, const int m, const int mp, const int tail,
                         __global in_t* restrict dst)
{
    const int j = get_global_id(0), r = get_global_id(1);
    if (j >= mp) return;
    dst[(long)r * mp + j] = j < m ? src[off + (long)r * ld + a + j] : (in_t)0;
    if (r == 0 && j < tail)
        dst[(long)get_global_size(1) * mp + j] = (in_t)0;
}

__kernel void gather_real(__global const in_t* restrict src, const long off, const int ld,
                          const int a, const int m, const int mp, const real nodata,
                          __global real* restrict dst)
{
    const int j = get_global_id(0), r = get_global_id(1);
    if (j >= mp) return;
    dst[(long)r * mp + j] = j < m ? load_real(src, off + (long)r * ld + a + j, nodata)
                                  : REAL_NAN;
}

__kernel void first_valid(__global const in_t* restrict y, const long off, const int M,
                          __global const int* restrict hs, __global int* restrict out,
                          const int n, const int N, const int given, const real nodata)
{
    const int p = get_global_id(0);
    if (p >= M) return;
    const int s = hs[p];
    int r = s >= N ? -1 : s;
    if (given) {
        r = -1;
        for (int t = max(s, 0); t < n; ++t)
            if (!isnan(load_real(y, off + (long)t * M + p, nodata))) { r = t; break; }
    }
    out[p] = r;
}

__kernel void coef_post(__global real* restrict coef, __global real* restrict sigma,
                        __global real* restrict pred, __global const int* restrict status,
                        const int M, const int N, const int trend, const acc center,
                        const acc scale)
{
    const int p = get_global_id(0);
    if (p >= M) return;
    const int st = status[p];
    if (st != 0 && st != 3) {   // no fit (zero variance: an exact one)
        for (int a = 0; a < ${K}; ++a) coef[(long)a * M + p] = REAL_NAN;
        for (int t = 0; t < N; ++t) pred[(long)t * M + p] = REAL_NAN;
        sigma[p] = REAL_NAN;
    } else if (trend) {         // basis 1, (t - center) / scale -> 1, t
        const acc b0 = (acc)coef[p], b1 = (acc)coef[M + p];
        const acc c = b1 * center;
        const acc d = c / scale;
        coef[M + p] = (real)(b1 / scale);
        coef[p] = (real)(b0 - d);
    }
}

__kernel void bp_select(__global const real* restrict rss, __global const int* restrict nobs,
                        __global const int* restrict status, __global const int* restrict bp,
                        const int M, const int B, const int use_lwz, const acc l2pi,
                        __global const acc* restrict floor,
                        __global int* restrict sel_out, __global int* restrict bp_out,
                        __global acc* restrict bic_out, __global acc* restrict lwz_out)
{
    const int p = get_global_id(0);
    if (p >= M) return;
    const acc n = (acc)nobs[p];
    const acc logn = log(n);
    const acc fl = floor[p];
    acc best = INFINITY;
    int sel = 0;
    for (int m = 0; m <= B; ++m) {
        acc r = (acc)rss[(long)m * M + p];
        if (!isnan(r) && r < fl) r = fl;    // below the rounding floor: an exact fit
        const acc mm = (acc)m;
        acc t1 = log(r) + (acc)1;
        t1 = t1 - logn;
        t1 = t1 + l2pi;
        t1 = n * t1;
        acc t2 = logn * (acc)(${K} + 1);
        t2 = t2 * (mm + (acc)1);
        const acc bic = t1 + t2;
        acc q = (acc)(${K} + 1) * (mm + (acc)1);
        q = q - (acc)1;
        const acc d = n - q;
        acc l1 = r / d;
        l1 = log(l1);
        acc l2 = q * (acc)0.299;
        l2 = l2 * pow(logn, (acc)2.1);
        l2 = l2 / n;
        const acc lwz = l1 + l2;
        bic_out[(long)m * M + p] = bic;
        lwz_out[(long)m * M + p] = lwz;
        acc v = use_lwz ? lwz : bic;
        v = isnan(v) ? INFINITY : v;
        if (v < best) { best = v; sel = m; }
    }
    if (status[p] != 0) sel = -1;
    sel_out[p] = sel;
    for (int j = 0; j < B; ++j) {
        const int row = sel * (sel - 1) / 2;
        bp_out[(long)j * M + p] = (sel > 0 && j < sel) ? bp[(long)(row + j) * M + p] : -1;
    }
}

% else:
% if q:
## date t's row of pixel p's design: X's K - q shared columns, then the pixel's own q
static inline void design_row(__global const acc* X, __global const acc* XP, const int t,
                              const int p, const int M, acc* xr)
{
%   for a in range(K - q):
    xr[${a}] = X[(long)t * ${K - q} + ${a}];
%   endfor
%   for j in range(q):
    xr[${K - q + j}] = XP[((long)t * ${q} + ${j}) * M + p];
%   endfor
}
% endif

## whether the Gram matrix g0 .. g{K K - 1} (K x K, full, row-major scalars) has an eigenvalue
## at or below tol2 times its largest, into int `out` (cyclic Jacobi; numpy input asks eigvalsh
## the same). Scalars and unrolled loops: nothing indexed at run time, so the matrix stays in
## registers (an array indexed by loop variables was kept on the GPUs' stack).
<%def name="gram_deficient(out)">\
<% KK = [(a, b) for a in range(K) for b in range(a + 1, K)] %>\
        for (int sweep = 0; sweep < 50; ++sweep) {
            acc off = 0, dia = 0;
%   for i in range(K):
            dia = dia + g${i * K + i} * g${i * K + i};
%     for j in range(i + 1, K):
            off = off + g${i * K + j} * g${i * K + j};
%     endfor
%   endfor
            if (!(off > (acc)1e-30 * dia)) break;
%   for a, b in KK:
            if (g${a * K + b} != 0) {
                const acc apq = g${a * K + b};
                const acc th = (g${b * K + b} - g${a * K + a}) / (2 * apq);
                const acc t = (th >= 0 ? (acc)1 : (acc)-1) / (fabs(th) + sqrt(th * th + 1));
                const acc c = 1 / sqrt(t * t + 1), s = t * c;
%     for k in range(K):
                { const acc x = g${k * K + a}, z = g${k * K + b};       // columns a, b
                  g${k * K + a} = c * x - s * z; g${k * K + b} = s * x + c * z; }
%     endfor
%     for k in range(K):
                { const acc x = g${a * K + k}, z = g${b * K + k};       // rows a, b
                  g${a * K + k} = c * x - s * z; g${b * K + k} = s * x + c * z; }
%     endfor
            }
%   endfor
        }
        {
            acc lo = g0, hi = g0;
%   for i in range(1, K):
            lo = fmin(lo, g${i * K + i}); hi = fmax(hi, g${i * K + i});
%   endfor
            ${out} = !(lo > tol2 * hi);
        }
</%def>
## the per-pixel kernels' fit to the device (the breakpoints Plan's fit_params): SG, the
## sub-group size (Intel GPUs), WAVES, the fewest waves per SIMD (AMD GPUs), 0 or absent: the
## compiler's choice
<%def name="fit()">\
${sg.reqd(context.get("SG", 0))}\
${sg.waves(context.get("WAVES", 0))}\
</%def>

${fit()}\
__kernel void bp_post(__global const in_t* restrict y, const long off, const int M, const int N,
                      __global const acc* restrict X${XPA}, __global int* restrict status,
                      __global const int* restrict hh, __global const int* restrict nobs,
                      __global int* restrict bmax, __global real* restrict rss,
                      __global int* restrict bp, const int B1, const int NB, const int kc,
                      const int rank_check, const acc tol2, const acc eps, const real nodata,
                      __global acc* restrict floor_out)
{
    const int p = get_global_id(0);
    if (p >= M) return;
    const int st = status[p];
    int code = 0;
    if (st == 0 && kc > ${K} && hh[p] <= kc) {
        code = 1;
    } else if (rank_check && st == 0 && ${"1" if q else "nobs[p] < N"}) {
        acc ${", ".join(f"g{i} = 0" for i in range(K * K))};
        for (int t = 0; t < N; ++t) {
            if (isnan(load_real(y, off + (long)t * M + p, nodata))) continue;
% if q:
            acc xt[${K}];
            design_row(X, XP, t, p, M, xt);
% else:
            __global const acc* xt = X + (long)t * ${K};
% endif
%   for a in range(K):
%     for b in range(K):
            { const acc w = xt[${a}] * xt[${b}]; g${a * K + b} += w; }
%     endfor
%   endfor
        }
        int deficient;
${gram_deficient("deficient")}\
        if (deficient) code = 4;
    }
    if (code) {
        status[p] = code;
        bmax[p] = 0;
        for (int m = 0; m < B1; ++m) rss[(long)m * M + p] = REAL_NAN;
        for (int j = 0; j < NB; ++j) bp[(long)j * M + p] = -1;
    }
    acc s = 0, n = 0;
    for (int t = 0; t < N; ++t) {
        const real v = load_real(y, off + (long)t * M + p, nodata);
        if (isnan(v)) continue;
        const acc r = (acc)v;
        const acc r2 = r * r;
        s = s + r2;
        n = n + 1;
    }
    acc f = n * eps;
    f = f * eps;
    f = f * s;
    f = isfinite(f) ? f : (acc)0;
    floor_out[p] = fmax(f, (acc)${"DBL_MIN" if acc == "double" else "FLT_MIN"});
}

__kernel void bp_start(__global const in_t* restrict y, const long off, const int M,
                       __global const int* restrict sel, __global const int* restrict bps,
                       const int n, const int N, const real nodata, __global int* restrict out${", __global const int* restrict status" if q else ""})
{
    const int p = get_global_id(0);
    if (p >= M) return;
% if q:
    if (status[p] == 4) { out[p] = 0; return; }     // singular design: its monitoring fit is too
% endif
    const int s = sel[p];
    if (s < 0) { out[p] = N; return; }      // not tested (status 1 of the monitor)
    const int last = s > 0 ? bps[(long)(s - 1) * M + p] : -1;
    int start = 0;      // no valid date after the last break: date 0, as numpy's argmax
    for (int t = last + 1; t < n; ++t)
        if (!isnan(load_real(y, off + (long)t * M + p, nodata))) { start = t; break; }
    out[p] = start;
}

## one segment's least-squares fit over the valid dates lo < t <= hi: Cholesky of the Gram
## matrix; returns 0 where a pivot is below K eps times the largest diagonal entry. Unrolled
## (constant indices: registers, as gram_deficient).
<% G = lambda a, b: f"g[{a * K - a * (a - 1) // 2 + b - a}]" %>\
static inline int fit_segment(__global const in_t* y, const long off, const int M, const int p,
% if q:
                              __global const acc* X, __global const acc* XP, const int lo,
                              const int hi, const real nodata, acc* beta)
% else:
                              __global const acc* X, const int lo, const int hi,
                              const real nodata, acc* beta)
% endif
{
    acc g[${K * (K + 1) // 2}], z[${K}];
%   for i in range(K * (K + 1) // 2):
    g[${i}] = 0;
%   endfor
%   for i in range(K):
    z[${i}] = 0;
%   endfor
    for (int t = lo + 1; t <= hi; ++t) {
        const real v = load_real(y, off + (long)t * M + p, nodata);
        if (isnan(v)) continue;
        const acc yv = (acc)v;
% if q:
        acc xt[${K}];
        design_row(X, XP, t, p, M, xt);
% else:
        __global const acc* xt = X + (long)t * ${K};
% endif
<% qi = 0 %>\
%   for a in range(K):
%     for b in range(a, K):
        { const acc w = xt[${a}] * xt[${b}]; g[${qi}] = g[${qi}] + w; }
<% qi += 1 %>\
%     endfor
        { const acc w = xt[${a}] * yv; z[${a}] = z[${a}] + w; }
%   endfor
    }
    acc dmax = 0;
%   for a in range(K):
    dmax = fmax(dmax, ${G(a, a)});
%   endfor
    const acc tol = (acc)${K} * (acc)${"DBL_EPSILON" if acc == "double" else "FLT_EPSILON"} * dmax;
%   for j in range(K):
    {                                           // G = L L' in place (lower part in G(i, j))
        acc d = ${G(j, j)};
%     for k in range(j):
        d = d - ${G(k, j)} * ${G(k, j)};
%     endfor
        if (!(d > tol)) return 0;
        const acc l = sqrt(d);
        ${G(j, j)} = l;
%     for i in range(j + 1, K):
        {
            acc s = ${G(j, i)};
%       for k in range(j):
            s = s - ${G(k, i)} * ${G(k, j)};
%       endfor
            ${G(j, i)} = s / l;
        }
%     endfor
    }
%   endfor
%   for i in range(K):
    {                                           // L w = z
        acc s = z[${i}];
%     for k in range(i):
        s = s - ${G(k, i)} * z[${k}];
%     endfor
        z[${i}] = s / ${G(i, i)};
    }
%   endfor
%   for i in range(K - 1, -1, -1):
    {                                           // L' beta = w
        acc s = z[${i}];
%     for k in range(i + 1, K):
        s = s - ${G(i, k)} * beta[${k}];
%     endfor
        beta[${i}] = s / ${G(i, i)};
    }
%   endfor
    return 1;
}

${fit()}\
__kernel void bp_magnitudes(__global const in_t* restrict y, const long off, const int M,
                            const int N, __global const acc* restrict X${XPA},
                            __global const int* restrict sel, __global const int* restrict bps,
                            const int B, const real nodata, __global acc* restrict mags)
{
    const int p = get_global_id(0);
    if (p >= M) return;
    const int s = sel[p];
    for (int j = 0; j < B; ++j) mags[(long)j * M + p] = NAN;
    if (s <= 0) return;
    acc prev[${K}], beta[${K}];
    int prev_ok = 0, lo = -1;
    for (int k = 0; k <= s; ++k) {
        int hi = k < s ? bps[(long)k * M + p] : N - 1;
        if (hi < 0) hi = N - 1;
        const int ok = fit_segment(y, off, M, p, X${", XP" if q else ""}, lo, hi, nodata, beta);
        if (k > 0) {
            int first = 0;  // the first valid date after the break (0 when none, as argmax)
            for (int t = lo + 1; t < N; ++t)
                if (!isnan(load_real(y, off + (long)t * M + p, nodata))) { first = t; break; }
            acc m = 0;
% if q:
            acc xf[${K}];
            design_row(X, XP, first, p, M, xf);
% endif
%   for a in range(K):
            {
                const acc d = beta[${a}] - prev[${a}];
                const acc w = ${f"xf[{a}]" if q else f"X[(long)first * {K} + {a}]"} * d;
                m = m + w;
            }
%   endfor
            mags[(long)(k - 1) * M + p] = (ok && prev_ok) ? m : NAN;
        }
%   for a in range(K):
        prev[${a}] = beta[${a}];
%   endfor
        prev_ok = ok;
        lo = hi;
    }
}
% endif
