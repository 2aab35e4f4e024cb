#!/usr/bin/env bash
# The control plane end to end (issue 17; docs/control-plane.md), on the sim backend: a real
# tandem-orchestrator in network namespace "hub" and three tandem-node agents, each GPU node in
# a namespace of its own joined by a bridge (netns.sh; 10.213.0.0/24, nothing leaves the
# machine), with the config files of configs/lab.  Checks, each printed as it passes:
#   - guests land where each placement rule of Flyt's Table 3 says, over shm when co-located
#   - an active server killed mid-run: its guest resumes on the standby, the agent starts another
#   - a node agent killed and started again re-adopts its servers (no duplicates)
#   - an orchestrator restart loses no placement, and the nodes report to the new one
#   - elasticity: a latency-bound guest scales up under load and down after it, within its
#     budget, never back up once it went down
#   - bad configs and bad parameters get clear errors
# Needs root (network namespaces).  Usage: e2e.sh BUILD_DIR
set -euo pipefail
B=$(cd "${1:?usage: e2e.sh BUILD_DIR}" && pwd)
SRC=$(cd "$(dirname "$0")/../../.." && pwd)
NETNS=$SRC/tests/integration/control_plane/netns.sh
P=tl$((RANDOM % 9000 + 1000))
LAB=/tmp/tandem-lab
ORCH=10.213.0.1:7070
declare -a PIDS=()
failures=0

log() { echo "control-plane: $*"; }
fail() { echo "control-plane: FAIL: $*" >&2; failures=$((failures + 1)); }
die() { echo "control-plane: FAIL: $*" >&2; dump; exit 1; }
dump() {
  for f in "$LAB"/orch*.log "$LAB"/node?.log; do
    [ -e "$f" ] && { echo "---- $f (last 15 lines)"; tail -15 "$f"; }
  done >&2
}
in_ns() { local ns=$1; shift; ip netns exec "$P-$ns" "$@"; }
ctl() { in_ns hub "$B/bin/tandemctl" --orchestrator "$ORCH" "$@"; }
api() { in_ns hub curl -sS --max-time 5 "http://$ORCH$1" "${@:2}"; }
# wait_for SECONDS WHAT COMMAND...: polls COMMAND every 0.2 s.
wait_for() {
  local limit=$1 what=$2; shift 2
  local end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || { fail "timed out after ${limit}s waiting for $what"; return 1; }
    sleep 0.2
  done
}

