## Once per STL call, per smoother (Serykh et al.'s "filter" index computation and NNS):
## stl_stats: per segment (series x cycle-subseries) the number of valid points, the span of
## their positions and, with missing values, their positions packed in order (pos, NPOS per
## segment): the indexes of the non-NaN values.
## stl_nns: per fit point, the window of the min(q, n_valid) valid points nearest its anchor
## (ties to the left) by Serykh et al.'s method: a binary search of the packed positions for the
## anchor (O(log N)), then the interval grown one valid point at a time towards the nearer side
## (O(q)), O(1) extra space; h, and the fallback point (the valid point nearest the fit
## position, by a second binary search). With complete data the packed positions are the
## identity (pos[k] = k + 1) and are not stored.
## NNS layout (planes): 0 = four ints per fit point, nns[4 * fit + k] (CPUs); 1 = four planes,
## nns[k * B * S * NF + fit] (GPUs: adjacent work-items write adjacent words of each plane).
<%include file="/common/real.cl.mako"/>
<%
POS = (lambda k: "((%s) + 1)" % k) if complete else (lambda k: "prow[%s]" % k)
NN = (lambda k: "nns[%d * NNS + fit]" % k if k else "nns[fit]") if planes else (lambda k: "nns[4 * fit + %d]" % k if k else "nns[4 * fit]")
%>

kernel void stl_stats(global const real* M, int m_b, int m_s, global const int* seg_n,
                      int S, int B, int NPOS, global int* stats, global int* pos) {
    const int bs = get_global_id(0);
    if (bs >= B * S) return;
    const int b = bs / S, s = bs - b * S;
    const int n = seg_n[s];
% if complete:
    stats[2 * bs] = n;
    stats[2 * bs + 1] = n - 1;
% else:
    global const real* Mrow = M + (long)b * m_b + (long)s * m_s;
    global int* prow = pos + (long)bs * NPOS;
    int cnt = 0;
    for (int p = 1; p <= n; ++p)
        if (!isnan(Mrow[p - 1])) prow[cnt++] = p;
    stats[2 * bs] = cnt;
    stats[2 * bs + 1] = cnt ? prow[cnt - 1] - prow[0] : 0;
% endif
}

% if wg and not complete:
// The GPU mapping (Plan steps "coalesced"): a work-group of WG per segment packs its valid
// positions by a stream compaction (a local scan of the validity flags of WG positions at a
// time, staged in local memory): adjacent work-items read adjacent positions and write adjacent
// packed slots. The work-group is any power of two up to ${wg} (the launch picks it from the
// longest segment: a new length builds nothing).
kernel void stl_stats_group(global const real* M, int m_b, int m_s, global const int* seg_n,
                            int S, int B, int NPOS, global int* stats, global int* pos) {
    local int scan[${wg}], packed[${wg}];
    local int first, last;
    const int bs = get_group_id(0), lid = get_local_id(0), WG = get_local_size(0);
    const int b = bs / S, s = bs - b * S;
    const int n = seg_n[s];
    global const real* Mrow = M + (long)b * m_b + (long)s * m_s;
    global int* prow = pos + (long)bs * NPOS;
    if (lid == 0) { first = 0; last = 0; }
    int base = 0;
    for (int p0 = 0; p0 < n; p0 += WG) {
        const int p = p0 + lid;
        const int f = p < n && !isnan(Mrow[p]);
        scan[lid] = f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int off = 1; off < WG; off <<= 1) {
            const int v = lid >= off ? scan[lid - off] : 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            scan[lid] += v;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        const int total = scan[WG - 1];
        if (f) {
            packed[scan[lid] - 1] = p + 1;
            if (base + scan[lid] == 1) first = p + 1;
            if (scan[lid] == total) last = p + 1;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // the chunk's packed positions written by the first `total` work-items: one
        // contiguous run of slots
        if (lid < total) prow[base + lid] = packed[lid];
        base += total;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        stats[2 * bs] = base;
        stats[2 * bs + 1] = base ? last - first : 0;
    }
}

% endif
// number of packed positions <= x (the index of the first one > x), by binary search
inline int upper_bound(global const int* prow, int nv, int x) {
    int lo = 0, hi = nv;
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (${POS("mid")} <= x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

kernel void stl_nns(global const int* seg_n, global const int* fitpos,
                    global const int* anchor, int NF, int S, int B, int q, int NPOS,
                    global const int* stats, global const int* pos, global int* nns) {
    const long fit = get_global_id(0);
    if (fit >= (long)B * S * NF) return;
% if planes:
    const long NNS = (long)B * S * NF;
% endif
    const int bs = (int)(fit / NF);
    const int f = (int)(fit - (long)bs * NF);
    const int s = bs - (bs / S) * S;
    const int xf = fitpos[s * NF + f];
    const int a = anchor[s * NF + f];
    const int nv = stats[2 * bs];
    global const int* prow = pos + (long)bs * NPOS;
    if (xf < 0 || nv == 0) {
        ${NN(0)} = 1; ${NN(1)} = 0; ${NN(2)} = 0; ${NN(3)} = 0;
        return;
    }
    const int qh = min(q, nv);
    // packed indexes: L = last valid point <= anchor, R = first valid point > anchor
    int R = upper_bound(prow, nv, a);
    int L = R - 1;
    for (int k = 0; k < qh; ++k) {
        const int dl = L >= 0 ? a - ${POS("L")} : 0x3fffffff;
        const int dr = R < nv ? ${POS("R")} - a : 0x3fffffff;
        if (dl <= dr) --L;
        else ++R;
    }
    const int lo = ${POS("L + 1")}, hi = ${POS("R - 1")};
    int h = max(xf - lo, hi - xf);
    if (q > nv) h += (q - nv) / 2;
    // fallback point: the valid point nearest the fit position (ties to the left)
    const int r = upper_bound(prow, nv, xf);
    int fbp;
    if (r == 0) fbp = ${POS("0")};
    else if (r == nv) fbp = ${POS("nv - 1")};
    else {
        const int fl = ${POS("r - 1")}, fr = ${POS("r")};
        fbp = (xf - fl <= fr - xf) ? fl : fr;
    }
    ${NN(0)} = lo; ${NN(1)} = hi; ${NN(2)} = h; ${NN(3)} = fbp;
}
