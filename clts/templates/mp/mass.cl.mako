## Batched distance profiles (clts.mass): every length-m window of each series against one query,
## O(m) per window, computed directly (never from a sliding dot product: 2m(1 - corr) loses
## the distance of a near match to cancellation).
##
## NORMALIZE == 1 (z-normalised, the matrix profile's conventions): per window three passes
##   1. sum, largest |x|, constant test (x == x0 for every t);
##   2. corrected two-pass centring: dv = (x - mu1) / max|x|, c = sum dv, q = sum dv^2, so
##      ss = q - c^2 / m carries no cancellation and nothing overflows or underflows;
##   3. z = (x - mu1) * f + g, d = z - zq[t], acc += d^2 (zq: the query, z-normalised by
##      ``zquery`` with the same arithmetic, so a window equal to the query is at 0 exactly).
##   Windows with NaN / inf -> inf; constant window and constant query -> 0; one of them
##   constant -> sqrt(m).
## NORMALIZE == 0: (sum |x - q|^p)^(1/p); P is 1, 2, 0 (p = inf: the largest |x - q|) or -1
##   (any other p >= 1, the value ``pp``); a window with NaN / inf -> inf.
##
## A work-item owns NB = lanes * chains consecutive windows of one (query, series) pair: lane w of
## vector u is window i0 + u * lanes + w, so one unaligned vload of lanes values feeds lanes windows
## (pocl vectorises only explicit vector types) and the chains vectors are independent chains.
## The last work-item of a row, whose windows run past the row's end, takes them one by one
## (the series need no padding: numpy's memory is used in place where the device can).
## Grid: (work-items over the windows of a row, pairs of the chunk).
<%include file="/common/real.cl.mako"/>
<%!
    def vt(W):
        return "real" if W == 1 else f"real{W}"

    def it(W, real):
        its = "long" if real == "double" else "int"
        return "int" if W == 1 else f"{its}{W}"

    def VL(W, p):
        return f"(*({p}))" if W == 1 else f"vload{W}(0, {p})"

    def POWS(W, x, e):
        # x^e for x >= 0, with 0, NaN and inf (their own powers for e > 0) kept out of pow
        V = vt(W)
        sp = f"(({x}) == 0) | isnan({x}) | isinf({x})"
        return SEL(W, f"pow({SEL(W, x, '(' + V + ')1', sp)}, ({V})({e}))", x, sp)

    def SEL(W, a, b, c):
        # b where c, else a (c: a comparison of vt(W) values)
        return f"(({c}) ? ({b}) : ({a}))" if W == 1 else f"select({a}, {b}, {c})"
%>
<% NB = lanes * chains %>
<%def name="zstats(W, UU, base)">
<%
    V = vt(W)
    I = it(W, real)
%>
% for u in range(UU):
    __global const real *x${u} = ${base} + ${u * W};
% endfor
% for u in range(UU):
    const ${V} x0${u} = ${VL(W, f"x{u}")};
    ${V} s${u} = 0, mx${u} = 0;
    ${I} cst${u} = (${I})(-1);
% endfor
    for (int t = 0; t < m; ++t) {
% for u in range(UU):
        {
            const ${V} v = ${VL(W, f"x{u} + t")};
            s${u} += v;
            mx${u} = fmax(mx${u}, fabs(v));
            cst${u} &= ${"-(v == x0%d)" % u if W == 1 else "(v == x0%d)" % u};
        }
% endfor
    }
% for u in range(UU):
    const ${V} inv${u} = ${SEL(W, "(" + V + ")1", f"(({V})1) / mx{u}", f"mx{u} > 0")};
    ${V} mu${u} = s${u} / (real)m;
% endfor
% for u in range(UU):
    if (any(isinf(s${u}) & isfinite(mx${u}))) {     // the sum overflowed: again, scaled
        ${V} s2 = 0;
        for (int t = 0; t < m; ++t) s2 += ${VL(W, f"x{u} + t")} * inv${u};
        mu${u} = ${SEL(W, f"mu{u}", f"(s2 / (real)m) * mx{u}", f"isinf(s{u})")};
    }
    ${V} c${u} = 0, q${u} = 0;
