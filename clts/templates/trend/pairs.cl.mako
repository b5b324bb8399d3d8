<%namespace name="sg" file="/common/subgroup.cl.mako"/>\
## Mann-Kendall and Theil-Sen per series: every pair (i < j) of valid values of the same season
## (i = j mod P; P = 1 for the non-seasonal tests) compared once, one work-item per series.
## S = sum sign(x_j - x_i); ties: sum over values of 6 e (e + 2), e = the equal values after it
## (= sum over tie groups of t (t - 1) (2 t + 5)); the pairwise slopes (per step, or per cycle
## when seasonal) written to the series' scratch row. A complete non-seasonal row runs the pair
## loop on realW vectors (pocl vectorises only explicit vectors).
## Sen's median and confidence bounds: median="select": quantiles of a strided sample of the
## slopes bracket the needed ranks, one pass keeps the slopes inside the bracket, and a
## branch-free quickselect finds the ranks among them (a bracket that misses: the full row);
## median="sort": a heapsort of all slopes. Interleaved, the sample's quantiles and the ranks
## come from a radix select (4 bits a pass, every pass reading the slopes in index order).
## stats per series (long): S, sum n_r (n_r - 1) (2 n_r + 5), tie sum, sum n_r (n_r - 1), n_valid
## sen per series (real): median slope, lower, upper bound of its confidence interval.
## subgroup: the sub-group size mk_pairs requires on Intel GPUs (0: the compiler picks; IGC
## picks SIMD32 on pvc and spills the float64 quickselect's state at 128 GRF, none at SIMD16).
## interleave (GPUs): the chunk time-major (value i of series s at y[i B + s], B its series) and
## the scratch rows interleaved by work-item (slope m of work-item g at scratch[m G + g], G
## work-items), so adjacent work-items read and write adjacent words; the realW loop is left out.
## slopes=0 (the pre-whitening tests' whitened values): S and the tie sums only, no slope is
## stored and sen is NaN.
<%include file="/common/real.cl.mako"/>
<%
    mask = "long" if real == "double" else "int"
    interleave = context.get("interleave", 0)
    def Y(e):
        return f"yr[(long)({e}) * YS]" if interleave else f"yr[{e}]"
    def A(e, arr="a"):
        return f"{arr}[(long)({e}) * ST]" if interleave else f"{arr}[{e}]"
    SP = ", const long ST" if interleave else ""     # the slopes' stride: G
    SA = ", ST" if interleave else ""
    YP = ", const int YS, const long ST" if interleave else ""
    YA = ", YS, ST" if interleave else ""
    vector = lanes > 1 and not interleave
    slopes = context.get("slopes", 1)
%>
#define TREND_NSTATS 5
#define SAMPLE ${sample}

% if vector:
typedef ${real}${lanes} realW;
typedef ${mask}${lanes} maskW;
% endif

// the valid pairwise slopes of one series into a[0..): returns their number; with stats, S,
// tie sum, A, D and n_valid too
int fill_slopes(global const real* yr, const int N, const int P, global real* a,
                global long* st${YP}) {
    long S = 0, A = 0, T = 0, D = 0, nv = 0;
    int m = 0;
    for (int r = 0; r < P; ++r) {
        long nr = 0;
        for (int i = r; i < N; i += P) {
            const real xi = ${Y('i')};
            if (isnan(xi)) continue;
            ++nr;
            long e = 0;
            int c = 1;
            for (int j = i + P; j < N; j += P, ++c) {
                const real xj = ${Y('j')};
                S += (xj > xi) - (xj < xi);       // false with a NaN
                e += (xj == xi);
% if slopes:
                ${A('m')} = (xj - xi) / (real)c;
% endif
                m += !isnan(xj);
            }
            T += 6 * e * (e + 2);
        }
        A += nr * (nr - 1) * (2 * nr + 5);
        D += nr * (nr - 1);
        nv += nr;
    }
    st[0] = S; st[1] = A; st[2] = T; st[3] = D; st[4] = nv;
    return m;
}

