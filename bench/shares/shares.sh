#!/usr/bin/env bash
# bench/shares/shares.sh: SM shares on the GPU (issue 17, docs/sm-shares.md), measured with
# bench/shares/shares.cu natively and through Tandem (cuda backend on a GPU host; --backend sim
# runs the Tandem half on the simulated GPU, to test the script, and skips the native runs).
#   (a) throughput of a compute-bound kernel at 8, 16, 33, 66 and 132 SMs: natively on the whole
#       GPU, natively in a green context of N SMs, through Tandem with --session-sms N
#   (b) resize latency with 1, 16 and 64 streams: through Tandem from share 8 to 66 (the change
#       asked with --test-share-at-work): the server's time from the request to the streams
#       moved, and the first kernel at the new share; natively the same resize done by the
#       program (a green context and N streams)
#   (c) Flyt's Table 6: a latency-critical (C-App) N x N FP32 matmul (--n, 4096: 0.1-0.4 s a
#       call on 8 SMs) on 8 SMs beside 0 to 4 best-effort G-Apps running the same matmul, for
#       --t6-ms each (6000).  --t6-layout flyt (the default, Flyt's own: a VM budget of 16 SMs,
#       8 the C-App's, the G-Apps sharing the other 8): natively one process, the G-Apps in one
#       green context of 8 SMs; through Tandem two servers, the C-App's with --sm-window 0:8,
#       the G-Apps' with --sm-window 8:8 (each session --session-sms 8), both clients of an MPS
#       daemon started here (two processes without MPS would time-slice the GPU: the C-App took
#       602 ms a call beside one G-App instead of 277 on the H200, 2026-12-01).  --t6-layout own: each
#       G-App on 8 SMs of its own (natively a green context each; through Tandem one server,
#       every session --session-sms 8).  Per configuration the C-App's and the G-Apps' mean +-
#       sd, and the C-App mean's variation across configurations, beside Flyt's
#   (d) MPS per-context SM affinity (CU_EXEC_AFFINITY_TYPE_SM_COUNT) under a daemon started here
#       with CUDA_MPS_ENABLE_PER_CTX_DEVICE_MULTIPROCESSOR_PARTITIONING=1: context creation time,
#       throughput and SMs seen at each count (skip with --no-mps)
# Every step says what it runs and has a time limit; a failing step is reported and the others go
# on.  Writes OUT/results.jsonl (every line the program printed, tagged), OUT/table.txt,
# OUT/logs/, and OUT/meta.json; the plot is drawn afterwards where gnuplot is
# (bench/shares/shares-plot.sh OUT).
#
#   bench/shares/shares.sh [--bundle DIR | --build DIR] [--out DIR] [--only a,b,c,d] [--ms T]
#                          [--n N] [--t6-ms T] [--t6-layout flyt|own] [--no-mps] [--backend cuda|sim]
# Step (c) alone on the GPU, about 2 minutes: shares.sh --bundle .device --only c
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lib=$here/../lib.sh
[ -e "$lib" ] || lib=$here/lib.sh   # the bundle keeps every bench script in one folder
source "$lib"

usage() { sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; }
build="" out="" bundle="" backend=cuda smoke=0 ms=3000 mps=1 only=abcd t6_n="" t6_ms=6000 t6_layout=flyt
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=${2:-}; shift ;;
    --bundle) bundle=${2:-}; shift ;;
    --out) out=${2:-}; shift ;;
    --ms) ms=${2:-}; shift ;;
    --only) only=${2:-}; shift ;;
    --n) t6_n=${2:-}; shift ;;
    --t6-ms) t6_ms=${2:-}; shift ;;
    --t6-layout) t6_layout=${2:-}; shift ;;
    --backend) backend=${2:-}; shift ;;
    --no-mps) mps=0 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
