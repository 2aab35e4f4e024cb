# bench/takeover.sh: the takeover suite (docs/benchmarks.md, "The takeover
# suite"), sourced by bench/run.sh after its options; it ends the run.
#
#   recovery  for each in-place buffer size: the loop (bench/takeover/inplace)
#             natively on a GPU or on the host (sim), for the reference
#             checksum and the native iteration time; K runs through an
#             active server mirrored to a standby (a fresh pair each), the
#             active SIGKILLed part-way, each of which must resume on the
#             standby with the reference checksum; and the baseline, one run
#             through a server with no standby, which must lose its session.
#   overhead  the in-place loop and the applications with no kill: natively
#             (GPU) or the host reference (sim), through a server with no
#             standby (tcp), and through an active server with a standby under
#             TANDEM_RESUME=exact and =replay.
#
# Modes in results.json: native, host (references), tcp, exact, replay, and
# none (the no-standby baseline of a kill).

[ -z "$max_bytes" ] || die "--max-bytes belongs to the transport suite"
do_recovery=0 overhead=()
IFS=, read -ra wanted <<<"${only:-recovery,overhead}"
for w in "${wanted[@]}"; do
  case $w in
    recovery) do_recovery=1 ;;
    overhead) overhead+=(loop nw lud srad streamcluster) ;;
    loop|nw|lud|srad|streamcluster) overhead+=("$w") ;;
    *) die "--only: unknown part of the takeover suite '$w' (recovery, overhead, loop, nw, lud, srad, streamcluster)" ;;
  esac
done

source "$here/takeover-steps.sh"
bench_locate micro inplace nw lud srad streamcluster
bench_backend
[ "$backend" = cuda ] && reference=native || reference=host
bench_app_sizes

# The in-place loop: LOOP_ITERS iterations, the kill drawn within two
# iterations after KILL_AFTER.  On a GPU an iteration takes ~10 us (4 MiB) to
# ~0.3 ms (256 MiB) natively; the sim runs the step on a CPU thread, a few ms
# per MiB, so it gets small buffers and short loops.
if [ "$smoke" = 1 ]; then
  buffers=${buffers:-1,2} kills=${kills:-3} loop_iters=100 kill_after=50
elif [ "$backend" = sim ]; then
  buffers=${buffers:-1,4} kills=${kills:-5} loop_iters=200 kill_after=100
else
  buffers=${buffers:-4,256} kills=${kills:-10} loop_iters=1000 kill_after=400
fi
[[ $kills =~ ^[1-9][0-9]?$ ]] || die "--kills takes 1 to 99"
[[ $buffers =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "--buffers takes MiB,MiB,..."
IFS=, read -ra buffer_list <<<"$buffers"
for b in "${buffer_list[@]}"; do [ "$b" -le 4096 ] || die "--buffers: at most 4096 MiB"; done

bench_outdir "$slug-takeover"
bench_library_paths
step_timeout=600
[ "$smoke" = 1 ] && step_timeout=60
run_dir=$(mktemp -d "${TMPDIR:-/tmp}/tandem-bench-tko.XXXXXX") || die "cannot make a temporary directory"
trap 'server_stop_all; rm -rf "$run_dir"' EXIT

echo "bench: takeover suite, backend $backend, device: $device${label:+   [$label]}"
echo "bench: buffers ${buffers//,/ } MiB, $kills kill(s) each, loop of $loop_iters iterations; results in $out"
[ "$backend" = cuda ] && echo "bench: native runs load $native_cudart"

# ---- the environment of each mode -------------------------------------------------
# native: NVIDIA's libcudart.  host: the host reference, Tandem's library
# pointed at a port nothing listens on (a CUDA call would fail, not go
# unseen).  tcp: the server with no standby.  exact, replay: the active
# server of the overhead pair, or $2 (a recovery run's own active).
mode_env() {
  case $1 in
    native) envv=(LD_LIBRARY_PATH="$native_ld") ;;
    host) envv=(LD_LIBRARY_PATH="$tandem_ld" TANDEM_SERVER=tcp://127.0.0.1:1) ;;
    tcp|none) envv=(LD_LIBRARY_PATH="$tandem_ld" TANDEM_SERVER="${2:-${srv_ep[alone]:-}}" TANDEM_QUIET=1) ;;
    exact|replay) envv=(LD_LIBRARY_PATH="$tandem_ld" TANDEM_SERVER="${2:-${srv_ep[active]:-}}" TANDEM_QUIET=1
                        TANDEM_RESUME="$1") ;;
  esac
  [ "$1" = native ] || [ -z "$preload" ] || envv+=(LD_PRELOAD="$preload")
}

