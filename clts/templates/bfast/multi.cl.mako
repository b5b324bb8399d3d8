<%namespace name="sg" file="/common/subgroup.cl.mako"/>\
## BFAST-Monitor, multi-kernel version (Gieseke et al.'s "Ours"): masked Gram kernel (lanes pixels per
## work-item, the K x K tile in registers), batched Gauss-Jordan inversion in local memory (one
## work-group of 2K x K work-items per pixel, Gieseke et al.'s Fig. 5) that also forms beta, then the sweep.
## GP > 0 ("rows", GPUs): the Gram kernel with K work-items per pixel (row a of the Gram matrix
## each), GP pixels per work-group, pixels innermost.
## BT: R's boundary tabulated by bfast_bounds for the sweep; SG: sub-group size the sweep
## requires on Intel GPUs (0: none).
## Variables: as fused.cl.mako, and GP, BT, SG.
<%namespace file="/bfast/common.cl.mako" import="*"/>
<%include file="/bfast/common.cl.mako"/>
<%
    def L(l):
        return "" if lanes == 1 else ".s%x" % l
    NG = K * (K + 1) // 2 + K + 2
    def gidx(a, b):
        a, b = min(a, b), max(a, b)
        return a * K - a * (a - 1) // 2 + (b - a)
    QP = context.get("q", 0)        # per-pixel regressors: the last QP of the K columns
    KS = K - QP
    XPA = "__global const xreal* restrict XP, " if QP else ""
