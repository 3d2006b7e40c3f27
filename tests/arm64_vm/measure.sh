#!/usr/bin/env bash
# Issue 12's per-hit costs inside the AArch64 VM: the kernel's uprobes next to `xprobe trace`
# with its breakpoint engine and with its jump engine on the same workload, in one run
# (hit_cost.cpp says what is measured).
# usage: tests/arm64_vm/measure.sh [CALLS]    (after ./run test-arm64 has built build-arm64)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build-arm64
calls=${1:-2000}
ninja -C "$build" -j"$(nproc)" arm64_hit_cost arm64_work_bench xprobe >/dev/null
"$root/tests/arm64_vm/prepare_vm.sh" "$build/vm" >/dev/null
mkdir -p "$build/vm/jobs"
printf '#!/bin/sh\n%s %s %s %s\n' "$build/tests/arm64_vm/arm64_hit_cost" "$build/tests/arm64_vm/arm64_work_bench" "$calls" \
  "$build/src/cli/xprobe" \
  >"$build/vm/jobs/measure.sh"
"$root/tests/arm64_vm/run_vm.sh" "$build/vm" "$root" "$build/vm/jobs/measure.sh" 900
