# R's bfast::bfastts (bfast 1.7.2, its default .bfastts.new) on dated observations: the
# fixtures of tests/test_bfastts.py. Each case's input (dates in the order given to R, one to
# three value columns, NA = missing) goes to <input.csv>; the regular series R makes (its
# time(), %.17g, and its values) to <output.csv>, with the ts's start, end and frequency.
# Cases: Landsat-like irregular dates over a leap year (29 February and 1 March share a day of
# the 365-day year; the same date twice, the second NA; unsorted input), MODIS 16-day dates
# (bfast's own `dates`, and with composites missing), 16-day dates off the composite days
# (halfway ties, 31 December rounding into next year's first slot), 8-day dates under
# type "16-day" (R's grid then runs past each year), SPOT dekads (10-day) with a 31 December
# that rounds into the next year, one date, one date twice.
# Then the package's `som` NDVI series on its dates through bfastts ("16-day" and "irregular"),
# bfastmonitor (start 2010, history "all") and bfastlite (breaks = 3): <som.csv> holds the
# series, <som_r.csv> R's break date, magnitude and breakpoints (among the valid values).
# Usage: Rscript bench/bfastts_fixtures.R tests/data/bfastts_input.csv \
#          tests/data/bfastts_output.csv tests/data/bfastts_som.csv tests/data/bfastts_som_r.csv
suppressMessages(library(bfast))
# Debian's strucchange has no mefp.matrix: the formula methods (bfastts itself uses neither)
options(bfast.prefer_matrix_methods = FALSE, strucchange.use_armadillo = FALSE)
args <- commandArgs(trailingOnly = TRUE)
set.seed(38)
cases <- list()
add <- function(name, type, d, v) {
  v <- as.matrix(v)
  cases[[length(cases) + 1]] <<- list(name = name, type = type, dates = as.Date(d), v = v)
}
vals <- function(n, k = 1, na = 0.2) {
  m <- matrix(round(runif(n * k, 0.1, 0.9), 4), n, k)
  m[runif(n * k) < na] <- NA
  m
}

# Landsat-like: 8 or 16 days apart, some acquisitions lost, over 2011-2014 (2012 leap)
d <- seq(as.Date("2011-02-10"), as.Date("2014-12-20"), by = "8 days")
d <- d[runif(length(d)) < 0.6]
d <- sort(unique(c(d, as.Date(c("2012-02-28", "2012-02-29", "2012-03-01", "2012-12-31",
                                "2013-01-01", "2013-07-04", "2014-12-31")))))
d <- c(d, as.Date("2013-07-04"))                  # the same date twice: the second one
v <- vals(length(d), 3)
v[length(d), ] <- c(NA, 0.55, NA)                 # NA overwrites the first (R's rule)
p <- sample(length(d))                            # unsorted: R orders them (stable)
add("irregular_leap", "irregular", d[p], v[p, , drop = FALSE])
add("irregular_leap_1", "irregular", d[p], v[p, 1, drop = FALSE])

# MODIS 16-day composites: bfast's own dates, then some composites missing
add("16day_modis", "16-day", dates, vals(length(dates)))
keep <- runif(length(dates)) < 0.8
keep[1] <- TRUE; keep[length(dates)] <- TRUE
add("16day_modis_gaps", "16-day", dates[keep], vals(sum(keep), 2))

# 16-day dates off the composite days: jul 57 (halfway between slots 3 and 4), 31 December
# 2003 (jul 365, nearer 2004's first slot, which 2004-01-01 also takes), a leap year
j <- list(c(1, 17, 33, 57, 73, 89, 121, 137, 169, 185, 201, 233, 249, 281, 297, 313, 329, 345,
            365),
          c(1, 17, 41, 60, 81, 97, 113, 145, 161, 193, 209, 225, 257, 273, 305, 321, 337, 353),
          c(1, 17, 33, 49, 65, 81, 97, 113, 129, 161, 177, 209, 225, 241, 273, 289, 321, 353))
d <- do.call(c, lapply(1:3, function(i) as.Date(j[[i]] - 1, origin = sprintf("%d-01-01",
                                                                              2002 + i))))
add("16day_offgrid", "16-day", d, vals(length(d)))

# Terra and Aqua interleaved (8 days apart) read as "16-day": R's delta is 8
d <- do.call(c, lapply(2003:2004, function(y) as.Date(seq(0, 360, by = 8),
                                                      origin = sprintf("%d-01-01", y))))
add("16day_8day", "16-day", d, vals(length(d), na = 0.1))

# SPOT VEGETATION dekads (1, 11, 21 of each month) over 2003-2005, and 31 December 2003
d <- as.Date(unlist(lapply(2003:2005, function(y) sapply(1:12, function(m)
  sprintf("%d-%02d-%02d", y, m, c(1, 11, 21))))))
d <- sort(c(d, as.Date("2003-12-31")))
add("10day", "10-day", d, vals(length(d), 2))

# one date; one date twice
add("single", "irregular", as.Date("2012-05-05"), matrix(0.25))
add("twice", "irregular", as.Date(c("2012-05-05", "2012-05-05")), matrix(c(0.25, 0.75)))

inp <- NULL
out <- NULL
w <- function(x) ifelse(is.na(x), "NA", sprintf("%.17g", x))
for (cs in cases) {
  k <- ncol(cs$v)
  vv <- matrix(NA, nrow(cs$v), 3)
  vv[, 1:k] <- cs$v
  inp <- rbind(inp, data.frame(case = cs$name, type = cs$type, date = format(cs$dates),
                               v1 = w(vv[, 1]), v2 = w(vv[, 2]), v3 = w(vv[, 3])))
  data <- if (k == 1) as.vector(cs$v) else cs$v
  a <- bfastts(data, cs$dates, type = cs$type)
  am <- matrix(NA, NROW(a), 3)
  am[, 1:k] <- as.matrix(a)
  tp <- tsp(a)
  out <- rbind(out, data.frame(case = cs$name, start = w(tp[1]), end = w(tp[2]),
                               frequency = w(tp[3]), time = w(as.vector(time(a))),
                               v1 = w(am[, 1]), v2 = w(am[, 2]), v3 = w(am[, 3])))
}
write.csv(inp, args[1], row.names = FALSE, quote = FALSE)
write.csv(out, args[2], row.names = FALSE, quote = FALSE)

som_dates <- dates[1:nrow(som)]
write.csv(data.frame(date = format(som_dates), y = w(som$NDVI.b)), args[3], row.names = FALSE,
          quote = FALSE)
res <- NULL
for (tp in c("16-day", "irregular")) {
  x <- bfastts(som$NDVI.b, som_dates, type = tp)
  m <- bfastmonitor(x, start = c(2010, 1), history = "all")
  b <- bfastlite(x, breaks = 3)$breakpoints$breakpoints
  res <- rbind(res, data.frame(type = tp, n = length(x), break_date = w(m$breakpoint),
                               magnitude = w(m$magnitude), bp = paste(b, collapse = " ")))
}
write.csv(res, args[4], row.names = FALSE, quote = FALSE)
