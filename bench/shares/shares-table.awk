# The table of bench/shares/shares.sh from its results.jsonl: one section per step.
function field(s, k,   m) {
  if (match(s, "\"" k "\":\"?[^,\"}]*")) { m = substr(s, RSTART, RLENGTH); sub(/^"[^"]*":"?/, "", m); return m }
  return ""
}
{
  step = field($0, "step"); test = field($0, "test"); via = field($0, "via")
  if (step == "a" && test == "throughput") {
    sms = field($0, "sms"); mode = (via == "native" ? field($0, "mode") : "tandem")
    gf[sms, mode] = field($0, "gflops"); seen[sms, mode] = field($0, "sms_seen"); asked[sms, mode] = field($0, "sms_asked")
    if (!(sms in a_sms)) { a_sms[sms] = 1; a_list[++na] = sms }
  }
  if (step == "b" && test == "resize") {
    st = field($0, "streams"); k = field($0, "kernel") + 0; kind = (via == "native" ? "native" : "tandem")
    rs[kind, st, k] = field($0, "ms") + 0; rseen[kind, st, k] = field($0, "sms_seen") + 0
    rres[kind, st, k] = field($0, "resize_ms") + 0
    if (k + 1 > nk[kind, st]) nk[kind, st] = k + 1
    if (!(st in b_st)) { b_st[st] = 1; b_list[++nb] = st }
  }
  if (step == "b" && test == "server_apply") apply[field($0, "streams")] = field($0, "ms")
  if (step == "c" && test == "lc") {
    bes = field($0, "bes"); kind = (via == "native" ? "native" : "tandem")
    cv[kind, bes] = field($0, "cv_pct"); mean[kind, bes] = field($0, "mean_ms"); sd[kind, bes] = field($0, "sd_ms")
    p99[kind, bes] = field($0, "p99_ms"); cn[kind, bes] = field($0, "n"); mm_n = field($0, "matmul_n")
    if (!(bes in c_b)) { c_b[bes] = 1; c_list[++nc] = bes }
  }
  # The G-Apps' calls pooled per configuration: sums of n, n*mean and (n-1)*sd^2 + n*mean^2.
  if (step == "c" && test == "gapp") {
    bes = field($0, "bes"); kind = (via == "native" ? "native" : "tandem"); n = field($0, "n") + 0
    m = field($0, "mean_ms") + 0; v = field($0, "sd_ms") + 0
    gn[kind, bes] += n; gs[kind, bes] += n * m; gq[kind, bes] += (n - 1) * v * v + n * m * m; gapps[kind, bes]++
  }
  if (step == "d" && test == "throughput") {
    n = field($0, "sms"); dgf[n] = field($0, "gflops"); dseen[n] = field($0, "sms_seen"); dset[n] = field($0, "setup_ms")
    d_list[++nd] = n
  }
}
# The first kernel whose SMs seen differ from the first kernel's: where the change took effect.
function change(kind, st,   k, first) {
  first = rseen[kind, st, 0]
  for (k = 1; k < nk[kind, st]; k++) if (rseen[kind, st, k] != first) return k
  return -1
}
function median_before(kind, st, upto,   k, n, v, i, j, t) {
  n = 0
  for (k = 2; k < upto; k++) v[++n] = rs[kind, st, k]
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
  return n ? v[int((n + 1) / 2)] : 0
}
function gapp_cell(kind, b,   n, m, v) {
  n = gn[kind, b]; m = gs[kind, b] / n; v = (gq[kind, b] - n * m * m) / (n - 1)
  return sprintf("%.2f +- %.2f (%d)", m, v > 0 ? sqrt(v) : 0, n)
}
END {
  printf "SM shares on %s (driver %s)\n", device, driver
  if (na) printf "\n(a) compute-bound throughput, GFLOP/s (SMs its blocks ran on)\n"
  if (na) printf "%6s %18s %18s %18s %12s\n", "SMs", "native whole GPU", "native green ctx", "Tandem share", "Tandem/green"
  for (i = 1; i <= na; i++) {
    s = a_list[i]
    printf "%6s %18s %18s %18s %12s\n", s,
      ((s SUBSEP "plain") in gf ? sprintf("%.0f (%s)", gf[s, "plain"], seen[s, "plain"]) : "-"),
      ((s SUBSEP "green") in gf ? sprintf("%.0f (%s)", gf[s, "green"], seen[s, "green"]) : "-"),
      ((s SUBSEP "tandem") in gf ? sprintf("%.0f (%s)", gf[s, "tandem"], seen[s, "tandem"]) : "-"),
      (((s SUBSEP "tandem") in gf) && gf[s, "green"] > 0 ? sprintf("%.3f", gf[s, "tandem"] / gf[s, "green"]) : "-")
  }
  if (nb) printf "\n(b) resize 8 -> 66 SMs (Flyt: up to 130 ms, 180 ms past 60 streams; goal <= 10 ms)\n"
  if (nb) printf "%8s %10s %16s %18s %16s %16s\n", "streams", "via", "server apply ms", "first kernel ms", "usual kernel ms", "at kernel"
  for (i = 1; i <= nb; i++) {
    st = b_list[i]
    for (w = 0; w < 2; w++) {
      kind = w ? "native" : "tandem"
      if (!((kind SUBSEP st) in nk)) continue   # before change(), which would make the entry
      c = change(kind, st)
      printf "%8s %10s %16s %18s %16.3f %16s\n", st, kind,
        (kind == "tandem" ? (apply[st] == "" ? "-" : apply[st]) : (c >= 0 ? sprintf("%.3f", rres[kind, st, c]) : "-")),
        (c >= 0 ? sprintf("%.3f", rs[kind, st, c]) : "no change seen"), median_before(kind, st, c >= 0 ? c : nk[kind, st]),
        (c >= 0 ? c : "-")
    }
  }
  if (nc) {
    printf "\n(c) Flyt Table 6: a latency-critical (C-App) %sx%s FP32 matmul on 8 SMs beside 0-4 best-effort\n", mm_n, mm_n
    if (t6_layout == "own")
      printf "    G-Apps (the same matmul, 8 SMs each); mean +- sd of each call, ms (calls)\n"
    else
      printf "    G-Apps (the same matmul) sharing the other 8 SMs of a 16-SM budget, as Flyt's; mean +- sd of each call, ms (calls)\n"
    printf "%-18s %-26s %-26s %-26s %-26s\n", "configuration", "C-App native", "G-App native", "C-App Tandem", "G-App Tandem"
    for (i = 1; i <= nc; i++) {
      b = c_list[i]
      printf "%-18s", (b == 0 ? "C-App only" : sprintf("C-App + %d G-App%s", b, b > 1 ? "s" : ""))
      for (w = 0; w < 2; w++) {
        kind = w ? "tandem" : "native"
        printf " %-26s", ((kind SUBSEP b) in mean ? sprintf("%.2f +- %.2f (%d)", mean[kind, b], sd[kind, b], cn[kind, b]) : "-")
        printf " %-26s", (gn[kind, b] > 1 ? gapp_cell(kind, b) : "-")
      }
      printf "\n"
    }
    for (w = 0; w < 2; w++) {
      kind = w ? "tandem" : "native"; lo = ""; hi = ""
      for (i = 1; i <= nc; i++) {
        b = c_list[i]
        if (!((kind SUBSEP b) in mean)) continue
        m = mean[kind, b] + 0
        if (lo == "" || m < lo) lo = m
        if (hi == "" || m > hi) hi = m
      }
      if (lo != "" && lo > 0)
        printf "C-App mean across configurations, %s: %.2f .. %.2f ms, (max-min)/min = %.2f %%\n", kind, lo, hi, 100 * (hi - lo) / lo
    }
    printf "Flyt: C-App 2.02+-0.02 .. 2.04+-0.01 s, (max-min)/min = 1.49 %% (\"under 2%%\"); goal < 1 %%\n"
    if (t6_layout == "own")
      printf "(Flyt's G-Apps share one other 8 SMs, so theirs grow 2.05 -> 10.29 s; here each has 8 SMs of its own)\n"
    else
      printf "(Flyt's G-Apps: 2.05, 4.54, 7.09, 10.29 s with 1-4 of them sharing the other 8 SMs, as here)\n"
  }
  if (nd) {
    printf "\n(d) MPS per-context SM affinity\n%6s %14s %10s %18s\n", "SMs", "GFLOP/s", "SMs seen", "context create ms"
    for (i = 1; i <= nd; i++) { n = d_list[i]; printf "%6s %14s %10s %18s\n", n, dgf[n], dseen[n], dset[n] }
  }
}