cleanup() {
  set +e
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  sleep 1
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null; done
  # servers the agents started (they stop them at SIGTERM; a killed agent leaves them)
  pkill -9 -f "tandem-server .*--control $LAB/" 2>/dev/null
  "$NETNS" down "$P" 3
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || die "needs root for network namespaces"
command -v ip >/dev/null || die "needs iproute2 (ip)"
rm -rf "$LAB"
mkdir -p "$LAB/conf"
cp "$SRC"/configs/lab/* "$LAB/conf/"
chmod 600 "$LAB/conf/tenants.ini"
"$NETNS" up "$P" 3

start_orchestrator() {
  # ip netns exec execs the program: $! is the orchestrator itself (a shell function put in the
  # background would be a subshell, and killing it would leave the orchestrator running).
  ip netns exec "$P-hub" "$B/bin/tandem-orchestrator" --config "$LAB/conf/orchestrator.conf" >>"$LAB/orch.log" 2>&1 &
  ORCH_PID=$!
  PIDS+=("$ORCH_PID")
  wait_for 10 "the orchestrator's API" api /v1/state -f
}
start_node() {
  (cd "$LAB/conf" && exec ip netns exec "$P-n$1" "$B/bin/tandem-node" --config "$LAB/conf/node$1.conf") \
    >>"$LAB/node$1.log" 2>&1 &
  NODE_PID[$1]=$!
  PIDS+=("${NODE_PID[$1]}")
}
node_up() { ctl nodes | grep -E "^node$1 .* up .*node$1-gpu0-s0\(active\)"; }

# ---- bad configs are refused with file and line ----
printf 'listen = "10.213.0.1:7070";\nstate_dir = "/tmp/x";\ntenants_file = "tenants.ini";\nvms = "vms.conf";\npolicies = { telemetry_interval_ms = "fast"; };\n' \
  >"$LAB/conf/bad.conf"
if out=$(in_ns hub "$B/bin/tandem-orchestrator" --config "$LAB/conf/bad.conf" 2>&1); then
  fail "a bad orchestrator.conf was accepted"
elif ! grep -q "bad.conf:5: " <<<"$out"; then
  fail "the bad config's error names no file and line: $out"
else log "bad orchestrator.conf refused: $(head -1 <<<"$out")"; fi
printf 'node = "n";\nstate_dir = "/tmp/x";\nbackend = "sim";\ngpus = ( { index = 0; base_port = 99999; } );\n' \
  >"$LAB/conf/badnode.conf"
if out=$(in_ns n1 "$B/bin/tandem-node" --config "$LAB/conf/badnode.conf" 2>&1); then
  fail "a bad node.conf was accepted"
elif ! grep -q "badnode.conf:[0-9]*: " <<<"$out"; then
  fail "the bad node config's error names no file and line: $out"
else log "bad node.conf refused: $(head -1 <<<"$out")"; fi

# ---- an orchestrator and three nodes, registered in order (the default rule's order) ----
start_orchestrator
declare -a NODE_PID
for i in 1 2 3; do
  start_node "$i"
  wait_for 20 "node$i to register with a live active server" node_up "$i" || die "node$i did not come up"
done
log "orchestrator and 3 node agents up, each node in its own network namespace"

# guest NS TENANT HOST [VAR=VALUE...] -- PROGRAM ARGS...: a guest placed by the orchestrator.
guest() {
  local ns=$1 tenant=$2 host=$3; shift 3
  local -a vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  local token
  token=$(sed -n "/^\[$tenant\]/,/^\[/s/^token = //p" "$LAB/conf/tenants.ini")
  # Under ASan the instrumented guest library needs the sanitizer runtimes preloaded into the
  # (uninstrumented, nvcc-built) program; CMake names them (TANDEM_GUEST_PRELOAD).
  [ -z "${TANDEM_GUEST_PRELOAD:-}" ] || vars+=(LD_PRELOAD="$TANDEM_GUEST_PRELOAD" ASAN_OPTIONS=detect_leaks=0)
  in_ns "$ns" env LD_LIBRARY_PATH="$B/lib" TANDEM_ORCHESTRATOR="$ORCH" TANDEM_TENANT="$tenant" \
    TANDEM_TOKEN="$token" TANDEM_HOST="$host" "${vars[@]}" "$@"
}
# placed TENANT: "NODE/GPU VIA RULE" of the tenant's latest placement decision.
placed() {
  ctl decisions | awk -v t="$1" '$4 == "place" && $5 == t { last = $6 " " $7 " " $10 } END { print last }'
}
expect_placed() {
  local tenant=$1 want=$2 got
  got=$(placed "$tenant")
  if [ "$got" = "$want" ]; then log "$tenant placed on $got"; else fail "$tenant placed on '$got', want '$want'"; fi
}
run_guest() {
  local out
  if ! out=$(guest "$@" 2>&1); then fail "guest $2 failed: $out"; return 1; fi
  grep -q "checksum=" <<<"$out" || { fail "guest $2 printed no result: $out"; return 1; }
}

# ---- Flyt's Table 3, each rule ----
VA=$B/examples/vector_add
run_guest hub plain hub -- "$VA" && expect_placed plain "node1/gpu0 tcp default:"
# A guest that ended before any report listed it: its server says so, and the placement is
# released at once, not after the reservation bound (the H100 run of 2026-11-25 waited 120 s).
PLAIN_KEY=$(ctl decisions | awk '$4 == "place" && $5 == "plain" { k = $3 } END { print k }')
released_at_once() { ctl decisions | grep -q "$PLAIN_KEY .*release .*a server of node node1 says so"; }
wait_for 5 "the ended guest's placement to be released" released_at_once &&
  log "the ended guest's placement was released at once (its server reported the session's end)"
run_guest n2 dedicated host2 -- "$VA" && expect_placed dedicated "node2/gpu0 shm vm-dedicated:"
run_guest hub affine hub -- "$VA" && expect_placed affine "node3/gpu0 tcp node-affinity:"
# app-scoped takes the GPU with the most free SMs: fill node1 and node2 with placements of
# guests that never connect (reserved, holding their SMs), so node3 has the most.
for target in node1:64 node2:32; do
  body=$(printf '{"tenant":"filler","token":"%s","host":"hub","app":{"sm_cores":%s,"mode":"app-scoped","affinity":["%s"]}}' \
    "$(sed -n '/^\[filler\]/,/^\[/s/^token = //p' "$LAB/conf/tenants.ini")" "${target#*:}" "${target%%:*}")
  api /v1/place -f -H 'Content-Type: application/json' -d "$body" >/dev/null || fail "filler placement on $target refused"
done
run_guest hub scoped hub -- "$VA" && expect_placed scoped "node3/gpu0 tcp app-scoped:"
# a bad parameter is refused before anything is placed, naming the variable
if out=$(guest hub scoped hub APP_LATENCY_UPPER=2 APP_LATENCY_LOWER=5 -- "$VA" 2>&1); then
  fail "contradictory latency bounds were accepted"
elif ! grep -q "APP_LATENCY" <<<"$out"; then fail "the bad parameter's error names no variable: $out"
else log "bad parameters refused: $(grep -m1 APP_LATENCY <<<"$out")"; fi

# ---- elasticity: a latency-bound guest on node2 (kernel time ceil(64/share) ms) ----
guest hub elastic hub APP_SM_CORES=8 SCALE_UP_FACTOR=8 SCALE_DOWN_FACTOR=4 APP_LATENCY_UPPER=5 \
  APP_LATENCY_LOWER=3 METRIC_SAMPLE_COUNT=3 GPU_METRIC_INTERVAL=0.5 -- "$B/examples/elastic_probe" 7 8 >"$LAB/elastic.out" 2>&1 &
ELASTIC=$!
PIDS+=("$ELASTIC")

# ---- an active server killed mid-run: the guest resumes on its standby ----
guest hub plain hub -- "$B/examples/elastic_probe" 6 0 >"$LAB/takeover.out" 2>&1 &
VICTIM=$!
sleep 2
KEY=$(ctl decisions | awk '$4 == "place" && $5 == "plain" { k = $3 } END { print k }')
victim_server=$(pgrep -f "tandem-server .*--control $LAB/node1/node1-gpu0-s0.ctl" | head -1)
[ -n "$victim_server" ] || die "node1's active server is not running"
kill -9 "$victim_server"
log "killed node1's active server (pid $victim_server) under a running guest"
if wait "$VICTIM" && grep -q '^ok$' "$LAB/takeover.out"; then
  log "the guest resumed on the standby and finished with exact results"
else fail "the guest did not survive its server's death: $(tail -3 "$LAB/takeover.out")"; fi
restarted() { [ "$(pgrep -f "tandem-server .*--control $LAB/node1/node1-gpu0-s0.ctl" | head -1)" != "$victim_server" ] &&
  pgrep -f "tandem-server .*--control $LAB/node1/node1-gpu0-s0.ctl"; }
wait_for 20 "node1's agent to start a new active server" restarted && log "node1's agent started a new active server"
moved() { grep -q "placement $KEY: its session moved from server node1-gpu0-s0 to node1-gpu0-s0-sb" "$LAB/orch.log"; }
wait_for 10 "the orchestrator to follow the session to the standby" moved &&
  log "the orchestrator followed the session to node1's standby and sent its share there"

wait "$ELASTIC" || fail "the elastic guest failed: $(tail -3 "$LAB/elastic.out")"
grep -q '^ok$' "$LAB/elastic.out" || fail "the elastic guest's results are wrong: $(tail -3 "$LAB/elastic.out")"
EKEY=$(ctl decisions | awk '$4 == "place" && $5 == "elastic" { k = $3 } END { print k }')
trace=$(ctl decisions | awk -v k="$EKEY" '$3 == k && ($4 == "scale-up" || $4 == "scale-down") { printf "%s:%s->%s ", $4, $5, $6 }')
log "elastic share trace: $trace"
ups=$( (grep -o "scale-up" <<<"$trace" || true) | wc -l)
downs=$( (grep -o "scale-down" <<<"$trace" || true) | wc -l)
[ "$ups" -ge 1 ] || fail "the latency-bound guest never scaled up under load"
[ "$downs" -ge 1 ] || fail "the guest never scaled down after its load"
if grep -q "scale-down.*scale-up" <<<"$trace"; then fail "the share oscillated: $trace"; fi
maxsm=$( (grep -o -- "->[0-9]*" <<<"$trace" || true) | tr -d '>-' | sort -n | tail -1)
[ "${maxsm:-0}" -le 48 ] || fail "the share went past the VM's budget of 48: $maxsm"

# ---- a node agent killed and started again re-adopts its servers ----
before=$(pgrep -f "tandem-server .*--control $LAB/node3/" | sort | tr '\n' ' ')
kill -9 "${NODE_PID[3]}"
start_node 3
readopted() { grep -q "re-adopt" "$LAB/node3.log"; }
wait_for 15 "node3's agent to re-adopt" readopted
sleep 1
after=$(pgrep -f "tandem-server .*--control $LAB/node3/" | sort | tr '\n' ' ')
if [ "$before" = "$after" ] && [ -n "$after" ]; then log "node3's restarted agent re-adopted servers $after"
else fail "node3's servers before ($before) and after ($after) its agent's restart differ"; fi
wait_for 10 "node3 to register again" node_up 3

# ---- an orchestrator restart loses no placement ----
placements() { api /v1/state -f | tr ',' '\n' | grep -o '"placement":"[^"]*"' | sort; }
p_before=$(placements)
kill "$ORCH_PID"
wait "$ORCH_PID" 2>/dev/null || true
if api /v1/state -f >/dev/null 2>&1; then fail "the orchestrator still answers after SIGTERM"; fi
start_orchestrator
p_after=$(placements)
if [ -n "$p_before" ] && [ "$p_before" = "$p_after" ]; then
  log "the orchestrator's restart kept its $(wc -l <<<"$p_after") placements"
else fail "placements before and after the orchestrator's restart differ"; fi
# "up" is also what the store kept from before the restart: wait for telemetry the new
# orchestrator took itself (its /v1/state counts each node's reports since it started).
reports() { api /v1/state -f | grep -o "\"node\":\"node$1\",[^{]*\"reports\":[0-9]*" | grep -o '[0-9]*$'; }
reported() { [ "$(reports "$1")" -ge 1 ]; }
if wait_for 10 "node1 to report to the new orchestrator" reported 1 && node_up 1 >/dev/null; then
  log "node1 reports to the restarted orchestrator ($(reports 1) reports) and is up"
else fail "node1 does not report to the restarted orchestrator"; fi

if [ "$failures" -gt 0 ]; then dump; echo "control-plane: $failures check(s) failed"; exit 1; fi
echo "control-plane: all checks passed"
