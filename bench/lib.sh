# bench/lib.sh: what the suites of bench/run.sh share (sourced): where the
# programs are, the backend and device, the results directory, the library
# paths of native and Tandem runs, tandem-server processes, the step runner
# with its progress lines, results.json, and the end of a run (table, plots,
# verdict).  The functions set the globals the suites read; `here` is
# bench/ (or the bundle's bench/), `out` the results directory.

die() { echo "bench: $*" >&2; exit 1; }

json() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "$s"; }

# ---- where the programs are: a bundle or a build ------------------------------------
# bench_locate PROGRAM...: sets server, guest_lib, progs, tandem_version and
# native_dirs from $bundle or $build, and checks that tandem-server, the
# guest library and the named programs are there.
bench_locate() {
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
  local f
  for f in "$server" "$guest_lib/libcudart.so.13" "${@/#/$progs/}"; do
    [ -e "$f" ] || die "missing $f (build first: scripts/build.sh; for a bundle: scripts/gpu-bundle.sh)"
  done
}

# ---- backend and device ---------------------------------------------------------------
# bench_backend: sets backend (unless given), device, driver, simulated,
# label and slug (the device's name for directory names).
bench_backend() {
  if [ -z "$backend" ]; then
    if [ "$smoke" = 1 ]; then backend=sim
    elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then backend=cuda
    else backend=sim; fi
  fi
  if [ "$backend" = cuda ]; then
    local gpu
    gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
    [ -n "$gpu" ] || die "--backend cuda, but nvidia-smi does not answer"
    device=${gpu%%,*} driver=${gpu##*, } simulated=false label=""
  else
    device="Tandem simulated GPU (sim backend)" driver=simulated simulated=true
    label="SIMULATED — figures not claimed"
  fi
  slug=$(printf '%s' "$device" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9][^a-z0-9]*/-/g; s/^-//; s/-$//')
  [ "$backend" = sim ] && slug=sim
  return 0
}

# ---- application sizes ---------------------------------------------------------------
# bench_app_sizes: sets size[APP] (N or NxI: the size argument and the
# iterations, --iters, of each application), small[APP], reps and warmup.
# Small: a few seconds in all on the sim backend, and the size at which the
# host references check the native runs on a GPU.  Full: realistic work,
# about 0.5-3 s a run natively on an H100 (docs/benchmarks.md).  The sim
# cannot run full sizes in useful time.  --app-size (size_arg) overrides.
declare -A size=() small=([nw]=256 [lud]=128 [srad]=128 [streamcluster]=4096)
declare -A full=([nw]=8192x64 [lud]=12288 [srad]=4096x2000 [streamcluster]=4194304x200)
bench_app_sizes() {
  local a
  if [ "$smoke" = 1 ] || [ "$backend" = sim ]; then
    for a in nw lud srad streamcluster; do size[$a]=${size_arg[$a]:-${small[$a]}}; done
    reps=${reps:-1} warmup=0
  else
    for a in nw lud srad streamcluster; do size[$a]=${size_arg[$a]:-${full[$a]}}; done
    reps=${reps:-3} warmup=1
  fi
}

app_args() {   # the arguments for size spec $1 (N or NxI)
  case $1 in *x*) echo "${1%x*} --iters ${1#*x}" ;; *) echo "$1" ;; esac
}

# ---- the results directory -------------------------------------------------------------
# bench_outdir NAME: sets out (default bench/results/DATE-NAME, or a new
# temporary directory for --smoke) and clears what an earlier run wrote there.
bench_outdir() {
  results_name=$1
  if [ -z "$out" ]; then
    if [ "$smoke" = 1 ]; then
      out=$(mktemp -d "${TMPDIR:-/tmp}/tandem-bench-smoke.XXXXXX") || die "cannot make a temporary directory"
    else
      local base k=2
      base=$here/results/$(date -u +%F)-$results_name out=$base
      while [ -e "$out" ]; do out=$base-$k k=$((k + 1)); done
    fi
  fi
  mkdir -p "$out" || die "cannot create $out"
  out=$(cd "$out" && pwd)
  # Only what an earlier run wrote there is replaced.
  rm -rf "$out/logs" "$out/raw.jsonl" "$out/results.json" "$out/table.txt" "$out/bandwidth.png" \
    "$out/latency.png" "$out/apps.png" "$out/recovery.png" "$out/shadowing.png"
  mkdir -p "$out/logs"
}

