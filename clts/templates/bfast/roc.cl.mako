## history="ROC": R's history_roc (reverse-ordered Rec-CUSUM test), lanes pixels per work-item (realN lanes).
## Recursive residuals of the reversed valid history by Givens updates of a QR factor (stable where
## the first K values are nearly collinear, as R's exact refits are); a missing value is a rotation
## by the identity. sigma = sd(w); process cumsum(w)/(sigma sqrt(n-K)); cut when
## max |x_i| / (1 + 2 i/m) > b_level, at the first crossing of the alpha 0.05 boundary (as R does).
## Writes the index of the first history date used.
## Recursive residuals in `scratch`: N per pixel, compact (TM = 0), or time-major by date (TM = 1,
## GPUs: the residual of date t of pixel p at t * Mp + p, NaN at a date without one, so that
## adjacent work-items write and read adjacent words whatever their missing values).
## GP > 0 ("rows", GPUs): K work-items per pixel, GP pixels per work-group (see bfast_roc below).
## Variables: real, in_type, has_nodata, lanes, K, N, n, tol, TM, GP.
<%include file="/bfast/common.cl.mako"/>
<%
    def L(l):
        return "" if lanes == 1 else ".s%x" % l
    QP = context.get("q", 0)        # per-pixel regressors: the last QP of the K columns
    KS = K - QP
    XPA = "__global const xreal* restrict XP, " if QP else ""
