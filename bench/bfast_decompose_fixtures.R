# R's bfast() (Verbesselt et al. 2010) on its own example series (harvest, simts, ndvi) and on
# synthetic NDVI-like series with breaks in trend and season: the fixtures of
# tests/test_bfast_decompose.py. Writes two CSV files:
#   <series.csv>  one row per (case, time step): the input y and R's final Tt and St (13
#                 digits; R's Nt is y - Tt - St)
#   <cases.csv>   one row per case: settings (freq, h, season, max.iter, breaks) and R's results
#                 (iterations, trend / season breakpoints as 1-based indices, Magnitude, Time,
#                 the per-break magnitudes Mags[, 3], nobp flags)
# R's bfast needs a regular series without NA (stl(); stlplus is not installed here): ndvi's
# missing values are filled by linear interpolation (zoo::na.approx) first.
# Usage: Rscript bench/bfast_decompose_fixtures.R tests/data/bfast_decompose_series.csv \
#            tests/data/bfast_decompose_cases.csv
suppressMessages(library(bfast))
here <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE),
                                                       value = TRUE)[1])))
source(file.path(here, "bfast_decompose_fixtures_lib.R"))
args <- commandArgs(trailingOnly = TRUE)
datats <- ts(rowSums(simts$time.series))
tsp(datats) <- tsp(simts$time.series)
ndvif <- ts(zoo::na.approx(as.numeric(ndvi)), start = start(ndvi), frequency = frequency(ndvi))
yearly <- ts(as.numeric(harvest), frequency = 1, start = 2006)
syn1 <- synth(1)
syn2 <- synth(2, drop = 0, amp2 = 1)           # no break: noise around a trend + season
syn3 <- synth(3, n_years = 10, drop = 0.15, at = 0.3, amp2 = 0.5)
syn4 <- synth(4, drop = -0.1, at = 0.7, amp2 = 2.5)   # the season's amplitude 2.5x from 35 %
cases <- list(
  list("harvest_harmonic_i1", harvest, 0.15, "harmonic", 1, NULL),
  list("harvest_harmonic_b2", harvest, 10 / length(harvest), "harmonic", 1, 2),
  list("harvest_dummy_i1", harvest, 0.15, "dummy", 1, NULL),
  list("harvest_harmonic_i10", harvest, 0.15, "harmonic", 10, NULL),
  list("harvest_dummy_i10", harvest, 0.15, "dummy", 10, NULL),
  list("harvest_none_i10", harvest, 0.15, "none", 10, NULL),
  list("harvest_yearly_none", yearly, 0.23, "none", 1, NULL),
  list("simts_dummy_i1", datats, 0.15, "dummy", 1, NULL),
  list("simts_harmonic_i10", datats, 0.15, "harmonic", 10, NULL),
  list("ndvi_harmonic_i10", ndvif, 0.15, "harmonic", 10, NULL),
  list("ndvi_dummy_i3", ndvif, 0.15, "dummy", 3, NULL),
  list("syn1_harmonic_i10", syn1, 0.15, "harmonic", 10, NULL),
  list("syn1_dummy_i10", syn1, 0.15, "dummy", 10, NULL),
  list("syn2_harmonic_i10", syn2, 0.15, "harmonic", 10, NULL),
  list("syn3_harmonic_i10", syn3, 0.15, "harmonic", 10, NULL),
  list("syn3_dummy_b1", syn3, 0.15, "dummy", 10, 1),
  list("syn3_harmonic_b1", syn3, 0.15, "harmonic", 10, 1),
  list("syn4_harmonic_i10", syn4, 0.15, "harmonic", 10, NULL),
  list("syn4_harmonic_h08", syn4, 0.08, "harmonic", 10, NULL),
  list("harvest_dummy_h05", harvest, 0.05, "dummy", 10, NULL)
)
rows <- bfast_fixture_rows(cases)
write.csv(rows$series, args[1], row.names = FALSE)
write.csv(rows$cases, args[2], row.names = FALSE)
