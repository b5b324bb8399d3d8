"""String helpers the ocean templates call (``<%! from clts.ocean import codegen as cg %>``).

A cell-parallel kernel handles ``W`` consecutive cells ``c .. c+W-1`` of the flattened
``[x][y][z]`` grid per work-item (z contiguous). Per lane ``l`` the kernel has the scalars
``i_l, j_l, k_l, col_l`` (``col = i*ny + j``). Loads:

``ld``   a grid array at cell ``c + off`` for every lane: ``vloadW`` (W > 1), or one value; with
         ``clamp`` (the cell-by-cell path at the ends of the array) the address is clamped into
         the array (the value of a clamped ghost lane is masked out by the caller).
``Block`` the W*T values of W cells of a ``[x][y][z][T]`` array (time levels last), read as
         whole vectors and split into levels with swizzles.
``gat``  a per-lane gather ``arr[index(l)]`` (1-D metric arrays, column arrays), the index
         clamped into ``[lo, hi]`` when given.
"""
from __future__ import annotations


def vtype(base: str, W: int) -> str:
    return base if W == 1 else f"{base}{W}"


def itype(real: str, W: int) -> str:
    """The integer (vector) type a comparison of ``real`` (vector) values gives."""
    return vtype("long" if real == "double" else "int", W)


def vec(W: int, items, base: str = "real") -> str:
    items = list(items)
    if W == 1:
        return f"({items[0]})"
    return f"(({base}{W})({', '.join(items)}))"


def _cell(off: str, clamp: bool) -> str:
    expr = f"(c + ({off}))" if off not in ("", "0") else "c"
    return f"clamp({expr}, 0L, N - 1)" if clamp else expr


def ld(W: int, clamp: bool, arr: str, off: str = "0") -> str:
    if W == 1:
        return f"{arr}[{_cell(off, clamp)}]"
    return f"vload{W}(0, {arr} + {_cell(off, False)})"


def gat(W: int, arr: str, index: str, lo: str | None = None, hi: str | None = None,
        base: str = "real", two: bool = False) -> str:
    """``arr[index]`` per lane; ``index`` uses ``{l}`` for the lane number (``"i_{l} - 1"``).

    ``two``: W <= nz, so the W cells span at most two columns and an index of ``i``, ``j`` or
    ``col`` takes its lane-0 value on the lanes of the first column (``kv >= k_0``) and its
    lane-(W-1) value on the rest: two loads instead of W."""
    def one(l):
        idx = index.format(l=l)
        if lo is not None and hi is not None:
            idx = f"clamp({idx}, {lo}, {hi})"
        elif lo is not None:
            idx = f"max({idx}, {lo})"
        elif hi is not None:
            idx = f"min({idx}, {hi})"
        return f"{arr}[{idx}]" if base == "real" else f"({base}){arr}[{idx}]"
    if two and W > 1 and "k_{l}" not in index:
        t = vtype(base, W)
        return f"((kv >= k_0) ? ({t})({one(0)}) : ({t})({one(W - 1)}))"
    return vec(W, [one(l) for l in range(W)], base)


def st(W: int, arr: str, value: str, stream: bool = False) -> str:
    """Store ``value`` (realW) at cells c .. c+W-1 of a grid array; ``stream``: a
    non-temporal store (no read for ownership) where the address is vector-aligned."""
    if W == 1:
        return f"{arr}[c] = {value};"
    if stream:
        return (f"STORE_STREAM({value}, {arr} + c, {vtype('real', W)});")
    return f"vstore{W}({value}, 0, {arr} + c);"


def lane(W: int, v: str, l: int) -> str:
    """Lane ``l`` of vector expression ``v``."""
    return v if W == 1 else f"({v}).s{l:x}"


def chunks(n: int):
    """(start, size) pieces of n consecutive values, all of the largest vloadN width (<= 16)
    that divides n: swizzles then combine vectors of one type (Oclgrind's uninitialised-value
    checker crashes on a shuffle of a real4 with a real2)."""
    k = next(k for k in (16, 8, 4, 2, 1) if n % k == 0)
    return [(m, k) for m in range(0, n, k)]


class Block:
    """The ``W * T`` consecutive values of cells c+off .. c+off+W-1 of a ``[x][y][z][T]`` array,
    read with whole-vector loads (``decl``) and taken apart with swizzles (``lev``, ``comp``);
    W = 1 reads single values instead."""

    def __init__(self, W, clamp, T, arr, off, name):
        self.W, self.clamp, self.T, self.arr, self.name = W, clamp, T, arr, name
        self.base = _cell(off, clamp)

    def decl(self) -> str:
        if self.W == 1:
            return ""
        return " ".join(
            f"const {vtype('real', n)} {self.name}_{m} = "
            + (f"{self.arr}[({self.base}) * {self.T} + {m}];" if n == 1 else
               f"vload{n}(0, {self.arr} + ({self.base}) * {self.T} + {m});")
            for m, n in chunks(self.W * self.T))

    def comp(self, m: int) -> str:
        if self.W == 1:
            return f"{self.arr}[({self.base}) * {self.T} + {m}]"
        for start, n in chunks(self.W * self.T):
            if start <= m < start + n:
                return f"{self.name}_{start}" if n == 1 else f"{self.name}_{start}.s{m - start:x}"
        raise IndexError(m)

    def lev(self, lev: int) -> str:
        """Level ``lev`` of the W cells as a realW vector."""
        return vec(self.W, [self.comp(l * self.T + lev) for l in range(self.W)])


def st4(W: int, T: int, out: str, src: Block, lev_new: int, value: str,
        stream: bool = False) -> str:
    """Write the W cells' T levels of ``out`` ([x][y][z][T]): level ``lev_new`` from ``value``
    (realW), the others copied from block ``src`` (the same cells); whole-vector stores."""
    stmts = ["{", f"const {vtype('real', W)} new = {value};"]
    vals = []
    for m in range(W * T):
        l, lev = divmod(m, T)
        vals.append(lane(W, "new", l) if lev == lev_new else src.comp(m))
    for m, n in chunks(W * T):
        if n == 1:
            stmts.append(f"{out}[c * {T} + {m}] = {vals[m]};")
        elif stream:
            stmts.append(f"STORE_STREAM((real{n})({', '.join(vals[m:m + n])}), "
                         f"{out} + c * {T} + {m}, real{n});")
        else:
            stmts.append(f"vstore{n}((real{n})({', '.join(vals[m:m + n])}), 0, "
                         f"{out} + c * {T} + {m});")
    return "\n".join(stmts + ["}"])
