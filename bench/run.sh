#!/usr/bin/env bash
# bench/run.sh: the benchmark suite (docs/benchmarks.md).  Runs every
# benchmark program natively (when the backend is a real GPU) and through
# Tandem over shm and over tcp in one run, against a tandem-server it starts
# itself; collects the JSON lines into RESULTS_DIR/results.json; prints the
# table (bench/table.sh: native | shm | tcp, ratios, targets, checksums) and
# draws the plots (bench/plot.sh) when gnuplot is installed.
#
# Exit status: 0 when every program ran and every checksum matched its
# reference (the native run on a GPU, the host reference on the sim
# backend); 1 otherwise.  Missed performance targets do not fail the run:
# they are what the table reports.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
  cat <<'EOF'
usage: bench/run.sh [--smoke] [--backend cuda|sim] [--out DIR] [--bundle DIR | --build DIR]
                    [--only LIST] [--max-bytes N[K|M|G]] [--reps R] [--app-size APP=N]...
  --smoke          the quick check: sim backend, small sizes, few repetitions; results go to a
                   temporary directory unless --out is given
  --backend B      cuda (a real GPU; also runs every program natively) or sim (a SIMULATED GPU:
                   every figure is labelled "not claimed"); default: cuda if nvidia-smi sees a
                   GPU, else sim (always sim with --smoke)
  --out DIR        where results.json, table.txt, the plots and logs/ go
                   (default bench/results/DATE-DEVICE)
  --bundle DIR     run from a bundle made by scripts/gpu-bundle.sh (automatic when this script
                   is the bundle's own copy); its deps/ go on LD_LIBRARY_PATH
  --build DIR      run from a build directory (default $TANDEM_BUILD, else ./build)
  --only LIST      comma-separated: micro, apps, or null, launch, create, memcpy, nw, lud,
                   srad, streamcluster (default: everything)
  --max-bytes N    largest cudaMemcpy (default 1G; 4M with --smoke, 64M on sim)
  --reps R         timed runs of each application (median reported; default 3, 1 on sim)
  --app-size A=N[xI]  size (and iterations) of application A (docs/benchmarks.md)
Environment: TANDEM_NATIVE_CUDART_DIR names the directory of NVIDIA's libcudart.so.13 for the
native runs (default: the bundle's native/, then /usr/local/cuda/lib64, then the system's).
EOF
}

die() { echo "bench: $*" >&2; exit 1; }

smoke=0 backend="" out="" bundle="" build="" only="micro,apps" max_bytes="" reps=""
declare -A size_arg=()
while [ $# -gt 0 ]; do
  case $1 in
    --smoke) smoke=1 ;;
    --backend) backend=${2:-}; shift ;;
    --out) out=${2:-}; shift ;;
    --bundle) bundle=${2:-}; shift ;;
    --build) build=${2:-}; shift ;;
    --only) only=${2:-}; shift ;;
    --max-bytes) max_bytes=${2:-}; shift ;;
    --reps) reps=${2:-}; shift ;;
    --app-size) [[ ${2:-} =~ ^(nw|lud|srad|streamcluster)=[1-9][0-9]*(x[1-9][0-9]*)?$ ]] ||
                  die "--app-size takes APP=N or APP=NxITERS"
                size_arg[${2%%=*}]=${2#*=}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
case $backend in ""|cuda|sim) ;; *) die "--backend takes cuda or sim" ;; esac
[ -z "$reps" ] || [[ $reps =~ ^[1-9][0-9]?$ ]] || die "--reps takes 1 to 99"

# ---- what to run -------------------------------------------------------------
micro_sections=() apps=()
IFS=, read -ra wanted <<<"$only"
for w in "${wanted[@]}"; do
  case $w in
    micro) micro_sections+=(null launch create memcpy) ;;
    apps) apps+=(nw lud srad streamcluster) ;;
    null|launch|create|memcpy) micro_sections+=("$w") ;;
    nw|lud|srad|streamcluster) apps+=("$w") ;;
    *) die "--only: unknown benchmark '$w'" ;;
  esac