[[ $ms =~ ^[1-9][0-9]*$ ]] || die "--ms takes milliseconds"
[[ $t6_ms =~ ^[1-9][0-9]*$ ]] || die "--t6-ms takes milliseconds"
[[ $only =~ ^[abcd,]+$ ]] || die "--only takes steps a, b, c, d (e.g. --only c or --only a,b)"
case $backend in cuda|sim) ;; *) die "--backend cuda or sim" ;; esac
case $t6_layout in flyt|own) ;; *) die "--t6-layout flyt or own" ;; esac
want() { [[ $only == *$1* ]]; }

bench_locate shares
bench_backend
bench_outdir "$slug-shares"
bench_library_paths
declare -A srv_pid srv_ep srv_waiter srv_status
trap 'server_stop_all 2>/dev/null' EXIT
raw=$out/results.jsonl
: >"$raw"
failed=0 steps=0
# The sim runs every kernel as a C twin on the host: small sizes, and the share model's time per
# wave (--sim-wave-us) stands in for the GPU's (docs/sm-shares.md).
if [ "$backend" = sim ]; then
  sim_args=(--sim-wave-us 2000) iters=(--iters 4) t6_n=${t6_n:-128}
  echo "shares: SIMULATED GPU (sim backend): the native runs and step (d) are skipped; figures not claimed"
else
  sim_args=() iters=() t6_n=${t6_n:-4096}
fi
[[ $t6_n =~ ^[1-9][0-9]*$ ]] || die "--n takes the matmul's size"
echo "shares: device: $device, driver $driver; steps $only; results in $out"

# run NAME TAGS MODE ARGS...: the program natively (MODE native) or through the server
# named by MODE; its JSON lines go to results.jsonl with TAGS ("k":"v",...) in front.
run() {
  local name=$1 tags=$2 mode=$3 log=$out/logs/$1 rc
  shift 3
  local -a envv=(LD_LIBRARY_PATH="$native_ld")
  [ "$mode" = native ] || envv=(LD_LIBRARY_PATH="$tandem_ld" TANDEM_SERVER="${srv_ep[$mode]}" TANDEM_QUIET=1)
  # A sanitized build's guest library needs its runtimes first in the uninstrumented program.
  [ "$mode" = native ] || [ -z "$preload" ] || envv+=(LD_PRELOAD="$preload")
  steps=$((steps + 1))
  if [ "$mode" = native ] && [ "$backend" = sim ]; then
    echo "shares: [$steps] $name: skipped (no GPU: the sim backend runs only through Tandem)"
    return 0
  fi
  echo "shares: [$steps] $name: $mode: shares $*"
  timeout "${run_limit:-300}" env "${envv[@]}" "$progs/shares" "$@" >"$log.out" 2>"$log.err"
  rc=$?
  if [ $rc -ne 0 ] || ! grep -q '^{' "$log.out"; then
    echo "shares: [$steps] $name FAILED (exit $rc$([ $rc = 124 ] && echo ": timed out after ${run_limit:-300} s")): $(tail -2 "$log.err" | tr '\n' ' ')" >&2
    failed=$((failed + 1))
    return 1
  fi
  grep '^{' "$log.out" | sed "s/^{/{$tags,\"via\":\"$mode\",/" >>"$raw"
}

# serve NAME ARGS...: a tandem-server for the next runs (alone: the others are stopped);
# serve_also NAME ARGS...: one more beside those running.  A failure is reported.
serve() {
  server_stop_all 2>/dev/null
  serve_also "$@"
}
serve_also() {
  local name=$1
  shift
  echo "shares: tandem-server $* ${sim_args[*]} ($name)"
  server_start "$name" "$@" "${sim_args[@]}" && return 0
  echo "shares: tandem-server $* did not start: $(tail -3 "$out/logs/$name.log" | tr '\n' ' ')" >&2
  failed=$((failed + 1))
  return 1
}

# ---- (a) throughput at each share ----
sms_list=(8 16 33 66 132)
if want a; then
  a_ms=$ms
  [ "$backend" = sim ] && a_ms=300
  run a-native-whole '"step":"a","sms":132' native throughput --ms "$a_ms"
  for n in "${sms_list[@]}"; do
    run "a-native-green-$n" "\"step\":\"a\",\"sms\":$n" native throughput --green "$n" --ms "$a_ms"
    serve "a$n" --session-sms "$n" &&
      run "a-tandem-$n" "\"step\":\"a\",\"sms\":$n" "a$n" throughput --ms "$a_ms" "${iters[@]}"
  done
  server_stop_all
