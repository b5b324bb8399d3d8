# R's bfastmonitor with a per-pixel covariate: R fits one pixel at a time, so a covariate per
# pixel is each pixel's own data frame (bfastpp of cbind(y, xreg) for that pixel's xreg).
# 8 synthetic series (23 a year, 2000..2009.96, gaps; pixel p's covariate its own random walk,
# with NA at some dates of pixels 1 and 5: bfastpp's na.omit drops those values), monitoring
# from 2008 with R's defaults (h 0.25, end 10, level 0.05) and the settings below.
# Writes
#   <dir>/bfast_preg_input.csv    time, y0..y7, x0..x7 (NA = missing)
#   <dir>/bfast_preg_output.csv   setting (type, history, formula, order), pixel, breaks
#                                 (monitoring date index, -1 none), history start (decimal
#                                 year), magnitude, statistic (max |process|), critval
# Usage: Rscript bench/bfast_pixel_regressors_fixtures.R tests/data
# (bfast 1.7.2 from the bfast2/bfast source with strucchange 1.5-3; its matrix methods need
# strucchangeRcpp, so the formula methods run, as options(bfast.prefer_matrix_methods = FALSE))
suppressMessages(library(bfast))
options(bfast.prefer_matrix_methods = FALSE)
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args)) args[1] else "tests/data"
set.seed(38)
N <- 230
tm <- 2000 + (0:(N - 1)) / 23
Y <- matrix(NA, N, 8)
XR <- matrix(NA, N, 8)
for (p in 1:8) {
  x <- cumsum(rnorm(N)) / 4 + p
  y <- 0.5 + 0.1 * sin(2 * pi * tm + p) + (0.1 + 0.05 * p) * x + 0.02 * rnorm(N) +
    0.003 * (tm - 2000)
  if (p %% 2 == 0) y[tm >= 2008 + p / 8] <- y[tm >= 2008 + p / 8] - 0.15
  y[sample(N, 8 * p)] <- NA
  if (p %in% c(2, 6)) x[c(5, 40, 100, 150, 190, 200)] <- NA
  Y[, p] <- y
  XR[, p] <- x
}
settings <- data.frame(
  type = c("OLS-MOSUM", "OLS-MOSUM", "OLS-MOSUM", "OLS-CUSUM", "RE", "ME"),
  history = c("all", "ROC", "BP", "all", "all", "all"),
  formula = c("response ~ trend + harmon + xreg", "response ~ harmon + xreg",
              "response ~ trend + harmon + xreg", "response ~ trend + harmon + xreg",
              "response ~ trend + harmon + xreg", "response ~ trend + harmon + xreg"),
  order = c(1, 3, 1, 1, 1, 1), stringsAsFactors = FALSE)
rows <- list()
for (s in seq_len(nrow(settings))) for (p in 1:8) {
  z <- ts(cbind(y = Y[, p], xreg = XR[, p]), frequency = 23, start = c(2000, 1))
  m <- suppressWarnings(bfastmonitor(z, start = 2008, formula = as.formula(settings$formula[s]),
                                     order = settings$order[s], type = settings$type[s],
                                     history = settings$history[s]))
  brk <- if (is.na(m$breakpoint)) -1 else
    which(abs(tm - m$breakpoint) < 1e-9)[1] - 1 - sum(tm < 2008)
  rows[[length(rows) + 1]] <- data.frame(setting = s - 1, type = settings$type[s],
    history = settings$history[s], formula = settings$formula[s], order = settings$order[s],
    pixel = p - 1, breaks = brk, history_start = m$history[1], magnitude = m$magnitude,
    statistic = max(abs(m$mefp$process)), critval = m$mefp$critval)
}
colnames(Y) <- paste0("y", 0:7)
colnames(XR) <- paste0("x", 0:7)
write.csv(data.frame(time = tm, Y, XR), file.path(dir, "bfast_preg_input.csv"), row.names = FALSE)
write.csv(do.call(rbind, rows), file.path(dir, "bfast_preg_output.csv"), row.names = FALSE)
cat(R.version.string, "bfast", as.character(packageVersion("bfast")), "strucchange",
    as.character(packageVersion("strucchange")), "\n")