done

# ---- where the programs are: a bundle or a build -----------------------------
if [ -z "$bundle" ] && [ -z "$build" ] && [ -x "$here/../bin/tandem-server" ] && [ -d "$here/bin" ]; then
  bundle=$here/..    # this is the bundle's copy of the script
fi
native_dirs=()
if [ -n "$bundle" ]; then
  B=$(cd "$bundle" 2>/dev/null && pwd) || die "no bundle at $bundle"
  server=$B/bin/tandem-server guest_lib=$B/lib progs=$B/bench/bin
  [ -d "$B/deps" ] && export LD_LIBRARY_PATH="$B/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  native_dirs+=("$B/native")
  tandem_version=$(cat "$B/bench/VERSION" 2>/dev/null || echo unknown)
else
  build=${build:-${TANDEM_BUILD:-$here/../build}}
  build=$(cd "$build" 2>/dev/null && pwd) || die "no build directory at $build (build first: scripts/build.sh)"
  server=$build/bin/tandem-server guest_lib=$build/lib progs=$build/bench
  tandem_version=$(git -C "$here/.." describe --always --dirty 2>/dev/null || echo unknown)
fi
for f in "$server" "$guest_lib/libcudart.so.13" "$progs/micro" "$progs/nw" "$progs/lud" "$progs/srad" \
         "$progs/streamcluster"; do
  [ -e "$f" ] || die "missing $f (build first: scripts/build.sh; for a bundle: scripts/gpu-bundle.sh)"
done

# ---- backend and device --------------------------------------------------------
if [ -z "$backend" ]; then
  if [ $smoke = 1 ]; then backend=sim
  elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then backend=cuda
  else backend=sim; fi
fi
if [ "$backend" = cuda ]; then
  gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
  [ -n "$gpu" ] || die "--backend cuda, but nvidia-smi does not answer"
  device=${gpu%%,*} driver=${gpu##*, } simulated=false label="" modes="native shm tcp" reference=native
else
  device="Tandem simulated GPU (sim backend)" driver=simulated simulated=true
  label="SIMULATED — figures not claimed" modes="shm tcp" reference=host
fi
slug=$(printf '%s' "$device" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9][^a-z0-9]*/-/g; s/^-//; s/-$//')
[ "$backend" = sim ] && slug=sim

# ---- sizes ---------------------------------------------------------------------
# N or NxI: the size argument and the iterations (--iters) of each
# application.  Small: a few seconds in all on the sim backend, and the size
# at which the host references check the native runs on a GPU.  Full:
# realistic work, about 0.5-3 s a run natively on an H100
# (docs/benchmarks.md).  The sim cannot run full sizes in useful time.
declare -A size=()
declare -A small=([nw]=256 [lud]=128 [srad]=128 [streamcluster]=4096)
declare -A full=([nw]=8192x64 [lud]=12288 [srad]=4096x2000 [streamcluster]=4194304x200)
micro_args=()
if [ $smoke = 1 ] || [ "$backend" = sim ]; then
  for a in nw lud srad streamcluster; do size[$a]=${size_arg[$a]:-${small[$a]}}; done
  reps=${reps:-1} warmup=0
  [ $smoke = 1 ] && micro_args+=(--quick) && max_bytes=${max_bytes:-4M}
  max_bytes=${max_bytes:-64M}
else
  for a in nw lud srad streamcluster; do size[$a]=${size_arg[$a]:-${full[$a]}}; done
  reps=${reps:-3} warmup=1
  max_bytes=${max_bytes:-1G}
fi
app_args() {   # the arguments for size spec $1 (N or NxI)
  case $1 in *x*) echo "${1%x*} --iters ${1#*x}" ;; *) echo "$1" ;; esac
}
[[ $max_bytes =~ ^[1-9][0-9]*[KMG]?$ ]] || die "--max-bytes takes N, NK, NM or NG"
micro_args+=(--max-bytes "$max_bytes")
# Over shm, cudaMallocHost memory comes from the guest's region: the copy
# benchmark pins a buffer of the largest size.
max_mb=$(awk -v s="$max_bytes" 'BEGIN { n = s + 0; u = substr(s, length(s));
  m = u == "G" ? 1024 : u == "M" ? 1 : u == "K" ? 1 / 1024 : 1 / 1048576; printf "%d", n * m + 0.999 }')
