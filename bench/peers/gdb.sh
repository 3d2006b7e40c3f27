#!/usr/bin/env bash
# gdb in batch mode with dprintf (a breakpoint that prints and continues). gdb has no
# return probe: the return value is printed by a dprintf on each `ret` instruction of
# work (found by objdump), where %rax holds it.
source "$(dirname "$0")/common.sh"

check() {
  command -v gdb >/dev/null || { echo "gdb not installed"; return 1; }
}

hit() {
  local mode=$1 threads=$2 n=$3 dir=$4
  local commands=(-ex 'set pagination off' -ex 'set print thread-events off' -ex 'set print inferior-events off')
  case "$mode" in
    entry) commands+=(-ex 'dprintf *work,"E %ld %ld\n",$rdi,$rsi') ;;
    entry_ret)
      commands+=(-ex 'dprintf *work,"E %ld %ld\n",$rdi,$rsi')
      local offset
      for offset in $(ret_offsets "$WORK_BENCH" work); do
        commands+=(-ex "dprintf *(work+$offset),\"R %ld\\n\",\$rax")
      done ;;
    string | heap_string) commands+=(-ex 'dprintf *work_str,"S %s\n",(char*)$rdi') ;;
  esac
  mapfile -t args < <(workload_args "$mode" "$threads" "$n" "$dir/timing")
  gdb -batch -nx "${commands[@]}" -ex run --args "$WORK_BENCH" "${args[@]}" >"$dir/events" 2>"$dir/stderr"
  local events
  events=$(grep -cE '^(E -?[0-9]+ -?[0-9]+|R -?[0-9]+|S .*)$' "$dir/events" || true)
  json tracer=gdb mode="$mode" threads="$threads" n="$n" loop_ns="$(loop_ns_from "$dir/timing")" \
    events="$events" expected="$(expected_events "$mode" "$n")" lost=0 \
    note="return value by dprintf on work's ret instruction(s)"
}

case "${1:-}" in
  check) check ;;
  hit) [ $# -eq 5 ] || usage_error; check >/dev/null || exit 1; hit "$2" "$3" "$4" "$5" ;;
  attach) echo "gdb has no attach benchmark" >&2; exit 1 ;;
  *) usage_error ;;
esac
