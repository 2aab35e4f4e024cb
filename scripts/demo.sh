#!/usr/bin/env bash
# The demo: builds Tandem, starts tandem-server (the real GPU if one answers,
# otherwise the SIMULATED GPU), and runs each example program unmodified
# through the guest library, next to its native run where a GPU exists.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$TANDEM_ROOT/scripts/install-deps.sh" >/dev/null
TANDEM_WITH_KMOD_TEST=0 "$TANDEM_ROOT/scripts/build.sh"

backend=${TANDEM_BACKEND:-}
if [ -z "$backend" ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then backend=cuda; else backend=sim; fi
fi
port_file=$(mktemp)
log=$(mktemp)
"$TANDEM_BUILD/bin/tandem-server" --backend "$backend" --port 0 --port-file "$port_file" 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$port_file"' EXIT
for _ in $(seq 100); do [ -s "$port_file" ] && break; sleep 0.1; done
[ -s "$port_file" ] || { echo "tandem-server did not start:"; cat "$log"; exit 1; }
endpoint="tcp://127.0.0.1:$(cat "$port_file")"
echo "tandem-server: backend $backend at $endpoint$([ $backend = sim ] && echo '  (SIMULATED GPU: no GPU on this machine)')"
echo

status=0
for ex in vector_add increment_loop streams_events matmul; do
  bin="$TANDEM_BUILD/examples/$ex"
  if [ "$backend" = cuda ]; then
    native=$("$bin" 2>/dev/null || echo "native run failed")
    printf '%-16s native : %s\n' "$ex" "$native"
  fi
  start=$(date +%s.%N)
  out=$(TANDEM_QUIET=1 LD_LIBRARY_PATH="$TANDEM_BUILD/lib" TANDEM_SERVER="$endpoint" "$bin") || status=1
  secs=$(echo "$(date +%s.%N) - $start" | bc 2>/dev/null || echo "?")
  printf '%-16s tandem : %s   (%ss)\n' "$ex" "$out" "$secs"
  if [ "$backend" = cuda ]; then
    expected=$native; source_of_truth="native run"
  else
    expected=$("$TANDEM_BUILD/bin/example-reference" "$ex"); source_of_truth="host reference"
    printf '%-16s host   : %s\n' "$ex" "$expected"
  fi
  if [ "$out" = "$expected" ]; then echo "  match ($source_of_truth)"; else echo "  MISMATCH with $source_of_truth"; status=1; fi
done
kill $server 2>/dev/null; wait $server 2>/dev/null || true

# ---- the control plane (issue 17, docs/control-plane.md) ----
# tandem-orchestrator and a tandem-node started from the example configs in configs/ (one
# machine: node1 on host1), and the same program placed by the orchestrator: the guest names
# only TANDEM_ORCHESTRATOR and its tenant.
echo
echo "== the control plane: configs/orchestrator.conf, configs/vms.conf, configs/node.conf"
cp_dir=$(mktemp -d)
token=demo-token-training-000001
printf '[training]\ntoken = %s\n[inference]\ntoken = demo-token-inference-00002\n[batch]\ntoken = demo-token-batch-0000000003\n' \
  "$token" >"$cp_dir/tenants.ini"
chmod 600 "$cp_dir/tenants.ini"
sed -e "s#^state_dir = .*#state_dir = \"$cp_dir/node1\";#" -e "s#^backend = .*#backend = \"$backend\";#" \
    -e "s@^# tenants = .*@tenants = \"$cp_dir/tenants.ini\";@" "$TANDEM_ROOT/configs/node.conf" >"$cp_dir/node.conf"
"$TANDEM_BUILD/bin/tandem-orchestrator" --config "$TANDEM_ROOT/configs/orchestrator.conf" --state-dir "$cp_dir/orch" \
  --tenants "$cp_dir/tenants.ini" >"$cp_dir/orchestrator.log" 2>&1 &
orch=$!
"$TANDEM_BUILD/bin/tandem-node" --config "$cp_dir/node.conf" >"$cp_dir/node.log" 2>&1 &
node=$!
# Under set -e a failing command in the trap would become the script's exit status: the
# processes may be gone already (the node agent is stopped below; the orchestrator may stop
# at the first TERM), which is no failure of the demo.
trap 'kill $server $node $orch 2>/dev/null || true; sleep 1; kill $orch 2>/dev/null || true; rm -f "$port_file"' EXIT
ctl() { "$TANDEM_BUILD/bin/tandemctl" --orchestrator 127.0.0.1:7070 "$@"; }
for _ in $(seq 100); do ctl nodes 2>/dev/null | grep -q "node1 .* up .*(active)" && break; sleep 0.2; done
ctl nodes || { echo "the node agent did not register; see $cp_dir/*.log"; exit 1; }
out=$(TANDEM_QUIET=1 LD_LIBRARY_PATH="$TANDEM_BUILD/lib" TANDEM_ORCHESTRATOR=127.0.0.1:7070 TANDEM_TENANT=training \
      TANDEM_TOKEN=$token TANDEM_HOST=host1 APP_SM_CORES=16 "$TANDEM_BUILD/examples/vector_add") || status=1
printf '%-16s placed : %s\n' vector_add "$out"
if [ "$backend" = cuda ]; then expected=$("$TANDEM_BUILD/examples/vector_add" 2>/dev/null); else
  expected=$("$TANDEM_BUILD/bin/example-reference" vector_add); fi
if [ "$out" = "$expected" ]; then echo "  match"; else echo "  MISMATCH"; status=1; fi
ctl decisions
kill $node; wait $node 2>/dev/null || true

echo
[ $status -eq 0 ] && echo "demo: all outputs match" || echo "demo: MISMATCHES above"
exit $status
