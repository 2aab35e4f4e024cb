#!/usr/bin/env bash
# bench/control-plane/timeline.sh: Flyt's Table 7 in miniature (issue 17, docs/control-plane.md
# "The timeline"): a tandem-orchestrator and two node agents on this host, five latency-bound
# applications admitted over time through TANDEM_ORCHESTRATOR with Flyt's Table 2 variables, each
# a load phase that makes the elasticity loop scale it up and a light phase that scales it down;
# every 0.5 s the SMs placed on each GPU and each application's share are sampled, and at the end
# the decision log.  Writes into OUT:
#   timeline.tsv    t (s), GPU 1 and GPU 2 SMs placed and their SM counts, app1..app5 shares
#   decisions.tsv   t (s), app, action, from, to, why (every decision of the run)
#   apps.tsv        t (s), app, the kernels' mean and worst latency (ms) and the SMs they ran on
#                   (what each application measured itself, every 0.5 s)
#   table7.txt      Flyt's Table 7: timestamp, action, app count, SM occupancy per GPU % (SMs)
#   logs/           the orchestrator's, agents', servers' and applications' output
# and, where gnuplot is, timeline.png (else: bench/control-plane/timeline-plot.sh OUT afterwards).
#
# GPU 1 is node "...-1": the cuda backend on GPU 0 of this host (--backend sim: the simulated GPU
# with its share model, --sim-wave-us 300).  GPU 2 is node "...-2", always a SIMULATED GPU of 132
# SMs, registered at t = 20 s once every application is placed: a migration target only.  Every
# VM is vm-dedicated to GPU 1, so applications run there; a "migrate" decision is made and logged
# when GPU 1 has no SMs left for a growth the VM's budget allows, and not carried out (live
# migration is another issue).  About 80 s.
#
#   bench/control-plane/timeline.sh [--bundle DIR | --build DIR] [--out DIR] [--backend cuda|sim]
#                                   [--port-base P]
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "timeline: $*" >&2; exit 2; }
bundle="" build="" out="" backend=cuda P=7270
while [ $# -gt 0 ]; do
  case $1 in
    --bundle) bundle=${2:-}; shift ;;
    --build) build=${2:-}; shift ;;
    --out) out=${2:-}; shift ;;
    --backend) backend=${2:-}; shift ;;
    --port-base) P=${2:-}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
case $backend in cuda|sim) ;; *) die "--backend cuda or sim" ;; esac
[[ $P =~ ^[0-9]+$ ]] && [ "$P" -ge 1024 ] && [ "$P" -le 65000 ] || die "--port-base takes a port (1024..65000)"
if [ -z "$bundle" ] && [ -z "$build" ] && [ -x "$here/../bin/tandem-server" ]; then bundle=$here/..; fi
if [ -n "$bundle" ]; then
  B=$(cd "$bundle" && pwd) || die "no bundle at $bundle"
  bin=$B/bin lib=$B/lib deps=$B/deps shares=$B/bench/bin/shares
else
  B=$(cd "${build:-$here/../../build}" && pwd) || die "no build at ${build:-$here/../../build}"
  bin=$B/bin lib=$B/lib deps="" shares=$B/bench/shares
fi
for f in "$bin/tandem-orchestrator" "$bin/tandem-node" "$bin/tandem-server" "$bin/tandemctl" "$lib/libcudart.so.13" "$shares"; do
  [ -e "$f" ] || die "missing $f (scripts/build.sh, or scripts/gpu-bundle.sh for a bundle)"
