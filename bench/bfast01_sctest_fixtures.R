# strucchange's tests of "no break" that R's bfast::bfast01 offers besides OLS-MOSUM and BIC
# ("OLS-CUSUM", "supF", "supLM", and "aveF", "expF" which its code also takes), computed as bfast01 computes them, on the series of
# tests/data/bfast01_input.csv (the som NDVI example series and six synthetic series, two of
# them with gaps; written by bench/bfast01_fixtures.R), for four settings. Writes
#   <dir>/bfast01_sctest.csv  one row per (setting, series): setting, formula, order, trim
#     (as given to bfast01: NA default 5 K, a count or a fraction), series, nobs, breaks (the
#     decision of bfast01(test = c("OLS-CUSUM", "supF", "supLM"), aggregate = any)), and per
#     test the statistic, the p-value and bfast01's decision (level 0.05; aveF / expF's from
#     bfast01(test = c("aveF", "expF")))
#   <dir>/bfast01_sctest_pvalues.csv  (below) the p-value functions on a grid
# Usage: Rscript bench/bfast01_sctest_fixtures.R tests/data
suppressMessages(library(bfast))
dir <- commandArgs(trailingOnly = TRUE)[1]
inp <- read.csv(file.path(dir, "bfast01_input.csv"))
settings <- data.frame(setting = 0:3,
  formula = c("response ~ trend + harmon", "response ~ trend + harmon", "response ~ trend",
              "response ~ harmon"),
  order = c(3, 2, 3, 1), trim = c(NA, 0.2, 12, 30))
tests <- c("OLS-CUSUM", "supF", "supLM")
out <- NULL
for (s in seq_len(nrow(settings))) {
  st <- settings[s, ]
  for (name in setdiff(colnames(inp), "time")) {
    y <- ts(inp[[name]], frequency = 23, start = inp$time[1])
    trim <- if (is.na(st$trim)) NULL else st$trim
    bf <- bfast01(y, formula = as.formula(st$formula), order = st$order, test = tests,
                  trim = trim, aggregate = any)
    d <- bf$data
    f <- bf$formula
    if (is.null(trim)) trim <- 5 * length(coef(bf$model[[1]]))
    trim01 <- if (trim > 1) trim / nrow(d) else trim
    cu <- sctest(f, data = d, type = "OLS-CUSUM")
    fs <- Fstats(f, data = d, from = trim)
    sf <- sctest(fs, type = "supF")
    af <- sctest(fs, type = "aveF")
    ef <- sctest(fs, type = "expF")
    b2 <- bfast01(y, formula = as.formula(st$formula), order = st$order,
                  test = c("aveF", "expF"), trim = if (is.na(st$trim)) NULL else st$trim)
    lm <- sctest(gefp(f, data = d), functional = supLM(trim01))
    out <- rbind(out, data.frame(
      setting = st$setting, formula = st$formula, order = st$order, trim = st$trim,
      series = name, nobs = nrow(d), breaks = bf$breaks,
      cusum = unname(cu$statistic), cusum_p = cu$p.value, test_cusum = bf$test[["OLS-CUSUM"]],
      supf = unname(sf$statistic), supf_p = sf$p.value, test_supf = bf$test[["supF"]],
      suplm = unname(lm$statistic), suplm_p = lm$p.value, test_suplm = bf$test[["supLM"]],
      avef = unname(af$statistic), avef_p = af$p.value, test_avef = b2$test[["aveF"]],
      expf = unname(ef$statistic), expf_p = ef$p.value, test_expf = b2$test[["expF"]]))
  }
}
out[] <- lapply(out, function(v) if (is.double(v)) sprintf("%.17g", v) else v)
write.csv(out, file.path(dir, "bfast01_sctest.csv"), row.names = FALSE)
# strucchange's p-value functions on a grid: pvalue.Fstats(type = supF, aveF, expF) over the statistic,
# k and lambda (trimming tau = 0.5, >= 0.49, inside the table, <= 0.01), the OLS-CUSUM test's
# (Brownian bridge, max functional, one process) over the statistic
#   <dir>/bfast01_sctest_pvalues.csv  kind (supF / aveF / expF / cusum), x, k, lambda, p
pv <- NULL
for (kind in c("supF", "aveF", "expF"))
  for (k in c(1, 2, 5, 8, 13, 40)) for (tau in c(0.5, 0.495, 0.3, 0.2345, 0.15, 0.05, 0.005))
    for (x in c(0.5, 3, 8.5, 20, 45)) {
      lambda <- ((1 - tau) / tau)^2
      pv <- rbind(pv, data.frame(kind = kind, x = x, k = k, lambda = lambda,
                                 p = strucchange:::pvalue.Fstats(x, kind, k, lambda)))
    }
for (x in c(0.05, 0.1, 0.3, 0.7, 1.0, 1.36, 2.2, 4)) {
  p <- strucchange:::pvalue.efp(x, "Brownian bridge", FALSE, "max", h = NULL, k = 1)
  pv <- rbind(pv, data.frame(kind = "cusum", x = x, k = 1, lambda = NA, p = p))
}
pv[] <- lapply(pv, function(v) if (is.double(v)) sprintf("%.17g", v) else v)
write.csv(pv, file.path(dir, "bfast01_sctest_pvalues.csv"), row.names = FALSE)