% endfor
    for (int t = 0; t < m; ++t) {
% for u in range(UU):
        {
            const ${V} dv = (${VL(W, f"x{u} + t")} - mu${u}) * inv${u};
            c${u} += dv;
            q${u} = fma(dv, dv, q${u});
        }
% endfor
    }
% for u in range(UU):
    const ${V} cm${u} = c${u} / (real)m;
    const ${V} ss${u} = q${u} - c${u} * cm${u};
    // 1 / standard deviation of the scaled window; f, g map x to its z-normalised value
    const ${V} isd${u} = sqrt((real)m / ${SEL(W, "(" + V + ")1", f"ss{u}", f"ss{u} > 0")});
    const ${V} f${u} = inv${u} * isd${u};
    const ${V} g${u} = -cm${u} * isd${u};
% endfor
</%def>
<%def name="win(W, UU, base)">
<%
    V = vt(W)
    I = it(W, real)
%>
% if NORMALIZE:
${zstats(W, UU, base)}
% for u in range(UU):
    ${V} acc${u} = 0;
% endfor
    for (int t = 0; t < m; ++t) {
        const real zt = zq[t];
% for u in range(UU):
        {
            const ${V} d = fma(${VL(W, f"x{u} + t")} - mu${u}, f${u}, g${u}) - zt;
            acc${u} = fma(d, d, acc${u});
        }
% endfor
    }
% for u in range(UU):
    ${V} r${u} = sqrt(acc${u});
    {
        // constant: ss == 0 also counts (values equal after the scaling)
        const ${I} kc = cst${u} | (ss${u} <= 0);
        r${u} = ${SEL(W, f"r{u}", "(" + V + ")(qconst ? (real)0 : sqrt((real)m))", "kc")};
        if (qconst) r${u} = ${SEL(W, "(" + V + ")sqrt((real)m)", f"r{u}", "kc")};
        r${u} = ${SEL(W, f"r{u}", "(" + V + ")INFINITY", f"isnan(s{u}) | isinf(mx{u})")};
    }
% endfor
% else:
% for u in range(UU):
    __global const real *x${u} = ${base} + ${u * W};
    ${V} acc${u} = 0;
% if P == 0:
    ${V} nn${u} = 0;
% endif
% endfor
    for (int t = 0; t < m; ++t) {
        const real qt = zq[t];
% for u in range(UU):
        {
            const ${V} d = fabs(${VL(W, f"x{u} + t")} - qt);
% if P == 2:
            acc${u} = fma(d, d, acc${u});
% elif P == 1:
            acc${u} += d;
% elif P == 0:
            acc${u} = fmax(acc${u}, d);
            nn${u} += d - d;              // NaN once a value was NaN / inf (fmax drops NaN)
% else:
            // pow of 0, NaN and inf apart (here and below): pocl's double8 pow spoiled
            // another lane's result when one lane held one of them; they are their own powers
            acc${u} += ${POWS(W, "d", "pp")};
% endif
        }
% endfor
    }
% for u in range(UU):
% if P == 2:
    ${V} r${u} = sqrt(acc${u});
% elif P == -1:
    ${V} r${u} = ${POWS(W, f"acc{u}", "1 / pp")};
% elif P == 0:
    ${V} r${u} = acc${u} + nn${u};
% else:
    ${V} r${u} = acc${u};
% endif
    r${u} = ${SEL(W, f"r{u}", "(" + V + ")INFINITY", f"isnan(r{u})")};
% endfor
% endif
</%def>

