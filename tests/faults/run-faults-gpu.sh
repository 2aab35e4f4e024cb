#!/usr/bin/env bash
# The fault table on a real GPU (docs/faults.md), in one run:
#  (a) each trigger natively, alone: its exit status and observed error
#  (b) without MPS: the victim next to each trigger (must survive)
#  (c) under MPS (a control daemon with its own pipe/log dirs): victim and
#      trigger as MPS clients: does the victim die?
#  (d) through Tandem: tandem-server --backend cuda --mps start (trigger's
#      server) and a second server --mps attach (victim's server), the
#      programs through the guest library.
# Every program runs under `timeout`; daemons and servers are stopped at the
# end even on failure.  Usage: run-faults-gpu.sh [BUNDLE] (default
# .device-faults, made by scripts/gpu-bundle.sh).  Results go to $OUT (or
# ./fault-results) as results.tsv and table.md.
set -uo pipefail
B=$(cd "${1:-.device-faults}" && pwd)
R=${OUT:-$PWD/fault-results}
mkdir -p "$R"
RUN=$(mktemp -d /tmp/tandem-faults.XXXXXX)
export PATH="$PATH:/usr/local/nvidia/bin"
TRIGGERS="sm_oob am_cpu am_gpu am_vmm zombie non_migratable ce_oob ce_am pbdma_oob stack_overflow illegal_instruction shared_local_oob misaligned invalid_address_space"
NATIVE_ITERS=${NATIVE_ITERS:-200000}
TANDEM_ITERS=${TANDEM_ITERS:-20000}
SERVERS=()

cleanup() {
  for p in "${SERVERS[@]}"; do kill "$p" 2>/dev/null; done
  sleep 1
  for d in "$RUN"/mps-native "$RUN"/tandem/mps-*; do
    [ -S "$d/pipe/control" ] || [ -p "$d/pipe/control" ] || [ -e "$d/pipe/control" ] || continue
    echo quit | CUDA_MPS_PIPE_DIRECTORY="$d/pipe" CUDA_MPS_LOG_DIRECTORY="$d/log" timeout 20 nvidia-cuda-mps-control >/dev/null 2>&1
  done
}
trap cleanup EXIT

