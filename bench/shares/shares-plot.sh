#!/usr/bin/env bash
# Draws OUT/shares.png from the results of bench/shares/shares.sh (gnuplot is absent on the GPU
# host: run this afterwards where it is).  Steps that were not run (--only) leave their panel
# empty.  Usage: bench/shares/shares-plot.sh OUT
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$(cd "${1:?usage: shares-plot.sh RESULTS_DIR}" && pwd) || exit 1
command -v gnuplot >/dev/null || { echo "shares-plot.sh: gnuplot is not installed" >&2; exit 1; }
raw=$out/results.jsonl
[ -s "$raw" ] || { echo "shares-plot.sh: no $raw" >&2; exit 1; }
mkdir -p "$out/logs"
field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^,\"}]*\).*/\1/p"; }
# throughput.dat: SMs, native green, Tandem (GFLOP/s)
for n in $(grep '"step":"a"' "$raw" | field sms | sort -n -u); do
  g=$(grep '"step":"a"' "$raw" | grep "\"sms\":$n," | grep '"via":"native"' | grep '"mode":"green"' | field gflops | head -1)
  t=$(grep '"step":"a"' "$raw" | grep "\"sms\":$n," | grep -v '"via":"native"' | field gflops | head -1)
  echo "$n ${g:-NaN} ${t:-NaN}"
done >"$out/logs/throughput.dat"
[ -s "$out/logs/throughput.dat" ] || echo "8 NaN NaN" >"$out/logs/throughput.dat"
# resize-STREAMS.dat: kernel index, latency ms, SMs seen (Tandem)
for st in 1 16 64; do
  grep '"test":"resize"' "$raw" | grep "\"streams\":$st," | grep -v '"via":"native"' |
    awk '{ k = $0; sub(/.*"kernel":/, "", k); sub(/,.*/, "", k); m = $0; sub(/.*"ms":/, "", m); sub(/,.*/, "", m)
           s = $0; sub(/.*"sms_seen":/, "", s); sub(/,.*/, "", s); print k, m, s }' >"$out/logs/resize-$st.dat"
  [ -s "$out/logs/resize-$st.dat" ] || echo "0 NaN NaN" >"$out/logs/resize-$st.dat"
done
# table6.dat: G-Apps, then C-App mean and sd natively, through Tandem, then the G-Apps' mean
# (the mean of their means) natively and through Tandem; NaN where not run.
awk '
  function f(s, k,   m) { if (match(s, "\"" k "\":\"?[^,\"}]*")) { m = substr(s, RSTART, RLENGTH); sub(/^"[^"]*":"?/, "", m); return m } return "" }
  f($0, "step") == "c" {
    b = f($0, "bes"); k = f($0, "via") == "native" ? "n" : "t"
    if (f($0, "test") == "lc") { cm[k, b] = f($0, "mean_ms"); cs[k, b] = f($0, "sd_ms") }
    if (f($0, "test") == "gapp") { gm[k, b] += f($0, "mean_ms"); gc[k, b]++ }
  }
  function v(a, k, b) { return ((k SUBSEP b) in a) ? a[k, b] : "NaN" }
  END { for (b = 0; b <= 4; b++)
          printf "%d %s %s %s %s %s %s\n", b, v(cm, "n", b), v(cs, "n", b), v(cm, "t", b), v(cs, "t", b),
            (gc["n", b] ? gm["n", b] / gc["n", b] : "NaN"), (gc["t", b] ? gm["t", b] / gc["t", b] : "NaN") }
' "$raw" >"$out/logs/table6.dat"
title=$(sed -n 's/.*"device":"\([^"]*\)".*/\1/p' "$out/meta.json" 2>/dev/null | head -1)
has() { grep -q "$1" "$raw" && echo 1 || echo 0; }
gnuplot -e "out='$out'; title='${title:-GPU}'; have_a=$(has '"step":"a"'); have_b=$(has '"test":"resize"'); have_c=$(has '"test":"lc"')" \
  "$here/shares.gp" || exit 1
echo "shares-plot.sh: $out/shares.png"
