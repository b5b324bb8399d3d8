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
## start, strucchange's OLS-CUSUM, with its boundary and the zero-variance limit over j values)
## or "re" (strucchange's recursive estimates: the K-vector k / (sigma^2 n) root(G_hist)
## (b_k - b_hist) in R's basis, its largest |component| the functional, its running maximum
## tested; S runs as the CUSUM for the zero-variance limit). "re" needs V g{a}_{b} (the history's
## Gram matrix, upper triangle) in scope and bounds_t = (alpha, beta) of R's trend column
## alpha + beta trend.
<%
    # RE / ME: the estimates (Gram matrices, solves, roots) in ereal, double where the device
    # has it: a moving window's fit is ill-conditioned (a few months of values with harmonics),
    # and float32 loses the coefficients' change there. EV: its vector type, TOE / TOV: the
    # conversions from / to V; bounds_t = (alpha, beta, X [N, K]) in ereal.
    EVT = ereal if lanes == 1 else "%s%d" % (ereal, lanes)
    def TOE(x):
        return "((%s)(%s))" % (EVT, x) if lanes == 1 else "convert_%s(%s)" % (EVT, x)
    def TOV(x):
        return "((V)(%s))" % x if lanes == 1 else "convert_%s%d(%s)" % (real, lanes, x)
    ETOL = "1e-30" if ereal == "double" else "1e-13f"
    ETOL1 = "1e-17" if ereal == "double" else "1e-8f"
    QP = context.get("q", 0)        # per-pixel regressors: the last QP of the K columns
    KS = K - QP
    LS = context.get("LS", 0)       # RE / ME: the K x K work arrays in local memory, LS a group
    # R's basis (ra, rb) as the date loop reads it: with LS (GPUs) through volatile pointers,
    # since the values are the same every date and the compilers hoisted their products out of
    # the loop and kept them live (ME, float64 K = 8: the 4 K (K + 1) / 2 products of the basis
    # change, 255 registers and 768 B spilled on sm_80, 464 VGPRs on gfx908; 254 / 221 without)
    RA, RB = ("rav", "rbv") if LS and not QP else ("ra", "rb")
    def XPE(t, a):      # the design's per-pixel column a at date t, as EV
        off = "((long)(%s) * %d + %d) * Mp + p0" % (t, QP, a - KS)
        return "(EV)XP[%s]" % off if lanes == 1 else "load_xpe(XP, %s)" % off
%>
<%def name="r_basis(src, conv, reset=True, ra='ra', rb='rb')">
    // A' G A into qa (full), A the change to R's basis: R's column j = ra[j] + rb[j] (column j),
    // (A' G A)_ij = ra_i ra_j G_00 + ra_i rb_j G_0j + rb_i ra_j G_i0 + rb_i rb_j G_ij; ev = I
<%
    def G(a, b):
        nm = src + "%d_%d" % (min(a, b), max(a, b))
        return TOE(nm) if conv else nm
%>    {
% for a in range(K):
        const EV gz${a} = ${G(0, a)};
% endfor
% for a in range(K):
%   for b in range(a, K):
        qa[${a * K + b}] = qa[${b * K + a}] = ${ra}[${a}] * ${ra}[${b}] * gz0 + ${ra}[${a}] * ${rb}[${b}] * gz${b}
                                 + ${rb}[${a}] * ${ra}[${b}] * gz${a} + ${rb}[${a}] * ${rb}[${b}] * ${G(a, b)};
%   endfor
% endfor
    }
% if reset:
% for a in range(K):
%   for b in range(K):
    ev[${a * K + b}] = (EV)${1 if a == b else 0};
