#!/usr/bin/env bash
# Takeover on a GPU host (docs/takeover.md), over a bundle from
# scripts/gpu-bundle.sh (default .device).  Report in $OUT (default
# /tmp/tandem-takeover).
#  (a) crash points: an active server (cuda backend) mirrored to a standby
#      dies by SIGKILL at call N of each example; the output must equal the
#      native run.
#  (b) faults under MPS: an MPS control daemon with its own directories; the
#      victim's server and the trigger's server are its clients, the standby
#      runs outside MPS.  For each SM fault and each reachable MMU fault the
#      victim must finish with the checksum of a fault-free native run.
#  (c) memory: the standby's GPU memory (nvidia-smi) with no session, and
#      with a session holding 1 GiB mirrored.
set -uo pipefail
B=$(cd "${1:-.device}" && pwd)
OUT=${OUT:-/tmp/tandem-takeover}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$B/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
CUDA_LIB=/usr/local/cuda/lib64
report="$OUT/takeover.txt"
RUN=$(mktemp -d /tmp/tandem-tko.XXXX)
fails=0
log() { echo "$*" | tee -a "$report"; }
: >"$report"
log "date: $(date -u +%Y-%m-%dT%H:%MZ)"
log "gpu: $(nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv,noheader)"

# start_server NAME ARGS...: sets PID_NAME and EP_NAME
start_server() {
  local name=$1; shift
  rm -f "$RUN/$name.port"
  "$B/bin/tandem-server" --backend cuda --port 0 --port-file "$RUN/$name.port" "$@" >/dev/null 2>"$OUT/$name.log" &
  eval "PID_$name=$!"
  for _ in $(seq 300); do [ -s "$RUN/$name.port" ] && break; sleep 0.05; done
  [ -s "$RUN/$name.port" ] || { log "server $name did not start: $(tail -3 "$OUT/$name.log")"; return 1; }
  eval "EP_$name=tcp://127.0.0.1:$(cat "$RUN/$name.port")"
}
stop_server() { local p; p=$(eval echo "\${PID_$1:-}"); [ -n "$p" ] && { kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; }; }
tandem() { LD_LIBRARY_PATH="$B/lib:$LD_LIBRARY_PATH" TANDEM_QUIET=1 TANDEM_SERVER="$1" "${@:2}"; }

log ""
log "== (a) crash points, cuda backend, no MPS"
for ex in vector_add increment_loop streams_events matmul; do
  native=$(LD_LIBRARY_PATH="$CUDA_LIB:$LD_LIBRARY_PATH" "$B/examples/$ex" 2>/dev/null)
  for n in 3 8 20 60 200 700; do
    start_server sb --standby-listen "$RUN/sb.sock" || { fails=$((fails+1)); continue; }
    start_server act --standby "$RUN/sb.sock" --crash-after-calls "$n" || { stop_server sb; fails=$((fails+1)); continue; }
    out=$(tandem "$EP_act" timeout 120 "$B/examples/$ex" 2>"$RUN/guest.err"); rc=$?
    crashed=no; grep -q "crashing at call" "$OUT/act.log" && crashed=yes
    rec=$(grep -o 'replayed) in [0-9.]* ms' "$RUN/guest.err" | grep -o '[0-9.]* ms' || true)
    ok=no; [ $rc -eq 0 ] && [ -n "$native" ] && [ "$out" = "$native" ] && ok=yes
    [ $ok = yes ] || { fails=$((fails+1)); cat "$RUN/guest.err" >>"$OUT/guest-failures.txt"; }
    log "$(printf '%-16s crash@%-4s crashed=%-3s match=%-3s rc=%-3s recovery=%s' "$ex" "$n" "$crashed" "$ok" "$rc" "${rec:--}")"
    stop_server act; stop_server sb
  done
done

