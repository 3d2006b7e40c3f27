#!/usr/bin/env bash
# Prepares what the AArch64 test VM boots, in CACHE_DIR: Debian's generic arm64 kernel
# (linux-image-VERSION-arm64) and busybox-static:arm64, fetched with `apt-get download` and
# unpacked, not installed (kept, so a rerun downloads nothing), and an initramfs with
# busybox, init.sh as /init, the kernel's 9p modules and the arm64 shared libraries of the
# multiarch installation (the programs under test are dynamically linked).
#
# usage: prepare_vm.sh CACHE_DIR    (needs `dpkg --add-architecture arm64`: ./run does it)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=$1
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

fetch_and_unpack() {  # PACKAGE DIR
  local package=$1 dir=$2
  [ -e "$dir/.unpacked" ] && return 0
  rm -rf "$dir" && mkdir -p "$dir/deb"
  (cd "$dir/deb" && apt-get download -qq "$package" 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
  local deb
  deb=$(ls "$dir"/deb/*.deb 2>/dev/null | head -1)
  if [ -z "$deb" ]; then
    echo "prepare_vm: could not download $package (is the arm64 architecture added and apt-get update done?)" >&2
    exit 1
  fi
  dpkg-deb -x "$deb" "$dir/root"
  rm -f "$dir"/deb/*.deb
  touch "$dir/.unpacked"
}

if [ ! -e "$cache/kernel/.unpacked" ]; then
  version=$(apt-cache depends linux-image-arm64:arm64 2>/dev/null |
    sed -n 's/^ *Depends: linux-image-\([^:]*\)-arm64:arm64$/\1/p' | head -1)
  if [ -z "$version" ]; then
    echo "prepare_vm: apt-cache knows no linux-image-arm64:arm64 (dpkg --add-architecture arm64; apt-get update)" >&2
    exit 1
  fi
  fetch_and_unpack "linux-image-$version-arm64:arm64" "$cache/kernel"
fi
fetch_and_unpack busybox-static:arm64 "$cache/busybox"

kernel=$(ls "$cache"/kernel/root/boot/vmlinuz-*-arm64 | head -1)
modules=$(ls -d "$cache"/kernel/root/lib/modules/*/kernel | head -1)
ln -sf "$kernel" "$cache/vmlinuz"

# The initramfs is rebuilt every time (a second or two): init.sh or the libraries may change.
root=$cache/initramfs-root
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,modules,proc,sys,dev,tmp,usr/lib/aarch64-linux-gnu}
cp "$cache/busybox/root/bin/busybox" "$root/bin/busybox"
cp "$here/init.sh" "$root/init"
chmod 755 "$root/init"
for module in drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci_legacy_dev drivers/virtio/virtio_pci \
  net/9p/9pnet net/9p/9pnet_virtio fs/netfs/netfs fs/fscache/fscache fs/9p/9p; do
  cp "$modules/$module.ko" "$root/modules/"
done
# The arm64 side of multiarch (libc6:arm64 and every library ./run installs for arm64), and
# the cross toolchain's sanitizer runtimes. Static archives stay out.
find /usr/lib/aarch64-linux-gnu -maxdepth 1 \( -name '*.so' -o -name '*.so.*' \) -exec cp -a {} "$root/usr/lib/aarch64-linux-gnu/" \;
for runtime in /usr/aarch64-linux-gnu/lib/libasan.so* /usr/aarch64-linux-gnu/lib/libubsan.so*; do
  [ -e "$runtime" ] && cp -a "$runtime" "$root/usr/lib/aarch64-linux-gnu/"
done
ln -s usr/lib "$root/lib"
ln -s aarch64-linux-gnu/ld-linux-aarch64.so.1 "$root/usr/lib/ld-linux-aarch64.so.1"
(cd "$root" && find . | cpio --quiet -o -H newc) > "$cache/initramfs.cpio"
echo "$cache"
