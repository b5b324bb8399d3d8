<%namespace name="sg" file="/common/subgroup.cl.mako"/>\
<%! from clts.mp.network import batcher %>\
## Multi-dimensional matrix profile (mSTOMP; clts.mstump), the diagonal kernel and its two
## reductions. A work-item owns a band of D = groups * lanes adjacent diagonals k0 .. k0+D-1
## (j = i + k, self-join, k > exclusion zone) and a segment of rows [ilo, ihi): per dimension
## the covariance is computed exactly at ilo and updated in O(1) per row (SCAMP's update,
## cov(i,j) = cov(i-1,j-1) + df[i] dg[j] + df[j] dg[i], one QT per dimension), so a pair costs
## DIM updates, DIM distances, a sorting network over the DIM distances and a prefix sum.
## For each k = 0 .. DIM-1 the sum of the k+1 smallest distances (DISCORDS: largest; the first
## NINC dimensions, the forced ones, always first and unsorted) is minimised per row and per
## column; the host divides by k+1 (stumpy.mstump's running mean) after an exact re-evaluation.
## The lanes diagonals of a group are the lanes of a realN vector (pocl vectorises only
## explicit vector types); the sorting network is branch-free (fmin / fmax on whole vectors).
##
## NORMALIZE = 0 (stumpy.maamp, p = 2): plain Euclidean distances from the dot product (QT, no
## means), d^2 = -2 (QT + h_i + h_j) with r = h = -|window|^2 / 2, times unit[q] (each
## dimension's series was divided by the power of two unit[q]; the distances are sorted in
## the caller's units); no constant-window rule.
##
## subgroup (Intel GPUs) / waves (AMD GPUs), passed only when not 0: the sub-group size the
## kernel requires (IGC spills the float64 d = 8 kernel at SIMD32) / the fewest waves per SIMD
## its registers must allow (gfx908: 119 VGPRs at d = 8, float64, 2 waves); see mstump_plan.py.
##
## Window conventions (stumpy's), from r = 1 / centred norm: r = NaN (non-finite window, or
## past the series' end): distance inf; r < 0 marks a constant window: distance 0 to another
## constant window, sqrt(m) to any other (only in the dimensions of the bit mask CONST that
## hold a constant window).
##
## Merge: per-work-item partial profiles (rowPV: [w][k][segment], colPV: [w][k][segment + D],
## no races) that reduce_rows / reduce_cols fold into the global profiles gV / gI ([k][l]);
## ties: the smaller index. interleave = 1 (GPUs): the same slots interleaved by work-item,
## [k][segment][nws] and [k][segment + D][nws] (nws: the launch's work-items rounded up), so
## adjacent work-items store adjacent words; interleave = 0 (CPUs): a slice per work-item.
<%include file="/common/real.cl.mako"/>
<%
    # NORMALIZE is passed only as 0 (the z-normalised programs keep their parameters)
    NZ = context.get("NORMALIZE", 1)
    # sub-group size (Intel) / fewest waves per SIMD (AMD): passed only when not 0
    SG = context.get("subgroup", 0)
    WAVES = context.get("waves", 0)
    # one diagonal per work-item (lanes = groups = 1, the GPU profiles): each row's bests are
    # stored as they are computed, not carried through the row (d values and indices fewer live)
    DIRECT = lanes == 1 and groups == 1
    # OFF32 (passed only when d * (NW + m) < 2^31): the row loop's offsets into the per-dimension
    # arrays as int, not size_t (gfx908: 141 -> 119 VGPRs at d = 8 in float64: fewer 64-bit
    # addresses live)
    OT = "int" if context.get("OFF32", 0) else "size_t"
    W = lanes
    D = groups * lanes
    VT = real if W == 1 else f"{real}{W}"
    ITS = "long" if real == "double" else "int"
    IT = ITS if W == 1 else f"{ITS}{W}"
    IV = "int" if W == 1 else f"int{W}"
    CVT_I = "(int)" if W == 1 else f"convert_int{W}"
    CVT_IT = f"({ITS})" if W == 1 else f"convert_{IT}"
    def LOAD(p):
        return f"(*({p}))" if W == 1 else f"vload{W}(0, {p})"
    def STORE(v, p):
        return f"*({p}) = {v}" if W == 1 else f"vstore{W}({v}, 0, {p})"
    def SEL(a, b, c):
        return f"(({c}) ? ({b}) : ({a}))" if W == 1 else f"select({a}, {b}, {c})"
    SFX = "0123456789abcdef"
    def PX(e):
        # offset of slot e of a work-item's partial profile (from its base pointer)
        return f"(size_t)({e}) * nws" if interleave else f"{e}"
    def PLOAD(p, t):
        # a vector of W adjacent slots (interleaved: nws apart)
        if W == 1 or not interleave:
            return LOAD(p)
        return f"({t})(" + ", ".join(f"({p})[(size_t){x} * nws]" for x in range(W)) + ")"
    def PSTORE(v, p, t):
        if W == 1 or not interleave:
            return STORE(v, p)
        return (f"{{ const {t} v_ = {v}; "
                + " ".join(f"({p})[(size_t){x} * nws] = v_.s{SFX[x]};" for x in range(W)) + " }")
    IOTA = "0" if W == 1 else "(" + IV + ")(" + ", ".join(str(x) for x in range(W)) + ")"
    # Batcher's odd-even merge sort (clts/mp/network.py)
    NS = DIM - NINC
    NET = [(NINC + a, NINC + b) for a, b in batcher(NS)]
    LO, HI = ("fmax", "fmin") if DISCORDS else ("fmin", "fmax")
