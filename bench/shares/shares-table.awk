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
    cv[kind, bes] = field($0, "cv_pct"); mean[kind, bes] = field($0, "mean_ms"); p99[kind, bes] = field($0, "p99_ms")
    if (!(bes in c_b)) { c_b[bes] = 1; c_list[++nc] = bes }
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
END {
  printf "SM shares on %s (driver %s)\n\n", device, driver
  printf "(a) compute-bound throughput, GFLOP/s (SMs its blocks ran on)\n"
  printf "%6s %18s %18s %18s %12s\n", "SMs", "native whole GPU", "native green ctx", "Tandem share", "Tandem/green"
  for (i = 1; i <= na; i++) {
    s = a_list[i]
    printf "%6s %18s %18s %18s %12s\n", s,
      ((s SUBSEP "plain") in gf ? sprintf("%.0f (%s)", gf[s, "plain"], seen[s, "plain"]) : "-"),
      ((s SUBSEP "green") in gf ? sprintf("%.0f (%s)", gf[s, "green"], seen[s, "green"]) : "-"),
      ((s SUBSEP "tandem") in gf ? sprintf("%.0f (%s)", gf[s, "tandem"], seen[s, "tandem"]) : "-"),
      (((s SUBSEP "tandem") in gf) && gf[s, "green"] > 0 ? sprintf("%.3f", gf[s, "tandem"] / gf[s, "green"]) : "-")
  }
  printf "\n(b) resize 8 -> 66 SMs (Flyt: up to 130 ms, 180 ms past 60 streams; goal <= 10 ms)\n"
  printf "%8s %10s %16s %18s %16s %16s\n", "streams", "via", "server apply ms", "first kernel ms", "usual kernel ms", "at kernel"
  for (i = 1; i <= nb; i++) {
    st = b_list[i]
    for (w = 0; w < 2; w++) {
      kind = w ? "native" : "tandem"; c = change(kind, st)
      if (!((kind SUBSEP st) in nk)) continue
      printf "%8s %10s %16s %18s %16.3f %16s\n", st, kind,
        (kind == "tandem" ? (apply[st] == "" ? "-" : apply[st]) : (c >= 0 ? sprintf("%.3f", rres[kind, st, c]) : "-")),
        (c >= 0 ? sprintf("%.3f", rs[kind, st, c]) : "no change seen"), median_before(kind, st, c >= 0 ? c : nk[kind, st]),
        (c >= 0 ? c : "-")
    }
  }
  printf "\n(c) Flyt Table 6: latency-critical 256x256 matmul on 8 SMs beside best-effort loads (Flyt: < 2%%; goal < 1%%)\n"
  printf "%4s %10s %12s %12s %14s\n", "BEs", "via", "mean ms", "p99 ms", "variation %"
  for (i = 1; i <= nc; i++) for (w = 0; w < 2; w++) {
    b = c_list[i]; kind = w ? "tandem" : "native"
    if (!((kind SUBSEP b) in cv)) continue
    printf "%4s %10s %12s %12s %14s\n", b, kind, mean[kind, b], p99[kind, b], cv[kind, b]
  }
  if (nd) {
    printf "\n(d) MPS per-context SM affinity\n%6s %14s %10s %18s\n", "SMs", "GFLOP/s", "SMs seen", "context create ms"
    for (i = 1; i <= nd; i++) { n = d_list[i]; printf "%6s %14s %10s %18s\n", n, dgf[n], dseen[n], dset[n] }
  }
}
