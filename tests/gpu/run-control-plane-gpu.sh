#!/usr/bin/env bash
# The control plane on a GPU host (issue 17, docs/control-plane.md), over a bundle from
# scripts/gpu-bundle.sh (default .device): a tandem-orchestrator and a tandem-node (cuda backend,
# with MPS off, then on) started from configs/, a guest placed through TANDEM_ORCHESTRATOR, and
# the resize latency from the orchestrator's decision, hop by hop, with 1, 16 and 64 streams:
#   decision (the orchestrator's set-share, stamped before it asks the node agent)
#   -> the node agent got it -> the server's set_share (asked) -> the session's streams moved
#   -> the first kernel at the new share done (the guest's wait for it ended)
# The guest is bench/shares' resize: short kernels (2 blocks per SM, 4096 FMA steps: about
# 0.28 ms at 8 SMs of an H100), each waited for, so the kernel in flight is not what is
# measured; its length is reported beside the figures.  `tandemctl share` asks the change; its
# own start is not in the figures (they begin at the decision's stamp).
# Every step says what it does and has a time limit; a failing one is reported and the others go
# on.  Output: $OUT (default /tmp/tandem-control-plane): hops.txt (the table), per pass the
# guests' kernels, the events each row was computed from, the logs.  About 1 minute.
#   tests/gpu/run-control-plane-gpu.sh [BUNDLE]
# Environment: OUT; BACKEND=sim runs it on the simulated GPU (for testing the script: figures
# not claimed); PASSES ("off on": MPS off, then on); STREAMS ("1 16 64"); PORT_BASE (orchestrator
# on PORT_BASE, agent on +1, servers from +10, node "nPORT_BASE": for a machine shared with others).
set -uo pipefail
B=$(cd "${1:-.device}" && pwd) || { echo "run-control-plane-gpu: no bundle" >&2; exit 1; }
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/tandem-control-plane}
BACKEND=${BACKEND:-cuda}
PASSES=${PASSES:-off on}
STREAMS=${STREAMS:-1 16 64}
TO=66
mkdir -p "$OUT"
ORCH=127.0.0.1:${PORT_BASE:-7070}
NODE=node1
[ -n "${PORT_BASE:-}" ] && NODE=n$PORT_BASE
DEPS="$B/deps"
HOPS_AWK=$SRC/bench/control-plane/resize-hops.awk
[ -e "$HOPS_AWK" ] || HOPS_AWK=$B/bench/resize-hops.awk
failed=0
say() { echo "control-plane-gpu: $*"; }
bad() { echo "control-plane-gpu: FAILED: $*"; failed=$((failed + 1)); }
# The bundle's libraries only for its own programs: a system curl or awk must not load them.
ctl() { LD_LIBRARY_PATH="$DEPS" timeout 10 "$B/bin/tandemctl" --orchestrator "$ORCH" "$@"; }
now_ms() { date +%s%3N; }
guest_args=()
[ "$BACKEND" = sim ] && guest_args=(--iters 4)   # the sim runs the kernel as a C twin: few steps

conf=$OUT/conf
rm -rf "$conf" && mkdir -p "$conf"
sed -e "s#^listen = .*#listen = \"$ORCH\";#" -e "s/\"node1\"/\"$NODE\"/" "$SRC/configs/orchestrator.conf" >"$conf/orchestrator.conf"
sed -e "s/\"node1\"/\"$NODE\"/" "$SRC/configs/vms.conf" >"$conf/vms.conf"
# the example VMs' tenants with test tokens (mode 600, as the servers and the orchestrator need)
TOKEN=gpu-test-token-training-0001
printf '[training]\ntoken = %s\n[inference]\ntoken = gpu-test-token-inference-02\n[batch]\ntoken = gpu-test-token-batch-000003\n' \
  "$TOKEN" >"$conf/tenants.example.ini"
chmod 600 "$conf/tenants.example.ini"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; sleep 2; for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; }
trap cleanup EXIT

# json_field NAME: the value of "NAME" in each JSON line on stdin.
json_field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^,\"}]*\).*/\1/p"; }