fi

# ---- (b) resize latency, 8 -> 66 SMs ----
# The program's work before its timed kernels: a memset, a launch per stream, a check (two
# copies and a memset); then 3 per kernel (a launch, a copy, a memset) and a 4th every 16th
# (shares.cu, run_resize).  The change is asked as the 20th timed kernel is launched; the
# results show where it took effect (sms_seen).
if want b; then
  kernels=40
  for streams in 1 16 64; do
    work=$((1 + streams + 3 + 3 * 20 + 20 / 16 + 1))
    if serve "b$streams" --session-sms 8 --test-share-at-work "$work:66"; then
      run "b-tandem-$streams" "\"step\":\"b\",\"streams\":$streams" "b$streams" resize --streams "$streams" \
        --kernels "$kernels" "${iters[@]}"
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
fi

# ---- (c) Flyt's Table 6 ----
# Through Tandem: the G-Apps are guests of their own (each a session of 8 SMs), started first;
# with --t6-layout flyt they are sessions of a server of their own whose window is SMs 8-15,
# beside the C-App's server with SMs 0-7, so they share their 8 SMs as Flyt's do;
# each touches a ready file after its warm-up call, and the C-App starts once all did (at most
# 60 s).  A stop file ends them after the C-App; each prints its own latencies.
if want c; then
  t6_tags() { printf '"step":"c","bes":%s' "$1"; }
  t6_mps=()
  if [ "$t6_layout" = flyt ] && [ "$backend" = cuda ]; then
    cdir=$out/logs/mps-c
    mkdir -p "$cdir/pipe" "$cdir/log"
    echo "shares: nvidia-cuda-mps-control -d for step (c)'s two servers (pipe $cdir/pipe)"
    if CUDA_MPS_PIPE_DIRECTORY=$cdir/pipe CUDA_MPS_LOG_DIRECTORY=$cdir/log timeout 30 nvidia-cuda-mps-control -d; then
      sleep 1
      t6_mps=(--mps attach "$cdir/pipe")
    else
      echo "shares: the MPS daemon did not start: step (c) through Tandem would time-slice; not run" >&2
      failed=$((failed + 1))
    fi
  fi
  run_limit=$(( (t6_ms / 1000) * 3 + 90 ))
  for bes in 0 1 2 3 4; do
    gsrv=c$bes
    if [ "$t6_layout" = flyt ]; then
      run "c-native-$bes" "$(t6_tags "$bes")" native table6 --bes "$bes" --n "$t6_n" --ms "$t6_ms" --be-shared
      [ "$backend" = cuda ] && [ ${#t6_mps[@]} = 0 ] && continue
      serve "c$bes" --session-sms 8 --sm-window 0:8 "${t6_mps[@]}" || continue
      gsrv=g$bes
      serve_also "g$bes" --session-sms 8 --sm-window 8:8 "${t6_mps[@]}" || continue
    else
      run "c-native-$bes" "$(t6_tags "$bes")" native table6 --bes "$bes" --n "$t6_n" --ms "$t6_ms"
      serve "c$bes" --session-sms 8 || continue
    fi
    stop=$out/logs/c$bes.stop
    rm -f "$stop" "$out"/logs/c"$bes".ready.*
    pids=()
    for i in $(seq "$bes"); do
      echo "shares: [c, $bes G-Apps] G-App $i: $gsrv: shares be --n $t6_n --stop $stop"
      gapp_env=(LD_LIBRARY_PATH="$tandem_ld" TANDEM_SERVER="${srv_ep[$gsrv]}" TANDEM_QUIET=1)
      [ -z "$preload" ] || gapp_env+=(LD_PRELOAD="$preload")
      timeout "$run_limit" env "${gapp_env[@]}" \
        "$progs/shares" be --n "$t6_n" --ms $((run_limit * 1000)) --stop "$stop" --ready "$out/logs/c$bes.ready.$i" \
        --bes "$bes" >"$out/logs/c-tandem-$bes-gapp$i.out" 2>"$out/logs/c-tandem-$bes-gapp$i.err" &
      pids+=($!)
    done
    ready=0
    for _ in $(seq 600); do
      ready=$(find "$out/logs" -maxdepth 1 -name "c$bes.ready.*" | wc -l)
      [ "$ready" -ge "$bes" ] && break
      # G-Apps that all ended (failed at start) will never be ready: no point waiting 60 s.
      alive=0
      for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
      [ "$alive" = 0 ] && break
      sleep 0.1
    done
    [ "$ready" -ge "$bes" ] || echo "shares: [c, $bes G-Apps] only $ready of $bes G-Apps warmed up in 60 s; the C-App runs anyway" >&2
    run "c-tandem-$bes" "$(t6_tags "$bes")" "c$bes" lc --n "$t6_n" --ms "$t6_ms" --bes "$bes"
    touch "$stop"
    i=0
    for p in "${pids[@]}"; do
      i=$((i + 1))
      if wait "$p" && grep -q '^{' "$out/logs/c-tandem-$bes-gapp$i.out"; then
        grep '^{' "$out/logs/c-tandem-$bes-gapp$i.out" | sed "s/\"app\":1,/\"app\":$i,/; s/^{/{$(t6_tags "$bes"),\"via\":\"$gsrv\",/" >>"$raw"
      else
        echo "shares: [c, $bes G-Apps] G-App $i FAILED: $(tail -2 "$out/logs/c-tandem-$bes-gapp$i.err" | tr '\n' ' ')" >&2
        failed=$((failed + 1))
      fi
    done
  done
  unset run_limit
  server_stop_all
  if [ ${#t6_mps[@]} -gt 0 ]; then
    echo quit | CUDA_MPS_PIPE_DIRECTORY=$cdir/pipe timeout 30 nvidia-cuda-mps-control
    sleep 1
  fi
fi

# ---- (d) MPS per-context SM affinity ----
if want d && [ $mps = 1 ] && [ "$backend" = cuda ]; then
  mdir=$out/logs/mps
  mkdir -p "$mdir/pipe" "$mdir/log"
  export CUDA_MPS_PIPE_DIRECTORY=$mdir/pipe CUDA_MPS_LOG_DIRECTORY=$mdir/log
  echo "shares: nvidia-cuda-mps-control -d (per-context SM partitioning)"
  if CUDA_MPS_ENABLE_PER_CTX_DEVICE_MULTIPROCESSOR_PARTITIONING=1 timeout 30 nvidia-cuda-mps-control -d; then
    sleep 1
    for n in "${sms_list[@]}"; do
      run "d-mps-$n" "\"step\":\"d\",\"sms\":$n" native mps --sms "$n" --ms "$ms"
    done
    echo quit | timeout 30 nvidia-cuda-mps-control
    sleep 1
  else
    echo "shares: the MPS daemon did not start: step (d) not run" >&2
    failed=$((failed + 1))
  fi
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
fi

# ---- the table ----
awk -f "$here/shares-table.awk" -v device="$device" -v driver="$driver" -v t6_layout="$t6_layout" "$raw" | tee "$out/table.txt"
printf '{%s,"ms":%s,"matmul_n":%s,"t6_ms":%s,"t6_layout":"%s","steps":"%s","failed_steps":%d}\n' "$(meta_common)" "$ms" \
  "$t6_n" "$t6_ms" "$t6_layout" "$only" "$failed" >"$out/meta.json"
if command -v gnuplot >/dev/null 2>&1; then
  "$here/shares-plot.sh" "$out" || echo "shares: the plot failed; the table is in $out/table.txt" >&2
else
  echo "shares: no gnuplot here: draw the plot with bench/shares/shares-plot.sh $out"
fi
[ $failed = 0 ] && echo "shares: done: $out" || echo "shares: $failed step(s) FAILED (see $out/logs); the rest: $out"
exit $((failed > 0))