%   endfor
% endfor
% endif
</%def>
<%def name="jacobi()">
    // eigenvalues (diagonal of qa) and eigenvectors (columns of ev) of the symmetric qa by
    // cyclic Jacobi rotations, until the off-diagonal is at rounding of the diagonal
    for (int sw = 0; sw < 40; ++sw) {
        EV off = (EV)0, dia = (EV)0;
        for (int p = 0; p < ${K}; ++p) {
            dia = mad(qa[p * ${K} + p], qa[p * ${K} + p], dia);
            for (int q = p + 1; q < ${K}; ++q) off = mad(qa[p * ${K} + q], qa[p * ${K} + q], off);
        }
% if lanes == 1:
        if (!(off > (EV)${ETOL} * dia)) break;
% else:
        if (!any(off > (EV)${ETOL} * dia)) break;
% endif
% if LS:
        #pragma unroll 1
% endif
        for (int p = 0; p < ${K - 1}; ++p) {
            for (int q = p + 1; q < ${K}; ++q) {
                const EV apq = qa[p * ${K} + q];
                // an element already at rounding of its diagonal pair in every lane: no rotation
% if lanes == 1:
                if (!(fabs(apq) > (EV)${ETOL1} * sqrt(fabs(qa[p * ${K} + p] * qa[q * ${K} + q])))) continue;
% else:
                if (!any(fabs(apq) > (EV)${ETOL1} * sqrt(fabs(qa[p * ${K} + p] * qa[q * ${K} + q])))) continue;
% endif
                const EV th = (qa[q * ${K} + q] - qa[p * ${K} + p]) / ((${ereal})2 * apq);
                EV tt = copysign((EV)1, th) / (fabs(th) + sqrt(mad(th, th, (EV)1)));
                tt = SEL(tt, (EV)0, isnan(tt) | (apq == (EV)0));
                const EV cs = (EV)1 / sqrt(mad(tt, tt, (EV)1)), sn = tt * cs;
                for (int i = 0; i < ${K}; ++i) {
                    const EV ap = qa[i * ${K} + p], aq = qa[i * ${K} + q];
                    qa[i * ${K} + p] = cs * ap - sn * aq;
                    qa[i * ${K} + q] = sn * ap + cs * aq;
                    const EV vp = ev[i * ${K} + p], vq = ev[i * ${K} + q];
                    ev[i * ${K} + p] = cs * vp - sn * vq;
                    ev[i * ${K} + q] = sn * vp + cs * vq;
                }
                for (int i = 0; i < ${K}; ++i) {
                    const EV ap = qa[p * ${K} + i], aq = qa[q * ${K} + i];
                    qa[p * ${K} + i] = cs * ap - sn * aq;
                    qa[q * ${K} + i] = sn * ap + cs * aq;
                }
            }
        }
    }
</%def>
<%def name="chol_solve(gn, un)">
        // dd = G^-1 u by Cholesky (G from a fit the history already made non-singular), then in
        // R's basis: b_R = A^-1 b
% for j in range(K):
        EV rd${j} = ${gn}${j}_${j};
%   for k in range(j):
        rd${j} = mad(-rl${j}_${k}, rl${j}_${k}, rd${j});
%   endfor
        const EV ri${j} = (EV)1 / sqrt(rd${j});
%   for i in range(j + 1, K):
        EV rs${i}_${j} = ${gn}${j}_${i};
%     for k in range(j):
        rs${i}_${j} = mad(-rl${i}_${k}, rl${j}_${k}, rs${i}_${j});
%     endfor
        const EV rl${i}_${j} = rs${i}_${j} * ri${j};
%   endfor
% endfor
% for i in range(K):
        EV rz${i} = ${un}${i};
%   for k in range(i):
        rz${i} = mad(-rl${i}_${k}, rz${k}, rz${i});
%   endfor
        rz${i} *= ri${i};
% endfor
% for i in reversed(range(K)):
        EV dd${i} = rz${i};
%   for k in range(i + 1, K):
        dd${i} = mad(-rl${k}_${i}, dd${k}, dd${i});
%   endfor
        dd${i} *= ri${i};
% endfor
% for j in range(1, K):
        dd${j} = dd${j} / ${RB}[${j}];
        dd0 = dd0 - ${RA}[${j}] * dd${j};
% endfor
</%def>
<%def name="re_start()">
    typedef ${EVT} EV;
    // R's columns ra[j] + rb[j] (column j), the design matrix in ereal; the K x K work arrays
% if QP:
    // per pixel: the columns' centres and scales (R's basis for them) after the q columns
    EV ra[${K}], rb[${K}];
%   for a in range(K):
%     if a < KS:
    ra[${a}] = (EV)bounds_t[${a}];
    rb[${a}] = (EV)bounds_t[${KS + a}];
