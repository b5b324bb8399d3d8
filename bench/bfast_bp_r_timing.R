# Times strucchange::breakpoints (h = 0.15, breaks = 5, BIC choice: what breakpoints() returns)
# looped over the pixels of a CSV written by bench/bench_bfast_breaks.py (columns: time, then one
# per pixel, NA = missing; the design: intercept, trend, harmonics of order 3, missing values
# omitted as bfastlite's bfastpp does). Writes the seconds and the BIC breakpoints per pixel.
# Usage: Rscript bench/bfast_bp_r_timing.R <input.csv> <output.csv>
suppressMessages(library(strucchange))
args <- commandArgs(trailingOnly = TRUE)
inp <- read.csv(args[1])
tm <- inp$time
harmon <- outer(2 * pi * tm, 1:3)
X <- cbind(1, seq_along(tm), apply(harmon, 2, cos), apply(harmon, 2, sin))
res <- character(ncol(inp) - 1)
secs <- system.time(for (p in 2:ncol(inp)) {
  y <- inp[[p]]
  ok <- !is.na(y)
  yy <- y[ok]; XX <- X[ok, , drop = FALSE]
  bp <- breakpoints(yy ~ XX - 1, h = 0.15, breaks = 5)
  b <- bp$breakpoints
  res[p - 1] <- if (all(is.na(b))) "" else paste(which(ok)[b] - 1, collapse = " ")
})[["elapsed"]]
write.csv(data.frame(pixel = seq_along(res) - 1, breakpoints = res, seconds = secs),
          args[2], row.names = FALSE)
