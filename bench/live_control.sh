#!/usr/bin/env bash
# A live session's numbers, xprobe next to the kernel in the same run (one thread, bench/workload):
#   add-to-first-event  from `xprobe ctl add` + `enable` (the kernel: echo >> uprobe_events and
#                       echo 1 > enable) until the first event is read from trace-pipe
#                       (the kernel: trace_pipe), work() being called every ~10 us meanwhile
#   remove              `disable` + `remove` (the kernel: echo 0 > enable, echo -: >> uprobe_events)
#   glob-add/remove     the same for a glob of the C library's str* and mem* functions
#                       (xprobe only: the kernel's uprobe_events takes no globs); the number
#                       of probe points is printed
#   hit-enabled         per-hit cost of an enabled jump-optimized probe (the kernel: its uprobe)
#   hit-disabled        per-hit cost of a planted but disabled jump-optimized probe (the kernel:
#                       a defined, disabled event has no uprobe at all: 0 by construction)
# ns/hit = (traced loop ns - untraced loop ns) / N, the loop timed by the workload itself.
#   bench/live_control.sh BUILD   (a Release build with XPROBE_BENCH=ON; root)
set -u
BUILD=${1:?usage: live_control.sh BUILD}
N=${N:-2000000}; RUNS=${RUNS:-3}
WB=$BUILD/bench/workload/work_bench
X=$BUILD/src/cli/xprobe
T=$(mktemp -d)
export XDG_RUNTIME_DIR=$T
TRACEFS=/sys/kernel/tracing
GROUP=xprobe_livebench_$$
INSTANCE=$TRACEFS/instances/$GROUP
cleanup() {
  [ -d "$INSTANCE" ] && { echo 0 > "$INSTANCE/events/$GROUP/enable" 2>/dev/null; rmdir "$INSTANCE" 2>/dev/null; }
  echo "-:$GROUP/work" >> "$TRACEFS/uprobe_events" 2>/dev/null
  jobs -p | xargs -r kill 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
[ -e "$TRACEFS/uprobe_events" ] || mount -t tracefs nodev "$TRACEFS"
loop() { sed -n 's/.*loop_ns=\([0-9]*\).*/\1/p' "$1"; }
now_us() { echo "${EPOCHREALTIME/./}"; }
DEF="p:bench/work $WB:work a=%di:s64 b=%si:s64"
OFF=$(python3 "$(dirname "$0")/peers/elf_symbols.py" "$WB" work | awk '$1 == "work" { print $2; exit }')

xprobe_latency() {  # one session on a workload calling work() every ~10 us
  "$X" trace --ctl -o /dev/null -- "$WB" --threads 1 --delay-ns 10000 100000000 >/dev/null 2>"$T/xerr" &
  local tracer=$!
  while ! "$X" ctl --session "$tracer" list >/dev/null 2>&1; do sleep 0.05; done
  local t0 t1 t2 t3 t4
  t0=$(now_us)
  "$X" ctl --session "$tracer" add "$DEF" && "$X" ctl --session "$tracer" enable bench/work
  "$X" ctl --session "$tracer" trace-pipe | head -n 1 >/dev/null
  t1=$(now_us)
  "$X" ctl --session "$tracer" disable bench/work && "$X" ctl --session "$tracer" remove bench/work
  t2=$(now_us)
  "$X" ctl --session "$tracer" add "p:bench/glob libc.so.6:str*" && "$X" ctl --session "$tracer" add "p:bench/glob2 libc.so.6:mem*"
  t3=$(now_us)
  local points; points=$("$X" ctl --session "$tracer" stats | wc -l)
  local t3b; t3b=$(now_us)
  "$X" ctl --session "$tracer" remove bench/
  t4=$(now_us)
  kill $(pgrep -P "$tracer")  # the workload: its end ends the session
  wait "$tracer" 2>/dev/null
  echo "xprobe add-to-first-event_us=$((t1 - t0)) remove_us=$((t2 - t1)) glob-add_us=$((t3 - t2)) glob-remove_us=$((t4 - t3b)) glob-points=$points"
}

kernel_latency() {
  exec {lock}>>/run/lock/xprobe-kernel-tracefs.lock
  flock "$lock"
  mkdir "$INSTANCE"
  "$WB" --threads 1 --delay-ns 10000 100000000 >/dev/null &
  local workload=$!
  local t0 t1 t2
  t0=$(now_us)
  echo "p:$GROUP/work $WB:$OFF a=%di:s64 b=%si:s64" >> "$TRACEFS/uprobe_events"
  echo 1 > "$INSTANCE/events/$GROUP/work/enable"
  head -n 1 "$INSTANCE/trace_pipe" >/dev/null
  t1=$(now_us)
  echo 0 > "$INSTANCE/events/$GROUP/work/enable"
  echo "-:$GROUP/work" >> "$TRACEFS/uprobe_events"
  t2=$(now_us)
  kill "$workload"; wait "$workload" 2>/dev/null
  rmdir "$INSTANCE"
  exec {lock}>&-
  echo "kernel add-to-first-event_us=$((t1 - t0)) remove_us=$((t2 - t1))"
}

xprobe_hit() {  # enabled|disabled -> loop ns; the probe goes in while the workload waits at exec
  mkfifo "$T/go"
  "$X" trace --ctl --engine jump -o /dev/null -- sh -c "read x < '$T/go'; exec '$WB' --threads 1 --timing '$T/x' $N" >/dev/null 2>&1 &
  local tracer=$!
  while ! "$X" ctl --session "$tracer" list >/dev/null 2>&1; do sleep 0.05; done
  "$X" ctl --session "$tracer" add "$DEF" >/dev/null
  [ "$1" = enabled ] && "$X" ctl --session "$tracer" enable bench/work
  echo go > "$T/go"
  wait "$tracer"
  rm -f "$T/go"
  loop "$T/x"
}

kernel_hit() {
  exec {lock}>>/run/lock/xprobe-kernel-tracefs.lock
  flock "$lock"
  mkdir "$INSTANCE"
  echo $(( N * 128 / 1024 + 1024 )) > "$INSTANCE/buffer_size_kb"
  echo "p:$GROUP/work $WB:$OFF a=%di:s64 b=%si:s64" >> "$TRACEFS/uprobe_events"
  echo 1 > "$INSTANCE/events/$GROUP/enable"
  "$WB" --threads 1 --timing "$T/k" "$N" >/dev/null
  echo 0 > "$INSTANCE/events/$GROUP/enable"
  rmdir "$INSTANCE"
  echo "-:$GROUP/work" >> "$TRACEFS/uprobe_events"
  exec {lock}>&-
  loop "$T/k"
}

for r in $(seq "$RUNS"); do
  "$WB" --threads 1 --timing "$T/u" "$N" >/dev/null; base=$(loop "$T/u")
  report() { echo "round=$r $1 ns_per_hit=$(( ($2 - base) / N ))"; }
  echo "round=$r $(xprobe_latency)"
  echo "round=$r $(kernel_latency)"
  report xprobe-hit-enabled "$(xprobe_hit enabled)"
  report xprobe-hit-disabled "$(xprobe_hit disabled)"
  report kernel-hit-enabled "$(kernel_hit)"
done
