#!/usr/bin/env bash
# Takeover of a stock-PyTorch inference loop under a real MPS fault (issue 15, docs/takeover.md,
# docs/driver-api.md), over a bundle from scripts/gpu-bundle.sh (default .device).  Report in
# $OUT (default /tmp/tandem-pytorch-takeover)/takeover.txt.
#
# tests/gpu/pytorch_loop.py serves N batches of ResNet50 (deterministic settings) and prints a
# SHA-256 of every batch's output.  It runs:
#   native             plain PyTorch on the GPU: the reference
#   clean/T            through Tandem's libcuda.so.1 (scripts/tandem-run) over transport T (tcp,
#                      shm), an active server that is an MPS client, a standby outside MPS: no fault
#   fault/T            the same, and after the loop's 10th batch another MPS client (the fault
#                      trigger tests/faults/sm_oob, a plain CUDA program: another tenant of the GPU)
#                      faults; MPS ends every client, the active server with it, and the loop must
#                      resume on the standby and print every batch's hash equal to native's
#   failback/T         the same fault, then a new active server in MPS takes the session back from
#                      the standby (--failback-from) while the loop runs (200 ms between batches, so
#                      the loop is still serving when the new server is up): every hash equal again
# TRANSPORTS="tcp shm" and MODES="clean fault failback" (the defaults) choose the steps.
# Each step says what it runs; a failing step is reported and the others go on.  Exit 1 when a
# hash differs from native's or a step failed.
set -uo pipefail
B=$(cd "${1:-.device}" && pwd) || { echo "run-pytorch-takeover-gpu: no bundle" >&2; exit 1; }
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/tandem-pytorch-takeover}
BATCHES=${BATCHES:-60}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$B/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CUBLAS_WORKSPACE_CONFIG=:4096:8   # deterministic cuBLAS (torch.use_deterministic_algorithms)
CUDA_LIB=/usr/local/cuda/lib64
LOOP="$SRC/tests/gpu/pytorch_loop.py"
report="$OUT/takeover.txt"
RUN=$(mktemp -d /tmp/tandem-pyt.XXXX)
fails=0
log() { echo "$*" | tee -a "$report"; }
: >"$report"
log "date: $(date -u +%Y-%m-%dT%H:%MZ)"
log "gpu: $(nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv,noheader)"
log "torch: $(python3 -c 'import torch; print(torch.__version__)' 2>&1)"

SERVER_PREFIX=pyt
source "$(dirname "$0")/servers.sh"   # start_server, stop_server

hashes() { grep '^batch ' "$1" | sed 's/ ms=.*//'; }

log ""
log "== native reference: $BATCHES batches of ResNet50, batch 30"
LD_LIBRARY_PATH="$CUDA_LIB:$LD_LIBRARY_PATH" timeout 600 python3 "$LOOP" --batches "$BATCHES" \
  >"$OUT/native.out" 2>"$OUT/native.err"
ns=$?
hashes "$OUT/native.out" >"$RUN/native.hashes"
log "native: exit $ns, $(wc -l <"$RUN/native.hashes") batches, $(grep 'loop: done' "$OUT/native.out")"
[ "$ns" = 0 ] && [ "$(wc -l <"$RUN/native.hashes")" = "$BATCHES" ] || { log "FAILED: the native reference"; fails=$((fails + 1)); }

M="$RUN/mps"; mkdir -p "$M/pipe" "$M/log"
MENV="CUDA_MPS_PIPE_DIRECTORY=$M/pipe CUDA_MPS_LOG_DIRECTORY=$M/log"
if ! env $MENV timeout 20 nvidia-cuda-mps-control -d </dev/null >"$M/log/start.out" 2>&1; then
  log "FAILED: the MPS daemon did not start: $(cat "$M/log/start.out")"
  exit 1
fi
log "MPS daemon started (pipe $M/pipe)"

