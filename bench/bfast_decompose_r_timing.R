# Times R's bfast() looped over the pixels of a CSV written by bench/bench_bfast_decompose.py
# (one column per pixel, no missing values: R's bfast needs stl's complete series), with the
# settings given on the command line. Writes per pixel the trend and season breakpoints
# (1-based), the iterations, and the total seconds.
# Usage: Rscript bench/bfast_decompose_r_timing.R <input.csv> <output.csv> <freq> <season> <h>
#            <max.iter> [<type>]   (type: bfast's, default OLS-MOSUM; series start in 2000)
suppressMessages(library(bfast))
args <- commandArgs(trailingOnly = TRUE)
inp <- read.csv(args[1])
f <- as.numeric(args[3]); season <- args[4]; h <- as.numeric(args[5]); mi <- as.integer(args[6])
type <- if (length(args) >= 7) args[7] else "OLS-MOSUM"
tb <- character(ncol(inp)); sb <- character(ncol(inp)); it <- integer(ncol(inp))
one <- function(x) if (length(x) == 0 || identical(unname(x), 0) || all(is.na(x))) "" else
  paste(x, collapse = " ")
secs <- system.time(for (p in seq_len(ncol(inp))) {
  y <- ts(inp[[p]], start = c(2000, 1), frequency = f)
  invisible(capture.output(fit <- suppressWarnings(bfast(y, h = h, season = season,
                                                         max.iter = mi, type = type))))
  o <- fit$output[[length(fit$output)]]
  tb[p] <- one(o$Vt.bp); sb[p] <- one(o$Wt.bp); it[p] <- length(fit$output)
})[["elapsed"]]
write.csv(data.frame(pixel = seq_along(tb) - 1, trend_bp = tb, season_bp = sb, iterations = it,
                     seconds = secs), args[2], row.names = FALSE)
