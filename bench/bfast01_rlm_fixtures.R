# R's bfast::bfast01(reg = "rlm") (the 0- and 1-break models fitted by MASS::rlm: Huber's psi,
# MAD scale, IRLS; the break still from OLS breakpoints) and its classification
# (bench/bfast01_rlm_lib.R: bfast01classify with the robust F test's p-value) on the series of
# tests/data/bfast01_input.csv (the som NDVI example and six synthetic series, with gaps) and
# three outlier-heavy ones added here (fixed seed: cloud-like drops, spikes, a break among
# outliers). Writes
#   <dir>/bfast01_rlm_input.csv   time, the series (NA = missing)
#   <dir>/bfast01_rlm_output.csv  one row per (setting, series), columns as
#     bench/bfast01_fixtures.R's (settings: tests/data/bfast01_settings.csv), the models' RSS
#     and BIC those of the rlm fits (deviance(), BIC() as bfast01 computes them), plus
#     magnitude (the 1-break model's trend jump, bfast01classify's m), conv0 / conv1 (rlm
#     converged) and scale0 / scale1 (rlm's final scale)
# Usage: Rscript bench/bfast01_rlm_fixtures.R tests/data
dir <- commandArgs(trailingOnly = TRUE)[1]
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)))
source(file.path(here, "bfast01_rlm_lib.R"))
source(file.path(here, "bfast01_fixtures_lib.R"))
suppressMessages(library(zoo))
inp <- read.csv(file.path(dir, "bfast01_input.csv"))
settings <- read.csv(file.path(dir, "bfast01_settings.csv"), stringsAsFactors = FALSE)
tm <- inp$time
N <- length(tm)
set.seed(38)
u <- (tm - tm[1]) / (tm[N] - tm[1])
season <- 0.1 * sin(2 * pi * tm) + 0.04 * cos(4 * pi * tm)
drop <- function(y, frac, size) {
  i <- sample(N, round(frac * N))
  y[i] <- y[i] - size * runif(length(i), 0.5, 1)
  y
}
o0 <- drop(0.5 + season + 0.1 * u + 0.02 * rnorm(N), 0.15, 0.3)          # clouds, no break
o1 <- 0.4 + season + ifelse(u < 0.55, 0.2 * u, 0.11 - 0.25 * (u - 0.55)) + 0.02 * rnorm(N)
o1 <- drop(o1, 0.12, 0.25)                                                 # reversal, clouds
o1[sample(N, 30)] <- NA
o2 <- 0.3 + season + 0.15 * u + 0.1 * (u > 0.4) + 0.03 * rt(N, df = 2)    # heavy tails, step
o2[sample(N, 10)] <- o2[sample(N, 10)] + 0.4
series <- cbind(inp[, -1], o0 = o0, o1 = o1, o2 = o2)
out <- NULL
for (s in seq_len(nrow(settings))) {
  st <- settings[s, ]
  for (j in seq_len(ncol(series))) {
    y <- ts(series[, j], frequency = 23, start = c(2000, 4))
    tests <- strsplit(st$test, " ")[[1]]
    bf <- bfast01(y, formula = as.formula(st$formula), order = st$order, test = tests,
                  bandwidth = st$bandwidth, reg = "rlm",
                  aggregate = if (st$aggregate == "all") all else any)
    z <- as.zoo(bf, breaks = 1)     # the trend's jump at the best break (bfast01classify's m)
    mag <- as.numeric(z$trend[bf$breakpoints + 1]) - as.numeric(z$trend[bf$breakpoints])
    out <- rbind(out, cbind(
      bfast01_fixture_row(bf, st, tests, s - 1, colnames(series)[j], bfast01classify_rlm),
      magnitude = mag, conv0 = bf$model[[1]]$converged, conv1 = bf$model[[2]]$converged,
      scale0 = bf$model[[1]]$s, scale1 = bf$model[[2]]$s))
  }
}
write.csv(data.frame(time = tm, series), file.path(dir, "bfast01_rlm_input.csv"),
          row.names = FALSE)
write.csv(out, file.path(dir, "bfast01_rlm_output.csv"), row.names = FALSE)
