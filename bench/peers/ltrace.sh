#!/usr/bin/env bash
# ltrace -x: breakpoints on a symbol of the program itself. A prototype file (-F) makes
# ltrace print the same fields (two longs, a string, the long result). ltrace always
# traces the return as well (it prints "= VALUE"), so its "entry" run also pays for a
# return breakpoint: the notes in the report say so.
source "$(dirname "$0")/common.sh"

check() {
  command -v ltrace >/dev/null || { echo "ltrace not installed"; return 1; }
}

hit() {
  local mode=$1 threads=$2 n=$3 dir=$4 symbol=work
  [[ $mode == string || $mode == heap_string ]] && symbol=work_str
  printf 'long work(long, long);\nlong work_str(string);\n' > "$dir/prototypes"
  local follow=()
  [ "$threads" -gt 1 ] && follow=(-f)
  mapfile -t args < <(workload_args "$mode" "$threads" "$n" "$dir/timing")
  ltrace "${follow[@]}" -F "$dir/prototypes" -L -x "$symbol" -o "$dir/events" "$WORK_BENCH" "${args[@]}" >/dev/null 2>"$dir/stderr"
  # One line per call ("work(1, 2) = 5"), or, when threads interleave, an
  # "work(1, 2 <unfinished ...>" line and a "<... work resumed> ) = 5" line.
  local entries returns events
  entries=$(grep -cE "(^|[0-9] )$symbol\(" "$dir/events" || true)
  returns=$(grep -cE '\) += -?[0-9]+$' "$dir/events" || true)
  case "$mode" in entry_ret) events=$((entries + returns)) ;; *) events=$entries ;; esac
  json tracer=ltrace mode="$mode" threads="$threads" n="$n" loop_ns="$(loop_ns_from "$dir/timing")" \
    events="$events" expected="$(expected_events "$mode" "$n")" lost=0 returns_recorded="$returns" \
    note="ltrace traces every return, in every mode"
}

case "${1:-}" in
  check) check ;;
  hit) [ $# -eq 5 ] || usage_error; check >/dev/null || exit 1; hit "$2" "$3" "$4" "$5" ;;
  attach) echo "ltrace has no attach benchmark" >&2; exit 1 ;;
  *) usage_error ;;
esac
