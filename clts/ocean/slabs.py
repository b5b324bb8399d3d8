"""Large grids: the ocean kernels on slabs of x rows with halos (docs/ocean.md, "Large grids").

A grid whose arrays do not fit the device together (its maximum allocation, a share of its
global memory, or 2^31 - 1 cells per launch) is cut along x, the outermost axis in memory, so
that every slab of every array (``[x, y, z]``, ``[x, y, z, T]``, ``[x, y]``, ``[x]``) is one
contiguous block. z is never cut (the TKE's tridiagonal solves run along it), nor y.

Each chunk of rows ``start .. stop`` runs on the slab ``start - HALO .. stop + HALO`` (clipped
to the grid) and only its own rows come back. Why ``HALO = 2`` reproduces the whole grid bit
for bit: every kernel computes a cell from values at most two x rows away, with the same
operations whatever the grid size, and a row's special ranges are the same in the slab as in
the grid:

- Superbee: ``flux_east[i]`` reads q and maskW at rows i-1 .. i+2 (the face masks of faces
  i-1, i, i+1) and is set for 1 <= i <= nx-3; the north and top fluxes read row i only and are
  set for 2 <= i <= nx-3. A slab row with two rows on each side keeps ``2 <= i' <= nx'-3``;
  at the grid's own edges the slab is not extended, so rows 0, 1, nx-2, nx-1 keep their
  special treatment (distances to the edge are the grid's).
- TKE: ``tke_systems`` is per cell (its column only); the solver is per column and is run
  with the plan the whole grid would get (``replace_nsys``: the same version and parameters
  for fewer columns); ``tke_step`` reads q3 and the masks at rows i-2 .. i+2 (the Superbee
  fluxes of faces i-1 and i, the lateral diffusion fluxes of i-1 and i) and the interior test
  ``2 <= i <= nx-3`` as above.

Chunks are run by ``runtime.pipeline.run_pipelined``: the next slab's upload (on the copy queue)
overlaps this slab's kernels, each of ``SLOTS`` buffer sets reused once its download finished.
"""
from __future__ import annotations

from ..errors import DeviceError
from ..runtime import faults
from ..runtime import staging
from ..runtime.memory import chunk_sizes, host_array, upload_scratch
from ..runtime.pipeline import copy_queue, device_marker, run_pipelined, slot_scratch

#: rows of halo on each side of a slab: the reach of every ocean stencil along x
HALO = 2
#: buffer sets in flight (the chunk computing and the next one uploading)
SLOTS = 2
#: the kernels index cells with 32-bit integers: cells per launch at most
MAX_CELLS = 2 ** 31 - 1


def slab_of(start: int, stop: int, nx: int) -> tuple[int, int]:
    """The rows (lo, hi) a chunk of rows ``start .. stop - 1`` runs on: its halo included."""
    return max(0, start - HALO), min(nx, stop + HALO)


