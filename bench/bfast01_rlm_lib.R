# bfast01classify for bfast01(reg = "rlm") fits. bfast 1.7.2's stops on them ("replacement has
# length zero"): it reads `$Pr[1]` of sfsmisc::f.robftest's htest, which has no such element.
# This copy of R's own function reads that test's p.value instead (the robust F test of the
# segment's slope the line means) and is otherwise R's code, unchanged.
suppressMessages(library(bfast))
bfast01classify_rlm <- local({
  src <- deparse(bfast::bfast01classify)
  hit <- grepl("segment.anova$Pr[1]", src, fixed = TRUE)
  stopifnot(sum(hit) == 1)
  src <- sub("segment.anova$Pr[1]",
             "(if (reg == \"rlm\") segment.anova$p.value else segment.anova$Pr[1])",
             src, fixed = TRUE)
  f <- eval(parse(text = src))
  environment(f) <- asNamespace("bfast")
  f
})