%     else:
    ra[${a}] = ${XPE("Nt", a)};
    rb[${a}] = ${XPE("Nt", a + QP)};
%     endif
%   endfor
    __global const ${ereal}* Xe = bounds_t + ${2 * KS};
% else:
    __global const ${ereal}* ra = bounds_t;
    __global const ${ereal}* rb = bounds_t + ${K};
    __global const ${ereal}* Xe = bounds_t + ${2 * K};
%   if LS:
    volatile __global const ${ereal} *rav = ra, *rbv = rb;     // (RA, RB above)
%   endif
% endif
% if LS:
    // the K x K work arrays in local memory (LS work-items a group; GPUs: in private arrays
    // they spilled), one slice a work-item, K^2 + 1 apart (odd: adjacent work-items' same
    // element in different banks)
    __local EV lqa[${LS * (K * K + 1)}], lev[${LS * (K * K + 1)}];
    __local EV* qa = lqa + get_local_id(0) * ${K * K + 1};
    __local EV* ev = lev + get_local_id(0) * ${K * K + 1};
% else:
    EV qa[${K * K}], ev[${K * K}];
% endif
% if process == "me":
%   if LS:
    __local EV ltq[${LS * (K * K + 1)}];
    __local EV* tq = ltq + get_local_id(0) * ${K * K + 1};  // ME: the warm start's product
%   else:
    EV tq[${K * K}];            // ME: the warm start's product
%   endif
    int ewarm = 0;
% endif
    V stat = (V)0;              // strucchange's statistic: the running maximum of the functional
    EV bte0 = ${TOE("bt0")};    // the history's coefficients, for the residuals in ereal
% for a in range(1, K):
    EV bte${a} = ${TOE("bt%d" % a)};
% endfor
    const EV einv_s = ${TOE("inv_s")};
% if process == "re":
    // RE: root(A' G_hist A) (strucchange's root.matrix: V sqrt(Lambda) V'), once per pixel
${r_basis("g", True)}
${jacobi()}
%   for a in range(K):
%     for b in range(a, K):
    EV q${a}_${b} = (EV)0;
%     endfor
%   endfor
    for (int m = 0; m < ${K}; ++m) {
        const EV sl = sqrt(fmax(qa[m * ${K} + m], (EV)0));
%   for a in range(K):
        const EV e${a} = ev[${a * K} + m];
%   endfor
%   for a in range(K):
%     for b in range(a, K):
        q${a}_${b} = mad(e${a} * sl, e${b}, q${a}_${b});
%     endfor
%   endfor
    }
%   if LS:
    // the root to local memory (qa's slice, free now): fewer values live through the dates
%     for a in range(K):
%       for b in range(a, K):
    qa[${a * K + b}] = q${a}_${b};
%       endfor
%     endfor
    // read back at each date (volatile: the compiler would forward the stores and keep the
    // 36 values in registers again)
    volatile __local const EV* qv = qa;
%   endif
    // the Gram matrix and X'r of the valid values so far (X'r of the history: 0)
%   for a in range(K):
%     for b in range(a, K):
    EV gk${a}_${b} = ${TOE("g%d_%d" % (a, b))};
%     endfor
    EV u${a} = (EV)0;
%   endfor
    const EV rescale = einv_s / (${TOE("sigma")} * ${TOE("sigma")} * ${TOE("nbf")});
% endif
</%def>
<%def name="re_step()">
        // RE: the fit on every valid value so far, b_k - b_hist = G_k^-1 X'r, in R's basis,
        // times root(G_hist); the functional, scaled as R's k / (sigma^2 n)
        {
% if QP:
            EV xe[${K}];
%   for a in range(K):
            xe[${a}] = ${"(EV)Xe[t * %d + %d]" % (KS, a) if a < KS else XPE("t", a)};
%   endfor
% else:
            __global const ${ereal}* xe = Xe + t * ${K};
% endif
            const EV oke = ${TOE("okv")};
            EV pe = bte0 * xe[0];
% for a in range(1, K):
            pe = mad(bte${a}, (EV)xe[${a}], pe);
% endfor
            const EV rv = SEL((${TOE("SEL(yv, (V)0, isnan(yv))")} - pe) * einv_s, (EV)0, oke == (EV)0);
% for a in range(K):
            const EV xr${a} = oke * xe[${a}];
% endfor
% for a in range(K):
%   for b in range(a, K):
            gk${a}_${b} = mad(xr${a}, (EV)xe[${b}], gk${a}_${b});
%   endfor
            u${a} = mad(xr${a}, rv, u${a});
% endfor
        }
