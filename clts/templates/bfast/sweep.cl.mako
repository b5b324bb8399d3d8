## The monitoring sweep, included inside a kernel body (fused and multi versions share it).
## In scope: p0 (first pixel of this work-item), V bt0..bt{K-1} (coefficients), int nb[lanes] (valid
## history values), int bad[lanes] (singular fit), and with ROC int hs[lanes] + V hsv (history start date).
## Residuals of the valid values from the history start are kept compact per pixel in `scratch`
## (pixel-major, N per pixel); TM (GPUs): time-major by date, the residual of date t of pixel p at
## t * Mp + p (NaN at a date not used), so that adjacent work-items write and read adjacent words
## whatever their missing values: the window's oldest residual is found by a per-pixel row
## pointer (tw) that skips the unused dates, the median by a radix select over the dates;
## BT: R's boundary read from btab (bfast_bounds in multi.cl.mako):
## the MOSUM window subtracts the value h back, the median reads them.
## process: "mosum" (the window sum) or "cusum" (the sum of every residual from the history
## start, strucchange's OLS-CUSUM, with its boundary and the zero-variance limit over j values).
<%
    def L(l):
        return "" if lanes == 1 else ".s%x" % l
%>
    // per-lane (scalar) state: compact count, window, scratch row; the rest is vector code
    int c[${lanes}], h[${lanes}];
    long so[${lanes}];
% if TM:
    int tw[${lanes}];       // row of the oldest residual the window still holds (once full)
% endif
    V nbf = (V)0, S = (V)0, ssr = (V)0, summo = (V)0, totv = (V)0, cf = (V)0, brkv = (V)(-1);
    V brkz = (V)(-1), hv = (V)0;   // zero-variance break (see below), window length
    // residuals are divided by the largest |y| of the valid history values (ymax): the MOSUM,
    // its boundary test and mean do not depend on the scale, and squares of data near the
    // largest float no longer overflow; sigma and the magnitudes are scaled back
    const V yscale = SEL((V)1, ymax, (ymax > (V)0) & (isinf(ymax) == 0));
    const V inv_s = (V)1 / yscale;
    // +-inf in the data, or coefficients that overflowed: the pixel fails (status 4)
    V nonfin = (V)0;
    {
        V bsum = bt0;
% for a in range(1, K):
        bsum += bt${a};
% endfor
        nonfin = SEL(nonfin, (V)1, isinf(bsum) | isnan(bsum));
    }
% for l in range(lanes):
    c[${l}] = 0;
% if TM:
    tw[${l}] = 0;
% endif
    h[${l}] = max((int)floor((real)nb[${l}] * hfrac), 1);
    so[${l}] = (long)(p0 + ${l})${"" if TM else " * Nt"};
    nbf${L(l)} = (real)nb[${l}];
    hv${L(l)} = (real)h[${l}];
% endfor
<%def name="step(mon)">
        const V yv = load_y(y, (long)t * Mp + p0, nodata);
        __global const real* xt = X + t * ${K};
        V pred = bt0 * xt[0];
% for a in range(1, K):
        pred = mad(bt${a}, (V)xt[${a}], pred);
% endfor
        const V r = (yv - pred) * inv_s;
        const V isv = SEL((V)1, (V)0, isnan(yv));
        nonfin = SEL(nonfin, (V)1, isinf(yv));
        totv += isv;
% if history == "ROC":
        const V okv = SEL(isv, (V)0, (V)((real)t) < hsv);
% else:
        const V okv = isv;
% endif
% if detailed:
%   for l in range(lanes):
        if (p0 + ${l} < Mreal) pred_out[(long)t * Mreal + p0 + ${l}] = pred${L(l)};
%   endfor
% endif
        V dS = (V)0;
% for l in range(lanes):
        {
            const real rr = r${L(l)};
            const int v = okv${L(l)} != (real)0;
% if TM:
            scratch[so[${l}] + (long)t * Mp] = v ? rr : REAL_NAN;
% if process == "cusum":
            dS${L(l)} = v ? rr : (real)0;     // the CUSUM: every residual stays in the sum
% else:
            real lag = 0;
            if (v && c[${l}] >= h[${l}]) {      // the window is full: its oldest residual leaves
                while (tw[${l}] < t && isnan(scratch[so[${l}] + (long)tw[${l}] * Mp])) ++tw[${l}];
                lag = scratch[so[${l}] + (long)tw[${l}] * Mp];
                ++tw[${l}];
            }
            dS${L(l)} = v ? rr - lag : (real)0;
% endif
% else:
            scratch[so[${l}] + c[${l}]] = rr;
% if process == "cusum":
            dS${L(l)} = v ? rr : (real)0;     // the CUSUM: every residual stays in the sum
% else:
            const real lag = scratch[so[${l}] + max(c[${l}] - h[${l}], 0)];
            dS${L(l)} = v ? rr - (c[${l}] >= h[${l}] ? lag : (real)0) : (real)0;
% endif
% endif
            c[${l}] += v;
        }
