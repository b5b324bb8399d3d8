# The loop both bfast() fixture scripts share (bench/bfast_decompose_fixtures.R and
# bench/bfast_decompose_gap_fixtures.R): R's bfast on each case, its final iteration's Tt / St
# per time step and its breaks, iterations, Magnitude, Time, Mags and the break-date intervals
# (ci.Vt, ci.Wt: confint(het.err = FALSE), level 0.95; "lower upper" per break, NA where R
# cannot compute one) per case.
# cases: list of list(name, ts, h, season, max.iter, breaks); decomp: bfast's decomp;
# initial: NULL or a function of the series giving the initial season written as St0.
# type: bfast's type (strucchange's efp process); pvalues: also the last iteration's p-values of
# the trend and season tests (sctest(efp(...)) on its Vt and Wt, as bfast computes them) as
# p_trend / p_season (NA: not tested).
# A synthetic NDVI-like series (seed; years of f values from 2001): season of amplitude 0.2, then
# amp2 * 0.2 from 35 % of the series on, a slow trend, a level change `drop` at `at`, noise.
synth <- function(seed, n_years = 12, f = 23, drop = -0.25, at = 0.55, amp2 = 0.6) {
  set.seed(seed)
  n <- n_years * f
  tt <- seq_len(n)
  amp <- ifelse(tt > round(0.35 * n), amp2 * 0.2, 0.2)
  y <- 0.55 + amp * sin(2 * pi * tt / f) + 0.0004 * tt + ifelse(tt > round(at * n), drop, 0) +
    rnorm(n, sd = 0.03)
  ts(y, start = c(2001, 1), frequency = f)
}

bfast_fixture_rows <- function(cases, decomp = "stl", initial = NULL, type = "OLS-MOSUM",
                               pvalues = FALSE) {
  collapse <- function(x) if (length(x) == 0 || all(is.na(x)) || identical(unname(x), 0)) "" else
    paste(format(as.numeric(x), digits = 17), collapse = " ")
  ser <- NULL
  cs <- NULL
  for (c in cases) {
    name <- c[[1]]; y <- c[[2]]; h <- c[[3]]; season <- c[[4]]; mi <- c[[5]]; br <- c[[6]]
    invisible(capture.output(f <- suppressWarnings(
      bfast(y, h = h, season = season, max.iter = mi, breaks = br, decomp = decomp,
            type = type))))
    o <- f$output[[length(f$output)]]
    St <- if (season == "none") rep(0, length(y)) else as.numeric(o$St)
    rows <- data.frame(case = name, y = as.numeric(y))
    if (!is.null(initial)) rows$St0 <- signif(initial(y), 13)
    rows$Tt <- signif(as.numeric(o$Tt), 13)
    rows$St <- signif(St, 13)
    ser <- rbind(ser, rows)
    mags <- if (is.matrix(f$Mags)) f$Mags[, 3] else numeric(0)
    ci <- function(x) if (is.list(x)) paste(as.vector(t(x$confint[, c(1, 3), drop = FALSE])),
                                            collapse = " ") else ""
    row <- data.frame(
      case = name, freq = frequency(y), start = tsp(y)[1], n = length(y), h = h,
      season = season, max_iter = mi, breaks = if (is.null(br)) NA else br,
      iterations = length(f$output), trend_bp = collapse(o$Vt.bp), season_bp = collapse(o$Wt.bp),
      magnitude = f$Magnitude, time = if (is.na(f$Time)) NA else f$Time,
      mags = collapse(mags), nobp_trend = f$nobp$Vt, nobp_season = f$nobp$Wt,
      trend_ci = ci(o$ci.Vt), season_ci = ci(o$ci.Wt))
    if (pvalues) {
      ps <- last_pvalues(y, o, h, season, type)
      row$p_trend <- ps[1]
      row$p_season <- ps[2]
    }
    cs <- rbind(cs, row)
  }
  list(series = ser, cases = cs)
}


# The p-values of bfast's two tests in its last iteration o (bfast does not return them): the
# same efp calls as bfast's, on the Vt and Wt it kept.
last_pvalues <- function(y, o, h, season, type) {
  ti <- time(y)
  Vt <- o$Vt
  pT <- sctest(efp(Vt ~ ti, h = h, type = type))$p.value
  if (season == "none") return(c(pT, NA))
  Wt <- o$Wt
  if (season == "harmonic") {
    tl <- 1:length(y); w <- 1 / frequency(y)
    co <- cos(2 * pi * tl * w); si <- sin(2 * pi * tl * w)
    co2 <- cos(2 * pi * tl * w * 2); si2 <- sin(2 * pi * tl * w * 2)
    co3 <- cos(2 * pi * tl * w * 3); si3 <- sin(2 * pi * tl * w * 3)
    pS <- sctest(efp(Wt ~ co + si + co2 + si2 + co3 + si3, h = h, type = type))$p.value
  } else {
    D <- forecast::seasonaldummy(y)
    D[rowSums(D) == 0, ] <- -1
    pS <- sctest(efp(Wt ~ -1 + D, h = h, type = type))$p.value
  }
  c(pT, pS)
}
