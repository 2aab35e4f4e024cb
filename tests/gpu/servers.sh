# Sourced by the GPU scripts that start pairs of servers (run-takeover-gpu.sh,
# run-pytorch-takeover-gpu.sh).  Uses the caller's B (bundle), RUN (scratch folder), OUT (logs),
# SERVER_PREFIX (shm names) and log().
#
# start_server NAME ARGS...: a tandem-server (cuda backend) on a free port, serving shm too;
# sets PID_NAME, EP_NAME (tcp://...) and SHM_NAME (shm:...); its log is $OUT/NAME.log.
start_server() {
  local name=$1; shift
  rm -f "$RUN/$name.port"
  eval "SHM_$name=shm:$SERVER_PREFIX-$name-$$"
  "$B/bin/tandem-server" --backend cuda --port 0 --port-file "$RUN/$name.port" --shm "$SERVER_PREFIX-$name-$$" "$@" \
    >/dev/null 2>"$OUT/$name.log" &
  eval "PID_$name=$!"
  for _ in $(seq 300); do [ -s "$RUN/$name.port" ] && break; sleep 0.05; done
  [ -s "$RUN/$name.port" ] || { log "server $name did not start: $(tail -3 "$OUT/$name.log")"; return 1; }
  eval "EP_$name=tcp://127.0.0.1:$(cat "$RUN/$name.port")"
}
# stop_server NAME: stops the server start_server NAME started, if any.
stop_server() { local p; p=$(eval echo "\${PID_$1:-}"); [ -n "$p" ] && { kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; }; }