% if vector:
// the same for a complete row and P = 1, the inner loop on realW vectors
int fill_slopes_vector(global const real* yr, const int N, global real* a, global long* st) {
    long S = 0, T = 0;
    int m = 0;
    realW iota = (realW)(${", ".join(str(k) for k in range(lanes))});
    for (int i = 0; i < N - 1; ++i) {
        const real xi = yr[i];
        maskW accS = 0, accE = 0;
        int j = i + 1;
        for (; j + ${lanes} <= N; j += ${lanes}) {
            const realW xv = vload${lanes}(0, yr + j);
            accS += (xv < xi) - (xv > xi);          // true is -1
            accE -= (xv == xi);
% if slopes:
            vstore${lanes}((xv - xi) / ((real)(j - i) + iota), 0, a + m);
% endif
            m += ${lanes};
        }
        long e = 0;
% for k in range(lanes):
        S += accS.s${"%x" % k}; e += accE.s${"%x" % k};
% endfor
        for (; j < N; ++j) {
            const real xj = yr[j];
            S += (xj > xi) - (xj < xi);
            e += (xj == xi);
% if slopes:
            a[m++] = (xj - xi) / (real)(j - i);
% else:
            ++m;
% endif
        }
        T += 6 * e * (e + 2);
    }
    const long n = N;
    st[0] = S; st[1] = n * (n - 1) * (2 * n + 5); st[2] = T; st[3] = n * (n - 1); st[4] = n;
    return m;
}
% endif

% if median == "select" and interleave:
<%
    NB = 64 if real == "double" else 32
%>\
<%include file="/common/rkey.cl.mako"/>
// k-th smallest (0-based) of a[x ST], x < m: a radix select on order-preserving integer keys,
// 4 bits a pass; every pass reads a[0..m) in index order, so adjacent work-items read adjacent
// words (the quickselect sends each work-item to its own indices)
real radix_kth(global const real* a, const int m, int k, const long ST) {
    rkey_t pre = 0, msk = 0;    // the digits of the k-th smallest key found so far, their bits
    for (int sh = ${NB - 4}; sh >= 0; sh -= 4) {
        int ${", ".join(f"n{j} = 0" for j in range(16))};
        for (int x = 0; x < m; ++x) {
            const rkey_t kx = real_key(a[(long)x * ST]);
            const int d = (kx & msk) == pre ? (int)(kx >> sh) & 15 : 16;
% for j in range(16):
            n${j} += d == ${j};
% endfor
        }
        int dg = 0, nd = 0;
% for j in range(16):
        if (!nd) { if (k < n${j}) { dg = ${j}; nd = n${j}; } else k -= n${j}; }
% endfor
        pre |= (rkey_t)dg << sh;
        msk |= (rkey_t)15 << sh;
        if (nd == 1) break;     // one candidate left: it is the k-th smallest
    }
    rkey_t kh = pre;            // all digits known, or the one candidate's key
    if (msk != ~(rkey_t)0)
        for (int x = 0; x < m; ++x) {
            const rkey_t kx = real_key(a[(long)x * ST]);
            kh = (kx & msk) == pre ? kx : kh;
        }
    return key_real(kh);
}
% elif median == "select":
// k-th smallest of a[lo..hi] (k in [lo, hi]) in place, branch-free Lomuto partitions around a
// median-of-three pivot: afterwards a[x] <= a[k] for x < k and a[x] >= a[k] for x > k
__attribute__((always_inline)) real select_k(global real* a, int lo, int hi, const int k${SP}) {
    while (hi > lo) {
        const int mid = lo + (hi - lo) / 2;
        const real x0 = ${A('lo')}, x1 = ${A('mid')}, x2 = ${A('hi')};
        const real piv = fmax(fmin(x0, x1), fmin(fmax(x0, x1), x2));
        // the pivot to a[hi]
        const int pi = (piv == x0) ? lo : (piv == x1) ? mid : hi;
        ${A('pi')} = x2; ${A('hi')} = piv;
        int s = lo;
        for (int i = lo; i < hi; ++i) {
            const real v = ${A('i')}, t = ${A('s')};
            const int c = v < piv;
            ${A('i')} = c ? t : v;
            ${A('s')} = c ? v : t;
            s += c;
        }
        ${A('hi')} = ${A('s')}; ${A('s')} = piv;
        if (k == s) break;
        if (k < s) {
            hi = s - 1;
        } else if (s > lo) {
            lo = s + 1;
        } else {
            // nothing below the pivot: skip the run of values equal to it (many ties, e.g.
            // integer data, would otherwise shrink the range one value per pass)
            int e = s + 1;
            for (int i = s + 1; i <= hi; ++i) {
                const real v = ${A('i')}, t = ${A('e')};
                const int c = v == piv;
                ${A('i')} = c ? t : v;
                ${A('e')} = c ? v : t;
                e += c;
            }
            if (k < e) break;
            lo = e;
        }
    }
    return ${A('k')};
}

