## Flat (scan-based) tridiagonal solver for few large systems. Each system is cut into chunks of
## C rows (one work-item per chunk); the three recurrences of the Thomas algorithm become scans:
##   den[i] = b[i] - a[i]*c[i-1]/den[i-1]   2x2 matrix products  [p;q] <- [[b, -a c'],[1, 0]] [p;q]
##   d'[i]  = (d[i] - a[i]*d'[i-1])/den[i]  affine maps composed  y <- alpha + beta*y
##   x[i]   = d'[i] - c'[i]*x[i+1]           affine maps composed backwards
## Each scan is chunk aggregates (parallel) -> a sequential scan over the chunks of a system
## (one work-item per system) -> chunk re-sweeps from the carried value (parallel). Inside a
## chunk the sweeps are the plain Thomas recurrences, so only chunk boundaries go through the
## matrix products. Parameters: real, LAYOUT, HAS_START, interleave (and tile, tile_y for the
## chunked layout's gather / scatter).
##
## Buffers: scratch = [c' (n*nsys) | 1/den (n*nsys)] in the data layout; mat (real4 per chunk),
## aff (2 reals per chunk), carry (real per chunk), status (int per system).
## interleave = 1 (GPUs): work-item gid = ch*nsys + sys, so adjacent work-items hold the same
## chunk of adjacent systems; mat, aff as planes of M = nsys*nc values (mat[q*M + gid],
## aff[gid], aff[M + gid]), carry[gid]: the per-system scans read adjacent systems' words.
## LAYOUT "chunked" (interleave with natural-layout data): a, b, c, d, x and scratch hold row r
## of every chunk together, [r][gid] (C*M values each), copied there and back by flat_gather /
## flat_scatter through local-memory tiles: every access of a warp covers adjacent words.
<%include file="/common/real.cl.mako"/>
% if LAYOUT == "natural":
#define IDX(i) ((size_t)sys * (size_t)n + (size_t)(i))
% elif LAYOUT == "chunked":
/* row i of this work-item's chunk, or the last row of the chunk before (i = s - 1: c[s-1]) */
#define IDX(i) (((i) >= s) ? (size_t)((i) - s) * M + gid : (size_t)(C - 1) * M + gid - (size_t)nsys)
% else:
#define IDX(i) ((size_t)(i) * (size_t)nsys + (size_t)sys)
% endif
% if interleave:
#define M ((size_t)nsys * (size_t)nc)
% endif
% if LAYOUT == "chunked":
#define TOTAL ((size_t)C * M)
% else:
#define TOTAL ((size_t)n * (size_t)nsys)
% endif

% if HAS_START:
#define LO_OF(sys) ((start[sys] >= 0 && start[sys] < n) ? start[sys] : n)
% else:
#define LO_OF(sys) 0
% endif
/* masked coefficients: rows below lo are identity rows, a ignored at lo (and row 0), c at n-1 */
#define A_(i) (((i) > lo) ? a[IDX(i)] : (real)0)
#define B_(i) (((i) >= lo) ? b[IDX(i)] : (real)1)
#define C_(i) (((i) >= lo && (i) < n - 1) ? c[IDX(i)] : (real)0)
#define D_(i) (((i) >= lo) ? d[IDX(i)] : (real)0)

#define CHUNK_PROLOGUE \
    const size_t gid = get_global_id(0); \
    if (gid >= (size_t)nsys * (size_t)nc) return; \
% if interleave:
    const int ch = (int)(gid / (size_t)nsys); \
    const int sys = (int)(gid - (size_t)ch * (size_t)nsys); \
% else:
    const int sys = (int)(gid / (size_t)nc); \
    const int ch = (int)(gid - (size_t)sys * (size_t)nc); \
% endif
    const int s = ch * C, e = min(n, s + C); \
    const int lo = LO_OF(sys);

<%def name="key()">\
% if interleave:
        const size_t k = (size_t)ch * nsys + sys;
% else:
        const size_t k = (size_t)sys * nc + ch;
% endif
</%def>\
<%def name="aff_store()">\
% if interleave:
    aff[gid] = aff0;
    aff[M + gid] = aff1;
% else:
    aff[2 * gid] = aff0;   /* two scalar stores: Oclgrind mis-tracks real2 ones */
    aff[2 * gid + 1] = aff1;
% endif
</%def>\
<%def name="aff_load()">\
% if interleave:
        const real f0 = aff[k], f1 = aff[M + k];