%>
#define D ${D}
#define NDIM ${DIM}

${sg.reqd(SG)}\
${sg.waves(WAVES)}\
__kernel void mdiag(
    __global const int4 *desc, const int doff, const int n_work, const int s0, const int m,
    const int l, const int NW,
    __global const real *T, __global const real *mu, __global const real *df,
    __global const real *dg, __global const real *r,${"" if NZ else " __global const real *unit,"}
    __global real *rowPV, __global int *rowPI, __global real *colPV, __global int *colPI${", const int nws" if interleave else ""})
{
    const int w = get_global_id(0);
    if (w >= n_work) return;
    const int4 dd = desc[doff + w];
    const int k0 = dd.x, ilo = dd.y, ihi = dd.z;
    // dimension q's arrays start at q * NW (T: q * (NW + m))
% if interleave:
    __global real *rpv = rowPV + w;
    __global int *rpi = rowPI + w;
    __global real *cpv = colPV + w;
    __global int *cpi = colPI + w;
% else:
    __global real *rpv = rowPV + (size_t)w * NDIM * ${segment};
    __global int *rpi = rowPI + (size_t)w * NDIM * ${segment};
    __global real *cpv = colPV + (size_t)w * NDIM * ${segment + D};
    __global int *cpi = colPI + (size_t)w * NDIM * ${segment + D};
% endif
    // rows ilo .. ihi-1 are all written below; columns: the slots this band reaches (the
    // reductions read only those${"; the cooperative ones read every slot" if fold else ""})
    for (int k = 0; k < NDIM; ++k)
        for (int t = ${"0" if fold else "ilo - s0"}; t < ${segment + D - 1 if fold else "ihi - s0 + D - 1"}; ++t) {
            cpv[${PX(f"k * {segment + D} + t")}] = INFINITY; cpi[${PX(f"k * {segment + D} + t")}] = -1;
        }

    // exact covariance at row ilo of every diagonal of the band, per dimension
% for q in range(DIM):
%   for g in range(groups):
    ${VT} cov${q}_${g} = 0;
%   endfor
% endfor
    {
        const int jb = ilo + k0;
% for q in range(DIM):
        {
            __global const real *Tq = T + (size_t)${q} * (NW + m);
%   if NZ:
            const real ma = mu[(size_t)${q} * NW + ilo];
%     for g in range(groups):
            const ${VT} mb${g} = ${LOAD(f"mu + (size_t){q} * NW + jb + {g * W}")};
%     endfor
            for (int t = 0; t < m; ++t) {
                const real a = Tq[ilo + t] - ma;
%     for g in range(groups):
                cov${q}_${g} = fma((${VT})a, ${LOAD(f"Tq + jb + t + {g * W}")} - mb${g}, cov${q}_${g});
%     endfor
            }
%   else:
            for (int t = 0; t < m; ++t) {
                const real a = Tq[ilo + t];
%     for g in range(groups):
                cov${q}_${g} = fma((${VT})a, ${LOAD(f"Tq + jb + t + {g * W}")}, cov${q}_${g});
%     endfor
            }
%   endif
        }
% endfor
    }
% if NZ:
    const real two_m = (real)(2 * m);
    const real sqrt_m = sqrt((real)m);
% else:
%   for q in range(DIM):
    const real unit${q} = unit[${q}];
%   endfor
% endif
    for (int i = ilo; i < ihi; ++i) {
        const int jb = i + k0;
        const int upd = i > ilo;
        const int ri = i - s0;
% if not DIRECT:
%   for k in range(DIM):
        ${VT} rb${k} = INFINITY;
        ${IT} rbi${k} = -1;
%   endfor
% endif
% for g in range(groups):
        {
            const int j0 = jb + ${g * W};
            const ${IT} jv = (${IT})j0 + ${CVT_IT}(${IOTA});
%   for q in range(DIM):
            ${VT} x${q};
            {
                const ${OT} o = (${OT})${q} * NW;
                const real ra = r[o + i];
                const ${VT} rbv = ${LOAD("r + o + j0")};
                if (upd)
                    cov${q}_${g} += df[o + i] * ${LOAD("dg + o + j0")} + ${LOAD("df + o + j0")} * dg[o + i];
%     if NZ:
                const ${VT} c = cov${q}_${g} * ra * rbv;
                ${VT} x = sqrt(fmax(two_m * ((${VT})1 - fmin(c, (${VT})1)), (${VT})0));
%     else:
                const ${VT} c = cov${q}_${g} + ra + rbv;
                ${VT} x = sqrt(fmax((${VT})-2 * c, (${VT})0)) * unit${q};
%     endif
%     if CONST >> q & 1:
                // constant windows: 0 between two, sqrt(m) against any other
                const ${IT} cb = rbv < (${VT})0;
                x = ra < 0 ? ${SEL("(" + VT + ")sqrt_m", "(" + VT + ")0", "cb")}
                           : ${SEL("x", "(" + VT + ")sqrt_m", "cb")};
%     endif
                // a non-finite window (r = NaN; also past the series' end): inf
                x${q} = ${SEL("x", "(" + VT + ")INFINITY", "isnan(c)")};
            }
%   endfor
            // sorting network over the unforced dimensions
%   for a, b in NET:
            { const ${VT} u = ${LO}(x${a}, x${b}); x${b} = ${HI}(x${a}, x${b}); x${a} = u; }
%   endfor
            // prefix sums: row bests (lane-wise; groups ascend in j, so strict <) and column
            // bests (column j's slot q = j - s0 - k0; rows ascend, so strict <)
            ${VT} s = 0;
%   for k in range(DIM):
            s += x${k};
            {
%     if DIRECT:
                // the row's only candidate: stored at once (no running best kept live)
                rpv[${PX(f"{k * segment} + ri")}] = s;
                rpi[${PX(f"{k * segment} + ri")}] = s < INFINITY ? j0 : -1;
%     else:
                const ${IT} lt = s < rb${k};
                rb${k} = ${SEL(f"rb{k}", "s", "lt")};
                rbi${k} = ${SEL(f"rbi{k}", "jv", "lt")};
%     endif
                __global real *cv = cpv + ${PX(f"{k * (segment + D)} + ri + {g * W}")};
                __global int *ci = cpi + ${PX(f"{k * (segment + D)} + ri + {g * W}")};
                const ${VT} old = ${PLOAD("cv", VT)};
                const ${IT} lc = s < old;
                ${PSTORE(SEL("old", "s", "lc"), "cv", VT)};
                ${PSTORE(SEL(PLOAD("ci", IV), "(" + IV + ")i", CVT_I + "(lc)" if W > 1 else "lc"), "ci", IV)};
            }
%   endfor
        }
% endfor
        // the row's best over the band's lanes, per k (ties: the smaller index; a lane's
        // best may come from a later group than another lane's): halves folded pairwise
% for k in range(0 if DIRECT else DIM):
        {
<%
    w, v, vi = W, f"rb{k}", f"rbi{k}"
    steps = []
    while w > 1:
        h = w // 2
        ht = real if h == 1 else f"{real}{h}"
        hi_t = ITS if h == 1 else f"{ITS}{h}"
        steps.append((ht, hi_t, v, vi, h))
        v, vi, w = f"h{k}_{h}", f"hi{k}_{h}", h
%>
%   for ht, hi_t, pv, pvi, h in steps:
            const ${ht} a${k}_${h} = ${pv}.lo, b${k}_${h} = ${pv}.hi;
            const ${hi_t} ia${k}_${h} = ${pvi}.lo, ib${k}_${h} = ${pvi}.hi;
%     if h == 1:
            const int t${k}_${h} = b${k}_${h} < a${k}_${h} || (b${k}_${h} == a${k}_${h} && ib${k}_${h} >= 0 && ib${k}_${h} < ia${k}_${h});
            const ${ht} h${k}_${h} = t${k}_${h} ? b${k}_${h} : a${k}_${h};
            const ${hi_t} hi${k}_${h} = t${k}_${h} ? ib${k}_${h} : ia${k}_${h};
%     else:
            const ${hi_t} t${k}_${h} = (b${k}_${h} < a${k}_${h}) | ((b${k}_${h} == a${k}_${h}) & (ib${k}_${h} >= 0) & (ib${k}_${h} < ia${k}_${h}));
            const ${ht} h${k}_${h} = select(a${k}_${h}, b${k}_${h}, t${k}_${h});
            const ${hi_t} hi${k}_${h} = select(ia${k}_${h}, ib${k}_${h}, t${k}_${h});
%     endif
%   endfor
            const real bv = ${v};
            const int bi = (int)${vi};
            rpv[${PX(f"{k * segment} + ri")}] = bv;
            rpi[${PX(f"{k * segment} + ri")}] = bv < INFINITY ? bi : -1;
        }
% endfor
    }
}

