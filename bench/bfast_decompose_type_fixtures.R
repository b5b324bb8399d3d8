# R's bfast() with strucchange's other fluctuation tests (type = "OLS-CUSUM", "RE", "ME"; the
# OLS-MOSUM default is bench/bfast_decompose_fixtures.R's) on R's example series and synthetic
# NDVI-like series: the fixtures of tests/test_bfast_decompose_types.py. Writes two CSV files
# as bench/bfast_decompose_fixtures.R (one row per case and time step; one row per case), the
# cases with the type and the last iteration's p-values of the trend and season tests.
# Usage: Rscript bench/bfast_decompose_type_fixtures.R \
#            tests/data/bfast_decompose_types_series.csv tests/data/bfast_decompose_types_cases.csv
suppressMessages(library(bfast))
here <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE),
                                                       value = TRUE)[1])))
source(file.path(here, "bfast_decompose_fixtures_lib.R"))
args <- commandArgs(trailingOnly = TRUE)
datats <- ts(rowSums(simts$time.series))
tsp(datats) <- tsp(simts$time.series)
synth_m <- function(seed, ...) synth(seed, n_years = 8, f = 12, ...)   # monthly, 8 years
syn1 <- synth_m(1)
syn2 <- synth_m(2, drop = 0, amp2 = 1)                 # no break
syn3 <- synth_m(3, drop = 0.08, at = 0.3, amp2 = 0.5)
series <- list(harvest = list(harvest, 0.15), simts = list(datats, 0.15),
               syn1 = list(syn1, 0.15), syn2 = list(syn2, 0.15), syn3 = list(syn3, 0.2))
ser <- NULL
cs <- NULL
for (type in c("OLS-CUSUM", "RE", "ME")) {
  cases <- list()
  for (nm in names(series)) for (season in c("harmonic", "dummy")) {
    s <- series[[nm]]
    cases[[length(cases) + 1]] <- list(paste(nm, season, type, sep = "_"), s[[1]], s[[2]],
                                       season, 10, NULL)
  }
  rows <- bfast_fixture_rows(cases, type = type, pvalues = TRUE)
  rows$cases$type <- type
  ser <- rbind(ser, rows$series)
  cs <- rbind(cs, rows$cases)
}
cs$p_trend <- format(cs$p_trend, digits = 15)
cs$p_season <- format(cs$p_season, digits = 15)
write.csv(ser, args[1], row.names = FALSE)
write.csv(cs, args[2], row.names = FALSE)
