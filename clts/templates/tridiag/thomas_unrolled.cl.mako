<%namespace name="sg" file="/common/subgroup.cl.mako"/>\
## Thomas algorithm with the system size N fixed at build time: both sweeps unrolled by the
## template, c' and d' in named registers. Parameters: real, N, lanes, LAYOUT, HAS_START, block
## (as in thomas.cl.mako), chains = 1, subgroup (the sub-group size required on Intel GPUs; 0:
## the compiler picks).
<%include file="/common/real.cl.mako"/>
<%namespace name="R" file="/tridiag/rows.cl.mako"/>
<%! from clts.tridiag import codegen as cg %>
<% V = cg.vtype(lanes); BLOCK = block and LAYOUT == "natural" and lanes > 1 %>

<%def name="solve(mode)">
<%
    L = lanes
    blocks = list(range(1, N - L, L)) if BLOCK else []
    in_block = {k: k0 for k0 in blocks for k in range(k0, k0 + L)}
%>\
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
%     elif k in in_block:
%       if in_block[k] == k:
        {
${R.block_load("a", str(k))}
${R.block_load("b", str(k))}
${R.block_load("c", str(k))}
${R.block_load("d", str(k))}
%         for r in range(L):
        cp${k + r} = cp${k + r - 1}; dp${k + r} = dp${k + r - 1};
        ${R.fwd(str(k + r), False, False, mode, "cp%d" % (k + r), "dp%d" % (k + r), vals={"a": "a0_r%d" % r, "b": "b0_r%d" % r, "c": "c0_r%d" % r, "d": "d0_r%d" % r})}
%         endfor
        }
%       endif
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
%   if k in in_block:
%     if k == in_block[k] + L - 1:
        {
%     endif
        const ${V} x0r${k - in_block[k]} = ${cg.masked(real, lanes, "xn")};
%     if k == in_block[k]:
${R.block_store(str(k))}
        }
%     endif
%   else:
        ${R.store_x(str(k), "xn", mode)}
%   endif
% endfor
    }
</%def>

${sg.reqd(subgroup)}\
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
