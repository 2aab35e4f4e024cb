#!/usr/bin/env bash
# Runs on a GPU host, from the repository root, over a bundle made by
# scripts/gpu-bundle.sh (default .device).  For every example: the native run
# (NVIDIA's libcudart) and the runs through Tandem (cuda backend, over TCP
# and over shm) must print the same line.  Then the integration suites run
# against the cuda backend (test_examples covers both transports), and the
# shm wake-up latency is measured.  The report goes to $OUT (default
# /tmp/tandem-gpu).
set -uo pipefail
B=$(cd "${1:-.device}" && pwd)
OUT=${OUT:-/tmp/tandem-gpu}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$B/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
CUDA_LIB=/usr/local/cuda/lib64
report="$OUT/gpu-verification.txt"
fails=0
ns() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
log() { echo "$*" | tee -a "$report"; }

: >"$report"
log "date: $(date -u +%Y-%m-%dT%H:%MZ)"
log "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader)"
log "kernel: $(uname -r)"
log ""

port_file=$(mktemp)
"$B/bin/tandem-server" --backend cuda --port 0 --port-file "$port_file" --shm gpu-verify 2>"$OUT/server.log" &
server=$!
for _ in $(seq 200); do [ -s "$port_file" ] && break; sleep 0.1; done
if [ ! -s "$port_file" ]; then log "tandem-server (cuda) did not start:"; cat "$OUT/server.log" | tee -a "$report"; exit 1; fi
ep="tcp://127.0.0.1:$(cat "$port_file")"
log "tandem-server --backend cuda at $ep and shm:gpu-verify"
log "$(printf '%-16s %-6s %-6s %-9s %-9s %-9s %s' example tcp shm native_s tcp_s shm_s output)"
for ex in vector_add increment_loop streams_events matmul; do
  t0=$(ns); native=$(LD_LIBRARY_PATH="$CUDA_LIB:$LD_LIBRARY_PATH" "$B/examples/$ex" 2>>"$OUT/native.err"); rn=$?; t1=$(ns)
  tandem=$(LD_LIBRARY_PATH="$B/lib:$LD_LIBRARY_PATH" TANDEM_SERVER="$ep" "$B/examples/$ex" 2>>"$OUT/tandem.err"); rt=$?; t2=$(ns)
  shm=$(LD_LIBRARY_PATH="$B/lib:$LD_LIBRARY_PATH" TANDEM_SERVER=shm:gpu-verify "$B/examples/$ex" 2>>"$OUT/tandem-shm.err"); rs=$?; t3=$(ns)
  ok=no; [ $rn -eq 0 ] && [ $rt -eq 0 ] && [ -n "$native" ] && [ "$native" = "$tandem" ] && ok=yes
  oks=no; [ $rn -eq 0 ] && [ $rs -eq 0 ] && [ -n "$native" ] && [ "$native" = "$shm" ] && oks=yes
  [ $ok = yes ] || fails=$((fails + 1))
  [ $oks = yes ] || fails=$((fails + 1))
  log "$(printf '%-16s %-6s %-6s %-9s %-9s %-9s %s' "$ex" "$ok" "$oks" "$(secs "$t0" "$t1")" "$(secs "$t1" "$t2")" \
    "$(secs "$t2" "$t3")" "$native")"
  [ $ok = yes ] || log "   tandem (tcp) printed: $tandem (exit $rt, native exit $rn)"
  [ $oks = yes ] || log "   tandem (shm) printed: $shm (exit $rs, native exit $rn)"
done
log "shm sessions served: $(grep -c 'opened by shm:' "$OUT/server.log"); region registered with the GPU: \
$(grep -q 'cannot register' "$OUT/server.log" && echo no || echo yes)"
# Every kind of copy (pageable/pinned, sync/async, 1 B to 40 MiB), natively and
# through both transports; the same lines must come out.  Then rough 64 MiB
# bandwidths (best of 5, informational: bench/ measures properly).
log ""
log "== copy-check (tests/integration/copy_check.c) =="
native_cc=$(LD_LIBRARY_PATH="$CUDA_LIB:$LD_LIBRARY_PATH" "$B/bin/copy-check" -b 2>"$OUT/copy-native.err"); rn=$?
for mode in tcp shm; do
  [ $mode = tcp ] && cep="$ep" || cep=shm:gpu-verify
  got=$(LD_LIBRARY_PATH="$B/lib:$LD_LIBRARY_PATH" TANDEM_SERVER="$cep" "$B/bin/copy-check" -b 2>"$OUT/copy-$mode.err"); rc=$?
  ok=no; [ $rn -eq 0 ] && [ $rc -eq 0 ] && [ -n "$native_cc" ] && [ "$native_cc" = "$got" ] && ok=yes
  [ $ok = yes ] || { fails=$((fails + 1)); log "   copy-check over $mode (exit $rc, native exit $rn):"; tail -3 "$OUT/copy-$mode.err" | tee -a "$report"; }
  log "copy-check over $mode = native: $ok ($(echo "$got" | grep -c ' ok$') sizes)"
done
for mode in native tcp shm; do
  grep 'GB/s' "$OUT/copy-$mode.err" | sed "s/^copy-check:/  $mode/" | tee -a "$report"
done
# cudaStreamGetFlags on every kind of stream (tests/integration/stream_flags_check.c).
native_sf=$(LD_LIBRARY_PATH="$CUDA_LIB:$LD_LIBRARY_PATH" "$B/bin/stream-flags-check" 2>"$OUT/flags-native.err"); rn=$?
for mode in tcp shm; do
  [ $mode = tcp ] && cep="$ep" || cep=shm:gpu-verify
  got=$(LD_LIBRARY_PATH="$B/lib:$LD_LIBRARY_PATH" TANDEM_SERVER="$cep" "$B/bin/stream-flags-check" 2>"$OUT/flags-$mode.err"); rc=$?
  ok=no; [ $rn -eq 0 ] && [ $rc -eq 0 ] && [ -n "$native_sf" ] && [ "$native_sf" = "$got" ] && ok=yes
  [ $ok = yes ] || { fails=$((fails + 1)); log "   stream-flags-check over $mode (exit $rc, native exit $rn) printed:"; log "$got"; log "   native printed:"; log "$native_sf"; }
  log "stream-flags-check over $mode = native: $ok ($(echo "$got" | wc -l) lines)"
done
log ""
# Which libcudart each run really loaded: the guest library, not NVIDIA's.
log "guest run loads: $(LD_LIBRARY_PATH="$B/lib:$LD_LIBRARY_PATH" ldd "$B/examples/vector_add" | grep libcudart)"
kill "$server"; wait "$server"; log "server exit status after SIGTERM: $?"
log ""

for suite in test_examples test_bad_input test_shm; do
  log "== $suite against the cuda backend =="
  TANDEM_TEST_BACKEND=cuda TANDEM_TEST_BUILD_DIR="$B" "$B/bin/$suite" --jobs 1 >"$OUT/$suite.log" 2>&1
  rc=$?; tail -1 "$OUT/$suite.log" | tee -a "$report"
  [ $rc -eq 0 ] || { fails=$((fails + 1)); grep -E "FAIL|Crash|fail" "$OUT/$suite.log" | head -20 | tee -a "$report"; }
done
log ""
log "== shm wake-up latency (tests/unit/test_shm_ring.c) =="
"$B/bin/test_shm_ring" --filter 'shm_wait/*' --jobs 1 2>&1 | grep -E 'latency|Synthesis' | tee -a "$report"
log ""
log "verification failures: $fails"
exit $((fails > 0))
