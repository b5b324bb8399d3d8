## BFAST-Monitor, multi-kernel version (Gieseke et al.'s "Ours"): masked Gram kernel (lanes pixels per
## work-item, the K x K tile in registers), batched Gauss-Jordan inversion in local memory (one
## work-group of 2K x K work-items per pixel, Gieseke et al.'s Fig. 5) that also forms beta, then the sweep.
## Variables: as fused.cl.mako.
<%namespace file="/bfast/common.cl.mako" import="*"/>
<%include file="/bfast/common.cl.mako"/>
<%
    def L(l):
        return "" if lanes == 1 else ".s%x" % l
    NG = K * (K + 1) // 2 + K + 2
    def gidx(a, b):
        a, b = min(a, b), max(a, b)
        return a * K - a * (a - 1) // 2 + (b - a)
%>
// G rows: upper triangle of the Gram matrix (row-major), then X'y (K), the valid count and
// the largest |y| of the valid history values
__kernel void bfast_gram(__global const in_t* restrict y, const int Mp, const int Mreal,
                         __global const real* restrict X, const real nodata,
                         __global real* restrict G
% if history == "ROC":
                         , __global const int* restrict hist_start
% endif
                         )
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

__kernel void bfast_sweep(__global const in_t* restrict y, const int Mp, const int Mreal,
                          __global const real* restrict X, const real nodata, const real crit,
                          const real hfrac, __global const real* restrict bounds_t,
                          __global real* restrict scratch,
                          __global const real* restrict beta, __global const real* restrict G,
                          __global int* restrict breaks, __global real* restrict means,
                          __global real* restrict mags, __global int* restrict valids,
                          __global int* restrict status
% if history == "ROC":
                          , __global const int* restrict hist_start
% endif
% if detailed:
                          , __global real* restrict coef_out, __global real* restrict sigma_out,
                          __global real* restrict mosum_out, __global real* restrict bounds_out,
                          __global real* restrict pred_out
% endif
                          )
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
<%include file="/bfast/sweep.cl.mako"/>
}
