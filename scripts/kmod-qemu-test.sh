#!/usr/bin/env bash
# Boot Debian's kernel under QEMU (TCG), load kmod/tandem_uvm_isolate.ko with
# its test-only interface, run kmod/guest/kmod_guest_test inside, and check
# the results on the serial console.  Exits non-zero on any failure.
#
#   scripts/kmod-qemu-test.sh [--build-dir DIR] [--kernel-release KREL]
#
# Needs scripts/kmod-install-deps.sh to have run.  Everything it builds goes
# under --build-dir (default: a temporary directory), never the source tree.
#   TANDEM_KMOD_CACHE   where kmod-install-deps.sh unpacked the kernel image
#   KMOD_QEMU_TIMEOUT   hard limit for the QEMU run in seconds (default 600)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${TANDEM_KMOD_CACHE:-/var/cache/tandem-kmod}
QEMU_TIMEOUT=${KMOD_QEMU_TIMEOUT:-600}
BUILD=
KREL=

while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD=$2; shift 2 ;;
    --kernel-release) KREL=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

say() { printf '[kmod-qemu] %s\n' "$*"; }
die() { printf '[kmod-qemu] FAIL: %s\n' "$*" >&2; exit 1; }

START=$(date +%s)
if [ -z "$BUILD" ]; then
  BUILD=$(mktemp -d /tmp/kmod-qemu.XXXXXX)
  trap 'rm -rf "$BUILD"' EXIT
fi
mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)

# A kernel release we have both the headers and an unpacked image for.
if [ -z "$KREL" ]; then
  for img in $(ls -1 "$CACHE"/*/boot/vmlinuz-* 2>/dev/null | sort -rV); do
    k=${img##*/vmlinuz-}
    if [ -d "/lib/modules/$k/build" ] || [ -d "/usr/src/linux-headers-$k" ]; then KREL=$k; break; fi
  done
fi
[ -n "$KREL" ] || die "no kernel image with matching headers in $CACHE; run scripts/kmod-install-deps.sh"
KDIR=/lib/modules/$KREL/build
[ -d "$KDIR" ] || KDIR=/usr/src/linux-headers-$KREL
VMLINUZ=$CACHE/$KREL/boot/vmlinuz-$KREL
[ -r "$VMLINUZ" ] || VMLINUZ=/boot/vmlinuz-$KREL
[ -r "$VMLINUZ" ] || die "kernel image for $KREL not found"
for tool in qemu-system-x86_64 busybox cpio gzip gcc make timeout; do
  command -v "$tool" >/dev/null || die "$tool missing; run scripts/kmod-install-deps.sh"
done
BUSYBOX=$(command -v busybox)
# The initramfs has no libc: the busybox must be the static one.
ldd "$BUSYBOX" >/dev/null 2>&1 && die "$BUSYBOX is dynamically linked; install busybox-static"
say "kernel $KREL, headers $KDIR, build dir $BUILD"

# 1. The module, out of tree, against the Debian headers of the booted kernel.
say "building tandem_uvm_isolate.ko"
make -s -C "$ROOT/kmod" KDIR="$KDIR" BUILD_DIR="$BUILD/ko" >"$BUILD/kbuild.log" 2>&1 ||
  { cat "$BUILD/kbuild.log"; die "module build failed"; }
if grep -E 'warning:' "$BUILD/kbuild.log"; then die "module build has warnings"; fi
KO=$BUILD/ko/tandem_uvm_isolate.ko
[ -f "$KO" ] || die "module not produced"

# 2. The guest test program, static so the initramfs needs no libc.
say "building guest test program"
gcc -static -O2 -Wall -Wextra -Werror -o "$BUILD/kmod_guest_test" "$ROOT/kmod/guest/kmod_guest_test.c"

# 3. A tiny initramfs: busybox, the module, the test, an init that powers off.
say "building initramfs"
IRD=$BUILD/initramfs
rm -rf "$IRD"
mkdir -p "$IRD"/{bin,proc,sys,dev,tmp}
cp "$BUSYBOX" "$IRD/bin/busybox"
cp "$KO" "$BUILD/kmod_guest_test" "$IRD/"
cat >"$IRD/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
echo "GUEST-INIT kernel $(uname -r)"
if insmod /tandem_uvm_isolate.ko test_iface=1; then
  echo "RESULT PASS insmod tandem_uvm_isolate.ko"
  /kmod_guest_test
  echo "GUEST-TEST exit=$?"
  if rmmod tandem_uvm_isolate; then
    echo "RESULT PASS module unloads cleanly"
  else
    echo "RESULT FAIL module unload"
  fi
else
  echo "RESULT FAIL insmod tandem_uvm_isolate.ko"
fi
dmesg | grep -iE 'tandem|BUG|WARNING|Oops' | grep -v 'killed faulting client' | sed 's/^/GUEST-DMESG /'
echo "GUEST-DMESG kills logged: $(dmesg | grep -c 'killed faulting client')"
if dmesg | grep -qE 'BUG:|WARNING:|Oops|general protection'; then
  echo "RESULT FAIL kernel log has BUG/WARNING/Oops"
else
  echo "RESULT PASS kernel log clean"
fi
echo GUEST-DONE
poweroff -f
INIT
chmod +x "$IRD/init"
(cd "$IRD" && find . | cpio -o -H newc --quiet | gzip -1) >"$BUILD/initramfs.cpio.gz"

# 4. Boot under TCG (no KVM), serial console, hard timeout.
say "booting under QEMU TCG (timeout ${QEMU_TIMEOUT}s)"
LOG=$BUILD/serial.log
set +e
timeout "$QEMU_TIMEOUT" qemu-system-x86_64 -accel tcg -m 512 -smp 1 \
  -nographic -no-reboot -monitor none -serial stdio \
  -kernel "$VMLINUZ" -initrd "$BUILD/initramfs.cpio.gz" \
  -append "console=ttyS0 panic=-1 quiet loglevel=3 rdinit=/init" \
  </dev/null 2>&1 | tr -d '\r' | tee "$LOG" | grep --line-buffered -E '^(RESULT|LATENCY|SUMMARY|GUEST-)' |
  sed -u 's/^/  guest: /'
QRC=${PIPESTATUS[0]}
set -e
[ "$QRC" -eq 124 ] && die "QEMU timed out after ${QEMU_TIMEOUT}s (log: $LOG)"

# 5. Verdict from the serial log.
PASS=$(grep -c '^RESULT PASS' "$LOG" || true)
FAIL=$(grep -c '^RESULT FAIL' "$LOG" || true)
END=$(date +%s)
echo
say "handling latency per mechanism (module's own work under QEMU TCG emulation, not a GPU measurement):"
grep '^LATENCY' "$LOG" | sed 's/^/    /' || true
say "results: $PASS passed, $FAIL failed, $((END - START)) s total"
grep -q '^GUEST-DONE' "$LOG" || { say "FAIL: guest did not finish (log: $LOG)"; exit 1; }
grep -q '^SUMMARY pass=[0-9]* fail=0' "$LOG" || { say "FAIL: guest test summary missing or failing"; exit 1; }
[ "$(grep -c '^LATENCY' "$LOG")" -eq 3 ] || { say "FAIL: latency missing for some mechanism"; exit 1; }
if [ "$FAIL" -ne 0 ] || [ "$PASS" -lt 10 ]; then
  grep '^RESULT FAIL' "$LOG" | sed 's/^/    /'
  say "FAIL"
  exit 1
fi
say "PASS"