done
for f in timeline-table.awk timeline-data.awk; do [ -e "$here/$f" ] || die "missing $here/$f"; done
out=${out:-/tmp/tandem-timeline}
mkdir -p "$out" && out=$(cd "$out" && pwd) || die "cannot make $out"
rm -rf "$out/logs" "$out/state" "$out"/*.tsv "$out"/table7.txt "$out"/timeline.png
mkdir -p "$out/logs" "$out/state"
ORCH=127.0.0.1:$P N1=tl$P-1 N2=tl$P-2
say() { printf 'timeline: [%5.1f s] %s\n' "$(awk -v a="$T0" -v b="$(date +%s%3N)" 'BEGIN { print (b - a) / 1000 }')" "$*"; }
ctl() { LD_LIBRARY_PATH="$deps" timeout 5 "$bin/tandemctl" --orchestrator "$ORCH" "$@"; }
T0=$(date +%s%3N)

# ---- the applications: NAME TENANT START_S UNITS LOAD_S LIGHT_S Table-2 variables ----
# A load phase of kernels of UNITS x HB blocks (GPU: 9216 blocks of 4096 FMA steps, about 9.6 ms
# at 8 SMs of an H100 and 2.4 ms at 32; sim: 256 blocks at 300 us a wave, the same times), then a
# light phase of LB blocks (well under APP_LATENCY_LOWER at any share).
if [ "$backend" = sim ]; then HB=256 LB=4 app_iters=2 node1_opts='["--sim-wave-us", "300"]'
else HB=9216 LB=64 app_iters=4096 node1_opts='[]'; fi
apps=(
  "app1 vm1 2  1   30 16 APP_SM_CORES=8 SCALE_UP_FACTOR=8 SCALE_DOWN_FACTOR=8"
  "app2 vm1 6  0.5 28 14 APP_SM_CORES=8 SCALE_UP_FACTOR=4 SCALE_DOWN_FACTOR=4"
  "app3 vm2 10 2   32 16 APP_SM_CORES=8 SCALE_UP_FACTOR=8 SCALE_DOWN_FACTOR=8"
  "app4 vm2 14 1   30 14 APP_SM_CORES=4 SCALE_UP_FACTOR=8 SCALE_DOWN_FACTOR=8"
  "app5 vm2 18 1   30 16 APP_SM_CORES=8 SCALE_UP_FACTOR=8 SCALE_DOWN_FACTOR=8"
)
common_vars=(APP_LATENCY_UPPER=3 APP_LATENCY_LOWER=1 METRIC_SAMPLE_COUNT=3 APP_MODE=vm-dedicated APP_GPU_MEMORY=512)
END_S=72   # the last application ends near 64 s; sampling stops here
# GPU 2 registers once every application is placed: a placement that finds GPU 1 full falls back
# to any GPU with room (docs/orchestrator.md), and an application placed on the simulated GPU
# would run its GPU-sized kernels as C twins on the host.  From then on it is a migration target.
NODE2_AT=20

# ---- configs ----
c=$out/state
TOK1=timeline-token-vm1-000000001 TOK2=timeline-token-vm2-000000002
printf '[vm1]\ntoken = %s\n[vm2]\ntoken = %s\n' "$TOK1" "$TOK2" >"$c/tenants.ini"
chmod 600 "$c/tenants.ini"
cat >"$c/orchestrator.conf" <<EOF
listen = "$ORCH";
state_dir = "$c/orchestrator";
tenants_file = "tenants.ini";
vms = "vms.conf";
policies = {
  telemetry_interval_ms = 250;
  node_lost_timeout_ms = 5000;
  elasticity_cooldown_ms = 1000;
  decisions_kept = 1000;
  agent_timeout_ms = 2000;
  reserved_timeout_ms = 30000;
};
defaults = {
  sm_cores = 8; gpu_memory_mib = 512; scale_up = 8; scale_down = 8;
  latency_upper_ms = 3.0; latency_lower_ms = 1.0; sample_count = 3; metric_interval_s = 1;
};
EOF
cat >"$c/vms.conf" <<EOF
vms = (
  { name = "vm1"; sm_budget = 48; memory_mib = 8192; mode = "vm-dedicated"; gpu = { node = "$N1"; index = 0; }; host = "host1"; },
  { name = "vm2"; sm_budget = 128; memory_mib = 16384; mode = "vm-dedicated"; gpu = { node = "$N1"; index = 0; }; host = "host1"; }
);
EOF
node_conf() {   # node_conf NAME LISTEN_PORT BACKEND BASE_PORT SERVER_OPTIONS GPU_NAME
  cat <<EOF
node = "$1";
host = "host1";
listen = "127.0.0.1:$2";
orchestrator = "$ORCH";
state_dir = "$c/$1";
server = "$bin/tandem-server";
backend = "$3";
mps = "off";
tenants = "$c/tenants.ini";
telemetry_ms = 250;
server_options = $5;
gpus = ( { index = 0; name = "$6"; memory_mib = 81920; servers = 1; standby = false; base_port = $4; } );
EOF
}
node_conf "$N1" $((P + 1)) "$backend" $((P + 10)) "$node1_opts" "$([ "$backend" = sim ] && echo "simulated GPU" || echo "GPU 0")" >"$c/node1.conf"
node_conf "$N2" $((P + 2)) sim $((P + 20)) '[]' "simulated GPU (migration target only)" >"$c/node2.conf"

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 1
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
}
trap cleanup EXIT

failed=0
bad() { echo "timeline: FAILED: $*" >&2; failed=$((failed + 1)); }
say "$backend backend; orchestrator on $ORCH; nodes $N1 (GPU 1) and $N2 (GPU 2, simulated); results in $out"
LD_LIBRARY_PATH="$deps" "$bin/tandem-orchestrator" --config "$c/orchestrator.conf" >"$out/logs/orchestrator.log" 2>&1 &
pids+=($!)
sleep 0.5
start_node() {
  LD_LIBRARY_PATH="$deps" "$bin/tandem-node" --config "$c/node$1.conf" >"$out/logs/node$1.log" 2>&1 &
  pids+=($!)
}
start_node 1
up=0
for _ in $(seq 150); do
  ctl nodes 2>/dev/null | grep -q "^$N1 .* up .*(active)" && { up=1; break; }
  sleep 0.2
done
ctl nodes | sed 's/^/timeline:   /'
[ $up = 1 ] || { bad "node $N1 did not register (logs/node1.log)"; tail -5 "$out"/logs/node1.log; exit 1; }
T0=$(date +%s%3N)   # the timeline's zero: GPU 1's node is up
say "GPU 1's node is up: t = 0"

# ---- the applications, each started at its time ----
start_app() {   # start_app NAME TENANT START UNITS LOAD LIGHT VARS...
  local name=$1 tenant=$2 units=$4 load=$5 light=$6 tok
  shift 6
  tok=$TOK1; [ "$tenant" = vm2 ] && tok=$TOK2
  local blocks
  blocks=$(awk -v u="$units" -v b="$HB" 'BEGIN { printf "%d", u * b }')
  say "start $name ($tenant): $* ${common_vars[*]}; load $blocks blocks for $load s, then $LB blocks for $light s"
  timeout $((load + light + 40)) env LD_LIBRARY_PATH="$lib${deps:+:$deps}" TANDEM_ORCHESTRATOR="$ORCH" TANDEM_TENANT="$tenant" \
    TANDEM_TOKEN="$tok" TANDEM_HOST=host1 "${common_vars[@]}" "$@" \
    "$shares" app --phases "$blocks:$load,$LB:$light" --iters "$app_iters" >"$out/logs/$name.out" 2>"$out/logs/$name.err" &
  app_pid[$name]=$!
}
declare -A app_pid=() started=()
samples=$out/logs/samples.tsv
: >"$samples"
next_sample=0
while :; do
  t_ms=$(( $(date +%s%3N) - T0 ))
  [ $t_ms -ge $((END_S * 1000)) ] && break
  if [ -z "${node2_started:-}" ] && [ $t_ms -ge $((NODE2_AT * 1000)) ]; then
    node2_started=$t_ms
    say "GPU 2's node (simulated, a migration target only) starts"
    start_node 2
  fi
  for a in "${apps[@]}"; do
    read -r name tenant start rest <<<"$a"
    if [ -z "${started[$name]:-}" ] && [ $t_ms -ge $((start * 1000)) ]; then
      started[$name]=1
      # shellcheck disable=SC2086
      start_app $name $tenant $start $rest
    fi
  done
  if [ $t_ms -ge $next_sample ]; then
    t=$(awk -v m="$t_ms" 'BEGIN { printf "%.2f", m / 1000 }')
    ctl json gpus 2>/dev/null | awk -v t="$t" '{ print t "\tgpu\t" $0 }' >>"$samples"
    ctl json placements 2>/dev/null | awk -v t="$t" '{ print t "\tplacement\t" $0 }' >>"$samples"
    next_sample=$((next_sample + 500))
    [ $((next_sample % 10000)) = 0 ] && say "$(ctl json placements 2>/dev/null | wc -l) placements; GPU 1: $(ctl json gpus 2>/dev/null | grep "\"node\":\"$N1\"" | sed -n 's/.*"sm_placed":\([0-9]*\).*/\1/p') SMs placed"
  fi
  sleep 0.1
