#!/usr/bin/env bash
# bench/pytorch/run.sh: torchvision inference natively and through Tandem (issue 15), in one run,
# printed side by side with Flyt's Table 8 (seed 004: batch 30, images/s, native / Flyt over shm
# / Flyt over TCP).  Stock PyTorch runs through Tandem's driver (scripts/tandem-run) against a
# tandem-server --backend cuda this script starts, over shm and over tcp.
#   usage: bench/pytorch/run.sh --bundle DIR [--out DIR] [--iters N] [--models LIST] [--dtypes LIST]
#          bench/pytorch/run.sh --replot DIR    (table.txt and ratios.png again from DIR/results.tsv,
#                                                where gnuplot is: the GPU host may lack it)
# DIR is a bundle from scripts/gpu-bundle.sh (or a build directory).  Writes results.tsv (one
# line per mode, model and dtype: images/s, checksum, status), table.txt and, with gnuplot,
# ratios.png into --out (default bench/results/DATE-pytorch).  Exit 1 when a run failed or a
# Tandem checksum differs from native's.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
bundle="" out="" replot="" iters=20 models="resnet50 vgg16 efficientnet_b0 densenet121" dtypes="fp32 fp16"
while [ $# -gt 0 ]; do
  case $1 in
    --bundle) bundle=$2; shift ;;
    --replot) replot=$2; shift ;;
    --out) out=$2; shift ;;
    --iters) iters=$2; shift ;;
    --models) models=${2//,/ }; shift ;;
    --dtypes) dtypes=${2//,/ }; shift ;;
    *) echo "usage: $0 --bundle DIR [--out DIR] [--iters N] [--models LIST] [--dtypes LIST] | --replot DIR" >&2; exit 2 ;;
  esac
  shift
done
# table.txt (beside Flyt's Table 8) and, with gnuplot, ratios.png from $out/results.tsv; fails
# when a Tandem checksum differs from native's.  gpu and when: the header's device and date.
report() {
  local gpu=$1 when=$2
  {
    echo "# torchvision inference, batch 30, images/s; $gpu; $when"
    echo "# Flyt (seed 004, Table 8a: 8 SMs per service, fp32): native / over shm / over TCP"
    awk -F'\t' '
      BEGIN { flyt["resnet50"] = "300 / 20.0 / 2.0"; flyt["vgg16"] = "296 / 55.0 / 5.2"
              flyt["efficientnet_b0"] = "305 / 19.7 / 1.7"; flyt["densenet121"] = "308 / 8.1 / 0.9"
              printf "%-16s %-5s %9s %9s %7s %9s %7s  %-8s %s\n", "model", "dtype", "native", "shm", "ratio", "tcp", "ratio", "checksum", "Flyt n/shm/tcp" }
      NR == 1 { next }
      { k = $2 " " $3; ips[$1, k] = $4; sum[$1, k] = $5; st[$1, k] = $6; if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
      END {
        for (i = 1; i <= n; i++) {
          k = order[i]; split(k, f, " ")
          nat = ips["native", k]; s = ips["shm", k]; t = ips["tcp", k]
          rs = (nat > 0 && s > 0) ? sprintf("%.2fx", s / nat) : "-"; rt = (nat > 0 && t > 0) ? sprintf("%.2fx", t / nat) : "-"
          same = (sum["shm", k] == sum["native", k] && sum["tcp", k] == sum["native", k]) ? "equal" : "DIFFER"
          printf "%-16s %-5s %9s %9s %7s %9s %7s  %-8s %s\n", f[1], f[2], nat, s, rs, t, rt, same, (f[2] == "fp32" ? flyt[f[1]] : "")
        }
      }' "$out/results.tsv"
  } | tee "$out/table.txt"
  if command -v gnuplot >/dev/null; then
    awk -F'\t' 'NR > 1 { k = $2 "-" $3; v[$1, k] = $4; if (!(k in s)) { s[k] = 1; o[++n] = k } }
      END { for (i = 1; i <= n; i++) { k = o[i]; nat = v["native", k] + 0
        printf "%s %s %s\n", k, (nat > 0 && v["shm", k] > 0 ? v["shm", k] / nat : 0), (nat > 0 && v["tcp", k] > 0 ? v["tcp", k] / nat : 0) } }' \
      "$out/results.tsv" >"$out/ratios.dat"
    gnuplot -e "set terminal png size 900,420 noenhanced; set output '$out/ratios.png'; set style data histograms; set style fill solid;
      set ylabel 'images/s through Tandem / native'; set yrange [0:1.6]; set xtics rotate by -30;
      set title 'torchvision inference, batch 30 (goal: 0.9 over shm, 0.5 over tcp)';
      plot '$out/ratios.dat' using 2:xtic(1) title 'shm', '' using 3 title 'tcp'" 2>/dev/null || true
  fi
  ! grep -q DIFFER "$out/table.txt"
}

if [ -n "$replot" ]; then   # the header of the run's own table is kept
  out=$(cd "$replot" && pwd)
  hdr=$(head -1 "$out/table.txt" | sed 's/^# torchvision inference, batch 30, images\/s; //')
  report "${hdr%; *}" "${hdr##*; }"
  exit $?
fi
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
printf 'mode\tmodel\tdtype\timages_per_s\tchecksum\tstatus\n' >"$out/results.tsv"
fail=0
run_one() {   # mode model dtype
  local mode=$1 model=$2 dtype=$3 log="$out/logs/$1-$2-$3.log" line
  case $mode in
    native) timeout 900 python3 "$here/infer.py" "$model" "$dtype" --iters "$iters" >"$log" 2>&1 ;;
    shm) TANDEM_SERVER="shm:$shm" TANDEM_LIB="$bundle/lib" timeout 900 "$root/scripts/tandem-run" \
           python3 "$here/infer.py" "$model" "$dtype" --iters "$iters" >"$log" 2>&1 ;;
    tcp) TANDEM_SERVER="tcp://127.0.0.1:$port" TANDEM_LIB="$bundle/lib" timeout 900 "$root/scripts/tandem-run" \
           python3 "$here/infer.py" "$model" "$dtype" --iters "$iters" >"$log" 2>&1 ;;
  esac
  line=$(grep '^{' "$log" | tail -1)
  if [ -n "$line" ]; then
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("%s\t%s\t%s\t%.1f\t%.6e\tok" % (sys.argv[2], d["model"], d["dtype"], d["images_per_s"], d["checksum"]))' \
      "$line" "$mode" >>"$out/results.tsv"
  else
    printf '%s\t%s\t%s\t-\t-\tfailed: %s\n' "$mode" "$model" "$dtype" \
      "$(grep -v '^ ' "$log" | tail -1 | tr '\t' ' ' | cut -c1-160)" >>"$out/results.tsv"
    fail=1
  fi
  echo "pytorch-bench: $mode $model $dtype: $(tail -1 "$out/results.tsv" | cut -f4,6)" >&2
}
for model in $models; do
  for dtype in $dtypes; do
    for mode in native shm tcp; do run_one "$mode" "$model" "$dtype"; done
  done
done
report "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)" "$(date -u +%FT%TZ)" || fail=1
exit $fail