def run_grid(dev, what: str, nx: int, *, inputs: dict, sliced, outputs: list, temp_row_bytes,
             whole, slab, row_cells: int, in_place: bool = False):
    """Run a grid of ``nx`` x rows whole (``whole()``) when it fits the device, else in slabs.

    inputs : name -> validated C-contiguous numpy array; ``sliced`` names those whose axis 0
        is x (the others are uploaded once).
    outputs : the fresh numpy results (axis 0 is x) the slabs fill.
    temp_row_bytes : bytes per x row of each device temporary ``slab`` allocates.
    whole() : runs the grid in one piece; returns the results.
    slab(arrays, outs, rows) : enqueues the kernels on device arrays of a slab of ``rows``
        rows (inputs by name, outputs in order); returns temporaries to keep until they ran.
    row_cells : cells of one x row (ny * nz), for the 32-bit index limit.
    in_place : read the input slabs from the numpy memory itself where the device can
        (``runtime.memory.host_array``: CPU devices) instead of copying them.
    """
    sliced = [n for n in inputs if n in set(sliced)]
    per = ([inputs[n][:1].nbytes for n in sliced] + [o[:1].nbytes for o in outputs]
           + [int(b) for b in temp_row_bytes])
    fixed = sum(a.nbytes for n, a in inputs.items() if n not in sliced)

    def run(max_items):
        if nx * row_cells <= MAX_CELLS:
            # chunk_sizes applies CLTS_MAX_CHUNK and the device limits to the whole grid
            if len(chunk_sizes(nx, per, dev, fixed_bytes=fixed, max_items=max_items)) == 1:
                try:
                    return whole()
                except Exception as exc:
                    if faults.is_allocation_failure(exc):   # retried in halves of nx rows
                        faults.enter_chunk(0, 0, nx, 1, nx)
                    raise
        caps = [dev.max_alloc // b for b in per if b] + [MAX_CELLS // max(1, row_cells)]
        cap = min(caps) - 2 * HALO
        if max_items:
            cap = min(cap, max_items)
        if cap < 1:
            raise DeviceError(f"{what}: one x row with its halo of {HALO} rows on each side "
                              f"({(1 + 2 * HALO) * sum(per)} bytes, "
                              f"{(1 + 2 * HALO) * row_cells} cells) does not fit device {dev} "
                              f"(max allocation {dev.max_alloc}, global memory "
                              f"{dev.global_mem})")
        chunks = chunk_sizes(nx, per * SLOTS, dev, max_items=cap,
                             fixed_bytes=fixed + SLOTS * 2 * HALO * sum(per))
        _run_slabs(dev, what, nx, chunks, inputs, sliced, outputs, slab, in_place)
        return tuple(outputs)

    return faults.with_smaller_chunks(run, device=dev, what=what)


def _run_slabs(dev, what, nx, chunks, inputs, sliced, outputs, slab, in_place=False):
    """The chunk loop: uploads, kernels and downloads of the slabs, pipelined."""
    import pyopencl as cl

    rows_max = max(hi - lo for lo, hi in (slab_of(a, b, nx) for a, b in chunks))
    const = {n: upload_scratch(dev, a) for n, a in inputs.items() if n not in sliced}
    bufs = [{} for _ in range(SLOTS)]         # device input slabs (made when first needed)
    # slot buffers come from the chunk loop's own pool (``slot_scratch``): the copy queue
    # reads and writes them, which a buffer the kernels' pool lends again would race
    obufs = [[slot_scratch(dev, (rows_max,) + o.shape[1:], o.dtype) for o in outputs]
             for _ in range(SLOTS)]
    keep = [None] * SLOTS
    placed = [{} for _ in range(SLOTS)]       # input slabs used in place, per slot

    def upload(i, start, stop, slot, queue):
        faults.enter_chunk(i, start, stop, len(chunks), nx)
        lo, hi = slab_of(start, stop, nx)
        events = []
        for n in sliced:
            arr = host_array(dev, inputs[n][lo:hi]) if in_place else None
            if arr is not None:
                placed[slot][n] = arr
                continue
            placed[slot].pop(n, None)
            if n not in bufs[slot]:
                bufs[slot][n] = slot_scratch(dev, (rows_max,) + inputs[n].shape[1:],
                                             inputs[n].dtype)
            events += staging.upload_into(dev, queue, bufs[slot][n][:hi - lo], inputs[n][lo:hi])
        return events

    def compute(i, start, stop, slot, wait_for):
        lo, hi = slab_of(start, stop, nx)
        arrays = dict(const)
        arrays.update({n: b[:hi - lo] for n, b in bufs[slot].items()})
        arrays.update(placed[slot])
        if wait_for:
            cl.enqueue_barrier(dev.queue, wait_for=wait_for)
        keep[slot] = slab(arrays, [o[:hi - lo] for o in obufs[slot]], hi - lo)
        return device_marker(dev)       # the last kernel's event (see runtime.pipeline)

    def download(i, start, stop, slot, queue, wait_for):
        # on the queue run_pipelined gives: the device queue right behind the slab's kernels
        # on a device that shares host memory, else the copy queue once they have run
        lo = slab_of(start, stop, nx)[0]
        if staging.pinned(dev):     # through pinned pieces, once the kernels ran
            return list(wait_for or ()) + [
                lambda o=out, k=k: staging.download(dev, obufs[slot][k][start - lo:stop - lo],
                                                    o[start:stop], queue)
                for k, out in enumerate(outputs)]
        return [cl.enqueue_copy(queue, out[start:stop], obufs[slot][k].data,
                                src_offset=(start - lo) * out[:1].nbytes, wait_for=wait_for,
                                is_blocking=False)
                for k, out in enumerate(outputs)]

    try:
        run_pipelined(dev, chunks, upload=upload, compute=compute, download=download,
                      slots=SLOTS, desc=what)
    finally:    # nothing may still read or write the host arrays when this returns or raises
        copy_queue(dev).finish()
        dev.queue.finish()
    keep.clear()            # the temporaries: their kernels have run
