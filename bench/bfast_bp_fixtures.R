# R's Bai-Perron breakpoints (strucchange::breakpoints, as bfast::bfastlite calls it on
# bfastpp's season + trend design with the missing values omitted) on the series of
# bfast_bp_input.csv for each row of bfast_bp_settings.csv. Writes one line per
# (setting, pixel, number of breaks m) with the RSS, the BIC, the breakpoints for m and the BIC
# choice, and the RSS triangle of setting 1, pixel 1.
# Usage: Rscript bench/bfast_bp_fixtures.R <input.csv> <output.csv> <triangle.csv>
suppressMessages(library(strucchange))
args <- commandArgs(trailingOnly = TRUE)
inp <- read.csv(args[1])
settings <- read.csv(sub("input", "settings", args[1]))
tm <- inp$time
design <- function(order, trend) {
  X <- matrix(1, length(tm), 1)
  if (trend) X <- cbind(X, seq_along(tm))
  if (order > 0) {
    harmon <- outer(2 * pi * tm, 1:order)
    X <- cbind(X, apply(harmon, 2, cos), apply(harmon, 2, sin))
  }
  X
}
out <- NULL
tri <- NULL
for (s in seq_len(nrow(settings))) {
  X <- design(settings$order[s], settings$trend[s])
  for (p in 2:ncol(inp)) {
    y <- inp[[p]]
    ok <- !is.na(y)
    yy <- y[ok]; XX <- X[ok, , drop = FALSE]
    bp <- breakpoints(yy ~ XX - 1, h = settings$h[s], breaks = settings$breaks[s])
    sm <- summary(bp)
    M <- ncol(sm$RSS) - 1
    sel <- which.min(sm$RSS["BIC", ]) - 1
    for (m in 0:M) {
      b <- if (m == 0) "" else paste(breakpoints(bp, breaks = m)$breakpoints, collapse = " ")
      out <- rbind(out, data.frame(setting = s - 1, pixel = p - 2, nobs = bp$nobs, m = m,
                                   RSS = sm$RSS["RSS", m + 1], BIC = sm$RSS["BIC", m + 1],
                                   breakpoints = b, selected = sel))
    }
    if (s == 1 && p == 2) {
      n <- bp$nobs
      for (i in 1:(n - bp$nreg)) for (j in (i + bp$nreg):n) {
        if (i <= length(bp$RSS.triang)) {
          tri <- rbind(tri, c(i, j, bp$RSS(i, j)))
        }
      }
    }
  }
}
write.csv(out, args[2], row.names = FALSE)
colnames(tri) <- c("i", "j", "RSS")
write.csv(tri, args[3], row.names = FALSE)
# confidence intervals (confint.breakpointsfull, level 0.95, its defaults) of the BIC choice on
# the weak-shift series of bfast_bp_ci_input.csv (setting 1's design, h and breaks)
ci <- NULL
cin <- read.csv(sub("input", "ci_input", args[1]))
X <- design(settings$order[1], settings$trend[1])
for (p in 2:ncol(cin)) {
  y <- cin[[p]]
  ok <- !is.na(y)
  yy <- y[ok]; XX <- X[ok, , drop = FALSE]
  bp <- breakpoints(yy ~ XX - 1, h = settings$h[1], breaks = settings$breaks[1])
  if (all(is.na(bp$breakpoints))) next
  cf <- suppressWarnings(confint(bp))$confint
  for (i in seq_len(nrow(cf)))
    ci <- rbind(ci, data.frame(pixel = p - 2, bp = cf[i, 2], lower = cf[i, 1], upper = cf[i, 3]))
}
write.csv(ci, sub("output", "confint", args[2]), row.names = FALSE)
