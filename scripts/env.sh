# Sourced by the scripts: where the toolkit and the build live.
TANDEM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PATH="$PATH:/usr/local/cuda/bin"
TANDEM_BUILD=${TANDEM_BUILD:-$TANDEM_ROOT/build}
TANDEM_JOBS=${TANDEM_JOBS:-$(nproc)}
