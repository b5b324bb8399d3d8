## The monitoring sweep, included inside a kernel body (fused and multi versions share it).
## In scope: p0 (first pixel of this work-item), V bt0..bt{K-1} (coefficients), int nb[W] (valid
## history values), int bad[W] (singular fit), and with ROC int hs[W] + V hsv (history start date).
## Residuals of the valid values from the history start are kept compact per pixel in `scratch`
## (pixel-major, N per pixel): the MOSUM window subtracts the value h back, the median reads them.
<%
    def L(l):
        return "" if W == 1 else ".s%x" % l
%>
    int c[${W}], h[${W}], brk[${W}], tot[${W}];
    real S[${W}], summo[${W}], ssr[${W}], scl[${W}];
    __global real* sc[${W}];
% for l in range(W):
    c[${l}] = 0; tot[${l}] = 0; brk[${l}] = -1; S[${l}] = 0; summo[${l}] = 0; ssr[${l}] = 0;
    h[${l}] = max((int)floor((real)nb[${l}] * hfrac), 1);
    sc[${l}] = scratch + (long)(p0 + ${l}) * ${N};
% endfor
    // history: residuals, their squares, the running window sum
    for (int t = 0; t < ${n}; ++t) {
        const V yv = load_y(y, (long)t * Mp + p0, nodata);
        __global const real* xt = X + t * ${K};
        V pred = bt0 * xt[0];
% for a in range(1, K):
        pred = mad(bt${a}, (V)xt[${a}], pred);
% endfor
        const V r = yv - pred;
% if detailed:
%   for l in range(W):
        if (p0 + ${l} < Mreal) pred_out[(long)t * Mreal + p0 + ${l}] = pred${L(l)};
%   endfor
% endif
% for l in range(W):
        if (!isnan(yv${L(l)})) {
            ++tot[${l}];
% if history == "ROC":
            if (t >= hs[${l}]) {
% else:
            {
% endif
                const real rr = r${L(l)};
                ssr[${l}] += rr * rr;
                sc[${l}][c[${l}]] = rr;
                S[${l}] += rr;
                if (c[${l}] >= h[${l}]) S[${l}] -= sc[${l}][c[${l}] - h[${l}]];
                ++c[${l}];
            }
        }
% endfor
    }
% for l in range(W):
    {
        const real dof = (real)(nb[${l}] - ${dof_sub});
        const real sigma = sqrt(ssr[${l}] / dof);
        scl[${l}] = sigma * sqrt((real)nb[${l}]);
% if detailed:
        if (p0 + ${l} < Mreal) sigma_out[p0 + ${l}] = sigma;
% endif
    }
% endfor
    // monitoring: MOSUM, boundary, first break, mean
    for (int t = ${n}; t < ${N}; ++t) {
        const V yv = load_y(y, (long)t * Mp + p0, nodata);
        __global const real* xt = X + t * ${K};
        V pred = bt0 * xt[0];
% for a in range(1, K):
        pred = mad(bt${a}, (V)xt[${a}], pred);
% endfor
        const V r = yv - pred;
% if convention == "bfast-py":
        const real bnd = bounds_t[t - ${n}];
% endif
% if detailed:
%   for l in range(W):
        if (p0 + ${l} < Mreal) pred_out[(long)t * Mreal + p0 + ${l}] = pred${L(l)};
%   endfor
% endif
% for l in range(W):
        {
            real mo = REAL_NAN, bo = REAL_NAN;
            if (!isnan(yv${L(l)})) {
                ++tot[${l}];
                const real rr = r${L(l)};
                sc[${l}][c[${l}]] = rr;
                S[${l}] += rr;
                if (c[${l}] >= h[${l}]) S[${l}] -= sc[${l}][c[${l}] - h[${l}]];
                ++c[${l}];
% if convention == "r":
                const real x = (real)c[${l}] / (real)nb[${l}];
                bo = x > (real)LOGPLUS_E ? crit * sqrt((real)2 * log(x)) : crit * (real)M_SQRT2;
% else:
                bo = bnd;
% endif
                summo[${l}] += S[${l}];
                if (brk[${l}] < 0 && fabs(S[${l}]) > bo * scl[${l}]) brk[${l}] = t - ${n};
                mo = S[${l}] / scl[${l}];
            }
% if detailed:
            if (p0 + ${l} < Mreal) {
                mosum_out[(long)(t - ${n}) * Mreal + p0 + ${l}] = mo;
                bounds_out[(long)(t - ${n}) * Mreal + p0 + ${l}] = bo;
            }
% else:
            (void)mo; (void)bo;
% endif
        }
% endfor
    }
% for l in range(W):
    if (p0 + ${l} < Mreal) {
        const int p = p0 + ${l};
        const int nm = c[${l}] - nb[${l}];
% if convention == "r":
        const int fail = bad[${l}] || (int)floor(hfrac * (real)nb[${l}]) <= 1 || nb[${l}] <= ${K};
        const real fval = REAL_NAN;
% else:
        const int fail = bad[${l}] || nb[${l}] <= 5 || nm <= 5;
        const real fval = 0;
% endif
        valids[p] = tot[${l}];
        breaks[p] = fail ? -2 : brk[${l}];
        means[p] = fail ? fval : (nm > 0 ? summo[${l}] / ((real)nm * scl[${l}]) : REAL_NAN);
% if magnitudes:
        mags[p] = fail ? fval : median_inplace(sc[${l}] + nb[${l}], nm);
% endif
    }
% endfor
