#!/usr/bin/env bash
# Draws the resize through the control plane (tests/gpu/run-control-plane-gpu.sh's output,
# e.g. bench/results/DATE-...-control-plane/PASS): the SMs each kernel ran on against its start
# time relative to `tandemctl share`, one line per stream count.  Needs gnuplot.
#   bench/shares/resize-plot.sh DIR   -> DIR/resize.png
set -euo pipefail
dir=${1:?usage: resize-plot.sh DIR}
for s in 1 16 64; do
  t0=$(sed -n "s/.*\"streams\":$s,.*\"request_wall_ms\":\([0-9]*\).*/\1/p" "$dir/requests.jsonl" | head -1)
  [ -n "$t0" ] || continue
  sed -n 's/.*"kernel":\([0-9]*\),"ms":\([0-9.]*\),"sms_seen":\([0-9]*\),.*"wall_ms":\([0-9.]*\).*/\4 \3 \2/p' \
    "$dir/resize-$s.jsonl" | awk -v t0="$t0" '{ printf "%.3f %s %s\n", $1 - t0, $2, $3 }' >"$dir/resize-$s.dat"
done
gnuplot <<GP
set terminal pngcairo size 900,420 font ",10"
set output "$dir/resize.png"
set title "SM share 8 -> 66 through tandemctl share -> orchestrator -> node agent -> server ($(basename "$dir"))"
set xlabel "kernel start, ms after tandemctl share"
set ylabel "SMs the kernel ran on"
set xrange [-60:80]
set yrange [0:80]
set key top left
set arrow from 0,0 to 0,80 nohead dt 2
plot for [s in "1 16 64"] "$dir/resize-".s.".dat" using 1:2 with linespoints title s." streams"
GP
echo "resize-plot.sh: $dir/resize.png"
