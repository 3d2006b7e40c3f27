#!/usr/bin/env bash
# The whole benchmark (`./run bench` calls this): builds the workloads and xprobe, runs
# every tracer on the same workload in one run, and writes bench/results/ (Markdown
# table, raw JSON, PNG chart). Must run as root for the kernel's uprobes and bpftrace.
#
#   bench/run_all.sh [--quick] [--n N] [--runs R] [--tracers a,b,...] [--no-attach] [--no-hit]
#
#   --n N        calls of work per run, the same for every tracer (default 20000)
#   --runs R     runs per configuration, median/min/max over them (default 3)
#   --quick      N=2000, attach only 1 and 100 probes (a smoke run; not for the README)
#   --tracers    subset of: untraced kernel_uprobes xprobe bpftrace uftrace ltrace gdb
#   --results D  write the report into D instead of bench/results (trial runs)
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)
export BENCH_DIR
export BENCH_BUILD_DIR=${BENCH_BUILD_DIR:-$ROOT/build-bench}
RESULTS=$BENCH_DIR/results

N=20000
RUNS=3
ATTACH_SIZES=(1 100 1000 libc)
# The kernel's and bpftrace's detach costs ~50-120 ms per probe here, so the large
# attach sizes run fewer times (documented in the report).
ATTACH_RUNS_LARGE=1
TRACERS=(untraced kernel_uprobes xprobe bpftrace uftrace ltrace gdb)
ATTACH_TRACERS=(untraced kernel_uprobes xprobe bpftrace)
DO_HIT=1 DO_ATTACH=1 DO_THROUGHPUT=1 QUICK=0
MODES=(entry entry_ret string heap_string)
THREADS=(1 4)

while [ $# -gt 0 ]; do
  case "$1" in
    --n) N=$2; shift ;;
    --runs) RUNS=$2; shift ;;
    --quick) QUICK=1; N=2000; ATTACH_SIZES=(1 100) ;;
    --tracers) IFS=, read -r -a TRACERS <<<"$2"; shift ;;
    --no-attach) DO_ATTACH=0 ;;
    --no-hit) DO_HIT=0 ;;
    --no-throughput) DO_THROUGHPUT=0 ;;
    --results) RESULTS=$2; shift ;;
    *) sed -n '2,13p' "$0" >&2; exit 2 ;;
  esac
  shift
done

