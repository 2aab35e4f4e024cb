#!/usr/bin/env bash
# Draws OUT/timeline.png from bench/control-plane/timeline.sh's OUT (timeline.tsv, decisions.tsv,
# apps.tsv), where gnuplot is (the GPU host may have none: run this afterwards on the fetched
# results).  Usage: bench/control-plane/timeline-plot.sh OUT
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$(cd "${1:?usage: timeline-plot.sh OUT}" && pwd) || exit 1
command -v gnuplot >/dev/null || { echo "timeline-plot.sh: gnuplot is not installed" >&2; exit 1; }
for f in timeline.tsv decisions.tsv apps.tsv; do [ -s "$out/$f" ] || { echo "timeline-plot.sh: no $out/$f" >&2; exit 1; }; done
mkdir -p "$out/plot"
apps=$(head -1 "$out/timeline.tsv" | cut -f6- | tr '\t' ' ')
napps=$(wc -w <<<"$apps")
[ "$napps" -ge 1 ] || { echo "timeline-plot.sh: no application in $out/timeline.tsv" >&2; exit 1; }
for a in $apps; do awk -F'\t' -v a="$a" '$2 == a' "$out/apps.tsv" >"$out/plot/$a.tsv"; done
# each decision's marker: time and the action, for the kinds drawn
awk -F'\t' '$4 ~ /^(place|release|scale-up|scale-down|migrate|hold)$/ { print $1 "\t" $4 "\t" $2 }' "$out/decisions.tsv" \
  >"$out/plot/marks.tsv"
sim=$(grep -q "SIMULATED" "$out/table7.txt" 2>/dev/null && echo 1 || echo 0)
gnuplot -e "out='$out'; apps='$apps'; napps=$napps; sim=$sim" "$here/timeline.gp" || exit 1
echo "timeline-plot.sh: $out/timeline.png"
