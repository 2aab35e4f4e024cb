#!/usr/bin/env bash
# Regenerates docs/calls.md from proto/calls.def (through the built
# tandem-calls-doc).  Run after changing the procedure table.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$TANDEM_ROOT/scripts/build.sh" >/dev/null
"$TANDEM_BUILD/bin/tandem-calls-doc" >"$TANDEM_ROOT/docs/calls.md"
echo "docs/calls.md updated"