# ---- the plan ---------------------------------------------------------------------
# "kind|name|mode|program args": kind ref (a reference run), kill, lost (the
# no-standby baseline), run (an overhead run against the suite's servers),
# mem (the server's GPU memory during a loop: cuda only).
plan=()
loop_args() { echo "$progs/inplace $1 --iters $loop_iters"; }
if [ $do_recovery = 1 ]; then
  for b in "${buffer_list[@]}"; do
    plan+=("ref|loop $(size_label "$b")|$reference|$(loop_args "$b")$([ $reference = host ] && echo " --host-reference")")
    for k in $(seq "$kills"); do plan+=("kill|recovery $(size_label "$b") #$k|exact|$(loop_args "$b") --seed $k"); done
    plan+=("lost|recovery $(size_label "$b")|none|$(loop_args "$b") --seed 1")
  done
fi
for w in "${overhead[@]}"; do
  if [ "$w" = loop ]; then
    for b in "${buffer_list[@]}"; do
      [ $do_recovery = 1 ] ||
        plan+=("ref|loop $(size_label "$b")|$reference|$(loop_args "$b")$([ $reference = host ] && echo " --host-reference")")
      for m in tcp exact replay; do plan+=("run|loop $(size_label "$b")|$m|$(loop_args "$b")"); done
    done
    if [ "$backend" = cuda ]; then
      # Long enough for several nvidia-smi samples: the shadows' memory is
      # what exact holds beyond tcp.
      bmax=$(printf '%s\n' "${buffer_list[@]}" | sort -n | tail -1)
      for m in tcp exact; do plan+=("mem|memory $(size_label "$bmax")|$m|$progs/inplace $bmax --iters 5000"); done
    fi
  else
    args="$progs/$w $(app_args "${size[$w]}")"
    if [ $reference = host ]; then plan+=("ref|$w ${size[$w]}|host|$args --host-reference")
    else plan+=("ref|$w ${size[$w]}|native|$args --reps $reps --warmup $warmup"); fi
    for m in tcp exact replay; do plan+=("run|$w ${size[$w]}|$m|$args --reps $reps --warmup $warmup"); done
  fi
done
step_total=${#plan[@]}

# ---- the steps --------------------------------------------------------------------
t_start=$(date +%s)
for entry in "${plan[@]}"; do
  IFS='|' read -r kind name mode cmd <<<"$entry"
  read -ra argv <<<"$cmd"
  case $kind in
    ref) mode_env "$mode"; step_run "$name" "$mode" "${argv[@]}"; step_verdict ;;
    kill) recovery_step "$name" "${argv[@]}" ;;
    lost) baseline_step "$name" "${argv[@]}" ;;
    run) overhead_servers "$name" "$mode" && overhead_step "$name" "$mode" "${argv[@]}" ;;
    mem) overhead_servers "$name" "$mode" && memory_step "$name" "$mode" "${argv[@]}" ;;
  esac
done
overhead_servers_stop

# ---- results.json ---------------------------------------------------------------------
sizes_text=""
for a in nw lud srad streamcluster; do sizes_text+="$a=${size[$a]} "; done
benchmarks=""
[ $do_recovery = 1 ] && benchmarks="recovery"
benchmarks+=" ${overhead[*]}"
meta="{$(meta_common),\"suite\":\"takeover\",\"benchmarks\":$(json "${benchmarks# }"),"
meta+="\"modes\":\"$reference tcp exact replay\",\"reference\":\"$reference\","
meta+="\"buffers\":\"${buffers//,/ }\",\"kills\":$kills,\"loop_iters\":$loop_iters,\"kill_after\":$kill_after,"
meta+="\"app_sizes\":$(json "${sizes_text% }"),\"app_reps\":$reps,\"app_warmup\":$warmup,"
meta+="\"seconds\":$(( $(date +%s) - t_start ))}"
write_results "$meta"
bench_finish "all programs ran, every kill recovered, the baseline lost its session, all checksums match"
