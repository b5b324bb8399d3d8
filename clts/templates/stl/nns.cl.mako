## Once per STL call: per-segment valid counts (NaN index computation) and the nearest-neighbour
## windows of every fit point (scan to the nearest valid points, then grow the interval one
## point at a time towards the nearer side, ties to the left: O(q + gaps) time, O(1) space).
## Validity comes from M (NaN = missing) unless complete = True.
<%include file="/common/real.cl.mako"/>
<% valid = (lambda p: "1") if complete else (lambda p: "(!isnan(Mrow[(%s) - 1]))" % p) %>

kernel void stl_stats(global const real* M, int m_b, int m_s, global const int* seg_n,
                      int S, int B, global int* stats) {
    const int bs = get_global_id(0);
    if (bs >= B * S) return;
    const int b = bs / S, s = bs - b * S;
    const int n = seg_n[s];
    global const real* Mrow = M + (long)b * m_b + (long)s * m_s;
    int cnt = 0, first = 0, last = 0;
    for (int p = 1; p <= n; ++p) {
        if (${valid("p")}) {
            if (cnt == 0) first = p;
            last = p;
            ++cnt;
        }
    }
    stats[2 * bs] = cnt;
    stats[2 * bs + 1] = last - first;
}

kernel void stl_nns(global const real* M, int m_b, int m_s, global const int* seg_n,
                    global const int* fitpos, global const int* anchor, int NF, int S, int B,
                    int q, global const int* stats, global int* nns) {
    const long fit = get_global_id(0);
    if (fit >= (long)B * S * NF) return;
    const int bs = (int)(fit / NF);
    const int f = (int)(fit - (long)bs * NF);
    const int b = bs / S, s = bs - b * S;
    const int n = seg_n[s];
    const int xf = fitpos[s * NF + f];
    const int a = anchor[s * NF + f];
    const int nv = stats[2 * bs];
    global const real* Mrow = M + (long)b * m_b + (long)s * m_s;
    if (xf < 0 || nv == 0) {
        nns[4 * fit] = 1; nns[4 * fit + 1] = 0; nns[4 * fit + 2] = 0; nns[4 * fit + 3] = 0;
        return;
    }
    const int qh = min(q, nv);
    // nearest valid at or left of the anchor, and right of it
    int L = min(a, n);
    while (L >= 1 && !(${valid("L")})) --L;
    int R = max(a + 1, 1);
    while (R <= n && !(${valid("R")})) ++R;
    int lo = n + 1, hi = 0;
    for (int k = 0; k < qh; ++k) {
        const int dl = L >= 1 ? a - L : 0x3fffffff;
        const int dr = R <= n ? R - a : 0x3fffffff;
        if (dl <= dr) {
            lo = min(lo, L); hi = max(hi, L);
            --L;
            while (L >= 1 && !(${valid("L")})) --L;
        } else {
            lo = min(lo, R); hi = max(hi, R);
            ++R;
            while (R <= n && !(${valid("R")})) ++R;
        }
    }
    int h = max(xf - lo, hi - xf);
    if (q > nv) h += (q - nv) / 2;
    // fallback point: the valid point nearest the fit position (ties to the left)
    int fl = min(xf, n);
    while (fl >= 1 && !(${valid("fl")})) --fl;
    int fr = max(xf + 1, 1);
    while (fr <= n && !(${valid("fr")})) ++fr;
    int fbp;
    if (fl < 1) fbp = fr;
    else if (fr > n) fbp = fl;
    else fbp = (xf - fl <= fr - xf) ? fl : fr;
    nns[4 * fit] = lo; nns[4 * fit + 1] = hi; nns[4 * fit + 2] = h; nns[4 * fit + 3] = fbp;
}
