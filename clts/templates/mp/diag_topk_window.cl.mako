<%namespace name="sg" file="/common/subgroup.cl.mako"/>\
## diag_topk for topk_store="window" (GPU profiles, one lane per group: lanes = 1), included by
## diag_topk.cl.mako. A column j = i + k of the band k0 .. k0+D-1 is reached by the D
## consecutive rows j - k0 - D + 1 .. j - k0 only, so a work-item needs the lists of D columns
## at a time, not of a tile's tl + D - 1: list d holds column i + k0 + d of the current row i,
## kept sorted in registers (cv<d>_<e>, ci<d>_<e>; no local or private array). After row i,
## column i + k0 leaves the band: its list is stored to the partial column lists (slot
## i - s0, written once: no merge),
## the lists shift down by one and the entering column i + k0 + D starts empty. An empty entry
## holds the column's entry floor (the K-th score of its global list, nextafter towards -inf)
## with index -1, so that entry K - 1 is the column's entry threshold (max of floor and K-th):
## one compare per lane, no threshold array. The floors of a tile's columns
## (tile rows of the group's wg * D bands: tile + wg * D contiguous columns) are read by the
## work-group together into local memory (adjacent work-items: adjacent words of gCV), which
## needs the group's work-items to walk the same tiles (the group's row range; a barrier per
## tile). Results are those of the tile kernel: a column's list is the K best of the same
## candidates (score descending, then index ascending), whichever rows it is built over.
<%namespace name="shared" file="/mp/diag_common.cl.mako"/>
<%
    D = groups
    NF = tile + wg * D                  # floors of one tile of the group's bands
    SG = context.get("subgroup", 0)     # the sub-group size required on Intel GPUs (0: any)
    WAVES = context.get("waves", 0)     # AMD: waves per SIMD the back end must leave room for
    def GX(x):
        return x if not interleave else f"({x}) * nws"
    RP = "" if interleave else f" * SEG * {K}"
    CP = "" if interleave else f" * (SEG + D) * {K}"
