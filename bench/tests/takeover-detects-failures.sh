#!/usr/bin/env bash
# ctest bench_takeover_detects_failures: the takeover suite must fail, loudly,
# when a kill does not recover, when a resumed run's checksum differs, when
# the no-standby baseline keeps its session, and when a shadowed run's
# checksum differs.  Runs the recovery and loop parts from a copy of the
# build whose inplace program misbehaves on purpose:
#   recovery #1     reports a corrupted checksum after its (real) resume
#   recovery #2     never kills its active server (no recovery happens)
#   the baseline    never kills its server (the session survives)
#   loop, exact     reports a corrupted checksum
# Everything else runs the real program and must be accepted.
set -euo pipefail
build=$(cd "${1:?usage: takeover-detects-failures.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fake=$(mktemp -d "${TMPDIR:-/tmp}/tandem-bench-tko-fail.XXXXXX")
trap 'rm -rf "$fake"' EXIT

mkdir -p "$fake/bench"
ln -s "$build/bin" "$fake/bin"
ln -s "$build/lib" "$fake/lib"
for p in micro nw lud srad streamcluster; do ln -s "$build/bench/$p" "$fake/bench/$p"; done
cat >"$fake/bench/inplace" <<SH
#!/usr/bin/env bash
set -o pipefail
real=$build/bench/inplace
kill=no seed="" nokill=()   # nokill: the arguments without --kill PID --kill-after W
for ((i = 1; i <= \$#; i++)); do
  case \${!i} in
    --kill|--kill-after) kill=yes; i=\$((i + 1)) ;;
    --seed) j=\$((i + 1)); seed=\${!j}; nokill+=("\${!i}") ;;
    *) nokill+=("\${!i}") ;;
  esac
done
corrupt() { sed 's/"checksum":"[0-9a-f]/"checksum":"x/'; }
case \$kill/\${TANDEM_RESUME:-none}/\$seed in
  yes/exact/1) "\$real" "\$@" | corrupt ;;
  yes/exact/2|yes/none/*) exec "\$real" "\${nokill[@]}" ;;
  no/exact/*) "\$real" "\$@" | corrupt ;;
  *) exec "\$real" "\$@" ;;
esac
SH
chmod +x "$fake/bench/inplace"

set +e
"$here/run.sh" --suite takeover --smoke --build "$fake" --only recovery,loop --buffers 1 --kills 3 \
  --out "$fake/out" >"$fake/run.log" 2>&1
status=$?
set -e
cat "$fake/run.log"
fail() { echo "bench_takeover_detects_failures: $*" >&2; exit 1; }
[ $status -ne 0 ] || fail "run.sh exited 0 although runs failed and checksums differ"
grep -q 'recovery 1M #2 .*FAILED (the active server was not killed' "$fake/run.log" ||
  fail "no FAILED line for the kill that never happened"
grep -q 'recovery 1M #3 .*ok .*recovery' "$fake/run.log" || fail "the honest kill #3 was not accepted"
grep -q 'recovery 1M .*none .*FAILED (the session survived its server with no standby' "$fake/run.log" ||
  fail "no FAILED line for a baseline that kept its session"
grep -q '^recovery\.1M .*kill 1 MISMATCH' "$fake/run.log" || fail "no checksum MISMATCH for kill #1"
grep -q 'FAILED: recovery\.1M: 2 of 3 kills resumed' "$fake/run.log" || fail "the missing recovery was not counted"
grep -q 'MISSING: no run, or the session was not lost' "$fake/run.log" || fail "the failed baseline was not reported"
grep -q '^loop\.1M .*tcp = host  exact MISMATCH x[0-9a-f]*  replay = host' "$fake/run.log" ||
  fail "no checksum MISMATCH for the exact loop, or the honest tcp and replay loops were not accepted"
grep -q '^bench: FAILED' "$fake/run.log" || fail "no FAILED summary"
echo "bench_takeover_detects_failures: run.sh failed as it must (exit $status)"
