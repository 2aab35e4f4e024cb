#!/usr/bin/env bash
# Prints docs/api-coverage.md: every entry point of the toolkit's
# libcudart.so.13 with its status in Tandem and the remoted calls its code
# can reach, followed through the guest library's own functions (the
# connection and takeover machinery, client.c, conn.c and resume/, left out:
# every call can reach those).
# usage: api-coverage.sh TOOLKIT_LIBCUDART REFUSED_LIST [SOURCE_ROOT]
set -euo pipefail
toolkit=$1 refused=$2
root=${3:-$(cd "$(dirname "$0")/.." && pwd)}
exports=$(mktemp)
trap 'rm -f "$exports"' EXIT
nm -D --defined-only "$toolkit" | awk '$2=="T"{print $3}' | sed 's/@.*//' | sort -u >"$exports"
sources=()
for f in "$root"/guest-lib/*.c; do
  case ${f##*/} in client.c|conn.c) ;; *) sources+=("$f") ;; esac
done
LC_ALL=C awk -f "$(dirname "$0")/api-coverage.awk" mode=calls "$root/proto/calls.def" mode=src "${sources[@]}" \
  mode=exports "$exports" mode=refused "$refused"
