#!/usr/bin/env bash
# The baseline: work_bench and attach_target with no tracer at all.
source "$(dirname "$0")/common.sh"

# The baseline is cheap and, with 4 threads on 2 CPUs of a shared machine, the noisiest
# number of all (one preempted thread stretches the loop): each call measures it 5 times.
REPEAT=${UNTRACED_REPEAT:-5}

case "${1:-}" in
  check) exit 0 ;;
  hit)
    [ $# -eq 5 ] || usage_error
    mode=$2 threads=$3 n=$4 dir=$5
    mapfile -t args < <(workload_args "$mode" "$threads" "$n" "$dir/timing")
    for _ in $(seq "$REPEAT"); do
      "$WORK_BENCH" "${args[@]}"
      json tracer=untraced mode="$mode" threads="$threads" n="$n" loop_ns="$(loop_ns_from "$dir/timing")" \
        events="$(expected_events "$mode" "$n")" expected="$(expected_events "$mode" "$n")" lost=0
    done
    ;;
  attach)
    [ $# -eq 3 ] || usage_error
    probes=$2 dir=$3
    for _ in $(seq "$REPEAT"); do
      start_us=$(now_us)
      "$ATTACH_TARGET" --timing "$dir/timing"
      json tracer=untraced probes="$probes" ready_us=$(($(main_entered_us "$dir/timing") - start_us))
    done
    ;;
  *) usage_error ;;
esac
