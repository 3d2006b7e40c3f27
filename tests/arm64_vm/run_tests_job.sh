#!/bin/sh
# The VM side of the arm64 test stage (busybox sh inside the VM): every GoogleTest binary
# listed in BUILD/vm_tests.txt, natively. Prints one closing line for the stage; exits
# non-zero when any binary failed.
# usage (inside the VM): run_tests_job.sh BUILD_DIR
build=$1
# As ./run test sets them on the build machine (the VM's environment is its own).
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
echo "arm64-vm: $(uname -srm), $(grep -c ^processor /proc/cpuinfo) cpu"
failed=0
ran=0
for test in $(cat "$build/vm_tests.txt"); do
  ran=$((ran + 1))
  echo "arm64-vm: $test"
  if ! "$test" --gtest_brief=1 --gtest_color=no; then
    failed=$((failed + 1))
    echo "arm64-vm: FAILED $test"
  fi
done
echo "arm64-vm: $((ran - failed)) binaries passed, $failed failed"
[ "$failed" = 0 ]
