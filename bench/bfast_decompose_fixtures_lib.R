# The loop both bfast() fixture scripts share (bench/bfast_decompose_fixtures.R and
# bench/bfast_decompose_gap_fixtures.R): R's bfast on each case, its final iteration's Tt / St
# per time step and its breaks, iterations, Magnitude, Time, Mags and the break-date intervals
# (ci.Vt, ci.Wt: confint(het.err = FALSE), level 0.95; "lower upper" per break, NA where R
# cannot compute one) per case.
# cases: list of list(name, ts, h, season, max.iter, breaks); decomp: bfast's decomp;
# initial: NULL or a function of the series giving the initial season written as St0.
bfast_fixture_rows <- function(cases, decomp = "stl", initial = NULL) {
  collapse <- function(x) if (length(x) == 0 || all(is.na(x)) || identical(unname(x), 0)) "" else
    paste(format(as.numeric(x), digits = 17), collapse = " ")
  ser <- NULL
  cs <- NULL
  for (c in cases) {
    name <- c[[1]]; y <- c[[2]]; h <- c[[3]]; season <- c[[4]]; mi <- c[[5]]; br <- c[[6]]
    invisible(capture.output(f <- suppressWarnings(
      bfast(y, h = h, season = season, max.iter = mi, breaks = br, decomp = decomp))))
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
    cs <- rbind(cs, data.frame(
      case = name, freq = frequency(y), start = tsp(y)[1], n = length(y), h = h,
      season = season, max_iter = mi, breaks = if (is.null(br)) NA else br,
      iterations = length(f$output), trend_bp = collapse(o$Vt.bp), season_bp = collapse(o$Wt.bp),
      magnitude = f$Magnitude, time = if (is.na(f$Time)) NA else f$Time,
      mags = collapse(mags), nobp_trend = f$nobp$Vt, nobp_season = f$nobp$Wt,
      trend_ci = ci(o$ci.Vt), season_ci = ci(o$ci.Wt)))
  }
  list(series = ser, cases = cs)
}

