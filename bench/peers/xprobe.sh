#!/usr/bin/env bash
# xprobe: `xprobe trace` with the very definitions the kernel's uprobe_events takes
# (symbol names instead of file offsets), ftrace output into a file (-o), events counted
# by line; a drop count printed at exit ("dropped N" / "lost N") is summed.
#   xprobe.sh throughput DELAY_NS THREADS N WORKDIR   one event-throughput run (peak RSS too)
# XPROBE_BEFORE=PATH adds that xprobe's hit runs as "xprobe-before" (before/after in one run).
source "$(dirname "$0")/common.sh"

# Engines to measure: XPROBE_ENGINES (space-separated values for --engine), else the
# default engine only.
engines() {
  echo "${XPROBE_ENGINES:-default}"
}

engine_options() {  # ENGINE
  [ "$1" = default ] || echo "--engine=$1"
}

definitions() {  # MODE
  case "$1" in
    entry) echo "p:bench/work $WORK_BENCH:work a=%di:s64 b=%si:s64" ;;
    entry_ret) echo "p:bench/work $WORK_BENCH:work a=%di:s64 b=%si:s64"
      echo "r:bench/work_ret $WORK_BENCH:work ret=\$retval:s64" ;;
    string | heap_string) echo "p:bench/work_str $WORK_BENCH:work_str s=+0(%di):string" ;;
  esac
}

count_events() {  # TRACE_FILE
  grep -v '^#' "$1" | grep -cE ' (work|work_ret|work_str): ' || true
}

# "xprobe: N events were dropped" at exit; the --summary table's total MISSES too.
dropped_from() {  # STDERR_FILE
  awk 'tolower($0) ~ /dropped|lost/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) { s += $i; break } }
       END { print s + 0 }' "$1"
}

misses_from() {  # STDERR_FILE
  awk '$1 == "total" && NF >= 3 { print $3; found = 1 } END { if (!found) print 0 }' "$1"
}

# Usable = the binary exists, has `trace`, and records 10 calls of work as 10 events.
check() {
  [ -x "$XPROBE" ] || { echo "not available: $XPROBE not built"; return 1; }
  "$XPROBE" trace --help >/dev/null 2>&1 || { echo "not available: xprobe has no trace command yet"; return 1; }
  local dir
  dir=$(mktemp -d)
  local rc=0
  timeout 60 "$XPROBE" trace -e "$(definitions entry)" -o "$dir/trace" -- "$WORK_BENCH" --timing "$dir/timing" 10 \
    >"$dir/stdout" 2>"$dir/stderr" || rc=$?
  local events=0
  [ -f "$dir/trace" ] && events=$(count_events "$dir/trace")
  if [ "$rc" != 0 ] || [ "$events" != 10 ]; then
    echo "not available: xprobe trace exits $rc and records $events of 10 events ($(grep -v '^$' "$dir/stderr" | tail -1 | cut -c1-160))"
    rm -rf "$dir"
    return 1
  fi
  rm -rf "$dir"
}

hit() {
  local mode=$1 threads=$2 n=$3 dir=$4 engine
  mapfile -t args < <(workload_args "$mode" "$threads" "$n" "$dir/timing")
  local defs=()
  while read -r line; do defs+=(-e "$line"); done < <(definitions "$mode")
  # XPROBE_BEFORE: another build's xprobe, measured in the same run as "xprobe-before" (the
  # before/after table of a change, in ratios of one run).
  local binary suffix
  for binary in "$XPROBE" ${XPROBE_BEFORE:+"$XPROBE_BEFORE"}; do
  suffix=""
  [ "$binary" = "$XPROBE" ] || suffix="-before"
  for engine in $(engines); do
    rm -f "$dir/trace" "$dir/timing"
    local rc=0
    "$binary" trace $(engine_options "$engine") --summary "${defs[@]}" -o "$dir/trace" -- "$WORK_BENCH" "${args[@]}" \
      >/dev/null 2>"$dir/stderr" || rc=$?
    local tracer=xprobe
    [ "$engine" = default ] || tracer="xprobe-$engine"
    tracer+=$suffix
    if [ "$rc" != 0 ] || [ ! -s "$dir/timing" ]; then
      json tracer="$tracer" mode="$mode" threads="$threads" n="$n" \
        status="failed: exit $rc: $(grep -v '^$' "$dir/stderr" | tail -1 | cut -c1-160)"
      continue
    fi
    json tracer="$tracer" mode="$mode" threads="$threads" n="$n" loop_ns="$(loop_ns_from "$dir/timing")" \
      events="$(count_events "$dir/trace")" expected="$(expected_events "$mode" "$n")" lost="$(dropped_from "$dir/stderr")" \
      misses="$(misses_from "$dir/stderr")"
  done
  done
}

