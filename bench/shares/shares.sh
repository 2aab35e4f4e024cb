#!/usr/bin/env bash
# bench/shares/shares.sh: SM shares on the GPU (issue 17, docs/sm-shares.md), measured with
# bench/shares/shares.cu natively and through Tandem (cuda backend; a GPU host only).
#   (a) throughput of a compute-bound kernel at 8, 16, 33, 66 and 132 SMs: natively on the whole
#       GPU, natively in a green context of N SMs, through Tandem with --session-sms N
#   (b) resize latency with 1, 16 and 64 streams: through Tandem from share 8 to 66 (the change
#       asked with --test-share-at-work until the control socket's set_share is merged): the
#       server's time from the request to the streams moved, and the first kernel at the new
#       share; natively the same resize done by the program (a green context and N streams)
#   (c) Flyt's Table 6: a latency-critical matmul on 8 SMs beside 0 to 4 best-effort loads:
#       natively (one process: the best-effort ones share the other 8 SMs of a 16-SM budget) and
#       through Tandem (every session --session-sms 8; each best-effort one gets 8 SMs of its own)
#   (d) MPS per-context SM affinity (CU_EXEC_AFFINITY_TYPE_SM_COUNT) under a daemon started here
#       with CUDA_MPS_ENABLE_PER_CTX_DEVICE_MULTIPROCESSOR_PARTITIONING=1: context creation time,
#       throughput and SMs seen at each count (skip with --no-mps)
# Every step says what it runs; a failing step is reported and the others go on.  Writes
# OUT/results.jsonl (every line the program printed, tagged), OUT/table.txt, OUT/logs/, and
# OUT/meta.json; the plot is drawn afterwards where gnuplot is (bench/shares/shares-plot.sh OUT).
#
#   bench/shares/shares.sh [--bundle DIR | --build DIR] [--out DIR] [--ms T] [--no-mps]
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lib=$here/../lib.sh
[ -e "$lib" ] || lib=$here/lib.sh   # the bundle keeps every bench script in one folder
source "$lib"

usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; }
build="" out="" bundle="" backend=cuda smoke=0 ms=3000 mps=1
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=${2:-}; shift ;;
    --bundle) bundle=${2:-}; shift ;;
    --out) out=${2:-}; shift ;;
    --ms) ms=${2:-}; shift ;;
    --no-mps) mps=0 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
[[ $ms =~ ^[1-9][0-9]*$ ]] || die "--ms takes milliseconds"

bench_locate shares
bench_backend
bench_outdir "$slug-shares"
bench_library_paths
declare -A srv_pid srv_ep srv_waiter srv_status
trap 'server_stop_all 2>/dev/null' EXIT
raw=$out/results.jsonl
: >"$raw"
failed=0 steps=0
echo "shares: device: $device, driver $driver; results in $out"

# run NAME TAGS MODE ARGS...: the program natively (MODE native) or through the server
# named by MODE; its JSON lines go to results.jsonl with TAGS ("k":"v",...) in front.
run() {
  local name=$1 tags=$2 mode=$3 log=$out/logs/$1 rc
  shift 3
  local -a envv=(LD_LIBRARY_PATH="$native_ld")
  [ "$mode" = native ] || envv=(LD_LIBRARY_PATH="$tandem_ld" TANDEM_SERVER="${srv_ep[$mode]}" TANDEM_QUIET=1)
  steps=$((steps + 1))
  echo "shares: [$steps] $name: $mode: shares $*"
  timeout 300 env "${envv[@]}" "$progs/shares" "$@" >"$log.out" 2>"$log.err"
  rc=$?
  if [ $rc -ne 0 ] || ! grep -q '^{' "$log.out"; then
    echo "shares: [$steps] $name FAILED (exit $rc): $(tail -2 "$log.err" | tr '\n' ' ')" >&2
    failed=$((failed + 1))
    return 1
  fi
  grep '^{' "$log.out" | sed "s/^{/{$tags,\"via\":\"$mode\",/" >>"$raw"
}

# serve NAME ARGS...: a tandem-server for the next runs; a failure is reported.
serve() {
  local name=$1
  shift
  server_stop_all 2>/dev/null
  echo "shares: tandem-server $* ($name)"
  server_start "$name" "$@" && return 0
  echo "shares: tandem-server $* did not start: $(tail -3 "$out/logs/$name.log" | tr '\n' ' ')" >&2
  failed=$((failed + 1))
  return 1
}

# ---- (a) throughput at each share ----
sms_list=(8 16 33 66 132)
run a-native-whole '"step":"a","sms":132' native throughput --ms "$ms"
for n in "${sms_list[@]}"; do
  run "a-native-green-$n" "\"step\":\"a\",\"sms\":$n" native throughput --green "$n" --ms "$ms"
  serve "a$n" --session-sms "$n" &&
    run "a-tandem-$n" "\"step\":\"a\",\"sms\":$n" "a$n" throughput --ms "$ms"
