#!/usr/bin/env bash
# Draws OUT/shares.png from the results of bench/shares/shares.sh (gnuplot is absent on the GPU
# host: run this afterwards where it is).  Usage: bench/shares/shares-plot.sh OUT
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$(cd "${1:?usage: shares-plot.sh RESULTS_DIR}" && pwd)
command -v gnuplot >/dev/null || { echo "shares-plot.sh: gnuplot is not installed" >&2; exit 1; }
raw=$out/results.jsonl
mkdir -p "$out/logs"
field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^,\"}]*\).*/\1/p"; }
# throughput.dat: SMs, native green, Tandem (GFLOP/s)
for n in $(grep '"step":"a"' "$raw" | field sms | sort -n -u); do
  g=$(grep '"step":"a"' "$raw" | grep "\"sms\":$n," | grep '"via":"native"' | grep '"mode":"green"' | field gflops | head -1)
  t=$(grep '"step":"a"' "$raw" | grep "\"sms\":$n," | grep -v '"via":"native"' | field gflops | head -1)
  echo "$n ${g:-NaN} ${t:-NaN}"
done >"$out/logs/throughput.dat"
# resize-STREAMS.dat: kernel index, latency ms, SMs seen (Tandem)
for st in 1 16 64; do
  grep '"test":"resize"' "$raw" | grep "\"streams\":$st," | grep -v '"via":"native"' |
    awk '{ k = $0; sub(/.*"kernel":/, "", k); sub(/,.*/, "", k); m = $0; sub(/.*"ms":/, "", m); sub(/,.*/, "", m)
           s = $0; sub(/.*"sms_seen":/, "", s); sub(/,.*/, "", s); print k, m, s }' >"$out/logs/resize-$st.dat"
done
# table6.dat: best-effort count, variation % native, Tandem
for b in 0 1 2 3 4; do
  nv=$(grep '"test":"lc"' "$raw" | grep "\"bes\":$b," | grep '"via":"native"' | field cv_pct | head -1)
  tv=$(grep '"test":"lc"' "$raw" | grep "\"bes\":$b," | grep -v '"via":"native"' | field cv_pct | head -1)
  echo "$b ${nv:-NaN} ${tv:-NaN}"
done >"$out/logs/table6.dat"
title=$(sed -n 's/.*"device":"\([^"]*\)".*/\1/p' "$out/meta.json" 2>/dev/null | head -1)
gnuplot -e "out='$out'; title='${title:-GPU}'" "$here/shares.gp"
echo "shares-plot.sh: $out/shares.png"