# Live = xprobe has started attach_target with every probe planted: attach_target's main
# is the first thing it runs, so the clock runs from xprobe's start until that main.
attach() {
  local probes=$1 dir=$2
  case "$probes" in
    # Unnamed, so that every match gets its own derived event name (as the kernel would
    # need); a named glob (p:grp/ev libc.so.6:*) recorded nothing at commit 83bc656, and
    # the path /lib/x86_64-linux-gnu/libc.so.6 (a symlinked directory) matched nothing.
    libc) echo "p libc.so.6:*" > "$dir/defs" ;;
    *) attach_symbols "$probes" | awk -v o="$ATTACH_TARGET" '{ printf "p:xbench/%s %s:%s\n", $1, o, $1 }' > "$dir/defs" ;;
  esac
  local start_us end_us rc=0 status=ok
  start_us=$(now_us)
  "$XPROBE" trace -f "$dir/defs" -o "$dir/trace" -- "$ATTACH_TARGET" --timing "$dir/timing" >/dev/null 2>"$dir/stderr" || rc=$?
  local stopped_us
  stopped_us=$(now_us)
  [ "$rc" = 0 ] || status="failed: exit $rc: $(grep -v '^$' "$dir/stderr" | tail -1 | cut -c1-160)"
  end_us=$(main_entered_us "$dir/timing" 2>/dev/null || echo 0)
  local hits=0
  [ -f "$dir/trace" ] && hits=$(grep -vc '^#' "$dir/trace" || true)
  # The hit profile printed at exit has one "  OBJECT EVENT HITS MISSES" line per probe.
  local attached
  attached=$(grep -cE '^ +/' "$dir/stderr" || true)
  json tracer=xprobe probes="$probes" requested="$(attach_symbols "$probes" | wc -l)" attached="$attached" \
    ready_us=$(( ${end_us:-0} > 0 ? end_us - start_us : 0 )) hits="$hits" expected_hits="$(attach_expected_hits "$probes")" \
    run_and_detach_us=$((stopped_us - ${end_us:-stopped_us})) status="$status"
}

# Event throughput: work_bench offers one call of work every DELAY_NS (0: as fast as it
# can); xprobe records entry events (a, b) into a file. Peak RSS by GNU time (the larger
# of xprobe's and its child's; work_bench alone stays near 1.5 MB).
throughput() {
  local delay_ns=$1 threads=$2 n=$3 dir=$4 rc=0
  rm -f "$dir/trace" "$dir/timing"
  /usr/bin/time -f 'max_rss_kb=%M' -o "$dir/rusage" "$XPROBE" trace -e "$(definitions entry)" -o "$dir/trace" -- \
    "$WORK_BENCH" --threads "$threads" --delay-ns "$delay_ns" --timing "$dir/timing" "$n" >/dev/null 2>"$dir/stderr" || rc=$?
  if [ "$rc" != 0 ] || [ ! -s "$dir/timing" ]; then
    json tracer=xprobe delay_ns="$delay_ns" threads="$threads" n="$n" status="failed: exit $rc: $(grep -v '^$' "$dir/stderr" | tail -1 | cut -c1-160)"
    return
  fi
  json tracer=xprobe delay_ns="$delay_ns" threads="$threads" n="$n" loop_ns="$(loop_ns_from "$dir/timing")" \
    events="$(count_events "$dir/trace")" expected="$n" lost="$(dropped_from "$dir/stderr")" \
    max_rss_kb="$(sed -n 's/max_rss_kb=//p' "$dir/rusage")" trace_bytes="$(stat -c %s "$dir/trace")"
}

case "${1:-}" in
  check) check ;;
  hit) [ $# -eq 5 ] || usage_error; hit "$2" "$3" "$4" "$5" ;;
  attach) [ $# -eq 3 ] || usage_error; attach "$2" "$3" ;;
  throughput) [ $# -eq 5 ] || usage_error; throughput "$2" "$3" "$4" "$5" ;;
  engines) engines ;;
  *) usage_error ;;
esac