observed() { grep -o 'observed [A-Za-z]*' "$1" | head -1 | cut -d' ' -f2; }
victim_result() { # FILE STATUS REF -> survived(ok|checksum!)|died:ERR|timeout
  if [ "$2" = 0 ]; then
    if [ "$(grep '^victim iterations' "$1")" = "$3" ]; then echo survived; else echo "survived-bad-checksum"; fi
  elif [ "$2" = 124 ]; then echo "timeout"
  else echo "DIED:$(grep -o 'cudaError[A-Za-z]*' "$1" | head -1)"; fi
}
wait_running() { for _ in $(seq 1 300); do grep -q 'victim: running' "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }

# victim + trigger: $1 label, $2 trigger, $3 iters, $4 victim-env, $5 trigger-env, $6 ref line
pair() {
  local label=$1 t=$2 it=$3 venv=$4 tenv=$5 ref=$6 vo="$RUN/$1-$2.victim" to="$RUN/$1-$2.trigger"
  env $venv timeout 60 "$B/faults/victim" "$it" >"$vo" 2>&1 & local vp=$!
  wait_running "$vo" || echo "($label $t: victim not running)" >&2
  env $tenv timeout 30 "$B/faults/$t" >"$to" 2>&1; local ts=$?
  local overlap=yes; kill -0 $vp 2>/dev/null || overlap=no
  wait $vp; local vs=$?
  echo "$ts:$(observed "$to")|$(victim_result "$vo" $vs "$ref")|overlap=$overlap"
}

{
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv,noheader
} | tee "$R/device.txt"

echo "== (a) native, alone"
for t in $TRIGGERS; do
  timeout 30 "$B/faults/$t" >"$RUN/alone-$t" 2>&1; s=$?
  eval "alone_$t='$s:$(observed "$RUN/alone-$t")'"
  echo "$t: $(eval echo \$alone_$t)"; sed 's/^/    /' "$RUN/alone-$t" | head -8
done

echo "== (b) native, no MPS"
timeout 120 "$B/faults/victim" "$NATIVE_ITERS" >"$RUN/ref-native" 2>&1
REF_NATIVE=$(grep '^victim iterations' "$RUN/ref-native"); echo "reference: $REF_NATIVE"
for t in $TRIGGERS; do
  eval "nomps_$t='$(pair nomps $t "$NATIVE_ITERS" "" "" "$REF_NATIVE")'"; echo "$t: $(eval echo \$nomps_$t)"
done

echo "== (c) native, MPS"
M="$RUN/mps-native"; mkdir -p "$M/pipe" "$M/log"
MENV="CUDA_MPS_PIPE_DIRECTORY=$M/pipe CUDA_MPS_LOG_DIRECTORY=$M/log"
# The daemon must not hold this script's stdout open.
if env $MENV timeout 20 nvidia-cuda-mps-control -d </dev/null >"$M/log/start.out" 2>&1; then
  for t in $TRIGGERS; do
    eval "mps_$t='$(pair mps $t "$NATIVE_ITERS" "$MENV" "$MENV" "$REF_NATIVE")'"; echo "$t: $(eval echo \$mps_$t)"
    sleep 1   # a faulted MPS server shuts down before the next clients come
  done
  echo quit | env $MENV timeout 20 nvidia-cuda-mps-control
  tail -5 "$M/log/control.log" 2>/dev/null
else
  echo "cannot start an MPS control daemon"; for t in $TRIGGERS; do eval "mps_$t='no-mps'"; done
fi

echo "== (d) through Tandem, servers under MPS"
TL="$B/lib:$B/deps"
start_server() { # $1 portfile $2 log, rest: args
  local pf=$1 log=$2; shift 2
  LD_LIBRARY_PATH="$B/deps" timeout 300 "$B/bin/tandem-server" --backend cuda --port 0 --port-file "$pf" "$@" 2>"$log" &
  SERVERS+=($!); LAST=$!
  for _ in $(seq 1 200); do [ -s "$pf" ] && return 0; kill -0 $LAST 2>/dev/null || return 1; sleep 0.05; done; return 1
}
stop_server() { kill "$1" 2>/dev/null; for _ in $(seq 1 200); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done; kill -9 "$1"; }
start_server "$RUN/ref.port" "$RUN/ref-server.log" && {
  REF_P=$(cat "$RUN/ref.port"); RS=$LAST
  LD_LIBRARY_PATH=$TL TANDEM_SERVER=tcp://127.0.0.1:$REF_P TANDEM_QUIET=1 timeout 120 "$B/faults/victim" "$TANDEM_ITERS" >"$RUN/ref-tandem" 2>&1
  stop_server $RS; }
REF_TANDEM=$(grep '^victim iterations' "$RUN/ref-tandem"); echo "reference: $REF_TANDEM"
for t in $TRIGGERS; do
  rm -f "$RUN"/t1.port "$RUN"/t2.port
  if start_server "$RUN/t1.port" "$RUN/tandem-$t-s1.log" --mps start --mps-run-dir "$RUN/tandem"; then
    S1=$LAST; PIPE=$(ls -d "$RUN"/tandem/mps-*/pipe | tail -1)
    if start_server "$RUN/t2.port" "$RUN/tandem-$t-s2.log" --mps attach "$PIPE"; then
      S2=$LAST
      E1="LD_LIBRARY_PATH=$TL TANDEM_QUIET=1 TANDEM_SERVER=tcp://127.0.0.1:$(cat "$RUN/t1.port")"
      E2="LD_LIBRARY_PATH=$TL TANDEM_QUIET=1 TANDEM_SERVER=tcp://127.0.0.1:$(cat "$RUN/t2.port")"
      eval "tandem_$t='$(pair tandem $t "$TANDEM_ITERS" "$E2" "$E1" "$REF_TANDEM")'"
      stop_server $S2
    else eval "tandem_$t='attach-failed'"; fi
    stop_server $S1
    rm -rf "$RUN"/tandem/mps-*
  else eval "tandem_$t='server-failed'"; sed 's/^/    /' "$RUN/tandem-$t-s1.log" | tail -3; fi
  echo "$t: $(eval echo \$tandem_$t)"
done

{
  echo "| trigger | alone (status:error) | victim, no MPS | victim, MPS | through Tandem (--mps start) |"
  echo "|---|---|---|---|---|"
  for t in $TRIGGERS; do
    echo "| $t | $(eval echo \$alone_$t) | $(eval echo \$nomps_$t) | $(eval echo \$mps_$t) | $(eval echo \$tandem_$t) |"
  done
} | tee "$R/table.md"
# One file: the device tool brings back only a few files.
for f in "$RUN"/alone-* "$RUN"/*.victim "$RUN"/*.trigger "$RUN"/*.log; do echo "== $f"; head -20 "$f"; done >"$R/logs.txt" 2>&1
true
