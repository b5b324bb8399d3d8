## Thomas algorithm with the system size N fixed at build time: both sweeps unrolled by the
## template, c' and d' in named registers. Parameters: real, N, LANES, LAYOUT, HAS_START (as in
## thomas.cl.mako).
<%include file="/common/real.cl.mako"/>
<%namespace name="R" file="/tridiag/rows.cl.mako"/>
<%! from clts.tridiag import codegen as cg %>
<% V = cg.vtype(LANES) %>

<%def name="solve(mode)">
    {
% for k in range(N):
        ${V} cp${k}, dp${k};
% endfor
% if N == 1:
        ${R.fwd("0", True, True, mode, "cp0", "dp0")}
% else:
%   for k in range(N):
%     if k == 0:
        ${R.fwd("0", True, False, mode, "cp0", "dp0")}
%     else:
        cp${k} = cp${k - 1}; dp${k} = dp${k - 1};
        ${R.fwd(str(k), False, k == N - 1, mode, "cp%d" % k, "dp%d" % k)}
%     endif
%   endfor
% endif
        ${V} xn = dp${N - 1};
        ${R.store_x(str(N - 1), "xn", mode)}
% for k in range(N - 2, -1, -1):
        xn = dp${k} - cp${k} * xn;
        ${R.store_x(str(k), "xn", mode)}
% endfor
    }
</%def>

__kernel void thomas_unrolled(__global const real *restrict a, __global const real *restrict b,
                              __global const real *restrict c, __global const real *restrict d,
                              __global real *restrict x, __global real *restrict scratch,
                              __global const int *restrict start, __global int *restrict counter,
                              const int n, const int nsys)
{
    ${R.prologue()}
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
