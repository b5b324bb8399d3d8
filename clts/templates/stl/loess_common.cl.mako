## Shared pieces of the STL LOESS kernels (included, not built alone).
## Moments of one fit, in coordinates u = (x - xc) / h, xc the window centre (less
## cancellation than centring on the fit point, which may lie outside the window):
##   S0 = sum w, S1 = sum w u, S2 = sum w u^2, T0 = sum w y, T1 = sum w u y  (+ S3, S4, T2 for degree 2)
## w = tricube(|x - xf| / h) (1 below .001 h, 0 above .999 h, as the netlib Fortran) x robustness weight.
<%def name="declare_moments()">
    real S0 = 0, S1 = 0, S2 = 0, T0 = 0, T1 = 0;
% if deg == 2:
    real S3 = 0, S4 = 0, T2 = 0;
% endif
</%def>
## accumulate the point at grid position p (value v, robustness weight rwv) into the moments
<%def name="accumulate(p, v, idx)">
<% rwv = ("Wrow[%s]" % idx) if use_w else "(real)1" %>
    {
        const real d_ = (real)(${p} - xf);
        const real r_ = fabs(d_);
        const real t_ = r_ * inv_h;
        real w_ = (real)1 - t_ * t_ * t_;
        w_ = (r_ <= (real)0.001 * h) ? (real)1 : ((r_ <= (real)0.999 * h) ? w_ * w_ * w_ : (real)0);
        w_ = isnan(${v}) ? (real)0 : w_ * (${rwv});
        const real yv_ = isnan(${v}) ? (real)0 : ${v};
        const real u_ = ((real)(${p}) - xc) * inv_h;
        const real wu_ = w_ * u_;
        S0 += w_; S1 += wu_; S2 += wu_ * u_; T0 += w_ * yv_; T1 += wu_ * yv_;
% if deg == 2:
        S3 += wu_ * u_ * u_; S4 += wu_ * u_ * u_ * u_; T2 += wu_ * u_ * yv_;
% endif
    }
</%def>
## the fitted value from the moments (NaN when every weight is zero), and in *slope the
## derivative of the local polynomial at the fit point per grid step (0 for degree 0 and for
## the fits that fall back to a weighted mean): the slopes cubic Hermite interpolation uses
<%def name="finish_function()">
inline real loess_finish(real S0, real S1, real S2, real T0, real T1,
                         real S3, real S4, real T2, real h, real rng, real e, real* slope) {
    *slope = 0;
    if (!(S0 > (real)0)) return REAL_NAN;
    const real m0 = T0 / S0;
% if deg == 0:
    return m0;
% else:
    if (!(h > (real)0)) return m0;
    const real a = S1 / S0;
    const real r2 = S2 / S0;
    const real c = r2 - a * a;
    if (!(sqrt(fmax(c, (real)0)) * h > (real)0.001 * rng)) return m0;
    const real m1 = T1 / S0 - a * m0;
%   if deg == 2:
    {
        const real r3 = S3 / S0, r4 = S4 / S0;
        const real c3 = r3 - (real)3 * a * r2 + (real)2 * a * a * a;
        const real c4 = r4 - (real)4 * a * r3 + (real)6 * a * a * r2 - (real)3 * a * a * a * a;
        const real det = c * (c4 - c * c) - c3 * c3;
        if (det > (real)${quad_tol} * c * c * c) {
            const real m2 = T2 / S0 - (real)2 * a * (T1 / S0) + a * a * m0;
            const real b2 = (c * m2 - c * c * m0 - c3 * m1) / det;
            const real b1 = (m1 - c3 * b2) / c;
            const real b0 = m0 - c * b2;
            const real t = e - a;
            *slope = (b1 + (real)2 * b2 * t) / h;
            return b0 + b1 * t + b2 * t * t;
        }
    }
%   endif
    *slope = (m1 / c) / h;
    return m0 + ((e - a) / c) * m1;
% endif
}
</%def>
## the prologue every version shares: decode fit (b, s, f), fetch NNS, set xf, h, rng.
<%def name="fit_args()">
    global const real* D, int d_b, int d_s,
% if use_w:
    global const real* W,
% endif
    global const int* seg_n, global const int* fitpos, int NF, int S, int B,
    global const int* nns, global const int* stats, int nb_mul,
    global real* out, int o_b, int o_s, int o_p, int o_off${", global real* slp" if hermite else ""}
</%def>
## index of output element (series b, segment s, grid position xf): plain [b][row] when out_lanes = 1,
## else interleaved by out_lanes series, [b / out_lanes][row][b % out_lanes] (what the vector moving averages read)
<%def name="out_index(b)">\
% if out_lanes > 1:
(((long)((${b}) >> ${out_lanes.bit_length() - 1}) * o_b + (long)s * o_s + (long)xf * o_p + o_off) * ${out_lanes} + ((${b}) & ${out_lanes - 1}))\
% else:
((long)(${b}) * o_b + (long)s * o_s + (long)xf * o_p + o_off)\
% endif
</%def>
<%def name="store()">
    {
        real sl_;
        real v_ = loess_finish(S0, S1, S2, T0, T1, ${"S3, S4, T2" if deg == 2 else "0, 0, 0"}, h, rng, e_, &sl_);
        if (isnan(v_) && !(xf == 0 || xf == n_s + 1) && fb >= 1) v_ = Drow[fb - 1];
        out[${out_index("b")}] = v_;
% if hermite:
        slp[${out_index("b")}] = sl_;
% endif
    }
</%def>
<%def name="decode(fit)">
    const int bs = (int)(${fit} / NF);
    const int f = (int)(${fit} - (long)bs * NF);
    const int b = bs / S;
    const int s = bs - b * S;${decode_at()}</%def>
## the rest of the prologue for the fit point (b, s, f) in scope. NNS (nns_planes): four ints
## per fit row (0) or four planes of (nb_mul ? B : 1) x S x NF words (1: GPUs, coalesced)
<%def name="decode_at()">
    const int n_s = seg_n[s];
    const int xf = fitpos[s * NF + f];
    const long nsb = (long)b * nb_mul * S + s;   // NNS row: shared by all series if nb_mul = 0
% if nns_planes:
    const long nnr = nsb * NF + f, NNS = (long)(nb_mul ? B : 1) * S * NF;
    const int lo = nns[nnr], hi = nns[NNS + nnr], fb = nns[3 * NNS + nnr];
    const real h = (real)nns[2 * NNS + nnr];
% else:
    global const int* nn = nns + 4 * (nsb * NF + f);
    const int lo = nn[0], hi = nn[1], fb = nn[3];
    const real h = (real)nn[2];
% endif
    const real inv_h = h > (real)0 ? (real)1 / h : (real)0;
    const real xc = (real)0.5 * (real)(lo + hi);
    const real e_ = ((real)xf - xc) * inv_h;
    const real rng = (real)stats[2 * nsb + 1];
    global const real* Drow = D + (long)b * d_b + (long)s * d_s;
% if use_w:
    global const real* Wrow = W + (long)b * d_b + (long)s * d_s;
% endif
</%def>