${chol_solve("gk", "u")}
        EV fmx = (EV)0;
% for a in range(K):
% if LS:
        fmx = fmax(fmx, fabs(${" + ".join(f"qv[{min(a, b) * K + max(a, b)}] * dd{b}" for b in range(K))}));
% else:
        fmx = fmax(fmx, fabs(${" + ".join(f"q{min(a, b)}_{max(a, b)} * dd{b}" for b in range(K))}));
% endif
% endfor
        const V proc = ${TOV("fmx * " + TOE("cf") + " * rescale")};
        stat = fmax(stat, SEL((V)0, proc, okv > (V)0));
</%def>
<%def name="me_step()">
        // ME: the fit on the window of the last h valid values (from the history start), its
        // Gram matrix and X'r summed afresh per lane (no running sums to drift), b_w - b_hist =
        // G_w^-1 X'r; the functional of root(A' G_w A) (b_w - b_hist) sqrt(h) / (sigma sqrt(n))
% for a in range(K):
%   for b in range(a, K):
        EV gw${a}_${b};
%   endfor
        EV uw${a};
% endfor
% for l in range(lanes):
        {
%   for a in range(K):
%     for b in range(a, K):
            ${ereal} sg${a}_${b} = ${1 if a == b else 0};
%     endfor
            ${ereal} su${a} = 0;
%   endfor
            if (okv${L(l)} != (real)0) {
%   for a in range(K):
%     for b in range(a, K):
                sg${a}_${b} = 0;
%     endfor
%   endfor
                int cnt = 0;
                for (int i = t; i >= ${"hs[%d]" % l if history == "ROC" else "0"} && cnt < h[${l}]; --i) {
                    const real yi = load_y1(y, (long)i * Mp + p0 + ${l}, nodata);
                    if (isnan(yi)) continue;
%   if QP:
                    ${ereal} xi[${K}];
%     for a in range(K):
                    xi[${a}] = ${"Xe[i * %d + %d]" % (KS, a) if a < KS else "XP[((long)i * %d + %d) * Mp + p0 + %d]" % (QP, a - KS, l)};
%     endfor
%   else:
                    __global const ${ereal}* xi = Xe + i * ${K};
%   endif
                    ${ereal} ri = bte0${L(l)} * xi[0];
%   for a in range(1, K):
                    ri = mad(bte${a}${L(l)}, xi[${a}], ri);
%   endfor
                    ri = ((${ereal})yi - ri) * einv_s${L(l)};
%   for a in range(K):
                    const ${ereal} xa${a} = xi[${a}];
%   endfor
%   for a in range(K):
%     for b in range(a, K):
                    sg${a}_${b} = mad(xa${a}, xa${b}, sg${a}_${b});
%     endfor
                    su${a} = mad(xa${a}, ri, su${a});
%   endfor
                    ++cnt;
                }
            }
%   for a in range(K):
%     for b in range(a, K):
            gw${a}_${b}${L(l)} = sg${a}_${b};
%     endfor
            uw${a}${L(l)} = su${a};
%   endfor
        }
% endfor
% if LS:
        // R's basis first: the window's Gram matrix then dies entry by entry in the Cholesky
