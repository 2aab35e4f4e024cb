#!/usr/bin/env bash
# bench/tcp-shapes.sh: cudaMemcpy over tcp under several shapes of the
# lanes (docs/protocol.md, "Shapes of the lanes"), natively alongside, in
# interleaved rounds: on a shared host a figure moves between two commands
# a minute apart, so each round runs every shape once, in an order that
# turns, and the table gives medians with their range.
#
# A shape is NAME[:VAR=VALUE[,VAR=VALUE...]]: TANDEM_TCP_* variables given to
# the guest and to a tandem-server of the shape's own (the server reads
# TANDEM_TCP_SEND and TANDEM_TCP_DOWN_BUFS, the guest the rest).  Default
# shapes: before (each 8 MiB chunk its own piece, two download buffers: the
# lanes as they were before 2026-12-02), default (no variable) and lanes16.
#
# Writes raw.jsonl (bench/micro's lines with "shape" and "round" added),
# table.txt (GB/s medians, min-max, and the ratio to native's median) and,
# with gnuplot, shapes.png.  Exit status 0 when every run worked (micro
# checks every byte it copies), 1 otherwise.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"

usage() {
  cat <<'EOF'
usage: bench/tcp-shapes.sh [--smoke] [--backend cuda|sim] [--out DIR] [--bundle DIR | --build DIR]
                           [--rounds N] [--max-bytes N[K|M|G]] [SHAPE...]
  SHAPE          NAME[:VAR=VALUE,...] with TANDEM_TCP_* variables (default: before, default, lanes16)
  --rounds N     rounds (default 3; 1 with --smoke)
  --max-bytes N  largest copy (default 256M; 16M with --smoke)
  --smoke        sim backend, small sizes, one round, results in a temporary directory
  --report DIR   only make DIR's table.txt and shapes.png again from its raw.jsonl, logs and
                 meta.txt (say, on a host with gnuplot, for a run made where there is none)
  --backend, --out, --bundle, --build: as for bench/run.sh
EOF
}

smoke=0 backend="" out="" bundle="" build="" rounds="" max_bytes="" shapes=() report_only=
while [ $# -gt 0 ]; do
  case $1 in
    --smoke) smoke=1 ;;
    --backend) backend=${2:-}; shift ;;
    --out) out=${2:-}; shift ;;
    --bundle) bundle=${2:-}; shift ;;
    --build) build=${2:-}; shift ;;
    --rounds) rounds=${2:-}; shift ;;
    --max-bytes) max_bytes=${2:-}; shift ;;
    --report) report_only=${2:-}; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) usage >&2; exit 2 ;;
    *) shapes+=("$1") ;;
  esac
  shift
