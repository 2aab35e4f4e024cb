#!/usr/bin/env bash
# The control plane on a GPU host (issue 17, docs/control-plane.md), over a bundle from
# scripts/gpu-bundle.sh (default .device): a tandem-orchestrator and a tandem-node (cuda backend,
# with MPS off, then on) started from configs/, a guest placed through TANDEM_ORCHESTRATOR, and
# the resize latency through the whole path: `tandemctl share` -> orchestrator -> node agent ->
# the server's control socket -> the first kernel at the new share (bench/shares' resize, which
# prints each kernel's wall-clock start and the SMs it ran on), with 1, 16 and 64 streams.
# Every step says what it does; a failing one is reported and the others go on.  Output: $OUT.
#   tests/gpu/run-control-plane-gpu.sh [BUNDLE]
set -uo pipefail
B=$(cd "${1:-.device}" && pwd) || { echo "run-control-plane-gpu: no bundle" >&2; exit 1; }
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/tandem-control-plane}
mkdir -p "$OUT"
ORCH=127.0.0.1:7070
export LD_LIBRARY_PATH="$B/deps:${LD_LIBRARY_PATH:-}"
failed=0
say() { echo "control-plane-gpu: $*"; }
bad() { echo "control-plane-gpu: FAILED: $*"; failed=$((failed + 1)); }
ctl() { "$B/bin/tandemctl" --orchestrator "$ORCH" "$@"; }

conf=$OUT/conf
rm -rf "$conf" && mkdir -p "$conf"
cp "$SRC/configs/orchestrator.conf" "$SRC/configs/vms.conf" "$conf/"
# the example VMs' tenants with test tokens (mode 600, as the servers and the orchestrator need)
TOKEN=gpu-test-token-training-0001
printf '[training]\ntoken = %s\n[inference]\ntoken = gpu-test-token-inference-02\n[batch]\ntoken = gpu-test-token-batch-000003\n' \
  "$TOKEN" >"$conf/tenants.example.ini"
chmod 600 "$conf/tenants.example.ini"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; sleep 2; for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; }
trap cleanup EXIT

run_pass() {   # run_pass NAME MPS(on|off)
  local name=$1 mps=$2 dir=$OUT/$1
  mkdir -p "$dir"
  say "== pass $name: orchestrator + node agent (cuda, MPS $mps) from configs/"
  sed -e "s#^state_dir = .*#state_dir = \"$dir/node1\";#" -e "s#^backend = .*#backend = \"${BACKEND:-cuda}\";#" \
      -e "s#^mps = .*#mps = \"$mps\";#" -e "s@^# tenants = .*@tenants = \"$conf/tenants.example.ini\";@" \
      "$SRC/configs/node.conf" >"$conf/node-$name.conf"
  "$B/bin/tandem-orchestrator" --config "$conf/orchestrator.conf" --state-dir "$dir/orchestrator" \
    >"$dir/orchestrator.log" 2>&1 &
  local orch=$!; pids+=("$orch")
  sleep 1
  "$B/bin/tandem-node" --config "$conf/node-$name.conf" >"$dir/node.log" 2>&1 &
  local node=$!; pids+=("$node")
  local up=0
  for _ in $(seq 100); do ctl nodes 2>/dev/null | grep -q "node1 .* up .*(active)" && { up=1; break; }; sleep 0.3; done
  ctl nodes | tee "$dir/nodes.txt"
  [ $up = 1 ] || { bad "$name: node1 did not register"; tail -20 "$dir/node.log"; kill $node $orch; return; }
  local env=(TANDEM_ORCHESTRATOR=$ORCH TANDEM_TENANT=training TANDEM_TOKEN=$TOKEN TANDEM_HOST=host1
             LD_LIBRARY_PATH="$B/lib:$B/deps")
  say "$name: vector_add natively and placed by the orchestrator"
  local native tandem
  native=$("$B/examples/vector_add" 2>&1 | tail -1)
  tandem=$(env "${env[@]}" "$B/examples/vector_add" 2>"$dir/vector_add.err" | tail -1)
  echo "native: $native" | tee "$dir/vector_add.txt"; echo "tandem: $tandem" | tee -a "$dir/vector_add.txt"
  [ -n "$tandem" ] && [ "$native" = "$tandem" ] || bad "$name: vector_add through the orchestrator differs: $(tail -2 "$dir/vector_add.err")"
  for streams in 1 16 64; do
    say "$name: resize 8 -> 66 SMs with $streams streams through tandemctl share"
    env "${env[@]}" APP_SM_CORES=8 "$B/bench/bin/shares" resize --streams "$streams" --kernels 120 \
      >"$dir/resize-$streams.jsonl" 2>"$dir/resize-$streams.err" &
    local g=$!
    local key=""
    for _ in $(seq 100); do
      key=$(ctl sessions 2>/dev/null | awk '$2 == "training" && $6 == "8" { k = $1 } END { print k }')
      [ -n "$key" ] && grep -q '"kernel":20,' "$dir/resize-$streams.jsonl" 2>/dev/null && break
      sleep 0.05
    done
    local t0; t0=$(date +%s%3N)
    ctl share "$key" 66 >"$dir/share-$streams.txt" 2>&1 || bad "$name: tandemctl share $key 66: $(cat "$dir/share-$streams.txt")"
    local t1; t1=$(date +%s%3N)
    wait $g || bad "$name: the resize guest failed ($streams streams): $(tail -2 "$dir/resize-$streams.err")"
    echo "{\"pass\":\"$name\",\"streams\":$streams,\"placement\":\"$key\",\"request_wall_ms\":$t0,\"answered_wall_ms\":$t1}" \
      >>"$dir/requests.jsonl"
    awk -v t0="$t0" -v s="$streams" -F'[:,}]' '
      { for (i = 1; i < NF; i++) { if ($i ~ /"sms_seen"/) seen = $(i+1); if ($i ~ /"wall_ms"/) w = $(i+1); if ($i ~ /"ms"/ && $i !~ /_ms/) ms = $(i+1) } }
      seen + 0 >= 66 && first == "" && w + 0 >= t0 { first = w - t0; firstms = ms }
      seen + 0 < 66 && w + 0 < t0 { before = ms }
      END { printf "streams %3d: first kernel at >= 66 SMs started %s ms after tandemctl share (kernel %s ms; before: %s ms)\n", s, first == "" ? "never" : first, firstms, before }
    ' "$dir/resize-$streams.jsonl" | tee -a "$dir/resize.txt"
    # the ended guest's placement is released at the node's next full report (docs/orchestrator.md)
    sleep 3
  done
  ctl decisions >"$dir/decisions.txt" 2>&1
  curl -s "http://$ORCH/metrics" >"$dir/metrics.txt" 2>&1
  grep -h "runs on .* SMs from its next work" "$dir"/node1/*.log 2>/dev/null | tail -6 | tee "$dir/server-share-lines.txt"
  grep -h "tandem-server\[cuda\]" "$dir"/node1/*.log 2>/dev/null | sed 's/^[^]]*] //' | sort | uniq -c | sort -rn | head -20 \
    >"$dir/cuda-backend.txt"
  kill $node; sleep 2; kill $orch; wait $node $orch 2>/dev/null
  say "$name: done"
}

say "$(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
run_pass no-mps off
run_pass mps on
cat "$OUT"/*/resize.txt 2>/dev/null
say "exit: $failed failure(s); results in $OUT"
tar -czf "$OUT/logs.tgz" -C "$OUT" --exclude logs.tgz . 2>/dev/null
exit $((failed > 0))
