<%namespace name="sg" file="/common/subgroup.cl.mako"/>\
<%namespace name="best" file="/mp/prescreen_best.cl.mako"/>\
## preSCRIMP's float screen (included by subdiag.cl.mako inside its pre_fused section: pre_d8,
## pre_plain_block, pre_exact8 and FW come from there)
<% FQ, FC = FUSED_FQ, FUSED_FC %>
## pre_fused32: pre_fused's dot products screened in float (16 lanes a vector instead of 8),
## the same winners bit for bit. bw[j] bounds |d_float - d_double| for any query (pre_bound);
## a window's best query is re-checked in double (the same fused multiply-adds in the same
## order as pre_fused, pre_d8) only where its float distance less the bound is at most its
## current best rounded up to float (rounding is monotone, so nothing that could win is
## skipped); rowD holds the block's float minimum (double where the block or the query is
## flagged, which take pre_fused's double path whole) and pre_rowmin32 re-checks every block
## whose lower bound is within the smallest upper bound. Work-item: pre_fused's FW windows as
## FW / 16 float16 vectors, FQ queries a step.
<% FC16, FQ32 = FC // 2, FQ %>

## query q's double distances to the work-item's windows (pre_fused's arithmetic), folded
## into the windows' best (cb, ci) and returned as their minimum
static inline double pre_q_double(const int q, const int jb, const int pw, const int l, const int m,
                           const int ez, __global const double *zq, __global const int *qidx,
                           __global const double *Tp, __global const double *mu,
                           __global const double *ss, __global const double *r,
                           __global const int *fl, double8 *cb, long8 *ci)
{
    const int i = qidx[q], fi = fl[i];
    const int plain = pw && fi == 0;
    __global const double *z = zq + (size_t)q * m;
% for h in range(FC):
    double8 a${h} = (double8)0;
% endfor
    for (int t = 0; t < m; ++t) {
        const double8 zb = (double8)z[t];
% for h in range(FC):
        a${h} = fma(zb, vload8(0, Tp + jb + ${8 * h} + t), a${h});
% endfor
    }
    double8 rm;
% for h in range(FC):
    {
        const double8 d8 = pre_d8(a${h}, jb + ${8 * h}, plain,
                                  plain ? vload8(0, r + jb + ${8 * h}) : (double8)0, l, m, ez,
                                  i, fi, Tp, mu, ss, r, fl);
        const long8 take = d8 < cb[${h}];
        cb[${h}] = select(cb[${h}], d8, take);
        ci[${h}] = select(ci[${h}], (long8)(i), take);
        rm = ${"d8" if h == 0 else "select(rm, d8, d8 < rm)"};
    }
% endfor
    const double4 r4 = select(rm.lo, rm.hi, rm.hi < rm.lo);
    const double2 r2 = select(r4.lo, r4.hi, r4.hi < r4.lo);
    return r2.y < r2.x ? r2.y : r2.x;
}

## window j's bound on |distance in float - distance in double| (pre_fused32): c1 b + c0,
## b = |x_j| r_j = sqrt(ss_j + m mu_j^2) r_j (the window's norm in the scaled series from its
## mean and centred sum of squares), twice over and rounded up to float; inf (always
## re-checked) where not finite or where the window's float copy could overflow
inline float pre_bw(const int j, const int m, const double c1, const double c0,
                    __global const double *mu, __global const double *ss,
                    __global const double *r)
{
    const double b = sqrt(ss[j] + m * mu[j] * mu[j]) * r[j] * (1 + 1e-6);
    const double v = 2 * (c1 * b + c0);
    return isfinite(v) && fabs(mu[j]) + sqrt(ss[j]) < 1e30 ? convert_float_rtp(v) : INFINITY;
}

