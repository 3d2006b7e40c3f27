#!/bin/busybox sh
# /init of the AArch64 test VM (built into its initramfs by prepare_vm.sh). The kernel passes
# xprobe_share (the host directory shared over virtio-9p, mounted at the same path so that
# every path the build wrote into a test binary holds here too) and xprobe_job (a script in
# that share). The job's output goes to the console, its exit status to "$xprobe_job.status";
# then the VM powers off.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin
export HOME=/root
mkdir -p /proc /sys /dev /tmp /run/lock /root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null

halt_vm() {
  sync
  poweroff -f
}

# The 9p transport over virtio-pci, in dependency order (virtio and virtio_ring are built in).
for module in virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci 9pnet 9pnet_virtio netfs fscache 9p; do
  if ! insmod "/modules/$module.ko"; then
    echo "arm64-vm: cannot load $module" >&2
    halt_vm
  fi
done
mkdir -p "$xprobe_share"
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 host0 "$xprobe_share"; then
  echo "arm64-vm: cannot mount the share $xprobe_share" >&2
  halt_vm
fi

cd /tmp
sh "$xprobe_job"
echo "$?" > "$xprobe_job.status"
umount "$xprobe_share"
halt_vm