shm_host_mb=$(( max_mb + 64 > 256 ? max_mb + 64 : 256 ))

# ---- output directory ------------------------------------------------------------
if [ -z "$out" ]; then
  if [ $smoke = 1 ]; then
    out=$(mktemp -d "${TMPDIR:-/tmp}/tandem-bench-smoke.XXXXXX") || die "cannot make a temporary directory"
  else
    base=$here/results/$(date -u +%F)-$slug out=$base k=2
    while [ -e "$out" ]; do out=$base-$k k=$((k + 1)); done
  fi
fi
mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
# Only what an earlier run wrote there is replaced.
rm -rf "$out/logs" "$out/raw.jsonl" "$out/results.json" "$out/table.txt" "$out/bandwidth.png" \
  "$out/latency.png" "$out/apps.png"
mkdir -p "$out/logs"

# ---- library paths for each mode ---------------------------------------------------
[ -n "${TANDEM_NATIVE_CUDART_DIR:-}" ] && native_dirs=("$TANDEM_NATIVE_CUDART_DIR" "${native_dirs[@]}")
native_dirs+=(/usr/local/cuda/lib64)
native_ld=${LD_LIBRARY_PATH:-}
for d in "${native_dirs[@]}"; do
  if [ -e "$d/libcudart.so.13" ]; then native_ld=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; break; fi
done
tandem_ld=$guest_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
preload=${TANDEM_BENCH_PRELOAD:-}   # sanitizer runtimes, for a sanitized build (bench/CMakeLists.txt)

cudart_of() {   # the libcudart.so.13 a program loads with LD_LIBRARY_PATH=$1
  LD_LIBRARY_PATH=$1 ldd "$progs/micro" 2>/dev/null | awk '$1 == "libcudart.so.13" { print $3 }'
}
guest_cudart=$(cudart_of "$tandem_ld")
[ "$(readlink -f "$guest_cudart")" = "$(readlink -f "$guest_lib/libcudart.so.13")" ] ||
  die "the Tandem runs would load '$guest_cudart', not $guest_lib/libcudart.so.13"
native_cudart=none
if [ "$backend" = cuda ]; then
  native_cudart=$(cudart_of "$native_ld")
  case $native_cudart in
    ""|"not") die "no NVIDIA libcudart.so.13 for the native runs: set TANDEM_NATIVE_CUDART_DIR" ;;
  esac
  [ "$(readlink -f "$native_cudart")" != "$(readlink -f "$guest_cudart")" ] ||
    die "the native runs would load Tandem's libcudart ($native_cudart): fix LD_LIBRARY_PATH"
fi

