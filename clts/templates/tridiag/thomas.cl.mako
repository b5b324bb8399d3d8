## Thomas algorithm, one work-item per chains x lanes systems, n known at run time.
## Parameters, one per line:
##   real               float or double
##   lanes              1/2/4/8/16: systems per realN vector
##   chains             independent vectors per work-item, swept row by row together (the
##                      forward sweep is a chain of dependent divisions: one vector alone is
##                      latency bound on a CPU core)
##   LAYOUT             "natural" (system axis contiguous) or "interleaved" (batch axis
##                      contiguous, read with vloadN)
##   HAS_START          start-row mask
##   CP_PRIVATE         0: c', d' in global scratch; else private arrays of that many rows
##                      (n <= CP_PRIVATE)
##   block            natural layout, lanes > 1: rows read lanes at a time per system and
##                      transposed in registers
##   prefetch_items     software prefetch distance in work-items into L2, 0: none. Interleaved:
##                      row k of the work-item prefetch_items on, with row k; natural with BLOCK:
##                      the
##                      contiguous block of that work-item, spread over the sweep, and its x
##                      block for writing
##   CPU_PREFETCH       use clang's prefetch builtin
##   SCRATCH_CONTIGUOUS global scratch contiguous per work-item (CPUs); else row-major (GPUs)
##   stream             x written with non-temporal stores (no read-for-ownership). Natural
##                      layout with CP_PRIVATE: the work-item's x staged in private memory and
##                      streamed out as aligned 64-byte lines at the end; interleaved with
##                      lanes*chains*sizeof(real) a multiple of 64: rows stored non-temporally
##                      when nsys keeps them aligned
##   fixed_n            0: n from the argument; else the system size the kernel is built for
##                      (one build per n, constant loop trip counts)
<%include file="/common/real.cl.mako"/>
<%namespace name="R" file="/tridiag/rows.cl.mako"/>
<%! from clts.tridiag import codegen as cg %>
<%
V = cg.vtype(lanes)
BLOCK = block and LAYOUT == "natural" and lanes > 1
S = lanes * chains
LINE = 64 // (8 if real == "double" else 4)
STAGE = stream and LAYOUT == "natural" and CP_PRIVATE
STREAM_ROWS = stream and LAYOUT == "interleaved" and (S % LINE == 0)
%>
% if CP_PRIVATE:
#define CP(ch, k) cps[(k) * ${chains} + (ch)]
#define DP(ch, k) dps[(k) * ${chains} + (ch)]
% elif lanes == 1:
#define CP(ch, k) scratch[SIDX(ch, k)]
#define DP(ch, k) scratch[(size_t)n * nwi * ${chains} + SIDX(ch, k)]
% endif
% if SCRATCH_CONTIGUOUS:
/* global scratch: each chain's rows contiguous (CPU caches and prefetchers) */
#define SIDX(ch, k) (((size_t)g * ${chains} + (ch)) * (size_t)n + (size_t)(k))
% else:
/* global scratch: row-major over work-items (coalesced on GPUs) */
#define SIDX(ch, k) ((size_t)(k) * nwi * ${chains} + (size_t)g * ${chains} + (ch))
% endif
% if stream:
/* non-temporal stores: clang's builtin where the compiler has it, else plain stores */
#if defined(__has_builtin)
#if __has_builtin(__builtin_nontemporal_store)
#define NT_STORE(v, p) __builtin_nontemporal_store((v), (p))
#endif
#endif
#ifndef NT_STORE
#define NT_STORE(v, p) (*(p) = (v))
#endif
% endif
% if STREAM_ROWS:
#define STREAM_ROW(v, p) { if (nt) NT_STORE((v), (__global ${V} *)(p)); else vstore${lanes}((v), 0, (p)); }
% endif

% if prefetch_items:
/* software prefetch, PREFETCH_ITEMS work-items ahead, into L2: on the interleaved layout each row of
   that work-item (a 400 KB row stride defeats the hardware prefetchers of CPUs), on the natural
   layout its contiguous block (LANES strided streams per array are too many for the hardware
   prefetchers, and the next block beside the current one and c'/d' overflows a 32 KB L1); on
   CPU drivers clang's builtin (a real prefetch instruction; OpenCL's prefetch() may be a
   no-op), elsewhere OpenCL's */
%   if CPU_PREFETCH:
#if defined(__has_builtin)
#if __has_builtin(__builtin_prefetch)
#define PREFETCH_L2(p) __builtin_prefetch((p), 0, 2)
#define PREFETCH_W(p) __builtin_prefetch((p), 1, 2)
#endif
#endif
%   endif
#ifndef PREFETCH_L2
#define PREFETCH_L2(p) prefetch((p), 1)
#define PREFETCH_W(p)
#endif

