#!/usr/bin/env bash
# Per-hit cost of filtering and aggregating, side by side in one run, on bench/workload's
# work(i, i+1) called N times (one thread):
#   xprobe-entry        a plain jump-optimized entry probe, events to a file (the reference)
#   xprobe-filter-false the same probe with a filter that rejects every hit (decided in the agent)
#   xprobe-hist         --hist 'hist:keys=a.log2' (a key on an argument), computed in the agent
#   xprobe-latency      a return probe feeding --latency, computed in the agent
#   kernel-entry        the kernel's uprobe, its events read from a tracefs instance
#   kernel-filter-false the kernel's uprobe with the same rejecting filter
#   kernel-count        the kernel's uprobe, its events counted by key afterwards (this kernel has
#                       no hist triggers: that is the kernel's way to the same table)
#   bpftrace-count      uprobe { @ = count(); }
#   bpftrace-hist       uprobe { @ = hist(arg0); }
# ns/hit = (traced loop ns - untraced loop ns) / N, the loop timed by the workload itself (start-up
# and tear-down never count). RUNS rounds, every tracer once per round, in turn.
# xprobe's rows say the ring records read and the hits dropped (a full ring): a dropped hit is
# cheaper than a recorded one, so a reference that drops looks cheaper than it is. The default
# N fits the jump engine's ring (8 MiB of 64-byte records: 131,072) whatever the tracer's speed,
# and a round whose plain entry probe dropped anything says so (REFERENCE DROPPED).
#   bench/aggregation_hit_cost.sh BUILD   (a Release build with XPROBE_BENCH=ON; root)
set -u
BUILD=${1:?usage: aggregation_hit_cost.sh BUILD}
N=${N:-100000}; RUNS=${RUNS:-5}
WB=$BUILD/bench/workload/work_bench
X=$BUILD/src/cli/xprobe
T=$(mktemp -d)
TRACEFS=/sys/kernel/tracing
GROUP=xprobe_aggbench_$$
INSTANCE=$TRACEFS/instances/$GROUP
cleanup() {
  [ -d "$INSTANCE" ] && { echo 0 > "$INSTANCE/events/$GROUP/enable" 2>/dev/null; rmdir "$INSTANCE" 2>/dev/null; }
  echo "-:$GROUP/work" >> "$TRACEFS/uprobe_events" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
[ -e "$TRACEFS/uprobe_events" ] || mount -t tracefs nodev "$TRACEFS"
loop() { sed -n 's/.*loop_ns=\([0-9]*\).*/\1/p' "$1"; }
# xprobe's --summary: the ring records read and the hits dropped (a full ring), which must be 0.
ring() { local d; d=$(sed -n 's/^xprobe: \([0-9]*\) events were dropped.*/\1/p' "$1"); echo "$(grep -o 'ring records read: [0-9]*' "$1" | tr ' ' _) ring_drops=${d:-0}"; }
DEF="p:bench/work $WB:work a=%di:s64 b=%si:s64"
REJECT="a < 0"  # a = i >= 0: never true
OFF=$(python3 "$(dirname "$0")/peers/elf_symbols.py" "$WB" work | awk '$1 == "work" { print $2; exit }')

kernel() {  # FILTER|"" COUNT(0/1) -> loop ns; events in $T/kevents
  # uprobe_events is machine-wide: taken in turns with the test suites (tests/support's lock).
  exec {lock}>>/run/lock/xprobe-kernel-tracefs.lock
  flock "$lock"
  mkdir "$INSTANCE"
  echo $(( N * 128 / 1024 + 1024 )) > "$INSTANCE/buffer_size_kb"
  echo "p:$GROUP/work $WB:$OFF a=%di:s64 b=%si:s64" >> "$TRACEFS/uprobe_events"
  [ -n "$1" ] && echo "$1" > "$INSTANCE/events/$GROUP/work/filter"
  echo 1 > "$INSTANCE/events/$GROUP/enable"
  "$WB" --threads 1 --timing "$T/k" "$N" >/dev/null
  echo 0 > "$INSTANCE/events/$GROUP/enable"
  if [ "$2" = 1 ]; then  # counted by key (a's log2 bucket), as a hist would
    grep -v '^#' "$INSTANCE/trace" | sed -n 's/.* a=\([0-9-]*\) .*/\1/p' |
      awk '{ k = 0; v = $1; while (v > 1) { v = v / 2; k++ } c[k]++ } END { for (k in c) n++; print n " keys" }' > "$T/kcount"
  fi
  grep -vc '^#' "$INSTANCE/trace" > "$T/kevents"
  rmdir "$INSTANCE"
  echo "-:$GROUP/work" >> "$TRACEFS/uprobe_events"
  exec {lock}>&-
  loop "$T/k"
}

for r in $(seq "$RUNS"); do
  "$WB" --threads 1 --timing "$T/u" "$N" >/dev/null; base=$(loop "$T/u")
  report() { echo "round=$r $1 ns_per_hit=$(( ($2 - base) / N )) $3"; }
  "$X" trace --engine jump --summary -e "$DEF" -o "$T/trace" -- "$WB" --threads 1 --timing "$T/x" "$N" >/dev/null 2>"$T/err"
  report xprobe-entry "$(loop "$T/x")" "events=$(grep -vc '^#' "$T/trace") $(ring "$T/err")"
  grep -q 'events were dropped' "$T/err" && echo "round=$r REFERENCE DROPPED: $(grep 'events were dropped' "$T/err")"
  "$X" trace --engine jump --summary -e "$DEF" --filter "bench/work:$REJECT" -o "$T/trace" -- "$WB" --threads 1 --timing "$T/x" "$N" >/dev/null 2>"$T/err"
  report xprobe-filter-false "$(loop "$T/x")" "events=$(grep -vc '^#' "$T/trace") $(ring "$T/err")"
  "$X" trace --engine jump --summary -e "$DEF" --hist 'bench/work:hist:keys=a.log2' -o "$T/trace" -- "$WB" --threads 1 --timing "$T/x" "$N" >/dev/null 2>"$T/err"
  report xprobe-hist "$(loop "$T/x")" "$(grep -c '^{' "$T/trace")_keys $(grep -o 'Hits: [0-9]*' "$T/trace" | tr -d ' ') $(ring "$T/err")"
  "$X" trace --engine jump --summary -e "r:bench/work_ret $WB:work%return r=\$retval:s64" --latency bench/work_ret -o "$T/trace" -- "$WB" --threads 1 --timing "$T/x" "$N" >/dev/null 2>"$T/err"
  report xprobe-latency "$(loop "$T/x")" "$(grep -o 'count: [0-9]*' "$T/trace" | tr ' ' _) $(ring "$T/err")"
  report kernel-entry "$(kernel "" 0)" "events=$(cat "$T/kevents")"
  report kernel-filter-false "$(kernel "$REJECT" 0)" "events=$(cat "$T/kevents")"
  report kernel-count "$(kernel "" 1)" "$(tr ' ' _ < "$T/kcount")"
  if command -v bpftrace >/dev/null; then
    bpftrace -e "uprobe:$WB:work { @ = count(); }" -c "$WB --threads 1 --timing $T/b $N" >"$T/bout" 2>&1
    report bpftrace-count "$(loop "$T/b")" "$(grep -o '^@: [0-9]*' "$T/bout" | tr -d ' ')"
    bpftrace -e "uprobe:$WB:work { @ = hist(arg0); }" -c "$WB --threads 1 --timing $T/b $N" >"$T/bout" 2>&1
    report bpftrace-hist "$(loop "$T/b")" "$(grep -c '^\[' "$T/bout")_rows"
  fi
done