# one MODE TRANSPORT: a loop through Tandem, with (fault) or without (clean) an MPS fault.
one() {
  local mode=$1 tr=$2 name="$1-$2" ep lp st t0 t1 pause=20
  [ "$mode" = failback ] && pause=200
  log ""
  log "== $name"
  start_server sb --standby-listen "$RUN/sb.sock" || { fails=$((fails + 1)); return; }
  start_server act --standby "$RUN/sb.sock" --mps attach "$M/pipe" || { stop_server sb; fails=$((fails + 1)); return; }
  ep=$EP_act; [ "$tr" = shm ] && ep=$SHM_act
  TANDEM_SERVER="$ep" TANDEM_LIB="$B/lib" TANDEM_LOG_ERRORS=1 timeout 600 "$SRC/scripts/tandem-run" \
    python3 "$LOOP" --batches "$BATCHES" --pause-ms "$pause" >"$OUT/$name.out" 2>"$OUT/$name.err" &
  lp=$!
  if [ "$mode" != clean ]; then
    for _ in $(seq 1800); do grep -q "loop: ready" "$OUT/$name.out" 2>/dev/null && break; kill -0 $lp 2>/dev/null || break; sleep 0.1; done
    if grep -q "loop: ready" "$OUT/$name.out"; then
      t0=$(date +%s.%N)
      env $MENV LD_LIBRARY_PATH="$CUDA_LIB:$LD_LIBRARY_PATH" timeout 60 "$B/faults/sm_oob" >"$OUT/$name.trigger" 2>&1
      log "trigger sm_oob (another MPS client): exit $? at $(grep -c '^batch ' "$OUT/$name.out") batches served"
      if [ "$mode" = failback ]; then
        for _ in $(seq 200); do grep -q "resumed on" "$OUT/$name.err" && break; sleep 0.05; done
        sleep 2   # the faulted MPS server lets its clients go before a new one comes
        start_server n --mps attach "$M/pipe" --standby-listen "$RUN/n.sock" --standby "$RUN/sb.sock" \
          --failback-from "$RUN/sb.sock" ||
          fails=$((fails + 1))
        for _ in $(seq 300); do grep -q "moved to" "$OUT/$name.err" && break; kill -0 $lp 2>/dev/null || break; sleep 0.05; done
        log "fail-back: $(grep -o 'moved to .* in [0-9.]* ms' "$OUT/$name.err" | head -1 || true) at $(grep -c '^batch ' "$OUT/$name.out") batches served"
      fi
    else
      log "FAILED: the loop never got ready: $(tail -3 "$OUT/$name.err" | tr '\n' ' ')"
      fails=$((fails + 1))
    fi
  fi
  wait $lp; st=$?
  hashes "$OUT/$name.out" >"$RUN/$name.hashes"
  local same=no; cmp -s "$RUN/$name.hashes" "$RUN/native.hashes" && same=yes
  local lost=no; grep -q "device context is lost\|context-fatal" "$OUT/act.log" && lost=yes
  local resumed; resumed=$(grep -h "resumed on\|replayed) in" "$OUT/$name.err" | head -2 | tr '\n' ' ')
  log "$(printf '%-10s exit=%s batches=%s equal_to_native=%s active_lost_context=%s %s' "$name" "$st" \
    "$(wc -l <"$RUN/$name.hashes")" "$same" "$lost" "$(grep 'loop: done' "$OUT/$name.out")")"
  [ -n "$resumed" ] && log "    guest: $resumed"
  grep -h "resum" "$OUT/sb.log" | head -3 | sed 's/^/    standby: /' | tee -a "$report" >/dev/null
  if [ "$st" != 0 ] || [ $same != yes ]; then
    fails=$((fails + 1))
    log "    FAILED: see $OUT/$name.err (last lines: $(grep -v '^ ' "$OUT/$name.err" | tail -3 | tr '\n' ' '))"
    diff "$RUN/native.hashes" "$RUN/$name.hashes" | head -6 | sed 's/^/    /' | tee -a "$report" >/dev/null
  fi
  if [ "$mode" != clean ] && [ -z "$resumed" ]; then
    log "    FAILED: no takeover seen (the fault did not end the active, or the guest did not resume)"
    fails=$((fails + 1))
  fi
  if [ "$mode" = failback ] && ! grep -q "moved to" "$OUT/$name.err"; then
    log "    FAILED: the session did not move back to the new active"
    fails=$((fails + 1))
  fi
  cp "$OUT/act.log" "$OUT/$name.act.log"; cp "$OUT/sb.log" "$OUT/$name.sb.log"
  [ "$mode" = failback ] && cp "$OUT/n.log" "$OUT/$name.n.log"
  stop_server n; stop_server act; stop_server sb
  sleep 1   # a faulted MPS server lets its clients go before the next ones come
}

# TRANSPORTS and MODES (defaults: tcp shm; clean fault failback) choose the steps.
for tr in ${TRANSPORTS:-tcp shm}; do
  for mode in ${MODES:-clean fault failback}; do one "$mode" "$tr"; done
done
echo quit | env $MENV nvidia-cuda-mps-control >/dev/null 2>&1
log ""
log "failures: $fails"
rm -rf "$RUN"
exit $((fails > 0))
