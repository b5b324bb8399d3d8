## Thomas algorithm, one work-item per LANES systems, n known at run time.
## Parameters: real, LANES (1/2/4/8: systems per work-item as realN lanes), LAYOUT
## ("natural": system axis contiguous, or "interleaved": batch axis contiguous, read with
## vloadN), HAS_START (start-row mask), CP_PRIVATE (0: c', d' kept in global scratch;
## otherwise private arrays of that many rows, n <= CP_PRIVATE).
<%include file="/common/real.cl.mako"/>
<%namespace name="R" file="/tridiag/rows.cl.mako"/>
<%! from clts.tridiag import codegen as cg %>
<% V = cg.vtype(LANES) %>
% if CP_PRIVATE:
#define CP(k) cps[k]
#define DP(k) dps[k]
% elif LANES == 1:
#define CP(k) scratch[(size_t)(k) * nwi + g]
#define DP(k) scratch[((size_t)n + (size_t)(k)) * nwi + g]
% endif

<%def name="solve(mode)">
% if LANES > 1 and not CP_PRIVATE:
#define SET_CP(k, v) vstore${LANES}((v), (size_t)(k) * nwi + g, scratch)
#define SET_DP(k, v) vstore${LANES}((v), ((size_t)n + (size_t)(k)) * nwi + g, scratch)
#define GET_CP(k) vload${LANES}((size_t)(k) * nwi + g, scratch)
#define GET_DP(k) vload${LANES}(((size_t)n + (size_t)(k)) * nwi + g, scratch)
% else:
#define SET_CP(k, v) CP(k) = (v)
#define SET_DP(k, v) DP(k) = (v)
#define GET_CP(k) CP(k)
#define GET_DP(k) DP(k)
% endif
    {
        ${V} cpp = 0, dpp = 0;
        if (n == 1) {
            ${R.fwd("0", True, True, mode, "cpp", "dpp")}
            ${R.store_x("0", "dpp", mode)}
        } else {
            ${R.fwd("0", True, False, mode, "cpp", "dpp")}
            SET_CP(0, cpp); SET_DP(0, dpp);
            for (int k = 1; k < n - 1; ++k) {
                ${R.fwd("k", False, False, mode, "cpp", "dpp")}
                SET_CP(k, cpp); SET_DP(k, dpp);
            }
            ${R.fwd("n - 1", False, True, mode, "cpp", "dpp")}
            ${V} xn = dpp;
            ${R.store_x("n - 1", "xn", mode)}
            for (int k = n - 2; k >= 0; --k) {
                xn = GET_DP(k) - GET_CP(k) * xn;
                ${R.store_x("k", "xn", mode)}
            }
        }
    }
#undef SET_CP
#undef SET_DP
#undef GET_CP
#undef GET_DP
</%def>

__kernel void thomas(__global const real *restrict a, __global const real *restrict b,
                     __global const real *restrict c, __global const real *restrict d,
                     __global real *restrict x, __global real *restrict scratch,
                     __global const int *restrict start, __global int *restrict counter,
                     const int n, const int nsys)
{
    ${R.prologue()}
    const size_t nwi = get_global_size(0);
% if CP_PRIVATE:
    ${V} cps[${CP_PRIVATE}], dps[${CP_PRIVATE}];
% endif
% if LAYOUT == "interleaved":
    if (full) {
${solve("vec")}
    } else {
${solve("gather")}
    }
% else:
${solve("gather")}
% endif
    ${R.count_bad()}
}
