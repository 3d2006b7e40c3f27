#!/usr/bin/env bash
# uftrace with dynamic patching (-P) of a binary built without -pg or
# -fpatchable-function-entry: uftrace rewrites the function's entry into a jump to its
# in-process recorder (libmcount). It records each call's entry and exit (a function-
# duration tracer), so its "entry" run also records the return. Arguments with -A, the
# return value with -R; events are counted from `uftrace replay`, which prints one line
# per call (and "LOST N records" where its buffers overflowed).
source "$(dirname "$0")/common.sh"

check() {
  command -v uftrace >/dev/null || { echo "uftrace not installed"; return 1; }
  uftrace --version 2>/dev/null | grep -q dynamic || { echo "this uftrace was built without dynamic patching"; return 1; }
}

hit() {
  local mode=$1 threads=$2 n=$3 dir=$4 options
  case "$mode" in
    entry) options=(-P work -A work@arg1,arg2) ;;
    entry_ret) options=(-P work -A work@arg1,arg2 -R work@retval) ;;
    string | heap_string) options=(-P work_str -A work_str@arg1/s) ;;
  esac
  mapfile -t args < <(workload_args "$mode" "$threads" "$n" "$dir/timing")
  rm -rf "$dir/uftrace.data"
  uftrace record --no-libcall -d "$dir/uftrace.data" "${options[@]}" "$WORK_BENCH" "${args[@]}" >/dev/null 2>"$dir/stderr"
  uftrace replay --no-pager -d "$dir/uftrace.data" > "$dir/events" 2>>"$dir/stderr"
  local calls returns lost events
  calls=$(grep -cE '\| work(_str)?\(' "$dir/events" || true)
  # A call whose exit follows its entry directly is one line "work(0, 1) = 1;"; when other
  # threads' records come in between, entry and exit are "work(0, 1) {" and "} = 1; /* work */".
  returns=$(grep -cE '(\| work\(.*\) = -?[0-9]+;|\| +\} = -?[0-9]+; /\* work \*/)$' "$dir/events" || true)
  lost=$(awk '/LOST [0-9]+ records/ { for (i = 1; i <= NF; i++) if ($i == "LOST") s += $(i + 1) } END { print s + 0 }' "$dir/events")
  case "$mode" in entry_ret) events=$((calls + returns)) ;; *) events=$calls ;; esac
  json tracer=uftrace mode="$mode" threads="$threads" n="$n" loop_ns="$(loop_ns_from "$dir/timing")" \
    events="$events" expected="$(expected_events "$mode" "$n")" lost="$lost" \
    note="dynamic patching (-P) of a binary without -pg works; entry and exit always recorded"
}

case "${1:-}" in
  check) check ;;
  hit) [ $# -eq 5 ] || usage_error; check >/dev/null || exit 1; hit "$2" "$3" "$4" "$5" ;;
  attach) echo "uftrace has no attach benchmark" >&2; exit 1 ;;
  *) usage_error ;;
esac
