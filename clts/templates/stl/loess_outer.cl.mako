## LOESS, outer-parallel version: one work-item per fit point (batch x segment x fit), the
## window loop sequential inside the work-item. With lanes > 1 a work-item fits the same point
## of lanes consecutive series with realN vectors (pocl vectorises only explicit vectors); the
## lanes' windows may differ (missing values): the loop runs over their union, masked per lane.
## Data and weights come interleaved by lanes series ([tile][segment][position][lane]) so that
## one vloadN fetches the lanes values of a position; outputs are stored per lane.
## unroll (lanes 1): 0 = the compiler's choice (CPUs); 1 = the window loop kept rolled (GPU
## profiles: IGC unrolls it at SIMD32 and spills the float64 moments on Data Center GPU Max).
<%include file="/common/real.cl.mako"/>
<%namespace name="lc" file="/stl/loess_common.cl.mako"/>
${lc.finish_function()}
% if lanes == 1:

kernel void loess_outer(${lc.fit_args()}) {
    const long fit = get_global_id(0);
    if (fit >= (long)B * S * NF) return;
    ${lc.decode("fit")}
    if (xf < 0) return;
    ${lc.declare_moments()}
% if unroll:
    #pragma unroll ${unroll}
% endif
    for (int p = lo; p <= hi; ++p) {
        const real v = Drow[p - 1];
        ${lc.accumulate("p", "v", "p - 1")}
    }
    ${lc.store()}
}
% else:
<%
    V = "real%d" % lanes
    names = ["S0", "S1", "S2", "T0", "T1"] + (["S3", "S4", "T2"] if deg == 2 else [])
%>
% if complete:
// Once per call and smoother (complete data): for every fit point, the tricube weight w and
// the coordinate u = (p - xc) / h of each window position, and the moments S0..S4 of the
// weights; computed exactly as the kernels without the table compute them inline.
kernel void loess_wtab(global const int* fitpos, int NF, int S, global const int* nns,
                       int QW, global real* wtab, global real* wmom) {
    const long sf = get_global_id(0);
    if (sf >= (long)S * NF) return;
    const int xf = fitpos[sf];
    if (xf < 0) return;
% if nns_planes:
    const int lo = nns[sf], hi = nns[(long)S * NF + sf];
    const real h = (real)nns[2L * S * NF + sf];
% else:
    global const int* nn = nns + 4 * sf;
    const int lo = nn[0], hi = nn[1];
    const real h = (real)nn[2];
% endif
    const real inv_h = h > (real)0 ? (real)1 / h : (real)0;
    const real xc = (real)0.5 * (real)(lo + hi);
    const real xfr = (real)xf;
    real S0 = 0, S1 = 0, S2 = 0, S3 = 0, S4 = 0;
    global real* tab = wtab + sf * (2 * QW);
    for (int p = lo; p <= hi; ++p) {
        const real r = fabs((real)p - xfr);
        const real t = r * inv_h;
        real w = (real)1 - t * t * t;
        w = (r <= (real)0.001 * h) ? (real)1 : ((r <= (real)0.999 * h) ? w * w * w : (real)0);
        const real u = ((real)p - xc) * inv_h;
        tab[2 * (p - lo)] = w;
        tab[2 * (p - lo) + 1] = u;
        const real wu = w * u;
        S0 += w; S1 += wu; S2 += wu * u;
        S3 += wu * u * u; S4 += wu * u * u * u;
    }
    global real* mom = wmom + sf * 5;
    mom[0] = S0; mom[1] = S1; mom[2] = S2; mom[3] = S3; mom[4] = S4;
}