# ---- library paths for native and Tandem runs --------------------------------------------
# bench_library_paths: sets native_ld and tandem_ld (LD_LIBRARY_PATH of the
# native and the Tandem runs), native_cudart and guest_cudart (the
# libcudart.so.13 each loads, checked) and preload.
bench_library_paths() {
  local d
  [ -n "${TANDEM_NATIVE_CUDART_DIR:-}" ] && native_dirs=("$TANDEM_NATIVE_CUDART_DIR" "${native_dirs[@]}")
  native_dirs+=(/usr/local/cuda/lib64)
  native_ld=${LD_LIBRARY_PATH:-}
  for d in "${native_dirs[@]}"; do
    if [ -e "$d/libcudart.so.13" ]; then native_ld=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; break; fi
  done
  tandem_ld=$guest_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  preload=${TANDEM_BENCH_PRELOAD:-}   # sanitizer runtimes, for a sanitized build (bench/CMakeLists.txt)
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
}

cudart_of() {   # the libcudart.so.13 a program loads with LD_LIBRARY_PATH=$1
  LD_LIBRARY_PATH=$1 ldd "$progs/micro" 2>/dev/null | awk '$1 == "libcudart.so.13" { print $3 }'
}

# ---- tandem-server processes ------------------------------------------------------------
# server_start NAME ARG...: starts tandem-server --backend $backend on a
# free port with ARGs, its output in logs/NAME.log; sets srv_pid[NAME] and
# srv_ep[NAME] (tcp://...).  1 if it did not start (its log says why).
# A subshell waits for the server and keeps its exit status: a server
# SIGKILLed by a benchmark is reaped there, inside a silenced wait, rather
# than by this shell, which would print "Killed" into the progress lines.
declare -A srv_pid=() srv_ep=() srv_status=() srv_waiter=()
server_start() {
  local name=$1 pf=$out/logs/$1.port
  shift
  rm -f "$pf" "$pf.pid" "$out/logs/$name.status"
  ( "$server" --backend "$backend" --port 0 --port-file "$pf" "$@" >"$out/logs/$name.log" 2>&1 &
    echo $! >"$pf.pid"
    wait $! 2>/dev/null
    echo $? >"$out/logs/$name.status" ) &
  srv_waiter[$name]=$!
  for _ in $(seq 400); do
    [ -s "$pf" ] && [ -s "$pf.pid" ] && break
    [ -e "$out/logs/$name.status" ] && break
    sleep 0.05
  done
  srv_pid[$name]=$(cat "$pf.pid" 2>/dev/null)
  [ -s "$pf" ] && [ -n "${srv_pid[$name]}" ] || return 1
  srv_ep[$name]=tcp://127.0.0.1:$(cat "$pf")
}

# server_stop NAME: SIGTERM (a no-op for one that died), then its exit
# status in srv_status[NAME] (137: it was SIGKILLed).
server_stop() {
  local waiter=${srv_waiter[$1]:-}
  [ -n "$waiter" ] || return 0
  [ -z "${srv_pid[$1]:-}" ] || kill "${srv_pid[$1]}" 2>/dev/null
  wait "$waiter" 2>/dev/null
  srv_status[$1]=$(cat "$out/logs/$1.status" 2>/dev/null || echo unknown)
  unset "srv_waiter[$1]" "srv_pid[$1]"
  rm -f "$out/logs/$1.port" "$out/logs/$1.port.pid" "$out/logs/$1.status"
}

server_stop_all() {
  local name
  for name in "${!srv_waiter[@]}"; do server_stop "$name"; done
}

