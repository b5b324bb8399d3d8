"""The host pieces of ``clts.bfast_decompose`` (R's ``bfast()``), vectorised over pixels:
the season designs, strucchange's OLS-MOSUM and OLS-CUSUM tests (``sctest(efp(..., type))``),
least-squares fits with segment-specific coefficients (R's ``lm(y ~ breakfactor(bp) / x)`` and
``x %in% breakfactor(bp)``), the breakpoints step on the device and the break magnitudes.

Every array is time-major, ``[N, M]`` (N dates, M pixels), float64, NaN = missing; a pixel's
missing values are dropped as R's ``na.omit`` / ``na.exclude`` drop them. Internal interface of
``clts.bfast.decompose``.
"""
from __future__ import annotations

import numpy as np

from .breakpoints import criteria, rss_floor, run_breakpoints, select

SEASONS = ("dummy", "harmonic", "none")

#: strucchange's table ``sc.me``: critical values of the maximum of a k-dimensional Brownian
#: bridge increments process (Chu, Hornik and Kuan 1995), rows k = 1..6 by h = 0.05..0.5 (ten
#: rows each), columns the levels of ``MOSUM_P``
SC_ME = np.array([
    [0.7552, 0.8017, 0.8444, 0.8977],
    [0.9809, 1.0483, 1.1119, 1.1888],
    [1.1211, 1.2059, 1.2845, 1.3767],
    [1.2170, 1.3158, 1.4053, 1.5131],
    [1.2811, 1.3920, 1.4917, 1.6118],
    [1.3258, 1.4448, 1.5548, 1.6863],
    [1.3514, 1.4789, 1.5946, 1.7339],
    [1.3628, 1.4956, 1.6152, 1.7572],
    [1.3610, 1.4976, 1.6210, 1.7676],
    [1.3751, 1.5115, 1.6341, 1.7808],
    [0.7997, 0.8431, 0.8838, 0.9351],
    [1.0448, 1.1067, 1.1654, 1.2388],
    [1.2030, 1.2805, 1.3509, 1.4362],
    [1.3112, 1.4042, 1.4881, 1.5876],
    [1.3870, 1.4865, 1.5779, 1.6930],
    [1.4422, 1.5538, 1.6530, 1.7724],
    [1.4707, 1.5900, 1.6953, 1.8223],
    [1.4892, 1.6105, 1.7206, 1.8559],
    [1.4902, 1.6156, 1.7297, 1.8668],
    [1.5067, 1.6319, 1.7455, 1.8827],
    [0.8250, 0.8668, 0.9040, 0.9519],
    [1.0802, 1.1419, 1.1986, 1.2700],
    [1.2491, 1.3259, 1.3951, 1.4820],
    [1.3647, 1.4516, 1.5326, 1.6302],
    [1.4449, 1.5421, 1.6322, 1.7470],
    [1.5045, 1.6089, 1.7008, 1.8143],
    [1.5353, 1.6560, 1.7510, 1.8756],
    [1.5588, 1.6751, 1.7809, 1.9105],
    [1.5630, 1.6828, 1.7901, 1.9190],
    [1.5785, 1.6981, 1.8071, 1.9395],
    [0.8414, 0.8828, 0.9205, 0.9681],
    [1.1066, 1.1663, 1.2217, 1.2918],
    [1.2792, 1.3533, 1.4212, 1.5013],
    [1.3973, 1.4506, 1.5593, 1.6536],
    [1.4852, 1.5791, 1.6690, 1.7741],
    [1.5429, 1.6465, 1.7420, 1.8573],
    [1.5852, 1.6927, 1.7941, 1.9140],
    [1.6057, 1.7195, 1.8212, 1.9450],
    [1.6089, 1.7245, 1.8269, 1.9592],
    [1.6275, 1.7435, 1.8495, 1.9787],
    [0.8541, 0.8948, 0.9321, 0.9799],
    [1.1247, 1.1846, 1.2395, 1.3088],
    [1.3040, 1.3765, 1.4440, 1.5252],
    [1.4250, 1.5069, 1.5855, 1.6791],
    [1.5154, 1.6077, 1.6921, 1.7967],
    [1.5738, 1.6770, 1.7687, 1.8837],
    [1.6182, 1.7217, 1.8176, 1.9377],
    [1.6460, 1.7540, 1.8553, 1.9788],
    [1.6462, 1.7574, 1.8615, 1.9897],
    [1.6644, 1.7777, 1.8816, 2.0085],
    [0.8653, 0.9048, 0.9414, 0.9880],
    [1.1415, 1.1997, 1.2530, 1.6220],
    [1.3223, 1.3938, 1.4596, 1.5392],
    [1.4483, 1.5305, 1.6100, 1.7014],
    [1.5392, 1.6317, 1.7139, 1.8154],
    [1.6025, 1.7018, 1.7930, 1.9061],
    [1.6462, 1.7499, 1.8439, 1.9605],
    [1.6697, 1.7769, 1.8763, 1.9986],
    [1.6802, 1.7889, 1.8932, 2.0163],
    [1.6939, 1.8052, 1.9074, 2.0326]])


