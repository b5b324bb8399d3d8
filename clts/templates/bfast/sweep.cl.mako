## The monitoring sweep, included inside a kernel body (fused and multi versions share it).
## In scope: p0 (first pixel of this work-item), V bt0..bt{K-1} (coefficients), int nb[W] (valid
## history values), int bad[W] (singular fit), and with ROC int hs[W] + V hsv (history start date).
## Residuals of the valid values from the history start are kept compact per pixel in `scratch`
## (pixel-major, N per pixel): the MOSUM window subtracts the value h back, the median reads them.
<%
    def L(l):
        return "" if W == 1 else ".s%x" % l
%>
    // per-lane (scalar) state: compact count, window, scratch row; the rest is vector code
    int c[${W}], h[${W}];
    long so[${W}];
    V nbf = (V)0, S = (V)0, ssr = (V)0, summo = (V)0, totv = (V)0, cf = (V)0, brkv = (V)(-1);
% for l in range(W):
    c[${l}] = 0;
    h[${l}] = max((int)floor((real)nb[${l}] * hfrac), 1);
    so[${l}] = (long)(p0 + ${l}) * ${N};
    nbf${L(l)} = (real)nb[${l}];
% endfor
<%def name="step(mon)">
        const V yv = load_y(y, (long)t * Mp + p0, nodata);
        __global const real* xt = X + t * ${K};
        V pred = bt0 * xt[0];
% for a in range(1, K):
        pred = mad(bt${a}, (V)xt[${a}], pred);
% endfor
        const V r = yv - pred;
        const V isv = SEL((V)1, (V)0, isnan(yv));
        totv += isv;
% if history == "ROC":
        const V okv = SEL(isv, (V)0, (V)((real)t) < hsv);
% else:
        const V okv = isv;
% endif
% if detailed:
%   for l in range(W):
        if (p0 + ${l} < Mreal) pred_out[(long)t * Mreal + p0 + ${l}] = pred${L(l)};
%   endfor
% endif
        V dS = (V)0;
% for l in range(W):
        {
            const real rr = r${L(l)};
            const int v = okv${L(l)} != (real)0;
            scratch[so[${l}] + c[${l}]] = rr;
            const real lag = scratch[so[${l}] + max(c[${l}] - h[${l}], 0)];
            dS${L(l)} = v ? rr - (c[${l}] >= h[${l}] ? lag : (real)0) : (real)0;
            c[${l}] += v;
        }
% endfor
        S += dS;
% if not mon:
        const V r0 = SEL(r, (V)0, isnan(r)) * okv;
        ssr = mad(r0, r0, ssr);
% else:
        cf += okv;
%   if convention == "r":
        const V x = cf / nbf;
        const V bo = SEL((V)(crit * (real)M_SQRT2), crit * sqrt((real)2 * log(fmax(x, (V)1))),
                         x > (V)LOGPLUS_E);
%   else:
        const V bo = (V)bounds_t[t - ${n}];
%   endif
        summo = mad(S, okv, summo);
        brkv = SEL(brkv, (V)((real)(t - ${n})),
                   (okv > (V)0) & (fabs(S) > bo * scl) & (brkv < (V)0));
%   if detailed:
        const V mo = SEL((V)REAL_NAN, S / scl, okv > (V)0);
        const V bov = SEL((V)REAL_NAN, bo, okv > (V)0);
%     for l in range(W):
        if (p0 + ${l} < Mreal) {
            mosum_out[(long)(t - ${n}) * Mreal + p0 + ${l}] = mo${L(l)};
            bounds_out[(long)(t - ${n}) * Mreal + p0 + ${l}] = bov${L(l)};
        }
%     endfor
%   endif
% endif
</%def>
    // history: residuals, their squares, the running window sum
    for (int t = 0; t < ${n}; ++t) {
${step(False)}
    }
    const V sigma = sqrt(ssr / (nbf - (V)${dof_sub}));
    const V scl = sigma * sqrt(nbf);
    cf = nbf;       // observation count from the history start (R's boundary argument j / n)
% if detailed:
%   for l in range(W):
    if (p0 + ${l} < Mreal) sigma_out[p0 + ${l}] = sigma${L(l)};
%   endfor
% endif
    // monitoring: MOSUM, boundary, first break, mean
    for (int t = ${n}; t < ${N}; ++t) {
${step(True)}
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
        valids[p] = (int)totv${L(l)};
        breaks[p] = fail ? -2 : (int)brkv${L(l)};
        means[p] = fail ? fval : (nm > 0 ? summo${L(l)} / ((real)nm * scl${L(l)}) : REAL_NAN);
% if magnitudes:
        mags[p] = fail ? fval : median_inplace(scratch + so[${l}] + nb[${l}], nm);
% endif
    }
% endfor
