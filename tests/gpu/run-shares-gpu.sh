#!/usr/bin/env bash
# SM shares on a GPU host (issue 17, docs/sm-shares.md), over a bundle from
# scripts/gpu-bundle.sh (default .device): runs bench/shares/shares.sh (throughput at 8, 16, 33,
# 66 and 132 SMs natively, in green contexts and through Tandem; resize latency with 1, 16 and 64
# streams; Flyt's Table 6; MPS per-context SM affinity) into $OUT (default
# /tmp/tandem-shares), then says what the cuda backend logged about green contexts (the SM
# groups it made, any CUfunction it had to launch as a CUkernel, any driver error).  Every step
# prints what it does and a failing one does not stop the others.  Draw the plot afterwards
# where gnuplot is: bench/shares/shares-plot.sh OUT.
#
#   tests/gpu/run-shares-gpu.sh [BUNDLE] [shares.sh options: --ms T, --no-mps]
set -uo pipefail
B=$(cd "${1:-.device}" && pwd) || { echo "run-shares-gpu: no bundle at ${1:-.device}" >&2; exit 1; }
shift $(( $# > 0 ? 1 : 0 ))
OUT=${OUT:-/tmp/tandem-shares}
mkdir -p "$OUT"
echo "run-shares-gpu: $(date -u +%Y-%m-%dT%H:%MZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
echo "run-shares-gpu: bench/shares/shares.sh --bundle $B --out $OUT $*"
"$B/bench/shares.sh" --bundle "$B" --out "$OUT" "$@"
rc=$?
summary=$OUT/cuda-backend.txt
{
  echo "What the cuda backend said in the servers' logs:"
  grep -h "tandem-server\[cuda\]" "$OUT"/logs/*.log 2>/dev/null | sed 's/^[^]]*] //' | sort | uniq -c | sort -rn | head -40
  echo
  echo "Share changes the servers logged:"
  grep -h "runs on .* SMs from its next work" "$OUT"/logs/*.log 2>/dev/null | head -20
} | tee "$summary"
echo "run-shares-gpu: exit $rc; results in $OUT (table.txt, results.jsonl, cuda-backend.txt, logs/)"
exit $rc
