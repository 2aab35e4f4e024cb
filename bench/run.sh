#!/usr/bin/env bash
# bench/run.sh: the benchmark suites (docs/benchmarks.md).
#   transport (default): every benchmark program natively (when the backend
#     is a real GPU) and through Tandem over shm and over tcp in one run,
#     against a tandem-server it starts itself.
#   takeover (bench/takeover.sh): recovery after the active server is
#     killed, and the steady-state cost of mirroring to a standby.
# Collects the JSON lines into RESULTS_DIR/results.json; prints the table
# (bench/table.sh: native and Tandem side by side, ratios, targets,
# checksums) and draws the plots (bench/plot.sh) when gnuplot is installed.
#
# Exit status: 0 when every program ran and every checksum matched its
# reference (the native run on a GPU, the host reference on the sim
# backend); 1 otherwise.  Missed performance targets do not fail the run:
# they are what the table reports.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"

usage() {
  cat <<'EOF'
usage: bench/run.sh [--suite transport|takeover] [--smoke] [--backend cuda|sim] [--out DIR]
                    [--bundle DIR | --build DIR] [--only LIST] [--max-bytes N[K|M|G]] [--reps R]
                    [--app-size APP=N]... [--kills K] [--buffers MIB,...]
  --suite S        transport (default): native, shm and tcp side by side; takeover: recovery
                   after the active server is killed and the cost of shadowing, against runs
                   with no standby (docs/benchmarks.md)
  --smoke          the quick check: sim backend, small sizes, few repetitions; results go to a
                   temporary directory unless --out is given
  --backend B      cuda (a real GPU; also runs every program natively) or sim (a SIMULATED GPU:
                   every figure is labelled "not claimed"); default: cuda if nvidia-smi sees a
                   GPU, else sim (always sim with --smoke)
  --out DIR        where results.json, table.txt, the plots and logs/ go
                   (default bench/results/DATE-DEVICE, DATE-DEVICE-takeover for that suite)
  --bundle DIR     run from a bundle made by scripts/gpu-bundle.sh (automatic when this script
                   is the bundle's own copy); its deps/ go on LD_LIBRARY_PATH
  --build DIR      run from a build directory (default $TANDEM_BUILD, else ./build)
  --only LIST      comma-separated: micro, apps, driver-calls, or null, launch, create, memcpy,
                   nw, lud, srad, streamcluster (default: everything); takeover suite: recovery,
                   overhead, or loop, nw, lud, srad, streamcluster
  --max-bytes N    transport: largest cudaMemcpy (default 1G; 4M with --smoke, 64M on sim)
  --reps R         timed runs of each application (median reported; default 3, 1 on sim)
  --app-size A=N[xI]  size (and iterations) of application A (docs/benchmarks.md)
  --kills K        takeover: kills per buffer size (default 10; 5 on sim, 3 with --smoke)
  --buffers LIST   takeover: the in-place buffer sizes in MiB (default 4,256; 1,4 on sim,
                   1,2 with --smoke)
Environment: TANDEM_NATIVE_CUDART_DIR names the directory of NVIDIA's libcudart.so.13 for the
native runs (default: the bundle's native/, then /usr/local/cuda/lib64, then the system's).
EOF
}

suite=transport smoke=0 backend="" out="" bundle="" build="" only="" max_bytes="" reps="" kills="" buffers=""
declare -A size_arg=()
while [ $# -gt 0 ]; do
  case $1 in
    --suite) suite=${2:-}; shift ;;
    --smoke) smoke=1 ;;
    --backend) backend=${2:-}; shift ;;
    --out) out=${2:-}; shift ;;
    --bundle) bundle=${2:-}; shift ;;
    --build) build=${2:-}; shift ;;
    --only) only=${2:-}; shift ;;
    --max-bytes) max_bytes=${2:-}; shift ;;
    --reps) reps=${2:-}; shift ;;
    --kills) kills=${2:-}; shift ;;
    --buffers) buffers=${2:-}; shift ;;
    --app-size) [[ ${2:-} =~ ^(nw|lud|srad|streamcluster)=[1-9][0-9]*(x[1-9][0-9]*)?$ ]] ||
                  die "--app-size takes APP=N or APP=NxITERS"
                size_arg[${2%%=*}]=${2#*=}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
case $backend in ""|cuda|sim) ;; *) die "--backend takes cuda or sim" ;; esac
case $suite in transport|takeover) ;; *) die "--suite takes transport or takeover" ;; esac
[ -z "$reps" ] || [[ $reps =~ ^[1-9][0-9]?$ ]] || die "--reps takes 1 to 99"
if [ "$suite" = takeover ]; then
  source "$here/takeover.sh"   # ends the run
