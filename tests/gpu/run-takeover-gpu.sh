#!/usr/bin/env bash
# Takeover on a GPU host (docs/takeover.md), over a bundle from
# scripts/gpu-bundle.sh (default .device).  Report in $OUT (default
# /tmp/tandem-takeover).
#  (a) crash points: an active server (cuda backend) mirrored to a standby
#      dies by SIGKILL at call N of each example, the guest on TCP and on shm
#      (both servers serve shm too); the output must equal the native run.
#  (b) faults under MPS: an MPS control daemon with its own directories; the
#      victim's server and the trigger's server are its clients, the standby
#      runs outside MPS.  For each SM fault and each reachable MMU fault the
#      victim must finish with the checksum of a fault-free native run.
#  (d) after a takeover: the standby protected by its own standby, fail-back
#      into a new MPS active server, and a fault there.
#  (e) the faulting session with a standby: told apart from its victims.
#  (f) releases around the crash: a cudaFree after unacknowledged work, and
#      releases the active served but whose reply it never sent.
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

SERVER_PREFIX=tko
source "$(dirname "$0")/servers.sh"   # start_server, stop_server
tandem() { LD_LIBRARY_PATH="$B/lib:$LD_LIBRARY_PATH" TANDEM_QUIET=1 TANDEM_SERVER="$1" "${@:2}"; }

log ""
log "== (a) crash points, cuda backend, no MPS, guest on tcp and on shm"
for ex in vector_add increment_loop streams_events matmul; do
  native=$(LD_LIBRARY_PATH="$CUDA_LIB:$LD_LIBRARY_PATH" "$B/examples/$ex" 2>/dev/null)
  for tr in tcp shm; do
    for n in 3 8 20 60 200 700; do
      start_server sb --standby-listen "$RUN/sb.sock" || { fails=$((fails+1)); continue; }
      start_server act --standby "$RUN/sb.sock" --crash-after-calls "$n" ||
        { stop_server sb; fails=$((fails+1)); continue; }
      ep=$EP_act; [ $tr = shm ] && ep=$SHM_act
      out=$(tandem "$ep" timeout 120 "$B/examples/$ex" 2>"$RUN/guest.err"); rc=$?
      crashed=no; grep -q "crashing at call" "$OUT/act.log" && crashed=yes
      rec=$(grep -o 'replayed) in [0-9.]* ms' "$RUN/guest.err" | grep -o '[0-9.]* ms' || true)
      ok=no; [ $rc -eq 0 ] && [ -n "$native" ] && [ "$out" = "$native" ] && ok=yes
      [ $ok = yes ] || { fails=$((fails+1)); { echo "== $ex $tr crash@$n"; cat "$RUN/guest.err"; } >>"$OUT/guest-failures.txt"; }
      log "$(printf '%-16s %-3s crash@%-4s crashed=%-3s match=%-3s rc=%-3s recovery=%s' "$ex" "$tr" "$n" "$crashed" "$ok" "$rc" "${rec:--}")"
      stop_server act; stop_server sb
    done
  done
done

