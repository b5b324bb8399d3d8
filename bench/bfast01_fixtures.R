# R's bfast::bfast01 (one break or none, chosen by a test) and bfast01classify (the break's
# typology) on the package's own NDVI series (som$NDVI.a, 23 a year, 2000.13..2011.52, two NAs)
# and synthetic series on the same dates (fixed seed, with gaps), for three settings. Writes
#   <dir>/bfast01_input.csv     time, ndvi, s0..s5 (NA = missing)
#   <dir>/bfast01_settings.csv  setting, formula, order, test, aggregate, bandwidth
#   <dir>/bfast01_output.csv    one row per (setting, series): breaks, breakpoint (1-based row of
#     the valid values), the OLS-MOSUM statistic / p-value (sctest as bfast01 calls it), the
#     test decisions, BIC of the 0- / 1-break models (bfast01's bic), their RSS, coefficients
#     of both models (space-separated, R's order: (Intercept), trend, harmoncos1.., harmonsin1..;
#     model 2 row-wise: segment 1's then segment 2's), bfast01classify standard (pct_stable 0.25)
#     and drylands flags (NA written as NA), bfast01's confint of the break (rows: lower,
#     break, upper)
# Usage: Rscript bench/bfast01_fixtures.R tests/data
suppressMessages(library(bfast))
suppressMessages(library(zoo))
dir <- commandArgs(trailingOnly = TRUE)[1]
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))),
                 "bfast01_fixtures_lib.R"))
ndvi <- as.ts(zoo(som$NDVI.a, som$Time))
tm <- as.numeric(time(ndvi))
N <- length(tm)
set.seed(1)
u <- (tm - tm[1]) / (tm[N] - tm[1])                    # 0..1
season <- 0.1 * sin(2 * pi * tm) + 0.04 * cos(4 * pi * tm)
noise <- function(s) s * rnorm(N)
S <- cbind(
  s0 = 0.4 + season + ifelse(u < 0.45, 0.3 * u, 0.135 - 0.2 * (u - 0.45)) + noise(0.02),  # reversal
  s1 = 0.6 + season - 0.15 * u + noise(0.03),                                         # decline
  s2 = 0.3 + season + 0.25 * u - 0.12 * (u > 0.6) + noise(0.015),                      # setback
  s3 = 0.5 + season + ifelse(u < 0.3, -0.4 * u, -0.12 + 0.3 * (u - 0.3)) + noise(0.02),   # V
  s4 = 0.5 + season + noise(0.05),                                                     # stable
  s5 = 0.2 + season + 0.1 * u + 0.15 * (u > 0.5) + noise(0.02))                         # boost
S[sample(N, 40), "s3"] <- NA
S[sample(N, 15), "s5"] <- NA
settings <- data.frame(setting = 0:2,
  formula = c("response ~ trend + harmon", "response ~ trend + harmon", "response ~ trend"),
  order = c(3, 2, 3), test = c("OLS-MOSUM", "BIC OLS-MOSUM", "OLS-MOSUM"),
  aggregate = c("all", "any", "all"), bandwidth = c(0.15, 0.11, 0.15))
series <- cbind(ndvi = as.numeric(ndvi), S)
out <- NULL
for (s in seq_len(nrow(settings))) {
  st <- settings[s, ]
  for (j in seq_len(ncol(series))) {
    y <- ts(series[, j], frequency = 23, start = start(ndvi))
    tests <- strsplit(st$test, " ")[[1]]
    f <- as.formula(st$formula)
    bf <- bfast01(y, formula = f, order = st$order, test = tests, bandwidth = st$bandwidth,
                  aggregate = if (st$aggregate == "all") all else any)
    out <- rbind(out, bfast01_fixture_row(bf, st, tests, s - 1, colnames(series)[j]))
  }
}
write.csv(data.frame(time = tm, series), file.path(dir, "bfast01_input.csv"), row.names = FALSE)
write.csv(settings, file.path(dir, "bfast01_settings.csv"), row.names = FALSE)
write.csv(out, file.path(dir, "bfast01_output.csv"), row.names = FALSE)
