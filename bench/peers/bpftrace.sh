#!/usr/bin/env bash
# bpftrace (Debian package): uprobe:/uretprobe: printing the same fields as every other
# tracer, into a file (-o); events are counted by line. bpftrace reports lost perf-buffer
# events as "Lost N events" lines, which are summed.
source "$(dirname "$0")/common.sh"

# bpftrace refuses more than 512 probes unless told otherwise (the libc glob is ~7000).
export BPFTRACE_MAX_PROBES=${BPFTRACE_MAX_PROBES:-100000}

# A bpftrace that fails half-way through attaching leaves bcc's tracefs events
# (p_<object>_<offset>_<n>_bcc_<pid>) behind; remove the ones of this bpftrace process.
remove_leftover_events() {  # BPFTRACE_PID
  local tracefs=/sys/kernel/tracing event
  [ -w "$tracefs/uprobe_events" ] || return 0
  for event in $(awk -v suffix="_bcc_$1" '{ split($1, a, ":"); if (a[2] ~ suffix "$") print a[2] }' "$tracefs/uprobe_events"); do
    echo "-:$event" >> "$tracefs/uprobe_events" 2>/dev/null || true
  done
}

check() {
  command -v bpftrace >/dev/null || { echo "bpftrace not installed"; return 1; }
  [ "$(id -u)" = 0 ] || { echo "not root"; return 1; }
}

hit() {
  local mode=$1 threads=$2 n=$3 dir=$4 program
  case "$mode" in
    entry) program="uprobe:$WORK_BENCH:work { printf(\"E %d %d\\n\", arg0, arg1); }" ;;
    entry_ret) program="uprobe:$WORK_BENCH:work { printf(\"E %d %d\\n\", arg0, arg1); }
      uretprobe:$WORK_BENCH:work { printf(\"R %d\\n\", retval); }" ;;
    string | heap_string) program="uprobe:$WORK_BENCH:work_str { printf(\"S %s\\n\", str(arg0)); }" ;;
  esac
  mapfile -t args < <(workload_args "$mode" "$threads" "$n" "$dir/timing")
  # -c starts the workload only after every probe is attached.
  bpftrace -B full -o "$dir/events" -e "$program" -c "$WORK_BENCH ${args[*]}" 2>"$dir/stderr" >/dev/null
  local events lost
  events=$(grep -cE '^(E -?[0-9]+ -?[0-9]+|R -?[0-9]+|S .*)$' "$dir/events" || true)
  lost=$(awk '/^Lost [0-9]+ events/ { s += $2 } END { print s + 0 }' "$dir/events" "$dir/stderr")
  json tracer=bpftrace mode="$mode" threads="$threads" n="$n" loop_ns="$(loop_ns_from "$dir/timing")" \
    events="$events" expected="$(expected_events "$mode" "$n")" lost="$lost"
}

# Live = bpftrace's BEGIN probe has fired: bpftrace attaches BEGIN first, every other probe
# next, and triggers BEGIN only then. attach_target is started when READY is read; the
# clock runs from bpftrace's start until attach_target's main.
attach() {
  local probes=$1 dir=$2 spec
  case "$probes" in
    libc) spec="uprobe:$LIBC:*" ;;
    *) spec=$(attach_symbols "$probes" | awk -v o="$ATTACH_TARGET" '{ printf "%suprobe:%s:%s", (NR > 1 ? ",\n" : ""), o, $1 }') ;;
  esac
  local program="BEGIN { printf(\"READY\\n\"); }
$spec { @hits = count(); }"
  local start_us ready_us=0 line attached=0 detach_start_us detach_end_us
  start_us=$(now_us)
  exec {from_bpftrace}< <(exec bpftrace -B line -e "$program" 2>"$dir/stderr")
  local bpftrace_pid=$!
  while read -r -u "$from_bpftrace" line; do
    case "$line" in
      "Attaching "*) attached=$(echo "$line" | awk '{ print $2 - 1 }') ;;  # minus BEGIN
      READY) ready_us=1; break ;;
    esac
  done
  local status=ok end_us=0 hits=0
  if [ "$ready_us" = 1 ]; then
    "$ATTACH_TARGET" --timing "$dir/timing"
    end_us=$(main_entered_us "$dir/timing")
  else
    status="bpftrace gave up after $(( ($(now_us) - start_us) / 1000000 )) s: $(tail -1 "$dir/stderr")"
  fi
  detach_start_us=$(now_us)
  kill -INT "$bpftrace_pid" 2>/dev/null || true
  cat <&"$from_bpftrace" > "$dir/stdout"
  wait "$bpftrace_pid" || true
  detach_end_us=$(now_us)
  exec {from_bpftrace}<&-
  remove_leftover_events "$bpftrace_pid"
  hits=$(awk '/^@hits:/ { print $2 }' "$dir/stdout")
  json tracer=bpftrace probes="$probes" requested="$(attach_symbols "$probes" | wc -l)" attached="$attached" \
    ready_us=$(( end_us > 0 ? end_us - start_us : 0 )) hits="${hits:-0}" expected_hits="$(attach_expected_hits "$probes")" \
    detach_us=$((detach_end_us - detach_start_us)) status="$status"
}

case "${1:-}" in
  check) check ;;
  hit) [ $# -eq 5 ] || usage_error; check >/dev/null || exit 1; hit "$2" "$3" "$4" "$5" ;;
  attach) [ $# -eq 3 ] || usage_error; check >/dev/null || exit 1; attach "$2" "$3" ;;
  *) usage_error ;;
esac