inline int better(real s, int i, real bs, int bi)
{
    return i >= 0 && (bi < 0 || s < bs || (s == bs && i < bi));
}

% if fold:
<%
    FX = min(32, fold)              # column groups per work-group of the column fold
    FY = fold // FX                 # slices of each column's work-items
    NB = (segment + D - 2) // D + 1     # slot rows b of a column (slot q = b * D + t)
    def PO(k, slot, n, w):
        # slot `slot` of dimension k of work-item w's partial profile of n slots
        if interleave:
            return f"((size_t){k * n} + {slot}) * nws + {w}"
        return f"((size_t){w} * NDIM + {k}) * {n} + {slot}"
    def TREE(k, stride, n, lid, active):
        # lexicographic minimum of (bs<k>, bi<k>) over the n slices `stride` apart, into slot lid
        out = [f"lv[{lid}] = bs{k}; li[{lid}] = bi{k};", "barrier(CLK_LOCAL_MEM_FENCE);"]
        h = n // 2
        while h >= 1:
            j = f"{lid} + {h * stride}"
            out.append(f"if ({active} < {h} && better(lv[{j}], li[{j}], lv[{lid}], li[{lid}])) "
                       f"{{ lv[{lid}] = lv[{j}]; li[{lid}] = li[{j}]; }}")
            out.append("barrier(CLK_LOCAL_MEM_FENCE);")
            h //= 2
        return "\n        ".join(out)