#: the OLS-MOSUM test's (one process): h = 0.05, 0.10, ..., 0.50 and the levels of ``MOSUM_P``
MOSUM_H = np.arange(1, 11) * 0.05
MOSUM_P = np.array([0.1, 0.05, 0.025, 0.01])
MOSUM_CRIT = SC_ME[:10]


def trend_design(N: int) -> np.ndarray:
    """[N, 2]: the intercept and the time, centred and scaled to [-1, 1] (R's ``Vt ~ ti`` with
    ``ti`` the regular time of the series: the same column space, so the same fits)."""
    u = np.arange(N, dtype=np.float64)
    c = 0.5 * (N - 1)
    return np.stack([np.ones(N), (u - c) / max(c, 1.0)], axis=1)


def season_design(N: int, freq: int, season: str, phase: int = 0) -> np.ndarray:
    """The regressors of R's seasonal model for N dates of ``freq`` a season.

    ``"harmonic"``: [N, 7] = 1, cos(2 pi j t / freq), sin(2 pi j t / freq), j = 1..3, t = 1..N
    (R's ``Wt ~ co + si + co2 + si2 + co3 + si3``). ``"dummy"``: [N, freq - 1] = forecast's
    ``seasonaldummy`` with the rows of the last season set to -1 (R's ``Wt ~ -1 + D``: a
    pattern summing to zero over the season; the column space does not depend on where the
    series starts in the season, so neither do the fits; ``phase``: the season index of the
    first date, R's ``cycle(Yt)[1] - 1``, which R's RE and ME tests depend on). ``"none"``:
    [N, 0]."""
    if season == "none":
        return np.zeros((N, 0))
    t = np.arange(1, N + 1, dtype=np.float64)
    if season == "harmonic":
        w = 2.0 * np.pi * t / float(freq)
        cols = [np.ones(N)]
        for j in (1, 2, 3):
            cols += [np.cos(j * w), np.sin(j * w)]
        return np.stack(cols, axis=1)
    pos = (np.arange(N) + int(phase)) % int(freq)
    D = (pos[:, None] == np.arange(int(freq) - 1)[None, :]).astype(np.float64)
    D[pos == int(freq) - 1, :] = -1.0
    return D


def mosum_pvalue(stat, h: float):
    """strucchange's ``pvalue.efp`` of the OLS-MOSUM max statistic (Brownian bridge increments,
    one process): the critical values interpolated linearly in h (clamped to 0.05..0.5), then
    the p-value linearly between them, 1 at 0 and 0.01 beyond the last (R's ``approx``,
    ``rule = 2``)."""
    crit = [float(np.interp(h, MOSUM_H, MOSUM_CRIT[:, j])) for j in range(MOSUM_P.size)]
    return np.interp(stat, [0.0] + crit, np.concatenate([[1.0], MOSUM_P]))


def _residual_sums(e, K: int, scale, exact_tol: float):
    """The pieces strucchange's OLS-based processes share, from the OLS residuals ``e`` [N, M]
    (NaN = missing) of a model with K regressors: (cs [N + 1, M] the cumulative sums of each
    pixel's valid residuals in time order, 0 first (R's ``cumsum(c(0, e))`` on ``na.omit``),
    n [M] the valid counts, sigma [M] = sd(e) sqrt((n - 1) / (n - K)) (R's ``sdev(e, df)``),
    exact [M] bool where sigma is at most ``exact_tol`` times ``scale`` [M])."""
    N, M = e.shape
    valid = ~np.isnan(e)
    n = valid.sum(axis=0)
    e0 = np.where(valid, e, 0.0)
    if not valid.all():         # the valid residuals first, in time order (R's na.omit)
        order = np.argsort(~valid, axis=0, kind="stable")
        e0 = np.take_along_axis(e0, order, axis=0)
    cs = np.zeros((N + 1, M))
    np.cumsum(e0, axis=0, out=cs[1:])
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = cs[-1] / n
        ss = np.sum(np.where(valid, (e - mean[None, :]) ** 2, 0.0), axis=0)
        sigma = np.sqrt(ss / (n - K))
    exact = ~(sigma > exact_tol * np.asarray(scale))
    return cs, n, sigma, exact


