## LOESS, flat version: all of batch x fit points x neighbours as one flat map; work-item
## (fit, c) sums chunk neighbours into partial moments, a second kernel reduces the NCH partials
## of each fit (a regular segmented reduction) and finishes the fit. Partials: M moments per
## work-item (interleave = 0, CPUs), or moment-major (interleave = 1: moment k of work-item g at k * items + g,
## adjacent work-items on adjacent words: coalesced on GPUs); the same sums either way.
<%include file="/common/real.cl.mako"/>
<%namespace name="lc" file="/stl/loess_common.cl.mako"/>
<% names = ["S0", "S1", "S2", "T0", "T1"] + (["S3", "S4", "T2"] if deg == 2 else []); M = len(names) %>
${lc.finish_function()}

kernel void loess_flat_partial(${lc.fit_args()}, int NCH, global real* part) {
    const long gid = get_global_id(0);
    const long NT = (long)B * S * NF * NCH;
    if (gid >= NT) return;
    const long fit = gid / NCH;
    const int c = (int)(gid - fit * NCH);
    ${lc.decode("fit")}
    ${lc.declare_moments()}
    if (xf >= 0) {
        const int p0 = lo + c * ${chunk};
        const int p1 = min(hi, p0 + ${chunk} - 1);
        for (int p = p0; p <= p1; ++p) {
            const real v = Drow[p - 1];
            ${lc.accumulate("p", "v", "p - 1")}
        }
    }
% for k, nm in enumerate(names):
% if interleave:
    part[${k} * NT + gid] = ${nm};
% else:
    part[gid * ${M} + ${k}] = ${nm};
% endif
% endfor
}

kernel void loess_flat_finish(${lc.fit_args()}, int NCH, global const real* part) {
    const long fit = get_global_id(0);
    if (fit >= (long)B * S * NF) return;
    ${lc.decode("fit")}
    if (xf < 0) return;
    ${lc.declare_moments()}
% if interleave:
    const long NT = (long)B * S * NF * NCH;
% endif
    for (int c = 0; c < NCH; ++c) {
% if interleave:
        global const real* pp = part + fit * NCH + c;
%   for k, nm in enumerate(names):
        ${nm} += pp[${k} * NT];
%   endfor
% else:
        global const real* pp = part + (fit * NCH + c) * ${M};
%   for k, nm in enumerate(names):
        ${nm} += pp[${k}];
%   endfor
% endif
    }
    ${lc.store()}
}
