## Order-preserving integer keys of reals, for radix selects (BFAST's time-major median, Sen's
## ranks of the interleaved Mann-Kendall kernel). Variables: real.
<%
    KT, AS, RAS, NB = (("ulong", "as_ulong", "as_double", 64) if real == "double"
                       else ("uint", "as_uint", "as_float", 32))
%>\
typedef ${KT} rkey_t;
#define RKEY_TOP ((rkey_t)1 << ${NB - 1})
inline rkey_t real_key(const real x)    // x < y <=> real_key(x) < real_key(y), -0 before +0
{
    const rkey_t u = ${AS}(x);
    return (u & RKEY_TOP) ? ~u : (u | RKEY_TOP);
}

inline real key_real(const rkey_t k)
{
    return ${RAS}((k & RKEY_TOP) ? (k & ~RKEY_TOP) : ~k);
}
