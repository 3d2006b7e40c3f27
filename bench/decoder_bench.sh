#!/bin/sh
# Builds the Release benchmark directory and prints the x86 decoder throughput table
# (xprobe vs Zydis 4 vs Capstone 4 on libc's .text). Extra arguments go to the benchmark.
set -eu
cd "$(dirname "$0")/.."
build=build-bench
mkdir -p "$build"
cmake -S . -B "$build" -G Ninja -DXPROBE_BENCH=ON -DXPROBE_TESTS=OFF -DXPROBE_SANITIZE=OFF \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
ninja -C "$build" -j2 x86_decoder_bench >/dev/null
"$build/bench/x86_decoder/x86_decoder_bench" --markdown --benchmark_min_time=1 --benchmark_repetitions=3 "$@"