# One stream count: a guest placed with 8 SMs runs short kernels; once it ran 20 of them,
# tandemctl share asks 66; the guest stops 40 kernels after its SMs changed (or after 10 s).
resize_one() {   # resize_one DIR PASS STREAMS
  local dir=$1 name=$2 streams=$3 t_start key="" g n
  say "$name: resize 8 -> $TO SMs with $streams streams (shares resize ${guest_args[*]})"
  t_start=$(now_ms)
  timeout 60 env "${env[@]}" APP_SM_CORES=8 "$B/bench/bin/shares" resize --streams "$streams" --ms 10000 --after 40 \
    "${guest_args[@]}" >"$dir/resize-$streams.jsonl" 2>"$dir/resize-$streams.err" &
  g=$!
  for _ in $(seq 200); do   # its placement: the newest place decision for tenant training since t_start
    key=$(ctl json decisions 2>/dev/null | grep '"action":"place"' | grep '"from":"training"' |
      awk -v t="$t_start" '{ s = $0; sub(/.*"time":/, "", s); sub(/,.*/, "", s); if (s * 1000 >= t - 1000) print }' |
      json_field placement | tail -1)
    n=$(grep -c '"test":"resize"' "$dir/resize-$streams.jsonl" 2>/dev/null)
    [ -n "$key" ] && [ "${n:-0}" -ge 20 ] && break
    kill -0 $g 2>/dev/null || break
    sleep 0.05
  done
  if [ -z "$key" ] || [ "${n:-0}" -lt 20 ]; then
    bad "$name/$streams: the guest was not placed or ran no kernels (key '$key', $n kernels): $(tail -2 "$dir/resize-$streams.err")"
    wait $g 2>/dev/null
    return
  fi
  ctl share "$key" "$TO" >"$dir/share-$streams.txt" 2>&1 || bad "$name/$streams: tandemctl share $key $TO: $(cat "$dir/share-$streams.txt")"
  wait $g || bad "$name/$streams: the resize guest failed: $(tail -2 "$dir/resize-$streams.err")"
  # the events of this change, one a line, for resize-hops.awk
  local ev=$dir/events-$streams.txt
  {
    ctl json decisions | grep "\"placement\":\"$key\"" | grep '"action":"set-share"' | tail -1 |
      awk '{ t = $0; sub(/.*"time":/, "", t); sub(/,.*/, "", t); a = $0; sub(/.*"agent_ms":/, "", a); sub(/,.*/, "", a)
             print "decision", t, a }'
    grep -h "set_share on .* done (placement $key); wall-clock ms" "$dir/node.log" | tail -1 |
      sed -n 's/.*received \([0-9.]*\), answered \([0-9.]*\).*/agent \1 \2/p'
    grep -h "wall-clock ms: asked .* placement $key" "$dir/$NODE"/*.log 2>/dev/null | tail -1 |
      sed -n 's/.*(\([0-9]*\) streams moved); wall-clock ms: asked \([0-9.]*\), ready \([0-9.]*\), taken \([0-9.]*\), moved \([0-9.]*\).*/server \2 \3 \4 \5 \1/p'
    grep '"test":"resize"' "$dir/resize-$streams.jsonl" |
      awk '{ k = $0; sub(/.*"kernel":/, "", k); sub(/,.*/, "", k); m = $0; sub(/.*"ms":/, "", m); sub(/,.*/, "", m)
             s = $0; sub(/.*"sms_seen":/, "", s); sub(/,.*/, "", s); w = $0; sub(/.*"done_wall_ms":/, "", w); sub(/[,}].*/, "", w)
             print "kernel", k, m, s, w }'
  } >"$ev"
  awk -v streams="$streams" -v label="$name" -f "$HOPS_AWK" "$ev" | tee -a "$OUT/hops-rows.txt"
  grep -q "^decision" "$ev" && grep -q "^server" "$ev" || bad "$name/$streams: a hop is missing (events: $ev)"
  # the ended guest's placement is released at the node's next full report (docs/orchestrator.md)
  for _ in $(seq 50); do ctl json decisions 2>/dev/null | grep "\"placement\":\"$key\"" | grep -q '"action":"release"' && break; sleep 0.1; done
}