done
case $backend in ""|cuda|sim) ;; *) die "--backend takes cuda or sim" ;; esac
[ "$smoke" = 1 ] && rounds=${rounds:-1} max_bytes=${max_bytes:-16M}
rounds=${rounds:-3} max_bytes=${max_bytes:-256M}
[[ $rounds =~ ^[1-9][0-9]?$ ]] || die "--rounds takes 1 to 99"
[ ${#shapes[@]} -gt 0 ] || shapes=("before:TANDEM_TCP_PIECE=8388608,TANDEM_TCP_DOWN_BUFS=2" default "lanes16:TANDEM_TCP_LANES=16")
declare -A shape_env=()
names=()
for s in "${shapes[@]}"; do
  n=${s%%:*} vars=""
  [[ $s == *:* ]] && vars=${s#*:}
  [[ $n =~ ^[A-Za-z0-9_-]+$ ]] || die "shape '$s': its name takes letters, digits, - and _"
  [ -z "${shape_env[$n]+x}" ] || die "shape '$n' given twice"
  IFS=, read -ra kv <<<"$vars"
  for v in "${kv[@]}"; do
    [[ $v =~ ^TANDEM_TCP_[A-Z_]+=[A-Za-z0-9]*$ ]] || die "shape '$n': '$v' is not TANDEM_TCP_NAME=VALUE"
  done
  shape_env[$n]=${kv[*]:-} names+=("$n")
done

# ---- the report: table.txt and shapes.png from raw.jsonl, the servers' logs and meta.txt ----
# meta.txt: the device line of the title, whether native ran, the wire's copy size in MiB, and
# the shapes' names.
report() {
  local title has_native lb_mib cols names dir n c
  { read -r title; read -r has_native; read -r lb_mib; read -ra names; } <"$out/meta.txt" ||
    { echo "tcp-shapes: no meta.txt in $out" >&2; return 1; }
  cols=("${names[@]}")
  [ "$has_native" = 1 ] && cols=(native "${cols[@]}")
  # ---- the table: GB/s medians of the rounds, pinned and pageable, 4 MiB and up ----
  sed -n 's/.*"shape":"\([^"]*\)".*"id":"\(memcpy\.[a-z]*\.[hd]2[hd]\.[0-9]*[KMG]\)".*"bytes":\([0-9]*\).*"value":\([0-9.]*\).*/\1 \2 \3 \4/p' \
    "$out/raw.jsonl" | awk '$3 >= 4194304' | sort -k3,3n -k2,2 -k1,1 -k4,4g |
    awk -v mode=table -v cols="${cols[*]}" -v title="$title" -f "$here/common.awk" -f "$here/tcp-shapes.awk" \
      >"$out/table.txt"
  {
    echo "wire (tcp-loopback, plain, ${lb_mib} MiB), GB/s by round:"
    for c in 8 16; do
      printf '  %2d connections: %s\n' "$c" \
        "$(sed -n "s/.*\"shape\":\"wire$c\".*\"value\":\([0-9.]*\).*/\1/p" "$out/raw.jsonl" | tr '\n' ' ')"
    done
    echo "what each shape's server carried over its lanes:"
    for n in "${names[@]}"; do
      printf '  %-12s %s\n' "$n" "$(grep -ho 'lanes carried [0-9]* upload piece(s), [0-9]* bytes' "$out/logs/$n.log" |
        awk '{ p += $3; b += $6 } END { if (p) printf "%d upload pieces, %.1f MiB a piece", p, b / p / 1048576; else print "nothing" }')"
    done
  } >>"$out/table.txt"
  cat "$out/table.txt"

  # ---- the plot: pinned GB/s against size, each shape, and a third of native ----
  if command -v gnuplot >/dev/null 2>&1; then
    local dat
    dat=$(mktemp -d) || return 1
    for dir in h2d d2h; do
      for n in "${cols[@]}"; do
        sed -n "s/.*\"shape\":\"$n\".*\"id\":\"memcpy\.pinned\.$dir\.[0-9]*[KMG]\".*\"bytes\":\([0-9]*\).*\"value\":\([0-9.]*\).*/\1 \2/p" \
          "$out/raw.jsonl" | sort -k1,1n -k2,2g |
          awk -v mode=curve -f "$here/common.awk" -f "$here/tcp-shapes.awk" >"$dat/$dir-$n.dat"
      done
    done
    gnuplot -e "dir='$dat'; out='$out/shapes.png'; shapes='${cols[*]}'; native=$has_native; title=\"${title//\"/\'}\"" \
      "$here/tcp-shapes.gp" || failures+=("gnuplot failed")
    rm -rf "$dat"
  else
    echo "tcp-shapes: gnuplot is not installed: no shapes.png"
  fi

}

if [ -n "$report_only" ]; then
  out=$(cd "$report_only" 2>/dev/null && pwd) || die "no results directory at $report_only"
  failures=()
  report || exit 1
  [ ${#failures[@]} -eq 0 ] || { printf 'tcp-shapes: FAILED: %s\n' "${failures[@]}"; exit 1; }
  exit 0
fi
bench_locate micro tcp-loopback
bench_backend
if [ -z "$out" ]; then
  if [ "$smoke" = 1 ]; then out=$(mktemp -d); else out=$here/results/$(date -u +%F)-$slug-tcp-shapes; fi
fi
mkdir -p "$out/logs" || die "cannot make $out"
out=$(cd "$out" && pwd)
rm -f "$out/raw.jsonl"
bench_library_paths
failures=()
trap server_stop_all EXIT

# Each shape's own server, started with the shape's variables in its environment.
for n in "${names[@]}"; do
  for v in ${shape_env[$n]}; do export "${v?}"; done
  server_start "$n" || die "tandem-server for shape $n did not start (see $out/logs/$n.log)"
  for v in ${shape_env[$n]}; do unset "${v%%=*}"; done
done

# run NAME ROUND ENV...: micro's memcpy section under ENV, its lines tagged.
run() {
  local name=$1 round=$2 rc
  shift 2
  timeout 300 env "$@" "$progs/micro" --only memcpy --max-bytes "$max_bytes" \
    >"$out/logs/stdout" 2>"$out/logs/$name-$round.log"
  rc=$?
  sed "s/^{/{\"shape\":\"$name\",\"round\":$round,/" "$out/logs/stdout" >>"$out/raw.jsonl"
  if [ $rc -ne 0 ]; then
    failures+=("$name, round $round: exit $rc (log: $out/logs/$name-$round.log)")
    echo "FAILED (exit $rc)"
  else
    echo "ok"
  fi
}

lb_mib=$(( $(numfmt --from=iec "$max_bytes") >> 20 ))
[ "$lb_mib" -ge 16 ] || lb_mib=16
echo "tcp-shapes: ${#names[@]} shape(s) on $device, $rounds round(s), copies up to $max_bytes; results in $out"
for r in $(seq "$rounds"); do
  if [ "$backend" = cuda ]; then
    printf '[round %d/%d] %-12s ' "$r" "$rounds" native
    run native "$r" LD_LIBRARY_PATH="$native_ld"
  fi
  # The wire's ceiling this round: 8 and 16 plain loopback connections.
  for c in 8 16; do
    "$progs/tcp-loopback" "$lb_mib" 3 8192 "$c" plain 2>>"$out/logs/tcp-loopback.log" |
      sed "s/^{/{\"shape\":\"wire$c\",\"round\":$r,/" >>"$out/raw.jsonl"
  done
  for i in "${!names[@]}"; do
    n=${names[$(( (i + r - 1) % ${#names[@]} ))]}
    printf '[round %d/%d] %-12s ' "$r" "$rounds" "$n"
    # shellcheck disable=SC2086  # the shape's variables, one word each
    run "$n" "$r" LD_LIBRARY_PATH="$tandem_ld" ${preload:+LD_PRELOAD="$preload"} TANDEM_SERVER="${srv_ep[$n]}" \
      TANDEM_QUIET=1 ${shape_env[$n]}
  done
done
server_stop_all
trap - EXIT
{ echo "$device$([ "$simulated" = true ] && echo " — $label")"; [ "$backend" = cuda ] && echo 1 || echo 0
  echo "$lb_mib"; echo "${names[*]}"; } >"$out/meta.txt"
report || failures+=("the report could not be made")

if [ ${#failures[@]} -gt 0 ]; then
  printf 'tcp-shapes: FAILED: %s\n' "${failures[@]}"
  exit 1
fi
echo "tcp-shapes: every run worked; $out"
