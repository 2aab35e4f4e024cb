#!/usr/bin/env bash
# The fuzz harnesses (tests/fuzz, docs/security.md "Fuzzing"): builds them
# with clang, libFuzzer, AddressSanitizer and UBSan in a build directory of
# their own ($TANDEM_FUZZ_BUILD, default ./build-fuzz; the gcc build is not
# touched), then runs each for $TANDEM_FUZZ_SECONDS (default 10) over its
# seed corpus, two at a time.  Every committed input, earlier crashes
# included, runs first.  Fails if a harness crashes, and names the input.
#
#   scripts/fuzz.sh           build and fuzz
#   scripts/fuzz.sh --seeds   rewrite the seed corpus with fuzz-seeds (review, then commit)
set -euo pipefail
source "$(dirname "$0")/env.sh"
FUZZ_BUILD=${TANDEM_FUZZ_BUILD:-$TANDEM_ROOT/build-fuzz}
CORPUS=$TANDEM_ROOT/tests/fuzz/corpus

cmake -S "$TANDEM_ROOT" -B "$FUZZ_BUILD" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTANDEM_FUZZ=ON -DTANDEM_WERROR=ON -DTANDEM_BUILD_TESTS=OFF -DTANDEM_BUILD_EXAMPLES=OFF \
  -DTANDEM_FUZZ_SECONDS="${TANDEM_FUZZ_SECONDS:-10}" >/dev/null
set +e
cmake --build "$FUZZ_BUILD" -j "$TANDEM_JOBS" --target fuzz-harnesses fuzz-seeds 2>&1 |
  grep -vE '^\[ *[0-9]+%\] (Building|Linking|Generating|Built|rpcgen)|^(gmake|make)\['
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "fuzz: build failed" >&2; exit 1
fi

if [ "${1:-}" = --seeds ]; then
  for d in "$CORPUS"/*/; do mkdir -p "$d"; done
  "$FUZZ_BUILD/tests/fuzz/fuzz-seeds" "$CORPUS"
  echo "fuzz: seeds written under $CORPUS"
  exit 0
fi

rm -f "$FUZZ_BUILD"/fuzz-crashes/*
if ! ctest --test-dir "$FUZZ_BUILD" -L fuzz -j "$TANDEM_JOBS" --output-on-failure; then
  echo "fuzz: a harness failed; the inputs it wrote (replay: <harness> <input>):" >&2
  ls -1 "$FUZZ_BUILD"/fuzz-crashes/* >&2 2>/dev/null || echo "  (none: see the output above)" >&2
  exit 1
fi
echo "fuzz: no crash in ${TANDEM_FUZZ_SECONDS:-10} s per harness"
