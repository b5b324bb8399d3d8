<%namespace name="sg" file="/common/subgroup.cl.mako"/>\
## Bai-Perron breakpoints (strucchange::breakpoints), batched, with missing values dropped per pixel.
## bp_rss: the RSS triangle. One work-item per (lanes pixels, start date tau): every later row is
##   rotated into the start's K x K R factor held in registers by Gentleman's square-root-free
##   Givens rotations (one division per column, no square root); the weighted square of the
##   rotated row's last component is the squared recursive residual, the RSS increment. NaN rows rotate in
##   as zeros (no effect), so the lanes lanes run in lockstep over the dates. Starts that no lane's
##   dynamic programme reads (valid count before tau in 1..h-1, or fewer than h values after) are
##   skipped.
## bp_dp: one work-item per pixel: the dynamic programme for 1..BREAKS breaks over its valid values,
##   the m-break RSS (segments summed in order, as R) and the breakpoints (date indices).
## Triangle layout: pixel blocks of interleave (interleave a multiple of lanes) interleaved innermost:
##   tri[((p / interleave) * T + tri_index(tau, t)) * interleave + p % interleave], T = N (N + 1) / 2.
## subgroup: the sub-group size both kernels require on Intel GPUs (0: the compiler picks; IGC
##   picks SIMD32 on pvc and spills the float64 rotation state of bp_rss at 128 GRF, and bp_dp's
##   state from BREAKS = 5 on).
## kernels: "all", or the one kernel of the program ("bp_rss" / "bp_dp": the Plan's large GRF
##   builds bp_rss alone, bp_dp from a program without it).
## pix (GPU profiles' bfast.breakpoints.split; absent or 0: the kernel above): bp_rss split over K
##   work-items per (pixel, start), lanes = 1: work-item j holds column j of R (R[k][j], k < j),
##   d[j], z[j] and the row's x[j]; row k's rotation (dp, cb, sb, w, e) is done by work-item k
##   and handed to the later columns through local memory (double-buffered, one barrier per row),
##   so no work-item keeps the K (K + 1) / 2 + K values. Work-groups of (K, pix, 1) along
##   (column, pixel, start); every value gets the same operations in the same order as above.
## scan (GPU profiles' bfast.breakpoints.scan; absent or 0: gathers): bp_dp's backtrack reads
##   each break's rows of ARG / vidx whole and keeps the pixel's entry (coalesced, O(BREAKS^2 N)
##   more reads against the DP's O(BREAKS N^2)), and takes the m-break RSS from the DP's own sum
##   (the same additions in the same order) instead of gathering the segments' RSS again.
## BREAKS = 1: bp_rss computes the row of the first valid start only and, by one backward sweep
##   in the work-item (split: work-group) of the last date, RSS(start .. last valid value) of
##   every start: all the programme reads, O(N K^2) a pixel instead of O(N^2 K^2) (the split
##   kernel the same operations in the same order: identical bits). One writer an address: the
##   forward row stores only the lanes whose first valid start it is, the sweep only the later
##   valid starts. The triangle's block and lane offsets (p / interleave, p % interleave) are
##   computed once, not by TRI_AT in the loops: LLVM pairs a division with its remainder
##   through a freeze instruction, which Oclgrind's uninitialised-value check cannot run (the
##   work-item then stops: bp_dp read entries it had not written).
## q (optional, 0: none): the last q of the K regressors are per pixel, bp_rss's argument XP laid
##   out [date][q][pixel] like y (Mp pixels a row); the first K - q come from X [date][K - q].
## Variables: real, lanes, interleave, K, BREAKS, subgroup, kernels, pix, scan, q (optional); the
## number of dates N is the kernels' last argument (Nt): a new series length builds nothing.
<%include file="/common/real.cl.mako"/>
<%
    pix = context.get("pix", 0)
    scan = context.get("scan", 0)
    q = context.get("q", 0)
    one = BREAKS == 1                   # the one-break sweep (both bp_rss kernels)
    KS = K - q                     # the shared regressors' count (X's row length)
    XP_ARG = "__global const real* restrict XP, " if q else ""
    V = "real" if lanes == 1 else "real%d" % lanes
    def L(l):
        return "" if lanes == 1 else ".s%x" % l
