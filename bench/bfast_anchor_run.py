"""Time the ``bfast`` 0.7 package on a cube written by bench_bfast.py (run in the bfast venv).

    /tmp/bfastenv/bin/python bench/bfast_anchor_run.py CUBE.npz BACKEND [DEVICE_SUBSTRING] [PIXELS]

BACKEND: opencl (the Futhark-generated OpenCL code; int16 cubes only) or python. Prints one
JSON line: seconds (best of 3 repeats for opencl, one run for python), pixels timed, breaks.
Imports numpy and bfast only.
"""
from __future__ import annotations

import datetime as dt
import json
import sys
import time

import numpy as np


def main():
    path, backend = sys.argv[1], sys.argv[2]
    dev_sub = sys.argv[3] if len(sys.argv) > 3 else ""
    pixels = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    d = np.load(path)
    y = d["y"]
    N = y.shape[0]
    if pixels:
        y = np.ascontiguousarray(y[:, :pixels])
    y = y.reshape(N, 1, -1)
    dates = [dt.datetime.utcfromtimestamp(int(s)) for s in
             d["dates"].astype("datetime64[s]").astype(np.int64)]
    start = dt.datetime.utcfromtimestamp(int(d["start"].astype("datetime64[s]").astype(np.int64)))
    from bfast import BFASTMonitor
    kw = dict(freq=365, k=3, hfrac=0.25, trend=True, level=0.05)
    if backend == "opencl":
        import pyopencl as cl
        pid = did = 0
        for i, p in enumerate(cl.get_platforms()):
            for j, dv in enumerate(p.get_devices()):
                if dev_sub.lower() in (p.name + dv.name).lower():
                    pid, did = i, j
                    break
            else:
                continue
            break
        model = BFASTMonitor(start, backend="opencl", platform_id=pid, device_id=did, **kw)
        model.fit(y, dates, nan_value=int(d["nodata"]))          # warm-up (builds)
        ts = []
        for _ in range(3):
            t0 = time.perf_counter()
            model.fit(y, dates, nan_value=int(d["nodata"]))
            ts.append(time.perf_counter() - t0)
        sec = min(ts)
    else:
        model = BFASTMonitor(start, backend="python", **kw)
        t0 = time.perf_counter()
        model.fit(y, dates, nan_value=int(d["nodata"]))
        sec = time.perf_counter() - t0
    b = np.asarray(model.breaks).ravel()
    print(json.dumps({"seconds": sec, "pixels": int(b.size), "breaks": b.tolist()}))


if __name__ == "__main__":
    main()
