## Per-window statistics of a series, one work-item per window, stable: a compensated (Kahan)
## sum for the mean, then a second pass for the centred sum of squares (never a difference of
## prefix sums of squares), on the series with NaN/inf replaced by 0 (the host flags those
## windows, bit 0); flags constant windows (bit 1). NORMALIZE == 0: ``ss`` = plain sum of squares.
<%include file="/common/real.cl.mako"/>
<%
    VV = real if VW == 1 else f"{real}{VW}"
    def VL(p):
        return f"(*({p}))" if VW == 1 else f"vload{VW}(0, {p})"
    def LANE(x, l):
        return x if VW == 1 else f"{x}.s{l:x}"
%>

__kernel void window_stats(__global const real *T, const int n_windows, const int m,
                           __global real *mu, __global real *ss, __global int *flags)
{
    const int i = get_global_id(0);
    if (i >= n_windows) return;
    __global const real *x = T + i;
    // VW compensated (Kahan) partial sums per pass (pocl vectorises only explicit vector
    // types), combined with a compensated sum; the centred second pass is exact up to rounding
    const real x0 = x[0];
    ${VV} s8 = 0, c8 = 0;
    int cst = 1;
    int t = 0;
    for (; t + ${VW} <= m; t += ${VW}) {
        const ${VV} v = ${VL('x + t')};
        cst &= ${'(v == x0)' if VW == 1 else 'all(v == (' + VV + ')x0)'};
        const ${VV} y = v - c8;
        const ${VV} z = s8 + y;
        c8 = (z - s8) - y;
        s8 = z;
    }
    real s = 0, c = 0;
% for l in range(VW):
    { const real y = (${LANE('s8', l)} - ${LANE('c8', l)}) - c; const real z = s + y; c = (z - s) - y; s = z; }
% endfor
    for (; t < m; ++t) {
        const real v = x[t];
        cst &= (v == x0);
        const real y = v - c;
        const real z = s + y;
        c = (z - s) - y;
        s = z;
    }
% if NORMALIZE:
    const real mean = s / m;
    const ${VV} mean8 = (${VV})mean;
% else:
    const ${VV} mean8 = (${VV})0;
% endif
    ${VV} q8 = 0, d8 = 0;
    t = 0;
    for (; t + ${VW} <= m; t += ${VW}) {
        const ${VV} dv = ${VL('x + t')} - mean8;
        const ${VV} y = dv * dv - d8;
        const ${VV} z = q8 + y;
        d8 = (z - q8) - y;
        q8 = z;
    }
    real q = 0, cq = 0;
% for l in range(VW):
    { const real y = (${LANE('q8', l)} - ${LANE('d8', l)}) - cq; const real z = q + y; cq = (z - q) - y; q = z; }
% endfor
    for (; t < m; ++t) {
        const real dv = x[t] - ${LANE('mean8', 0)};
        const real y = dv * dv - cq;
        const real z = q + y;
        cq = (z - q) - y;
        q = z;
    }
    mu[i] = s / m;
% if NORMALIZE:
    ss[i] = cst ? (real)0 : q;
% else:
    ss[i] = q;
% endif
    flags[i] = cst ? 2 : 0;
}
