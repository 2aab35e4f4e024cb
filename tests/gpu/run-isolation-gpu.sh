#!/usr/bin/env bash
# Kernel isolation between tenants on a GPU host (issue 16, docs/security.md "A process per
# tenant"), over a bundle from scripts/gpu-bundle.sh (default .device).  Report in $OUT
# (default /tmp/tandem-isolation)/isolation.txt.
#
# tests/faults/tenant_probe.cu: the owner (tenant alice) keeps a buffer that only its kernels
# write; the intruder (tenant bob) is given its device address, reads it, launches a kernel that
# writes it, and (alloc) first allocates memory of its own.  The owner then checks every word
# and runs on.  Each setting is run with the intruder writing without (none) and after (alloc)
# an allocation of its own:
#   native        two plain processes on the GPU (what CUDA gives between processes)
#   shared        one tandem-server (cuda backend), both tenants in its one context
#   isolate       tandem-server --isolate tenant: a process per tenant
#   isolate+mps   the same with --mps start: each tenant's process an MPS client
#   isolate+mps+standby   the same, each tenant's process mirrored to a standby of its own
# The owner must report "own: intact" natively, with --isolate, and under MPS with a standby;
# "shared" and MPS without a standby are reported as they come.
set -uo pipefail
B=$(cd "${1:-.device}" && pwd)
OUT=${OUT:-/tmp/tandem-isolation}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$B/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
CUDA_LIB=/usr/local/cuda/lib64
report="$OUT/isolation.txt"
RUN=$(mktemp -d /tmp/tandem-iso.XXXX)
PROBE="$B/faults/tenant_probe"
ALICE=alice-token-0123456789abcdef
BOB=bob-token-fedcba9876543210
fails=0
log() { echo "$*" | tee -a "$report"; }
: >"$report"
log "date: $(date -u +%Y-%m-%dT%H:%MZ)"
log "gpu: $(nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv,noheader)"
printf '[alice]\ntoken = %s\n\n[bob]\ntoken = %s\n' "$ALICE" "$BOB" >"$RUN/tenants.ini"
chmod 600 "$RUN/tenants.ini"

# probe SETTING ALLOC EXPECT [ENDPOINT]: one owner/intruder run; native without an endpoint.
probe() {
  local setting=$1 alloc=$2 expect=$3 ep=${4:-} addr_file="$RUN/$1-$2.addr" owner_pid status
  local -a env_owner=(env) env_bob=(env)
  if [ -n "$ep" ]; then
    env_owner=(env LD_LIBRARY_PATH="$B/lib:$LD_LIBRARY_PATH" TANDEM_SERVER="$ep" TANDEM_TOKEN=$ALICE)
    env_bob=(env LD_LIBRARY_PATH="$B/lib:$LD_LIBRARY_PATH" TANDEM_SERVER="$ep" TANDEM_TOKEN=$BOB)
  else
    env_owner=(env LD_LIBRARY_PATH="$CUDA_LIB:$LD_LIBRARY_PATH")
    env_bob=(env LD_LIBRARY_PATH="$CUDA_LIB:$LD_LIBRARY_PATH")
  fi
  "${env_owner[@]}" timeout 120 "$PROBE" own "$addr_file" 1048576 >"$OUT/$setting-$alloc.owner" 2>&1 &
  owner_pid=$!
  for _ in $(seq 300); do [ -s "$addr_file" ] && break; sleep 0.1; done
  if [ ! -s "$addr_file" ]; then
    log "$setting/$alloc: the owner wrote no address: $(tr '\n' ' ' <"$OUT/$setting-$alloc.owner")"
    kill $owner_pid 2>/dev/null; wait $owner_pid 2>/dev/null; fails=$((fails + 1)); return
  fi
  "${env_bob[@]}" timeout 60 "$PROBE" intrude "$(cat "$addr_file")" 1048576 "$alloc" >"$OUT/$setting-$alloc.intruder" 2>&1
  touch "$addr_file.go"
  wait $owner_pid; status=$?
  local verdict; verdict=$(grep -h "^own: \(intact\|CHANGED\)\|^own: .*failed" "$OUT/$setting-$alloc.owner" | tail -1)
  log "$setting/$alloc: owner exit $status: ${verdict:-$(tail -1 "$OUT/$setting-$alloc.owner")}"
  log "    intruder: $(grep -h '^intrude:' "$OUT/$setting-$alloc.intruder" | sed 's/^intrude: //' | tr '\n' ';')"
  case $expect in
    intact) [ "$status" = 0 ] && grep -q "own: intact" "$OUT/$setting-$alloc.owner" || { log "    FAIL: expected intact"; fails=$((fails + 1)); } ;;
    any) ;;
  esac
}