% else:
        const real f0 = aff[2 * k], f1 = aff[2 * k + 1];
% endif
</%def>\
#define ARGS __global const real *restrict a, __global const real *restrict b, \
             __global const real *restrict c, __global const real *restrict d, \
             __global const int *restrict start, const int n, const int nsys, \
             const int C, const int nc

/* 1. product of the chunk's 2x2 matrices (normalised: only the ratio p/q matters) */
% if interleave:
__kernel void flat_mat(ARGS, __global real *restrict mat)
% else:
__kernel void flat_mat(ARGS, __global real4 *restrict mat)
% endif
{
    CHUNK_PROLOGUE
    real4 P = (real4)(1, 0, 0, 1);               /* (p00, p01, p10, p11) */
    for (int i = s; i < e; ++i) {
        const real m00 = B_(i);
        const real m01 = (i > 0) ? -A_(i) * C_(i - 1) : (real)0;
        /* M P with M = [[m00, m01], [1, 0]] */
        real4 Q = (real4)(m00 * P.s0 + m01 * P.s2, m00 * P.s1 + m01 * P.s3, P.s0, P.s1);
        const real sc = fmax(fmax(fabs(Q.s0), fabs(Q.s1)), fmax(fabs(Q.s2), fabs(Q.s3)));
        P = (sc > (real)0 && isfinite(sc)) ? Q * ((real)1 / sc) : Q;
    }
% if interleave:
    mat[gid] = P.s0;   /* four planes of M: adjacent work-items, adjacent words */
    mat[M + gid] = P.s1;
    mat[2 * M + gid] = P.s2;
    mat[3 * M + gid] = P.s3;
% else:
    mat[gid] = P;
% endif
}

/* 2. per system: den entering each chunk (den[s-1]) */
% if interleave:
__kernel void flat_scan_mat(__global const real *restrict mat, __global real *restrict carry,
                            const int nsys, const int nc)
% else:
__kernel void flat_scan_mat(__global const real4 *restrict mat, __global real *restrict carry,
                            const int nsys, const int nc)
% endif
{
    const int sys = get_global_id(0);
    if (sys >= nsys) return;
    real2 v = (real2)(1, 0);
    for (int ch = 0; ch < nc; ++ch) {
${key()}\
        carry[k] = v.s0 / v.s1;
% if interleave:
        const real4 P = (real4)(mat[k], mat[M + k], mat[2 * M + k], mat[3 * M + k]);
% else:
        const real4 P = mat[k];
% endif
        v = (real2)(P.s0 * v.s0 + P.s1 * v.s1, P.s2 * v.s0 + P.s3 * v.s1);
        const real sc = fmax(fabs(v.s0), fabs(v.s1));
        if (sc > (real)0 && isfinite(sc)) v *= (real)1 / sc;
    }
}

/* 3. chunk forward sweep 1: den, c' = c/den, 1/den; aggregate of d' maps */
__kernel void flat_fwd1(ARGS, __global const real *restrict carry, __global real *restrict scratch,
                        __global real *restrict aff, __global int *restrict status)
{
    CHUNK_PROLOGUE
    real cpp = (s > 0) ? C_(s - 1) / carry[gid] : (real)0;
    real aff0 = 0, aff1 = 1;
    int bad = 0;
    for (int i = s; i < e; ++i) {
        const real ai = A_(i);
        const real den = B_(i) - ai * cpp;
        bad |= (den == (real)0);
        const real inv = (real)1 / den;
        cpp = C_(i) * inv;
        scratch[IDX(i)] = cpp;
        scratch[TOTAL + IDX(i)] = inv;
        const real beta = -ai * inv;
        aff0 = D_(i) * inv + beta * aff0;
        aff1 = beta * aff1;
    }
    if (bad) atomic_or(status + sys, 1);
${aff_store()}\
}

/* 4. per system: d'[s-1] entering each chunk; count failed systems */
__kernel void flat_scan_fwd(__global const real *restrict aff, __global real *restrict carry,
                            __global const int *restrict status, __global int *restrict counter,
                            const int nsys, const int nc)
{
    const int sys = get_global_id(0);
    if (sys >= nsys) return;
    real y = 0;
    for (int ch = 0; ch < nc; ++ch) {
${key()}\
        carry[k] = y;
${aff_load()}\
        y = f0 + f1 * y;
    }
    if (status[sys]) atomic_inc(counter);
}

