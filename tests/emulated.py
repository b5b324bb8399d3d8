"""The recorded GPU descriptions laid over this machine's pocl device: for the tests of what a
Plan chooses on each GPU (clts.runtime.emulation)."""
from __future__ import annotations

import logging
from contextlib import contextmanager


def gpus_over_pocl() -> dict:
    """{name: emulated device} for every recorded GPU description (clts/devices/emulated), each
    over the pocl device; {} where pocl is not usable here."""
    from clts.runtime import emulation
    from clts.runtime.devices import usable
    hits = [i for i in usable() if "portable computing" in i.platform.lower()]
    if not hits:
        return {}
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    return {name: emulation.emulate(name, hits[0]) for name in emulation.names()}


def limited_gpu(name: str = "h100", *, max_alloc: int, global_mem: int):
    """The recorded GPU ``name`` over pocl with a smaller max allocation and global memory
    (None where pocl is not usable): for the tests of chunking under a GPU's memory limits,
    with :func:`memory_limits` enforcing them."""
    from clts.runtime import emulation
    from clts.runtime.devices import usable
    hits = [i for i in usable() if "portable computing" in i.platform.lower()]
    if not hits:
        return None
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    return emulation.emulate(name, hits[0], max_alloc=int(max_alloc), global_mem=int(global_mem))


class _LimitedPool:
    """A device memory pool whose allocations obey :class:`MemoryLimits` (``cla.empty``'s
    allocator is called with the byte count)."""

    def __init__(self, pool, limits):
        self._pool, self._limits = pool, limits

    def __call__(self, nbytes):
        pool = self._pool
        self._limits.check(pool.alloc_size(pool.bin_number(nbytes)) if nbytes else 0)
        return pool.allocate(nbytes)

    allocate = __call__

    def __getattr__(self, name):
        return getattr(self._pool, name)


class MemoryLimits:
    """What :func:`memory_limits` saw: allocations, the largest, the peak of device memory in
    use (live buffers plus the pools' active blocks: a pool frees what it holds when an
    allocation fails) and the allocations it refused."""

    def __init__(self, device):
        self.device = device
        self.live = 0           # bytes of live buffers made outside the pools
        self.largest = 0
        self.peak = 0
        self.count = 0
        self.refused = []

    def in_use(self) -> int:
        pools = self.device.state.pools.values()
        return self.live + sum(getattr(p, "active_bytes", 0) for p in pools)

    def check(self, nbytes: int) -> None:
        import pyopencl as cl
        from pyopencl import _cl
        nbytes = int(nbytes)
        dev = self.device
        total = self.in_use() + nbytes
        if nbytes > dev.max_alloc or total > dev.global_mem:
            self.refused.append((nbytes, total))
            rec = _cl._ErrorRecord("clCreateBuffer", cl.status_code.MEM_OBJECT_ALLOCATION_FAILURE,
                                   f"emulated limits: {nbytes} bytes (max allocation "
                                   f"{dev.max_alloc}), {total} in use (global {dev.global_mem})")
            raise cl.MemoryError(rec)
        self.count += 1
        self.largest = max(self.largest, nbytes)
        self.peak = max(self.peak, total)


@contextmanager
def memory_limits(device):
    """Make every device allocation in the block obey ``device``'s max allocation and global
    memory as a GPU driver would (MEM_OBJECT_ALLOCATION_FAILURE beyond them), though the
    buffers live on pocl: ``pyopencl.Buffer`` (what ``pyopencl.array`` allocates with) and the
    device's memory pools are wrapped. Process-wide while the block runs: no other calls in
    parallel threads. Yields the :class:`MemoryLimits` record."""
    import weakref

    import pyopencl as cl
    limits = MemoryLimits(device)
    real = cl.Buffer

    class LimitedBuffer(real):
        def __init__(self, context, flags, size=0, hostbuf=None):
            nbytes = int(size) or (memoryview(hostbuf).nbytes if hostbuf is not None else 0)
            host_memory = flags & (cl.mem_flags.USE_HOST_PTR | cl.mem_flags.ALLOC_HOST_PTR)
            if not host_memory:
                limits.check(nbytes)
            if hostbuf is None:
                super().__init__(context, flags, size)
            else:
                super().__init__(context, flags, size, hostbuf)
            if not host_memory:
                limits.live += nbytes
                weakref.finalize(self, _release, limits, nbytes)

    state = device.state
    for name in ("scratch", "slots"):
        state.pool(name)
    saved = dict(state.pools)
    state.pools.update({k: _LimitedPool(p, limits) for k, p in saved.items()})
    cl.Buffer = LimitedBuffer
    try:
        yield limits
    finally:
        cl.Buffer = real
        for k, p in saved.items():
            p.free_held()
            state.pools[k] = p


def _release(limits, nbytes):
    limits.live -= nbytes