// a[0..m): o[0] = the mean of ranks k1 and k2 (0-based; the median), o[1] / o[2] = ranks k0 /
// k3 (-1: none, NaN); scalars, not arrays: private arrays become scratch memory on GPUs
__attribute__((always_inline)) void select_ranks(global real* a, const int m, const int k0,
                                                const int k, const int k2,
                  const int k3, global real* o${SP}) {
    const real mid = select_k(a, 0, m - 1, k${SA});
    real hm = mid;
    if (k2 > k) {
        hm = ${A('k + 1')};
        for (int x = k + 2; x < m; ++x) hm = fmin(hm, ${A('x')});
    }
    o[0] = (mid + hm) * (real)0.5;
    // each bound in the part of the median's partition that holds it (one call site each:
    // fewer inlined copies, no scratch on gfx908)
    o[1] = k0 < 0 ? NAN : select_k(a, k0 <= k ? 0 : k + 1, k0 <= k ? k : m - 1, k0${SA});
    o[2] = k3 < 0 ? NAN : select_k(a, k3 > k ? k + 1 : 0, k3 > k ? m - 1 : k, k3${SA});
}
% else:
void sift_down(global real* a, int root, const int end${SP}) {
    while (2 * root + 1 <= end) {
        const int child = 2 * root + 1;
        int sw = root;
        if (${A('sw')} < ${A('child')}) sw = child;
        if (child + 1 <= end && ${A('sw')} < ${A('child + 1')}) sw = child + 1;
        if (sw == root) return;
        const real t = ${A('root')}; ${A('root')} = ${A('sw')}; ${A('sw')} = t;
        root = sw;
    }
}
% endif