%>
typedef ${V} V;
% if lanes == 1:
#define SEL(a, b, c) ((c) ? (b) : (a))
#define VLOAD(p) (*(p))
#define VSTORE(v, p) (*(p) = (v))
% else:
#define SEL(a, b, c) select(a, b, c)
#define VLOAD(p) vload${lanes}(0, p)
#define VSTORE(v, p) vstore${lanes}(v, 0, p)
% endif
#define TRI_OFF(tau) ((long)(tau) * Nt - ((long)(tau) * ((tau) - 1)) / 2)
#define TRI_AT(p, idx) ((((long)(p) / ${interleave}) * Tt + (idx)) * ${interleave} + (p) % ${interleave})

% if kernels in ("all", "bp_rss") and pix:
${sg.reqd(subgroup)}\
__kernel void bp_rss(__global const real* restrict y, const int Mp,
                     __global const real* restrict X, ${XP_ARG}__global const int* restrict hs,
                     __global real* restrict tri, const int Nt)
{
    const long Tt = (long)Nt * (Nt + 1) / 2;
    const int j = get_local_id(0);      // the column of R this work-item holds
    const int q = get_local_id(1);      // its pixel in the work-group
    const int p = get_global_id(1);
    const int tau = get_global_id(2);
    const int pc = p < Mp ? p : 0;
    __local int needs[${pix}];
    __local real pub[${2 * 5 * pix}];   // [slot][xi, cb, sb, w, e][pixel]
    int cbn = 0, nv = 0;
    for (int t = 0; t < Nt; ++t) {
        const real v = y[(long)t * Mp + pc];
        if (!isnan(v)) { nv += 1; cbn += (t < tau); }
    }
    const real v0 = y[(long)tau * Mp + pc];
    const int h = hs[nv];
% if one:
    int first = -1, last = -1;          // the pixel's first and last valid dates
    for (int t = 0; t < Nt; ++t) {
        if (!isnan(y[(long)t * Mp + pc])) { if (first < 0) first = t; last = t; }
    }
    const int need = p < Mp && !isnan(v0) && cbn == 0 && nv >= h;
    const int sweep = tau == Nt - 1;    // the work-group's backward sweep
% else:
    const int need = p < Mp && !isnan(v0) && (cbn == 0 || cbn >= h) && nv - cbn >= h;
% endif
    if (j == 0) needs[q] = need;
    barrier(CLK_LOCAL_MEM_FENCE);
    int any = 0;
    for (int i = 0; i < ${pix}; ++i) any |= needs[i];
% if one:
    if (!any && !sweep) return;         // the same for the whole work-group (one start)
% else:
    if (!any) return;       // the same for the whole work-group (one start)
% endif
    const int pb = p / ${interleave};                 // TRI_AT(p, base + t), with the remainder
    const int pr = p - pb * ${interleave};            // spelled out (Oclgrind lacks LLVM's freeze)
    const long base = ((long)pb * Tt + TRI_OFF(tau) - tau) * ${interleave} + pr;
% for rev in ((0, 1) if one else (0,)):
% if one:
    if (${"sweep" if rev else "any"}) {
% endif
% for k in range(K - 1):
    real C${k} = (real)0;
% endfor
    real d = (real)0, z = (real)0, rss = (real)0;
    int par = 0;
% if rev:
    for (int t = Nt - 1; t >= 0; --t) {
% else:
    for (int t = tau; t < Nt; ++t) {
% endif
        const real yv = y[(long)t * Mp + pc];
        const int ok = !isnan(yv);
% if q:
        real x = ok ? (j < ${KS} ? X[t * ${KS} + j]
                                  : XP[((long)t * ${q} + j - ${KS}) * Mp + pc]) : (real)0;
% else:
        real x = ok ? X[t * ${K} + j] : (real)0;
% endif
        real e = ok ? yv : (real)0;
        real w = (real)1;
% for k in range(K):
        if (j == ${k}) {
%   if k:
            w = pub[((1 - par) * 5 + 3) * ${pix} + q];
            e = pub[((1 - par) * 5 + 4) * ${pix} + q];
%   endif
            const real xi = x;
            const real dp = d + w * xi * xi;
            const real inv = SEL((real)0, (real)1 / dp, dp > (real)0);
            const real cb = SEL((real)1, d * inv, dp > (real)0);
            const real sb = w * xi * inv;
            w *= cb;
            d = dp;
            const real a = e;
            e = a - xi * z;
            z = cb * z + sb * a;
%   if k < K - 1:
            pub[(par * 5 + 0) * ${pix} + q] = xi;
            pub[(par * 5 + 1) * ${pix} + q] = cb;
            pub[(par * 5 + 2) * ${pix} + q] = sb;
            pub[(par * 5 + 3) * ${pix} + q] = w;
            pub[(par * 5 + 4) * ${pix} + q] = e;
%   else:
            rss += w * e * e;
%   if rev:
            if (p < Mp && ok && t > first && t <= last)
                tri[((long)pb * Tt + TRI_OFF(t) + last - t) * ${interleave} + pr] = rss;
%   else:
            if (need) tri[base + (long)t * ${interleave}] = rss;
%   endif
%   endif
        }
%   if k < K - 1:
        barrier(CLK_LOCAL_MEM_FENCE);
        if (j > ${k}) {
            const real xi = pub[(par * 5 + 0) * ${pix} + q];
            const real cb = pub[(par * 5 + 1) * ${pix} + q];
            const real sb = pub[(par * 5 + 2) * ${pix} + q];
            const real a = x;
            x = a - xi * C${k};
            C${k} = cb * C${k} + sb * a;
        }
        par ^= 1;
%   endif
% endfor
    }
% if one:
    }
% endif
% endfor
}
% elif kernels in ("all", "bp_rss"):
${sg.reqd(subgroup)}\
__kernel void bp_rss(__global const real* restrict y, const int Mp,
                     __global const real* restrict X, ${XP_ARG}__global const int* restrict hs,
                     __global real* restrict tri, const int Nt)
{
    const long Tt = (long)Nt * (Nt + 1) / 2;
    const int p0 = get_global_id(0) * ${lanes};
    const int tau = get_global_id(1);
    if (p0 >= Mp || tau >= Nt) return;
    const V v0 = VLOAD(y + (long)tau * Mp + p0);
    int need = 0;
% if one:
    // one break: the programme reads the row of the first valid start (every end) and, of
    // each later start, only RSS(start .. last valid value); the work-item of the last date
    // gets those by one backward sweep (O(N) a pixel instead of O(N^2)). Other work-items
    // leave as soon as every lane has a value before tau (or none at tau).
    const int sweep = tau == Nt - 1;
    if (!sweep) {
        int seen = 0, here = 0;
% for l in range(lanes):
        here |= !isnan(v0${L(l)}) << ${l};
% endfor
        for (int t = 0; t < tau && (seen & here) != here; ++t) {
            const V v = VLOAD(y + (long)t * Mp + p0);
% for l in range(lanes):
            seen |= !isnan(v${L(l)}) << ${l};
% endfor
        }
        if ((seen & here) == here) return;      // no lane's first value at tau
    }
    int nv[${lanes}], first[${lanes}], last[${lanes}];
% for l in range(lanes):
    nv[${l}] = 0; first[${l}] = -1; last[${l}] = -1;
% endfor
    for (int t = 0; t < Nt; ++t) {
        const V v = VLOAD(y + (long)t * Mp + p0);
% for l in range(lanes):
        if (!isnan(v${L(l)})) { nv[${l}] += 1; if (first[${l}] < 0) first[${l}] = t; last[${l}] = t; }
% endfor
    }
% for l in range(lanes):
    need |= first[${l}] == tau && nv[${l}] >= hs[nv[${l}]];
% endfor
    if (!need && !sweep) return;
% else:
    // does any lane's dynamic programme read segments starting at tau?
    int cb[${lanes}], nv[${lanes}];
% for l in range(lanes):
    cb[${l}] = 0; nv[${l}] = 0;
% endfor
    for (int t = 0; t < Nt; ++t) {
        const V v = VLOAD(y + (long)t * Mp + p0);
% for l in range(lanes):
        if (!isnan(v${L(l)})) { nv[${l}] += 1; cb[${l}] += (t < tau); }
% endfor
    }
% for l in range(lanes):
    {
        const int h = hs[nv[${l}]];
        need |= !isnan(v0${L(l)}) && (cb[${l}] == 0 || cb[${l}] >= h) && nv[${l}] - cb[${l}] >= h;
    }
% endfor
    if (!need) return;
% endif
    const int pb = p0 / ${interleave};                // TRI_AT(p0 + lane, .), with the remainder
    const int pr = p0 - pb * ${interleave};           // spelled out (Oclgrind lacks LLVM's freeze)
% for rev in ((0, 1) if one else (0,)):
% if one:
    if (${"sweep" if rev else "need"}) {
% endif
% for k in range(K):
%   for j in range(k + 1, K):
    V R${k}_${j} = (V)0;
%   endfor
    V d${k} = (V)0, z${k} = (V)0;
% endfor
    V rss = (V)0;
% if rev:
    for (int t = Nt - 1; t >= 0; --t) {
% else:
    const long base = ((long)pb * Tt + TRI_OFF(tau) - tau) * ${interleave} + pr;
    for (int t = tau; t < Nt; ++t) {
% endif
        const V yv = VLOAD(y + (long)t * Mp + p0);
% if lanes == 1:
        const int ok = !isnan(yv);
% else:
        const V okv = SEL((V)0, (V)1, isnan(yv) == 0);
% endif
% for k in range(K):
%   if k >= KS and lanes == 1:
        V x${k} = ok ? XP[((long)t * ${q} + ${k - KS}) * Mp + p0] : (real)0;
%   elif k >= KS:
        V x${k} = SEL((V)0, VLOAD(XP + ((long)t * ${q} + ${k - KS}) * Mp + p0), isnan(yv) == 0);
%   elif lanes == 1:
        V x${k} = ok ? X[t * ${KS} + ${k}] : (real)0;
%   else:
        V x${k} = okv * X[t * ${KS} + ${k}];
%   endif
% endfor
% if lanes == 1:
        V e = ok ? yv : (real)0;
% else:
        V e = SEL((V)0, yv, isnan(yv) == 0);
% endif
        V w = (V)1;
        // Gentleman's square-root-free Givens rotation of the row into d, Rbar (unit upper
        // triangular) and z: w e^2 at the end is the squared recursive residual
% for k in range(K):
        {
            const V xi = x${k};
            const V dp = d${k} + w * xi * xi;
            const V inv = SEL((V)0, (V)1 / dp, dp > (V)0);
            const V cb = SEL((V)1, d${k} * inv, dp > (V)0);
            const V sb = w * xi * inv;
            w *= cb;
            d${k} = dp;
%   for j in range(k + 1, K):
            {
                const V a = x${j};
                x${j} = a - xi * R${k}_${j};
                R${k}_${j} = cb * R${k}_${j} + sb * a;
            }
%   endfor
            const V a = e;
            e = a - xi * z${k};
            z${k} = cb * z${k} + sb * a;
        }
% endfor
        rss += w * e * e;
% if rev:
        // RSS(t .. last valid value) of each lane, t a valid date after its first (the first
        // valid start's entry is the forward row's: one writer an address)
% for l in range(lanes):
        if (t > first[${l}] && t <= last[${l}] && !isnan(yv${L(l)}))
            tri[((long)pb * Tt + TRI_OFF(t) + last[${l}] - t) * ${interleave} + pr + ${l}] = rss${L(l)};
% endfor
% elif one and lanes > 1:
        // only the lanes whose first valid start this is: a later start of another lane is
        // the sweep's (one writer an address, the same bits whatever the lanes)
% for l in range(lanes):
        if (first[${l}] == tau) tri[base + (long)t * ${interleave} + ${l}] = rss${L(l)};
% endfor
% else:
        VSTORE(rss, tri + base + (long)t * ${interleave});
% endif
    }
% if one:
    }
% endif
% endfor
}
% endif

% if kernels in ("all", "bp_dp"):
${sg.reqd(subgroup)}\
__kernel void bp_dp(__global const real* restrict y, const int Mp, const int Mreal,
                    __global const int* restrict hs, __global const real* restrict tri,
                    __global real* restrict cost, __global int* restrict arg,
                    __global int* restrict vidx,
                    __global int* restrict nobs, __global int* restrict hout,
                    __global int* restrict bmax, __global int* restrict status,
                    __global real* restrict rss_out, __global int* restrict bp_out,
                    const int Nt)
{
    const long Tt = (long)Nt * (Nt + 1) / 2;
    const int p = get_global_id(0);
    if (p >= Mreal) return;
    int n = 0, inf = 0;
    for (int t = 0; t < Nt; ++t) {
        const real v = y[(long)t * Mp + p];
        if (!isnan(v)) {
            vidx[(long)n * Mp + p] = t;
            inf |= isinf(v);
            ++n;
        }
    }
    const int h = hs[n];
    nobs[p] = n;
    hout[p] = h;
    for (int m = 0; m <= ${BREAKS}; ++m) rss_out[(long)m * Mreal + p] = REAL_NAN;
    for (int q = 0; q < ${BREAKS * (BREAKS + 1) // 2}; ++q) bp_out[(long)q * Mreal + p] = -1;
    int st = 0;
    if (inf) st = 3;
    else if (n == 0 || h <= ${K}) st = 1;
    else if (h > n / 2) st = 2;
    status[p] = st;
    if (st) { bmax[p] = 0; return; }
    int B = (n + h - 1) / h - 2;
    B = B > 1 ? B : 1;                      // h = n / 2: R's table still holds one break
    B = B < ${BREAKS} ? B : ${BREAKS};
    bmax[p] = B;
    // RSS of the valid values i..j (1-based, inclusive)
#define D(i) vidx[(long)((i) - 1) * Mp + p]
#define RSS(i, j) tri[TRI_AT(p, TRI_OFF(D(i)) + D(j) - D(i))]
#define COST(m, i) cost[((long)((m) - 1) * Nt + (i)) * Mp + p]
#define ARG(m, i) arg[((long)((m) - 1) * Nt + (i)) * Mp + p]
    for (int i = h; i <= n - h; ++i) COST(1, i) = RSS(1, i);
    for (int m = 2; m <= B; ++m) {
        for (int i = m * h; i <= n - h; ++i) {
            real best = REAL_MAX;
            int bj = -1;
            const int di = D(i);
            for (int j = (m - 1) * h; j <= i - h; ++j) {
                const int dj = D(j + 1);
                const real v = COST(m - 1, j) + tri[TRI_AT(p, TRI_OFF(dj) + di - dj)];
                if (v < best) { best = v; bj = j; }
            }
            COST(m, i) = best;
            ARG(m, i) = bj;
        }
    }
    rss_out[p] = RSS(1, n);
    const int dn = D(n);
    for (int m = 1; m <= B; ++m) {
        real best = REAL_MAX;
        int bi = -1;
        for (int i = m * h; i <= n - h; ++i) {
            const int d1 = D(i + 1);
            const real v = COST(m, i) + tri[TRI_AT(p, TRI_OFF(d1) + dn - d1)];
            if (v < best) { best = v; bi = i; }
        }
        // backtrack; breakpoints of m breaks at bp_out rows m (m - 1) / 2 .. + m - 1
        const long row = (long)m * (m - 1) / 2;
% if scan:
        // each break's row of ARG and vidx read whole, the pixel's own entry kept: the same
        // rows for all pixels (coalesced), no gather. best is already R's in-order sum of the
        // segments' RSS (COST(m, i) adds them left to right along this very path)
        int b = bi;
        for (int mm = m; mm >= 1; --mm) {
            int nb = -1, db = -1;
            for (int i = mm * h; i <= n - h; ++i) {
                const int dv = D(i);
                const int av = mm > 1 ? ARG(mm, i) : -1;
                if (i == b) { db = dv; nb = av; }
            }
            bp_out[(row + mm - 1) * Mreal + p] = db;
            b = nb;
        }
        rss_out[(long)m * Mreal + p] = bi >= 0 ? best : REAL_NAN;
    }
% else:
        int b = bi;
        for (int mm = m; mm >= 1; --mm) {
            bp_out[(row + mm - 1) * Mreal + p] = b;
            if (mm > 1) b = ARG(mm, b);
        }
        // R sums the segments' RSS again, in order
        real s = 0;
        int a = 0;
        for (int mm = 0; mm <= m; ++mm) {
            const int e = mm < m ? bp_out[(row + mm) * Mreal + p] : n;
            s += RSS(a + 1, e);
            a = e;
        }
        rss_out[(long)m * Mreal + p] = s;
    }
    // breakpoints as date indices (the last date of each segment)
    for (int q = 0; q < ${BREAKS * (BREAKS + 1) // 2}; ++q) {
        const int b = bp_out[(long)q * Mreal + p];
        if (b > 0) bp_out[(long)q * Mreal + p] = D(b);
    }
% endif
#undef D
#undef RSS
#undef COST
#undef ARG
}
% endif