${r_basis("gw", False, False, RA, RB)}
${chol_solve("gw", "uw")}
% else:
${chol_solve("gw", "uw")}
${r_basis("gw", False, False)}
% endif
        // warm start: the previous window's eigenvectors nearly diagonalise this one (one value
        // in, one out): qa = ev' G ev, the rotations then accumulate onto ev; afresh from the
        // identity every 64 dates (the rounding of the accumulated rotations stays bounded)
        if (ewarm & 63) {
% if LS:
            #pragma unroll 1
% endif
            for (int i = 0; i < ${K}; ++i)
% if LS:
                #pragma unroll 1
% endif
                for (int j = 0; j < ${K}; ++j) {
                    EV acc = (EV)0;
                    for (int m = 0; m < ${K}; ++m) acc = mad(qa[i * ${K} + m], ev[m * ${K} + j], acc);
                    tq[i * ${K} + j] = acc;
                }
% if LS:
            #pragma unroll 1
% endif
            for (int i = 0; i < ${K}; ++i)
% if LS:
                #pragma unroll 1
% endif
                for (int j = i; j < ${K}; ++j) {
                    EV acc = (EV)0;
                    for (int m = 0; m < ${K}; ++m) acc = mad(ev[m * ${K} + i], tq[m * ${K} + j], acc);
                    qa[i * ${K} + j] = acc;
                    qa[j * ${K} + i] = acc;
                }
        } else {
            for (int i = 0; i < ${K * K}; ++i) ev[i] = (EV)0;
            for (int i = 0; i < ${K}; ++i) ev[i * ${K} + i] = (EV)1;
        }
        ++ewarm;
${jacobi()}
        EV fmx = (EV)0;
        {
% for m in range(K):
            const EV zm${m} = sqrt(fmax(qa[${m * K + m}], (EV)0)) * (${" + ".join(f"ev[{a * K + m}] * dd{a}" for a in range(K))});
% endfor
% for a in range(K):
% if LS:
            // (volatile: read again rather than the 64 values of the sums above kept live)
            fmx = fmax(fmx, fabs(${" + ".join(f"((volatile __local const EV*)ev)[{a * K + m}] * zm{m}" for m in range(K))}));
% else:
            fmx = fmax(fmx, fabs(${" + ".join(f"ev[{a * K + m}] * zm{m}" for m in range(K))}));
% endif
% endfor
        }
        const V proc = ${TOV("fmx")} * sqrt(hv) / scl;
        stat = fmax(stat, SEL((V)0, proc, okv > (V)0));
</%def>
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
        __global const real* xt = X + t * ${K - QP};
        V pred = bt0 * xt[0];
% for a in range(1, K):
%   if a < K - QP:
        pred = mad(bt${a}, (V)xt[${a}], pred);
%   else:
        pred = mad(bt${a}, load_xp(XP, ((long)t * ${QP} + ${a - K + QP}) * Mp + p0), pred);
%   endif
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
% if process in ("cusum", "re"):
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
% if process in ("cusum", "re"):
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
%   elif convention == "r" and process in ("cusum", "re"):
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
%   if process in ("re", "me"):
${re_step() if process == "re" else me_step()}
        summo = mad(proc, okv, summo);
        brkv = SEL(brkv, (V)((real)(t - nh)), (okv > (V)0) & (stat > bo) & (brkv < (V)0));
%   else:
        summo = mad(S, okv, summo);
        brkv = SEL(brkv, (V)((real)(t - nh)),
                   (okv > (V)0) & (fabs(S) > bo * scl) & (brkv < (V)0));
%   endif
        brkz = SEL(brkz, (V)((real)(t - nh)),
                   (okv > (V)0) & (fabs(S) > ${"(V)" + zv_tol + " * cf" if process in ("cusum", "re") else "zlim"}) & (brkz < (V)0));
%   if detailed:
        const V mo = SEL((V)REAL_NAN, ${"proc" if process in ("re", "me") else "S / scl"}, okv > (V)0);
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
% if process in ("re", "me"):
${re_start()}
% endif
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
        const int few = (int)floor(hfrac * (real)nb[${l}]) <= 1 || nb[${l}] <= ${K}${f" || h[{l}] < {K}" if process == "me" else ""};
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
                   : (nm > 0 ? summo${L(l)} / ((real)nm${"" if process in ("re", "me") else f" * scl{L(l)}"}) : REAL_NAN);
% if magnitudes:
        mags[p] = (st && st != 3) ? fval
                  : ${f"median_rows(scratch + so[{l}] + (long)nh * Mp, Nt - nh, Mp)" if TM else f"median_inplace(scratch + so[{l}] + nb[{l}], nm)"} * yscale${L(l)};
% endif
    }
% endfor
