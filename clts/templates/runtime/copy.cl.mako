## Plain copy kernel: the device's copy bandwidth, the yardstick every benchmark quotes.
<%include file="/common/real.cl.mako"/>
__kernel void copy(__global const real${'' if width == 1 else width} *restrict src,
                   __global real${'' if width == 1 else width} *restrict dst)
{
    const size_t i = get_global_id(0);
    dst[i] = src[i];
}
