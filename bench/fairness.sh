#!/usr/bin/env bash
# bench/fairness.sh: fair share (docs/security.md, "Fair share").  A victim's synchronous calls
# (tiny kernel + cudaStreamSynchronize, 4 KiB cudaMemcpy D2H; bench/fairness/fairness.cu) alone
# and while an attacker process floods one-way launches (tiny kernels; long 1 ms kernels),
# natively (two processes on the GPU; cuda backend only) and through Tandem (two sessions of one
# tandem-server, over shm and tcp).  Writes RESULTS_DIR/results.jsonl (every measurement, with
# mode and attack), table.txt (p50, p99, p99 under attack / alone, Tandem / native) and
# fairness.png (gnuplot, when installed).
#
#   bench/fairness.sh --build BUILD_DIR [--out DIR] [--backend cuda|sim] [--iters N] [--seconds S]
#
# About 2 minutes on a GPU host with the defaults (9 victim runs of 2000 iterations, each beside
# an attacker of up to S = 20 s).  Exit status 1 when a program failed or a victim read back
# wrong bytes.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; }
build="" out="" backend="" iters=2000 seconds=20 smoke=0 bundle=""
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=${2:-}; shift ;;
    --out) out=${2:-}; shift ;;
    --backend) backend=${2:-}; shift ;;
    --iters) iters=${2:-}; shift ;;
    --seconds) seconds=${2:-}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
[[ $iters =~ ^[1-9][0-9]*$ ]] || die "--iters takes a count"
[[ $seconds =~ ^[1-9][0-9]*$ ]] || die "--seconds takes whole seconds"
case $backend in ""|cuda|sim) ;; *) die "--backend takes cuda or sim" ;; esac

bench_locate micro fairness
bench_backend
bench_outdir "$slug-fairness"
bench_library_paths
declare -A srv_pid srv_ep srv_waiter srv_status
trap 'server_stop_all 2>/dev/null; [ -n "${attacker:-}" ] && kill "$attacker" 2>/dev/null' EXIT
echo "fairness: backend $backend, device: $device${label:+   [$label]}; results in $out"

failed=0
raw=$out/results.jsonl
: >"$raw"

# run_victim MODE ATTACK: the victim, with an attacker of ATTACK (none, tiny, long) beside it.
run_victim() {
  local mode=$1 attack=$2 envv=() log=$out/logs/$1-$2
  case $mode in
    native) envv=(LD_LIBRARY_PATH="$native_ld") ;;
    shm) envv=(LD_LIBRARY_PATH="$tandem_ld" TANDEM_SERVER="shm:$shm_name" TANDEM_QUIET=1) ;;
    tcp) envv=(LD_LIBRARY_PATH="$tandem_ld" TANDEM_SERVER="${srv_ep[fair]}" TANDEM_QUIET=1) ;;
  esac
  [ "$mode" = native ] || [ -z "$preload" ] || envv+=(LD_PRELOAD="$preload")
  attacker=""
  if [ "$attack" != none ]; then
    env "${envv[@]}" "$progs/fairness" attacker "$attack" --seconds "$seconds" >"$log.attacker.out" 2>&1 &
    attacker=$!
    for _ in $(seq 200); do grep -qs "attacker flooding" "$log.attacker.out" && break; sleep 0.05; done
    sleep 0.5   # its queue fills
  fi
  echo "fairness: $mode, attacker: $attack"
  if env "${envv[@]}" "$progs/fairness" victim --iters "$iters" --label "$attack" >"$log.out" 2>"$log.err"; then
    sed "s/^{/{\"mode\":\"$mode\",\"attack\":\"$attack\",\"backend\":\"$backend\",/" "$log.out" >>"$raw"
  else
    echo "fairness: the victim failed ($mode, $attack): see $log.err" >&2
    failed=1
  fi
  if [ -n "$attacker" ]; then
    if kill -0 "$attacker" 2>/dev/null; then kill "$attacker" 2>/dev/null; fi
    wait "$attacker" 2>/dev/null
    attacker=""
  fi
}

modes=(shm tcp)
[ "$backend" = cuda ] && modes=(native shm tcp)
shm_name=fair-$$
for mode in "${modes[@]}"; do
  if [ "$mode" != native ]; then
    server_stop_all 2>/dev/null
    server_start fair --shm "$shm_name" || die "tandem-server did not start: see $out/logs/fair.log"
  fi
  for attack in none tiny long; do run_victim "$mode" "$attack"; done
done
server_stop_all

# ---- the table: p50 and p99 (us), under attack / alone, Tandem / native ----
awk -v label="${label:-}" -v device="$device" '
  function field(s, k,   m) { if (match(s, "\"" k "\":\"?[^,\"}]*")) { m = substr(s, RSTART, RLENGTH); sub(/^"[^"]*":"?/, "", m); return m } return "" }
  { mode = field($0, "mode"); att = field($0, "attack"); id = field($0, "id")
    p50[mode, att, id] = field($0, "median_us"); p99[mode, att, id] = field($0, "p99_us")
    if (!(mode in seen)) { seen[mode] = 1; modes[++nm] = mode } if (!(id in ids)) { ids[id] = 1; idl[++ni] = id } }
  END {
    printf "Fair share: a victim beside a process flooding launches; %s%s\n", device, (label == "" ? "" : "  [" label "]")
    printf "%-12s %-5s %-6s %10s %10s %12s %12s\n", "call", "mode", "attack", "p50 us", "p99 us", "p99/alone", "p99/native"
    for (i = 1; i <= ni; i++) for (m = 1; m <= nm; m++) for (a = 0; a < 3; a++) {
      att = a == 0 ? "none" : a == 1 ? "tiny" : "long"; id = idl[i]; mode = modes[m]
      if (!((mode SUBSEP att SUBSEP id) in p99)) continue
      alone = p99[mode, "none", id] + 0; nat = ((("native" SUBSEP att SUBSEP id) in p99) ? p99["native", att, id] : 0) + 0
      printf "%-12s %-5s %-6s %10.1f %10.1f %12s %12s\n", id, mode, att, p50[mode, att, id], p99[mode, att, id],
             (alone > 0 ? sprintf("%.2f", p99[mode, att, id] / alone) : "-"),
             ((nat > 0 && mode != "native") ? sprintf("%.2f", p99[mode, att, id] / nat) : "-")
    }
  }' "$raw" | tee "$out/table.txt"

# ---- the plot: p99 per mode and attack, one panel per call ----
if command -v gnuplot >/dev/null 2>&1; then
  for id in launch_sync d2h_4k; do
    for attack in none tiny long; do
      printf '%s' "$attack"
      for mode in native shm tcp; do
        v=$(grep "\"mode\":\"$mode\",\"attack\":\"$attack\"" "$raw" | grep "\"id\":\"$id\"" |
            sed 's/.*"p99_us":\([0-9.]*\).*/\1/')
        printf ' %s' "${v:-NaN}"
      done
      echo
    done >"$out/logs/$id.dat"
  done
  gnuplot -e "out='$out'; title='$device${label:+ [$label]}'" "$here/fairness.gp" ||
    echo "fairness: gnuplot failed; the table is in $out/table.txt" >&2
fi
[ $failed = 0 ] && echo "fairness: done: $out" || echo "fairness: FAILED (see $out/logs)"
exit $failed
