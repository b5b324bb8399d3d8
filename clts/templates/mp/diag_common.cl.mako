## Matrix profile, the diagonal kernels' shared part, used through <%namespace> by
## diag_top1.cl.mako (k = 1) and diag_topk.cl.mako (k > 1): the names of the band's vector
## types and loads, the prelude (extensions, band and tile sizes, the 64-bit atomic minimum,
## the tie rule) and the exact covariance at a segment start.
##
## Template parameters have the names of the profile keys and Plan fields (mp.diag.*): lanes,
## groups, tile. A work-item owns a band of D = groups * lanes adjacent diagonals
## k0 .. k0+D-1 (j = i + k) and a segment of rows [ilo, ihi) (at most SEG rows: the
## covariance is computed exactly at ilo, then updated in O(1) per step: cov(i,j) =
## cov(i-1,j-1) + df[i] dg[j] + df[j] dg[i]). The `lanes` diagonals of a group are the lanes of
## a realN vector (pocl vectorises only explicit vector types), so the column values at
## j .. j+lanes-1 are one unaligned vload. The score is the Pearson correlation
## cov * r_i * r_j (NORMALIZE) or -d^2/2 = cov + h_i + h_j (plain Euclidean), maximised.
## unroll: unroll factor of the row loops (a #pragma unroll hint; 1 leaves it to the compiler).
## The plan's `segment` is the kernels' argument SEG, not a template parameter: it sizes only
## the partial lists' strides and the work descriptors (no loop is unrolled by it), so a new
## window length, whose plan has a longer segment, builds nothing.
<%!
def names(real, lanes, groups, unroll):
    """(VT, ITS, IT, D, LOAD, SEL, ROW_UNROLL, IOTA) of a band of ``groups`` x ``lanes`` diagonals."""
    VT = real if lanes == 1 else f"{real}{lanes}"
    ITS = "long" if real == "double" else "int"
    IT = ITS if lanes == 1 else f"{ITS}{lanes}"
    D = groups * lanes

    def LOAD(p):
        return f"(*({p}))" if lanes == 1 else f"vload{lanes}(0, {p})"

    def SEL(a, b, c):
        return f"(({c}) ? ({b}) : ({a}))" if lanes == 1 else f"select({a}, {b}, {c})"
    # unroll hint for the row loops (unroll rows per iteration; 1: the compiler's choice)
    ROW_UNROLL = f"#pragma unroll {unroll}" if unroll > 1 else ""
    IOTA = "0" if lanes == 1 else "(" + IT + ")(" + ", ".join(str(x) for x in range(lanes)) + ")"
    return VT, ITS, IT, D, LOAD, SEL, ROW_UNROLL, IOTA
%>

<%def name="prelude()">
% if unroll > 1:
## the unroll hint is a hint: where clang cannot honour it (a row loop of unknown trip count on
## some targets) it would say so in a warning on every build
#ifdef __clang__
#pragma clang diagnostic ignored "-Wpass-failed"
#endif
% endif
% if ATOMIC:
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
% endif
#define D ${groups * lanes}
#define L ${tile}

% if ATOMIC:
inline ulong make_key(real score, int idx, ulong idxmask)
{
%   if NORMALIZE:
    real v = (real)1 - score;
%   else:
    real v = -score;
%   endif
    v = fmax(v, (real)0);
%   if real == "double":
    return (as_ulong(v) & ~idxmask) | (ulong)idx;
%   else:
    return ((ulong)as_uint(v) << 32) | (ulong)(uint)idx;
%   endif
}
% endif

% if ATOMIC:
<%include file="/common/atomics.cl.mako"/>
% endif

inline int better(real s, int i, real bs, int bi)
{
    return s > bs || (s == bs && i >= 0 && (bi < 0 || i < bi));
}
</%def>

<%def name="cov_init(VT, LOAD)">
    // exact covariance (or dot product) at row ilo for every diagonal of the band
% for g in range(groups):
    ${VT} cov${g} = 0;
% endfor
    {
        const int jb = ilo + k0;
% if NORMALIZE:
        const real ma = muA[ilo];
%   for g in range(groups):
        const ${VT} mb${g} = ${LOAD(f"muBp + jb + {g * lanes}")};
%   endfor
% endif
        for (int t = 0; t < m; ++t) {
% if NORMALIZE:
            const real a = TA[ilo + t] - ma;
%   for g in range(groups):
            cov${g} = fma((${VT})a, ${LOAD(f"TBp + jb + t + {g * lanes}")} - mb${g}, cov${g});
%   endfor
% else:
            const real a = TA[ilo + t];
%   for g in range(groups):
            cov${g} = fma((${VT})a, ${LOAD(f"TBp + jb + t + {g * lanes}")}, cov${g});
%   endfor
% endif
        }
    }
</%def>

## the top-k kernels' insertion of a candidate (x, column j) into a row's K best, kept sorted in
## registers rv0.. / ri0.. (ties: the smaller index first), and its entry threshold rth
<%def name="ins_reg(x, j)">
                    {
                        real cs = ${x};
                        int ci = ${j};
                        if (cs > rth) {
%   for q in range(K):
                            if (cs > rv${q} || (cs == rv${q} && ci < ri${q})) {
                                const real tv = rv${q}; const int ti = ri${q};
                                rv${q} = cs; ri${q} = ci; cs = tv; ci = ti;
                            }
%   endfor
                            rth = fmax(rth, rv${K - 1});
                        }
                    }
</%def>