#!/usr/bin/env bash
# bench/driver-calls/plot.sh DIR: ns per call of each Driver API entry point, native and
# through Tandem over shm and tcp (log scale), from DIR/table.txt of bench/run.sh --only
# driver-calls; writes DIR/driver-calls.png.  Needs gnuplot.
set -euo pipefail
dir=${1:?usage: bench/driver-calls/plot.sh DIR}
awk '$1 ~ /^drv\./ && $2 == "ns" { sub(/^drv\./, "", $1); print $1, $3, $4, $5 }' "$dir/table.txt" >"$dir/driver-calls.dat"
[ -s "$dir/driver-calls.dat" ] || { echo "plot.sh: no drv.* rows in $dir/table.txt" >&2; exit 1; }
dev=$(sed -n 's/^device: //p' "$dir/table.txt" | head -1)
gnuplot -e "set terminal png size 1000,480 noenhanced; set output '$dir/driver-calls.png';
  set style data histograms; set style fill solid; set logscale y; set yrange [1:*];
  set ylabel 'ns per call (log)'; set xtics rotate by -35; set key top left;
  set title 'Driver API calls, native and through Tandem, ${dev:-GPU}';
  plot '$dir/driver-calls.dat' using 2:xtic(1) title 'native', '' using 3 title 'shm', '' using 4 title 'tcp'"
echo "plot.sh: $dir/driver-calls.png"
