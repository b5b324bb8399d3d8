## Shared pieces of the Thomas kernels (thomas, thomas_unrolled): the lane prologue and one
## forward-elimination row. Used as <%namespace name="R" file="/tridiag/rows.cl.mako"/>; the
## caller's context supplies real, lanes, chains, LAYOUT, HAS_START.
## A work-item owns chains x lanes systems s0 ..: chain ch is one realN vector over the systems
## s0 + ch*lanes + l (l < lanes); per-chain names carry the chain number (cpp0, bad1, a1_r2).
<%! from clts.tridiag import codegen as cg %>

## Work-item prologue: the systems of this work-item, their bases, the start rows.
<%def name="prologue()">
    const size_t g = get_global_id(0);
    const int s0 = (int)(g * ${lanes * chains});
    if (s0 >= nsys) return;
    const int full = (s0 + ${lanes * chains} <= nsys);
% for j in range(lanes * chains):
    const int sys${j} = min(s0 + ${j}, nsys - 1);
%   if LAYOUT == "natural":
    const size_t base${j} = (size_t)sys${j} * (size_t)n;
%   endif
% endfor
<% M = cg.mtype(real, lanes) %>\
% for ch in range(chains):
%   if HAS_START:
    /* rows below lo are identity rows (x = 0); lo = n for land (start outside 0..n-1) */
%     if lanes == 1:
    const ${M} lo${ch} = (start[sys${ch}] >= 0 && start[sys${ch}] < n) ? start[sys${ch}] : n;
%     else:
    const ${M} lo${ch} = (${M})(${", ".join(f"(start[sys{ch * lanes + l}] >= 0 && start[sys{ch * lanes + l}] < n) ? start[sys{ch * lanes + l}] : n" for l in range(lanes))});
%     endif
%   endif
    ${M} bad${ch} = 0;
% endfor
</%def>

## One forward row k of chain ch: (cpp, dpp) <- (c'[k], d'[k]) from (c'[k-1], d'[k-1]).
## first: row 0 (a ignored); last: row n-1 (c ignored, cpp left alone).
<%def name="fwd(k, first, last, mode, cpp, dpp, vals=None, ch=0)">
<% V = cg.vtype(lanes); M = cg.mtype(real, lanes); f0 = ch * lanes %>\
    {
        ${V} bk = ${vals["b"] if vals else cg.load("b", k, LAYOUT, lanes, mode, f0)};
        ${V} dk = ${vals["d"] if vals else cg.load("d", k, LAYOUT, lanes, mode, f0)};
% if not first:
        ${V} ak = ${vals["a"] if vals else cg.load("a", k, LAYOUT, lanes, mode, f0)};
% endif
% if not last:
        ${V} ck = ${vals["c"] if vals else cg.load("c", k, LAYOUT, lanes, mode, f0)};
% endif
% if HAS_START:
        const ${M} kk = (${M})(${k});
        bk = ${cg.sel(real, lanes, "1", "bk", "kk >= lo%d" % ch)};
        dk = ${cg.sel(real, lanes, "0", "dk", "kk >= lo%d" % ch)};
%   if not first:
        ak = ${cg.sel(real, lanes, "0", "ak", "kk > lo%d" % ch)};
%   endif
%   if not last:
        ck = ${cg.sel(real, lanes, "0", "ck", "kk >= lo%d" % ch)};
%   endif
% endif
% if first:
        const ${V} den = bk;
% else:
        const ${V} den = bk - ak * ${cpp};
% endif
        bad${ch} |= (den == (${V})0);
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

## Store x for row k of chain ch with failed lanes set to NaN (stream: interleaved rows by
## non-temporal stores where aligned, STREAM_ROW of the kernel; staged: into the work-item's
## private buffer xs, natural order, unmasked and unguarded: the kernel NaN-fills failed
## systems after streaming xs out).
<%def name="store_x(k, value, mode, ch=0, stream=False, staged=False)">
% if staged:
%   for l in range(lanes):
        xs[${cg.staged_index(ch * lanes + l, k)}] = ${cg.lane(value, l, lanes)};
%   endfor
% else:
        ${cg.store("x", k, cg.masked(real, lanes, value, ch), LAYOUT, lanes, mode, ch * lanes, stream)}
% endif
</%def>

## Count this work-item's failed systems.
<%def name="count_bad()">
% for ch in range(chains):
%   if lanes == 1:
    if (s0 + ${ch} < nsys && bad${ch}) atomic_inc(counter);
%   else:
%     for l in range(lanes):
    if (s0 + ${ch * lanes + l} < nsys && (bad${ch}).s${"%x" % l}) atomic_inc(counter);
%     endfor
%   endif
% endfor
</%def>

## Natural layout, lanes > 1: load rows k0..k0+lanes-1 of the lanes systems of chain ch as one
## vloadN per system, transposed in registers to one vector per row: ${p}${ch}_r${r}.
<%def name="block_load(p, k0, ch=0)">
% for l in range(lanes):
        const ${cg.vtype(lanes)} ${p}${ch}_v${l} = vload${lanes}(0, ${p} + base${ch * lanes + l} + (size_t)(${k0}));
% endfor
% for r in range(lanes):
        const ${cg.vtype(lanes)} ${p}${ch}_r${r} = (${cg.vtype(lanes)})(${", ".join("%s%d_v%d.s%x" % (p, ch, l, r) for l in range(lanes))});
% endfor
</%def>

## ... and the reverse: row vectors x${ch}r0..x${ch}r{lanes-1} of chain ch stored as one vstoreN
## per system: into x for the valid systems, or (dst_base given: the offset of work-item lane
## {j}, cg.staged_index) into the work-item's private staging buffer, unguarded.
<%def name="block_store(k0, ch=0, dst='x', dst_base=None)">
% for l in range(lanes):
<% j = ch * lanes + l; off = ("base%d" % j) if dst_base is None else dst_base.format(j=j) %>\
        ${"" if dst_base else "if (s0 + %d < nsys) " % j}vstore${lanes}((${cg.vtype(lanes)})(${", ".join("x%dr%d.s%x" % (ch, r, l) for r in range(lanes))}), 0, ${dst} + ${off} + (size_t)(${k0}));
% endfor
</%def>
