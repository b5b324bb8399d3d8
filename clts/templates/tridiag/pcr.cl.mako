## Parallel cyclic reduction: one work-group per system, the system in local memory.
## Parameters: real, LAYOUT, HAS_START, wg (work-group size), ROWS (rows per work-item;
## wg*ROWS >= n). ceil(log2 n) reduction steps, each a read phase and a write phase.
<%include file="/common/real.cl.mako"/>
<% NL = wg * ROWS %>
% if LAYOUT == "natural":
#define IDX(i) ((size_t)sys * (size_t)n + (size_t)(i))
% else:
#define IDX(i) ((size_t)(i) * (size_t)nsys + (size_t)sys)
% endif

__kernel __attribute__((reqd_work_group_size(${wg}, 1, 1)))
void pcr(__global const real *restrict a, __global const real *restrict b,
         __global const real *restrict c, __global const real *restrict d,
         __global real *restrict x, __global real *restrict scratch,
         __global const int *restrict start, __global int *restrict counter,
         const int n, const int nsys)
{
    __local real la[${NL}], lb[${NL}], lc[${NL}], ld[${NL}];
    __local int lbad;
    const int sys = get_group_id(0);
    const int lid = get_local_id(0);
    if (lid == 0) lbad = 0;
% if HAS_START:
    const int st = start[sys];
    const int lo = (st >= 0 && st < n) ? st : n;
% else:
    const int lo = 0;
% endif
% for r in range(ROWS):
    {
        const int i = lid + ${r * wg};
        if (i < n) {
            const int live = (i >= lo);
            la[i] = (i > lo) ? a[IDX(i)] : (real)0;
            lb[i] = live ? b[IDX(i)] : (real)1;
            lc[i] = (live && i < n - 1) ? c[IDX(i)] : (real)0;
            ld[i] = live ? d[IDX(i)] : (real)0;
        }
    }
% endfor
    barrier(CLK_LOCAL_MEM_FENCE);
    int failed = 0;
    for (int s = 1; s < n; s <<= 1) {
% for r in range(ROWS):
        real na${r} = 0, nb${r} = 1, nc${r} = 0, nd${r} = 0;
        {
            const int i = lid + ${r * wg};
            if (i < n) {
                const real ai = la[i], ci = lc[i];
                nb${r} = lb[i];
                nd${r} = ld[i];
                if (i - s >= 0 && ai != (real)0) {
                    const real bm = lb[i - s];
                    failed |= (bm == (real)0);
                    const real alpha = -ai / bm;
                    na${r} = alpha * la[i - s];
                    nb${r} += alpha * lc[i - s];
                    nd${r} += alpha * ld[i - s];
                }
                if (i + s < n && ci != (real)0) {
                    const real bp = lb[i + s];
                    failed |= (bp == (real)0);
                    const real gamma = -ci / bp;
                    nc${r} = gamma * lc[i + s];
                    nb${r} += gamma * la[i + s];
                    nd${r} += gamma * ld[i + s];
                }
            }
        }
% endfor
        barrier(CLK_LOCAL_MEM_FENCE);
% for r in range(ROWS):
        {
            const int i = lid + ${r * wg};
            if (i < n) { la[i] = na${r}; lb[i] = nb${r}; lc[i] = nc${r}; ld[i] = nd${r}; }
        }
% endfor
        barrier(CLK_LOCAL_MEM_FENCE);
    }
% for r in range(ROWS):
    real x${r} = 0;
    {
        const int i = lid + ${r * wg};
        if (i < n) {
            failed |= (lb[i] == (real)0);
            x${r} = ld[i] / lb[i];
        }
    }
% endfor
    if (failed) atomic_or(&lbad, 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    const int bad = lbad;
% for r in range(ROWS):
    {
        const int i = lid + ${r * wg};
        if (i < n) x[IDX(i)] = bad ? REAL_NAN : x${r};
    }
% endfor
    if (bad && lid == 0) atomic_inc(counter);
}
