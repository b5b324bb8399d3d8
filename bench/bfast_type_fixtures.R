# R's bfast::bfastmonitor with each of strucchange's monitoring processes (type = "OLS-MOSUM",
# "OLS-CUSUM", "RE", "ME") on bfast's example series `ndvi` (24 a year, 150 of 720 missing) and
# on the synthetic series with gaps of tests/data/bfast_r_input.csv (23 a year): one row per
# (series, setting) in tests/data/bfast_type_output.csv, the ndvi series in
# tests/data/bfast_type_ndvi.csv and the ndvi OLS-CUSUM process with its boundary (setting 0's
# history) in tests/data/bfast_type_process.csv; RE and ME with a covariate on the series of
# tests/data/bfast_mreg_input.csv in tests/data/bfast_type_mreg_output.csv.
# Usage: Rscript bench/bfast_type_fixtures.R <tests/data directory>
# (bfast 1.7.2 from the bfast2/bfast source with strucchange 1.5-3: its matrix methods need
# strucchangeRcpp, so the formula methods run, as options(bfast.prefer_matrix_methods = FALSE))
suppressMessages(library(bfast))
options(bfast.prefer_matrix_methods = FALSE)
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args)) args[1] else "tests/data"
data(ndvi)

settings <- expand.grid(type = c("OLS-MOSUM", "OLS-CUSUM", "RE", "ME"),
                        history = c("all", "ROC"), stringsAsFactors = FALSE)
settings$h <- 0.25
settings$level <- 0.05
extra <- data.frame(type = c("OLS-CUSUM", "OLS-CUSUM", "RE", "ME"), history = "all",
                    h = c(0.5, 0.25, 0.5, 0.5), level = c(0.01, 0.2, 0.05, 0.05),
                    stringsAsFactors = FALSE)
settings <- rbind(settings, extra)
write.csv(settings, file.path(dir, "bfast_type_settings.csv"), row.names = FALSE)

inp <- read.csv(file.path(dir, "bfast_r_input.csv"))
series <- list(ndvi = list(y = ndvi, start = c(2010, 13)))
for (cid in sort(unique(inp$case))) {
  v <- inp$value[inp$case == cid]
  series[[paste0("case", cid)]] <- list(y = ts(v, start = 2000, frequency = 23),
                                        start = 2007.51)
}

rows <- list()
for (s in seq_len(nrow(settings))) {
  st <- settings[s, ]
  for (name in names(series)) {
    y <- series[[name]]$y
    tt <- as.numeric(time(y))
    start <- series[[name]]$start
    ts0 <- if (length(start) > 1) start[1] + (start[2] - 1) / frequency(y) else start
    n_hist_dates <- sum(tt < ts0)
    m <- suppressWarnings(tryCatch(
      bfastmonitor(y, start = start, type = st$type, history = st$history, h = st$h,
                   level = st$level),
      error = function(e) NULL))
    brk <- -3; mag <- NA; mmean <- NA; crit <- NA; stat <- NA; hs <- -1
    if (!is.null(m)) {
      hs <- which(abs(tt - m$history[1]) < 1e-9)[1] - 1
      if (is.list(m$mefp)) {
        crit <- m$mefp$critval
        stat <- max(abs(m$mefp$process))
        mmean <- if (st$type %in% c("OLS-MOSUM", "OLS-CUSUM")) mean(m$mefp$process) else NA
        brk <- if (is.na(m$breakpoint)) -1 else
          which(abs(tt - m$breakpoint) < 1e-9)[1] - 1 - n_hist_dates
        mag <- m$magnitude
      } else brk <- -2
      if (s == 2 && name == "ndvi") {
        b <- boundary(m$mefp)
        write.csv(data.frame(process = as.numeric(m$mefp$process), boundary = as.numeric(b)),
                  file.path(dir, "bfast_type_process.csv"), row.names = FALSE)
      }
    }
    rows[[length(rows) + 1]] <- data.frame(setting = s - 1, series = name, breaks = brk,
      magnitude = mag, mean = mmean, statistic = stat, critval = crit, history_start = hs)
  }
}
write.csv(do.call(rbind, rows), file.path(dir, "bfast_type_output.csv"), row.names = FALSE)
write.csv(data.frame(time = as.numeric(time(ndvi)), value = as.numeric(ndvi)),
          file.path(dir, "bfast_type_ndvi.csv"), row.names = FALSE)
# RE and ME with a covariate (their processes depend on the regressors' basis: R's columns as
# given) on the series of bfast_mreg_input.csv (bench/bfast_monitor_regressors_fixtures.R):
# tests/data/bfast_type_mreg_output.csv
mi <- read.csv(file.path(dir, "bfast_mreg_input.csv"))
mforms <- c("response ~ trend + harmon + xreg", "response ~ harmon + xreg")
morders <- c(1, 3)
mrows <- list()
for (ty in c("RE", "ME")) for (s in seq_along(mforms)) for (p in 0:7) {
  z <- ts(cbind(y = mi[[paste0("y", p)]], xreg = mi$xreg), frequency = 23, start = c(2000, 1))
  m <- suppressWarnings(bfastmonitor(z, start = 2008, formula = as.formula(mforms[s]),
                                     order = morders[s], type = ty, history = "all"))
  brk <- if (is.na(m$breakpoint)) -1 else
    which(abs(mi$time - m$breakpoint) < 1e-9)[1] - 1 - sum(mi$time < 2008)
  mrows[[length(mrows) + 1]] <- data.frame(type = ty, formula = mforms[s], order = morders[s],
    pixel = p, breaks = brk, statistic = max(abs(m$mefp$process)), critval = m$mefp$critval)
}
write.csv(do.call(rbind, mrows), file.path(dir, "bfast_type_mreg_output.csv"), row.names = FALSE)
cat(R.version.string, "bfast", as.character(packageVersion("bfast")), "strucchange",
    as.character(packageVersion("strucchange")), "\n")
