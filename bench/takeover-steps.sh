# bench/takeover-steps.sh: the steps of the takeover suite that need their
# own servers or their own verdict (sourced by bench/takeover.sh, which has
# the plan; lib.sh has step_run, step_ok and step_failed).

# recovery_step NAME PROGRAM ARG...: one kill.  A fresh standby and an active
# server mirrored to it; the program kills the active part-way and must
# finish on the standby: exit 0 with its JSON line, the guest library's
# "resumed on" line, the active dead by SIGKILL, the standby alive until
# stopped.  The guest's own figure (detection to replayed calls done), the
# calls it replayed and the allocations the standby restored from shadows
# join the JSON line.
recovery_step() {
  local name=$1 n sb act sock=$run_dir/standby.sock guest rec restored sb_alive=yes
  shift
  n=$(printf '%02d' $((step_n + 1)))
  sb=$n-standby act=$n-active
  rm -f "$sock"
  if ! server_start "$sb" --standby-listen "$sock" || ! server_start "$act" --standby "$sock"; then
    step_not_run "$name" exact "a server did not start (logs/$sb.log, logs/$act.log)"
    server_stop "$act"; server_stop "$sb"
    return
  fi
  mode_env exact "${srv_ep[$act]}"
  step_run "$name" exact "$@" --kill "${srv_pid[$act]}" --kill-after "$kill_after"
  server_stop "$act"
  kill -0 "${srv_pid[$sb]}" 2>/dev/null || sb_alive=no
  server_stop "$sb"
  # "tandem: session N resumed on EP (policy P, K call(s) replayed) in T ms[; its standby ...]"
  guest=$(sed -n 's/^tandem: session [0-9]* resumed on .* (policy [a-z]*, \([0-9]*\) call(s) replayed) in \([0-9.]*\) ms.*$/\1 \2/p' \
    "$step_log" | head -1)
  restored=$(sed -n 's/.*standby: resumed session [0-9]* at epoch [0-9]* (\([0-9]*\) allocation.*/\1/p' \
    "$out/logs/$sb.log" | head -1)
  rec=$(sed -n 's/.*"value":\([0-9.]*\).*/\1/p' "$out/logs/stdout" | head -1)
  if [ -n "$step_why" ]; then step_failed "$step_why"
  elif [ "${srv_status[$act]}" != 137 ]; then
    step_failed "the active server was not killed (its exit status: ${srv_status[$act]})"
  elif [ -z "$guest" ]; then step_failed "the guest library reported no resume"
  elif [ $sb_alive = no ]; then step_failed "the standby died (logs/$sb.log)"
  else
    step_ok "\"replayed\":${guest% *},\"guest_ms\":${guest#* },\"restored\":${restored:-null}," \
      "recovery ${rec} ms (guest: ${guest#* } ms, ${guest% *} replayed)"
  fi
}

# baseline_step NAME PROGRAM ARG...: the same kill with no standby.  The
# session is lost, and the program must say so and fail: exit 1, the guest
# library's "lost the connection" and the program's "session lost" lines.
# Recorded as outcome "lost" with that line.
baseline_step() {
  local name=$1 alone n lost size
  shift
  n=$(printf '%02d' $((step_n + 1)))
  alone=$n-alone
  if ! server_start "$alone"; then
    step_not_run "$name" none "the server did not start (logs/$alone.log)"
    server_stop "$alone"
    return
  fi
  mode_env none "${srv_ep[$alone]}"
  step_run "$name" none "$@" --kill "${srv_pid[$alone]}" --kill-after "$kill_after"
  server_stop "$alone"
  lost=$(grep -m1 '^inplace: session lost' "$step_log")
  size=$(size_label "$2")
  if [ "$step_rc" = 0 ]; then
    step_failed "the session survived its server with no standby (server exit status ${srv_status[$alone]})"
  elif [ "$step_rc" = 124 ]; then step_failed "$step_why"
  elif [ "$step_rc" != 1 ] || [ -z "$lost" ] || [ "${srv_status[$alone]}" != 137 ] ||
       ! grep -q '^tandem: lost the connection to the Tandem server' "$step_log"; then
    step_failed "did not end clearly: exit $step_rc, server exit status ${srv_status[$alone]}"
  else
    echo "session lost, as it must be (exit 1)  ${step_secs} s"
    echo "{\"mode\":\"none\",\"bench\":\"takeover\",\"id\":\"recovery.$size\",\"size\":\"$size\",\"outcome\":\"lost\",\"exit\":1,\"error\":$(json "$lost")}" \
      >>"$out/raw.jsonl"
  fi
}

