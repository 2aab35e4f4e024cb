#!/usr/bin/env bash
# Device output and dynamic parallelism on a GPU host (docs/device-output.md),
# from the repository root, over a bundle made by scripts/gpu-bundle.sh
# (default .device).  1. printf_probe, natively: does the driver write device
# printf through stdio in the synchronizing thread (what tandem-server's
# routing relies on)?  2. device_printf (printf at four kinds of sync point,
# and a failing assert) and cdp_tree (device-side launches), natively and
# through Tandem (cuda backend, tcp and shm): stdout must be identical, the
# assert's message must reach the program's stderr, and the server's log
# must hold none of the programs' device output.  Report in $OUT (default
# /tmp/tandem-device-output).
set -uo pipefail
B=$(cd "${1:-.device}" && pwd)
OUT=${OUT:-/tmp/tandem-device-output}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$B/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
CUDA_LIB=/usr/local/cuda/lib64
[ -e "$B/native/libcudart.so.13" ] && CUDA_LIB="$B/native"
report="$OUT/device-output.txt"
fails=0
log() { echo "$*" | tee -a "$report"; }
native() { LD_LIBRARY_PATH="$CUDA_LIB:$LD_LIBRARY_PATH" "$@"; }
tandem() { local ep=$1; shift; LD_LIBRARY_PATH="$B/lib:$LD_LIBRARY_PATH" TANDEM_SERVER="$ep" TANDEM_QUIET=1 "$@"; }

: >"$report"
log "date: $(date -u +%Y-%m-%dT%H:%MZ)"
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
log ""
log "== printf_probe (native) =="
native "$B/examples/printf_probe" 2>&1 | tee -a "$report"
[ "${PIPESTATUS[0]}" -eq 0 ] || fails=$((fails + 1))

port_file=$(mktemp)
"$B/bin/tandem-server" --backend cuda --port 0 --port-file "$port_file" --shm dev-output >"$OUT/server.log" 2>&1 &
server=$!
for _ in $(seq 200); do [ -s "$port_file" ] && break; sleep 0.1; done
[ -s "$port_file" ] || { log "tandem-server (cuda) did not start"; cat "$OUT/server.log"; exit 1; }
ep="tcp://127.0.0.1:$(cat "$port_file")"
log ""
log "== native vs Tandem ($ep, shm:dev-output) =="
compare() {  # name, then the program and its arguments
  local name=$1; shift
  local n t s rn rt rs
  n=$(native "$@" 2>"$OUT/$name.native.err"); rn=$?
  t=$(tandem "$ep" "$@" 2>"$OUT/$name.tcp.err"); rt=$?
  s=$(tandem shm:dev-output "$@" 2>"$OUT/$name.shm.err"); rs=$?
  local ok=yes
  { [ "$n" = "$t" ] && [ $rn -eq $rt ]; } || ok="NO (tcp)"
  { [ "$n" = "$s" ] && [ $rn -eq $rs ]; } || ok="NO (shm)"
  # A failing assert's message: the same lines on stderr.
  for m in tcp shm; do
    diff <(grep Assertion "$OUT/$name.native.err") <(grep Assertion "$OUT/$name.$m.err") >/dev/null || ok="NO (stderr $m)"
  done
  [ "$ok" = yes ] || fails=$((fails + 1))
  log "$name: $ok (native exit $rn, $(echo "$n" | wc -l) lines)"
  [ "$ok" = yes ] || { log "   native:"; echo "$n" | head -20 | tee -a "$report"; log "   tcp:"; echo "$t" | head -20 | tee -a "$report"; }
}
compare device_printf_9 "$B/examples/device_printf" 9
compare device_printf_assert "$B/examples/device_printf" assert
compare cdp_tree_6 "$B/examples/cdp_tree" 6
compare cdp_tree_10 "$B/examples/cdp_tree" 10
kill "$server"; wait "$server" 2>/dev/null
if grep -qE '^device: |^probe: |Assertion `' "$OUT/server.log"; then
  log "server log holds device output:"; grep -E '^device: |Assertion `' "$OUT/server.log" | head | tee -a "$report"
  fails=$((fails + 1))
fi
grep 'no session to own' "$OUT/server.log" | head -3 | tee -a "$report"
log ""
log "failures: $fails"
exit $((fails > 0))