%>
// after the Givens pass: sigma, the Rec-CUSUM test and the start date of one pixel
inline int roc_start(__global const in_t* y, const int Mp, const int p, __global const real* w,
                     const int c, const int ok, const real nodata, const real b_level,
                     const real b_05, const real ymax, const int nh)
{
    const int m = c - ${K};          // number of recursive residuals
    int s0 = 0;
    if (ok && m >= 2) {
        real mean = 0;
% if TM:
        // by date, the latest first: the order the residuals were formed in (the CPUs' i)
        int got = 0;
        #pragma unroll 1
        for (int t = (nh - 1); t >= 0; --t) {
            const real wt = w[(long)t * Mp];
            if (!isnan(wt)) { mean += wt; ++got; }
        }
        if (got != m) mean = REAL_NAN;      // a residual was NaN: the CPUs' sum is NaN too
        mean /= (real)m;
        real ss = 0;
        #pragma unroll 1
        for (int t = (nh - 1); t >= 0; --t) {
            const real wt = w[(long)t * Mp];
            if (!isnan(wt)) ss += (wt - mean) * (wt - mean);
        }
% else:
<% WI = lambda i: f"w[{i}]" %>\
        for (int i = 0; i < m; ++i) mean += ${WI("i")};
        mean /= (real)m;
        real ss = 0;
        for (int i = 0; i < m; ++i) ss += (${WI("i")} - mean) * (${WI("i")} - mean);
% endif
        const real sigma = sqrt(ss / (real)(m - 1));
        // recursive residuals within rounding of the data's scale: an exact fit, nothing to cut
        if (sigma > (real)${zv_tol} * ymax) {
            const real norm = (real)1 / (sigma * sqrt((real)m));
            real cs = 0;
            int cut = 0, first = 0;
% if TM:
            int i = 0;
            #pragma unroll 1
            for (int t = (nh - 1); t >= 0; --t) {
                const real wt = w[(long)t * Mp];
                if (isnan(wt)) continue;
                ++i;
                cs += wt;
% else:
            for (int i = 1; i <= m; ++i) {
                cs += ${WI("i - 1")};
% endif
                const real x = fabs(cs * norm);
                const real shape = (real)1 + (real)2 * (real)i / (real)m;
                if (x > b_level * shape) cut = 1;
                if (!first && x > b_05 * shape) first = i;
            }
            if (cut && first) s0 = m + 1 - first;   // 0-based, among the valid history values
        }
    }
    int start = 0, cnt = 0;
    for (int t = 0; t < nh; ++t) {
        if (isnan(load_y1(y, (long)t * Mp + p, nodata))) continue;
        if (cnt == s0) { start = t; break; }
        ++cnt;
    }
    return start;
}

% if GP:
<%
    S = K * (K + 1) // 2 - 1    # values handed on per pixel and step: row a passes x_{a+1..K-1}, y
    SL = max(S, 1)              # local slots per pixel and buffer
%>
// "rows": work-item (a, q) holds row a of pixel q's factor, r{j} = R[a][a + j], and z_a; no
// work-item holds the K x K matrix. Row a appends date t at step s = n-1-t+a (a pipeline over
// the rows): row 0 reads the date, row a > 0 the row rotated by rows 0..a-1, handed on in
// local memory (two buffers, one barrier per step; value j of stage a at
// hand[buffer][(a*K - a(a-1)/2 + j) * GP + q]); the y position leaving the last row is the
// recursive residual. The same operations as the one-work-item kernel below, in the same order
// per matrix entry: the same results.
__kernel __attribute__((reqd_work_group_size(${GP * K}, 1, 1)))
void bfast_roc(__global const in_t* restrict y, const int Mp,
               __global const real* restrict X, ${XPA}const real nodata,
               const real b_level, const real b_05,
               __global real* restrict scratch, __global int* restrict hist_start,
               const int nh, const int Nt)
{
    __local real hand[2][${SL * GP}];
    __local real diag[${K * GP}];       // |R[a][a]| once the first K valid values are in
    const int lid = get_local_id(0);
    const int a = lid / ${GP}, q = lid - a * ${GP};   // (no %: Oclgrind cannot check the freeze LLVM puts on a div/rem pair)
    const int p = get_group_id(0) * ${GP} + q;
    const int live = p < Mp;
    // stage a-1 (x_a.., then y) and stage a (x_{a+1}.., then y), in units of GP
    const int in0 = a ? ((a - 1) * ${K} - (a - 1) * (a - 2) / 2) * ${GP} + q : 0;
    const int out0 = (a * ${K} - a * (a - 1) / 2) * ${GP} + q;
% for j in range(K):
    real r${j} = 0;
% endfor
    real z = 0;
    int c = 0;
    #pragma unroll 1
    for (int s = 0; s < (nh + ${K - 1}); ++s) {      // (rolled: unrolled, IGC spills at small n)
        const int t = (nh - 1) - s + a;
        __local const real* hin = hand[(s + 1) & 1] + in0;
        __local real* hout = hand[s & 1] + out0;
        if (live && t >= 0 && t < nh) {
            const real yv = load_y1(y, (long)t * Mp + p, nodata);
            const int valid = !isnan(yv);
            const real ok = valid ? (real)1 : (real)0;
            __global const real* xt = X + t * ${KS};
            real yy;
            if (a == 0)
                yy = valid ? yv : (real)0;
            else
                yy = hin[(${K} - a) * ${GP}];
            const real x0 = a ? hin[0] : ok * xt[0];
            const real rr = sqrt(mad(r0, r0, x0 * x0));
            const real cc = rr > (real)0 ? r0 / rr : (real)1;
            const real ss = x0 / (rr > (real)0 ? rr : (real)1);
            r0 = mad(cc, r0, ss * x0);
% for j in range(1, K):
            if (${j} < ${K} - a) {
%   if j < KS:
                const real xj = a ? hin[${j * GP}] : ok * xt[${j}];
%   else:
                const real xj = a ? hin[${j * GP}] : ok * XP[((long)t * ${QP} + ${j - KS}) * Mp + p];
%   endif
                const real tk = r${j};
                r${j} = mad(cc, tk, ss * xj);
                if (a < ${K - 1}) hout[${(j - 1) * GP}] = mad(-ss, tk, cc * xj);
            }
% endfor
            { const real tk = z; z = mad(cc, tk, ss * yy); yy = mad(-ss, tk, cc * yy); }
            if (a < ${K - 1}) hout[(${K - 1} - a) * ${GP}] = yy;
%   if TM:
            // (row t of the last row a = K-1 as n+K-2-s: IGC spills at SIMD32 with t here)
            if (a == ${K - 1})
                scratch[(long)((nh + ${K - 2}) - s) * Mp + p] = valid && c >= ${K} ? yy : REAL_NAN;
            if (valid) {
%   else:
            if (valid) {
                if (a == ${K - 1} && c >= ${K}) scratch[(long)p * Nt + c - ${K}] = yy;
%   endif
                ++c;
                if (c == ${K}) diag[a * ${GP} + q] = fabs(r0);   // they must determine the fit
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (live && a == ${K - 1}) {
        real dmax = 0, dmin = REAL_MAX, ymax = 0;
        if (c >= ${K}) {        // every row of the pixel has written its diagonal by now
            for (int b = 0; b < ${K}; ++b) {
                dmax = fmax(dmax, diag[b * ${GP} + q]);
                dmin = fmin(dmin, diag[b * ${GP} + q]);
            }
        }
        #pragma unroll 1
        for (int t = 0; t < nh; ++t) {       // the largest |y| of the valid history values
            const real yv = load_y1(y, (long)t * Mp + p, nodata);
            if (!isnan(yv)) ymax = fmax(ymax, fabs(yv));
        }
        const int okl = c < ${K} || dmin > (real)${tol} * dmax;
        hist_start[p] = roc_start(y, Mp, p, scratch + (long)p${"" if TM else " * Nt"}, c, okl,
                                  nodata, b_level, b_05, ymax, nh);
    }
}
% else:
__kernel void bfast_roc(__global const in_t* restrict y, const int Mp,
                        __global const real* restrict X, ${XPA}const real nodata,
                        const real b_level, const real b_05,
                        __global real* restrict scratch, __global int* restrict hist_start,
                        const int nh, const int Nt)
{
    const int p0 = get_global_id(0) * ${lanes};
    if (p0 >= Mp) return;
    // square-root information filter: R upper triangular, z = Q'y; appending a row by Givens
    // rotations leaves the recursive residual in the row's y position
% for a in range(K):
%   for b in range(a, K):
    V r${a}_${b} = (V)0;
%   endfor
    V z${a} = (V)0;
% endfor
    V ymaxv = (V)0;
    int c[${lanes}], okl[${lanes}];
% for l in range(lanes):
    c[${l}] = 0; okl[${l}] = 1;
% endfor
    for (int t = nh - 1; t >= 0; --t) {
        const V yv = load_y(y, (long)t * Mp + p0, nodata);
        const V ok = SEL((V)1, (V)0, isnan(yv));
        V yy = SEL(yv, (V)0, isnan(yv));
        ymaxv = fmax(ymaxv, fabs(yy));
        __global const real* xt = X + t * ${KS};
% for a in range(K):
%   if a < KS:
        V x${a} = ok * xt[${a}];
%   else:
        V x${a} = ok * load_xp(XP, ((long)t * ${QP} + ${a - KS}) * Mp + p0);
%   endif
% endfor
% for k in range(K):
        {
            const V rr = sqrt(mad(r${k}_${k}, r${k}_${k}, x${k} * x${k}));
            const V nz = SEL((V)0, (V)1, rr > (V)0);
            const V cc = SEL((V)1, r${k}_${k} / rr, rr > (V)0);
            const V ss = x${k} / SEL((V)1, rr, rr > (V)0);
%   for b in range(k, K):
            { const V tk = r${k}_${b}; r${k}_${b} = mad(cc, tk, ss * x${b}); x${b} = mad(-ss, tk, cc * x${b}); }
%   endfor
            { const V tk = z${k}; z${k} = mad(cc, tk, ss * yy); yy = mad(-ss, tk, cc * yy); }
            (void)nz;
        }
% endfor
% for l in range(lanes):
%   if TM:
        if (p0 + ${l} < Mp)
            scratch[(long)t * Mp + p0 + ${l}] = ok${L(l)} != (real)0 && c[${l}] >= ${K} ? yy${L(l)}
                                                                                 : REAL_NAN;
        if (ok${L(l)} != (real)0 && p0 + ${l} < Mp) {
%   else:
        if (ok${L(l)} != (real)0 && p0 + ${l} < Mp) {
            if (c[${l}] >= ${K}) scratch[(long)(p0 + ${l}) * Nt + c[${l}] - ${K}] = yy${L(l)};
%   endif
            ++c[${l}];
            if (c[${l}] == ${K}) {      // the first K values must determine the fit (else no cut)
                real dmax = 0, dmin = REAL_MAX;
%   for a in range(K):
                dmax = fmax(dmax, fabs(r${a}_${a}${L(l)})); dmin = fmin(dmin, fabs(r${a}_${a}${L(l)}));
%   endfor
                if (!(dmin > (real)${tol} * dmax)) okl[${l}] = 0;
            }
        }
% endfor
    }
% for l in range(lanes):
    if (p0 + ${l} < Mp)
        hist_start[p0 + ${l}] = roc_start(y, Mp, p0 + ${l}, scratch + (long)(p0 + ${l})${"" if TM else " * Nt"},
                                          c[${l}], okl[${l}], nodata, b_level, b_05,
                                          ymaxv${L(l)}, nh);
% endfor
}
% endif