size_label() {   # MiB -> the label inplace prints: 4M, 256M, 1G
  if [ $(($1 % 1024)) = 0 ]; then echo "$(($1 / 1024))G"; else echo "${1}M"; fi
}

# overhead_servers: the overhead runs' servers, started once: "alone" (no
# standby; mode tcp) and "active" mirrored to "standby" (modes exact,
# replay).  1 if they are not running.
overhead_started=""
overhead_servers() {
  if [ -z "$overhead_started" ]; then
    overhead_started=yes
    rm -f "$run_dir/overhead.sock"
    if ! server_start alone || ! server_start standby --standby-listen "$run_dir/overhead.sock" ||
       ! server_start active --standby "$run_dir/overhead.sock"; then
      overhead_started=failed
      failures+=("the overhead runs' servers did not start (logs/alone.log, standby.log, active.log)")
    fi
  fi
  [ $overhead_started = yes ] && return 0
  step_not_run "$1" "$2" "no servers"
  return 1
}

# overhead_servers_stop: all three must have lived through the runs and
# exit 0 at SIGTERM.
overhead_servers_stop() {
  local s
  [ -n "$overhead_started" ] || return 0
  for s in alone standby active; do
    [ -n "${srv_pid[$s]:-}" ] || continue
    kill -0 "${srv_pid[$s]}" 2>/dev/null || failures+=("the $s server died during the overhead runs (logs/$s.log)")
    server_stop "$s"
    [ "${srv_status[$s]}" = 0 ] || failures+=("the $s server exited with status ${srv_status[$s]} at SIGTERM")
  done
}

# overhead_step NAME MODE PROGRAM ARG...: one run with no kill.
overhead_step() {
  local name=$1 mode=$2
  shift 2
  mode_env "$mode"
  step_run "$name" "$mode" "$@"
  step_verdict
}

# memory_step NAME MODE PROGRAM ARG... (cuda only): the largest GPU memory
# nvidia-smi shows for the server of MODE (alone for tcp, active for exact)
# while the loop runs, sampled every 50 ms; an untimed run of its own so the
# sampling cannot disturb a timed one.  Recorded as mem.SIZE in MiB; a
# figure nvidia-smi does not give is left out (it is optional), a failed run
# is not.
memory_step() {
  local name=$1 mode=$2 pid sampler f=$run_dir/mem.max size
  shift 2
  [ "$mode" = tcp ] && pid=${srv_pid[alone]} || pid=${srv_pid[active]}
  rm -f "$f"
  mode_env "$mode"
  ( max=0
    while :; do
      m=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
          awk -F', *' -v p="$pid" '$1 == p { print $2 + 0 }')
      if [ -n "$m" ] && [ "$m" -gt "$max" ]; then max=$m; echo "$max" >"$f"; fi
      sleep 0.05
    done ) &
  sampler=$!
  step_run "$name" "$mode" "$@"
  kill "$sampler" 2>/dev/null
  wait "$sampler" 2>/dev/null
  size=$(size_label "$2")
  if [ -n "$step_why" ]; then step_failed "$step_why"
  elif [ ! -s "$f" ]; then
    # An optional figure: some hosts' nvidia-smi shows no per-process memory.
    echo "ok  ${step_secs} s  (nvidia-smi showed no memory for pid $pid: not recorded)"
  else
    echo "ok  ${step_secs} s  $(cat "$f") MiB"
    echo "{\"mode\":\"$mode\",\"bench\":\"takeover\",\"id\":\"mem.$size\",\"size\":\"$size\",\"unit\":\"MiB\",\"better\":\"lower\",\"value\":$(cat "$f")}" \
      >>"$out/raw.jsonl"
  fi
}
