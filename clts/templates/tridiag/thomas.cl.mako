## Thomas algorithm, one work-item per LANES systems, n known at run time.
## Parameters: real, LANES (1/2/4/8: systems per work-item as realN lanes), LAYOUT
## ("natural": system axis contiguous, or "interleaved": batch axis contiguous, read with
## vloadN), HAS_START (start-row mask), CP_PRIVATE (0: c', d' kept in global scratch;
## otherwise private arrays of that many rows, n <= CP_PRIVATE), BLOCK (natural layout,
## LANES > 1: rows read LANES at a time per system and transposed in registers), PREFETCH
## (software prefetch distance, 0: none; interleaved layout: rows ahead; natural layout with
## BLOCK: work-items ahead, i.e. the contiguous block of the LANES systems PREFETCH work-items
## on, spread over the sweep), CPU_PREFETCH (use clang's builtin),
## SCRATCH_CONTIGUOUS (global scratch per work-item contiguous: CPUs; else row-major: GPUs).
<%include file="/common/real.cl.mako"/>
<%namespace name="R" file="/tridiag/rows.cl.mako"/>
<%! from clts.tridiag import codegen as cg %>
<% V = cg.vtype(LANES); BLOCK = BLOCKED and LAYOUT == "natural" and LANES > 1; LINE = 64 // (8 if real == "double" else 4) %>
% if CP_PRIVATE:
#define CP(k) cps[k]
#define DP(k) dps[k]
% elif LANES == 1:
#define CP(k) scratch[SIDX(k)]
#define DP(k) scratch[(size_t)n * nwi + SIDX(k)]
% endif
% if SCRATCH_CONTIGUOUS:
/* global scratch: each work-item's rows contiguous (CPU caches and prefetchers) */
#define SIDX(k) ((size_t)g * (size_t)n + (size_t)(k))
% else:
/* global scratch: row-major over work-items (coalesced on GPUs) */
#define SIDX(k) ((size_t)(k) * nwi + g)
% endif

% if PREFETCH:
/* software prefetch: PREFETCH rows ahead on the interleaved layout (a 400 KB row stride defeats
   the hardware prefetchers of CPUs), the blocks of the work-items PREFETCH ahead on the natural
   layout (LANES strided streams per array are too many for them); on CPU drivers clang's builtin (a real prefetch
   instruction; OpenCL's prefetch() may be a no-op), elsewhere OpenCL's */
%   if CPU_PREFETCH:
#if defined(__has_builtin)
#if __has_builtin(__builtin_prefetch)
#define PREFETCH(p) __builtin_prefetch(p)
#endif
#endif
%   endif
#ifndef PREFETCH
#define PREFETCH(p) prefetch((p), 1)
#endif

% endif

<%def name="solve(mode)">
% if LANES > 1 and not CP_PRIVATE:
#define SET_CP(k, v) vstore${LANES}((v), SIDX(k), scratch)
#define SET_DP(k, v) vstore${LANES}((v), (size_t)n * nwi + SIDX(k), scratch)
#define GET_CP(k) vload${LANES}(SIDX(k), scratch)
#define GET_DP(k) vload${LANES}((size_t)n * nwi + SIDX(k), scratch)
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
% if BLOCK:
            /* rows 1 .. 1 + nb*LANES - 1 in blocks: vloadN per system + register transposition */
            const int nb = (n - 2) / ${LANES};
%   if PREFETCH:
            /* the block of the work-item PREFETCH ahead (its LANES systems are contiguous:
               LANES*n reals per array), spread over this sweep's blocks: a few sequential
               streams the memory system follows instead of LANES strided ones per array */
            const size_t pf0 = (size_t)min(s0 + ${LANES} * ${PREFETCH}, nsys) * (size_t)n;
            const size_t pf1 = (size_t)min(s0 + ${LANES} * ${PREFETCH + 1}, nsys) * (size_t)n;
            const int pf_lines = (int)((pf1 - pf0 + ${LINE} - 1) / ${LINE});
            const int pf_per = nb > 0 ? (pf_lines + nb - 1) / nb : 0;
%   endif
            for (int blk = 0; blk < nb; ++blk) {
                const int k0 = 1 + blk * ${LANES};
%   if PREFETCH:
                for (int j = blk * pf_per; j < min(pf_lines, (blk + 1) * pf_per); ++j) {
                    const size_t o = pf0 + (size_t)j * ${LINE};
                    PREFETCH(a + o); PREFETCH(b + o); PREFETCH(c + o); PREFETCH(d + o);
                }
%   endif
${R.block_load("a", "k0")}
${R.block_load("b", "k0")}
${R.block_load("c", "k0")}
${R.block_load("d", "k0")}
%   for r in range(LANES):
                ${R.fwd("k0 + %d" % r, False, False, mode, "cpp", "dpp", vals={"a": "a_r%d" % r, "b": "b_r%d" % r, "c": "c_r%d" % r, "d": "d_r%d" % r})}
                SET_CP(k0 + ${r}, cpp); SET_DP(k0 + ${r}, dpp);
%   endfor
            }
            const int krest = 1 + nb * ${LANES};
% else:
            const int krest = 1;
% endif
            for (int k = krest; k < n - 1; ++k) {
% if PREFETCH and mode == "vec":
                if (k + ${PREFETCH} < n) {
                    const size_t pf = (size_t)(k + ${PREFETCH}) * (size_t)nsys + s0;
%   for off in range(0, LANES, 64 // (8 if real == "double" else 4)):
                    PREFETCH(a + pf + ${off}); PREFETCH(b + pf + ${off}); PREFETCH(c + pf + ${off}); PREFETCH(d + pf + ${off});
%   endfor
                }
% endif
                ${R.fwd("k", False, False, mode, "cpp", "dpp")}
                SET_CP(k, cpp); SET_DP(k, dpp);
            }
            ${R.fwd("n - 1", False, True, mode, "cpp", "dpp")}
            ${V} xn = dpp;
            ${R.store_x("n - 1", "xn", mode)}
            for (int k = n - 2; k >= krest; --k) {
                xn = GET_DP(k) - GET_CP(k) * xn;
                ${R.store_x("k", "xn", mode)}
            }
% if BLOCK:
            for (int blk = nb - 1; blk >= 0; --blk) {
                const int k0 = 1 + blk * ${LANES};
%   for r in range(LANES - 1, -1, -1):
                xn = GET_DP(k0 + ${r}) - GET_CP(k0 + ${r}) * xn;
                const ${V} xr${r} = ${cg.sel(real, LANES, "xn", "REAL_NAN", "bad")};
%   endfor
${R.block_store("k0")}
            }
% endif
            xn = GET_DP(0) - GET_CP(0) * xn;
            ${R.store_x("0", "xn", mode)}
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
