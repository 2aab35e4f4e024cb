#!/usr/bin/env bash
# bench/pytorch/table.awk (bench/pytorch/run.sh's table), one case a line (CI: bench_pytorch_table):
# medians over interleaved rounds, ratios of the medians, min-max, failed runs left out, checksums
# compared per round, a results.tsv from before --rounds, and ratios.dat for the plot.
set -euo pipefail
awkf=$(cd "$(dirname "$0")/.." && pwd)/pytorch/table.awk
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
hdr='round\tmode\tmodel\tdtype\timages_per_s\tchecksum\tstatus\n'
# rows MODE:IPS:SUM ... for resnet50 fp32, round by round (a '|' starts the next round)
rows() {
  local r=1 m
  printf "$hdr"
  for m in "$@"; do
    if [ "$m" = "|" ]; then r=$((r + 1)); continue; fi
    IFS=: read -r mode ips sum <<<"$m"
    printf '%s\t%s\tresnet50\tfp32\t%s\t%s\tok\n' "$r" "$mode" "$ips" "$sum"
  done
}
# case NAME WANT(regex) AWK-ARGS -- ROWS...: the output has a line matching WANT
case_() {
  local name=$1 want=$2 args=$3 out
  shift 4
  rows "$@" >"$tmp/r.tsv"
  # shellcheck disable=SC2086
  out=$(awk -F'\t' $args -f "$awkf" "$tmp/r.tsv")
  if grep -qE -- "$want" <<<"$out"; then echo "ok   $name"; else echo "FAIL $name: no /$want/ in:"; sed 's/^/    /' <<<"$out"; fails=$((fails + 1)); fi
}
three=(native:1000:1 shm:900:1 tcp:400:1 '|' native:1600:1 shm:800:1 tcp:500:1 '|' native:1200:1 shm:850:1 tcp:450:1)
case_ "medians of three rounds and ratios of the medians" \
  '^resnet50 +fp32 +1200\.0 +850\.0 +0\.71x +450\.0 +0\.38x +equal ' "" -- "${three[@]}"
case_ "min-max of each mode" '1000\.0-1600\.0 +800\.0-900\.0 +400\.0-500\.0 ' "" -- "${three[@]}"
case_ "an even count: the mean of the middle two" '^resnet50 +fp32 +1100\.0 +850\.0 ' "" -- \
  native:1000:1 shm:900:1 '|' native:1200:1 shm:800:1
case_ "a failed run is left out of the median" '^resnet50 +fp32 +1200\.0 +800\.0 ' "" -- \
  native:1200:1 shm:-:- '|' native:1000:1 shm:800:1 '|' native:1400:1 shm:-:-
case_ "a checksum differing in one round only" ' DIFFER ' "" -- \
  native:1000:1 shm:900:1 tcp:400:1 '|' native:1000:2 shm:900:2 tcp:400:3
case_ "a mode that did not run is no differing checksum" '^resnet50 +fp32 +1000\.0 +900\.0 +0\.90x +- +- +equal ' "" -- \
  native:1000:1 shm:900:1
case_ "checksums equal per round though rounds differ" ' equal ' "" -- \
  native:1000:1 shm:900:1 tcp:400:1 '|' native:1000:2 shm:900:2 tcp:400:2
case_ "ratios.dat from the medians" '^resnet50-fp32 0\.708333 0\.375$' "-v what=ratios" -- "${three[@]}"
printf 'mode\tmodel\tdtype\timages_per_s\tchecksum\tstatus\nnative\tvgg16\tfp16\t500.0\t1\tok\nshm\tvgg16\tfp16\t250.0\t1\tok\ntcp\tvgg16\tfp16\t100.0\t1\tok\n' >"$tmp/old.tsv"
if awk -F'\t' -f "$awkf" "$tmp/old.tsv" | grep -qE '^vgg16 +fp16 +500\.0 +250\.0 +0\.50x +100\.0 +0\.20x +equal'; then
  echo "ok   a results.tsv from before --rounds is one round"
else
  echo "FAIL a results.tsv from before --rounds is one round"; fails=$((fails + 1))
fi
[ "$fails" -eq 0 ]
