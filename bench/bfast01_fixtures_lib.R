# One fixture row of R's bfast01 result `bf` (shared by bench/bfast01_fixtures.R and
# bench/bfast01_rlm_fixtures.R): the break, the OLS-MOSUM statistic and p-value (sctest as
# bfast01 calls it), the test decisions, both models' BIC (bfast01's), RSS and coefficients
# (space-separated; model 2 row-wise), the classification by `classify` (standard with
# pct_stable 0.25, then drylands; NA written as NA) and bfast01's confint of the break.
bfast01_fixture_row <- function(bf, st, tests, setting, series, classify = bfast01classify) {
  fmt <- function(x) paste(format(x, digits = 17), collapse = " ")
  sc <- sctest(bf$formula, data = bf$data, type = "OLS-MOSUM", h = st$bandwidth,
               functional = "max")
  bic <- c(BIC(bf$model[[1]]), BIC(bf$model[[2]]) + log(nrow(bf$data)))
  c2 <- matrix(coef(bf$model[[2]]), nrow = 2)
  cs <- as.numeric(classify(bf, pct_stable = 0.25))
  cd <- as.numeric(classify(bf, pct_stable = 0.25, typology = "drylands"))
  data.frame(
    setting = setting, series = series, nobs = nrow(bf$data), breaks = bf$breaks,
    breakpoint = bf$breakpoints, mosum = unname(sc$statistic), mosum_p = sc$p.value,
    test_bic = if ("BIC" %in% tests) bf$test[["BIC"]] else NA,
    test_mosum = bf$test[["OLS-MOSUM"]], bic0 = bic[1], bic1 = bic[2],
    rss0 = deviance(bf$model[[1]]), rss1 = deviance(bf$model[[2]]),
    coef0 = fmt(coef(bf$model[[1]])), coef1 = fmt(t(c2)),
    std = fmt(cs), dry = fmt(cd), confint = fmt(bf$confint))
}
