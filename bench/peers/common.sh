# Shared by every peer script (sourced). A peer script answers three questions:
#   PEER check                        exit 0 if the tracer can run here, else print why, exit 1
#   PEER hit MODE THREADS N WORKDIR    one traced run of work_bench; prints one JSON line
#   PEER attach PROBES WORKDIR         one attach-cost run (only peers that support it)
# MODE: entry (work: a, b), entry_ret (work: a, b + return: $retval), string (work_str: s, a string
# literal), heap_string (work_str: s, the same strings on the heap).
# PROBES: 1 | 100 | 1000 (probe_target_* of attach_target) | libc (every function of libc.so.6).
set -euo pipefail

BENCH_DIR=${BENCH_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BENCH_BUILD_DIR=${BENCH_BUILD_DIR:-$(cd "$BENCH_DIR/.." && pwd)/build-bench}
WORK_BENCH=${WORK_BENCH:-$BENCH_BUILD_DIR/bench/workload/work_bench}
ATTACH_TARGET=${ATTACH_TARGET:-$BENCH_BUILD_DIR/bench/workload/attach_target}
XPROBE=${XPROBE:-$BENCH_BUILD_DIR/src/cli/xprobe}
LIBC=${LIBC:-$(ldd "$WORK_BENCH" 2>/dev/null | awk '/libc.so.6/ {print $3}')}
LIBC=${LIBC:-/lib/x86_64-linux-gnu/libc.so.6}
ELF_SYMBOLS="$BENCH_DIR/peers/elf_symbols.py"

# json KEY=VALUE... -> one JSON object; numbers stay numbers, everything else is a string.
json() {
  local out="" pair key value
  for pair in "$@"; do
    key=${pair%%=*}
    value=${pair#*=}
    if [[ $value =~ ^-?[0-9]+(\.[0-9]+)?$ ]]; then
      out+="\"$key\": $value, "
    else
      value=${value//\\/\\\\}
      value=${value//\"/\\\"}
      value=${value//$'\n'/ }
      value=${value//$'\t'/ }
      out+="\"$key\": \"$value\", "
    fi
  done
  printf '{%s}\n' "${out%, }"
}

# The loop time work_bench measured itself (only the calling loop; start-up excluded).
loop_ns_from() {  # TIMING_FILE
  sed -n 's/.*loop_ns=\([0-9]*\).*/\1/p' "$1"
}

# Events one run must record: entry N, entry_ret 2N (N entries and N returns), string N.
expected_events() {  # MODE N
  case "$1" in entry_ret) echo $(($2 * 2)) ;; *) echo "$2" ;; esac
}

workload_args() {  # MODE THREADS N TIMING_FILE
  local args=(--threads "$2" --timing "$4")
  [ "$1" = string ] && args+=(--str)
  [ "$1" = heap_string ] && args+=(--heap-str)
  args+=("$3")
  printf '%s\n' "${args[@]}"
}

# Offsets of the `ret` instructions of FUNC from its start (hex), for tracers that
# have no return probe and stop on the returning instruction instead (gdb).
ret_offsets() {  # BINARY FUNC
  local start="" address
  while read -r address; do
    if [ -z "$start" ]; then start=$address; continue; fi
    printf '0x%x\n' $((0x$address - 0x$start))
  done < <(objdump -d --no-show-raw-insn "$1" | awk -v f="<$2>:" '
    $2 == f { print $1; inside = 1; next }
    inside && NF == 0 { exit }
    inside && $2 ~ /^ret/ { sub(":", "", $1); print $1 }')
}

# Microseconds since the epoch as an integer (bash's $EPOCHREALTIME: no process spawned).
now_us() {
  local t=$EPOCHREALTIME
  echo "${t/./}"
}

# attach_target writes main_entered_us (CLOCK_REALTIME) when its main starts.
main_entered_us() {  # TIMING_FILE
  sed -n 's/.*main_entered_us=\([0-9]*\).*/\1/p' "$1"
}

# Probe list for the attach benchmark: "NAME FILE_OFFSET" per line.
attach_symbols() {  # PROBES
  case "$1" in
    libc) "$ELF_SYMBOLS" "$LIBC" '*' --unique-addresses ;;
    *) "$ELF_SYMBOLS" "$ATTACH_TARGET" 'probe_target_*' | sort | awk -v n="$1" 'NR <= n' ;;
  esac
}

# What the attach run should count: every probe_target_* is called once; for libc only
# "at least one" can be checked, because which libc functions run is libc's business.
attach_expected_hits() {  # PROBES
  case "$1" in libc) echo 1 ;; *) echo "$1" ;; esac
}

usage_error() {
  echo "usage: $0 check | hit MODE THREADS N WORKDIR | attach PROBES WORKDIR" >&2
  exit 2
}
