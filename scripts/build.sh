#!/usr/bin/env bash
# Configures and builds Tandem into $TANDEM_BUILD (default ./build).
# Extra arguments go to cmake's configure step.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cmake -S "$TANDEM_ROOT" -B "$TANDEM_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
# Progress lines are dropped; warnings and errors stay.
set +e
cmake --build "$TANDEM_BUILD" -j "$TANDEM_JOBS" 2>&1 |
  grep -vE '^\[ *[0-9]+%\] (Building|Linking|Generating)|^(gmake|make)\['
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "build failed" >&2; exit 1
fi
echo "build: $TANDEM_BUILD"
