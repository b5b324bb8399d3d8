# R's stl(..., s.window = "periodic") on synthetic series (and R's co2 data set), the fixtures of
# tests/test_stl_periodic.py. Writes tests/data/stl_periodic_r.csv: one row per (case, time)
# with the input x, R's seasonal, trend and remainder and the case's settings.
# Usage: Rscript bench/stl_periodic_r_fixtures.R tests/data/stl_periodic_r.csv
args <- commandArgs(trailingOnly = TRUE)
set.seed(29)
cases <- list(
  # name, period, n, robust, extra arguments of stl (R defaults otherwise)
  list(name = "p12_n120", period = 12, n = 120, robust = FALSE, extra = list()),
  list(name = "p7_n100_robust", period = 7, n = 100, robust = TRUE, extra = list()),
  list(name = "p24_n500_sm", period = 24, n = 500, robust = FALSE,
       extra = list(s.jump = 1, t.jump = 1, l.jump = 1, inner = 5)),
  list(name = "p4_n41_twin", period = 4, n = 41, robust = FALSE,
       extra = list(t.window = 9, t.degree = 0))
)
rows <- list()
for (cs in cases) {
  t <- seq_len(cs$n)
  x <- 3 * sin(2 * pi * t / cs$period) + cos(4 * pi * t / cs$period) + 0.02 * t +
    rnorm(cs$n)
  if (cs$robust) x[sample(cs$n, 5)] <- x[sample(cs$n, 5)] + 15
  fit <- do.call(stl, c(list(ts(x, frequency = cs$period), s.window = "periodic",
                             robust = cs$robust), cs$extra))
  ex <- cs$extra
  rows[[length(rows) + 1]] <- data.frame(
    case = cs$name, period = cs$period, robust = cs$robust,
    t_window = if (is.null(ex$t.window)) NA else ex$t.window,
    t_degree = if (is.null(ex$t.degree)) NA else ex$t.degree,
    statsmodels_jumps = !is.null(ex$s.jump), x = x,
    seasonal = as.numeric(fit$time.series[, "seasonal"]),
    trend = as.numeric(fit$time.series[, "trend"]),
    remainder = as.numeric(fit$time.series[, "remainder"]))
}
fit <- stl(co2, s.window = "periodic")
rows[[length(rows) + 1]] <- data.frame(
  case = "co2", period = 12, robust = FALSE, t_window = NA, t_degree = NA,
  statsmodels_jumps = FALSE, x = as.numeric(co2),
  seasonal = as.numeric(fit$time.series[, "seasonal"]),
  trend = as.numeric(fit$time.series[, "trend"]),
  remainder = as.numeric(fit$time.series[, "remainder"]))
out <- do.call(rbind, rows)
write.csv(out, args[1], row.names = FALSE)
