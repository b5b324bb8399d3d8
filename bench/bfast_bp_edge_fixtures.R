# strucchange::breakpoints on the edge cases of bench/bfast_bp_edge_fixtures.py: one design per
# case (bfastpp's: intercept, trend 1..n over all dates, cos then sin of the harmonics), the
# missing values omitted. One line per (case, m) with the RSS, BIC, breakpoints and BIC's choice,
# plus the number of coefficients lm.fit leaves NA on the whole series (aliased columns).
# Usage: Rscript bench/bfast_bp_edge_fixtures.R <input.csv> <settings.csv> <output.csv>
suppressMessages(library(strucchange))
args <- commandArgs(trailingOnly = TRUE)
inp <- read.csv(args[1])
settings <- read.csv(args[2])
out <- NULL
for (s in seq_len(nrow(settings))) {
  d <- inp[inp$case == settings$case[s], ]
  tm <- d$time
  X <- matrix(1, length(tm), 1)
  if (settings$trend[s]) X <- cbind(X, seq_along(tm))
  if (settings$order[s] > 0) {
    harmon <- outer(2 * pi * tm / settings$freq[s], 1:settings$order[s])
    X <- cbind(X, apply(harmon, 2, cos), apply(harmon, 2, sin))
  }
  ok <- !is.na(d$y)
  yy <- d$y[ok]; XX <- X[ok, , drop = FALSE]
  bp <- suppressWarnings(breakpoints(yy ~ XX - 1, h = settings$h[s], breaks = settings$breaks[s]))
  sm <- summary(bp)
  M <- ncol(sm$RSS) - 1
  sel <- which.min(sm$RSS["BIC", ]) - 1
  aliased <- sum(is.na(coef(lm(yy ~ XX - 1))))
  for (m in 0:M) {
    b <- if (m == 0) "" else paste(breakpoints(bp, breaks = m)$breakpoints, collapse = " ")
    out <- rbind(out, data.frame(case = settings$case[s], nobs = bp$nobs, m = m,
                                 RSS = sm$RSS["RSS", m + 1], BIC = sm$RSS["BIC", m + 1],
                                 breakpoints = b, selected = sel, aliased = aliased))
  }
}
write.csv(out, args[3], row.names = FALSE)