run_pass() {   # run_pass NAME MPS(on|off)
  local name=$1 mps=$2 dir=$OUT/$1
  rm -rf "$dir" && mkdir -p "$dir"
  say "== pass $name: orchestrator + node agent ($BACKEND, MPS $mps) from configs/"
  local node_listen=127.0.0.1:7081 base=7710
  [ -n "${PORT_BASE:-}" ] && node_listen=127.0.0.1:$((PORT_BASE + 1)) base=$((PORT_BASE + 10))
  local opts=""
  [ "$BACKEND" = sim ] && opts='server_options = ["--sim-wave-us", "10"];'
  sed -e "s#^state_dir = .*#state_dir = \"$dir/$NODE\";#" -e "s#^backend = .*#backend = \"$BACKEND\";#" \
      -e "s#^mps = .*#mps = \"$mps\";#" -e "s@^# tenants = .*@tenants = \"$conf/tenants.example.ini\";@" \
      -e "s/^node = .*/node = \"$NODE\";/" -e "s#^listen = .*#listen = \"$node_listen\";#" \
      -e "s#^orchestrator = .*#orchestrator = \"$ORCH\";#" -e "s#base_port = [0-9]*;#base_port = $base;#" \
      -e "s@^# server_options = .*@$opts@" \
      "$SRC/configs/node.conf" >"$conf/node-$name.conf"
  LD_LIBRARY_PATH="$DEPS" "$B/bin/tandem-orchestrator" --config "$conf/orchestrator.conf" --state-dir "$dir/orchestrator" \
    >"$dir/orchestrator.log" 2>&1 &
  local orch=$!; pids+=("$orch")
  sleep 1
  LD_LIBRARY_PATH="$DEPS" "$B/bin/tandem-node" --config "$conf/node-$name.conf" >"$dir/node.log" 2>&1 &
  local node=$!; pids+=("$node")
  local up=0
  for _ in $(seq 100); do ctl nodes 2>/dev/null | grep -q "$NODE .* up .*(active)" && { up=1; break; }; sleep 0.3; done
  ctl nodes | tee "$dir/nodes.txt"
  if [ $up = 0 ]; then
    bad "$name: $NODE did not register"; tail -20 "$dir/node.log"; kill $node $orch; wait $node $orch 2>/dev/null; return
  fi
  env=(TANDEM_ORCHESTRATOR=$ORCH TANDEM_TENANT=training TANDEM_TOKEN=$TOKEN TANDEM_HOST=host1
       LD_LIBRARY_PATH="$B/lib:$B/deps")
  say "$name: vector_add placed by the orchestrator (and natively, on a GPU)"
  local native="" tandem
  [ "$BACKEND" = cuda ] && native=$(timeout 60 "$B/examples/vector_add" 2>&1 | tail -1)
  tandem=$(timeout 60 env "${env[@]}" "$B/examples/vector_add" 2>"$dir/vector_add.err" | tail -1)
  echo "native: ${native:-(not run: no GPU)}" | tee "$dir/vector_add.txt"; echo "tandem: $tandem" | tee -a "$dir/vector_add.txt"
  if [ "$BACKEND" = cuda ]; then
    [ -n "$tandem" ] && [ "$native" = "$tandem" ] || bad "$name: vector_add through the orchestrator differs: $(tail -2 "$dir/vector_add.err")"
  else
    grep -q "checksum=" <<<"$tandem" || bad "$name: vector_add through the orchestrator printed no checksum: $(tail -2 "$dir/vector_add.err")"
  fi
  for streams in $STREAMS; do resize_one "$dir" "$name" "$streams"; done
  ctl decisions >"$dir/decisions.txt" 2>&1
  grep -h "runs on .* SMs from its next work" "$dir/$NODE"/*.log 2>/dev/null | tail -6 | tee "$dir/server-share-lines.txt"
  grep -h "tandem-server\[cuda\]" "$dir/$NODE"/*.log 2>/dev/null | sed 's/^[^]]*] //' | sort | uniq -c | sort -rn | head -20 \
    >"$dir/cuda-backend.txt"
  kill $node; sleep 2; kill $orch; wait $node $orch 2>/dev/null
  say "$name: done"
}

say "$(date -u +%FT%TZ) $([ "$BACKEND" = cuda ] && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1 || echo "SIMULATED GPU (sim backend): figures not claimed")"
rm -f "$OUT/hops-rows.txt"
for mps in $PASSES; do
  case $mps in off) run_pass no-mps off ;; on) run_pass mps on ;; *) bad "PASSES takes off and on, not $mps" ;; esac
done
{
  echo "Resize 8 -> $TO SMs from the orchestrator's decision, ms (wall clock, one host; $BACKEND backend)"
  echo "dec->agent: the decision to the node agent's receipt; agent->srv: to the server's set_share; ->ready: the"
  echo "share made (cuda: its green context); ->taken: the session's next work came; ->moved: its streams moved;"
  echo "moved->kern: to the first kernel at the new share done; dec->applied: decision to streams moved."
  echo "kernel@old: the guest's usual kernel before (the one in flight when the change came); kernel@new: the first"
  echo "at the new share (its SMs).  Flyt: up to 130 ms, 180 ms past 60 streams; goal <= 10 ms."
  awk -v header=1 -f "$HOPS_AWK" /dev/null 2>/dev/null | head -1
  cat "$OUT/hops-rows.txt" 2>/dev/null
} >"$OUT/hops.txt"
cat "$OUT/hops.txt"
say "exit: $failed failure(s); results in $OUT"
tar -czf "$OUT/logs.tgz" -C "$OUT" --exclude logs.tgz . 2>/dev/null
exit $((failed > 0))
