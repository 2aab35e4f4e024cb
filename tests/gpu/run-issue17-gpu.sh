#!/usr/bin/env bash
# Issue 17's three GPU measurements in one run, over a bundle from scripts/gpu-bundle.sh (default
# .device), each with a time limit; a part that fails is reported and the others go on:
#   1. Flyt's Table 6: bench/shares/shares.sh --only c (a 4096x4096 C-App matmul on 8 SMs beside
#      0-4 G-Apps, natively and through Tandem), about 2 minutes          -> $OUT/table6/
#   2. resize latency from the orchestrator's decision, hop by hop, 1/16/64 streams, MPS off and
#      on: tests/gpu/run-control-plane-gpu.sh, about 1 minute            -> $OUT/control-plane/
#   3. Flyt's Table 7 in miniature: bench/control-plane/timeline.sh, about 80 s -> $OUT/timeline/
# Then the three tables.  The GPU host has no gnuplot: draw the plots where it is, on the fetched
# results: bench/shares/shares-plot.sh OUT/table6 and bench/control-plane/timeline-plot.sh
# OUT/timeline.
#   tests/gpu/run-issue17-gpu.sh [BUNDLE]    (OUT, default /tmp/tandem-issue17; BACKEND=sim tests
#                                            the scripts on the simulated GPU: figures not claimed)
set -uo pipefail
B=$(cd "${1:-.device}" && pwd) || { echo "run-issue17-gpu: no bundle at ${1:-.device}" >&2; exit 1; }
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/tandem-issue17}
BACKEND=${BACKEND:-cuda}
mkdir -p "$OUT"
failed=()
t_all=$SECONDS
say() { echo "run-issue17-gpu: [$((SECONDS - t_all)) s] $*"; }
# part NAME LIMIT_S COMMAND...: one part under a time limit, its output in OUT/NAME.txt and here.
part() {
  local name=$1 limit=$2 t0=$SECONDS rc
  shift 2
  say "== $name (at most $limit s): $*"
  timeout -k 10 "$limit" "$@" 2>&1 | tee "$OUT/$name.txt"
  rc=${PIPESTATUS[0]}
  if [ "$rc" = 0 ]; then say "$name: ok ($((SECONDS - t0)) s)"
  else
    [ "$rc" = 124 ] && say "$name: FAILED: timed out after $limit s" || say "$name: FAILED (exit $rc, $((SECONDS - t0)) s)"
    failed+=("$name")
  fi
}
say "$(date -u +%FT%TZ); $([ "$BACKEND" = cuda ] && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1 || echo "SIMULATED GPU (sim backend)")"
part table6 240 "$SRC/bench/shares/shares.sh" --bundle "$B" --backend "$BACKEND" --only c --out "$OUT/table6"
part control-plane 180 env OUT="$OUT/control-plane" BACKEND="$BACKEND" "$SRC/tests/gpu/run-control-plane-gpu.sh" "$B"
part timeline 150 "$SRC/bench/control-plane/timeline.sh" --bundle "$B" --backend "$BACKEND" --out "$OUT/timeline"
echo
say "== the three tables"
sed -n '/^(c) Flyt Table 6/,$p' "$OUT/table6/table.txt" 2>/dev/null || echo "(no Table 6)"
echo
cat "$OUT/control-plane/hops.txt" 2>/dev/null || echo "(no resize hops)"
echo
cat "$OUT/timeline/table7.txt" 2>/dev/null || echo "(no Table 7)"
tar -czf "$OUT.tgz" -C "$(dirname "$OUT")" "$(basename "$OUT")" 2>/dev/null && say "all of it packed in $OUT.tgz"
say "done in $((SECONDS - t_all)) s; ${#failed[@]} part(s) failed${failed[*]:+: ${failed[*]}}; results in $OUT"
exit $(( ${#failed[@]} > 0 ))
