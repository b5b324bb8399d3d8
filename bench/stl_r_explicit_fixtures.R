# R's stl with a numeric s.window and some arguments given explicitly (the others R's
# defaults), the fixtures of tests/test_stl_r_explicit.py: clts.stl(r_defaults=True) must keep a
# given degree or jump, 1 included (R's s.degree = 1 is seasonal_deg=1), and take R's default
# for the rest. Writes one row per (case, time): the input x, R's seasonal / trend / remainder
# and the case's explicit arguments (NA: R's default).
# Usage: Rscript bench/stl_r_explicit_fixtures.R tests/data/stl_r_explicit.csv
args <- commandArgs(trailingOnly = TRUE)
set.seed(31)
cases <- list(
  list(name = "p7_sdeg1", period = 7, n = 85, s.window = 7, extra = list(s.degree = 1)),
  list(name = "p12_ldeg1_tdeg0", period = 12, n = 121, s.window = 13,
       extra = list(t.degree = 0, l.degree = 1)),
  list(name = "p5_jumps1", period = 5, n = 61, s.window = 9,
       extra = list(s.jump = 1, t.jump = 1, l.jump = 1)),
  list(name = "p4_sdeg1_tjump2", period = 4, n = 45, s.window = 11,
       extra = list(s.degree = 1, t.jump = 2))
)
arg <- function(ex, k) if (is.null(ex[[k]])) NA else ex[[k]]
rows <- list()
for (cs in cases) {
  t <- seq_len(cs$n)
  x <- 3 * sin(2 * pi * t / cs$period) + cos(4 * pi * t / cs$period) + 0.02 * t + rnorm(cs$n)
  fit <- do.call(stl, c(list(ts(x, frequency = cs$period), s.window = cs$s.window), cs$extra))
  ex <- cs$extra
  rows[[length(rows) + 1]] <- data.frame(
    case = cs$name, period = cs$period, s_window = cs$s.window,
    s_degree = arg(ex, "s.degree"), t_degree = arg(ex, "t.degree"),
    l_degree = arg(ex, "l.degree"), s_jump = arg(ex, "s.jump"), t_jump = arg(ex, "t.jump"),
    l_jump = arg(ex, "l.jump"), x = x,
    seasonal = as.numeric(fit$time.series[, "seasonal"]),
    trend = as.numeric(fit$time.series[, "trend"]),
    remainder = as.numeric(fit$time.series[, "remainder"]))
}
write.csv(do.call(rbind, rows), args[1], row.names = FALSE)
cat(R.version.string, "\n")