%>
// Work-group-cooperative folds (fold = work-group size > 0, GPUs): adjacent work-items read
// adjacent work-items' partials (with interleave = 1, adjacent words), each keeps the
// lexicographic minimum (value, then index) of its share per dimension, and a tree in local
// memory combines the shares. The minimum does not depend on the order: results are those of
// the one-work-item-per-row / -column folds below, bit for bit.

// rows: one work-group per row of the segment; its work-items stride over the launch's
// work-items
__kernel __attribute__((reqd_work_group_size(${fold}, 1, 1)))
void mreduce_rows(__global const int4 *desc, const int doff, const int n_work,
                  const int s0, const int l,
                  __global const real *rowPV, __global const int *rowPI,
                  __global real *gV, __global int *gI${", const int nws" if interleave else ""})
{
    __local real lv[${fold}];
    __local int li[${fold}];
    const int rr = get_group_id(0);
    const int i = s0 + rr;
    const int lid = get_local_id(0);
    // rows past the segment or the series: no work, but every barrier (no early return)
    const int nw = rr < ${segment} && i < l ? n_work : 0;
% for k in range(DIM):
    real bs${k} = INFINITY;
    int bi${k} = -1;
% endfor
    for (int w = lid; w < nw; w += ${fold}) {
        const int4 dd = desc[doff + w];
        if (i < dd.y || i >= dd.z) continue;
% for k in range(DIM):
        {
            const size_t o = ${PO(k, "rr", segment, "w")};
            const real v = rowPV[o];
            const int x = rowPI[o];
            if (better(v, x, bs${k}, bi${k})) { bs${k} = v; bi${k} = x; }
        }
% endfor
    }
% for k in range(DIM):
    {
        ${TREE(k, 1, fold, "lid", "lid")}
        if (lid == 0 && nw > 0 && better(lv[0], li[0], gV[(size_t)${k} * l + i], gI[(size_t)${k} * l + i])) {
            gV[(size_t)${k} * l + i] = lv[0]; gI[(size_t)${k} * l + i] = li[0];
        }
    }
% endfor
}

