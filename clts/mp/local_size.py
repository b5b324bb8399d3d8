"""Local sizes of the matrix profile's helper launches where the driver compiles a kernel per
local size at its first enqueue (pocl; ``runtime.launch.fixed_local``).

Each kernel gets one local size whatever the series length, window length or batch, so that a
new length compiles nothing: the driver's own choice (``None``: on pocl about the range over
the cores) compiled each kernel again for every new range, and ``fixed_local``'s buckets (a
power of two per doubling of the range) once per doubling. The range is rounded up to a
multiple of the local size; every kernel launched so checks its work-item's index against its
count (those padded past it return at once). Elsewhere (Intel's CPU runtime, GPUs)
``fixed_local`` keeps the range as it was and leaves the local size to the driver.
"""
from __future__ import annotations

#: kernels with a work-item per value, window, query, row or column (O(1) .. O(m) each, or a
#: run of windows of one pair): groups of 64, the buckets' smallest size (a range that small
#: launches as before), and on large ranges no slower than the buckets' larger groups
ITEM_LOCAL = 64

#: kernels whose work-item walks a block of rows against a whole series (mpdist's pair blocks
#: and candidate runs, snippets' segment blocks, prescrump's query rows): a work-item per
#: group, so that a handful of such items still spreads over the cores; nothing is padded
#: (``abjoin_best`` reads its block count from the range)
WALK_LOCAL = 1
