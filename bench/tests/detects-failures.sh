#!/usr/bin/env bash
# ctest bench_detects_failures: bench/run.sh must fail, loudly, when a
# program fails or a Tandem run's checksum differs from its reference.
# Runs the smoke suite's applications from a copy of the build in which nw
# exits with an error and streamcluster reports a corrupted checksum when it
# runs through Tandem over shm; lud and srad stay real.
set -euo pipefail
build=$(cd "${1:?usage: detects-failures.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fake=$(mktemp -d "${TMPDIR:-/tmp}/tandem-bench-fail.XXXXXX")
trap 'rm -rf "$fake"' EXIT

mkdir -p "$fake/bench"
ln -s "$build/bin" "$fake/bin"
ln -s "$build/lib" "$fake/lib"
for p in micro lud srad; do ln -s "$build/bench/$p" "$fake/bench/$p"; done
cat >"$fake/bench/nw" <<'SH'
#!/bin/sh
echo "nw: deliberate failure for bench_detects_failures" >&2
exit 3
SH
cat >"$fake/bench/streamcluster" <<SH
#!/usr/bin/env bash
set -o pipefail
case \${TANDEM_SERVER:-} in
  shm:*) "$build/bench/streamcluster" "\$@" | sed 's/"checksum":"[0-9a-f]/"checksum":"x/' ;;
  *) exec "$build/bench/streamcluster" "\$@" ;;
esac
SH
chmod +x "$fake/bench/nw" "$fake/bench/streamcluster"

set +e
"$here/run.sh" --smoke --build "$fake" --only apps --out "$fake/out" >"$fake/run.log" 2>&1
status=$?
set -e
cat "$fake/run.log"
fail() { echo "bench_detects_failures: $*" >&2; exit 1; }
[ $status -ne 0 ] || fail "run.sh exited 0 although nw failed and a checksum differs"
grep -q 'nw 256 *shm *FAILED' "$fake/run.log" || fail "no FAILED line for nw over shm"
grep -q 'app.streamcluster.*shm MISMATCH' "$fake/run.log" || fail "no checksum MISMATCH for streamcluster over shm"
grep -q 'app.streamcluster.*tcp = host' "$fake/run.log" || fail "the honest tcp run of streamcluster was not accepted"
grep -q 'app.lud.*shm = host  tcp = host' "$fake/run.log" || fail "lud's checksums should match"
grep -q '^bench: FAILED' "$fake/run.log" || fail "no FAILED summary"
echo "bench_detects_failures: run.sh failed as it must (exit $status)"
