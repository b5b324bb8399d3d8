# Times bfast::bfast01 + bfast01classify (R's defaults: OLS-MOSUM, order 3, trim 5 K; the
# classification with pct_stable = 0.25) looped over the pixels of a CSV written by
# bench/bench_bfast01.py (columns: time, then one per pixel, NA = missing; 23 dates a year).
# Writes per pixel the decision, the break (0-based date index, -1 none) and the type.
# An optional third argument: the tests, comma-separated (default OLS-MOSUM); a fourth: reg
# ("lm" or "rlm"; rlm classified by bench/bfast01_rlm_lib.R's bfast01classify, bfast 1.7.2's
# stopping on rlm fits).
# Usage: Rscript bench/bfast01_r_timing.R <input.csv> <output.csv> [tests] [reg]
suppressMessages(library(bfast))
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)))
args <- commandArgs(trailingOnly = TRUE)
inp <- read.csv(args[1])
tm <- inp$time
n <- ncol(inp) - 1
tests <- if (length(args) >= 3) strsplit(args[3], ",")[[1]] else "OLS-MOSUM"
reg <- if (length(args) >= 4) args[4] else "lm"
classify <- bfast01classify
if (reg == "rlm") {
  source(file.path(here, "bfast01_rlm_lib.R"))
  classify <- bfast01classify_rlm
}
brk <- bp <- type <- integer(n)
secs <- system.time(for (p in 2:ncol(inp)) {
  y <- ts(inp[[p]], frequency = 23, start = c(floor(tm[1]), round((tm[1] %% 1) * 23) + 1))
  bf <- bfast01(y, test = tests, reg = reg)
  cl <- classify(bf, pct_stable = 0.25)
  brk[p - 1] <- bf$breaks
  bp[p - 1] <- which(!is.na(inp[[p]]))[bf$breakpoints] - 1
  type[p - 1] <- cl$flag_type
})[["elapsed"]]
write.csv(data.frame(pixel = seq_len(n) - 1, breaks = brk, breakpoint = bp, type = type,
                     seconds = secs), args[2], row.names = FALSE)
