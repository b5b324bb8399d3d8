## Shared pieces of the Thomas kernels (thomas, thomas_unrolled): the lane prologue and one
## forward-elimination row. Used as <%namespace name="R" file="/tridiag/rows.cl.mako"/>; the
## caller's context supplies real, LANES, LAYOUT, HAS_START.
<%! from clts.tridiag import codegen as cg %>

## Work-item prologue: the LANES systems s0.. of this work-item, their bases, the start rows.
<%def name="prologue()">
    const size_t g = get_global_id(0);
    const int s0 = (int)(g * ${LANES});
    if (s0 >= nsys) return;
    const int full = (s0 + ${LANES} <= nsys);
% for l in range(LANES):
    const int sys${l} = min(s0 + ${l}, nsys - 1);
%   if LAYOUT == "natural":
    const size_t base${l} = (size_t)sys${l} * (size_t)n;
%   endif
% endfor
% if HAS_START:
<% M = cg.mtype(real, LANES) %>\
    /* rows below lo are identity rows (x = 0); lo = n for land (start outside 0..n-1) */
%   if LANES == 1:
    const ${M} lo = (start[sys0] >= 0 && start[sys0] < n) ? start[sys0] : n;
%   else:
    const ${M} lo = (${M})(${", ".join(f"(start[sys{l}] >= 0 && start[sys{l}] < n) ? start[sys{l}] : n" for l in range(LANES))});
%   endif
% endif
    ${cg.mtype(real, LANES)} bad = 0;
</%def>

## One forward row k: (cpp, dpp) <- (c'[k], d'[k]) from (c'[k-1], d'[k-1]).
## first: row 0 (a ignored); last: row n-1 (c ignored, cpp left alone).
<%def name="fwd(k, first, last, mode, cpp, dpp, vals=None)">
<% V = cg.vtype(LANES); M = cg.mtype(real, LANES) %>\
    {
        ${V} bk = ${vals["b"] if vals else cg.load("b", k, LAYOUT, LANES, mode)};
        ${V} dk = ${vals["d"] if vals else cg.load("d", k, LAYOUT, LANES, mode)};
% if not first:
        ${V} ak = ${vals["a"] if vals else cg.load("a", k, LAYOUT, LANES, mode)};
% endif
% if not last:
        ${V} ck = ${vals["c"] if vals else cg.load("c", k, LAYOUT, LANES, mode)};
% endif
% if HAS_START:
        const ${M} kk = (${M})(${k});
        bk = ${cg.sel(real, LANES, "1", "bk", "kk >= lo")};
        dk = ${cg.sel(real, LANES, "0", "dk", "kk >= lo")};
%   if not first:
        ak = ${cg.sel(real, LANES, "0", "ak", "kk > lo")};
%   endif
%   if not last:
        ck = ${cg.sel(real, LANES, "0", "ck", "kk >= lo")};
%   endif
% endif
% if first:
        const ${V} den = bk;
% else:
        const ${V} den = bk - ak * ${cpp};
% endif
        bad |= (den == (${V})0);
        const ${V} inv = (${V})1 / den;
% if not last:
        ${cpp} = ck * inv;
% endif
% if first:
        ${dpp} = dk * inv;
% else:
        ${dpp} = (dk - ak * ${dpp}) * inv;
% endif
    }
</%def>

## Store x for row k with failed lanes set to NaN.
<%def name="store_x(k, value, mode)">
<% V = cg.vtype(LANES) %>\
        ${cg.store("x", k, cg.sel(real, LANES, value, "REAL_NAN", "bad != 0" if LANES == 1 else "bad"), LAYOUT, LANES, mode)}
</%def>

## Count this work-item's failed systems.
<%def name="count_bad()">
% if LANES == 1:
    if (bad) atomic_inc(counter);
% else:
%   for l in range(LANES):
    if (s0 + ${l} < nsys && (bad).s${"%x" % l}) atomic_inc(counter);
%   endfor
% endif
</%def>

## Natural layout, LANES > 1: load rows k0..k0+LANES-1 of the LANES systems of this work-item
## as one vloadN per system, transposed in registers to one vector per row: ${p}_r${r}.
<%def name="block_load(p, k0)">
% for l in range(LANES):
        const ${cg.vtype(LANES)} ${p}_v${l} = vload${LANES}(0, ${p} + base${l} + (size_t)(${k0}));
% endfor
% for r in range(LANES):
        const ${cg.vtype(LANES)} ${p}_r${r} = (${cg.vtype(LANES)})(${", ".join("%s_v%d.s%x" % (p, l, r) for l in range(LANES))});
% endfor
</%def>

## ... and the reverse: row vectors xr0..xr{LANES-1} stored as one vstoreN per valid system.
<%def name="block_store(k0)">
% for l in range(LANES):
        if (s0 + ${l} < nsys) vstore${LANES}((${cg.vtype(LANES)})(${", ".join("xr%d.s%x" % (r, l) for r in range(LANES))}), 0, x + base${l} + (size_t)(${k0}));
% endfor
</%def>