# ---- steps and progress ------------------------------------------------------------------
# step_run NAME MODE ARGV...: one step of the run: the progress line
# "[ n/N] NAME MODE" (N = step_total), then ARGV under env "${envv[@]}" and
# the step timeout; stdout in $out/logs/stdout, stderr in step_log.  Sets
# step_rc, step_secs and step_why (empty when the program exited 0 and
# printed one or more JSON lines and nothing else).  The caller ends the
# line with step_ok or step_failed.
step_n=0 step_total=0 failures=()
step_run() {
  step_name=$1 step_mode=$2
  shift 2
  step_n=$((step_n + 1))
  step_log=$out/logs/$(printf '%02d' $step_n)-${step_name// /-}-$step_mode.log
  printf '[%2d/%d] %-26s %-12s ' "$step_n" "$step_total" "$step_name" "$step_mode"
  local t0 bad
  t0=$(date +%s%N)
  timeout "$step_timeout" env "${envv[@]}" "$@" >"$out/logs/stdout" 2>"$step_log"
  step_rc=$?
  step_secs=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  bad=$(grep -cv '^{.*}$' "$out/logs/stdout")
  step_why=""
  if [ $step_rc -eq 124 ]; then step_why="timed out after ${step_timeout} s"
  elif [ $step_rc -ne 0 ]; then step_why="exit $step_rc"
  elif [ "$bad" -ne 0 ] || [ ! -s "$out/logs/stdout" ]; then step_why="printed no or malformed results"
  fi
}

# step_ok [MEMBERS [NOTE]]: the step worked: "ok", its time and NOTE; its
# JSON lines go to raw.jsonl with the mode (and the JSON MEMBERS, each
# followed by a comma) added in front.
step_ok() {
  echo "ok  ${step_secs} s${2:+  $2}"
  sed "s/^{/{\"mode\":\"$step_mode\",${1:-}/" "$out/logs/stdout" >>"$out/raw.jsonl"
}

# step_failed WHY: the step failed: FAILED, the end of its log, and a line
# for the summary.
step_failed() {
  echo "FAILED ($1, ${step_secs} s)"
  tail -n 4 "$step_log" | sed 's/^/          /'
  failures+=("$step_name over $step_mode: $1 (log: $step_log)")
}

# step_not_run NAME MODE WHY: a step that could not be run (its servers did
# not start): its progress line says FAILED and why.
step_not_run() {
  step_name=$1 step_mode=$2 step_secs=0
  step_n=$((step_n + 1))
  printf '[%2d/%d] %-26s %-12s FAILED (%s)\n' "$step_n" "$step_total" "$1" "$2" "$3"
  failures+=("$1 over $2: $3")
}

# step_verdict: step_ok or step_failed from step_why alone.
step_verdict() {
  if [ -n "$step_why" ]; then step_failed "$step_why"; else step_ok; fi
}

# ---- results.json ------------------------------------------------------------------------
# meta_common: the meta members every suite records (no braces).
meta_common() {
  local cpu
  cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
  printf '%s' "\"date\":$(json "$(date -u +%Y-%m-%dT%H:%M:%SZ)"),\"host\":$(json "$(hostname)"),"
  printf '%s' "\"device\":$(json "$device"),\"driver\":$(json "$driver"),\"backend\":\"$backend\","
  printf '%s' "\"simulated\":$simulated,\"label\":$(json "$label"),\"smoke\":$([ "$smoke" = 1 ] && echo true || echo false),"
  printf '%s' "\"tandem\":$(json "$tandem_version"),"
  printf '%s' "\"cpu\":$(json "$cpu"),\"cpus\":$(nproc),\"kernel\":$(json "$(uname -r)"),"
  printf '%s' "\"native_cudart\":$(json "$native_cudart"),\"guest_cudart\":$(json "$guest_cudart"),"
  # ---- tcp bulk data (issue 14): how the tcp copies were striped and sent (empty: defaults) ----
  printf '%s' "\"tcp_lanes\":$(json "${TANDEM_TCP_LANES:-}"),\"tcp_send\":$(json "${TANDEM_TCP_SEND:-}")"
}

# write_results META: results.json from raw.jsonl: the meta object on one
# line, then one measurement per line (what table.sh and plot.sh read).
write_results() {
  touch "$out/raw.jsonl"
  {
    echo "{"
    echo "\"meta\": $1,"
    echo "\"results\": ["
    sed '$!s/$/,/' "$out/raw.jsonl"
    echo "]"
    echo "}"
  } >"$out/results.json"
  rm -f "$out/raw.jsonl" "$out/logs/stdout"
}

# ---- the end of a run ----------------------------------------------------------------------
# bench_finish SUCCESS_LINE: prints the table (table.txt), draws the plots
# when gnuplot is here, and exits 1 if anything failed, else prints
# SUCCESS_LINE and exits 0.
bench_finish() {
  echo
  "$here/table.sh" "$out" | tee "$out/table.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || failures+=("the table reports a failure: a checksum mismatch, a failed recovery or a missing measurement")
  echo
  if command -v gnuplot >/dev/null 2>&1; then
    "$here/plot.sh" "$out" 2>"$out/logs/plot.log" || failures+=("plotting failed (log: $out/logs/plot.log)")
  else
    echo "gnuplot is not installed here: draw the plots elsewhere with bench/plot.sh $out"
  fi
  echo "results: $out/results.json"
  case $out in
    "$here"/results/*|"${TMPDIR:-/tmp}"/tandem-bench-smoke.*) ;;
    *) [ "$smoke" = 1 ] || echo "to keep this run: copy $out to bench/results/$(date -u +%F)-$results_name/" ;;
  esac
  if [ ${#failures[@]} -gt 0 ]; then
    echo
    echo "bench: FAILED:"
    printf '  %s\n' "${failures[@]}"
    exit 1
  fi
  echo "bench: $1${label:+  [$label]}"
  exit 0
}