done
server_stop_all

# ---- (b) resize latency, 8 -> 66 SMs ----
# The program's work before its timed kernels: a memset, a launch per stream, a check (two
# copies and a memset); then 4 per kernel (a launch, a check).  The change is asked as the
# 20th timed kernel is launched; the results show where it took effect (sms_seen).
kernels=40
for streams in 1 16 64; do
  work=$((1 + streams + 3 + 4 * 20 + 1))
  if serve "b$streams" --session-sms 8 --test-share-at-work "$work:66"; then
    run "b-tandem-$streams" "\"step\":\"b\",\"streams\":$streams" "b$streams" resize --streams "$streams" \
      --kernels "$kernels"
    # the GPU grants whole SM groups: 66 asked may run on 68 (docs/sm-shares.md)
    line=$(grep -o 'runs on [0-9]* SMs from its next work, [0-9.]* ms after the request ([0-9]* streams moved)' \
      "$out/logs/b$streams.log" | head -1)
    ms_apply=$(printf '%s' "$line" | sed -n 's/.*work, \([0-9.]*\) ms.*/\1/p')
    echo "{\"step\":\"b\",\"streams\":$streams,\"via\":\"b$streams\",\"test\":\"server_apply\",\"ms\":${ms_apply:-null}}" >>"$raw"
    [ -n "$line" ] || { echo "shares: the server did not log the change (b, $streams streams)" >&2; failed=$((failed + 1)); }
  fi
  run "b-native-$streams" "\"step\":\"b\",\"streams\":$streams" native resize --streams "$streams" \
    --kernels "$kernels" --green 8 --to 66
done
server_stop_all

# ---- (c) Flyt's Table 6 ----
t6_ms=$((ms * 3))
for bes in 0 1 2 3 4; do
  run "c-native-$bes" "\"step\":\"c\",\"bes\":$bes" native table6 --bes "$bes" --ms "$t6_ms"
  if serve "c$bes" --session-sms 8; then
    pids=()
    for i in $(seq "$bes"); do
      env LD_LIBRARY_PATH="$tandem_ld" TANDEM_SERVER="${srv_ep[c$bes]}" TANDEM_QUIET=1 \
        timeout 300 "$progs/shares" be --ms $((t6_ms + 2000)) >"$out/logs/c-tandem-$bes-be$i.out" 2>&1 &
      pids+=($!)
    done
    sleep 1   # the best-effort loads are running
    run "c-tandem-$bes" "\"step\":\"c\",\"bes\":$bes" "c$bes" lc --ms "$t6_ms"
    for p in "${pids[@]}"; do wait "$p" || { echo "shares: a best-effort load failed (c, $bes)" >&2; failed=$((failed + 1)); }; done
  fi
done
server_stop_all

# ---- (d) MPS per-context SM affinity ----
if [ $mps = 1 ]; then
  mdir=$out/logs/mps
  mkdir -p "$mdir/pipe" "$mdir/log"
  export CUDA_MPS_PIPE_DIRECTORY=$mdir/pipe CUDA_MPS_LOG_DIRECTORY=$mdir/log
  echo "shares: nvidia-cuda-mps-control -d (per-context SM partitioning)"
  if CUDA_MPS_ENABLE_PER_CTX_DEVICE_MULTIPROCESSOR_PARTITIONING=1 nvidia-cuda-mps-control -d; then
    sleep 1
    for n in "${sms_list[@]}"; do
      run "d-mps-$n" "\"step\":\"d\",\"sms\":$n" native mps --sms "$n" --ms "$ms"
    done
    echo quit | nvidia-cuda-mps-control
    sleep 1
  else
    echo "shares: the MPS daemon did not start: step (d) not run" >&2
    failed=$((failed + 1))
  fi
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
fi

# ---- the table ----
awk -f "$here/shares-table.awk" -v device="$device" -v driver="$driver" "$raw" | tee "$out/table.txt"
printf '{%s,"ms":%s,"failed_steps":%d}\n' "$(meta_common)" "$ms" "$failed" >"$out/meta.json"
if command -v gnuplot >/dev/null 2>&1; then
  "$here/shares-plot.sh" "$out" || echo "shares: the plot failed; the table is in $out/table.txt" >&2
else
  echo "shares: no gnuplot here: draw the plot with bench/shares/shares-plot.sh $out"
fi
[ $failed = 0 ] && echo "shares: done: $out" || echo "shares: $failed step(s) FAILED (see $out/logs); the rest: $out"
exit $((failed > 0))
