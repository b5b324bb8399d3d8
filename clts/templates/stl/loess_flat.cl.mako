## LOESS, flat version: all of batch x fit points x neighbours as one flat map; work-item
## (fit, c) sums chunk neighbours into partial moments, a second kernel reduces the NCH partials
## of each fit (a regular segmented reduction) and finishes the fit. Partials: M moments per
## work-item (interleave = 0, CPUs), or moment-major (interleave = 1: moment k of work-item g at k * items + g,
## adjacent work-items on adjacent words: coalesced on GPUs); the same sums either way.
## finish_tile > 0 (GPUs, smoothers of several segments per series: the cycle-subseries) adds
## loess_flat_finish_tiled, the same finish through a local-memory transpose.
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
% if finish_tile:
<% TT, TR = finish_tile, 8 %>
// The GPU mapping of the finish for smoothers of several segments per series (the cycle-
// subseries, whose output is position-major: out[s * o_s + xf * o_p] with o_s = 1): a
// work-group of ${TT} x ${TR} finishes a tile of ${TT} fit points x ${TT} segments of one series.
// It reads along the fit points (adjacent work-items at adjacent fits: NNS planes, fit
// positions, partials) and writes through local memory along the segments (adjacent
// work-items at adjacent segments: adjacent words of the output). The same arithmetic per fit
// as loess_flat_finish.
__attribute__((reqd_work_group_size(${TT}, ${TR}, 1)))
kernel void loess_flat_finish_tiled(${lc.fit_args()}, int NCH, global const real* part) {
    local real tv[${TT}][${TT + 1}];
% if hermite:
    local real tsl[${TT}][${TT + 1}];
% endif
    local int tx[${TT}][${TT + 1}];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int f0 = get_group_id(0) * ${TT}, s0 = get_group_id(1) * ${TT}, b = get_group_id(2);
% if interleave:
    const long NT = (long)B * S * NF * NCH;
% endif
    for (int j = ly; j < ${TT}; j += ${TR}) {
        const int s = min(s0 + j, S - 1), f = min(f0 + lx, NF - 1);
        ${lc.decode_at()}
        real v_ = 0, sl_ = 0;
        int x_ = -1;
        if (s0 + j < S && f0 + lx < NF && xf >= 0) {
            ${lc.declare_moments()}
            const long fit = ((long)b * S + s) * NF + f;
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
            v_ = loess_finish(S0, S1, S2, T0, T1, ${"S3, S4, T2" if deg == 2 else "0, 0, 0"}, h, rng, e_, &sl_);
            if (isnan(v_) && !(xf == 0 || xf == n_s + 1) && fb >= 1) v_ = Drow[fb - 1];
            x_ = xf;
        }
        tv[j][lx] = v_;
% if hermite:
        tsl[j][lx] = sl_;
% endif
        tx[j][lx] = x_;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = ly; j < ${TT}; j += ${TR}) {
        const int s = s0 + lx, xf = tx[lx][j];
        if (s < S && xf >= 0) {
            out[${lc.out_index("b")}] = tv[lx][j];
% if hermite:
            slp[${lc.out_index("b")}] = tsl[lx][j];
% endif
        }
    }
}
% endif
