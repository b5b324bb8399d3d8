"""Small string helpers the tridiagonal templates call (``<%! from clts.tridiag import codegen %>``).

They spell out lane-wise loads and stores for the two memory layouts so that every kernel
template (thomas, thomas_unrolled) reads the same way:

``natural``      system axis contiguous: row k of system s at ``s*n + k``
``interleaved``  batch axis contiguous:  row k of system s at ``k*nsys + s``

A work-item owns ``CHAINS x LANES`` consecutive systems ``s0 ..``: ``CHAINS`` independent
realN vectors (instruction-level parallelism for the latency-bound sweeps) of ``LANES`` lanes
each; lane ``j`` of the work-item (``j = chain * LANES + l``) is system ``s0 + j``. ``first``
below is the work-item lane of a vector's lane 0. ``mode`` is ``"vec"`` (interleaved and all lanes valid: one vloadN/vstoreN) or
``"gather"`` (one scalar access per lane, lane systems clamped to the last valid one).
"""
from __future__ import annotations


def vtype(lanes: int) -> str:
    return "real" if lanes == 1 else f"real{lanes}"


def mtype(real: str, lanes: int) -> str:
    """Integer type of a comparison result on ``vtype(lanes)`` (what select() wants)."""
    base = "long" if real == "double" else "int"
    return base if lanes == 1 else f"{base}{lanes}"


def _index(layout: str, lane: int, k: str) -> str:
    if layout == "natural":
        return f"base{lane} + (size_t)({k})"
    return f"(size_t)({k}) * (size_t)nsys + (size_t)sys{lane}"


def staged_index(lane: int, k: str) -> str:
    """Row k of work-item lane ``lane`` in the work-item's private staging buffer of x (its
    systems in natural order, n rows each)."""
    return f"(size_t){lane} * (size_t)n + (size_t)({k})"


def _vec_index(k: str, first: int) -> str:
    return f"(size_t)({k}) * (size_t)nsys + s0" + (f" + {first}" if first else "")


def load(ptr: str, k: str, layout: str, lanes: int, mode: str, first: int = 0) -> str:
    if mode == "vec":
        if lanes == 1:
            return f"{ptr}[{_vec_index(k, first)}]"
        return f"vload{lanes}(0, {ptr} + {_vec_index(k, first)})"
    parts = [f"{ptr}[{_index(layout, first + l, k)}]" for l in range(lanes)]
    if lanes == 1:
        return parts[0]
    return f"({vtype(lanes)})(" + ", ".join(parts) + ")"


def store(ptr: str, k: str, value: str, layout: str, lanes: int, mode: str,
          first: int = 0, stream: bool = False) -> str:
    """``stream``: interleaved rows stored with a non-temporal store when the row's LANES items
    are one aligned 64-byte line (no read-for-ownership of x); the caller checks LANES."""
    if mode == "vec":
        if lanes == 1:
            return f"{ptr}[{_vec_index(k, first)}] = {value};"
        if stream:
            return f"STREAM_ROW({value}, {ptr} + {_vec_index(k, first)});"
        return f"vstore{lanes}({value}, 0, {ptr} + {_vec_index(k, first)});"
    if lanes == 1:
        return f"if (s0 + {first} < nsys) {ptr}[{_index(layout, first, k)}] = {value};"
    out = []
    for l in range(lanes):
        j = first + l
        out.append(f"if (s0 + {j} < nsys) {ptr}[{_index(layout, j, k)}] = ({value}).s{l:x};")
    return " ".join(out)


def lane(expr: str, l: int, lanes: int) -> str:
    return expr if lanes == 1 else f"({expr}).s{l:x}"


def sel(real: str, lanes: int, if_false: str, if_true: str, mask: str) -> str:
    """mask ? if_true : if_false, lane-wise; ``mask`` is a comparison of vtype operands."""
    if lanes == 1:
        return f"(({mask}) ? ({if_true}) : ({if_false}))"
    return f"select(({vtype(lanes)})({if_false}), ({vtype(lanes)})({if_true}), {mask})"


def masked(real: str, lanes: int, value: str, chain: int = 0) -> str:
    """``value`` of chain ``chain`` with the lanes of failed systems (``bad<chain>``) set to NaN."""
    mask = f"bad{chain} != 0" if lanes == 1 else f"bad{chain}"
    return sel(real, lanes, value, "REAL_NAN", mask)
