#!/usr/bin/env bash
# Install what the kmod/ tests need (Debian 12): kernel headers and, unpacked
# into a cache (no initramfs hooks, no bootloader changes), the matching
# kernel image for the QEMU boot test; QEMU, busybox, cpio, Criterion.
# Idempotent and non-interactive.  Prints the kernel release it provisioned.
#
#   TANDEM_KMOD_CACHE   where the kernel image is unpacked
#                       (default /var/cache/tandem-kmod)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

CACHE=${TANDEM_KMOD_CACHE:-/var/cache/tandem-kmod}
SUDO=
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi

$SUDO apt-get update -q

# The headers and the image must be the same release: take both from the
# Debian metapackages' current dependency.
dep_of() {
  apt-cache depends "$1" | awk '/Depends: linux-/ {print $2; exit}'
}
HDR_PKG=$(dep_of linux-headers-amd64)
IMG_PKG=$(dep_of linux-image-amd64)
KREL=${IMG_PKG#linux-image-}
if [ -z "$HDR_PKG" ] || [ -z "$IMG_PKG" ] || [ "${HDR_PKG#linux-headers-}" != "$KREL" ]; then
  echo "kmod-install-deps: cannot pair headers ($HDR_PKG) with image ($IMG_PKG)" >&2
  exit 1
fi

$SUDO apt-get install -y -q --no-install-recommends \
  build-essential libc6-dev gcc make cmake pkg-config libcriterion-dev \
  "$HDR_PKG" qemu-system-x86 busybox-static cpio kmod gzip

# Kernel image: unpack only.  Installing the package would run initramfs and
# bootloader hooks on the build host for a kernel it never boots.
if [ ! -f "$CACHE/$KREL/boot/vmlinuz-$KREL" ]; then
  $SUDO mkdir -p "$CACHE/$KREL"
  tmp=$(mktemp -d)
  chmod 755 "$tmp"   # apt-get download drops privileges to _apt
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && apt-get download -q "$IMG_PKG")
  # The vmlinuz is readable by root only inside the package; keep it usable.
  $SUDO dpkg -x "$tmp"/"$IMG_PKG"_*.deb "$CACHE/$KREL"
  $SUDO chmod a+r "$CACHE/$KREL/boot/vmlinuz-$KREL"
  # Only the kernel is booted; its modules are not needed.
  $SUDO rm -rf "$CACHE/$KREL/lib" "$CACHE/$KREL/usr"
fi
echo "kmod-install-deps: kernel $KREL ready (image in $CACHE/$KREL, headers in /usr/src/$HDR_PKG)"
