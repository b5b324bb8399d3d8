## Shared pieces of the BFAST-Monitor kernels: lane types, masked loads with on-device nodata
## conversion, and an in-place median (quickselect) for the magnitudes.
## Variables: real, lanes (pixels per work-item, 1/4/8), in_type (C type of the cube), has_nodata.
<%include file="/common/real.cl.mako"/>
% if context.get("ereal") == "double" and real != "double":
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
% endif
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
% if context.get("q", 0):
<%
    XR = context.get("ereal", real)     # the per-pixel columns' type: the estimates' (RE / ME)
    XV = XR if lanes == 1 else "%s%d" % (XR, lanes)
%>
// per-pixel regressors: the design's last q columns, the pixel's own, at XP[(t q + j) Mp + p]
// (then q centres and q scales per pixel from XP[(Nt q + j) Mp + p]: R's basis for RE / ME)
typedef ${XR} xreal;
inline V load_xp(__global const xreal* XP, const long off)
{
% if lanes == 1:
    return (V)XP[off];
% elif XR == real:
    return vload${lanes}(0, XP + off);
% else:
    return convert_${real}${lanes}(vload${lanes}(0, XP + off));
% endif
}
% if lanes > 1:
inline ${XV} load_xpe(__global const xreal* XP, const long off)
{
    return vload${lanes}(0, XP + off);
}
% endif
% endif

% if TM:
<%
    NB = 64 if real == "double" else 32
%>\
// time-major scratch (TM): the residual of date t of a pixel at a[t * st], NaN at a date not
// used. Their median by a radix select on order-preserving integer keys, 4 bits a pass: every
// pass reads a[0..m) in date order, so adjacent work-items read adjacent words (coalesced;
// Wirth's in-place selection sends each work-item to its own indices). The same order
// statistics as the CPUs' median_inplace: the same median (the same value; a zero's sign may
// differ).
<%include file="/common/rkey.cl.mako"/>
// median of the non-NaN values of a[i * st], i < m (NaN: none)
inline real median_rows(__global const real* a, const int m, const int st)
{
    rkey_t pre = 0, msk = 0;    // the digits of the k-th smallest key found so far, their bits
    int k = -1, even = 0;       // its rank among the candidates (keys matching pre in msk)
    for (int sh = ${NB - 4}; sh >= 0; sh -= 4) {
        int ${", ".join(f"n{j} = 0" for j in range(16))};
        for (int i = 0; i < m; ++i) {
            const real x = a[(long)i * st];
            const rkey_t kx = real_key(x);
            const int d = (!isnan(x) && (kx & msk) == pre) ? (int)(kx >> sh) & 15 : 16;
% for j in range(16):
            n${j} += d == ${j};
% endfor
        }
        if (k < 0) {            // the first pass counts every value
            const int cnt = ${" + ".join(f"n{j}" for j in range(16))};
            if (cnt == 0) return REAL_NAN;
            k = cnt / 2;
            even = !(cnt & 1);
        }
        int dg = -1, nd = 0;
% for j in range(16):
        if (dg < 0) { if (k < n${j}) { dg = ${j}; nd = n${j}; } else k -= n${j}; }
% endfor
        if (dg < 0) break;
        pre |= (rkey_t)dg << sh;
        msk |= (rkey_t)15 << sh;
        if (nd == 1) break;     // one candidate left: it is the k-th smallest
    }
    // the k-th smallest (the candidate) and the largest key below the candidates; k is now
    // the rank among equal candidates (> 0: the (k-1)-th smallest equals the k-th)
    rkey_t kh = 0, kl = 0;
    for (int i = 0; i < m; ++i) {
        const real x = a[(long)i * st];
        const rkey_t kx = real_key(x);
        const rkey_t km = kx & msk;
        if (!isnan(x)) {
            kh = km == pre ? kx : kh;
            kl = km < pre ? max(kl, kx) : kl;
        }
    }
    const real hi = key_real(kh);
    if (!even) return hi;
    const real lo = k > 0 ? hi : key_real(kl);
    return (real)0.5 * (lo + hi);
}
% else:
<% AT = lambda i: f"a[{i}]" %>
// k-th smallest of a[0..m) (Wirth's selection, in place); after it a[0..k) <= a[k] <= a[k+1..m)
inline real select_kth(__global real* a, const int m, const int k)
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

inline real median_inplace(__global real* a, const int m)
{
    if (m <= 0) return REAL_NAN;
    const int k = m / 2;
    const real hi = select_kth(a, m, k);
    if (m & 1) return hi;
    real lo = ${AT(0)};
    for (int i = 1; i < k; ++i) lo = fmax(lo, ${AT('i')});
    return (real)0.5 * (lo + hi);
}
% endif

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
    for (int t = 0; t < nh; ++t) {
        const V yv = load_y(y, (long)t * Mp + p0, nodata);
        V ok = SEL((V)1, (V)0, isnan(yv));
% if history == "ROC":
        ok = SEL(ok, (V)0, (V)((real)t) < hsv);
% endif
        const V y0 = SEL(yv, (V)0, isnan(yv)) * ok;
        cnt += ok;
        ymax = fmax(ymax, fabs(y0));
<% QP = context.get("q", 0) %>\
        __global const real* xt = X + t * ${K - QP};
% for a in range(K):
%   if a < K - QP:
        const real x${a} = xt[${a}];
%   else:
        const V x${a} = load_xp(XP, ((long)t * ${QP} + ${a - K + QP}) * Mp + p0);
%   endif
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
