## 64-bit atomics shared by the kernels (cl_khr_int64_base_atomics; the including template
## enables the extension and includes this only where the device reports it).
## key_min(p, key): *p = min(*p, key) for a ulong, by a compare-and-swap loop. PRECHECK: a
## plain read first (a benign race that the loop corrects) skips the atomic for nearly every
## candidate that does not win; else a race-free read (for Oclgrind's race checker).
inline void key_min(volatile __global ulong *p, ulong key)
{
%   if PRECHECK:
    // a plain read first (a benign race: the compare-and-swap loop below corrects it) skips
    // the atomic for nearly every candidate, as in GPU-STOMP_OPT
    ulong cur = *p;
%   else:
    ulong cur = atom_cmpxchg(p, 0UL, 0UL);     // race-free read (for Oclgrind's checker)
%   endif
    while (key < cur) {
        const ulong old = atom_cmpxchg(p, cur, key);
        if (old == cur) break;
        cur = old;
    }
}