%>
${sg.reqd(SG)}\
${sg.waves(WAVES)}\
__kernel __attribute__((reqd_work_group_size(${wg}, 1, 1)))
void diag_topk(
    __global const int4 *desc, const int doff, const int n_work, const int s0, const int m,
    const int lA, const int lB, const int PAD, const int SEG, const ulong idxmask,
    __global const real *TA, __global const real *muA,
    __global const real *dfA, __global const real *dgA, __global const real *rA,
    __global const real *TB, __global const real *muB,
    __global const real *dfB, __global const real *dgB, __global const real *rB,
    __global real *rowPV, __global int *rowPI, __global const real *gRV, __global int *wflag,
    const int nws, __global real *colPV, __global int *colPI, __global const real *gCV)
{
    __local real lfl[${NF}];            // entry floors of the tile's columns it + kg + c
    __local int lrange[2];              // the group's rows
    const int w = get_global_id(0);
    const int lid = get_local_id(0);
    // work-items past the launch's bands walk the group's tiles with no rows (the barriers)
    const int act = w < n_work;
    const int4 dd = desc[doff + min(w, n_work - 1)];
    const int k0 = dd.x, ilo = dd.y, ihi = act ? dd.z : dd.y;
    const int kg = desc[doff + w - lid].x;      // band of the group's first work-item
    __global const real *TBp = TB + PAD, *muBp = muB + PAD, *dfBp = dfB + PAD,
                        *dgBp = dgB + PAD, *rBp = rB + PAD;
    __global real *rpv = rowPV + (size_t)w${RP};
    __global int *rpi = rowPI + (size_t)w${RP};
    __global real *cpv = colPV + (size_t)w${CP};
    __global int *cpi = colPI + (size_t)w${CP};
% if FOLD:
    // every slot starts empty (the cooperative column fold reads all; the band's are stored
    // again as their columns leave it), all work-items alike: adjacent words
    if (act)
        for (int q = 0; q < (SEG + D - 1) * ${K}; ++q) { cpv[${GX("q")}] = -INFINITY; cpi[${GX("q")}] = -1; }
% endif
${shared.cov_init(real, lambda p: f"(*({p}))")}
    if (lid == 0) { lrange[0] = INT_MAX; lrange[1] = INT_MIN; }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (ilo < ihi) { atomic_min(lrange, ilo); atomic_max(lrange + 1, ihi); }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int glo = lrange[0], ghi = lrange[1];
    // whether this work-item left any row / column entry: the reductions skip it otherwise
    int anyr = 0, anyc = 0;
% for d in range(D):
    real ${", ".join(f"cv{d}_{e} = -INFINITY" for e in range(K))};
    int ${", ".join(f"ci{d}_{e} = -1" for e in range(K))};
% endfor
    for (int it = glo; it < ghi; it += L) {
        barrier(CLK_LOCAL_MEM_FENCE);   // every work-item is done with the last tile's floors
        {
            // the tile's floors: whole K-lists read by adjacent work-items, entry K - 1 kept
            const int c0 = it + kg;
            for (int e = lid; e < ${NF * K}; e += ${wg}) {
                const int c = c0 + e / ${K};
                const int ok = c >= 0 && c < lB;
                const real v = ok ? gCV[(size_t)c * ${K} + (e - (e / ${K}) * ${K})] : (real)0;
                if (e - (e / ${K}) * ${K} == ${K - 1})
                    lfl[e / ${K}] = ok ? nextafter(v, (real)-INFINITY) : (real)-INFINITY;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const int r0 = max(it, ilo), r1 = min(it + L, ihi);
        // this work-item's floors: column it + k0 + c at fl[c]
        __local const real *fl = lfl + (k0 - kg);
        if (r0 == ilo && r0 < r1) {     // the first row's D columns
% for d in range(D):
            ${" ".join(f"cv{d}_{e} = fl[ilo - it + {d}];" for e in range(K))}
% endfor
        }
        ${shared.attr.names(real, 1, groups, unroll)[6]}
        for (int i = r0; i < r1; ++i) {
            const int jb = i + k0;
            const real fa = dfA[i], ga = dgA[i], ra = rA[i];
            const int upd = i > ilo;
% for q in range(K):
            real rv${q} = -INFINITY;
            int ri${q} = -1;
% endfor
            // the row's entry threshold: max(K-th of its list, floor from the global list)
            real rth = nextafter(gRV[(size_t)i * ${K} + ${K - 1}], (real)-INFINITY);
            // scores of the row's D diagonals; one test: does any lane beat its row or column
            // entry threshold (NaN scores, from invalid or padded windows, never do)
            int hit = 0;
% for g in range(D):
            real sc${g};
            {
                const real fb = dfBp[jb + ${g}], gb = dgBp[jb + ${g}], rbv = rBp[jb + ${g}];
                if (upd) cov${g} = fma(fa, gb, fma(ga, fb, cov${g}));
%   if NORMALIZE:
                sc${g} = cov${g} * ra * rbv;
%   else:
                sc${g} = cov${g} + ra + rbv;
%   endif
                hit |= (sc${g} > rth) | (sc${g} > cv${g}_${K - 1});
            }
% endfor
            if (hit) {
                // rare once the floors are set. The row: a loop over the D lanes that picks
                // each lane's score from its register (not unrolled: small code keeps the hot
                // path above in registers); the columns: each lane's list by name (lists in
                // registers need indices known at compile time)
                #pragma unroll 1
                for (int d = 0; d < D; ++d) {
                    const real x = ${"".join(f"d == {g} ? sc{g} : " for g in range(D - 1))}sc${D - 1};
                    if (x > rth) {
${shared.ins_reg("x", "jb + d")}
                    }
                }
% for d in range(D):
                // column jb + ${d}, candidate row i (rows in increasing order)
                if (sc${d} > cv${d}_${K - 1}) {
                    real s = sc${d};
                    int ii = i;
%   for e in range(K):
                    if (better(s, ii, cv${d}_${e}, ci${d}_${e})) {
                        const real tv = cv${d}_${e}; const int ti = ci${d}_${e};
                        cv${d}_${e} = s; ci${d}_${e} = ii; s = tv; ii = ti;
                    }
%   endfor
                }
% endfor
            }
            {
                __global real *pv = rpv + ${GX(f"(size_t)(i - s0) * {K}") if interleave else f"(i - s0) * {K}"};
                __global int *pi = rpi + ${GX(f"(size_t)(i - s0) * {K}") if interleave else f"(i - s0) * {K}"};
                pi[0] = ri0;
                if (ri0 >= 0) {         // else the reduction stops at the first entry
                    anyr = 1;
                    pv[0] = rv0;
% for q in range(1, K):
                    pv[${GX(q)}] = rv${q}; pi[${GX(q)}] = ri${q};
% endfor
                }
            }
            {
                // column i + k0 leaves the band: its list to slot i - s0 (empty entries: -inf)
                __global real *gv = cpv + ${GX(f"(size_t)(i - s0) * {K}") if interleave else f"(i - s0) * {K}"};
                __global int *gi = cpi + ${GX(f"(size_t)(i - s0) * {K}") if interleave else f"(i - s0) * {K}"};
% for e in range(K):
                gv[${GX(e)}] = ci0_${e} >= 0 ? cv0_${e} : (real)-INFINITY; gi[${GX(e)}] = ci0_${e};
% endfor
                anyc |= ci0_0 >= 0;
                // the lists shift down; column i + 1 + k0 + D - 1 enters with its floor
                const real nf = fl[i + 1 - it + ${D - 1}];
% for d in range(D - 1):
                ${" ".join(f"cv{d}_{e} = cv{d + 1}_{e}; ci{d}_{e} = ci{d + 1}_{e};" for e in range(K))}
% endfor
                ${" ".join(f"cv{D - 1}_{e} = nf; ci{D - 1}_{e} = -1;" for e in range(K))}
            }
        }
    }
    if (ilo < ihi) {
        // the band's last D - 1 columns ihi + k0 + d: slots ihi - s0 + d
% for d in range(D - 1):
        {
            __global real *gv = cpv + ${GX(f"(size_t)(ihi - s0 + {d}) * {K}") if interleave else f"(ihi - s0 + {d}) * {K}"};
            __global int *gi = cpi + ${GX(f"(size_t)(ihi - s0 + {d}) * {K}") if interleave else f"(ihi - s0 + {d}) * {K}"};
%   for e in range(K):
            gv[${GX(e)}] = ci${d}_${e} >= 0 ? cv${d}_${e} : (real)-INFINITY; gi[${GX(e)}] = ci${d}_${e};
%   endfor
            anyc |= ci${d}_0 >= 0;
        }
% endfor
    }
    if (act) {
        wflag[2 * w] = anyr;
        wflag[2 * w + 1] = anyc;
    }
}
