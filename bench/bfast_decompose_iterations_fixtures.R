# R's bfast() per iteration (its `output` list: Tt, St, Nt = Yt - Tt - St, Vt.bp, Wt.bp, ci.Vt,
# ci.Wt of every iteration), the fixtures of tests/test_bfast_decompose_iterations.py: cases of
# bench/bfast_decompose_fixtures.R that run 2 to 10 iterations (harvest, the ndvi example with
# its gaps filled, synthetic series with breaks in trend and season). Writes
#   <series.csv>  case, iteration, y, Tt, St (13 digits) per time step
#   <cases.csv>   one row per (case, iteration): the settings (as bfast_decompose_fixtures.R),
#                 the iteration count, that iteration's trend / season breakpoints (1-based) and
#                 intervals ("lower upper" per break; confint(het.err = FALSE), level 0.95)
# Usage: Rscript bench/bfast_decompose_iterations_fixtures.R \
#            tests/data/bfast_decompose_iterations_series.csv \
#            tests/data/bfast_decompose_iterations_cases.csv
suppressMessages(library(bfast))
here <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE),
                                                       value = TRUE)[1])))
source(file.path(here, "bfast_decompose_fixtures_lib.R"))
args <- commandArgs(trailingOnly = TRUE)
ndvif <- ts(zoo::na.approx(as.numeric(ndvi)), start = start(ndvi), frequency = frequency(ndvi))
syn3 <- synth(3, n_years = 10, drop = 0.15, at = 0.3, amp2 = 0.5)
cases <- list(
  list("harvest_harmonic_i10", harvest, 0.15, "harmonic", 10, NULL),
  list("harvest_none_i10", harvest, 0.15, "none", 10, NULL),
  list("harvest_dummy_h05", harvest, 0.05, "dummy", 10, NULL),
  list("ndvi_dummy_i3", ndvif, 0.15, "dummy", 3, NULL),
  list("syn3_dummy_b1", syn3, 0.15, "dummy", 10, 1)
)
collapse <- function(x) if (length(x) == 0 || all(is.na(x)) || identical(unname(x), 0)) "" else
  paste(format(as.numeric(x), digits = 17), collapse = " ")
ci <- function(x) if (is.list(x)) paste(as.vector(t(x$confint[, c(1, 3), drop = FALSE])),
                                        collapse = " ") else ""
ser <- NULL
cs <- NULL
for (c in cases) {
  name <- c[[1]]; y <- c[[2]]; h <- c[[3]]; season <- c[[4]]; mi <- c[[5]]; br <- c[[6]]
  invisible(capture.output(f <- suppressWarnings(
    bfast(y, h = h, season = season, max.iter = mi, breaks = br))))
  for (i in seq_along(f$output)) {
    o <- f$output[[i]]
    St <- if (season == "none") rep(0, length(y)) else as.numeric(o$St)
    ser <- rbind(ser, data.frame(case = name, iteration = i, y = as.numeric(y),
                                 Tt = signif(as.numeric(o$Tt), 13), St = signif(St, 13)))
    cs <- rbind(cs, data.frame(
      case = name, freq = frequency(y), n = length(y), h = h, season = season, max_iter = mi,
      breaks = if (is.null(br)) NA else br, iterations = length(f$output), iteration = i,
      trend_bp = collapse(o$Vt.bp), season_bp = collapse(o$Wt.bp),
      trend_ci = ci(o$ci.Vt), season_ci = ci(o$ci.Wt)))
  }
}
write.csv(ser, args[1], row.names = FALSE)
write.csv(cs, args[2], row.names = FALSE)
