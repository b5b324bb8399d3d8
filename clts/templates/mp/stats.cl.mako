## Per-window statistics of a series, stably: a compensated (Kahan) sum for the mean, then a
## second pass for the centred sum of squares, also compensated (never a difference of prefix
## sums of squares), on the series with NaN/inf replaced by 0 (the host flags those windows
## FLAG_NONFINITE); flags constant windows FLAG_CONSTANT (values in clts/mp/flags.py).
## NORMALIZE == 0: ``ss`` = plain sum of squares.
##
## A work-item owns NB = lanes * chains consecutive windows: lane l of vector u is window
## i0 + u*lanes + l, so one (unaligned) vload of lanes values at offset t feeds lanes windows at once
## (pocl vectorises only explicit vector types) and the chains vectors are independent dependency
## chains (a Kahan step is 4 dependent additions: one chain alone is latency bound). The series
## must be padded with NB values after its end (lanes past the last window read them).
<%include file="/common/real.cl.mako"/>
<%
    VV = real if lanes == 1 else f"{real}{lanes}"
    ITS = "long" if real == "double" else "int"
    IV = "int" if lanes == 1 else f"{ITS}{lanes}"
    NB = lanes * chains
    def VL(p):
        return f"(*({p}))" if lanes == 1 else f"vload{lanes}(0, {p})"
%>

__kernel void window_stats(__global const real *T, const int n_windows, const int m,
                           __global real *mu, __global real *ss, __global int *flags)
{
    const int i0 = (int)get_global_id(0) * ${NB};
    if (i0 >= n_windows) return;
    __global const real *x = T + i0;
% for u in range(chains):
    const ${VV} x0${u} = ${VL(f"x + {u * lanes}")};
    ${VV} s${u} = 0, c${u} = 0;
    ${IV} cst${u} = (${IV})(-1);
% endfor
    for (int t = 0; t < m; ++t) {
% for u in range(chains):
        {
            const ${VV} v = ${VL(f"x + t + {u * lanes}")};
            cst${u} &= ${"-(v == x0%d)" % u if lanes == 1 else "(v == x0%d)" % u};
            const ${VV} y = v - c${u};
            const ${VV} z = s${u} + y;
            c${u} = (z - s${u}) - y;
            s${u} = z;
        }
% endfor
    }
% for u in range(chains):
%   if NORMALIZE:
    const ${VV} mean${u} = (s${u} - c${u}) / (real)m;
%   else:
    const ${VV} mean${u} = 0;
%   endif
    ${VV} q${u} = 0, d${u} = 0;
% endfor
    for (int t = 0; t < m; ++t) {
% for u in range(chains):
        {
            const ${VV} dv = ${VL(f"x + t + {u * lanes}")} - mean${u};
            const ${VV} y = dv * dv - d${u};
            const ${VV} z = q${u} + y;
            d${u} = (z - q${u}) - y;
            q${u} = z;
        }
% endfor
    }
    // NB results through private arrays (the last work-item stores only its valid lanes)
    real rm[${NB}], rs[${NB}];
    ${ITS} rc[${NB}];
% for u in range(chains):
%   if lanes == 1:
    rm[${u}] = (s${u} - c${u}) / (real)m;
    rs[${u}] = q${u} - d${u};
    rc[${u}] = cst${u};
%   else:
    vstore${lanes}((s${u} - c${u}) / (real)m, 0, rm + ${u * lanes});
    vstore${lanes}(q${u} - d${u}, 0, rs + ${u * lanes});
    vstore${lanes}(cst${u}, 0, rc + ${u * lanes});
%   endif
% endfor
    const int nb = min(${NB}, n_windows - i0);
    for (int l = 0; l < nb; ++l) {
        const int c = rc[l] != 0;
        mu[i0 + l] = rm[l];
% if NORMALIZE:
        ss[i0 + l] = c ? (real)0 : rs[l];
% else:
        ss[i0 + l] = rs[l];
% endif
        flags[i0 + l] = c ? ${FLAG_CONSTANT} : 0;
    }
}
