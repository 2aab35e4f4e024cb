#!/usr/bin/env bash
# Builds the cuda backend and its smoke test straight from the repository
# with gcc and nvcc (the GPU host has no libtirpc, so no CMake build of the
# whole server), then runs it.  Usage: tests/gpu/run-cuda-backend-smoke.sh [BUILD_DIR]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CUDA=${CUDA_HOME:-/usr/local/cuda}
BUILD=${1:-$ROOT/build-cuda-smoke}
ARCH=${SMOKE_ARCH:-sm_90}
mkdir -p "$BUILD"

"$CUDA/bin/nvcc" -fatbin -arch="$ARCH" -o "$BUILD/smoke_kernels.fatbin" "$ROOT/tests/gpu/smoke_kernels.cu"
gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Werror -O2 -g \
    -I"$ROOT/server/backends/include" -I"$ROOT/server/backends/cuda" -I"$ROOT/common" -I"$CUDA/include" \
    "$ROOT"/server/backends/cuda/cuda_*.c "$ROOT/common/log.c" "$ROOT/tests/gpu/cuda_backend_smoke.c" \
    -ldl -pthread -o "$BUILD/cuda_backend_smoke"

# The backend loads libcuda.so.1 itself; without a driver it says so and
# the smoke test fails at init.
exec "$BUILD/cuda_backend_smoke" "$BUILD/smoke_kernels.fatbin"