// columns: work-item w owns band k0 = kb + w*D and columns s0 + k0 + q, q in [0, segment + D);
// column rel = cg*D + t (rel = c - s0 - kb) gets slot q = b*D + t of work-item w = cg - b.
// One work-group per ${FX} column groups cg (adjacent work-items: adjacent cg, so adjacent w
// for the same slot), ${FY} slices of b per column; each work-item folds its columns'
// t = 0 .. D-1 in turn
__kernel __attribute__((reqd_work_group_size(${fold}, 1, 1)))
void mreduce_cols(__global const int4 *desc, const int doff, const int n_work,
                  const int s0, const int kb, const int ncols, const int l, __global const real *colPV, __global const int *colPI,
                  __global real *gV, __global int *gI${", const int nws" if interleave else ""})
{
    __local real lv[${fold}];
    __local int li[${fold}];
    const int lid = get_local_id(0);
    const int y = lid / ${FX};
    const int x = lid - y * ${FX};
    const int cg0 = (int)get_group_id(0) * ${FX};
    const int cg = cg0 + x;
    // the slot rows b whose work-item cg - b is in the launch for some column group of the group
    const int blo = max(0, cg0 - (n_work - 1));
    const int bhi = min(${NB - 1}, cg0 + ${FX - 1});
    for (int t = 0; t < D; ++t) {
% for k in range(DIM):
        real bs${k} = INFINITY;
        int bi${k} = -1;
% endfor
        for (int b = blo + y; b <= bhi; b += ${FY}) {
            const int w = cg - b;
            const int q = b * D + t;
            // slots a work-item's band does not reach hold (inf, -1): no descriptor needed
            if (w < 0 || w >= n_work || q >= ${segment + D - 1}) continue;
% for k in range(DIM):
            {
                const size_t o = ${PO(k, "q", segment + D, "w")};
                const real v = colPV[o];
                const int ix = colPI[o];
                if (better(v, ix, bs${k}, bi${k})) { bs${k} = v; bi${k} = ix; }
            }
% endfor
        }
        const int rel = cg * D + t;
        const int c = s0 + kb + rel;
        const int out = y == 0 && rel < ncols && c < l;
% for k in range(DIM):
        {
% if FY > 1:
        ${TREE(k, FX, FY, "lid", "y")}
            const real v = lv[lid];
            const int ix = li[lid];
% else:
            const real v = bs${k};
            const int ix = bi${k};
% endif
            if (out && better(v, ix, gV[(size_t)${k} * l + c], gI[(size_t)${k} * l + c])) {
                gV[(size_t)${k} * l + c] = v; gI[(size_t)${k} * l + c] = ix;
            }
        }
% endfor
    }
}
% else:
// fold the partial row profiles of a launch (its work-items share the segment s0)
__kernel void mreduce_rows(__global const int4 *desc, const int doff, const int n_work,
                           const int s0, const int l,
                           __global const real *rowPV, __global const int *rowPI,
                           __global real *gV, __global int *gI${", const int nws" if interleave else ""})
{
    const int rr = get_global_id(0);
    const int i = s0 + rr;
    if (rr >= ${segment} || i >= l) return;
% for k in range(DIM):
    {
        real bs = gV[(size_t)${k} * l + i];
        int bi = gI[(size_t)${k} * l + i];
        for (int w = 0; w < n_work; ++w) {
            const int4 dd = desc[doff + w];
            if (i < dd.y || i >= dd.z) continue;
% if interleave:
            const size_t o = ((size_t)${k * segment} + rr) * nws + w;
% else:
            const size_t o = ((size_t)w * NDIM + ${k}) * ${segment} + rr;
% endif
            if (better(rowPV[o], rowPI[o], bs, bi)) { bs = rowPV[o]; bi = rowPI[o]; }
        }
        gV[(size_t)${k} * l + i] = bs; gI[(size_t)${k} * l + i] = bi;
    }
% endfor
}

