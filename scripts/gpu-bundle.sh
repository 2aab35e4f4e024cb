#!/usr/bin/env bash
# Packs a build for a GPU host that lacks the build's libraries (libtirpc,
# Criterion): the binaries, the guest library, the examples, the test suites,
# the benchmark suites (bench/: their programs and scripts, and NVIDIA's
# libcudart.so.13 for its native runs) and every non-system shared library
# they load, into $1 (default .device).
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=${1:-$TANDEM_ROOT/.device}
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib" "$out/examples" "$out/deps"
cp -a "$TANDEM_BUILD"/bin/* "$out/bin/"
cp -a "$TANDEM_BUILD"/lib/libcudart.so* "$out/lib/"
# Tandem's driver-level guest libraries (issue 15): libcuda.so.1, libnvidia-ml.so.1.
if [ -d "$TANDEM_BUILD/lib/driver" ]; then
  mkdir -p "$out/lib/driver"
  cp -a "$TANDEM_BUILD"/lib/driver/lib* "$out/lib/driver/"
  mkdir -p "$out/examples/nvidia-runtime"
  find "$TANDEM_BUILD/examples/nvidia-runtime" -maxdepth 1 -type f -executable -exec cp {} "$out/examples/nvidia-runtime/" \; 2>/dev/null || true
fi
find "$TANDEM_BUILD/examples" -maxdepth 1 -type f -executable -exec cp {} "$out/examples/" \;
# The fault triggers and the victim (tests/faults/), when built.
if [ -d "$TANDEM_BUILD/faults" ]; then
  mkdir -p "$out/faults"
  find "$TANDEM_BUILD/faults" -maxdepth 1 -type f -executable -exec cp {} "$out/faults/" \;
fi
for t in test_examples test_bad_input test_shm test_shm_ring test_driver_runtime; do
  f=$(find "$TANDEM_BUILD/tests" -maxdepth 1 -name "$t" -type f | head -1)
  [ -n "$f" ] && cp "$f" "$out/bin/"
done
# The benchmark suite: bench/run.sh run as $out/bench/run.sh (or with
# --bundle $out) finds everything here.  native/ holds the toolkit's own
# libcudart.so.13, the runtime the programs were built against, for their
# native runs (the GPU host's CUDA installation may be another version).
if [ -d "$TANDEM_BUILD/bench" ]; then
  mkdir -p "$out/bench/bin" "$out/native"
  for p in micro driver-calls nw lud srad streamcluster inplace tcp-loopback fairness; do cp "$TANDEM_BUILD/bench/$p" "$out/bench/bin/"; done
  # ---- SM shares (issue 17): bench/shares/ beside the other scripts (tests/gpu/run-shares-gpu.sh) ----
  cp "$TANDEM_BUILD/bench/shares" "$out/bench/bin/"
  cp "$TANDEM_ROOT"/bench/shares/*.sh "$TANDEM_ROOT"/bench/shares/*.awk "$TANDEM_ROOT"/bench/shares/*.gp "$out/bench/"
  # ---- the control plane (issue 17): the resize hops' table and the timeline (bench/control-plane/) ----
  cp "$TANDEM_ROOT"/bench/control-plane/*.sh "$TANDEM_ROOT"/bench/control-plane/*.awk \
    "$TANDEM_ROOT"/bench/control-plane/*.gp "$out/bench/"
  # Every script of both suites (run.sh, lib.sh, takeover*.sh, the awk
  # reports, the gnuplot scripts) and the targets.
  cp "$TANDEM_ROOT"/bench/*.sh "$TANDEM_ROOT"/bench/*.awk "$TANDEM_ROOT"/bench/*.gp "$TANDEM_ROOT"/bench/targets.tsv \
    "$out/bench/"
  git -C "$TANDEM_ROOT" describe --always --dirty >"$out/bench/VERSION" 2>/dev/null || echo unknown >"$out/bench/VERSION"
  toolkit_lib=$(dirname "$(command -v nvcc)")/../lib64
  if [ -e "$toolkit_lib/libcudart.so.13" ]; then
    cp -L "$toolkit_lib/libcudart.so.13" "$out/native/"
  else
    echo "gpu-bundle: no libcudart.so.13 in the toolkit: native benchmark runs will use the GPU host's" >&2
  fi
fi
# System libraries (glibc, the CUDA driver) come from the host itself.
skip='linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libresolv|libcuda\.so|libcudart|libstdc\+\+|libgcc_s'
for f in "$out"/bin/* "$out"/lib/libcudart.so.13 "$out"/lib/driver/lib*.so.1 "$out"/bench/bin/*; do
  ldd "$f" 2>/dev/null | awk '/=> \//{print $3}' | grep -vE "$skip" || true
done | sort -u | while read -r lib; do cp -L "$lib" "$out/deps/"; done
du -sh "$out" | awk '{print "gpu-bundle: " $1 " in '"$out"'"}'