fi
[ -z "$kills$buffers" ] || die "--kills and --buffers belong to --suite takeover"

# ---- what to run -------------------------------------------------------------
micro_sections=() apps=() drv_calls=()
IFS=, read -ra wanted <<<"${only:-micro,apps,driver-calls}"
for w in "${wanted[@]}"; do
  case $w in
    micro) micro_sections+=(null launch create memcpy) ;;
    driver-calls) drv_calls=(driver-calls) ;;
    apps) apps+=(nw lud srad streamcluster) ;;
    null|launch|create|memcpy) micro_sections+=("$w") ;;
    nw|lud|srad|streamcluster) apps+=("$w") ;;
    *) die "--only: unknown benchmark '$w'" ;;
  esac
done

bench_locate micro nw lud srad streamcluster "${drv_calls[@]}"
bench_backend
if [ "$backend" = cuda ]; then modes="native shm tcp" reference=native
else modes="shm tcp" reference=host; fi

# ---- sizes ---------------------------------------------------------------------
bench_app_sizes
micro_args=()
if [ $smoke = 1 ] || [ "$backend" = sim ]; then
  [ $smoke = 1 ] && micro_args+=(--quick) && max_bytes=${max_bytes:-4M}
  max_bytes=${max_bytes:-64M}
else
  max_bytes=${max_bytes:-1G}
fi
[[ $max_bytes =~ ^[1-9][0-9]*[KMG]?$ ]] || die "--max-bytes takes N, NK, NM or NG"
micro_args+=(--max-bytes "$max_bytes")
# Over shm, cudaMallocHost memory comes from the guest's region: the copy
# benchmark pins a buffer of the largest size.
max_mb=$(awk -v s="$max_bytes" 'BEGIN { n = s + 0; u = substr(s, length(s));
  m = u == "G" ? 1024 : u == "M" ? 1 : u == "K" ? 1 / 1024 : 1 / 1048576; printf "%d", n * m + 0.999 }')
shm_host_mb=$(( max_mb + 64 > 256 ? max_mb + 64 : 256 ))

bench_outdir "$slug"
bench_library_paths

# ---- the server ----------------------------------------------------------------------
shm_name=bench-$$-$RANDOM
trap server_stop_all EXIT
server_start server --shm "$shm_name" || { cat "$out/logs/server.log" >&2; die "tandem-server did not start"; }
tcp_ep=${srv_ep[server]}

echo "bench: backend $backend, device: $device${label:+   [$label]}"
echo "bench: tandem-server at $tcp_ep and shm:$shm_name; results in $out"
[ "$backend" = cuda ] && echo "bench: native runs load $native_cudart"

# ---- the environment of each mode ----------------------------------------------------------
# native: NVIDIA's libcudart.  shm, tcp: Tandem's, to the server above.
# host (the host reference): Tandem's library is loaded but pointed at a
# port nothing listens on, so a CUDA call from the reference would fail
# rather than go unseen.
mode_env() {
  case $1 in
    native|native_check) envv=(LD_LIBRARY_PATH="$native_ld") ;;
    shm) envv=(LD_LIBRARY_PATH="$tandem_ld" TANDEM_SERVER="shm:$shm_name" TANDEM_QUIET=1
               TANDEM_SHM_HOST_MB="$shm_host_mb") ;;
    tcp) envv=(LD_LIBRARY_PATH="$tandem_ld" TANDEM_SERVER="$tcp_ep" TANDEM_QUIET=1) ;;
    host|host_check) envv=(LD_LIBRARY_PATH="$tandem_ld" TANDEM_SERVER=tcp://127.0.0.1:1) ;;
  esac
  # A Driver API program (driver-calls) loads libcuda.so.1: natively the system's, through
  # Tandem the one in lib/driver (as scripts/tandem-run sets it).
  case $1:$2 in shm:driver-calls|tcp:driver-calls) envv[0]=LD_LIBRARY_PATH=$guest_lib/driver:$tandem_ld ;; esac
  case $1 in native|native_check) ;; *) [ -z "$preload" ] || envv+=(LD_PRELOAD="$preload") ;; esac
}

