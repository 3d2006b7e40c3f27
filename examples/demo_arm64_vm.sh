#!/bin/sh
# The arm64 demo's part inside the AArch64 VM (busybox sh; ./run demo-arm64 boots the VM and
# runs it): the cross-built xprobe on the cross-built examples/sample.c, with AArch64's
# register names, and the VM kernel's own uprobes given the same definition.
# usage (inside the VM): demo_arm64_vm.sh BUILD_DIR OPEN_CONFIG_OFFSET (open_config's file offset)
BUILD=$1
OPEN_CONFIG_OFFSET=$2
XPROBE=$BUILD/src/cli/xprobe
SAMPLE=$BUILD/examples/sample
show() {
  printf '\n$ %s\n' "$*" | sed "s|$BUILD/||g"
  { "$@" 2>&1; echo "[exit $?]"; } | sed "s|$BUILD/||g"
}
# sample.c opens these two (and one that does not exist); the VM's root has neither.
mkdir -p /etc
echo arm64-vm > /etc/hostname
echo "root:x:0:0:root:/root:/bin/sh" > /etc/passwd

echo "== $(uname -srm) under qemu-system-aarch64: the arm64 xprobe on an arm64 examples/sample.c"
echo "   (AAPCS64: arguments in %x0..%x7, the return address in %x30 at entry)"
show "$XPROBE" trace \
  -e 'p:demo/open_config open_config path=+0(%x0):string flags=%x1:x32 lr=%x30:symbol' \
  -e 'r:demo/open_config_ret open_config%return ret=$retval:s32' \
  -e 'p:demo/libc_open libc.so.6:open path=+0(%x0):string' \
  -e 'r:demo/fib_ret fib%return n=$arg1:s64 ret=$retval:s64' \
  -- "$SAMPLE" 1

echo
echo "== Both engines on arm64: --engine jump makes the entry a B to a trampoline that calls the"
echo "   in-process agent (no trap); --engine trap a BRK per hit; a mid-function probe cannot be a jump"
show "$XPROBE" trace --engine jump --summary -o /dev/null -e 'p:demo/fib fib n=%x0:s64' -e 'r:demo/fib_ret fib ret=$retval:s64' -- "$SAMPLE" 1
show "$XPROBE" trace --engine trap --summary -o /dev/null -e 'p:demo/fib fib n=%x0:s64' -- "$SAMPLE" 1
show "$XPROBE" trace --engine jump -e 'p:demo/mid fib+8' -- "$SAMPLE" 1

echo
echo "== A64 instructions are 4 bytes: a probe elsewhere is refused before anything is planted"
show "$XPROBE" trace -e 'p:demo/odd fib+2' -- "$SAMPLE" 1
show "$XPROBE" check "$SAMPLE" fib+4

echo
echo "== The VM kernel's own uprobes, given the same definition (uprobe_events: FILE:OFFSET, here"
echo "   $OPEN_CONFIG_OFFSET), as the oracle the VM tests compare xprobe with field by field"
tracefs=/sys/kernel/tracing
definition="p:demo_kernel/open_config $SAMPLE:$OPEN_CONFIG_OFFSET path=+0(%x0):string flags=%x1:x32"
printf '\n# echo "%s" >> %s/uprobe_events\n' "$definition" "$tracefs" | sed "s|$BUILD/||g"
if echo "$definition" >> "$tracefs/uprobe_events"; then
  echo 1 > "$tracefs/events/demo_kernel/enable"
  echo > "$tracefs/trace"
  "$SAMPLE" 1 >/dev/null
  echo 0 > "$tracefs/events/demo_kernel/enable"
  printf '# grep open_config %s/trace\n' "$tracefs"
  grep open_config "$tracefs/trace"
  echo "-:demo_kernel/open_config" >> "$tracefs/uprobe_events"
fi
exit 0
