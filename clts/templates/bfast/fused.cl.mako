## BFAST-Monitor, fused version: one work-item per lanes pixels (lanes = 1, 4, 8 lanes of realW), everything
## in registers: masked Gram matrix and X'y over the history, Cholesky solve, then the sweep.
## Variables: real, lanes, in_type, has_nodata, K, N, n, history ("all"/"ROC"), convention ("r"/"bfast-py"),
## dof_sub, detailed, magnitudes, tol (relative pivot threshold for "singular").
<%namespace name="sg" file="/common/subgroup.cl.mako"/>\
<%namespace file="/bfast/common.cl.mako" import="*"/>
<%include file="/bfast/common.cl.mako"/>
<%
    def L(l):
        return "" if lanes == 1 else ".s%x" % l
    MT = "int" if lanes == 1 else ("long%d" % lanes if real == "double" else "int%d" % lanes)
    QP = context.get("q", 0)        # per-pixel regressors: the last QP of the K columns
    XPA = "__global const xreal* restrict XP, " if QP else ""
%>
<%def name="gram_rows()">
## The GPU profiles' form of masked_gram() (TM, one pixel per work-item): the valid flag an int
## (the history start compared as an int), the count an int, and row a's masked x_a formed just
## before row a (ok ? x_a : 0 for ok * x_a: the same sums, as adding +-0 changes none), so that
## fewer values live across the loop (ptxas sm_90, float64 history="ROC": 138 -> 126 registers
## with the time-major sweep, 25 % occupancy at work-group 128)
% for a in range(K):
%   for b in range(a, K):
    V g${a}_${b} = (V)0;
%   endfor
    V rhs${a} = (V)0;
% endfor
    V ymax = (V)0;
    int cnti = 0;
    for (int t = 0; t < nh; ++t) {
        const V yv = load_y(y, (long)t * Mp + p0, nodata);
% if history == "ROC":
        const int ok = !isnan(yv) && t >= hs[0];
% else:
        const int ok = !isnan(yv);
% endif
        const V y0 = SEL(yv, (V)0, isnan(yv)) * (ok ? (V)1 : (V)0);
        cnti += ok;
        ymax = fmax(ymax, fabs(y0));
        __global const real* xt = X + t * ${K - QP};
% for a in range(K):
%   if a < K - QP:
        const real x${a} = xt[${a}];
%   else:
        const real x${a} = load_xp(XP, ((long)t * ${QP} + ${a - K + QP}) * Mp + p0);
%   endif
% endfor
% for a in range(K):
        {
            const V xm = ok ? x${a} : (V)0;
%   for b in range(a, K):
            g${a}_${b} = mad(xm, (V)x${b}, g${a}_${b});
%   endfor
            rhs${a} = mad(y0, (V)x${a}, rhs${a});
        }
% endfor
    }
    const V cnt = (V)cnti;
</%def>\
% if context.get("LS", 0):
__attribute__((reqd_work_group_size(${context.get("LS")}, 1, 1)))
% endif
${sg.waves(context.get("WAVES", 0))}\
__kernel void bfast_fused(__global const in_t* restrict y, const int Mp, const int Mreal,
                          __global const real* restrict X, ${XPA}const real nodata, const real crit,
                          const real hfrac, __global const ${ereal}* restrict bounds_t,
                          __global real* restrict scratch,
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
                          , const int nh, const int Nt)
{
    const int p0 = get_global_id(0) * ${lanes};
    if (p0 >= Mp) return;
% if history == "ROC":
    int hs[${lanes}];
    V hsv = (V)0;
%   for l in range(lanes):
    hs[${l}] = (p0 + ${l} < Mreal) ? hist_start[p0 + ${l}] : 0;
    hsv${L(l)} = (real)hs[${l}];
%   endfor
% endif
    // masked Gram matrix (upper triangle) and X'y over the history
% if TM and lanes == 1:
${gram_rows()}
% else:
${masked_gram()}
% endif
    // Cholesky G = L L' (a pivot below tol * diagonal marks the lane singular), then solve
    ${MT} sing = (${MT})0;
% for j in range(K):
    V d${j} = g${j}_${j};
%   for k in range(j):
    d${j} = mad(-l${j}_${k}, l${j}_${k}, d${j});
%   endfor
    sing |= (d${j} <= (V)${tol} * g${j}_${j}) | isnan(d${j});
    d${j} = SEL(d${j}, (V)1, (d${j} <= (V)${tol} * g${j}_${j}) | isnan(d${j}));
    const V l${j}_${j} = sqrt(d${j});
    const V il${j} = (V)1 / l${j}_${j};
%   for i in range(j + 1, K):
    V s${i}_${j} = g${j}_${i};
%     for k in range(j):
    s${i}_${j} = mad(-l${i}_${k}, l${j}_${k}, s${i}_${j});
%     endfor
    const V l${i}_${j} = s${i}_${j} * il${j};
%   endfor
% endfor
% for i in range(K):
    V z${i} = rhs${i};
%   for k in range(i):
    z${i} = mad(-l${i}_${k}, z${k}, z${i});
%   endfor
    z${i} *= il${i};
% endfor
% for i in reversed(range(K)):
    V bt${i} = z${i};
%   for k in range(i + 1, K):
    bt${i} = mad(-l${k}_${i}, bt${k}, bt${i});
%   endfor
    bt${i} *= il${i};
% endfor
% if detailed:
%   for a in range(K):
%     for l in range(lanes):
    if (p0 + ${l} < Mreal) coef_out[(long)${a} * Mreal + p0 + ${l}] = bt${a}${L(l)};
%     endfor
%   endfor
% endif
    int nb[${lanes}], bad[${lanes}];
% for l in range(lanes):
    nb[${l}] = (int)cnt${L(l)};
    bad[${l}] = sing${L(l)} != 0;
% endfor
<%include file="/bfast/sweep.cl.mako"/>
}