kernel void loess_outer(${lc.fit_args()}${", global const real* wtab, global const real* wmom, int QW" if table else ""}) {
% else:
kernel void loess_outer(${lc.fit_args()}) {
% endif
    const long gid = get_global_id(0);
    const int NT = (B + ${lanes - 1}) / ${lanes};
    if (gid >= (long)NT * S * NF) return;
    const int ts = (int)(gid / NF);
    const int f = (int)(gid - (long)ts * NF);
    const int tile = ts / S;
    const int s = ts - tile * S;
    const int n_s = seg_n[s];
    const int xf = fitpos[s * NF + f];
    if (xf < 0) return;
    const real xfr = (real)xf;
    // D, W interleaved: [tile][segment][position][lane]; d_b, d_s strides of tile, segment
    global const real* Dt = D + (long)tile * d_b + (long)s * d_s;
% if use_w:
    global const real* Wt = W + (long)tile * d_b + (long)s * d_s;
% endif
% for k in range(lanes):
    const int b${k} = min(tile * ${lanes} + ${k}, B - 1);
% endfor
% if complete:
<%
    vec = set(["T0", "T1"] + (["T2"] if deg == 2 else []) + (names if use_w else []))
    comp = lambda nm, k: ("%s.s%x" % (nm, k)) if nm in vec else nm
%>
    // complete data: one window for every lane (NNS shared), scalar neighbourhood weights
% if nns_planes:
    const long nnr = (long)s * NF + f, NNS = (long)S * NF;
    const int lo = nns[nnr], hi = nns[NNS + nnr], fbp = nns[3 * NNS + nnr];
    const real h = (real)nns[2 * NNS + nnr];
% else:
    global const int* nn = nns + 4 * ((long)s * NF + f);
    const int lo = nn[0], hi = nn[1], fbp = nn[3];
    const real h = (real)nn[2];
% endif
    const real inv_h = h > (real)0 ? (real)1 / h : (real)0;
    const real xc = (real)0.5 * (real)(lo + hi);
    const real e = (xfr - xc) * inv_h;
    const real rng = (real)stats[2 * s + 1];
% for nm in names:
    ${V if nm in vec else "real"} ${nm} = 0;
% endfor
% if table:
    // the tricube weights w and coordinates u of the window come from the per-call table
    // (loess_wtab: they depend only on the fit point when no value is missing); without
    // robustness weights the scalar moments S* too
    global const real* tab = wtab + ((long)s * NF + f) * (2 * QW);
% if use_w:
    for (int p = lo; p <= hi; ++p) {
        const real w = tab[2 * (p - lo)], u = tab[2 * (p - lo) + 1];
        const ${V} v = vload${lanes}(p - 1, Dt);
        const ${V} wv = w * vload${lanes}(p - 1, Wt);
        const ${V} wu = wv * u;
        S0 += wv; S1 += wu; S2 += wu * u; T0 += wv * v; T1 += wu * v;
%   if deg == 2:
        S3 += wu * u * u; S4 += wu * u * u * u; T2 += wu * u * v;
%   endif
    }
% else:
    global const real* mom = wmom + ((long)s * NF + f) * 5;
    S0 = mom[0]; S1 = mom[1]; S2 = mom[2];
%   if deg == 2:
    S3 = mom[3]; S4 = mom[4];
%   endif
    for (int p = lo; p <= hi; ++p) {
        const real w = tab[2 * (p - lo)], u = tab[2 * (p - lo) + 1];
        const ${V} v = vload${lanes}(p - 1, Dt);
        const real wu = w * u;
        T0 += w * v; T1 += wu * v;
%   if deg == 2:
        T2 += (wu * u) * v;
%   endif
    }
% endif
% else:
    for (int p = lo; p <= hi; ++p) {
        const real r = fabs((real)p - xfr);
        const real t = r * inv_h;
        real w = (real)1 - t * t * t;
        w = (r <= (real)0.001 * h) ? (real)1 : ((r <= (real)0.999 * h) ? w * w * w : (real)0);
        const real u = ((real)p - xc) * inv_h;
        const ${V} v = vload${lanes}(p - 1, Dt);
% if use_w:
        const ${V} wv = w * vload${lanes}(p - 1, Wt);
        const ${V} wu = wv * u;
        S0 += wv; S1 += wu; S2 += wu * u; T0 += wv * v; T1 += wu * v;
%   if deg == 2:
        S3 += wu * u * u; S4 += wu * u * u * u; T2 += wu * u * v;
%   endif
% else:
        const real wu = w * u;
        S0 += w; S1 += wu; S2 += wu * u; T0 += w * v; T1 += wu * v;
%   if deg == 2:
        S3 += wu * u * u; S4 += wu * u * u * u; T2 += (wu * u) * v;
%   endif
% endif
    }
% endif
% for k in range(lanes):
    if (tile * ${lanes} + ${k} < B) {
        real sl;
        real val = loess_finish(${", ".join(comp(nm, k) for nm in names[:5])}, ${", ".join(comp(nm, k) for nm in names[5:]) if deg == 2 else "0, 0, 0"}, h, rng, e, &sl);
        if (isnan(val) && !(xf == 0 || xf == n_s + 1) && fbp >= 1) val = Dt[(long)(fbp - 1) * ${lanes} + ${k}];
        out[${lc.out_index("b%d" % k)}] = val;
%   if hermite:
        slp[${lc.out_index("b%d" % k)}] = sl;
%   endif
    }
% endfor
}
% else:
<% NN = lambda k, j: "nn%d[%s]" % (k, ("%d * NNS" % j if j else "0") if nns_planes else j) %>\
% if nns_planes:
    const long NNS = (long)(nb_mul ? B : 1) * S * NF;     // NNS planes (GPUs)
% endif
% for k in range(lanes):
    global const int* nn${k} = nns + ${"" if nns_planes else "4 * "}(((long)b${k} * nb_mul * S + s) * NF + f);
% endfor
    const ${V} lo = (${V})(${", ".join("(real)" + NN(k, 0) for k in range(lanes))});
    const ${V} hi = (${V})(${", ".join("(real)" + NN(k, 1) for k in range(lanes))});
    const ${V} h = (${V})(${", ".join("(real)" + NN(k, 2) for k in range(lanes))});
    int plo = ${NN(0, 0)}, phi = ${NN(0, 1)};
% for k in range(1, lanes):
    plo = min(plo, ${NN(k, 0)}); phi = max(phi, ${NN(k, 1)});
% endfor
    const ${V} inv_h = select((${V})(0), (${V})(1) / h, h > (${V})(0));
    const ${V} xc = (real)0.5 * (lo + hi);
    const ${V} h1 = (real)0.001 * h, h9 = (real)0.999 * h;
% for nm in names:
    ${V} ${nm} = (${V})(0);
% endfor
    for (int p = plo; p <= phi; ++p) {
        const real pr = (real)p;
        const ${V} v = vload${lanes}(p - 1, Dt);
% if use_w:
        const ${V} rwv = vload${lanes}(p - 1, Wt);
% endif
        const real r = fabs(pr - xfr);
        const ${V} t = r * inv_h;
        ${V} w = (real)1 - t * t * t;
        w = w * w * w;
        w = select(w, (${V})(1), (${V})(r) <= h1);
        const ${V} pv = (${V})(pr);
        w = select((${V})(0), w, ((${V})(r) <= h9) & (pv >= lo) & (pv <= hi) & ~isnan(v));
% if use_w:
        w *= rwv;
% endif
        const ${V} yv = select((${V})(0), v, ~isnan(v));
        const ${V} u = (pv - xc) * inv_h;
        const ${V} wu = w * u;
        S0 += w; S1 += wu; S2 += wu * u; T0 += w * yv; T1 += wu * yv;
% if deg == 2:
        S3 += wu * u * u; S4 += wu * u * u * u; T2 += wu * u * yv;
% endif
    }
% for k in range(lanes):
    if (tile * ${lanes} + ${k} < B) {
        const real hk = h.s${"%x" % k};
        const real ik = hk > (real)0 ? (real)1 / hk : (real)0;
        const real e = (xfr - xc.s${"%x" % k}) * ik;
        const int bs = b${k} * nb_mul * S + s;
        real sl;
        real val = loess_finish(${", ".join("%s.s%x" % (nm, k) for nm in names[:5])}, ${", ".join("%s.s%x" % (nm, k) for nm in names[5:]) if deg == 2 else "0, 0, 0"}, hk, (real)stats[2 * bs + 1], e, &sl);
        const int fb = ${NN(k, 3)};
        if (isnan(val) && !(xf == 0 || xf == n_s + 1) && fb >= 1) val = Dt[(long)(fb - 1) * ${lanes} + ${k}];
        out[${lc.out_index("b%d" % k)}] = val;
% if hermite:
        slp[${lc.out_index("b%d" % k)}] = sl;
% endif
    }
% endfor
}
% endif
% endif