step_timeout=600
[ $smoke = 1 ] && step_timeout=60
plan=()           # "name|mode|program args..."
for s in "${micro_sections[@]}"; do
  for m in $modes; do plan+=("micro $s|$m|$progs/micro --only $s ${micro_args[*]}"); done
done
for a in "${apps[@]}"; do
  args=$(app_args "${size[$a]}")
  for m in $modes; do plan+=("$a ${size[$a]}|$m|$progs/$a $args --reps $reps --warmup $warmup"); done
  if [ "$backend" = sim ]; then
    plan+=("$a ${size[$a]}|host|$progs/$a $args --host-reference")
  else
    # The GPU's results (and so the sim twins', which the smoke run checks
    # against the same host code) must agree with plain host code: at the
    # small size, the host reference against the native run.
    plan+=("$a ${small[$a]}|native_check|$progs/$a $(app_args "${small[$a]}")")
    plan+=("$a ${small[$a]}|host_check|$progs/$a $(app_args "${small[$a]}") --host-reference")
  fi
done

# ---- driver calls: the hot Driver API entry points of stock PyTorch, per call ----
drv_args=()
[ $smoke = 1 ] && drv_args+=(--quick)
for d in "${drv_calls[@]}"; do
  for m in $modes; do plan+=("driver-calls|$m|$progs/driver-calls ${drv_args[*]}"); done
done

step_total=${#plan[@]}
t_start=$(date +%s)
for entry in "${plan[@]}"; do
  IFS='|' read -r name mode cmd <<<"$entry"
  read -ra argv <<<"$cmd"
  mode_env "$mode" "$name"
  step_run "$name" "$mode" "${argv[@]}"
  step_verdict
done

# ---- tcp lanes (issue 14): the wire's ceiling beside the tcp copies ----
# A tcp copy is striped over TANDEM_TCP_LANES connections (8 by default,
# docs/protocol.md): plain loopback TCP over 1 connection is what one
# connection can reach, over 4, 8 and 16 what striping can; each with the
# lanes' send modes (TANDEM_TCP_SEND): plain, splice, zerocopy.
if [[ " ${micro_sections[*]} " == *" memcpy "* ]] && [ -x "$progs/tcp-loopback" ]; then
  lb_args=(256 5 8192)
  [ $smoke = 1 ] && lb_args=(16 3 1024)
  for n in 1 4 8 16; do
    lines=$("$progs/tcp-loopback" "${lb_args[@]}" "$n" plain,splice,zerocopy) ||
      failures+=("tcp-loopback $n streams failed")
    [ -n "$lines" ] || continue
    echo "$lines" >>"$out/tcp-loopback.jsonl"
    echo "bench: tcp ceiling over $n connection(s), GB/s:" \
      $(sed -n 's/.*"mode":"\([a-z]*\)".*"value":\([0-9.]*\).*/\1 \2/p' <<<"$lines")
  done
fi

kill -0 "${srv_pid[server]}" 2>/dev/null || failures+=("tandem-server died during the run (log: $out/logs/server.log)")
server_stop server
[ "${srv_status[server]:-0}" = 0 ] ||
  failures+=("tandem-server exited with status ${srv_status[server]} at SIGTERM")

# ---- results.json: the meta object on one line, one measurement per line --------------
sizes_text=""
for a in nw lud srad streamcluster; do sizes_text+="$a=${size[$a]} "; done
meta="{$(meta_common),\"suite\":\"transport\","
meta+="\"benchmarks\":\"${micro_sections[*]} ${apps[*]} ${drv_calls[*]}\",\"modes\":\"$modes\",\"reference\":\"$reference\","
meta+="\"app_sizes\":$(json "${sizes_text% }"),\"app_reps\":$reps,\"app_warmup\":$warmup,\"max_bytes\":\"$max_bytes\","
meta+="\"seconds\":$(( $(date +%s) - t_start ))}"
write_results "$meta"
bench_finish "all programs ran, all checksums match"
