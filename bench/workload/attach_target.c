// The attach-cost workload: 1000 distinct probe targets (probe_target_000 .. _999).
// main's first action is to read the time (CLOCK_REALTIME, the clock of bash's
// $EPOCHREALTIME), so the benchmark can time "from the tracer's start until the traced
// program runs with its probes live"; then every target is called once, so that a
// tracer's event count shows whether all its probes really were live.
#include <stdio.h>
#include <string.h>
#include <time.h>

static volatile long sink;

// Distinct bodies (the constant differs), so identical-code folding cannot merge them.
#define PROBE_TARGET(a, b, c)                                                    \
  __attribute__((noinline, noipa)) long probe_target_##a##b##c(long x) {        \
    sink = x + 0x##a##b##c;                                                      \
    return sink;                                                                 \
  }
#define TARGETS_10(a, b)                                                                   \
  PROBE_TARGET(a, b, 0) PROBE_TARGET(a, b, 1) PROBE_TARGET(a, b, 2) PROBE_TARGET(a, b, 3)  \
  PROBE_TARGET(a, b, 4) PROBE_TARGET(a, b, 5) PROBE_TARGET(a, b, 6) PROBE_TARGET(a, b, 7)  \
  PROBE_TARGET(a, b, 8) PROBE_TARGET(a, b, 9)
#define TARGETS_100(a)                                                                     \
  TARGETS_10(a, 0) TARGETS_10(a, 1) TARGETS_10(a, 2) TARGETS_10(a, 3) TARGETS_10(a, 4)     \
  TARGETS_10(a, 5) TARGETS_10(a, 6) TARGETS_10(a, 7) TARGETS_10(a, 8) TARGETS_10(a, 9)
TARGETS_100(0) TARGETS_100(1) TARGETS_100(2) TARGETS_100(3) TARGETS_100(4)
TARGETS_100(5) TARGETS_100(6) TARGETS_100(7) TARGETS_100(8) TARGETS_100(9)

#define CALL_TARGET(a, b, c) probe_target_##a##b##c(1);
#define CALL_10(a, b)                                                                      \
  CALL_TARGET(a, b, 0) CALL_TARGET(a, b, 1) CALL_TARGET(a, b, 2) CALL_TARGET(a, b, 3)      \
  CALL_TARGET(a, b, 4) CALL_TARGET(a, b, 5) CALL_TARGET(a, b, 6) CALL_TARGET(a, b, 7)      \
  CALL_TARGET(a, b, 8) CALL_TARGET(a, b, 9)
#define CALL_100(a)                                                                        \
  CALL_10(a, 0) CALL_10(a, 1) CALL_10(a, 2) CALL_10(a, 3) CALL_10(a, 4) CALL_10(a, 5)      \
  CALL_10(a, 6) CALL_10(a, 7) CALL_10(a, 8) CALL_10(a, 9)

int main(int argc, char **argv) {
  struct timespec entered;
  clock_gettime(CLOCK_REALTIME, &entered);
  const char *timing_path = (argc == 3 && strcmp(argv[1], "--timing") == 0) ? argv[2] : NULL;
  CALL_100(0) CALL_100(1) CALL_100(2) CALL_100(3) CALL_100(4)
  CALL_100(5) CALL_100(6) CALL_100(7) CALL_100(8) CALL_100(9)
  FILE *out = timing_path ? fopen(timing_path, "w") : stdout;
  if (!out) {
    perror(timing_path);
    return 1;
  }
  fprintf(out, "main_entered_us=%lld\n", (long long)entered.tv_sec * 1000000LL + entered.tv_nsec / 1000);
  if (out != stdout) fclose(out);
  return 0;
}
