# Times bfast::bfastmonitor(type = ...) looped over the pixels of a CSV written by
# bench/bench_bfast.py --r-pixels (columns: time in decimal years on a regular grid, then one per
# pixel, NA = missing), history "all", h = 0.25, level = 0.05, order 3, monitoring from the
# given start. Writes per type and pixel the seconds (the type's loop over all pixels, divided
# evenly) and the break as an index into the monitoring dates (-1 none, -2 not tested).
# Usage: Rscript bench/bfast_type_r_timing.R <input.csv> <start> <types, comma-separated> <output.csv>
suppressMessages(library(bfast))
options(bfast.prefer_matrix_methods = FALSE)   # strucchange's formula methods (no strucchangeRcpp)
args <- commandArgs(trailingOnly = TRUE)
inp <- read.csv(args[1])
start <- as.numeric(args[2])
types <- strsplit(args[3], ",")[[1]]
tm <- inp$time
freq <- 1 / (tm[2] - tm[1])
n_hist <- sum(tm < start)
rows <- list()
for (ty in types) {
  brk <- integer(ncol(inp) - 1)
  secs <- system.time(for (p in 2:ncol(inp)) {
    y <- ts(inp[[p]], start = tm[1], frequency = freq)
    m <- tryCatch(suppressWarnings(bfastmonitor(y, start = start, type = ty, history = "all",
                                                h = 0.25, level = 0.05)),
                  error = function(e) NULL)
    brk[p - 1] <- if (is.null(m) || !is.list(m$mefp)) -2L else if (is.na(m$breakpoint)) -1L else
      which(abs(tm - m$breakpoint) < 1e-6)[1] - 1L - n_hist
  })[["elapsed"]]
  rows[[ty]] <- data.frame(type = ty, pixel = seq_along(brk) - 1, breaks = brk,
                           seconds = secs / length(brk))
}
write.csv(do.call(rbind, rows), args[4], row.names = FALSE)