void one_series(global const real* yr, const int N, const int P, const long M, const real zq,
                global long* so, global real* o, global real* a${YP}) {
% if vector:
    int complete = P == 1;
    for (int i = 0; i < N && complete; ++i) complete = !isnan(yr[i]);
    const int m = complete ? fill_slopes_vector(yr, N, a, so) : fill_slopes(yr, N, P, a, so);
% else:
    const int m = fill_slopes(yr, N, P, a, so${YA});
% endif
% if not slopes:
    (void)m;
    o[0] = o[1] = o[2] = NAN;
% else:
    if (m == 0) {
        o[0] = o[1] = o[2] = NAN;
        return;
    }
    // confidence ranks (1-based) of Gilbert (1987): round((m -+ C) / 2) (+ 1 for the upper),
    // C = z_(1 - alpha / 2) sqrt(Var S); rint rounds half to even, as R's round
    const real C = zq * sqrt((real)(so[1] - so[2]) / (real)18);
    const real rl = rint(((real)m - C) / 2), ru = rint(((real)m + C) / 2 + 1);
    const int k = (m - 1) / 2;
    // the 0-based ranks wanted: lower bound, the median's one or two, upper bound (-1: none)
    const int k0 = (rl >= 1 && rl <= m) ? (int)rl - 1 : -1, k2 = (m % 2) ? k : k + 1;
    const int k3 = (ru >= 1 && ru <= m) ? (int)ru - 1 : -1;
% if median == "select":
    const int lo_k = k0 >= 0 ? k0 : k, hi_k = k3 >= 0 ? k3 : k2;
    int mm = m, off = 0;        // select among a[0..mm), ranks shifted by off
    if (m > 4 * SAMPLE) {
        // quantiles of a strided sample (stored after the row) bracket ranks lo_k..hi_k
        global real* smp = a + ${"M * ST" if interleave else "M"};
        for (int x = 0; x < SAMPLE; ++x) ${A('x', 'smp')} = ${A('(long)x * m / SAMPLE')};
        const int margin = (int)(4 * sqrt((real)SAMPLE) / 2) + 2;
        const int sl = max(0, (int)((long)lo_k * SAMPLE / m) - margin);
        const int sh = min(SAMPLE - 1, (int)((long)hi_k * SAMPLE / m) + margin);
% if interleave:
        real plo = -INFINITY, phi = INFINITY;
        for (int q = 0; q < 2; ++q) {           // one call site: fewer inlined copies
            const int r = q ? sh : sl;
            if (q ? sh == SAMPLE - 1 : sl == 0) continue;
            const real v = radix_kth(smp, SAMPLE, r, ST);
            plo = q ? plo : v;
            phi = q ? v : phi;
        }
% else:
        const real plo = sl > 0 ? select_k(smp, 0, SAMPLE - 1, sl${SA}) : -INFINITY;
        const real phi = sh < SAMPLE - 1 ? select_k(smp, 0, SAMPLE - 1, sh${SA}) : INFINITY;
% endif
        int below = 0, w = 0;
        for (int x = 0; x < m; ++x) {
            const real s = ${A('x')};
            below += s < plo;
            ${A('w')} = s;
            w += (s >= plo) & (s <= phi);
        }
        if (below <= lo_k && below + w > hi_k) {
            mm = w;
            off = below;
        } else {
            fill_slopes(yr, N, P, a, so${YA});       // the bracket missed (rare): the whole row
        }
    }
% if interleave:
    // the ranks among the kept slopes by radix select (the quickselect's values; a zero's sign
    // may differ where the slopes hold both -0 and +0)
    // (one call site: fewer inlined copies, no scratch on gfx908 / gfx90a)
    real mid = 0, hm = 0, lb = NAN, ub = NAN;
    for (int q = 0; q < 4; ++q) {
        const int r = q == 0 ? k : q == 1 ? k2 : q == 2 ? k0 : k3;
        if (r < 0 || (q == 1 && k2 == k)) continue;
        const real v = radix_kth(a, mm, r - off, ST);
        mid = q == 0 ? v : mid;
        hm = q <= 1 ? v : hm;
        lb = q == 2 ? v : lb;
        ub = q == 3 ? v : ub;
    }
    o[0] = (mid + hm) * (real)0.5;
    o[1] = lb;
    o[2] = ub;
% else:
    // one call site: fewer inlined copies of the selection (no scratch on gfx908)
    select_ranks(a, mm, k0 < 0 ? -1 : k0 - off, k - off, k2 - off, k3 < 0 ? -1 : k3 - off, o${SA});
% endif
% else:
    for (int s = (m - 2) / 2; s >= 0; --s) sift_down(a, s, m - 1${SA});
    for (int end = m - 1; end > 0; --end) {
        const real t = ${A('0')}; ${A('0')} = ${A('end')}; ${A('end')} = t;
        sift_down(a, 0, end - 1${SA});
    }
    o[0] = (${A('k')} + ${A('k2')}) * (real)0.5;
    o[1] = k0 >= 0 ? ${A('k0')} : NAN;
    o[2] = k3 >= 0 ? ${A('k3')} : NAN;
% endif
% endif
}

// work-item g takes series g, g + G, ... (G work-items): its scratch row (M + SAMPLE slopes)
// is re-used by each of them and stays in the core's cache on CPUs
${sg.reqd(subgroup)}\
kernel void mk_pairs(global const real* y, const int N, const int P, const int B, const long M,
                     const real zq, global long* stats, global real* sen,
                     global real* scratch) {
    const int g = get_global_id(0);
% if interleave:
    global real* a = scratch + g;       // slope m at a[m G]
    const int YS = B;                   // value i of series b at y[i B + b]
    const long ST = get_global_size(0);
    for (int b = g; b < B; b += ST)
        one_series(y + b, N, P, M, zq, stats + (long)b * TREND_NSTATS, sen + (long)b * 3, a,
                   YS, ST);
% else:
    global real* a = scratch + (long)g * (M + SAMPLE);
    for (int b = g; b < B; b += get_global_size(0))
        one_series(y + (long)b * N, N, P, M, zq, stats + (long)b * TREND_NSTATS,
                   sen + (long)b * 3, a);
% endif
}
