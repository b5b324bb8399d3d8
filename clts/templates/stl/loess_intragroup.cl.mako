## LOESS, intra-group version: one work-group of wg work-items per fit point; the window is
## strided over the work-items (coalesced), moments reduced in local memory.
<%include file="/common/real.cl.mako"/>
<%namespace name="lc" file="/stl/loess_common.cl.mako"/>
<% names = ["S0", "S1", "S2", "T0", "T1"] + (["S3", "S4", "T2"] if deg == 2 else []) %>
${lc.finish_function()}

__attribute__((reqd_work_group_size(${wg}, 1, 1)))
kernel void loess_intragroup(${lc.fit_args()}) {
    const long fit = get_group_id(0);
    const int l = get_local_id(0);
    local real red[${len(names)}][${wg}];
    ${lc.decode("fit")}
    ${lc.declare_moments()}
    if (xf >= 0) {
        for (int p = lo + l; p <= hi; p += ${wg}) {
            const real v = Drow[p - 1];
            ${lc.accumulate("p", "v", "p - 1")}
        }
    }
% for k, nm in enumerate(names):
    red[${k}][l] = ${nm};
% endfor
    barrier(CLK_LOCAL_MEM_FENCE);
% for off in [wg >> (i + 1) for i in range(wg.bit_length() - 1)]:
    if (l < ${off}) {
%   for k in range(len(names)):
        red[${k}][l] += red[${k}][l + ${off}];
%   endfor
    }
    barrier(CLK_LOCAL_MEM_FENCE);
% endfor
    if (l == 0 && xf >= 0) {
% for k, nm in enumerate(names):
        ${nm} = red[${k}][0];
% endfor
        ${lc.store()}
    }
}
