## The low-pass filter's three moving averages (lengths P, P, 3) as Serykh et al.'s chained
## single_ma (Fig. 4 of Serykh et al. 2023): for each, a reduce (the first window's sum), a map (the
## differences x[i + len - 1] - x[i - 1]), an inclusive prefix-sum scan of them, and a map
## (/ len). Here the scans are the segmented scans of a batch (one segment per series) done
## sequentially inside a work-item, the work-efficient scan on a CPU, and the three are fused
## into one loop: the second scan consumes the first's output P steps behind it (a ring of P
## values per series in `ring`), the third the second's 3 steps behind (in registers), so
## neither intermediate series goes to memory. The division follows each scan (not precedes
## it as in Serykh et al.) and the update order is netlib's v = v - x[i - 1] + x[i + len - 1], so
## the rounding is that of statsmodels / netlib. A work-item runs lanes series at once with realN
## vectors: C and the output come interleaved by lanes series ([b / lanes][position][b % lanes]).
<%include file="/common/real.cl.mako"/>
<%
    V = "real" if lanes == 1 else "real%d" % lanes
    LD = (lambda i, p: "%s[%s]" % (p, i)) if lanes == 1 else (lambda i, p: "vload%d(%s, %s)" % (lanes, i, p))
    ST = (lambda v, i, p: "%s[%s] = %s" % (p, i, v)) if lanes == 1 else (lambda v, i, p: "vstore%d(%s, %s, %s)" % (lanes, v, i, p))
%>

kernel void stl_ma(global const real* C, int N, int P, int NT, global real* ring,
                   global real* out) {
    // NT tiles of TL series; C: [NT][N + 2P][TL], out: [NT][N][TL], ring: [NT][P][TL]
    const int tile = get_global_id(0);
    if (tile >= NT) return;
    const int NC = N + 2 * P;
    global const real* x = C + (long)tile * NC * ${lanes};
    global real* r = ring + (long)tile * P * ${lanes};
    global real* o = out + (long)tile * N * ${lanes};
    const real fl = (real)P;
    // scan 1 over C (NC values -> NC - P + 1 averages a1), scan 2 over a1 (-> N + 2 averages
    // a2), scan 3 over a2 (-> N averages)
    ${V} v1 = 0, v2 = 0, v3 = 0;
    ${V} a2m1 = 0, a2m2 = 0, a2m3 = 0;     // a2[k - 1], a2[k - 2], a2[k - 3]
    for (int i = 0; i < P; ++i) v1 += ${LD("i", "x")};
    const int n1 = NC - P + 1;
    int slot = 0;                          // = j % P
    for (int j = 0; j < n1; ++j) {
        if (j > 0) v1 = v1 - ${LD("j - 1", "x")} + ${LD("j + P - 1", "x")};
        const ${V} a1 = v1 / fl;
        if (j < P) v2 += a1;
        else v2 = v2 - ${LD("slot", "r")} + a1;     // a1[j - P] leaves the window
        ${ST("a1", "slot", "r")};
        if (++slot == P) slot = 0;
        if (j >= P - 1) {
            const int k = j - P + 1;
            const ${V} a2 = v2 / fl;
            if (k < 3) v3 += a2;
            else v3 = v3 - a2m3 + a2;
            if (k >= 2) ${ST("v3 / (real)3", "k - 2", "o")};
            a2m3 = a2m2; a2m2 = a2m1; a2m1 = a2;
        }
    }
}
% if tiles:

## The GPU mapping (Plan steps "coalesced"): one work-item per output point, a work-group per
## (tile of MT outputs, series). The group reads the tile's C values (MT + 2P + 1, adjacent
## work-items at adjacent positions of one series: coalesced) into local memory, then each
## work-item forms its a1 = mean of P values, a2 = mean of P a1 and the output = mean of 3 a2 by
## direct sums: the same three moving averages with every output point independent (Bp x N
## work-items), rounded as sums instead of netlib's running updates (a few ulp apart).
kernel void stl_ma_tiles(global const real* C, int N, int P, global real* out,
                         local real* xs, local real* a1, local real* a2) {
    // C: [Bp / TL][N + 2P][TL], out: [Bp / TL][N][TL]; range (tiles * MT, Bp), local (MT, 1);
    // local memory: xs MT + 2P + 1 values, a1 MT + P + 1, a2 MT + 2 (the period is an
    // argument: a new period builds nothing)
    const int lid = get_local_id(0), k0 = get_group_id(0) * ${MT};
    const int b = get_global_id(1);
    const int NC = N + 2 * P;
    // b - bq * lanes, not b % lanes: Oclgrind cannot check the freeze LLVM puts on a div/rem pair
    const int bq = b / ${lanes}, br = b - bq * ${lanes};
    global const real* x = C + (long)bq * NC * ${lanes} + br;
    global real* o = out + (long)bq * N * ${lanes} + br;
    const int nx = min(${MT + 1} + 2 * P, NC - k0);
    for (int i = lid; i < nx; i += ${MT}) xs[i] = x[(long)(k0 + i) * ${lanes}];
    barrier(CLK_LOCAL_MEM_FENCE);
    const int n1 = min(${MT + 1} + P, N + P + 1 - k0);
    for (int i = lid; i < n1; i += ${MT}) {
        real v = 0;
        for (int f = 0; f < P; ++f) v += xs[i + f];
        a1[i] = v / (real)P;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int n2 = min(${MT + 2}, N + 2 - k0);
    for (int i = lid; i < n2; i += ${MT}) {
        real v = 0;
        for (int e = 0; e < P; ++e) v += a1[i + e];
        a2[i] = v / (real)P;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int k = k0 + lid;
    if (k < N) o[(long)k * ${lanes}] = (a2[lid] + a2[lid + 1] + a2[lid + 2]) / (real)3;
}
% endif
