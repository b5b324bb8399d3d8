"""Small string helpers the tridiagonal templates call (``<%! from clts.tridiag import codegen %>``).

They spell out lane-wise loads and stores for the two memory layouts so that every kernel
template (thomas, thomas_unrolled) reads the same way:

``natural``      system axis contiguous: row k of system s at ``s*n + k``
``interleaved``  batch axis contiguous:  row k of system s at ``k*nsys + s``

A work-item owns ``LANES`` consecutive systems ``s0 .. s0+LANES-1`` (the lanes of a realN
vector). ``mode`` is ``"vec"`` (interleaved and all lanes valid: one vloadN/vstoreN) or
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


def load(ptr: str, k: str, layout: str, lanes: int, mode: str) -> str:
    if mode == "vec":
        if lanes == 1:
            return f"{ptr}[(size_t)({k}) * (size_t)nsys + s0]"
        return f"vload{lanes}(0, {ptr} + (size_t)({k}) * (size_t)nsys + s0)"
    parts = [f"{ptr}[{_index(layout, l, k)}]" for l in range(lanes)]
    if lanes == 1:
        return parts[0]
    return f"({vtype(lanes)})(" + ", ".join(parts) + ")"


def store(ptr: str, k: str, value: str, layout: str, lanes: int, mode: str) -> str:
    if mode == "vec":
        if lanes == 1:
            return f"{ptr}[(size_t)({k}) * (size_t)nsys + s0] = {value};"
        return f"vstore{lanes}({value}, 0, {ptr} + (size_t)({k}) * (size_t)nsys + s0);"
    if lanes == 1:
        return f"{ptr}[{_index(layout, 0, k)}] = {value};"
    out = []
    for l in range(lanes):
        out.append(f"if (s0 + {l} < nsys) {ptr}[{_index(layout, l, k)}] = ({value}).s{l:x};")
    return " ".join(out)


def lane(expr: str, l: int, lanes: int) -> str:
    return expr if lanes == 1 else f"({expr}).s{l:x}"


def sel(real: str, lanes: int, if_false: str, if_true: str, mask: str) -> str:
    """mask ? if_true : if_false, lane-wise; ``mask`` is a comparison of vtype operands."""
    if lanes == 1:
        return f"(({mask}) ? ({if_true}) : ({if_false}))"
    return f"select(({vtype(lanes)})({if_false}), ({vtype(lanes)})({if_true}), {mask})"
