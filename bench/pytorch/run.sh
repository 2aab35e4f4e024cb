#!/usr/bin/env bash
# bench/pytorch/run.sh: torchvision inference natively and through Tandem (issue 15), in one run,
# printed side by side with Flyt's Table 8 (seed 004: batch 30, images/s, native / Flyt over shm
# / Flyt over TCP).  Stock PyTorch runs through Tandem's driver (scripts/tandem-run) against a
# tandem-server --backend cuda this script starts, over shm and over tcp.
#   usage: bench/pytorch/run.sh --bundle DIR [--out DIR] [--iters N] [--seconds S] [--rounds N] [--models LIST] [--dtypes LIST]
#          bench/pytorch/run.sh --replot DIR    (table.txt and ratios.png again from DIR/results.tsv,
#                                                where gnuplot is: the GPU host may lack it)
# DIR is a bundle from scripts/gpu-bundle.sh (or a build directory).  --rounds N (default 3):
# N interleaved rounds (round 1 runs every configuration native, shm, tcp, each mode in one
# process; round 2 shm, tcp, native; ...), so that drift (clocks, other load) falls on all three
# alike; the table gives medians and min-max.  --seconds S: each configuration's measurement
# lasts at least S seconds (default 3).
# Writes results.tsv (one line per round, mode, model and dtype: images/s, checksum, status: every
# raw figure), logs/MODE-rROUND.log, table.txt and, with gnuplot,
# ratios.png into --out (default bench/results/DATE-pytorch).  Exit 1 when a run failed or a
# Tandem checksum differs from native's.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
bundle="" out="" replot="" iters=20 seconds=3 rounds=3 models="resnet50 vgg16 efficientnet_b0 densenet121" dtypes="fp32 fp16"
while [ $# -gt 0 ]; do
  case $1 in
    --bundle) bundle=$2; shift ;;
    --replot) replot=$2; shift ;;
    --out) out=$2; shift ;;
    --iters) iters=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --models) models=${2//,/ }; shift ;;
    --dtypes) dtypes=${2//,/ }; shift ;;
    *) echo "usage: $0 --bundle DIR [--out DIR] [--iters N] [--seconds S] [--rounds N] [--models LIST] [--dtypes LIST] | --replot DIR" >&2; exit 2 ;;
  esac
  shift
done
# table.txt (beside Flyt's Table 8: medians over the rounds, ratios of the medians, min-max;
# bench/pytorch/table.awk) and, with gnuplot, ratios.png from $out/results.tsv; fails when a
# Tandem checksum differs from its round's native one.  gpu, when: the header's device and date.
report() {
  local gpu=$1 when=$2 rounds
  rounds=$(awk -F'\t' 'NR > 1 && $1 ~ /^[0-9]+$/ { r[$1] = 1 } END { n = 0; for (k in r) n++; print n ? n : 1 }' \
    "$out/results.tsv")
  {
    echo "# torchvision inference, batch 30, images/s; $gpu; $when"
    echo "# median of $rounds interleaved round(s), ratios of the medians; Flyt (seed 004, Table 8a: 8 SMs per service, fp32): native / over shm / over TCP"
    awk -F'\t' -f "$here/table.awk" "$out/results.tsv"
  } | tee "$out/table.txt"
  if command -v gnuplot >/dev/null; then
    awk -F'\t' -v what=ratios -f "$here/table.awk" "$out/results.tsv" >"$out/ratios.dat"
    gnuplot -e "set terminal png size 900,420 noenhanced; set output '$out/ratios.png'; set style data histograms; set style fill solid;
      set ylabel 'images/s through Tandem / native (medians)'; set yrange [0:2]; set xtics rotate by -30;
      set title 'torchvision inference, batch 30, median of $rounds round(s) (goal: 0.9 over shm, 0.5 over tcp)';
      plot '$out/ratios.dat' using 2:xtic(1) title 'shm', '' using 3 title 'tcp'" 2>/dev/null || true
  fi
  ! grep -q DIFFER "$out/table.txt"
}

