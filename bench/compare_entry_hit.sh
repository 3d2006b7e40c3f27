#!/usr/bin/env bash
# Per-hit cost of one entry probe (bench/peers/xprobe.sh's "entry" definition) in two builds of
# xprobe side by side, for a before/after comparison of a change:
#   bench/compare_entry_hit.sh BUILD_BEFORE BUILD_AFTER     (Release builds with XPROBE_BENCH=ON)
# ns/hit = (traced loop ns - untraced loop ns) / N, per engine, the builds alternating, RUNS
# runs each (N, RUNS, ENGINES from the environment). Prints one line per run.
set -u
BEFORE=${1:?usage: compare_entry_hit.sh BUILD_BEFORE BUILD_AFTER}
AFTER=${2:?usage: compare_entry_hit.sh BUILD_BEFORE BUILD_AFTER}
N=${N:-20000}; RUNS=${RUNS:-5}
WB=$BEFORE/bench/workload/work_bench
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
loop() { sed -n 's/.*loop_ns=\([0-9]*\).*/\1/p' "$1"; }
for r in $(seq "$RUNS"); do
  "$WB" --threads 1 --timing "$T/u" "$N" >/dev/null; echo "untraced $(loop "$T/u")"
  for b in before after; do
    build=$BEFORE; [ "$b" = after ] && build=$AFTER
    X=$build/src/cli/xprobe
    for e in ${ENGINES:-auto trap}; do
      "$X" trace --engine $e -e "p:bench/work $WB:work a=%di:s64 b=%si:s64" -o "$T/trace" -- "$WB" --threads 1 --timing "$T/$b" "$N" >/dev/null 2>"$T/err"
      ev=$(grep -vc '^#' "$T/trace")
      echo "$b-$e $(loop "$T/$b") events=$ev"
    done
  done
done
