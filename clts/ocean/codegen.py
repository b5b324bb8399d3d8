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


class Tile:
    """The work-group's local-memory tile of ``[cell][T]`` arrays (``ocean.tke.tile``): a group
    of ``WG`` work-items, one cell each (cells g0 .. g0+WG-1), reads the T * WG consecutive
    values of those cells with T coalesced loads per work-item (adjacent work-items at adjacent
    addresses) into one ``__local`` array, and each work-item takes its cell's levels from
    there (GPUs: T values apart per work-item in global memory are T times the segments).

    ``full(arr, out)``  every level of ``arr`` (``lev``), written back to ``out`` with level
                        ``put`` changed and the others copied, T coalesced stores per work-item;
    ``pick(arr, lev, base, reads)``  level ``lev`` of ``arr`` only, at cells ``g0 + base + j``
                        clamped into the array (j < WG + extra, ``reads``: the cell offsets the
                        body reads -> slot, ``val``): every work-item loads every value of its
                        share (all lanes at once, coalesced) and stores the one of level ``lev``
                        to its slot, the others to a junk slot of its own at the end of the
                        array (a select, not a branch: a branch would let the compiler sink the
                        load into it, back to a strided access of a third of the lanes).
    The template emits ``load()`` before the group's barrier and ``store()`` after the second.
    """

    def __init__(self, WG: int, T: int, name: str = "tl"):
        self.WG, self.T, self.name = WG, T, name
        self.fulls, self.picks, self.reads = [], [], {}
        self.size = 0

    def full(self, arr: str, out: str):
        self.fulls.append((arr, out, self.size))
        self.size += self.T * self.WG
        return self

    def pick(self, arr: str, lev: int, base: str, reads: dict):
        n = self.WG + max(reads.values())
        self.picks.append((arr, lev, base, n, self.size))
        for off, slot in reads.items():
            self.reads[(arr, off)] = (self.size, slot)
        self.size += n
        return self

    @property
    def junk(self) -> int:
        return self.size

    @property
    def total(self) -> int:
        """Values of the ``__local`` array: the parts and, with picks, a junk slot per item."""
        return self.size + (self.WG if self.picks else 0)

    def _full_of(self, arr):
        return next(f for f in self.fulls if f[0] == arr)

    def lev(self, arr: str, lev: int) -> str:
        """Level ``lev`` of the work-item's cell of full tile ``arr``."""
        return f"{self.name}[{self._full_of(arr)[2]} + lid * {self.T} + {lev}]"

    def put(self, arr: str, lev: int, value: str) -> str:
        """Set level ``lev`` of the work-item's cell of full tile ``arr`` (stored back later)."""
        return f"{self.lev(arr, lev)} = {value};"

    def val(self, arr: str, off: str) -> str:
        """The picked level of ``arr`` at cell ``c + off`` (``off`` one of the pick's reads)."""
        at, slot = self.reads[(arr, off)]
        return f"{self.name}[{at} + lid{' + %d' % slot if slot else ''}]"

    def view(self, arr: str) -> "_TileView":
        """A stand-in for ``Block`` of ``arr`` at the work-item's cell (``decl``, ``lev``)."""
        return _TileView(self, arr)

    def decl(self) -> str:
        return f"__local real {self.name}[{self.total}];"

    def load(self) -> str:
        T, WG, out = self.T, self.WG, []
        for arr, _, at in self.fulls:
            for m in range(T):
                e = f"lid + {m * WG}" if m else "lid"
                out.append(f"{{ const long at = g0 * {T} + {e}; "
                           f"if (at < N * {T}) {self.name}[{at} + {e}] = {arr}[at]; }}")
        magic = -(-(1 << 32) // T)          # e / T = mul_hi(e, ceil(2^32 / T)) for e < 2^32 / T
        for arr, lev, base, n, at in self.picks:
            for m in range(-(-n * T // WG)):
                e = f"lid + {m * WG}" if m else "lid"
                body = (f"const int e = {e}; const int j = (int)mul_hi((uint)e, {magic}u); "
                        f"const real val_ = {arr}[clamp(g0 + ({base}) + j, 0L, N - 1) * {T} + "
                        f"(e - j * {T})]; "
                        f"{self.name}[e - j * {T} == {lev} ? {at} + j : {self.junk} + lid] = val_;")
                guard = (m + 1) * WG > n * T
                out.append("{ " + (f"if ({e} < {n * T}) {{ {body} }}" if guard else body) + " }")
        return "\n    ".join(out)

    def store(self, stream: bool = False) -> str:
        T, WG, out = self.T, self.WG, []
        for _, dst, at in self.fulls:
            for m in range(T):
                e = f"lid + {m * WG}" if m else "lid"
                v = f"{self.name}[{at} + {e}]"
                st = (f"STORE_STREAM({v}, {dst} + at, real);" if stream else f"{dst}[at] = {v};")
                out.append(f"{{ const long at = g0 * {T} + {e}; if (at < N * {T}) {st} }}")
        return "\n    ".join(out)


class _TileView:
    def __init__(self, tile, arr):
        self.tile, self.arr = tile, arr

    def decl(self) -> str:
        return ""

    def lev(self, lev: int) -> str:
        t = self.tile
        if any(f[0] == self.arr for f in t.fulls):
            return t.lev(self.arr, lev)
        if not any(p[0] == self.arr and p[1] == lev for p in t.picks):
            raise KeyError(f"level {lev} of {self.arr} is not in the tile")
        return t.val(self.arr, "0")


def systems_tile(WG: int, T: int, TAU: int) -> Tile:
    """The tile of ``tke_systems``: level tau of tke at the group's cells."""
    return Tile(WG, T).pick("tke", TAU, "0", {"0": 0})


def superbee_tile(WG: int, T: int, TAU: int) -> Tile:
    """The tile of ``superbee_fused`` on ``[x][y][z][T]`` velocities (``ocean.superbee.fused.tile``,
    TKE's stored advection): level tau of u, v and w at the group's cells."""
    t = Tile(WG, T)
    for arr in ("u", "v", "w"):
        t.pick(arr, TAU, "0", {"0": 0})
    return t


def step_tile(WG: int, T: int, TAU: int, advection: str) -> Tile:
    """The tile of ``tke_step``: tke and dtke whole (every level is read or copied), and with
    inline advection level tau of the velocities at the cells of the six faces (u at c and
    c - sx, v at c and c - nz, w at c - 1 and c)."""
    t = Tile(WG, T).full("tke", "tke_out").full("dtke", "dtke_out")
    if advection == "inline":
        t.pick("u", TAU, "0", {"0": 0}).pick("u", TAU, "-sx", {"-sx": 0})
        t.pick("v", TAU, "0", {"0": 0}).pick("v", TAU, "-nz", {"-nz": 0})
        t.pick("w", TAU, "-1", {"-1": 0, "0": 1})
    return t
