#!/usr/bin/env bash
# bench/plot.sh RESULTS_DIR: draws the PNG plots of a benchmark run from its
# results.json alone, into RESULTS_DIR (for runs made on a host without
# gnuplot, drawn back here).  The transport suite (plotdata.awk, plots.gp):
#   bandwidth.png  cudaMemcpy GB/s against size: pinned/pageable x H2D/D2H
#   latency.png    null calls, launch cost, create/destroy pairs (median us)
#   apps.png       application time relative to native (or in ms, on sim)
# The takeover suite (takeover-plotdata.awk, takeover-plots.gp):
#   recovery.png   every kill's recovery time per buffer size, against the
#                  target and the published system's range
#   shadowing.png  time with a standby relative to no standby (and to native)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/results-lines.sh"
[ $# -eq 1 ] || { echo "usage: bench/plot.sh RESULTS_DIR" >&2; exit 2; }
dir=$(cd "$1" && pwd)
command -v gnuplot >/dev/null 2>&1 || { echo "plot.sh: gnuplot is not installed" >&2; exit 1; }
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
lines=$(bench_result_lines "$dir/results.json")
case $(printf '%s\n' "$lines" | head -1) in *'"suite":"takeover"'*) suite=takeover ;; *) suite=transport ;; esac
# How many rows each data file has: a plot with nothing to draw is skipped
# (a run with --only has measured only part of the suite).
rows() { grep -vc '^#' "$data/$1.dat" || true; }
rm -f "$dir/bandwidth.png" "$dir/latency.png" "$dir/apps.png" "$dir/recovery.png" "$dir/shadowing.png"
if [ $suite = takeover ]; then
  printf '%s\n' "$lines" | awk -v dir="$data" -f "$here/common.awk" -f "$here/takeover-plotdata.awk" "$here/targets.tsv" -
  { read -r title; read -r simulated; read -r has_native; read -r target; read -r pub_lo; read -r pub_hi; } \
    <"$data/meta.txt"
  title=${title//\"/\'}
  vars="data='$data'; out='$dir'; title=\"$title\"; simulated=$simulated; has_native=$has_native"
  vars+="; target=$target; pub_lo=$pub_lo; pub_hi=$pub_hi; n_recovery=$(rows recovery); n_overhead=$(rows overhead)"
  vars+="; n_recovery_buffers=$(rows median)"
  gnuplot -e "$vars" "$here/takeover-plots.gp"
  pngs="recovery shadowing"
else
  printf '%s\n' "$lines" | awk -v dir="$data" -f "$here/common.awk" -f "$here/plotdata.awk"
  { read -r title; read -r simulated; read -r has_native; } <"$data/meta.txt"
  title=${title//\"/\'}
  vars="data='$data'; out='$dir'; title=\"$title\"; simulated=$simulated; has_native=$has_native"
  for f in bw-pinned-h2d bw-pinned-d2h bw-pageable-h2d bw-pageable-d2h latency apps; do
    vars+="; n_${f//-/_}=$(rows "$f")"
  done
  gnuplot -e "$vars" "$here/plots.gp"
  pngs="bandwidth latency apps"
fi
drawn=""
for p in $pngs; do [ -e "$dir/$p.png" ] && drawn+=" $dir/$p.png"; done
echo "plots:${drawn:- none (no data to plot)}"
