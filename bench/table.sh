#!/usr/bin/env bash
# bench/table.sh RESULTS_DIR: prints the table of a benchmark run from its
# results.json alone (bench/run.sh calls it; it can be rerun any time):
# report.awk for the transport suite, takeover-report.awk for the takeover
# suite (the meta object's "suite").  Exit status 1 when a checksum differs
# from its reference, a kill did not recover or a measurement is missing.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/results-lines.sh"
[ $# -eq 1 ] || { echo "usage: bench/table.sh RESULTS_DIR" >&2; exit 2; }
lines=$(bench_result_lines "$1/results.json")
report=report.awk
case $(printf '%s\n' "$lines" | head -1) in *'"suite":"takeover"'*) report=takeover-report.awk ;; esac
# report.awk tags every line with its section and a sort key; sort -s keeps
# the order within a key.
set +e
printf '%s\n' "$lines" | awk -f "$here/common.awk" -f "$here/$report" "$here/targets.tsv" - >"$1/.table.tmp"
status=$?
set -e
LC_ALL=C sort -s -t '|' -k1,1n -k2,2 "$1/.table.tmp" | cut -d '|' -f 3-
rm -f "$1/.table.tmp"
exit $status
