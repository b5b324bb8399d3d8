## Moving averages of the low-pass filter (lengths P, P, 3) as three chained running-sum scans,
## one work-item per series (the rolling update of the netlib code, so rounding matches it).
<%include file="/common/real.cl.mako"/>

kernel void stl_ma(global const real* C, int N, int P, int B, int Bp, global real* work,
                   global real* out) {
    const int b = get_global_id(0);
    if (b >= Bp) return;
    const int NC = N + 2 * P;
    global const real* x = C + (long)min(b, B - 1) * NC;
    global real* w = work + (long)b * NC;
    // pass 1: C (NC) -> w (NC - P + 1)
    {
        real v = 0;
        for (int i = 0; i < P; ++i) v += x[i];
        const real fl = (real)P;
        w[0] = v / fl;
        for (int j = 1; j < NC - P + 1; ++j) {
            v += x[j + P - 1] - x[j - 1];
            w[j] = v / fl;
        }
    }
    // pass 2: in place, w (NC - P + 1) -> w (N + 2)
    {
        const int n1 = NC - P + 1;
        real v = 0;
        for (int i = 0; i < P; ++i) v += w[i];
        const real fl = (real)P;
        real prev = w[0];
        w[0] = v / fl;
        for (int j = 1; j < n1 - P + 1; ++j) {
            v += w[j + P - 1] - prev;
            prev = w[j];
            w[j] = v / fl;
        }
    }
    // pass 3: w (N + 2) -> out (N)
    {
        // output in the layout of the low-pass LOESS (interleaved by TL series)
        global real* o = out + (long)(b >> ${TL.bit_length() - 1}) * N * ${TL} + (b & ${TL - 1});
        real v = w[0] + w[1] + w[2];
        o[0] = v / (real)3;
        for (int j = 1; j < N; ++j) {
            v += w[j + 2] - w[j - 1];
            o[(long)j * ${TL}] = v / (real)3;
        }
    }
}