log ""
log "== (f) releases around the crash (docs/takeover.md, Releases), guest on tcp and on shm"
log "   unacked: TANDEM_EPOCH_MS=600000, crash before call N of copy-check -s 3 (a cudaFree after"
log "   unacknowledged work); reply: --crash-before-reply, the call served but its reply lost"
cc_native=$(LD_LIBRARY_PATH="$CUDA_LIB:$LD_LIBRARY_PATH" "$B/bin/copy-check" -s 3 2>/dev/null)
se_native=$(LD_LIBRARY_PATH="$CUDA_LIB:$LD_LIBRARY_PATH" "$B/examples/streams_events" 2>/dev/null)
for tr in tcp shm; do
  for plan in "unacked copy-check $(seq -s ' ' 16 3 70)" "reply copy-check $(seq -s ' ' 10 3 70)" \
              "reply streams_events $(seq -s ' ' 30 2 52)"; do
    set -- $plan; mode=$1; prog=$2; shift 2
    runs=0 matched=0 resumed=0 on_release=0
    for n in "$@"; do
      start_server sb --standby-listen "$RUN/sb.sock" || { fails=$((fails+1)); continue; }
      extra=(); [ $mode = reply ] && extra=(--crash-before-reply)
      start_server act --standby "$RUN/sb.sock" --crash-after-calls "$n" "${extra[@]}" ||
        { stop_server sb; fails=$((fails+1)); continue; }
      ep=$EP_act; [ $tr = shm ] && ep=$SHM_act
      if [ $prog = copy-check ]; then cmd=("$B/bin/copy-check" -s 3); native=$cc_native
      else cmd=("$B/examples/streams_events"); native=$se_native; fi
      epoch=(); [ $mode = unacked ] && epoch=(TANDEM_EPOCH_MS=600000)
      out=$(tandem "$ep" env "${epoch[@]}" timeout 120 "${cmd[@]}" 2>"$RUN/guest.err"); rc=$?
      runs=$((runs+1))
      grep -q "resumed on" "$RUN/guest.err" && resumed=$((resumed+1))
      grep -qE "\(procedure (5|10|14)\) before its reply" "$OUT/act.log" && on_release=$((on_release+1))
      if [ $rc -eq 0 ] && [ -n "$native" ] && [ "$out" = "$native" ]; then matched=$((matched+1))
      else fails=$((fails+1)); { echo "== (f) $tr $mode $prog crash@$n"; cat "$RUN/guest.err"; } >>"$OUT/guest-failures.txt"; fi
      stop_server act; stop_server sb
    done
    log "$(printf '%-3s %-7s %-14s runs=%-3s match_native=%-3s resumed=%-3s crash_right_after_a_release=%s' \
      "$tr" "$mode" "$prog" "$runs" "$matched" "$resumed" "$on_release")"
  done
done

