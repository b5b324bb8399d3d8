"""Per-window flags of a matrix-profile series: set by the host and the statistics kernel, read
by the host and the exact-distance kernels (the templates get them as Mako variables)."""

#: the window holds NaN / inf: P = inf, I = -1, never a neighbour
NONFINITE = 1
#: the window is constant (z-normalised: distance 0 to another constant window, sqrt(m) else)
CONSTANT = 2
#: the window's centred norm is too small for the O(1) update to resolve: exact O(n m) path
ILL = 4
#: windows that take the exact path
SPECIAL = CONSTANT | ILL

#: template variables for stats.cl.mako and exact.cl.mako
TEMPLATE = {"FLAG_NONFINITE": NONFINITE, "FLAG_CONSTANT": CONSTANT, "FLAG_ILL": ILL,
            "FLAG_SPECIAL": SPECIAL}
