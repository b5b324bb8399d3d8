## Shared pieces of the BFAST-Monitor kernels: lane types, masked loads with on-device nodata
## conversion, and an in-place median (quickselect) for the magnitudes.
## Variables: real, lanes (pixels per work-item, 1/4/8), in_type (C type of the cube), has_nodata.
<%include file="/common/real.cl.mako"/>
<%
    V = "real" if lanes == 1 else "real%d" % lanes
%>
typedef ${V} V;
typedef ${in_type} in_t;
#define LOGPLUS_E 2.718281828459045
% if lanes == 1:
#define SEL(a, b, c) ((c) ? (b) : (a))
% else:
#define SEL(a, b, c) select(a, b, c)
% endif

inline V load_y(__global const in_t* y, const long off, const real nodata)
{
% if lanes == 1:
    V v = (real)y[off];
% else:
    V v = convert_${real}${lanes}(vload${lanes}(0, y + off));
% endif
% if has_nodata:
    v = SEL(v, (V)REAL_NAN, v == (V)nodata);
% endif
    return v;
}

inline real load_y1(__global const in_t* y, const long off, const real nodata)
{
    real v = (real)y[off];
% if has_nodata:
    if (v == nodata) v = REAL_NAN;
% endif
    return v;
}

% if TM:
// time-major scratch (TM): element i of a pixel's values at a[i * st]; the same selection and
// median as below (the same swaps in the same order: identical results)
<% AT = lambda i: f"a[(long)({i}) * st]" %>
% else:
<% AT = lambda i: f"a[{i}]" %>
% endif
// k-th smallest of a[0..m) (Wirth's selection, in place); after it a[0..k) <= a[k] <= a[k+1..m)
inline real select_kth(__global real* a, const int m, const int k${', const int st' if TM else ''})
{
    int l = 0, r = m - 1;
    while (l < r) {
        const real x = ${AT('k')};
        int i = l, j = r;
        do {
            while (${AT('i')} < x) ++i;
            while (x < ${AT('j')}) --j;
            if (i <= j) { const real t = ${AT('i')}; ${AT('i')} = ${AT('j')}; ${AT('j')} = t; ++i; --j; }
        } while (i <= j);
        if (j < k) l = i;
        if (k < i) r = j;
    }
    return ${AT('k')};
}

inline real median_inplace(__global real* a, const int m${', const int st' if TM else ''})
{
    if (m <= 0) return REAL_NAN;
    const int k = m / 2;
    const real hi = select_kth(a, m, k${', st' if TM else ''});
    if (m & 1) return hi;
    real lo = ${AT(0)};
    for (int i = 1; i < k; ++i) lo = fmax(lo, ${AT('i')});
    return (real)0.5 * (lo + hi);
}

## The masked Gram matrix over the history, shared by the fused and multi-kernel versions:
## declares and accumulates V g{a}_{b} (upper triangle), rhs{a} (X'y), cnt (valid values) and
## ymax (largest |y| of them: the scale the sweep divides residuals by, so that their squares
## never overflow). Needs in scope: y, Mp, p0, X, nodata (and hsv with history "ROC").
<%def name="masked_gram()">
% for a in range(K):
%   for b in range(a, K):
    V g${a}_${b} = (V)0;
%   endfor
    V rhs${a} = (V)0;
% endfor
    V cnt = (V)0, ymax = (V)0;
    for (int t = 0; t < ${n}; ++t) {
        const V yv = load_y(y, (long)t * Mp + p0, nodata);
        V ok = SEL((V)1, (V)0, isnan(yv));
% if history == "ROC":
        ok = SEL(ok, (V)0, (V)((real)t) < hsv);
% endif
        const V y0 = SEL(yv, (V)0, isnan(yv)) * ok;
        cnt += ok;
        ymax = fmax(ymax, fabs(y0));
        __global const real* xt = X + t * ${K};
% for a in range(K):
        const real x${a} = xt[${a}];
        const V xm${a} = ok * x${a};
% endfor
% for a in range(K):
%   for b in range(a, K):
        g${a}_${b} = mad(xm${a}, (V)x${b}, g${a}_${b});
%   endfor
        rhs${a} = mad(y0, (V)x${a}, rhs${a});
% endfor
    }
</%def>
