#!/usr/bin/env bash
# Every entry point NVIDIA's libcudart.so.13 exports must be exported by
# Tandem's, under the same version node, so no program fails to load.
set -euo pipefail
theirs=$1 ours=$2
list() { nm -D --defined-only "$1" | awk '$2=="T"{print $3}' | sort -u; }
missing=$(comm -23 <(list "$theirs") <(list "$ours"))
if [ -n "$missing" ]; then
  echo "missing from $ours:"; echo "$missing"; exit 1
fi
unversioned=$(list "$ours" | grep -v '@@libcudart.so.13$' || true)
if [ -n "$unversioned" ]; then
  echo "exported without the libcudart.so.13 version node:"; echo "$unversioned"; exit 1
fi
soname=$(readelf -d "$ours" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libcudart.so.13 ] || { echo "soname is '$soname'"; exit 1; }
echo "ABI check: $(list "$ours" | wc -l) versioned entry points, all $(list "$theirs" | wc -l) of the toolkit's present"
echo "1 passed, 0 failed"