done
say "sampling ends; waiting for the applications"
for name in "${!app_pid[@]}"; do
  if wait "${app_pid[$name]}" && grep -q '^ok$' "$out/logs/$name.out"; then :; else
    bad "$name did not finish with checked results: $(tail -2 "$out/logs/$name.err" | tr '\n' ' ')"
  fi
done
[ ${#app_pid[@]} = ${#apps[@]} ] || bad "only ${#app_pid[@]} of ${#apps[@]} applications started"
ctl json decisions >"$out/logs/decisions.jsonl" 2>"$out/logs/decisions.err" || bad "tandemctl json decisions failed"

# ---- the tables ----
t0_s=$(awk -v m="$T0" 'BEGIN { printf "%.3f", m / 1000 }')
for a in "${apps[@]}"; do
  read -r name _ <<<"$a"
  grep '"test":"app"' "$out/logs/$name.out" 2>/dev/null | awk -v app="$name" -v t0="$t0_s" '
    function f(k,   m) { m = $0; sub(".*\"" k "\":", "", m); sub(/[,}].*/, "", m); return m }
    { printf "%.2f\t%s\t%s\t%s\t%s\n", f("wall_ms") / 1000 - t0, app, f("mean_ms"), f("max_ms"), f("sms_seen") }'
done | sort -n >"$out/apps.tsv"
# which application each placement is: the guest's "placed by the orchestrator: placement KEY" line
for a in "${apps[@]}"; do
  read -r name _ <<<"$a"
  key=$(sed -n 's/.*placed by the orchestrator: placement \([^ ]*\) on .*/\1/p' "$out/logs/$name.err" 2>/dev/null | head -1)
  [ -n "$key" ] && echo "$key $name"
done >"$out/logs/apps.map"
sms_of() { grep "\"node\":\"$1\"" "$samples" | sed -n 's/.*"sms":\([0-9]*\).*/\1/p' | head -1; }
sms1=$(sms_of "$N1") sms2=$(sms_of "$N2")
awk -v t0="$t0_s" -v gpu1="$N1/gpu0" -v gpu2="$N2/gpu0" -v mode=decisions -f "$here/timeline-table.awk" \
  "$out/logs/apps.map" "$out/logs/decisions.jsonl" >"$out/decisions.tsv"
awk -v t0="$t0_s" -v gpu1="$N1/gpu0" -v gpu2="$N2/gpu0" -v sms1="${sms1:-132}" -v sms2="${sms2:-132}" \
  -v backend="$backend" -v gpu2_at="$(awk -v m="${node2_started:-0}" 'BEGIN { printf "%.1f", m / 1000 }')" \
  -v mode=table -f "$here/timeline-table.awk" "$out/logs/apps.map" "$out/logs/decisions.jsonl" \
  >"$out/table7.txt"
awk -v gpu1="$N1" -v gpu2="$N2" -f "$here/timeline-data.awk" "$out/decisions.tsv" "$samples" >"$out/timeline.tsv"
cat "$out/table7.txt"
if command -v gnuplot >/dev/null 2>&1 && [ -x "$here/timeline-plot.sh" ]; then
  "$here/timeline-plot.sh" "$out" || echo "timeline: the plot failed; the tables are in $out"
else
  echo "timeline: no gnuplot here: draw it with bench/control-plane/timeline-plot.sh $out"
fi
grep -q "^ *[0-9.]*  Vertical ++" "$out/table7.txt" || bad "no application was scaled up"
grep -q "^ *[0-9.]*  Vertical --" "$out/table7.txt" || bad "no application was scaled down"
ctl nodes 2>/dev/null | grep -q "^$N2 .* up" || bad "GPU 2's node $N2 did not register (logs/node2.log)"
say "done: $failed failure(s); results in $out"
exit $((failed > 0))
