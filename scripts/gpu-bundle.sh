#!/usr/bin/env bash
# Packs a build for a GPU host that lacks the build's libraries (libtirpc,
# Criterion): the binaries, the guest library, the examples, the test suites
# and every non-system shared library they load, into $1 (default .device).
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=${1:-$TANDEM_ROOT/.device}
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib" "$out/examples" "$out/deps"
cp -a "$TANDEM_BUILD"/bin/* "$out/bin/"
cp -a "$TANDEM_BUILD"/lib/libcudart.so* "$out/lib/"
find "$TANDEM_BUILD/examples" -maxdepth 1 -type f -executable -exec cp {} "$out/examples/" \;
# The fault triggers and the victim (tests/faults/), when built.
if [ -d "$TANDEM_BUILD/faults" ]; then
  mkdir -p "$out/faults"
  find "$TANDEM_BUILD/faults" -maxdepth 1 -type f -executable -exec cp {} "$out/faults/" \;
fi
for t in test_examples test_bad_input test_shm test_shm_ring; do
  f=$(find "$TANDEM_BUILD/tests" -maxdepth 1 -name "$t" -type f | head -1)
  [ -n "$f" ] && cp "$f" "$out/bin/"
done
# System libraries (glibc, the CUDA driver) come from the host itself.
skip='linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libresolv|libcuda\.so|libcudart|libstdc\+\+|libgcc_s'
for f in "$out"/bin/* "$out"/lib/libcudart.so.13; do
  ldd "$f" 2>/dev/null | awk '/=> \//{print $3}' | grep -vE "$skip" || true
done | sort -u | while read -r lib; do cp -L "$lib" "$out/deps/"; done
du -sh "$out" | awk '{print "gpu-bundle: " $1 " in '"$out"'"}'