# ---- the server ----------------------------------------------------------------------
shm_name=bench-$$-$RANDOM
port_file=$out/logs/server.port
"$server" --backend "$backend" --port 0 --port-file "$port_file" --shm "$shm_name" >"$out/logs/server.log" 2>&1 &
server_pid=$!
stop_server() {
  [ -n "${server_pid:-}" ] || return 0
  kill "$server_pid" 2>/dev/null
  wait "$server_pid" 2>/dev/null
  server_status=$?
  server_pid=""
}
trap stop_server EXIT
for _ in $(seq 200); do
  [ -s "$port_file" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
[ -s "$port_file" ] || { cat "$out/logs/server.log" >&2; die "tandem-server did not start"; }
tcp_ep=tcp://127.0.0.1:$(cat "$port_file")

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

failures=()
n=0
t_start=$(date +%s)
for entry in "${plan[@]}"; do
  IFS='|' read -r name mode cmd <<<"$entry"
  read -ra argv <<<"$cmd"
  n=$((n + 1))
  log=$out/logs/$(printf '%02d' $n)-${name// /-}-$mode.log
  printf '[%2d/%d] %-26s %-12s ' "$n" "${#plan[@]}" "$name" "$mode"
  t0=$(date +%s%N)
  mode_env "$mode"
  timeout "$step_timeout" env "${envv[@]}" "${argv[@]}" >"$out/logs/stdout" 2>"$log"
  rc=$?
  secs=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  bad=$(grep -cv '^{.*}$' "$out/logs/stdout")
  if [ $rc -ne 0 ] || [ "$bad" -ne 0 ] || [ ! -s "$out/logs/stdout" ]; then
    [ $rc -eq 124 ] && why="timed out after ${step_timeout} s" || why="exit $rc"
    [ $rc -eq 0 ] && why="printed no or malformed results"
    echo "FAILED ($why, ${secs} s)"
    tail -n 4 "$log" | sed 's/^/          /'
    failures+=("$name over $mode: $why (log: $log)")
  else
    echo "ok  ${secs} s"
    sed "s/^{/{\"mode\":\"$mode\",/" "$out/logs/stdout" >>"$out/raw.jsonl"
  fi
done
rm -f "$out/logs/stdout"
touch "$out/raw.jsonl"

kill -0 "$server_pid" 2>/dev/null || failures+=("tandem-server died during the run (log: $out/logs/server.log)")
stop_server
[ "${server_status:-0}" -eq 0 ] || failures+=("tandem-server exited with status $server_status at SIGTERM")

# ---- results.json: the meta object on one line, one measurement per line --------------
json() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "$s"; }
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
sizes_text=""
for a in nw lud srad streamcluster; do sizes_text+="$a=${size[$a]} "; done
meta="{\"date\":$(json "$(date -u +%Y-%m-%dT%H:%M:%SZ)"),\"host\":$(json "$(hostname)"),"
meta+="\"device\":$(json "$device"),\"driver\":$(json "$driver"),\"backend\":\"$backend\","
meta+="\"simulated\":$simulated,\"label\":$(json "$label"),\"smoke\":$([ $smoke = 1 ] && echo true || echo false),"
meta+="\"benchmarks\":\"${micro_sections[*]} ${apps[*]}\",\"modes\":\"$modes\",\"reference\":\"$reference\","
meta+="\"tandem\":$(json "$tandem_version"),"
meta+="\"cpu\":$(json "$cpu"),\"cpus\":$(nproc),\"kernel\":$(json "$(uname -r)"),"
meta+="\"native_cudart\":$(json "$native_cudart"),\"guest_cudart\":$(json "$guest_cudart"),"
meta+="\"app_sizes\":$(json "${sizes_text% }"),\"app_reps\":$reps,\"app_warmup\":$warmup,\"max_bytes\":\"$max_bytes\","
meta+="\"seconds\":$(( $(date +%s) - t_start ))}"
{
  echo "{"
  echo "\"meta\": $meta,"
  echo "\"results\": ["
  sed '$!s/$/,/' "$out/raw.jsonl"
  echo "]"
  echo "}"
} >"$out/results.json"
rm -f "$out/raw.jsonl"

# ---- table and plots -------------------------------------------------------------------
echo
"$here/table.sh" "$out" | tee "$out/table.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || failures+=("checksum mismatch or missing measurement (table above)")
echo
if command -v gnuplot >/dev/null 2>&1; then
  "$here/plot.sh" "$out" 2>"$out/logs/plot.log" || failures+=("plotting failed (log: $out/logs/plot.log)")
else
  echo "gnuplot is not installed here: draw the plots elsewhere with bench/plot.sh $out"
fi
echo "results: $out/results.json"
case $out in
  "$here"/results/*|"${TMPDIR:-/tmp}"/tandem-bench-smoke.*) ;;
  *) [ $smoke = 1 ] || echo "to keep this run: copy $out to bench/results/$(date -u +%F)-$slug/" ;;
esac
if [ ${#failures[@]} -gt 0 ]; then
  echo
  echo "bench: FAILED:"
  printf '  %s\n' "${failures[@]}"
  exit 1
fi
echo "bench: all programs ran, all checksums match${label:+  [$label]}"