%>
// G rows: upper triangle of the Gram matrix (row-major), then X'y (K), the valid count and
// the largest |y| of the valid history values
% if GP:
// "rows": work-item (a, q) accumulates row a of pixel q's Gram matrix, g{j} = G[a][a + j], and
// (X'y)_a; row 0 also the count and ymax. No work-item holds the K x K matrix; the same
// operations in the same order per entry as the one-work-item kernel below.
__kernel __attribute__((reqd_work_group_size(${GP * K}, 1, 1)))
void bfast_gram(__global const in_t* restrict y, const int Mp, const int Mreal,
                __global const real* restrict X, ${XPA}const real nodata,
                __global real* restrict G
% if history == "ROC":
                , __global const int* restrict hist_start
% endif
                , const int nh, const int Nt)
{
    const int lid = get_local_id(0);
    const int a = lid / ${GP}, q = lid - a * ${GP};   // (no %: see roc.cl.mako)
    const int p = get_group_id(0) * ${GP} + q;
    if (p >= Mreal) return;
% if history == "ROC":
    const real hs = (real)hist_start[p];
% endif
% for j in range(K):
    real g${j} = 0;
% endfor
    real rhs = 0, cnt = 0, ymax = 0;
    for (int t = 0; t < nh; ++t) {
        const real yv = load_y1(y, (long)t * Mp + p, nodata);
        real ok = isnan(yv) ? (real)0 : (real)1;
% if history == "ROC":
        ok = (real)t < hs ? (real)0 : ok;
% endif
        const real y0 = (isnan(yv) ? (real)0 : yv) * ok;
        cnt += ok;
        ymax = fmax(ymax, fabs(y0));
% if QP:
        // row t of the design from column a on: shared columns from X, the pixel's from XP
%   for j in range(K):
        const real xq${j} = ${j} < ${K} - a ? (a + ${j} < ${KS} ? X[t * ${KS} + a + ${j}]
                            : (real)XP[((long)t * ${QP} + a + ${j - KS}) * Mp + p]) : (real)0;
%   endfor
        const real xm = ok * xq0;
%   for j in range(K):
        if (${j} < ${K} - a) g${j} = mad(xm, xq${j}, g${j});
%   endfor
        rhs = mad(y0, xq0, rhs);
% else:
        __global const real* xt = X + t * ${K} + a;
        const real xm = ok * xt[0];
% for j in range(K):
        if (${j} < ${K} - a) g${j} = mad(xm, xt[${j}], g${j});
% endfor
        rhs = mad(y0, xt[0], rhs);
% endif
    }
    const int row = a * ${K} - a * (a - 1) / 2;      // gidx(a, a)
% for j in range(K):
    if (${j} < ${K} - a) G[(long)(row + ${j}) * Mreal + p] = g${j};
% endfor
    G[(long)(${K * (K + 1) // 2} + a) * Mreal + p] = rhs;
    if (a == 0) {
        G[(long)${NG - 2} * Mreal + p] = cnt;
        G[(long)${NG - 1} * Mreal + p] = ymax;
    }
}
% else:
__kernel void bfast_gram(__global const in_t* restrict y, const int Mp, const int Mreal,
                         __global const real* restrict X, ${XPA}const real nodata,
                         __global real* restrict G
% if history == "ROC":
                         , __global const int* restrict hist_start
% endif
                         , const int nh, const int Nt)
{
    const int p0 = get_global_id(0) * ${lanes};
    if (p0 >= Mp) return;
% if history == "ROC":
    V hsv = (V)0;
%   for l in range(lanes):
    hsv${L(l)} = (real)((p0 + ${l} < Mreal) ? hist_start[p0 + ${l}] : 0);
%   endfor
% endif
${masked_gram()}
% for l in range(lanes):
    if (p0 + ${l} < Mreal) {
%   for a in range(K):
%     for b in range(a, K):
        G[(long)${gidx(a, b)} * Mreal + p0 + ${l}] = g${a}_${b}${L(l)};
%     endfor
        G[(long)${K * (K + 1) // 2 + a} * Mreal + p0 + ${l}] = rhs${a}${L(l)};
%   endfor
        G[(long)${NG - 2} * Mreal + p0 + ${l}] = cnt${L(l)};
        G[(long)${NG - 1} * Mreal + p0 + ${l}] = ymax${L(l)};
    }
% endfor
}
% endif

// beta = G^-1 X'y by Gauss-Jordan on [G | I] in local memory; row K of beta = singular flag
__kernel __attribute__((reqd_work_group_size(${2 * K}, ${K}, 1)))
void bfast_invert(__global const real* restrict G, const int Mreal, __global real* restrict beta)
{
    __local real A[${K}][${2 * K}];
    __local real dg[${K}];
    __local int sing;
    const int j = get_local_id(0), i = get_local_id(1);
    const int p = get_group_id(0);
    const int a = min(i, j), b = max(i, j);
    if (j < ${K})
        A[i][j] = G[(long)(a * ${K} - a * (a - 1) / 2 + (b - a)) * Mreal + p];
    else
        A[i][j] = (j - ${K} == i) ? (real)1 : (real)0;
    if (j == 0) dg[i] = G[(long)(i * ${K} - i * (i - 1) / 2) * Mreal + p];
    if (i == 0 && j == 0) sing = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int q = 0; q < ${K}; ++q) {
        const real vq = A[0][q];
        const int bad = !(vq > (real)${tol} * dg[q]);
        real tmp;
        if (bad) {
            tmp = A[i][j];
        } else {
            const real x = A[0][j] / vq;
            tmp = (i == ${K - 1}) ? x : A[i + 1][j] - A[i + 1][q] * x;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        A[i][j] = tmp;
        if (bad && i == 0 && j == 0) sing = 1;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (j == 0) {
        real s = 0;
        for (int c = 0; c < ${K}; ++c)
            s += A[i][${K} + c] * G[(long)(${K * (K + 1) // 2} + c) * Mreal + p];
        beta[(long)i * Mreal + p] = s;
        if (i == 0) beta[(long)${K} * Mreal + p] = (real)sing;
    }
}

% if BT:
// R's MOSUM (CUSUM: process "cusum") boundary for every valid history count nb (0..n) and monitoring count j
// (0..N-n): x = (nb + j) / nb, the sweep's inline expression (the same bits); the sweep reads
// it instead of evaluating a double log per date (registers, GPUs)
__kernel void bfast_bounds(const real crit, __global real* restrict btab, const int nh,
                           const int Nt)
{
    const int nb = get_global_id(0), j = get_global_id(1);     // btab[j * (n + 1) + nb]
    if (nb > nh) return;
    const real nbf = (real)nb;
    const real cf = nbf + (real)j;
    const real x = cf / nbf;
% if process in ("cusum", "re"):
    const real xm1 = (cf - nbf) / nbf;
    btab[j * (nh + 1) + nb] = sqrt(x * xm1 * (crit * crit + log(x / xm1)));
% else:
    btab[j * (nh + 1) + nb] = x > (real)LOGPLUS_E ? crit * sqrt((real)2 * log(fmax(x, (real)1)))
                                                  : crit * (real)M_SQRT2;
% endif
}

% endif
${sg.reqd(SG)}\
% if context.get("LS", 0):
__attribute__((reqd_work_group_size(${context.get("LS")}, 1, 1)))
% endif
__kernel void bfast_sweep(__global const in_t* restrict y, const int Mp, const int Mreal,
                          __global const real* restrict X, ${XPA}const real nodata, const real crit,
                          const real hfrac, __global const ${ereal}* restrict bounds_t,
                          __global real* restrict scratch,
                          __global const real* restrict beta, __global const real* restrict G,
                          __global int* restrict breaks, __global real* restrict means,
                          __global real* restrict mags, __global int* restrict valids,
                          __global int* restrict status
% if history == "ROC":
                          , __global const int* restrict hist_start
% endif
% if BT:
                          , __global const real* restrict btab
% endif
% if detailed:
                          , __global real* restrict coef_out, __global real* restrict sigma_out,
                          __global real* restrict mosum_out, __global real* restrict bounds_out,
                          __global real* restrict pred_out
% endif
                          , const int nh, const int Nt)
{
    const int p0 = get_global_id(0) * ${lanes};
    if (p0 >= Mp) return;
% for a in range(K):
    V bt${a};
% endfor
    V ymax;
    int nb[${lanes}], bad[${lanes}];
% if history == "ROC":
    int hs[${lanes}];
% endif
% for l in range(lanes):
    {
        const int ok = p0 + ${l} < Mreal;
%   for a in range(K):
        bt${a}${L(l)} = ok ? beta[(long)${a} * Mreal + p0 + ${l}] : (real)0;
%     if detailed:
        if (ok) coef_out[(long)${a} * Mreal + p0 + ${l}] = bt${a}${L(l)};
%     endif
%   endfor
        nb[${l}] = ok ? (int)G[(long)${NG - 2} * Mreal + p0 + ${l}] : 0;
        ymax${L(l)} = ok ? G[(long)${NG - 1} * Mreal + p0 + ${l}] : (real)0;
        bad[${l}] = ok ? beta[(long)${K} * Mreal + p0 + ${l}] != (real)0 : 1;
% if history == "ROC":
        hs[${l}] = ok ? hist_start[p0 + ${l}] : 0;
% endif
    }
% endfor
% if history == "ROC":
    V hsv = (V)0;
%   for l in range(lanes):
    hsv${L(l)} = (real)hs[${l}];
%   endfor
% endif
% if process == "re":
    // RE: the history's Gram matrix for the recursive estimates
%   for a in range(K):
%     for b in range(a, K):
    V g${a}_${b};
%     endfor
%   endfor
%   for l in range(lanes):
%     for a in range(K):
%       for b in range(a, K):
    g${a}_${b}${L(l)} = p0 + ${l} < Mreal ? G[(long)${gidx(a, b)} * Mreal + p0 + ${l}] : (real)${1 if a == b else 0};
%       endfor
%     endfor
%   endfor
% endif
<%include file="/bfast/sweep.cl.mako"/>
}
