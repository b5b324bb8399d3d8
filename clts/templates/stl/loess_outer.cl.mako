## LOESS, outer-parallel version: one work-item per fit point (batch x segment x fit),
## the window loop sequential inside the work-item.
<%include file="/common/real.cl.mako"/>
<%namespace name="lc" file="/stl/loess_common.cl.mako"/>
${lc.finish_function()}

kernel void loess_outer(${lc.fit_args()}) {
    const long fit = get_global_id(0);
    if (fit >= (long)B * S * NF) return;
    ${lc.decode("fit")}
    if (xf < 0) return;
    ${lc.declare_moments()}
    for (int p = lo; p <= hi; ++p) {
        const real v = Drow[p - 1];
        ${lc.accumulate("p", "v", "p - 1")}
    }
    ${lc.store()}
}
