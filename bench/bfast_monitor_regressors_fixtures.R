# R's BFAST-Monitor with a covariate in the model (bfast::bfastmonitor(formula = response ~
# trend + harmon + xreg) on a two-column series), its steps written out with strucchange as
# bench/bfast_r_fixtures.R does (bfast 1.7.2's matrix path needs strucchangeRcpp's mefp.matrix,
# which Debian lacks): stable history "all", OLS-MOSUM monitoring with R's defaults (h 0.25,
# period 10, level 0.05). Synthetic series (23 a year, 2000..2009.96, gaps), seed fixed. Writes
#   <dir>/bfast_mreg_input.csv     time, xreg, y0..y7 (NA = missing)
#   <dir>/bfast_mreg_output.csv    setting, pixel, breaks (monitoring date index, -1 none),
#                                  magnitude, mean (of the MOSUM process), sigma, critval
# Usage: Rscript bench/bfast_monitor_regressors_fixtures.R tests/data
suppressMessages(library(bfast))
suppressMessages(library(strucchange))
dir <- commandArgs(trailingOnly = TRUE)[1]
set.seed(12)
N <- 230
tm <- 2000 + (0:(N - 1)) / 23
xreg <- cumsum(rnorm(N)) / 4
Y <- matrix(NA, N, 8)
for (p in 1:8) {
  y <- 0.5 + 0.1 * sin(2 * pi * tm + p) + 0.3 * xreg + 0.02 * rnorm(N) + 0.003 * (tm - 2000)
  if (p %% 2 == 0) y[tm >= 2008 + p / 8] <- y[tm >= 2008 + p / 8] - 0.15
  y[sample(N, 10 * p)] <- NA
  Y[, p] <- y
}
start <- 2008
forms <- c("response ~ harmon + xreg", "response ~ trend + harmon + xreg", "response ~ xreg")
orders <- c(3, 1, 1)
out <- NULL
for (s in seq_along(forms)) {
  formula <- as.formula(forms[s])
  for (p in 1:8) {
    z <- ts(cbind(y = Y[, p], xreg = xreg), frequency = 23, start = c(2000, 1))
    d <- bfastpp(z, order = orders[s])
    hist <- subset(d, time < start)
    K <- NCOL(model.matrix(formula, data = hist))
    m <- mefp(formula, data = hist, type = "OLS-MOSUM", period = 10, h = 0.25, alpha = 0.05)
    fit <- lm(formula, data = hist)
    mon <- monitor(m, data = d, verbose = FALSE)
    brk <- -1
    if (!is.na(mon$breakpoint)) {
      tb <- d$time[mon$breakpoint]
      brk <- which(abs(tm - tb) < 1e-9)[1] - 1 - sum(tm < start)
    }
    pred <- predict(fit, newdata = d)
    mm <- d$time >= start
    out <- rbind(out, data.frame(setting = s - 1, formula = forms[s], order = orders[s],
      pixel = p - 1, breaks = brk, magnitude = median(d$response[mm] - pred[mm]),
      mean = mean(mon$process), sigma = summary(fit)$sigma, critval = m$critval))
  }
}
colnames(Y) <- paste0("y", 0:7)
write.csv(data.frame(time = tm, xreg = xreg, Y), file.path(dir, "bfast_mreg_input.csv"),
          row.names = FALSE)
write.csv(out, file.path(dir, "bfast_mreg_output.csv"), row.names = FALSE)