log() { printf '[bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

log "building workloads and xprobe in $BENCH_BUILD_DIR"
mkdir -p "$BENCH_BUILD_DIR"
XPROBE_BUILD_STATUS=ok
# The same configuration as bench/decoder_bench.sh, which shares this build directory.
if cmake -S "$ROOT" -B "$BENCH_BUILD_DIR" -G Ninja -DXPROBE_BENCH=ON -DXPROBE_TESTS=OFF -DXPROBE_SANITIZE=OFF \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" >"$BENCH_BUILD_DIR/configure.log" 2>&1; then
  ninja -C "$BENCH_BUILD_DIR" -j2 work_bench attach_target >/dev/null
  ninja -C "$BENCH_BUILD_DIR" -j2 xprobe >"$BENCH_BUILD_DIR/xprobe-build.log" 2>&1 ||
    XPROBE_BUILD_STATUS="build failed (see $BENCH_BUILD_DIR/xprobe-build.log)"
else
  # The peers need only the two workloads: build them by hand (same flags as
  # bench/workload/CMakeLists.txt) so a broken tree still measures the peers.
  XPROBE_BUILD_STATUS="cmake configure failed (see $BENCH_BUILD_DIR/configure.log)"
  log "$XPROBE_BUILD_STATUS; building the workloads directly"
  mkdir -p "$BENCH_BUILD_DIR/bench/workload"
  for workload in work_bench attach_target; do
    cc -O2 -g -fno-ipa-icf -Wall -Wextra -o "$BENCH_BUILD_DIR/bench/workload/$workload" \
      "$BENCH_DIR/workload/$workload.c" -pthread
  done
fi

LOAD_AT_START=$(cut -d' ' -f1-3 /proc/loadavg)
WORKDIR=$(mktemp -d /tmp/xprobe-bench.XXXXXX)
trap 'rm -rf "$WORKDIR"' EXIT
RAW=$WORKDIR/raw
mkdir -p "$RAW"

# Which tracers can run here, and why not.
declare -A AVAILABLE
for tracer in "${TRACERS[@]}"; do
  reason=$("$BENCH_DIR/peers/$tracer.sh" check 2>&1) && status=ok || status=${reason:-"check failed"}
  [ "$tracer" = xprobe ] && [ "$XPROBE_BUILD_STATUS" != ok ] && [ "$status" != ok ] && status="not available: $XPROBE_BUILD_STATUS"
  [[ $status == ok || $status == "not available:"* ]] || status="not available: $status"
  AVAILABLE[$tracer]=$status
  printf '{"tracer": "%s", "status": "%s"}\n' "$tracer" "${status//\"/\'}" >> "$RAW/availability.jsonl"
  log "$tracer: $status"
done

# run_peer KIND TRACER ARGS...: one peer run, its JSON lines appended to RAW/KIND.jsonl;
# a run that prints no JSON is recorded as failed with its last stderr line.
run_peer() {
  local kind=$1 tracer=$2; shift 2
  local dir=$WORKDIR/run
  rm -rf "$dir"; mkdir -p "$dir"
  local output rc=0
  output=$("$BENCH_DIR/peers/$tracer.sh" "$kind" "$@" "$dir" 2>"$dir/peer.stderr") || rc=$?
  if grep -q '^{' <<<"$output"; then
    grep '^{' <<<"$output" | sed "s/^{/{\"run\": $RUN, /" >> "$RAW/$kind.jsonl"
    grep '^{' <<<"$output" | sed 's/^/  /' >&2
  else
    local why
    why=$( (grep -v '^$' "$dir/peer.stderr" || true) | tail -1 | tr '"\\' "'/" | cut -c1-200)
    printf '{"run": %d, "tracer": "%s", "args": "%s", "status": "failed: exit %d: %s"}\n' \
      "$RUN" "$tracer" "$*" "$rc" "$why" >> "$RAW/$kind.jsonl"
    log "$tracer $kind $*: failed (exit $rc): $why"
  fi
}

if [ "$DO_HIT" = 1 ]; then
  # Runs are interleaved (run 1 of every tracer, then run 2, ...) so that drift in the
  # machine's load spreads over every tracer instead of biasing one.
  for RUN in $(seq 1 "$RUNS"); do
    for mode in "${MODES[@]}"; do
      for threads in "${THREADS[@]}"; do
        for tracer in "${TRACERS[@]}"; do
          [ "${AVAILABLE[$tracer]}" = ok ] || continue
          log "hit run $RUN/$RUNS: $tracer $mode threads=$threads N=$N"
          run_peer hit "$tracer" "$mode" "$threads" "$N"
        done
      done
    done
  done
fi

if [ "$DO_ATTACH" = 1 ]; then
  for size in "${ATTACH_SIZES[@]}"; do
    runs=$RUNS
    [[ $size == 1000 || $size == libc ]] && runs=$ATTACH_RUNS_LARGE
    for RUN in $(seq 1 "$runs"); do
      for tracer in "${ATTACH_TRACERS[@]}"; do
        [[ " ${TRACERS[*]} " == *" $tracer "* ]] || continue
        [ "${AVAILABLE[$tracer]}" = ok ] || continue
        log "attach run $RUN/$runs: $tracer $size probes"
        run_peer attach "$tracer" "$size"
      done
    done
  done
fi

if [ "$DO_THROUGHPUT" = 1 ] && [[ " ${TRACERS[*]} " == *" xprobe "* ]] && [ "${AVAILABLE[xprobe]}" = ok ]; then
  # As fast as the workload can call (delay 0), then slower offered rates, 1 and 4 threads.
  for RUN in $(seq 1 "$RUNS"); do
    for threads in 1 4; do
      for delay in 0 10000 50000; do
        log "throughput run $RUN/$RUNS: xprobe threads=$threads delay=${delay}ns N=$((N * 5))"
        run_peer throughput xprobe "$delay" "$threads" $((N * 5))
      done
    done
  done
fi

# The decoder benchmark belongs to the decoder's owner; its table is included as is.
if [ -x "$BENCH_DIR/decoder_bench.sh" ]; then
  log "decoder benchmark (bench/decoder_bench.sh)"
  rc=0
  "$BENCH_DIR/decoder_bench.sh" > "$WORKDIR/decoder.stdout" 2>"$WORKDIR/decoder.stderr" || rc=$?
  if [ "$rc" = 0 ]; then
    cp "$WORKDIR/decoder.stdout" "$RAW/decoder.md"
  else
    echo "Not measured: bench/decoder_bench.sh failed (exit $rc): $(cat "$WORKDIR/decoder.stderr" "$WORKDIR/decoder.stdout" |
      grep -v '^ *$' | grep -m1 -iE 'error|fail' || true)" > "$RAW/decoder.md"
  fi
fi

# The machine and the tracer versions, for the report's header.
{
  echo "model=$(lscpu | sed -n 's/^Model name: *//p' | sed -n 1p)"
  echo "cpus=$(nproc)"
  echo "kernel=$(uname -r)"
  echo "os=$(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "hypervisor=$(lscpu | sed -n 's/^Hypervisor vendor: *//p')"
  echo "bpftrace=$(bpftrace --version 2>/dev/null | sed -n 1p)"
  echo "ltrace=$(ltrace --version 2>/dev/null | sed -n 1p)"
  echo "gdb=$(gdb --version 2>/dev/null | sed -n 1p)"
  echo "uftrace=$(uftrace --version 2>/dev/null | sed -n 1p)"
  echo "commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)"
  echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "load=$LOAD_AT_START at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  echo "n=$N"
  echo "runs=$RUNS"
  echo "attach_runs_large=$ATTACH_RUNS_LARGE"
  echo "quick=$QUICK"
} > "$RAW/machine.txt"

mkdir -p "$RESULTS"
# The raw runs stay next to the build too, to re-render without re-measuring:
#   python3 bench/report/make_report.py build-bench/bench-raw bench/results
rm -rf "$BENCH_BUILD_DIR/bench-raw" && cp -r "$RAW" "$BENCH_BUILD_DIR/bench-raw"
/usr/bin/python3 "$BENCH_DIR/report/make_report.py" "$RAW" "$RESULTS"