log ""
log "== (b) faults under MPS: victim through Tandem with a standby"
M="$RUN/mps"; mkdir -p "$M/pipe" "$M/log"
MENV="CUDA_MPS_PIPE_DIRECTORY=$M/pipe CUDA_MPS_LOG_DIRECTORY=$M/log"
ITERS=${VICTIM_ITERS:-30000}
ref=$(LD_LIBRARY_PATH="$CUDA_LIB:$LD_LIBRARY_PATH" "$B/faults/victim" "$ITERS" 1024 | grep "victim iterations=")
log "fault-free native victim: $ref"
if env $MENV timeout 20 nvidia-cuda-mps-control -d </dev/null >"$M/log/start.out" 2>&1; then
  for t in sm_oob stack_overflow shared_local_oob misaligned invalid_address_space illegal_instruction am_vmm; do
    start_server sb --standby-listen "$RUN/sb.sock" || { fails=$((fails+1)); continue; }
    start_server act --standby "$RUN/sb.sock" --mps attach "$M/pipe" || { stop_server sb; fails=$((fails+1)); continue; }
    start_server trig --mps attach "$M/pipe" || { stop_server act; stop_server sb; fails=$((fails+1)); continue; }
    LD_LIBRARY_PATH="$B/lib:$LD_LIBRARY_PATH" TANDEM_QUIET=1 TANDEM_SERVER="$EP_act" \
      "$B/faults/victim" "$ITERS" 1024 >"$RUN/victim.out" 2>"$RUN/victim.err" &
    vp=$!
    for _ in $(seq 400); do grep -q "victim: running" "$RUN/victim.out" 2>/dev/null && break; sleep 0.05; done
    tandem "$EP_trig" "$B/faults/$t" >"$RUN/trig.out" 2>&1; ts=$?
    alive=no; kill -0 $vp 2>/dev/null && alive=yes
    timeout 300 tail --pid=$vp -f /dev/null; wait $vp; vs=$?
    got=$(grep "victim iterations=" "$RUN/victim.out")
    ok=no; [ $vs -eq 0 ] && [ "$got" = "$ref" ] && ok=yes
    lost=no; grep -q "device context is lost" "$OUT/act.log" && lost=yes
    rec=$(grep -o 'replayed) in [0-9.]* ms' "$RUN/victim.err" | grep -o '[0-9.]* ms' || true)
    [ $ok = yes ] || { fails=$((fails+1)); { echo "== $t"; cat "$RUN/victim.out" "$RUN/victim.err"; } >>"$OUT/victim-failures.txt"; }
    log "$(printf '%-22s trigger=%-3s victim_alive_at_fault=%-3s active_failstop=%-3s victim=%-3s match=%-3s recovery=%s' \
      "$t" "$ts" "$alive" "$lost" "$vs" "$ok" "${rec:--}")"
    cp "$OUT/sb.log" "$OUT/sb-$t.log"; cp "$OUT/act.log" "$OUT/act-$t.log"
    stop_server trig; stop_server act; stop_server sb
    sleep 1    # a faulted MPS server shuts down before the next clients come
  done
  echo quit | env $MENV timeout 20 nvidia-cuda-mps-control >/dev/null 2>&1
else
  log "cannot start an MPS control daemon: $(cat "$M/log/start.out")"; fails=$((fails+1))
fi

log ""
log "== (c) standby memory"
mem_of() { nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits | awk -F', ' -v p="$1" '$1==p{print $2}'; }
start_server sb --standby-listen "$RUN/sb.sock" && start_server act --standby "$RUN/sb.sock" && {
  sleep 1; log "standby alone: $(mem_of "$PID_sb") MiB; active alone: $(mem_of "$PID_act") MiB"
  LD_LIBRARY_PATH="$B/lib:$LD_LIBRARY_PATH" TANDEM_QUIET=1 TANDEM_SERVER="$EP_act" \
    "$B/faults/victim" 100000000 268435456 >/dev/null 2>&1 &
  vp=$!; sleep 4
  log "with one session holding 1 GiB (victim n=268435456): standby $(mem_of "$PID_sb") MiB, active $(mem_of "$PID_act") MiB"
  kill $vp; wait $vp 2>/dev/null
}
stop_server act; stop_server sb
log ""
log "failures: $fails"
rm -rf "$RUN"
exit $((fails > 0))
