#!/usr/bin/env bash
# A live session's numbers, xprobe next to the kernel in the same run (one thread, bench/workload):
#   add-to-first-event  from `xprobe ctl add` + `enable` (the kernel: echo >> uprobe_events and
#                       echo 1 > enable) until the first event is read from trace-pipe
#                       (the kernel: trace_pipe), work() being called every ~10 us meanwhile
#   remove              `disable` + `remove` (the kernel: echo 0 > enable, echo -: >> uprobe_events)
#                       xprobe-ctl: through xprobe ctl; xprobe-mount: echo and grep in the
#                       --control mount, as with the kernel's tracefs
#   glob-add, glob-add-to-first-event, glob-remove
#                       the same for a glob of about 1,000 functions of the C library
#                       (GLOB, default *o*, 902 functions here; the kernel, which takes no globs: the same
#                       points, one definition a line, in one write); the points are counted
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
  [ -f "$T/kdefs" ] && sed 's/^p:\([^ ]*\) .*/-:\1/' "$T/kdefs" >> "$TRACEFS/uprobe_events" 2>/dev/null
  jobs -p | xargs -r kill 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
[ -e "$TRACEFS/uprobe_events" ] || mount -t tracefs nodev "$TRACEFS"
loop() { sed -n 's/.*loop_ns=\([0-9]*\).*/\1/p' "$1"; }
now_us() { echo "${EPOCHREALTIME/./}"; }
DEF="p:bench/work $WB:work a=%di:s64 b=%si:s64"
# About 900 functions of the C library (*o*: clock_gettime among them: the workload's delay loop
# calls it), for the glob numbers.
GLOB=${GLOB:-*o*}
LIBC=${LIBC:-/usr/lib/x86_64-linux-gnu/libc.so.6}
GLOB_GROUP=${GROUP}_glob
OFF=$(python3 "$(dirname "$0")/peers/elf_symbols.py" "$WB" work | awk '$1 == "work" { print $2; exit }')

xprobe_latency() {  # ctl|mount: one session on a workload calling work() and clock_gettime() every ~10 us
  local via=$1 mnt=$T/mnt
  local opts=(--ctl)
  if [ "$via" = mount ]; then mkdir -p "$mnt"; opts=(--control "$mnt"); fi
  "$X" trace "${opts[@]}" -o /dev/null -- "$WB" --threads 1 --delay-ns 10000 100000000 >/dev/null 2>"$T/xerr" &
  local tracer=$!
  if [ "$via" = mount ]; then
    while [ ! -e "$mnt/uprobe_events" ]; do sleep 0.05; done
    add() { echo "$1" >> "$mnt/uprobe_events"; }
    switch() { echo "$2" > "$mnt/events/$1/enable"; }
    remove() { echo "-:$1" >> "$mnt/uprobe_events"; }
    first() { grep -m1 " $1:" "$mnt/trace_pipe" >/dev/null; }
  else
    while ! "$X" ctl --session "$tracer" list >/dev/null 2>&1; do sleep 0.05; done
    add() { "$X" ctl --session "$tracer" add "$1"; }
    switch() { if [ "$2" = 1 ]; then "$X" ctl --session "$tracer" enable "$1"; else "$X" ctl --session "$tracer" disable "$1"; fi; }
    remove() { "$X" ctl --session "$tracer" remove "$1"; }
    first() { "$X" ctl --session "$tracer" trace-pipe | grep -m1 " $1:" >/dev/null; }
  fi
  local t0 t1 t2 t3 t4 t5 t6 points
  t0=$(now_us)
  add "$DEF" && switch bench/work 1 && first work
  t1=$(now_us)
  switch bench/work 0 && remove bench/work
  t2=$(now_us)
  add "p:bench/glob libc.so.6:$GLOB"
  t3=$(now_us)
  switch bench/glob 1 && first glob
  t4=$(now_us)
  points=$("$X" ctl --session "$tracer" stats 2>/dev/null | wc -l)
  [ "$via" = mount ] && points=$(wc -l < "$mnt/uprobe_profile")
  t5=$(now_us)
  switch bench/glob 0 && remove bench/glob
  t6=$(now_us)
  kill $(pgrep -P "$tracer")  # the workload: its end ends the session
  wait "$tracer" 2>/dev/null
  echo "xprobe-$via add-to-first-event_us=$((t1 - t0)) remove_us=$((t2 - t1)) glob-add_us=$((t3 - t2)) glob-add-to-first-event_us=$((t4 - t2)) glob-remove_us=$((t6 - t5)) glob-points=$points"
}

kernel_latency() {
  exec {lock}>>/run/lock/xprobe-kernel-tracefs.lock
  flock "$lock"
  mkdir "$INSTANCE"
  # No globs in uprobe_events: the same points, one definition each, in one write.
  python3 "$(dirname "$0")/peers/elf_symbols.py" --unique-addresses "$LIBC" "$GLOB" |
    awk -v g="$GLOB_GROUP" -v lib="$LIBC" '{ printf "p:%s/f%d %s:%s\n", g, NR, lib, $2 }' > "$T/kdefs"
  "$WB" --threads 1 --delay-ns 10000 100000000 >/dev/null &
  local workload=$!
  local t0 t1 t2 t3 t4 t5 t6 points
  t0=$(now_us)
  echo "p:$GROUP/work $WB:$OFF a=%di:s64 b=%si:s64" >> "$TRACEFS/uprobe_events"
  echo 1 > "$INSTANCE/events/$GROUP/work/enable"
  grep -m1 " work:" "$INSTANCE/trace_pipe" >/dev/null
  t1=$(now_us)
  echo 0 > "$INSTANCE/events/$GROUP/work/enable"
  echo "-:$GROUP/work" >> "$TRACEFS/uprobe_events"
  t2=$(now_us)
  cat "$T/kdefs" >> "$TRACEFS/uprobe_events"
  t3=$(now_us)
  echo 1 > "$INSTANCE/events/$GLOB_GROUP/enable"
  grep -m1 " f[0-9]*:" "$INSTANCE/trace_pipe" >/dev/null
  t4=$(now_us)
  points=$(ls "$INSTANCE/events/$GLOB_GROUP" | grep -c '^f[0-9]')
  t5=$(now_us)
  echo 0 > "$INSTANCE/events/$GLOB_GROUP/enable"
  sed 's/^p:\([^ ]*\) .*/-:\1/' "$T/kdefs" >> "$TRACEFS/uprobe_events"
  t6=$(now_us)
  kill "$workload"; wait "$workload" 2>/dev/null
  rmdir "$INSTANCE"
  exec {lock}>&-
  echo "kernel add-to-first-event_us=$((t1 - t0)) remove_us=$((t2 - t1)) glob-add_us=$((t3 - t2)) glob-add-to-first-event_us=$((t4 - t2)) glob-remove_us=$((t6 - t5)) glob-points=$points"
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
  echo "round=$r $(xprobe_latency ctl)"
  [ -e /dev/fuse ] && echo "round=$r $(xprobe_latency mount)"
  echo "round=$r $(kernel_latency)"
  report xprobe-hit-enabled "$(xprobe_hit enabled)"
  report xprobe-hit-disabled "$(xprobe_hit disabled)"
  report kernel-hit-enabled "$(kernel_hit)"
done
