#!/usr/bin/env bash
# Peak RSS of xprobe per output format, side by side in one run: bench/workload's work(i, i+1)
# called N times under an entry and a return probe (2 N events: with --format perfetto, N
# nested-free slices), and the same at N/10. A format that streams keeps the same peak at both
# sizes; one that held the trace would grow tenfold. Peak RSS from /usr/bin/time -v.
# The calls are paced (DELAY_NS between them) so that the tracer writes every event instead of
# dropping what the ring cannot hold: the events column counts what was written.
#   bench/trace_format_memory.sh BUILD   (a build with XPROBE_BENCH=ON)
set -u
BUILD=${1:?usage: trace_format_memory.sh BUILD}
N=${N:-500000}; DELAY_NS=${DELAY_NS:-3000}
WB=${WORK_BENCH:-$BUILD/bench/workload/work_bench}
X=$BUILD/src/cli/xprobe
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ENTRY="p:bench/work $WB:work a=%di:s64 b=%si:s64"
RET="r:bench/work_ret $WB:work%return rv=\$retval:s64"

peak_kb() {  # FORMAT CALLS -> "peak_kB events output_bytes" (events: written, the dropped taken off)
  local format=$1 calls=$2 out=$T/out.$1
  rm -rf "$out"
  /usr/bin/time -v -o "$T/time" "$X" trace --format "$format" -o "$out" -e "$ENTRY" -e "$RET" -- "$WB" --delay-ns "$DELAY_NS" "$calls" \
    >/dev/null 2>"$T/err"
  local kb bytes dropped
  kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$T/time")
  bytes=$(du -sb "$out" | cut -f1)
  dropped=$(sed -n 's/^xprobe: \([0-9]*\) events were dropped.*/\1/p' "$T/err")
  echo "$kb $((2 * calls - ${dropped:-0})) $bytes"
}

printf '%-10s %14s %14s %14s %14s\n' format "events(small)" "peak_kB" "events(big)" "peak_kB"
for format in ftrace json perfetto ctf; do
  read -r small_kb small_events _ < <(peak_kb "$format" $((N / 10)))
  read -r big_kb big_events big_bytes < <(peak_kb "$format" "$N")
  printf '%-10s %14s %14s %14s %14s   (%s bytes written)\n' "$format" "$small_events" "$small_kb" "$big_events" "$big_kb" "$big_bytes"
done