/* 5. chunk forward sweep 2: d' into x; aggregate of the backward maps x[i] = d'[i] - c'[i] x[i+1] */
__kernel void flat_fwd2(ARGS, __global const real *restrict carry,
                        __global const real *restrict scratch, __global real *restrict aff,
                        __global real *restrict x)
{
    CHUNK_PROLOGUE
    real y = carry[gid];
    real aff0 = 0, aff1 = 1;
    for (int i = s; i < e; ++i) {
        y = (D_(i) - A_(i) * y) * scratch[TOTAL + IDX(i)];
        x[IDX(i)] = y;
        aff0 += aff1 * y;
        aff1 = -aff1 * scratch[IDX(i)];
    }
${aff_store()}\
}

/* 6. per system: x entering each chunk from the right (x[e]) */
__kernel void flat_scan_bwd(__global const real *restrict aff, __global real *restrict carry,
                            const int nsys, const int nc)
{
    const int sys = get_global_id(0);
    if (sys >= nsys) return;
    real xr = 0;
    for (int ch = nc - 1; ch >= 0; --ch) {
${key()}\
        carry[k] = xr;
${aff_load()}\
        xr = f0 + f1 * xr;
    }
}

/* 7. chunk backward sweep: x */
__kernel void flat_bwd(ARGS, __global const real *restrict carry,
                       __global const real *restrict scratch, __global const int *restrict status,
                       __global real *restrict x)
{
    CHUNK_PROLOGUE
    const int bad = status[sys];
    real xn = carry[gid];
    for (int i = e - 1; i >= s; --i) {
        xn = x[IDX(i)] - scratch[IDX(i)] * xn;
        x[IDX(i)] = bad ? REAL_NAN : xn;
    }
}
% if LAYOUT == "chunked":

/* natural layout <-> chunked: row r of chunk ch of system sys (i = ch*C + r < n) is
   src[sys*n + i] <-> dst[r*M + ch*nsys + sys]; a (tile x tile) block through local memory,
   read along the rows of the natural layout, written along the chunks */
__kernel __attribute__((reqd_work_group_size(${tile}, ${tile_y}, 1)))
void flat_gather(__global const real *restrict src, __global real *restrict dst, const int n,
                 const int nsys, const int C, const int nc)
{
    __local real t[${tile}][${tile + 1}];
    const int tx = get_local_id(0), ty = get_local_id(1);
    const size_t g0 = (size_t)get_group_id(0) * ${tile};
    const int r0 = get_group_id(1) * ${tile};
    for (int k = ty; k < ${tile}; k += ${tile_y}) {
        const size_t g = g0 + k;
        const int r = r0 + tx;
        if (g < M && r < C) {
            const int ch = (int)(g / (size_t)nsys);
            const int sys = (int)(g - (size_t)ch * (size_t)nsys);
            const int i = ch * C + r;
            if (i < n) t[k][tx] = src[(size_t)sys * (size_t)n + (size_t)i];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = ty; k < ${tile}; k += ${tile_y}) {
        const size_t g = g0 + tx;
        const int r = r0 + k;
        if (g < M && r < C) {
            const int ch = (int)(g / (size_t)nsys);
            if (ch * C + r < n) dst[(size_t)r * M + g] = t[tx][k];
        }
    }
}

__kernel __attribute__((reqd_work_group_size(${tile}, ${tile_y}, 1)))
void flat_scatter(__global const real *restrict src, __global real *restrict dst, const int n,
                  const int nsys, const int C, const int nc)
{
    __local real t[${tile}][${tile + 1}];
    const int tx = get_local_id(0), ty = get_local_id(1);
    const size_t g0 = (size_t)get_group_id(0) * ${tile};
    const int r0 = get_group_id(1) * ${tile};
    for (int k = ty; k < ${tile}; k += ${tile_y}) {
        const size_t g = g0 + tx;
        const int r = r0 + k;
        if (g < M && r < C) {
            const int ch = (int)(g / (size_t)nsys);
            if (ch * C + r < n) t[k][tx] = src[(size_t)r * M + g];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = ty; k < ${tile}; k += ${tile_y}) {
        const size_t g = g0 + k;
        const int r = r0 + tx;
        if (g < M && r < C) {
            const int ch = (int)(g / (size_t)nsys);
            const int sys = (int)(g - (size_t)ch * (size_t)nsys);
            const int i = ch * C + r;
            if (i < n) dst[(size_t)sys * (size_t)n + (size_t)i] = t[tx][k];
        }
    }
}
% endif
