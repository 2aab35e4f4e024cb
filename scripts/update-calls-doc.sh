#!/usr/bin/env bash
# Regenerates the documents derived from the procedure table: docs/calls.md
# from proto/calls.def (through the built tandem-calls-doc), and
# docs/api-coverage.md from it, the guest library's sources and the
# toolkit's libcudart.so.13.  Run after changing the table or an entry point.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$TANDEM_ROOT/scripts/build.sh" >/dev/null
"$TANDEM_BUILD/bin/tandem-calls-doc" >"$TANDEM_ROOT/docs/calls.md"
toolkit=$(sed -n 's/^TOOLKIT_CUDART:FILEPATH=//p' "$TANDEM_BUILD/CMakeCache.txt")
"$TANDEM_ROOT/scripts/api-coverage.sh" "$toolkit" "$TANDEM_BUILD/guest-lib/gen/unsupported.list" \
  >"$TANDEM_ROOT/docs/api-coverage.md"
stub=$(sed -n 's/^TOOLKIT_STUB_LIBCUDA:FILEPATH=//p' "$TANDEM_BUILD/CMakeCache.txt")
"$TANDEM_ROOT/scripts/driver-coverage.sh" "$stub" "$TANDEM_BUILD/guest-lib/gen/driver_unsupported.list" \
  >"$TANDEM_ROOT/docs/driver-api-coverage.md"
echo "docs/calls.md, docs/api-coverage.md and docs/driver-api-coverage.md updated"
