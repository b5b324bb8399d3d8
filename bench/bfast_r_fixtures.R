# R's BFAST-Monitor (bfast::bfastmonitor's steps, written out with strucchange, which Debian
# packages as r-cran-strucchange; the bfast R package itself is not in Debian) on the series of
# bfast_r_input.csv; writes one line per (series, setting) to bfast_r_output.csv.
# Usage: Rscript bench/bfast_r_fixtures.R <input.csv> <output.csv>
suppressMessages(library(strucchange))
args <- commandArgs(trailingOnly = TRUE)
inp <- read.csv(args[1])
settings <- read.csv(if (length(args) >= 3) args[3] else sub("input", "settings", args[1]))
freq <- 23
order <- 3

bfastpp_simple <- function(y, order) {
  rval <- data.frame(time = as.numeric(time(y)), response = as.numeric(y), trend = 1:NROW(y))
  harmon <- outer(2 * pi * as.vector(time(y)), 1:order)
  harmon <- cbind(apply(harmon, 2, cos), apply(harmon, 2, sin))
  colnames(harmon) <- c(paste("cos", 1:order, sep = ""), paste("sin", 1:order, sep = ""))
  rval$harmon <- harmon
  na.omit(rval)
}

history_roc <- function(formula, data, level = 0.05) {   # bfast's history_roc
  n <- nrow(data)
  data_rev <- data[n:1, ]
  data_rev$response <- ts(data_rev$response)
  y_rcus <- efp(formula, data = data_rev, type = "Rec-CUSUM")
  pval <- sctest(y_rcus)$p.value
  y_start <- if (!is.na(pval) && pval < level) {
    length(y_rcus$process) - min(which(abs(y_rcus$process)[-1] > boundary(y_rcus)[-1])) + 1
  } else 1
  data$time[y_start]
}

history_break <- function(formula, data) {   # bfast's history_break (h = 6 K, BIC)
  h <- 6 * NCOL(model.matrix(formula, data = data[0, ]))
  bp <- breakpoints(formula, data = data, h = h)$breakpoints
  if (all(is.na(bp))) data$time[1] else data$time[tail(bp, 1) + 1]
}

rows <- list()
for (s in seq_len(nrow(settings))) {
  st <- settings[s, ]
  # optional columns: formula (R's bfastmonitor formula) and order (harmonic order)
  formula <- as.formula(if (is.null(st$formula)) "response ~ trend + harmon" else st$formula)
  ord <- if (is.null(st$order)) order else st$order
  for (cid in sort(unique(inp$case))) {
    v <- inp$value[inp$case == cid]
    y <- ts(v, start = 2000, frequency = freq)
    N <- length(v)
    all_time <- as.numeric(time(y))
    n_hist_dates <- sum(all_time < st$start)
    data_tspp <- bfastpp_simple(y, ord)
    K <- NCOL(model.matrix(formula, data = data_tspp[0, ]))
    history_tspp <- subset(data_tspp, time < st$start)
    level_roc <- if (is.null(st$level_roc)) st$level else st$level_roc
    history <- if (st$history == "ROC") history_roc(formula, history_tspp, level_roc) else
      if (st$history == "BP") tryCatch(history_break(formula, history_tspp), error = function(e) Inf) else
      if (st$history != "all") as.numeric(st$history) else history_tspp$time[1]
    history_tspp <- subset(history_tspp, time >= history)
    hist_start <- if (NROW(history_tspp)) which(abs(all_time - history_tspp$time[1]) < 1e-9)[1] - 1 else -1
    brk <- -2; mag <- NA; mmean <- NA; sig <- NA; crit <- NA
    if (!(floor(st$h * NROW(history_tspp)) <= 1 | NROW(history_tspp) <= K)) {
      test_mefp <- mefp(formula, data = history_tspp, type = "OLS-MOSUM", period = 10,
                        h = st$h, alpha = st$level)
      test_lm <- lm(formula, data = history_tspp)
      test_tspp <- subset(data_tspp, time >= history)
      test_mon <- monitor(test_mefp, data = test_tspp, verbose = FALSE)
      brk <- -1
      if (!is.na(test_mon$breakpoint)) {
        tb <- test_tspp$time[test_mon$breakpoint]
        brk <- which(abs(all_time - tb) < 1e-9)[1] - 1 - n_hist_dates
      }
      pred <- predict(test_lm, newdata = test_tspp)
      mon <- test_tspp$time >= st$start
      mag <- median(test_tspp$response[mon] - pred[mon])
      mmean <- mean(test_mon$process)
      sig <- summary(test_lm)$sigma
      crit <- test_mefp$critval
    }
    rows[[length(rows) + 1]] <- data.frame(setting = s - 1, case = cid, breaks = brk,
      magnitude = mag, mean = mmean, sigma = sig, critval = crit, history_start = hist_start)
  }
}
out <- do.call(rbind, rows)
write.csv(out, args[2], row.names = FALSE)
cat(R.version.string, "strucchange", as.character(packageVersion("strucchange")), "\n")