% endfor
        S += dS;
% if not mon:
        const V r0 = SEL(r, (V)0, isnan(r)) * okv;
        ssr = mad(r0, r0, ssr);
% else:
        cf += okv;
%   if convention == "r" and BT:
        V bo;       // tabulated by bfast_bounds (the same expression as below); j-major:
                    // neighbouring pixels' counts are close, their values adjacent words
%     for l in range(lanes):
        bo${L(l)} = btab[(int)(cf${L(l)} - nbf${L(l)}) * (nh + 1) + nb[${l}]];
%     endfor
%   elif convention == "r" and process == "cusum":
        // strucchange's CUSUM boundary sqrt(x (x - 1) (crit^2 + log(x / (x - 1)))), x = j / n
        const V x = cf / nbf, xm1 = (cf - nbf) / nbf;
        const V bo = sqrt(x * xm1 * (crit * crit + log(x / xm1)));
%   elif convention == "r":
        const V x = cf / nbf;
        const V bo = SEL((V)(crit * (real)M_SQRT2), crit * sqrt((real)2 * log(fmax(x, (V)1))),
                         x > (V)LOGPLUS_E);
%   else:
        const V bo = (V)bounds_t[t - nh];
%   endif
        summo = mad(S, okv, summo);
        brkv = SEL(brkv, (V)((real)(t - nh)),
                   (okv > (V)0) & (fabs(S) > bo * scl) & (brkv < (V)0));
        brkz = SEL(brkz, (V)((real)(t - nh)),
                   (okv > (V)0) & (fabs(S) > ${"(V)" + zv_tol + " * cf" if process == "cusum" else "zlim"}) & (brkz < (V)0));
%   if detailed:
        const V mo = SEL((V)REAL_NAN, S / scl, okv > (V)0);
        const V bov = SEL((V)REAL_NAN, bo, okv > (V)0);
%     for l in range(lanes):
        if (p0 + ${l} < Mreal) {
            mosum_out[(long)(t - nh) * Mreal + p0 + ${l}] = mo${L(l)};
            bounds_out[(long)(t - nh) * Mreal + p0 + ${l}] = bov${L(l)};
        }
%     endfor
%   endif
% endif
</%def>
    // history: residuals, their squares, the running window sum
    for (int t = 0; t < nh; ++t) {
${step(False)}
    }
    const V sigma = sqrt(ssr / (nbf - (V)${dof_sub}));
    const V scl = sigma * sqrt(nbf);
    // a history fitted exactly (sigma within rounding of the data's scale, status 3): the MOSUM
    // S / sigma is infinite wherever the data leave the fit, so the break is the first
    // monitoring date whose window sum of residuals exceeds the rounding of h of them (the
    // sigma -> 0 limit of the test; strucchange with sigma = 0 breaks where S != 0)
    const V zerovar = SEL((V)0, (V)1, sigma <= (V)${zv_tol});
    const V zlim = (V)${zv_tol} * hv;
    cf = nbf;       // observation count from the history start (R's boundary argument j / n)
% if detailed:
%   for l in range(lanes):
    if (p0 + ${l} < Mreal) sigma_out[p0 + ${l}] = sigma${L(l)} * yscale${L(l)};
%   endfor
% endif
    // monitoring: MOSUM, boundary, first break, mean
    for (int t = nh; t < Nt; ++t) {
${step(True)}
    }
% for l in range(lanes):
    if (p0 + ${l} < Mreal) {
        const int p = p0 + ${l};
        const int nm = c[${l}] - nb[${l}];
% if convention == "r":
        const int few = (int)floor(hfrac * (real)nb[${l}]) <= 1 || nb[${l}] <= ${K};
        const real fval = REAL_NAN;
% else:
        const int few = nb[${l}] <= 5 || nm <= 5;
        const real fval = 0;
% endif
        // 0 tested, 1 too few valid values, 2 singular fit, 3 zero variance (tested in the
        // sigma -> 0 limit), 4 non-finite
        const int st = nonfin${L(l)} != (real)0 ? 4 : few ? 1 : bad[${l}] ? 2
                       : zerovar${L(l)} != (real)0 ? 3 : 0;
        status[p] = st;
        valids[p] = (int)totv${L(l)};
        breaks[p] = st == 3 ? (int)brkz${L(l)} : st ? -2 : (int)brkv${L(l)};
        means[p] = st == 3 ? REAL_NAN : st ? fval
                   : (nm > 0 ? summo${L(l)} / ((real)nm * scl${L(l)}) : REAL_NAN);
% if magnitudes:
        mags[p] = (st && st != 3) ? fval
                  : ${f"median_rows(scratch + so[{l}] + (long)nh * Mp, Nt - nh, Mp)" if TM else f"median_inplace(scratch + so[{l}] + nb[{l}], nm)"} * yscale${L(l)};
% endif
    }
% endfor
