#!/usr/bin/env bash
# The test suite: installs what it needs, builds with warnings as errors, runs
# every test (unit, integration on the sim backend, ABI, kmod under QEMU),
# runs the fuzz harnesses for a bounded time (scripts/fuzz.sh), then
# rebuilds with AddressSanitizer and UBSan and runs the tests again.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$TANDEM_ROOT/scripts/install-deps.sh"

echo "== build (warnings are errors) =="
"$TANDEM_ROOT/scripts/build.sh" -DTANDEM_WERROR=ON
echo "== tests =="
ctest --test-dir "$TANDEM_BUILD" --output-on-failure -j 2

echo "== fuzzing: every harness for ${TANDEM_FUZZ_SECONDS:-10} s (clang, libFuzzer, ASan + UBSan) =="
"$TANDEM_ROOT/scripts/fuzz.sh"

echo "== build with AddressSanitizer + UBSan =="
TANDEM_BUILD="$TANDEM_BUILD-asan" "$TANDEM_ROOT/scripts/build.sh" -DTANDEM_WERROR=ON -DTANDEM_SANITIZE=ON
echo "== tests under AddressSanitizer + UBSan (the QEMU kernel test ran above; the module is not user-space code) =="
ctest --test-dir "$TANDEM_BUILD-asan" --output-on-failure -j 2 -LE qemu
echo "== all tests passed =="
