#!/usr/bin/env bash
# Boots the AArch64 test VM (qemu-system-aarch64, TCG) and runs JOB inside it: a shell script
# inside SHARE, which the VM mounts over virtio-9p at the same path. The job's output is
# printed; the exit status is the job's, or 124 when the VM did not finish within TIMEOUT
# seconds (then qemu is killed: this can never hang CI), or 125 when it ended without one.
#
# usage: run_vm.sh CACHE_DIR SHARE JOB [TIMEOUT]    (CACHE_DIR from prepare_vm.sh)
#
# -cpu max,pauth-impdef=on: every feature Debian's arm64 kernel and toolchain use (PAC, BTI)
# with QEMU's cheap pointer-authentication algorithm (plain -cpu max boots in 17 s instead of
# 3-5 s); -smp 2 is slower under TCG, not faster; -nic none avoids the missing virtio-net ROM.
set -euo pipefail
cache=$(cd "$1" && pwd)
share=$(cd "$2" && pwd)
job=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
timeout=${4:-600}
case "$job" in
  "$share"/*) ;;
  *) echo "run_vm: the job $job is not inside the share $share" >&2; exit 2 ;;
esac
rm -f "$job.status"
status=0
timeout --kill-after=10 "$timeout" qemu-system-aarch64 \
  -M virt -cpu max,pauth-impdef=on -smp 1 -m 1024 -nographic -nic none -no-reboot \
  -kernel "$cache/vmlinuz" -initrd "$cache/initramfs.cpio" \
  -append "console=ttyAMA0 quiet panic=-1 rdinit=/init xprobe_share=$share xprobe_job=$job" \
  -virtfs "local,path=$share,mount_tag=host0,security_model=none" </dev/null || status=$?
if [ "$status" = 124 ] || [ "$status" = 137 ]; then
  echo "run_vm: the VM did not finish within $timeout s" >&2
  exit 124
fi
if [ ! -s "$job.status" ]; then
  echo "run_vm: the VM ended (qemu status $status) without the job's exit status" >&2
  exit 125
fi
exit "$(cat "$job.status")"
