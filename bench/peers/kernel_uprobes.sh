#!/usr/bin/env bash
# The kernel's uprobe_events through tracefs. Events go into a tracefs instance of their
# own (so nobody else's tracing is disturbed), with a buffer sized for every event of the
# run; the trace is read after the run, and the instance's overrun/dropped counters are
# reported. Everything is removed again on exit.
source "$(dirname "$0")/common.sh"

TRACEFS=${TRACEFS:-/sys/kernel/tracing}
GROUP=xprobe_bench_$$
INSTANCE=$TRACEFS/instances/$GROUP
defined_events=()

check() {
  [ "$(id -u)" = 0 ] || { echo "not root"; return 1; }
  if [ ! -e "$TRACEFS/uprobe_events" ]; then
    mount -t tracefs nodev "$TRACEFS" 2>/dev/null || { echo "tracefs not mounted and cannot be mounted at $TRACEFS"; return 1; }
  fi
  [ -w "$TRACEFS/uprobe_events" ] || { echo "$TRACEFS/uprobe_events not writable (kernel without CONFIG_UPROBE_EVENTS?)"; return 1; }
}

# One write(2) for the whole list: "written in one go". dd with a block larger than the
# list reads it whole and writes it with one call (a line split across two writes would
# be refused by the kernel).
write_at_once() {  # FILE (text on stdin)
  dd of="$1" bs=256M oflag=append conv=notrunc status=none
}

cleanup() {
  [ -d "$INSTANCE" ] && { echo 0 > "$INSTANCE/events/$GROUP/enable" 2>/dev/null || true; }
  [ -d "$TRACEFS/events/$GROUP" ] && { echo 0 > "$TRACEFS/events/$GROUP/enable" 2>/dev/null || true; }
  [ -d "$INSTANCE" ] && rmdir "$INSTANCE" 2>/dev/null || true
  if [ ${#defined_events[@]} -gt 0 ]; then
    for e in "${defined_events[@]}"; do printf -- '-:%s/%s\n' "$GROUP" "$e"; done | write_at_once "$TRACEFS/uprobe_events" 2>/dev/null || true
  fi
}

offset_of() {  # BINARY SYMBOL
  "$ELF_SYMBOLS" "$1" "$2" | awk -v s="$2" '$1 == s { print $2; exit }'
}

hit() {
  local mode=$1 threads=$2 n=$3 dir=$4
  trap cleanup EXIT
  local work_off str_off defs=""
  work_off=$(offset_of "$WORK_BENCH" work)
  str_off=$(offset_of "$WORK_BENCH" work_str)
  case "$mode" in
    entry) defs="p:$GROUP/work $WORK_BENCH:$work_off a=%di:s64 b=%si:s64"$'\n'; defined_events=(work) ;;
    entry_ret) defs="p:$GROUP/work $WORK_BENCH:$work_off a=%di:s64 b=%si:s64"$'\n'"r:$GROUP/work_ret $WORK_BENCH:$work_off ret=\$retval:s64"$'\n'
      defined_events=(work work_ret) ;;
    string | heap_string) defs="p:$GROUP/work_str $WORK_BENCH:$str_off s=+0(%di):string"$'\n'; defined_events=(work_str) ;;
  esac
  mkdir "$INSTANCE"
  # 128 bytes per event, every event on one CPU in the worst case: nothing can overrun.
  local expected buffer_kb
  expected=$(expected_events "$mode" "$n")
  buffer_kb=$(( expected * 128 / 1024 + 1024 ))
  echo "$buffer_kb" > "$INSTANCE/buffer_size_kb"
  printf '%s' "$defs" | write_at_once "$TRACEFS/uprobe_events"
  echo 1 > "$INSTANCE/events/$GROUP/enable"
  mapfile -t args < <(workload_args "$mode" "$threads" "$n" "$dir/timing")
  "$WORK_BENCH" "${args[@]}"
  echo 0 > "$INSTANCE/events/$GROUP/enable"
  cat "$INSTANCE/trace" > "$dir/trace"
  local events lost written
  events=$(grep -v '^#' "$dir/trace" | grep -cE ' (work|work_ret|work_str): ' || true)
  lost=$(cat "$INSTANCE"/per_cpu/cpu*/stats | awk '/^(overrun|commit overrun|dropped events):/ { s += $NF } END { print s + 0 }')
  written=$(sed -n 's/.*entries-written: [0-9]*\/\([0-9]*\).*/\1/p' "$dir/trace")
  json tracer=kernel_uprobes mode="$mode" threads="$threads" n="$n" loop_ns="$(loop_ns_from "$dir/timing")" \
    events="$events" expected="$expected" lost="$lost" entries_written="${written:-0}" buffer_kb_per_cpu="$buffer_kb"
}

# Live = defined and enabled. The clock runs from the first write to uprobe_events until
# attach_target's main starts (its exec pays for planting the breakpoints in its mm).
# Hits come from uprobe_profile (per event, every process: the libc probes also fire in
# whatever else runs on the machine meanwhile). Detach = disable + remove.
attach() {
  local probes=$1 dir=$2
  trap cleanup EXIT
  attach_symbols "$probes" > "$dir/symbols"
  local object=$ATTACH_TARGET
  [ "$probes" = libc ] && object=$LIBC
  awk -v g="$GROUP" -v o="$object" '{ printf "p:%s/e%d %s:%s\n", g, NR, o, $2 }' "$dir/symbols" > "$dir/defs"
  mapfile -t defined_events < <(awk '{ printf "e%d\n", NR }' "$dir/symbols")
  mkdir "$INSTANCE"
  echo 1024 > "$INSTANCE/buffer_size_kb"
  local start_us enabled_us end_us detach_start_us detach_end_us status=ok
  start_us=$(now_us)
  write_at_once "$TRACEFS/uprobe_events" < "$dir/defs"
  # One refused probe fails the write but the others stay enabled; count them below.
  echo 1 > "$INSTANCE/events/$GROUP/enable" 2>"$dir/enable.err" || status="enable: $(sed 's/.*: //' "$dir/enable.err" | tail -1)"
  enabled_us=$(now_us)
  "$ATTACH_TARGET" --timing "$dir/timing"
  end_us=$(main_entered_us "$dir/timing")
  local enabled hits
  enabled=$(cat "$INSTANCE/events/$GROUP"/e*/enable | grep -c 1 || true)
  hits=$(awk -v o="$object" '$1 == o && $2 ~ /^e[0-9]+$/ { s += ($3 > 0) } END { print s + 0 }' "$TRACEFS/uprobe_profile")
  detach_start_us=$(now_us)
  cleanup
  detach_end_us=$(now_us)
  defined_events=()
  json tracer=kernel_uprobes probes="$probes" requested="$(wc -l < "$dir/defs")" attached="$enabled" \
    ready_us=$((end_us - start_us)) setup_us=$((enabled_us - start_us)) hits="$hits" \
    expected_hits="$(attach_expected_hits "$probes")" detach_us=$((detach_end_us - detach_start_us)) status="$status"
}

case "${1:-}" in
  check) check ;;
  hit) [ $# -eq 5 ] || usage_error; check >/dev/null || exit 1; hit "$2" "$3" "$4" "$5" ;;
  attach) [ $# -eq 3 ] || usage_error; check >/dev/null || exit 1; attach "$2" "$3" ;;
  *) usage_error ;;
esac