log ""
log "== (b) faults under MPS: two victims through Tandem with a standby (v1 on tcp, v2 on shm)"
M="$RUN/mps"; mkdir -p "$M/pipe" "$M/log"
MENV="CUDA_MPS_PIPE_DIRECTORY=$M/pipe CUDA_MPS_LOG_DIRECTORY=$M/log"
ITERS=${VICTIM_ITERS:-30000}
ref=$(LD_LIBRARY_PATH="$CUDA_LIB:$LD_LIBRARY_PATH" "$B/faults/victim" "$ITERS" 1024 | grep "victim iterations=")
log "fault-free native victim: $ref"
if env $MENV timeout 20 nvidia-cuda-mps-control -d </dev/null >"$M/log/start.out" 2>&1; then
  for t in sm_oob stack_overflow shared_local_oob misaligned invalid_address_space illegal_instruction am_vmm; do
    start_server sb --standby-listen "$RUN/sb.sock" || { fails=$((fails+1)); continue; }
    start_server act --standby "$RUN/sb.sock" --mps attach "$M/pipe" || { stop_server sb; fails=$((fails+1)); continue; }
    # Two sessions on the active server, one per transport; the trigger is
    # a third MPS client.
    for i in 1 2; do
      vep=$EP_act; [ $i = 2 ] && vep=$SHM_act
      LD_LIBRARY_PATH="$B/lib:$LD_LIBRARY_PATH" TANDEM_QUIET=1 TANDEM_SERVER="$vep" \
        "$B/faults/victim" "$ITERS" 1024 >"$RUN/victim$i.out" 2>"$RUN/victim$i.err" &
      eval "vp$i=$!"
    done
    for i in 1 2; do
      for _ in $(seq 400); do grep -q "victim: running" "$RUN/victim$i.out" 2>/dev/null && break; sleep 0.05; done
    done
    case $t in
      illegal_instruction|am_vmm)
        # They need the Driver API (a patched cubin, VMM mappings), which
        # the guest library does not forward: the trigger runs as a plain
        # MPS client beside the Tandem server, as any co-located program may.
        how=native
        env $MENV LD_LIBRARY_PATH="$CUDA_LIB:$LD_LIBRARY_PATH" "$B/faults/$t" >"$RUN/trig.out" 2>&1; ts=$? ;;
      *)
        how=tandem
        start_server trig --mps attach "$M/pipe" || { fails=$((fails+1)); }
        tandem "$EP_trig" "$B/faults/$t" >"$RUN/trig.out" 2>&1; ts=$? ;;
    esac
    alive=no; kill -0 $vp1 2>/dev/null && kill -0 $vp2 2>/dev/null && alive=yes
    res=""; okall=yes
    for i in 1 2; do
      p=$(eval echo "\$vp$i")
      timeout 300 tail --pid=$p -f /dev/null; wait $p; vs=$?
      got=$(grep "victim iterations=" "$RUN/victim$i.out")
      ok=no; [ $vs -eq 0 ] && [ "$got" = "$ref" ] && ok=yes
      [ $ok = yes ] || { okall=no; { echo "== $t victim $i"; cat "$RUN/victim$i.out" "$RUN/victim$i.err"; } >>"$OUT/victim-failures.txt"; }
      rec=$(grep -o 'replayed) in [0-9.]* ms' "$RUN/victim$i.err" | grep -o '[0-9.]* ms' || true)
      res="$res v$i=$vs/$ok/${rec:--}"
    done
    [ $okall = yes ] || fails=$((fails+1))
    lost=no; grep -q "device context is lost" "$OUT/act.log" && lost=yes
    log "$(printf '%-22s trigger=%-3s(%s) victims_alive_at_fault=%-3s active_failstop=%-3s %s' \
      "$t" "$ts" "$how" "$alive" "$lost" "$res")"
    cp "$OUT/sb.log" "$OUT/sb-$t.log"; cp "$OUT/act.log" "$OUT/act-$t.log"
    stop_server trig; stop_server act; stop_server sb
    sleep 1    # a faulted MPS server shuts down before the next clients come
  done

  log ""
  log "== (d) after a takeover: the standby's own standby, fail-back into a new MPS active, a fault there"
  # A (MPS) -> S (outside MPS, its standby S2 outside MPS).  A dies by a
  # fault; the victim resumes on S, protected by S2 at once.  Then N, a new
  # MPS active, takes the session back from S (memory imported, not
  # copied) with S as its standby; then a fault kills N's context and the
  # victim resumes on S again.  Its checksum must be the fault-free one.
  for tr in tcp shm; do
    sleep 2
    start_server s2 --standby-listen "$RUN/s2.sock" &&
    start_server sb --standby-listen "$RUN/sb.sock" --standby "$RUN/s2.sock" &&
    start_server act --standby "$RUN/sb.sock" --mps attach "$M/pipe" && {
      # Over shm an iteration costs a fraction of a TCP one: more of them
      # keep the victim running until the new active is up.
      vep=$EP_act fbn=$((ITERS * 4)); [ $tr = shm ] && vep=$SHM_act fbn=$((ITERS * 20))
      t0=$(date +%s.%N)
      LD_LIBRARY_PATH="$B/lib:$LD_LIBRARY_PATH" TANDEM_QUIET=1 TANDEM_SERVER="$vep" \
        "$B/faults/victim" $fbn 1024 >"$RUN/fb.out" 2>"$RUN/fb.err" &
      fp=$!
      for _ in $(seq 400); do grep -q "victim: running" "$RUN/fb.out" 2>/dev/null && break; sleep 0.05; done
      env $MENV LD_LIBRARY_PATH="$CUDA_LIB:$LD_LIBRARY_PATH" "$B/faults/sm_oob" >/dev/null 2>&1
      for _ in $(seq 200); do grep -q "resumed on" "$RUN/fb.err" && break; sleep 0.05; done
      sleep 2    # the faulted MPS server lets its clients go before a new one comes
      start_server n --mps attach "$M/pipe" --standby-listen "$RUN/n.sock" --standby "$RUN/sb.sock" \
        --failback-from "$RUN/sb.sock"
      for _ in $(seq 400); do grep -q "moved to" "$RUN/fb.err" && break; sleep 0.05; done
      moved=$(grep -o 'moved to .* in [0-9.]* ms' "$RUN/fb.err" | grep -o '[0-9.]* ms' || true)
      sleep 1
      env $MENV LD_LIBRARY_PATH="$CUDA_LIB:$LD_LIBRARY_PATH" "$B/faults/sm_oob" >/dev/null 2>&1
      timeout 300 tail --pid=$fp -f /dev/null; wait $fp; fs=$?
      secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
      fref=$(LD_LIBRARY_PATH="$CUDA_LIB:$LD_LIBRARY_PATH" "$B/faults/victim" $fbn 1024 | grep "victim iterations=")
      got=$(grep "victim iterations=" "$RUN/fb.out")
      ok=no; [ $fs -eq 0 ] && [ "$got" = "$fref" ] && ok=yes
      [ $ok = yes ] || { fails=$((fails+1)); { echo "== fail-back $tr"; cat "$RUN/fb.out" "$RUN/fb.err"; } >>"$OUT/victim-failures.txt"; }
      log "victim on $tr ($fbn iterations, ${secs}s): takeovers=$(grep -c 'resumed on' "$RUN/fb.err") fail-back=${moved:-no} n_failstop=$(grep -q 'device context is lost' "$OUT/n.log" && echo yes || echo no) victim=$fs match=$ok"
      grep "^tandem:" "$RUN/fb.err" | sed 's/^/  /' | tee -a "$report"
      cp "$OUT/sb.log" "$OUT/sb-failback-$tr.log"; cp "$OUT/n.log" "$OUT/n-failback-$tr.log"; cp "$OUT/s2.log" "$OUT/s2-failback-$tr.log"
    } || fails=$((fails+1))
    stop_server n; stop_server act; stop_server sb; stop_server s2
  done

  log ""
  log "== (e) the faulting session has a standby too: told apart, the victim survives"
  # Trigger (tcp) and victim (shm) are sessions of one MPS active with a
  # standby S that has a standby S2.  The trigger's fault kills the active; both resume on
  # S; the trigger's replay faults S too, so it gives up; the victim goes on
  # to S2 and must finish with the fault-free checksum.
  sleep 2
  start_server s2 --standby-listen "$RUN/s2.sock" &&
  start_server sb --standby-listen "$RUN/sb.sock" --standby "$RUN/s2.sock" &&
  start_server act --standby "$RUN/sb.sock" --mps attach "$M/pipe" && {
    LD_LIBRARY_PATH="$B/lib:$LD_LIBRARY_PATH" TANDEM_QUIET=1 TANDEM_SERVER="$SHM_act" \
      "$B/faults/victim" "$ITERS" 1024 >"$RUN/cv.out" 2>"$RUN/cv.err" &
    cp_=$!
    for _ in $(seq 400); do grep -q "victim: running" "$RUN/cv.out" 2>/dev/null && break; sleep 0.05; done
    tandem "$EP_act" "$B/faults/sm_oob" >"$RUN/ct.out" 2>&1; ts=$?
    timeout 300 tail --pid=$cp_ -f /dev/null; wait $cp_; vs=$?
    got=$(grep "victim iterations=" "$RUN/cv.out")
    ok=no; [ $vs -eq 0 ] && [ "$got" = "$ref" ] && ok=yes
    told=no; grep -q "own kernel faulted" "$RUN/ct.out" && told=yes
    [ $ok = yes ] && [ $told = yes ] || { fails=$((fails+1)); { echo "== culprit"; cat "$RUN/ct.out" "$RUN/cv.out" "$RUN/cv.err"; } >>"$OUT/victim-failures.txt"; }
    log "trigger=$ts culprit_told_apart=$told s_failstop=$(grep -q 'device context is lost' "$OUT/sb.log" && echo yes || echo no) victim=$vs match=$ok takeovers=$(grep -c 'resumed on' "$RUN/cv.err")"
    grep "^tandem:" "$RUN/ct.out" "$RUN/cv.err" | sed 's/^/  /' | tee -a "$report"
    cp "$OUT/sb.log" "$OUT/sb-culprit.log"; cp "$OUT/s2.log" "$OUT/s2-culprit.log"; cp "$OUT/act.log" "$OUT/act-culprit.log"
  } || fails=$((fails+1))
  stop_server act; stop_server sb; stop_server s2
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