__kernel void mass(__global const real *T, const long t_stride, const int l, const int m,
                   __global const real *Q, const int q_stride, __global const int *qflags,
                   const real pp, __global real *out)
{
    const int pair = get_global_id(1);
    const int i0 = (int)get_global_id(0) * ${NB};
    if (i0 >= l) return;
    __global const real *zq = Q + (long)pair * q_stride;
    const int qf = qflags[q_stride ? pair : 0];
    __global real *o = out + (long)pair * l;
    if (qf & ${FLAG_NONFINITE}) {
        for (int i = i0; i < min(i0 + ${NB}, l); ++i) o[i] = INFINITY;
        return;
    }
    const int qconst = (qf & ${FLAG_CONSTANT}) != 0;
    (void)qconst;
    __global const real *row = T + (long)pair * t_stride;
    if (i0 + ${NB} <= l) {
${win(lanes, chains, "row + i0")}
% for u in range(chains):
%   if lanes == 1:
        o[i0 + ${u}] = r${u};
%   else:
        vstore${lanes}(r${u}, 0, o + i0 + ${u * lanes});
%   endif
% endfor
    } else {
        for (int i = i0; i < l; ++i) {
${win(1, 1, "row + i")}
            o[i] = r0;
        }
    }
}

// the queries z-normalised by the same arithmetic as the windows (zstats in scalar form), so
// a window equal to its query is at distance 0 exactly; flags: NaN / inf, constant
__kernel void zquery(__global const real *Q, const int nq, const int m, __global real *Z,
                     __global int *qflags)
{
    const int k = get_global_id(0);
    if (k >= nq) return;
${zstats(1, 1, "Q + (long)k * m")}
    const int bad = isnan(s0) | isinf(mx0);
    const int kc = cst0 | (ss0 <= 0);
    qflags[k] = bad ? ${FLAG_NONFINITE} : (kc ? ${FLAG_CONSTANT} : 0);
    for (int t = 0; t < m; ++t)
        Z[(long)k * m + t] = (bad || kc) ? (real)0 : fma(x0[t] - mu0, f0, g0);
}

// ---------------------------------------------------------------- device-array calls
// plain (not normalised) queries: a query with NaN / inf is all zeros, flagged NONFINITE
__kernel void plain_query(__global const real *Q, const int nq, const int m, __global real *Z,
                          __global int *qflags)
{
    const int k = get_global_id(0);
    if (k >= nq) return;
    int bad = 0;
    for (int t = 0; t < m; ++t) bad |= !isfinite(Q[(long)k * m + t]);
    qflags[k] = bad ? ${FLAG_NONFINITE} : 0;
    for (int t = 0; t < m; ++t) Z[(long)k * m + t] = bad ? (real)0 : Q[(long)k * m + t];
}

// the power of two that brings the finite values of Z and T near 1 where they are beyond
// 2^+-EXP_LIMIT (else 1): the host path's _plain_unit. One work-group of 256.
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void plain_unit(__global const real *Z, const long nz, __global const real *T, const long nt,
                const int explimit, __global real *unit)
{
    __local real red[256];
    const int lid = get_local_id(0);
    real top = 0;
    for (long i = lid; i < nz + nt; i += 256) {
        const real v = i < nz ? Z[i] : T[i - nz];
        if (isfinite(v)) top = fmax(top, fabs(v));
    }
    red[lid] = top;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 128; s > 0; s >>= 1) {
        if (lid < s) red[lid] = fmax(red[lid], red[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        const real t = red[0];
        real u = 1;
        if (!(t == 0 || (t > ldexp((real)1, -explimit) && t < ldexp((real)1, explimit)))) {
            int e;
            (void)frexp(t, &e);
            u = ldexp((real)1, e);
        }
        *unit = u;
    }
}

// x / unit where finite (the values rescaled for a plain distance)
__kernel void div_unit(__global const real *x, const long n, __global const real *unit,
                       __global real *y)
{
    const long i = get_global_id(0);
    if (i >= n) return;
    const real v = x[i];
    y[i] = isfinite(v) ? v / *unit : v;
}

// the distances times unit; column qi (query_idx, -1: none) of every row set to 0
__kernel void finish_profiles(__global real *out, const int rows, const int l,
                              const int scale, __global const real *unit, const int qi)
{
    const long i = get_global_id(0);
    if (i >= (long)rows * l) return;
    if (qi >= 0 && i % l == qi) { out[i] = 0; return; }
    if (scale) out[i] *= *unit;
}
