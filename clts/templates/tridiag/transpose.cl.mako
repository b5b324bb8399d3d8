## Tiled transposition through local memory: dst[j, i] = src[i, j], src is [rows, cols].
## Parameters: real, tile (tile edge), tile_y (work-group height; each work-item moves tile/tile_y
## elements). Work-group (tile, tile_y); global (round_up(cols, tile), ceil(rows/tile)*tile_y).
## tile = 0: no local memory, one element per work-item (global (rows, cols)): CPU drivers
## vectorise that loop-free kernel across work-items and their caches do the tiling.
## transpose4: four arrays of the same shape in one launch (a, b, c, d of a solve), the third
## global dimension (4, work-group 1 there) picks the pair: one launch instead of four.
<%include file="/common/real.cl.mako"/>
<%def name="pick()">
    const int w = get_global_id(2);
    __global const real *restrict src = w == 0 ? src0 : w == 1 ? src1 : w == 2 ? src2 : src3;
    __global real *restrict dst = w == 0 ? dst0 : w == 1 ? dst1 : w == 2 ? dst2 : dst3;
</%def>
<%def name="four()">__global const real *restrict src0, __global const real *restrict src1,
                         __global const real *restrict src2, __global const real *restrict src3,
                         __global real *restrict dst0, __global real *restrict dst1,
                         __global real *restrict dst2, __global real *restrict dst3,
                         const int rows, const int cols</%def>
% if tile == 0:
<%def name="body_plain()">
    const int i = get_global_id(0), j = get_global_id(1);
    if (i < rows && j < cols) dst[(size_t)j * (size_t)rows + i] = src[(size_t)i * (size_t)cols + j];
</%def>
__kernel void transpose(__global const real *restrict src, __global real *restrict dst,
                        const int rows, const int cols)
{
${body_plain()}
}

__kernel void transpose4(${four()})
{
${pick()}
${body_plain()}
}
% else:
<%def name="body_tiled()">
    __local real tile[${tile}][${tile + 1}];
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int col0 = get_group_id(0) * ${tile}, row0 = get_group_id(1) * ${tile};
    for (int r = ty; r < ${tile}; r += ${tile_y}) {
        const int i = row0 + r, j = col0 + tx;
        if (i < rows && j < cols) tile[r][tx] = src[(size_t)i * (size_t)cols + j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r = ty; r < ${tile}; r += ${tile_y}) {
        const int j = col0 + r, i = row0 + tx;
        if (i < rows && j < cols) dst[(size_t)j * (size_t)rows + i] = tile[tx][r];
    }
</%def>

__kernel __attribute__((reqd_work_group_size(${tile}, ${tile_y}, 1)))
void transpose(__global const real *restrict src, __global real *restrict dst,
               const int rows, const int cols)
{
${body_tiled()}
}

__kernel __attribute__((reqd_work_group_size(${tile}, ${tile_y}, 1)))
void transpose4(${four()})
{
${pick()}
${body_tiled()}
}
% endif
