#!/bin/sh
# The VM side of the arm64 test stage (busybox sh inside the VM): every GoogleTest binary
# listed in BUILD/vm_tests.txt, natively. Prints one closing line for the stage; exits
# non-zero when any binary failed.
# usage (inside the VM): run_tests_job.sh BUILD_DIR
build=$1
# As ./run test sets them on the build machine (the VM's environment is its own).
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Tests that cannot hold inside the emulated VM, with why, as a GoogleTest filter per binary:
#   SignalsAndGroupStopsReachTheProgramUnchanged: about two minutes under TCG (the stage's budget).
filter_for() {
  case "$(basename "$1")" in
    vm_trap_engine_tests) echo "-TrapEngineTest.SignalsAndGroupStopsReachTheProgramUnchanged" ;;
    *) echo "*" ;;
  esac
}
echo "arm64-vm: $(uname -srm), $(grep -c ^processor /proc/cpuinfo) cpu"
# Executables run straight from 9p start slowly: every page fault is a 9p read (xprobe took
# 6-8 s to print --help, 1.4 s from tmpfs). The xprobe the tests run is copied to tmpfs once and
# bound over its path, so the tests keep the path they were built with.
xprobe=$build/src/cli/xprobe
if [ -x "$xprobe" ] && cp "$xprobe" /tmp/xprobe.local && mount -o bind /tmp/xprobe.local "$xprobe"; then
  echo "arm64-vm: xprobe runs from tmpfs"
fi
failed=0
ran=0
for test in $(cat "$build/vm_tests.txt"); do
  ran=$((ran + 1))
  echo "arm64-vm: $test"
  if ! "$test" --gtest_brief=1 --gtest_color=no --gtest_filter="$(filter_for "$test")"; then
    failed=$((failed + 1))
    echo "arm64-vm: FAILED $test"
  fi
done
echo "arm64-vm: $((ran - failed)) binaries passed, $failed failed"
umount "$xprobe" 2>/dev/null
[ "$failed" = 0 ]