## the float copies of the scaled series (work-item j < np, the padded series) and of r, each
## window's bound bw and each block's largest bound bblk (0 where a window of it is flagged or
## past l: pre_fused32 computes that block in double)
__kernel void pre_bound(const int np, const int l, const int m, const double c1,
                        const double c0, __global const double *Tp,
                        __global const double *mu, __global const double *ss,
                        __global const double *r, __global const int *fl,
                        __global float *Tp32, __global float *r32, __global float *bw,
                        __global float *bblk)
{
    const int j = get_global_id(0);
    if (j >= np) return;
    Tp32[j] = (float)Tp[j];
    if (j >= l) return;
    r32[j] = (float)r[j];
    bw[j] = pre_bw(j, m, c1, c0, mu, ss, r);
    if (j % FW == 0) {
        float bb = 0;
        if (pre_plain_block(j, l, fl))
            for (int c = 0; c < FW; ++c) bb = fmax(bb, pre_bw(j + c, m, c1, c0, mu, ss, r));
        bblk[j / FW] = bb;
    }
}

${sg.reqd(SUBGROUP)}\
__kernel void pre_fused32(const int nq, const int l, const int m, const int ez,
                          __global const double *zq, __global const float *zq32,
                          __global const int *qidx, __global const double *Tp,
                          __global const float *Tp32, __global const double *mu,
                          __global const double *ss, __global const double *r,
                          __global const float *r32, __global const float *bw,
                          __global const int *fl, __global double *colP,
                          __global int *colI, __global double *rowD)
{
    const int blk = get_global_id(0), jb = blk * FW, nbk = (l + FW - 1) / FW;
    if (jb >= l) return;
    const int pw = pre_plain_block(jb, l, fl);
    double8 cb[${FC}];
    long8 ci[${FC}];
${best.load("cb[{}]", "ci[{}]", FC)}    if (!pw) {      // a flagged window or one past l: pre_fused's double path whole
        for (int q = 0; q < nq; ++q)
            rowD[(size_t)q * nbk + blk] = pre_q_double(q, jb, pw, l, m, ez, zq, qidx, Tp, mu,
                                                      ss, r, fl, cb, ci);
    } else {
% for h in range(FC16):
        const float16 rj${h} = vload16(0, r32 + jb + ${16 * h});
        const float16 bj${h} = vload16(0, bw + jb + ${16 * h});
        float16 cu${h} = convert_float16_rtp((double16)(cb[${2 * h}], cb[${2 * h + 1}]));
% endfor
        const float twom = 2 * m;
        for (int qb = 0; qb < nq; qb += ${FQ32}) {
            const int nb = min(${FQ32}, nq - qb);
% for b in range(FQ32):
            __global const float *z${b} = zq32 + (size_t)(qb + min(${b}, nb - 1)) * m;
%   for h in range(FC16):
            float16 a${b}_${h} = (float16)0;
%   endfor
% endfor
            for (int t = 0; t < m; ++t) {
% for h in range(FC16):
                const float16 x${h} = vload16(0, Tp32 + jb + ${16 * h} + t);
% endfor
% for b in range(FQ32):
                {
                    const float16 zb = (float16)z${b}[t];
%   for h in range(FC16):
                    a${b}_${h} = fma(zb, x${h}, a${b}_${h});
%   endfor
                }
% endfor
            }
% for b in range(FQ32):
            if (${b} < nb) {
                const int q = qb + ${b}, i = qidx[q];
                if (fl[i]) {        // a flagged query: double
                    rowD[(size_t)q * nbk + blk] = pre_q_double(q, jb, pw, l, m, ez, zq, qidx,
                                                              Tp, mu, ss, r, fl, cb, ci);
%   for h in range(FC16):
                    cu${h} = convert_float16_rtp((double16)(cb[${2 * h}], cb[${2 * h + 1}]));
%   endfor
                } else {
                    const int near = jb + FW - 1 >= i - ez && jb <= i + ez;
                    float16 rm = (float16)INFINITY;
                    int recheck = 0;
%   for h in range(FC16):
                    {
                        const float16 corr = fmin(a${b}_${h} * rj${h}, (float16)1);
                        float16 d = fmax((float16)0, twom * ((float16)1 - corr));
                        if (near) {
                            const int16 dj = (int16)(jb + ${16 * h} - i) + (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
                            d = select(d, (float16)INFINITY, (dj <= (int16)(ez)) & (dj >= (int16)(-ez)));
                        }
                        rm = fmin(rm, d);
                        recheck |= any(!(d - bj${h} > cu${h})) << ${h};     // NaN: re-checked
                    }
%   endfor
                    if (recheck) {  // a window whose best this query may take: double
                        const __global double *z = zq + (size_t)q * m;
                        const int fi = 0;
%   for h in range(FC16):
                        if (recheck & ${1 << h}) {
                            double8 e0 = (double8)0, e1 = (double8)0;
                            for (int t = 0; t < m; ++t) {
                                const double8 zd = (double8)z[t];
                                e0 = fma(zd, vload8(0, Tp + jb + ${16 * h} + t), e0);
                                e1 = fma(zd, vload8(0, Tp + jb + ${16 * h + 8} + t), e1);
                            }
%     for e in range(2):
                            {
                                const double8 d8 = pre_d8(e${e}, jb + ${16 * h + 8 * e}, 1,
                                                          vload8(0, r + jb + ${16 * h + 8 * e}),
                                                          l, m, ez, i, fi, Tp, mu, ss, r, fl);
                                const long8 take = d8 < cb[${2 * h + e}];
                                cb[${2 * h + e}] = select(cb[${2 * h + e}], d8, take);
                                ci[${2 * h + e}] = select(ci[${2 * h + e}], (long8)(i), take);
                            }
%     endfor
                            cu${h} = convert_float16_rtp((double16)(cb[${2 * h}], cb[${2 * h + 1}]));
                        }
%   endfor
                    }
                    const float8 r8 = fmin(rm.lo, rm.hi);
                    const float4 r4 = fmin(r8.lo, r8.hi);
                    const float2 r2 = fmin(r4.lo, r4.hi);
                    rowD[(size_t)q * nbk + blk] = (double)fmin(r2.x, r2.y);
                }
            }
% endfor
        }
    }
${best.store("cb[{}]", "ci[{}]", FC)}}

## pre_fused32's per-query minima: every block whose lower bound (its minimum less the largest
## bound of its windows; no bound where the block or the query is flagged) is within the
## smallest upper bound, its distances recomputed as pre_fused made them (pre_d8), scanned in
## ascending window order: pre_rows's first minimum (-1 and inf where none)
__kernel void pre_rowmin32(const int nq, const int nbk, const int l, const int m, const int ez,
                           __global const double *zq, __global const int *qidx,
                           __global const double *Tp, __global const double *mu,
                           __global const double *ss, __global const double *r,
                           __global const int *fl, __global const float *bblk,
                           __global const double *rowD, __global int *nn,
                           __global double *dn)
{
    const int q = get_global_id(0);
    if (q >= nq) return;
    const int i = qidx[q], fi = fl[i];
    double up = INFINITY;
    for (int b = 0; b < nbk; ++b)
        up = fmin(up, rowD[(size_t)q * nbk + b] + (fi ? 0 : (double)bblk[b]));
    double best = INFINITY;
    int bj = -1;
    {
        __global const double *z = zq + (size_t)q * m;
        for (int b = 0; b < nbk; ++b) {
            if (rowD[(size_t)q * nbk + b] - (fi ? 0 : (double)bblk[b]) > up)
                continue;       // NaN: re-checked
            const int jb = b * FW, plain = pre_plain_block(jb, l, fl) && fi == 0;
% for h in range(FC):
            double8 a${h} = (double8)0;
% endfor
            for (int t = 0; t < m; ++t) {
                const double8 zb = (double8)z[t];
% for h in range(FC):
                a${h} = fma(zb, vload8(0, Tp + jb + ${8 * h} + t), a${h});
% endfor
            }
% for h in range(FC):
            {
                const double8 d8 = pre_d8(a${h}, jb + ${8 * h}, plain,
                                          plain ? vload8(0, r + jb + ${8 * h}) : (double8)0, l,
                                          m, ez, i, fi, Tp, mu, ss, r, fl);
%   for c in range(8):
                if (d8.s${c} < best) { best = d8.s${c}; bj = jb + ${8 * h + c}; }
%   endfor
            }
% endfor
        }
    }
    nn[q] = bj;
    dn[q] = best;
}
