#!/usr/bin/env bash
# The event pipeline's own rate (issue 16, goal 9): how many events per second of its own CPU
# xprobe drains from the agent's ring, formats as ftrace text and writes to -o FILE. The
# workload (bench/peers/xprobe.sh's throughput run: `work` with a=%di:s64 b=%si:s64, one
# thread, no delay) records faster than xprobe drains, so wall-clock rates measure the
# program, not the pipeline: xprobe's task-clock (perf stat --no-inherit: its own threads, not
# the traced child) is measured instead, minus a 1-call run's (attaching, planting, exit).
#
#   bench/event_pipeline.sh BUILD [RUNS]    (root; BUILD a Release build with XPROBE_BENCH=ON)
#
# Per N: the median over RUNS of events written, dropped, xprobe's CPU ms, events/s of CPU,
# peak RSS (GNU time: the larger of xprobe's and the child's). 100,000 calls fit the 8 MiB ring
# (no event may be lost); 2,000,000 do not (the drops must be counted: events + dropped = N).
set -euo pipefail
BUILD=$(cd "${1:?usage: $0 BUILD [RUNS]}" && pwd)
RUNS=${2:-3}
XPROBE=$BUILD/src/cli/xprobe
WORK=$BUILD/bench/workload/work_bench
DIR=$(mktemp -d /tmp/xprobe-pipeline.XXXXXX)
trap 'rm -rf "$DIR"' EXIT

one_run() {  # N -> "events dropped cpu_ms rss_kb"
  /usr/bin/time -f '%M' -o "$DIR/rss" perf stat --no-inherit -e task-clock -x, -o "$DIR/stat" -- \
    "$XPROBE" trace -e "p:pipebench/work $WORK:work a=%di:s64 b=%si:s64" -o "$DIR/trace" -- \
    "$WORK" --threads 1 --delay-ns 0 "$1" >/dev/null 2>"$DIR/stderr"
  local events dropped
  events=$(grep -c ' work: ' "$DIR/trace" || true)
  dropped=$(sed -n 's/^xprobe: \([0-9]*\) events were dropped.*/\1/p' "$DIR/stderr")
  echo "$events ${dropped:-0} $(grep task-clock "$DIR/stat" | cut -d, -f1) $(tail -1 "$DIR/rss")"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
base_ms=$(for _ in $(seq "$RUNS"); do one_run 1 | cut -d' ' -f3; done | median)
echo "1 call: xprobe CPU ${base_ms} ms (attach, plant, exit)"
printf '| calls | events written | dropped | xprobe CPU (ms) | events/s of CPU | peak RSS (MB) |\n|---:|---:|---:|---:|---:|---:|\n'
for n in 100000 2000000; do
  for _ in $(seq "$RUNS"); do one_run "$n"; done > "$DIR/runs"
  events=$(cut -d' ' -f1 "$DIR/runs" | median)
  dropped=$(cut -d' ' -f2 "$DIR/runs" | median)
  cpu=$(cut -d' ' -f3 "$DIR/runs" | median)
  rss=$(cut -d' ' -f4 "$DIR/runs" | sort -g | tail -1)
  awk -v n="$n" -v e="$events" -v d="$dropped" -v c="$cpu" -v b="$base_ms" -v r="$rss" 'BEGIN {
    printf "| %d | %d | %d | %.1f | %.2f M | %.1f |\n", n, e, d, c, e / ((c - b) / 1000) / 1e6, r / 1024 }'
done