def mosum_test(e, X, h: float, scale, exact_tol: float):
    """The OLS-MOSUM test of every pixel from its OLS residuals ``e`` [N, M] (NaN = missing) of
    a model on ``X`` [N, K] (only K is used), as ``sctest(efp(y ~ X, h = h, type = "OLS-MOSUM"))``: the
    process sum_{window of floor(n h) consecutive valid residuals} e / (sigma sqrt(n)),
    sigma = sd(e) sqrt((n - 1) / (n - K)); the statistic its largest absolute value.

    Returns (p-value [M], statistic [M], exact [M] bool): ``exact`` where sigma is at most
    ``exact_tol`` times ``scale`` [M] (the model fits to rounding: R's test divides rounding
    noise by rounding noise; here the pixel is not tested, p = 1)."""
    N = e.shape[0]
    cs, n, sigma, exact = _residual_sums(e, X.shape[1], scale, exact_tol)
    nh = np.floor(n * float(h)).astype(np.int64)
    j = np.arange(N + 1)[:, None]
    hi = j + nh[None, :]
    inside = hi <= n[None, :]
    proc = np.take_along_axis(cs, np.minimum(hi, N), axis=0) - cs
    peak = np.max(np.where(inside, np.abs(proc), 0.0), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = peak / (sigma * np.sqrt(n))
    stat = np.where(exact, 0.0, stat)
    return mosum_pvalue(stat, h), stat, exact


def bridge_sup_pvalue(stat, k: int = 1):
    """strucchange's ``pvalue.efp`` of the max functional of a k-dimensional Brownian bridge
    (the Kolmogorov distribution): 1 - (1 + 2 sum_{i=1}^{100} (-1)^i exp(-2 i^2 x^2))^k, and
    1 below x = 0.1 (as R)."""
    x = np.asarray(stat, np.float64)
    i = np.arange(1, 101, dtype=np.float64).reshape((100,) + (1,) * x.ndim)
    s = np.sum((-1.0) ** i * np.exp(-2.0 * i ** 2 * x[None] ** 2), axis=0)
    return np.where(x < 0.1, 1.0, 1.0 - (1.0 + 2.0 * s) ** k)


def cusum_test(e, X, h: float, scale, exact_tol: float):
    """The OLS-CUSUM test of every pixel, as ``sctest(efp(y ~ X, type = "OLS-CUSUM"))``: the
    process cumsum(e) / (sigma sqrt(n)) over the valid residuals (sigma as
    :func:`mosum_test`), the statistic its largest absolute value, the p-value the Brownian
    bridge's (:func:`bridge_sup_pvalue`). ``h`` is not used (R's neither). Returns as
    :func:`mosum_test`."""
    cs, n, sigma, exact = _residual_sums(e, X.shape[1], scale, exact_tol)
    inside = np.arange(cs.shape[0])[:, None] <= n[None, :]
    peak = np.max(np.where(inside, np.abs(cs), 0.0), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = peak / (sigma * np.sqrt(n))
    stat = np.where(exact, 0.0, stat)
    return bridge_sup_pvalue(stat), stat, exact


def _isqrt(G):
    """The inverse of the symmetric root of each positive definite [.., K, K] matrix (eigh)."""
    w, V = np.linalg.eigh(G)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (V / np.sqrt(w)[..., None, :]) @ np.swapaxes(V, -1, -2)


def _estimates_stat(e, X, h, scale, exact_tol, moving):
    """The max statistic of strucchange's RE (``moving`` False) or ME process of every pixel.

    RE at the i-th valid value, i = K..n-1: sqrt(i / n) / sigma root(G_i) (b_i - b), G_i the
    Gram matrix and b_i the OLS coefficients of the first i valid values (R's ``rescale =
    TRUE``); ME over every window of h' = floor(n h) consecutive valid values: sqrt(h' / n) /
    sigma root(G_w) (b_w - b). As root(G) (b_i - b) = root(G)^-1 sum x_t e_t over the
    subsample (e the full fit's residuals), no subsample is refitted. Pixels in blocks (the
    Gram matrices of every date of a block at once). Returns (stat [M], exact [M])."""
    N, M = e.shape
    K = X.shape[1]
    cs, n, sigma, exact = _residual_sums(e, K, scale, exact_tol)
    valid = ~np.isnan(e)
    order = np.argsort(~valid, axis=0, kind="stable")     # each pixel's valid dates first
    stat = np.zeros(M)
    step = max(1, int(8e6 // max(1, N * K * K)))
    for a in range(0, M, step):
        b = slice(a, min(M, a + step))
        o = order[:, b]
        v = np.take_along_axis(valid[:, b], o, axis=0)
        Xc = np.where(v[..., None], X[o], 0.0)                         # [N, m, K]
        ec = np.where(v, np.take_along_axis(np.where(valid[:, b], e[:, b], 0.0), o, 0), 0.0)
        Gc = np.zeros((N + 1,) + Xc.shape[1:] + (K,))
        np.cumsum(Xc[..., :, None] * Xc[..., None, :], axis=0, out=Gc[1:])
        Sc = np.zeros((N + 1,) + Xc.shape[1:])
        np.cumsum(Xc * ec[..., None], axis=0, out=Sc[1:])
        nb = n[b]
        j = np.arange(N + 1)[:, None]
        if moving:
            w = np.floor(nb * float(h)).astype(np.int64)
            hi = np.minimum(j + w[None, :], N)
            G = np.take_along_axis(Gc, hi[..., None, None], 0) - Gc
            S = np.take_along_axis(Sc, hi[..., None], 0) - Sc
            inside = (j + w[None, :]) <= nb[None, :]
            f = np.broadcast_to(np.sqrt(w / nb), inside.shape)
        else:
            G, S = Gc, Sc
            inside = (j >= K) & (j <= nb[None, :] - 1)
            with np.errstate(divide="ignore", invalid="ignore"):
                f = np.sqrt(j / nb[None, :])
        G = np.where(inside[..., None, None], G, np.eye(K))
        P = (_isqrt(G) @ S[..., None])[..., 0]
        peak = np.max(np.where(inside[..., None], np.abs(P), 0.0) * f[..., None], axis=(0, 2))
        with np.errstate(divide="ignore", invalid="ignore"):
            stat[b] = peak / sigma[b]
    return np.where(exact, 0.0, stat), exact


def re_test(e, X, h: float, scale, exact_tol: float):
    """strucchange's RE test (recursive estimates, ``sctest(efp(y ~ X, type = "RE"))``) of
    every pixel from its OLS residuals ``e`` [N, M] on R's design ``X`` [N, K] (the statistic
    depends on the parametrisation, not only on the column space): the p-value the
    K-dimensional Brownian bridge's (:func:`bridge_sup_pvalue`). Returns as :func:`mosum_test`."""
    stat, exact = _estimates_stat(e, X, h, scale, exact_tol, moving=False)
    return bridge_sup_pvalue(stat, X.shape[1]), stat, exact


def me_pvalue(stat, h: float, k: int):
    """strucchange's ``pvalue.efp`` of the ME max statistic: ``SC_ME``'s rows for min(k, 6)
    processes, interpolated linearly in h (clamped) and then in the statistic (1 at 0, 0.01 at
    the least)."""
    tab = SC_ME[(min(k, 6) - 1) * 10:min(k, 6) * 10]
    crit = [float(np.interp(h, MOSUM_H, tab[:, j])) for j in range(MOSUM_P.size)]
    return np.interp(stat, [0.0] + crit, np.concatenate([[1.0], MOSUM_P]))


def me_test(e, X, h: float, scale, exact_tol: float):
    """strucchange's ME test (moving estimates over windows of floor(n h) valid values,
    ``sctest(efp(y ~ X, h = h, type = "ME"))``) of every pixel, as :func:`re_test`; p-value
    :func:`me_pvalue`."""
    stat, exact = _estimates_stat(e, X, h, scale, exact_tol, moving=True)
    return me_pvalue(stat, h, X.shape[1]), stat, exact


#: strucchange's fluctuation tests (``sctest(efp(..., type = ...))``) of clts.bfast_decompose
EFP_TESTS = {"OLS-MOSUM": mosum_test, "OLS-CUSUM": cusum_test, "RE": re_test, "ME": me_test}


def segment_ids(bp, N: int) -> np.ndarray:
    """[N, M] int: the segment (0, 1, ...) of every date given the breakpoints ``bp``
    [B, M] (date index of the last value of each segment, -1 padded)."""
    t = np.arange(N)[:, None]
    seg = np.zeros((N, bp.shape[1]), np.int64)
    for row in bp:
        seg += (row[None, :] >= 0) & (t > row[None, :])
    return seg


def _solve(G, b):
    """Batched symmetric solves G x = b, [P, D, D] and [P, D]; a block holding a singular
    system (a design rank-deficient on a pixel's valid dates in a segment) by the batched
    pseudo-inverse: the least-squares fit R's pivoting ``lm`` gives (its fitted values)."""
    try:
        return np.linalg.solve(G, b[..., None])[..., 0]
    except np.linalg.LinAlgError:
        return (np.linalg.pinv(G, rcond=1e-12, hermitian=True) @ b[..., None])[..., 0]


def segment_fit(X, y, seg, S: int, shared=(), block: int = 2048):
    """Least-squares fits of ``y`` [N, M] (NaN = missing) on ``X`` [N, K], the columns
    ``shared`` common to all segments and every other column's coefficient per segment
    (``seg`` [N, M]: the segment 0..S-1 of each date). R's ``lm(y ~ breakfactor / x)``
    (nothing shared), ``lm(y ~ x %in% breakfactor)`` (the intercept shared), ``lm(y ~ x)``
    (S = 1). Masked normal equations, float64, ``block`` pixels at a time.

    Returns (fitted [N, M], NaN at missing dates; coef [M, S, K]: each segment's coefficients,
    the shared ones repeated)."""
    N, M = y.shape
    K = X.shape[1]
    sh = [j for j in range(K) if j in shared]
    per = [j for j in range(K) if j not in shared]
    Ks, Kp = len(sh), len(per)
    P = (X[:, :, None] * X[:, None, :]).reshape(N, K * K)
    fitted = np.full((N, M), np.nan)
    coef = np.zeros((M, S, K))
    for a in range(0, M, block):
        b_ = min(M, a + block)
        yb = y[:, a:b_]
        valid = ~np.isnan(yb)
        complete = bool(valid.all())
        y0 = yb if complete else np.where(valid, yb, 0.0)
        m = b_ - a
        if S == 1:      # one fit a pixel: no segment masks
            vf = valid.astype(np.float64)
            G = (vf.T @ P).reshape(m, K, K)
            coef[a:b_, 0] = _solve(G, y0.T @ X)
            fb = X @ coef[a:b_, 0].T
            fitted[:, a:b_] = fb if complete else np.where(valid, fb, np.nan)
            continue
        sb = seg[:, a:b_]
        D = Ks + Kp * S
        G = np.zeros((m, D, D))
        r = np.zeros((m, D))
        masks = []
        for s in range(S):
            w = (valid & (sb == s)).astype(np.float64)
            masks.append(w)
            Gs = (w.T @ P).reshape(m, K, K)
            bs = (y0 * w).T @ X
            o = Ks + s * Kp
            G[:, :Ks, :Ks] += Gs[:, sh][:, :, sh]
            G[:, :Ks, o:o + Kp] = Gs[:, sh][:, :, per]
            G[:, o:o + Kp, :Ks] = Gs[:, per][:, :, sh]
            G[:, o:o + Kp, o:o + Kp] = Gs[:, per][:, :, per]
            r[:, :Ks] += bs[:, sh]
            r[:, o:o + Kp] = bs[:, per]
            empty = w.sum(axis=0) == 0          # a segment the pixel does not have
            if empty.any():
                G[empty, o:o + Kp, o:o + Kp] += np.eye(Kp)
        if Ks == 0:     # block diagonal: one K x K system per segment
            beta = np.concatenate([_solve(G[:, s * Kp:(s + 1) * Kp, s * Kp:(s + 1) * Kp],
                                          r[:, s * Kp:(s + 1) * Kp]) for s in range(S)], axis=1)
        else:
            beta = _solve(G, r)
        for s in range(S):
            coef[a:b_, s, sh] = beta[:, :Ks]
            coef[a:b_, s, per] = beta[:, Ks + s * Kp:Ks + (s + 1) * Kp]
        fb = np.zeros((N, m))
        for s in range(S):
            fb += masks[s] * (X @ coef[a:b_, s].T)
        fitted[:, a:b_] = np.where(valid, fb, np.nan)
    return fitted, coef


def find_breaks(dev, plan, z, X, h, breaks, dtype, progress=False):
    """Bai-Perron breakpoints of ``z`` [N, m] (NaN = missing) on ``X`` on the device, with R's
    choices: the reported breaks (``breaks``: None / "BIC" the BIC's number, "LWZ" the LWZ's,
    an integer that many, at most each pixel's cap) and the segmentation R fits the component
    with (``breakfactor(bp)``: always the BIC's). Returns a dict of n_rep [m], bp_rep
    [B, m], n_fit [m], bp_fit [B, m] (date indices of the last value of each segment, -1
    padded), status [m] (``BP_STATUS``) and B."""
    N, m = z.shape
    K = X.shape[1]
    want = N if breaks is None or isinstance(breaks, str) else int(breaks)
    zz = np.ascontiguousarray(z, dtype=dtype)
    out = run_breakpoints(dev, plan, zz, X, h, want, np.dtype(dtype), progress=progress)
    bic, lwz = criteria(out, K, rss_floor(zz, np.dtype(dtype)))
    n_fit, bp_fit = select(out, bic)
    if breaks is None or breaks == "BIC":
        n_rep, bp_rep = n_fit, bp_fit
    elif breaks == "LWZ":
        n_rep, bp_rep = select(out, lwz)
    else:
        B = bp_fit.shape[0]
        n_rep = np.minimum(int(breaks), out["bmax"]).astype(np.int32)
        n_rep[out["status"] != 0] = -1
        bp_rep = np.full((B, m), -1, np.int32)
        for mm in range(1, B + 1):
            row = mm * (mm - 1) // 2
            hit = n_rep == mm
            bp_rep[:mm, hit] = out["bp"][row:row + mm][:, hit]
    return dict(n_rep=n_rep, bp_rep=bp_rep, n_fit=n_fit, bp_fit=bp_fit, status=out["status"],
                B=bp_fit.shape[0])


def magnitudes(X, coef, n_fit, bp_rep, n_rep, valid):
    """R's ``Mags``, ``Magnitude`` and ``Time`` of the trend breaks: for break r of the fitted
    segmentation (r < n_fit), the line of segment r + 1 at the first valid date after the
    reported breakpoint r minus the line of segment r at that breakpoint (NaN where there is no
    reported breakpoint r, as R's NA). The largest in absolute value (the first of ties) is the
    magnitude, its reported breakpoint the time; no reported break: magnitude 0, time -1.

    ``X`` [N, 2] the trend design, ``coef`` [M, S, 2] the fitted lines, ``bp_rep`` [B, M],
    ``valid`` [N, M]. Returns (mags [B, M], magnitude [M], time [M])."""
    N = X.shape[0]
    B, M = bp_rep.shape
    mags = np.full((B, M), np.nan)
    cols = np.arange(M)
    S = coef.shape[1]
    for r in range(min(B, S - 1)):
        pos = bp_rep[r]
        live = (r < n_fit) & (r < n_rep) & (pos >= 0)
        p = np.clip(pos, 0, N - 1)
        after = valid & (np.arange(N)[:, None] > p[None, :])
        nxt = np.argmax(after, axis=0)
        live &= after.any(axis=0)
        y1 = np.einsum("mk,mk->m", X[p], coef[cols, r])
        y2 = np.einsum("mk,mk->m", X[nxt], coef[cols, r + 1])
        mags[r] = np.where(live, y2 - y1, np.nan)
    absm = np.where(np.isnan(mags), -np.inf, np.abs(mags))
    idx = np.argmax(absm, axis=0)
    has = np.isfinite(absm[idx, cols])
    magnitude = np.where(has, mags[idx, cols], np.nan)
    time = np.where(has, bp_rep[idx, cols], -1).astype(np.int32)
    none = n_rep <= 0
    magnitude[none] = 0.0
    time[none] = -1
    return mags, magnitude, time