% endif

<%def name="prefetch_row(k)">\
{   /* row ${k} of the work-item PREFETCH_ITEMS ahead (its neighbour systems): into L2 */
                    const size_t pf = (size_t)(${k}) * (size_t)nsys + (size_t)pf_s0;
%   for off in range(0, S, LINE):
                    PREFETCH_L2(a + pf + ${off}); PREFETCH_L2(b + pf + ${off}); PREFETCH_L2(c + pf + ${off}); PREFETCH_L2(d + pf + ${off});
%   endfor
                }</%def>
<%def name="solve(mode)">
<% chain_ids = range(chains) %>\
% if lanes > 1 and not CP_PRIVATE:
#define SET_CP(ch, k, v) vstore${lanes}((v), SIDX(ch, k), scratch)
#define SET_DP(ch, k, v) vstore${lanes}((v), (size_t)n * nwi * ${chains} + SIDX(ch, k), scratch)
#define GET_CP(ch, k) vload${lanes}(SIDX(ch, k), scratch)
#define GET_DP(ch, k) vload${lanes}((size_t)n * nwi * ${chains} + SIDX(ch, k), scratch)
% else:
#define SET_CP(ch, k, v) CP(ch, k) = (v)
#define SET_DP(ch, k, v) DP(ch, k) = (v)
#define GET_CP(ch, k) CP(ch, k)
#define GET_DP(ch, k) DP(ch, k)
% endif
<%def name="xstore(k, value, ch)">\
% if STAGE:
${R.store_x(k, value, "gather", ch, staged=True)}\
% else:
${R.store_x(k, value, mode, ch, stream=STREAM_ROWS)}\
% endif
</%def>
    {
% if prefetch_items and mode == "vec":
        /* interleaved: row k of the work-item PREFETCH_ITEMS ahead is prefetched with row k (the 4 x n
           row streams are too many for the hardware prefetchers; rows ahead of this work-item
           arrive too late) */
        const int pf_s0 = min(s0 + ${S * prefetch_items}, nsys - ${S});
        ${prefetch_row("0")}
        ${prefetch_row("n - 1")}
% endif
% for ch in chain_ids:
        ${V} cpp${ch} = 0, dpp${ch} = 0;
% endfor
        if (n == 1) {
% for ch in chain_ids:
            ${R.fwd("0", True, True, mode, "cpp%d" % ch, "dpp%d" % ch, ch=ch)}
            ${xstore("0", "dpp%d" % ch, ch)}
% endfor
        } else {
% for ch in chain_ids:
            ${R.fwd("0", True, False, mode, "cpp%d" % ch, "dpp%d" % ch, ch=ch)}
            SET_CP(${ch}, 0, cpp${ch}); SET_DP(${ch}, 0, dpp${ch});
% endfor
% if BLOCK:
            /* rows 1 .. 1 + nb*LANES - 1 in blocks: vloadN per system + register transposition */
            const int nb = (n - 2) / ${lanes};
%   if prefetch_items:
            /* the block of the work-item PREFETCH_ITEMS ahead (its systems are contiguous: S*n reals
               per array), spread over this sweep's blocks: a few sequential streams the
               memory system follows instead of S strided ones per array */
            const size_t pf0 = (size_t)min(s0 + ${S} * ${prefetch_items}, nsys) * (size_t)n;
            const size_t pf1 = (size_t)min(s0 + ${S} * ${prefetch_items + 1}, nsys) * (size_t)n;
            const int pf_lines = (int)((pf1 - pf0 + ${LINE} - 1) / ${LINE});
            const int pf_per = nb > 0 ? (pf_lines + nb - 1) / nb : 0;
%   endif
            for (int blk = 0; blk < nb; ++blk) {
                const int k0 = 1 + blk * ${lanes};
%   if prefetch_items:
                for (int j = blk * pf_per; j < min(pf_lines, (blk + 1) * pf_per); ++j) {
                    const size_t o = pf0 + (size_t)j * ${LINE};
                    PREFETCH_L2(a + o); PREFETCH_L2(b + o); PREFETCH_L2(c + o); PREFETCH_L2(d + o);
%     if not STAGE:
                    PREFETCH_W(x + o);
%     endif
                }
%   endif
%   for ch in chain_ids:
${R.block_load("a", "k0", ch)}
${R.block_load("b", "k0", ch)}
${R.block_load("c", "k0", ch)}
${R.block_load("d", "k0", ch)}
%   endfor
%   for r in range(lanes):
%     for ch in chain_ids:
                ${R.fwd("k0 + %d" % r, False, False, mode, "cpp%d" % ch, "dpp%d" % ch, vals={p: "%s%d_r%d" % (p, ch, r) for p in "abcd"}, ch=ch)}
                SET_CP(${ch}, k0 + ${r}, cpp${ch}); SET_DP(${ch}, k0 + ${r}, dpp${ch});
%     endfor
%   endfor
            }
            const int krest = 1 + nb * ${lanes};
% else:
            const int krest = 1;
% endif
            for (int k = krest; k < n - 1; ++k) {
% if prefetch_items and mode == "vec":
                ${prefetch_row("k")}
% endif
% for ch in chain_ids:
                ${R.fwd("k", False, False, mode, "cpp%d" % ch, "dpp%d" % ch, ch=ch)}
                SET_CP(${ch}, k, cpp${ch}); SET_DP(${ch}, k, dpp${ch});
% endfor
            }
% for ch in chain_ids:
            ${R.fwd("n - 1", False, True, mode, "cpp%d" % ch, "dpp%d" % ch, ch=ch)}
            ${V} xn${ch} = dpp${ch};
            ${xstore("n - 1", "xn%d" % ch, ch)}
% endfor
            for (int k = n - 2; k >= krest; --k) {
% for ch in chain_ids:
                xn${ch} = GET_DP(${ch}, k) - GET_CP(${ch}, k) * xn${ch};
                ${xstore("k", "xn%d" % ch, ch)}
% endfor
            }
% if BLOCK:
            for (int blk = nb - 1; blk >= 0; --blk) {
                const int k0 = 1 + blk * ${lanes};
%   for r in range(lanes - 1, -1, -1):
%     for ch in chain_ids:
                xn${ch} = GET_DP(${ch}, k0 + ${r}) - GET_CP(${ch}, k0 + ${r}) * xn${ch};
                const ${V} x${ch}r${r} = ${"xn%d" % ch if STAGE else cg.masked(real, lanes, "xn%d" % ch, ch)};
%     endfor
%   endfor
%   for ch in chain_ids:
%     if STAGE:
${R.block_store("k0", ch, "xs", cg.staged_index("{j}", "0"))}
%     else:
${R.block_store("k0", ch)}
%     endif
%   endfor
            }
% endif
% for ch in chain_ids:
            xn${ch} = GET_DP(${ch}, 0) - GET_CP(${ch}, 0) * xn${ch};
            ${xstore("0", "xn%d" % ch, ch)}
% endfor
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
                     const int n_arg, const int nsys)
{
% if fixed_n:
    const int n = ${fixed_n};   /* built for this system size: constant trip counts */
% else:
    const int n = n_arg;
% endif
    ${R.prologue()}
    const size_t nwi = get_global_size(0);
% if CP_PRIVATE:
    ${V} cps[${CP_PRIVATE * chains}], dps[${CP_PRIVATE * chains}];
% endif
% if STAGE:
    real xs[${CP_PRIVATE * S}];   /* x of the work-item's systems, natural order */
% endif
% if STREAM_ROWS:
    /* rows of S items are whole aligned lines when the first is and nsys keeps the stride */
    const int nt = full && (((size_t)(x + s0) & 63) == 0) && (((size_t)nsys * sizeof(real)) % 64 == 0);
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
% if STAGE:
    {
        /* stream the staged x out: the work-item's systems are one contiguous run of x */
        const int cnt = (min(nsys, s0 + ${S}) - s0) * n;
        __global real *xo = x + (size_t)s0 * (size_t)n;
        int head = (int)(((64 - ((size_t)xo & 63)) & 63) / sizeof(real));
        if (((size_t)xo % sizeof(real)) != 0 || head > cnt) head = cnt;
        for (int i = 0; i < head; ++i) xo[i] = xs[i];
        const int nl = (cnt - head) / ${LINE};
        for (int i = 0; i < nl; ++i)
            NT_STORE(vload${LINE}(0, xs + head + i * ${LINE}), (__global real${LINE} *)(xo + head + i * ${LINE}));
        for (int i = head + nl * ${LINE}; i < cnt; ++i) xo[i] = xs[i];
        /* systems with a zero pivot (rare): NaN, written over the streamed values */
%   for ch in range(chains):
%     for l in range(lanes):
        if (s0 + ${ch * lanes + l} < nsys && ${cg.lane("bad%d" % ch, l, lanes)})
            for (int k = 0; k < n; ++k) xo[(size_t)${ch * lanes + l} * n + k] = REAL_NAN;
%     endfor
%   endfor
    }
% endif
    ${R.count_bad()}
}
