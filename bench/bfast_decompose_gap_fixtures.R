# R's bfast() on series with missing values: the fixtures of tests/test_bfast_decompose.py's
# gap cases. R's bfast takes its initial season from stlplus when the series has NA; stlplus is
# not installed here, so a stand-in package named stlplus is installed into a temporary
# library: its stlplus() returns the seasonal of R's stl(y, "periodic") on the series with its
# gaps filled by linear interpolation (zoo::na.approx). Everything after that initial season is
# R's own bfast code with its missing-value handling (efp / breakpoints on the valid values,
# the fits written back at the valid dates). The stand-in's seasonal is written out as St0: the
# tests start clts' iteration from it.
# Writes <series.csv> (case, y with NA, St0, R's final Tt and St) and <cases.csv> (as
# bench/bfast_decompose_fixtures.R; breakpoints and Time are R's indices of the valid values).
# Usage: Rscript bench/bfast_decompose_gap_fixtures.R tests/data/bfast_decompose_gaps_series.csv \
#            tests/data/bfast_decompose_gaps_cases.csv
args <- commandArgs(trailingOnly = TRUE)
lib <- file.path(tempdir(), "lib"); src <- file.path(tempdir(), "stlplus")
dir.create(lib); dir.create(file.path(src, "R"), recursive = TRUE)
writeLines(c("Package: stlplus", "Version: 0.0.1", "Title: stand-in", "Description: stand-in.",
             "License: GPL-2", "Author: x", "Maintainer: x <x@example.org>"),
           file.path(src, "DESCRIPTION"))
writeLines("export(stlplus)", file.path(src, "NAMESPACE"))
writeLines(c("stlplus <- function(x, t = NULL, n.p, s.window, ...) {",
             "  xf <- ts(zoo::na.approx(as.numeric(x)), start = start(x), frequency = n.p)",
             "  s <- as.numeric(stl(xf, 'periodic')$time.series[, 'seasonal'])",
             "  list(data = data.frame(seasonal = s))",
             "}"), file.path(src, "R", "stlplus.R"))
invisible(system2(file.path(R.home("bin"), "R"), c("CMD", "INSTALL", "--no-test-load",
                                                   paste0("--library=", lib), src),
                  stdout = FALSE, stderr = FALSE))
.libPaths(c(lib, .libPaths()))
suppressMessages(library(bfast))
here <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE),
                                                       value = TRUE)[1])))
source(file.path(here, "bfast_decompose_fixtures_lib.R"))
stopifnot(requireNamespace("stlplus", quietly = TRUE))
synth <- function(seed, n_years = 12, f = 23, drop = -0.25, at = 0.55, miss = 0.15) {
  set.seed(seed)
  n <- n_years * f
  tt <- seq_len(n)
  y <- 0.55 + 0.2 * sin(2 * pi * tt / f) + 0.0004 * tt + ifelse(tt > round(at * n), drop, 0) +
    rnorm(n, sd = 0.03)
  y[sample(2:(n - 1), round(miss * n))] <- NA
  y[round(0.3 * n) + 0:11] <- NA                    # a cloudy season
  ts(y, start = c(2001, 1), frequency = f)
}
hv <- harvest
set.seed(7)
hv[sample(2:(length(hv) - 1), 30)] <- NA
ndvia <- as.ts(zoo::zoo(som$NDVI.a, som$Time))    # R's example: 263 16-day values, 2 NA
g1 <- synth(11)
g2 <- synth(12, drop = 0.2, at = 0.4, miss = 0.25)
cases <- list(
  list("som_harmonic_i1", ndvia, 0.15, "harmonic", 1, NULL),
  list("som_dummy_i10", ndvia, 0.15, "dummy", 10, NULL),
  list("ndvi_harmonic_gaps", ndvi, 0.15, "harmonic", 10, NULL),
  list("ndvi_dummy_gaps", ndvi, 0.15, "dummy", 3, NULL),
  list("harvest_harmonic_gaps", hv, 0.15, "harmonic", 10, NULL),
  list("harvest_none_gaps", hv, 0.15, "none", 10, NULL),
  list("g1_harmonic_gaps", g1, 0.15, "harmonic", 10, NULL),
  list("g1_dummy_gaps", g1, 0.15, "dummy", 10, NULL),
  list("g2_harmonic_gaps", g2, 0.15, "harmonic", 10, NULL)
)
rows <- bfast_fixture_rows(cases, "stlplus", function(y)
  stlplus::stlplus(y, n.p = frequency(y), s.window = "periodic")$data$seasonal)
write.csv(rows$series, args[1], row.names = FALSE)
write.csv(rows$cases, args[2], row.names = FALSE)