if [ -n "$replot" ]; then   # the header of the run's own table is kept
  out=$(cd "$replot" && pwd)
  hdr=$(head -1 "$out/table.txt" | sed 's/^# torchvision inference, batch 30, images\/s; //')
  report "${hdr%; *}" "${hdr##*; }" && exit 0
  exit 1
fi
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --rounds wants a positive number, not '$rounds'" >&2; exit 2; }
[ -n "$bundle" ] || { echo "run.sh: --bundle DIR is required" >&2; exit 2; }
bundle=$(cd "$bundle" && pwd)
out=${out:-$root/bench/results/$(date +%F)-pytorch}
mkdir -p "$out/logs"
[ -d "$bundle/deps" ] && export LD_LIBRARY_PATH="$bundle/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
port=$((7900 + RANDOM % 90)) shm=pytorch-bench-$$
"$bundle/bin/tandem-server" --backend cuda --port "$port" --shm "$shm" >"$out/logs/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
sleep 2
printf 'round\tmode\tmodel\tdtype\timages_per_s\tchecksum\tstatus\n' >"$out/results.tsv"
fail=0
# One process per round and mode measures every configuration (infer.py), so Python, torch and
# the session start once per mode a round.  A configuration that failed or printed nothing is a
# row saying why, not the end of the benchmark.
configs=""
for model in $models; do for dtype in $dtypes; do configs+=" $model:$dtype"; done; done
run_round_mode() {   # round mode
  local round=$1 mode=$2 log="$out/logs/$2-r$1.log" cfg model dtype line
  case $mode in
    native) timeout 900 python3 "$here/infer.py" $configs --iters "$iters" --seconds "$seconds" >"$log" 2>&1 || true ;;
    shm) TANDEM_SERVER="shm:$shm" TANDEM_LIB="$bundle/lib" timeout 900 "$root/scripts/tandem-run" \
           python3 "$here/infer.py" $configs --iters "$iters" --seconds "$seconds" >"$log" 2>&1 || true ;;
    tcp) TANDEM_SERVER="tcp://127.0.0.1:$port" TANDEM_LIB="$bundle/lib" timeout 900 "$root/scripts/tandem-run" \
           python3 "$here/infer.py" $configs --iters "$iters" --seconds "$seconds" >"$log" 2>&1 || true ;;
  esac
  for cfg in $configs; do
    model=${cfg%%:*} dtype=${cfg#*:}
    line=$(grep "^{\"model\": \"$model\", \"dtype\": \"$dtype\"" "$log" | tail -1 || true)
    if [ -n "$line" ] && ! grep -q '"error"' <<<"$line"; then
      python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("%s\t%s\t%s\t%s\t%.1f\t%.6e\tok" % (sys.argv[3], sys.argv[2], d["model"], d["dtype"], d["images_per_s"], d["checksum"]))' \
        "$line" "$mode" "$round" >>"$out/results.tsv"
    else
      local why
      if [ -n "$line" ]; then why=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["error"])' "$line")
      else why=$( (grep -v -e '^ ' -e '^{' "$log" || true) | tail -1); fi
      printf '%s\t%s\t%s\t%s\t-\t-\tfailed: %s\n' "$round" "$mode" "$model" "$dtype" \
        "$(tr '\t' ' ' <<<"$why" | cut -c1-160)" >>"$out/results.tsv"
      fail=1
    fi
    echo "pytorch-bench: round $round/$rounds $mode $model $dtype: $(tail -1 "$out/results.tsv" | cut -f5,7)" >&2
  done
}
# The order of the modes turns each round (native shm tcp, then shm tcp native, ...), so that what
# drifts within a round (clocks, other load on the host) does not always fall on the same mode.
modes=(native shm tcp)
for round in $(seq "$rounds"); do
  for k in 0 1 2; do run_round_mode "$round" "${modes[$(( (k + round - 1) % 3 ))]}"; done
done
report "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)" "$(date -u +%FT%TZ)" || fail=1
exit $fail
