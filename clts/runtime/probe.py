"""Probe one OpenCL device in a child process: build and run a tiny kernel, check its result.

A broken driver can crash the process that builds a kernel (the pocl bundled by
``pyopencl[pocl]`` segfaults on some CPUs), so the parent never builds before a probe passed.
Run as ``python -m clts.runtime.probe PLATFORM_INDEX DEVICE_INDEX``; prints one JSON line.
"""
from __future__ import annotations

import json
import sys

PROBE_SOURCE = r"""
#ifdef PROBE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
typedef double8 real8;
#else
typedef float real;
typedef float8 real8;
#endif
__kernel void probe(__global const real *x, __global real *y, __local real *tmp)
{
    const size_t g = get_global_id(0), l = get_local_id(0), n = get_local_size(0);
    real8 v = vload8(g, x);
    tmp[l] = v.s0 + v.s1 + v.s2 + v.s3 + v.s4 + v.s5 + v.s6 + v.s7;
    barrier(CLK_LOCAL_MEM_FENCE);
    real s = tmp[(l + 1) % n];
    y[g] = s * (real)2 + (real)1;
}
"""


def probe(platform_index: int, device_index: int) -> dict:
    import numpy as np
    import pyopencl as cl

    dev = cl.get_platforms()[platform_index].get_devices()[device_index]
    fp64 = "cl_khr_fp64" in dev.extensions
    dtype = np.float64 if fp64 else np.float32
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, PROBE_SOURCE).build(options=["-DPROBE_FP64"] if fp64 else [])
    n, wg = 64, 16
    x = np.arange(8 * n, dtype=dtype)
    mf = cl.mem_flags
    xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    yb = cl.Buffer(ctx, mf.WRITE_ONLY, n * x.itemsize)
    prg.probe(queue, (n,), (wg,), xb, yb, cl.LocalMemory(wg * x.itemsize))
    y = np.empty(n, dtype)
    cl.enqueue_copy(queue, y, yb)
    queue.finish()
    sums = x.reshape(n, 8).sum(1).reshape(-1, wg)
    expect = (np.roll(sums, -1, axis=1) * 2 + 1).ravel()
    if not np.array_equal(y, expect):
        return {"ok": False, "reason": f"probe kernel returned wrong values ({int((y != expect).sum())} of {n}): the driver miscompiles"}
    return {"ok": True, "reason": ""}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        result = probe(int(argv[0]), int(argv[1]))
    except Exception as exc:  # report any failure as a reason, never a traceback
        msg = " ".join(str(exc).split())
        result = {"ok": False, "reason": f"{type(exc).__name__}: {msg[:300]}"}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