# start NAME ARGS...: a tandem-server (cuda backend) on a free port; sets EP and SP.
start() {
  local name=$1; shift
  rm -f "$RUN/$name.port"
  "$B/bin/tandem-server" --backend cuda --port 0 --port-file "$RUN/$name.port" "$@" >"$OUT/$name.server.log" 2>&1 &
  SP=$!
  for _ in $(seq 200); do [ -s "$RUN/$name.port" ] && break; sleep 0.1; done
  EP="tcp://127.0.0.1:$(cat "$RUN/$name.port" 2>/dev/null)"
}
stop() { kill -TERM "$SP" 2>/dev/null; wait "$SP" 2>/dev/null; log "    server stopped with status $?"; }

for alloc in none alloc; do probe native $alloc intact; done

start shared --tenants "$RUN/tenants.ini"
for alloc in none alloc; do probe shared $alloc any "$EP"; done
stop

start isolate --tenants "$RUN/tenants.ini" --isolate tenant
for alloc in none alloc; do probe isolate $alloc intact "$EP"; done
stop
grep -h "tenant .*: process" "$OUT/isolate.server.log" | sed 's/^/    /' | tee -a "$report"

# Under MPS a fatal fault of one client may end every client of the daemon (as on Volta and
# later without per-client error containment): the owner's process goes down with the
# intruder's, which is why the owner must be protected by a standby there.  A fresh daemon for
# each run, so that one run's fault does not meet the next.
for alloc in none alloc; do
  start isolate-mps-$alloc --tenants "$RUN/tenants.ini" --isolate tenant --mps start --mps-run-dir "$RUN/mps-$alloc"
  probe isolate+mps $alloc any "$EP"
  stop
  grep -h "tenant .*: process" "$OUT/isolate-mps-$alloc.server.log" | sed 's/^/    /' | tee -a "$report"
done

# The same with standbys (outside MPS, as docs/takeover.md places them, with the same tenants):
# --standby PATH gives each tenant's process the standby at PATH.TENANT, one per tenant.  The
# owner, whose process the intruder's fault ended, resumes on its own standby and finds every
# word; the intruder's session resumes on its own, where its kernel reaches nothing.
for alloc in none alloc; do
  start standby-alice-$alloc --tenants "$RUN/tenants.ini" --standby-listen "$RUN/sb-$alloc.sock.alice"
  SB_A=$SP
  start standby-bob-$alloc --tenants "$RUN/tenants.ini" --standby-listen "$RUN/sb-$alloc.sock.bob"
  SB_B=$SP
  start isolate-mps-sb-$alloc --tenants "$RUN/tenants.ini" --isolate tenant --mps start --mps-run-dir "$RUN/mpssb-$alloc" \
    --standby "$RUN/sb-$alloc.sock"
  sleep 1
  probe isolate+mps+standby $alloc intact "$EP"
  stop
  grep -h "tenant .*: process" "$OUT/isolate-mps-sb-$alloc.server.log" | sed 's/^/    /' | tee -a "$report"
  for t in alice bob; do
    grep -h "resumed\|cannot be resumed" "$OUT/standby-$t-$alloc.server.log" | head -3 | sed "s/^/    standby of $t: /" | tee -a "$report"
  done
  SP=$SB_A; stop
  SP=$SB_B; stop
done

log "failures: $fails"
rm -rf "$RUN"
[ "$fails" = 0 ]
