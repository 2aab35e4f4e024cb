#!/usr/bin/env bash
# Installs what building and testing Tandem needs on Debian 12.  The CUDA 13
# toolkit (nvcc, headers, stub libcuda) must already be installed: NVIDIA
# ships it outside Debian's archive.  Idempotent; needs root for apt-get.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

# clang and its runtimes (libFuzzer, the sanitizers; only recommended by
# clang, so named) build the fuzz harnesses (scripts/fuzz.sh); libinih reads
# the tenants file (--tenants).  The control plane (issue 17, docs/adr/0002-control-plane.md):
# libconfig reads the config files, libmicrohttpd serves HTTP, json-c speaks JSON, libcurl is
# the HTTP client, SQLite keeps the orchestrator's state; its tests scrape the metrics with a
# real Prometheus (promtool checks them) and load the status page in headless Chromium; the
# end-to-end test puts its nodes in network namespaces (iproute2) and asks the API with curl.
pkgs=(build-essential cmake pkg-config libtirpc-dev rpcsvc-proto libcriterion-dev gnuplot-nox
      clang libclang-rt-14-dev libinih-dev
      libconfig-dev libmicrohttpd-dev libjson-c-dev libcurl4-openssl-dev libsqlite3-dev
      prometheus chromium curl iproute2)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: the CUDA 13 toolkit (nvcc) is not installed; install it from NVIDIA first" >&2
  exit 1
fi

if [ "${TANDEM_WITH_KMOD_TEST:-1}" = 1 ] && [ -x "$(dirname "$0")/kmod-install-deps.sh" ]; then
  "$(dirname "$0")/kmod-install-deps.sh"
fi
echo "install-deps: ready"