// fold the partial column profiles; work-item w owns band k0 = kb + w*D and columns
// s0 + k0 + q for q in [0, segment + D)
__kernel void mreduce_cols(__global const int4 *desc, const int doff, const int n_work,
                           const int s0, const int kb, const int ncols, const int l, __global const real *colPV, __global const int *colPI,
                           __global real *gV, __global int *gI${", const int nws" if interleave else ""})
{
    const int c = s0 + kb + (int)get_global_id(0);
    if ((int)get_global_id(0) >= ncols || c >= l) return;
    const int rel = c - s0 - kb;            // = w*D + q
    const int wlo = max(0, (rel - ${segment + D} + D) / D);
    const int whi = min(n_work - 1, rel / D);
% for k in range(DIM):
    {
        real bs = gV[(size_t)${k} * l + c];
        int bi = gI[(size_t)${k} * l + c];
        for (int w = wlo; w <= whi; ++w) {
            const int q = rel - w * D;
            const int4 dd = desc[doff + w];
            if (q < dd.y - s0 || q >= dd.z - s0 + D - 1) continue;
% if interleave:
            const size_t o = ((size_t)${k * (segment + D)} + q) * nws + w;
% else:
            const size_t o = ((size_t)w * NDIM + ${k}) * ${segment + D} + q;
% endif
            if (better(colPV[o], colPI[o], bs, bi)) { bs = colPV[o]; bi = colPI[o]; }
        }
        gV[(size_t)${k} * l + c] = bs; gI[(size_t)${k} * l + c] = bi;
    }
% endfor
}
% endif
