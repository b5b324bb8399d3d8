# R's Bai-Perron breakpoints (strucchange::breakpoints) with model formulas beyond
# trend + harmon, on bfast::bfastpp's data frame: covariates (its xreg columns) and the
# intercept-only model, and covariates per pixel (setting 5: pixel p's own covariate cp<p>,
# with NA on a few dates of cp2, which na.omit drops). Synthetic series (16-day-like, 23 a year,
# 2000..2005.2, with gaps), generated here with a fixed seed. Writes
#   <dir>/bfast_reg_input.csv     time, cov1, cov2, y0..y5 (NA = missing), cp0..cp5
#   <dir>/bfast_reg_settings.csv  setting, formula, order, h, breaks
#   <dir>/bfast_reg_output.csv    setting, pixel, nobs, m, RSS, BIC, breakpoints (1-based rows
#                                 of the valid values, as R), selected (BIC's m)
# Usage: Rscript bench/bfast_regressors_fixtures.R tests/data
suppressMessages(library(bfast))
suppressMessages(library(strucchange))
dir <- commandArgs(trailingOnly = TRUE)[1]
set.seed(38)
N <- 120
tm <- 2000 + (0:(N - 1)) / 23
cov1 <- cumsum(rnorm(N)) / 3                        # a slow covariate (e.g. rainfall anomaly)
cov2 <- as.numeric(scale(sin(2 * pi * tm / 3.1)))   # a multi-year cycle
Y <- matrix(NA, N, 6)
for (p in 1:6) {
  y <- 0.3 * sin(2 * pi * tm + p) + 0.05 * rnorm(N) + 0.4 * cov1 * (p %% 2) + 0.2 * cov2
  y <- y + ifelse(seq_len(N) > 30 + 10 * p, 0.25 * (-1)^p, 0)          # one shift
  if (p >= 4) y[sample(N, 12 + 4 * p)] <- NA                           # gaps
  Y[, p] <- y
}
Y[, 6] <- Y[, 6] + 0.002 * seq_len(N)                                  # a trend
CP <- apply(matrix(rnorm(N * 6), N), 2, cumsum) / 3                    # per-pixel covariates
YP <- Y + 0.3 * CP                                                     # y of setting 5
CP[c(7, 50, 51, 90), 3] <- NA
settings <- data.frame(
  setting = 0:5,
  formula = c("response ~ trend + harmon + xreg1", "response ~ harmon + xreg1 + xreg2",
              "response ~ 1", "response ~ trend + xreg2",
              "response ~ trend + harmon + xreg1 + xreg2", "response ~ trend + harmon + xreg1"),
  order = c(2, 1, 0, 0, 3, 2), h = c(0.15, 0.15, 0.1, 20, 0.2, 0.15), breaks = c(3, 3, 5, 2, 2, 3))
out <- NULL
for (s in seq_len(nrow(settings))) {
  for (p in 1:6) {
    z <- if (s < 6) ts(cbind(y = Y[, p], xreg1 = cov1, xreg2 = cov2), frequency = 23,
                       start = c(2000, 1))
         else ts(cbind(y = YP[, p], xreg1 = CP[, p], xreg2 = cov2), frequency = 23,
                 start = c(2000, 1))
    d <- bfastpp(z, order = max(1, settings$order[s]))
    d$xreg1 <- d$xreg[, "xreg1"]; d$xreg2 <- d$xreg[, "xreg2"]
    f <- as.formula(settings$formula[s])
    bp <- breakpoints(f, data = d, h = settings$h[s], breaks = settings$breaks[s])
    sm <- summary(bp)
    M <- ncol(sm$RSS) - 1
    sel <- which.min(sm$RSS["BIC", ]) - 1
    for (m in 0:M) {
      b <- if (m == 0) "" else paste(breakpoints(bp, breaks = m)$breakpoints, collapse = " ")
      out <- rbind(out, data.frame(setting = s - 1, pixel = p - 1, nobs = bp$nobs, m = m,
                                   RSS = sm$RSS["RSS", m + 1], BIC = sm$RSS["BIC", m + 1],
                                   breakpoints = b, selected = sel))
    }
  }
}
colnames(Y) <- paste0("y", 0:5)
colnames(CP) <- paste0("cp", 0:5)
colnames(YP) <- paste0("yp", 0:5)
write.csv(data.frame(time = tm, cov1 = cov1, cov2 = cov2, Y, CP, YP),
          file.path(dir, "bfast_reg_input.csv"), row.names = FALSE)
write.csv(settings, file.path(dir, "bfast_reg_settings.csv"), row.names = FALSE)
write.csv(out, file.path(dir, "bfast_reg_output.csv"), row.names = FALSE)
