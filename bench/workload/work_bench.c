// The per-hit workload: calls work(a, b) (or work_str(s)) N times in total, from one
// thread or split evenly over --threads T, and writes how long the calling loop took.
// Only the loop is timed, so a tracer's start-up and tear-down never count as per-hit cost.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// volatile: the compiler must perform every store, so the call cannot be elided.
static volatile long sink;

// noipa: no inlining, cloning (work.constprop.0) or interprocedural constant folding,
// so every call goes to the symbol `work` that the tracers probe.
__attribute__((noinline, noipa)) long work(long a, long b) {
  long r = a * 3 + b;
  sink = r;
  return r;
}

__attribute__((noinline, noipa)) long work_str(const char *s) {
  long r = (long)(unsigned char)s[0] + (long)strlen(s);
  sink = r;
  return r;
}

enum workload_mode { MODE_INT, MODE_STR };

struct loop_args {
  enum workload_mode mode;
  long first;
  long count;
  long delay_ns;
  pthread_barrier_t *start;
  long start_ns, end_ns;  // this thread's own loop, read after the barrier
};

static const char *bench_strings[4] = {"xprobe-bench-0", "xprobe-bench-1", "xprobe-bench-2", "xprobe-bench-3"};

static long monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

// Spinning instead of sleeping: a sleep's wake-up latency (~50 us) would swamp the
// offered event rate the throughput benchmark wants to set.
static void spin_for(long ns) {
  if (ns <= 0) return;
  long until = monotonic_ns() + ns;
  while (monotonic_ns() < until) {
  }
}

static void *run_loop(void *opaque) {
  struct loop_args *args = opaque;
  if (args->start) pthread_barrier_wait(args->start);
  args->start_ns = monotonic_ns();
  long acc = 0;
  for (long i = args->first; i < args->first + args->count; i++) {
    if (args->mode == MODE_INT)
      acc += work(i, i + 1);
    else
      acc += work_str(bench_strings[i & 3]);
    spin_for(args->delay_ns);
  }
  sink = acc;
  args->end_ns = monotonic_ns();
  return NULL;
}

static void usage(void) {
  fprintf(stderr,
          "usage: work_bench [--threads T] [--str | --heap-str] [--delay-ns D] [--timing FILE] N\n"
          "  calls work(i, i+1) (or work_str(s) with --str: string literals; --heap-str: the same\n"
          "  strings copied to the heap) N times in total, split over T threads\n");
  exit(2);
}

static long parse_long(const char *text) {
  char *end = NULL;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < 0) usage();
  return value;
}

int main(int argc, char **argv) {
  long threads = 1, delay_ns = 0, calls = -1;
  enum workload_mode mode = MODE_INT;
  const char *timing_path = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      threads = parse_long(argv[++i]);
    else if (strcmp(argv[i], "--str") == 0)
      mode = MODE_STR;
    else if (strcmp(argv[i], "--heap-str") == 0) {
      mode = MODE_STR;
      for (int s = 0; s < 4; s++) bench_strings[s] = strdup(bench_strings[s]);
    }
    else if (strcmp(argv[i], "--delay-ns") == 0 && i + 1 < argc)
      delay_ns = parse_long(argv[++i]);
    else if (strcmp(argv[i], "--timing") == 0 && i + 1 < argc)
      timing_path = argv[++i];
    else if (calls < 0)
      calls = parse_long(argv[i]);
    else
      usage();
  }
  if (calls < 0 || threads < 1 || threads > 64) usage();

  long start_ns, end_ns;
  if (threads == 1) {
    struct loop_args args = {mode, 0, calls, delay_ns, NULL, 0, 0};
    run_loop(&args);
    start_ns = args.start_ns;
    end_ns = args.end_ns;
  } else {
    pthread_t tids[64];
    struct loop_args args[64];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    long per_thread = calls / threads, extra = calls % threads, first = 0;
    for (long t = 0; t < threads; t++) {
      long count = per_thread + (t < extra ? 1 : 0);
      args[t] = (struct loop_args){mode, first, count, delay_ns, &start, 0, 0};
      first += count;
      if (pthread_create(&tids[t], NULL, run_loop, &args[t]) != 0) {
        perror("pthread_create");
        return 1;
      }
    }
    // Threads are created before any clock starts: thread creation under a tracer is slow
    // and is not per-hit cost. The loop time runs from the first thread's start to the
    // last thread's end.
    pthread_barrier_wait(&start);
    for (long t = 0; t < threads; t++) pthread_join(tids[t], NULL);
    pthread_barrier_destroy(&start);
    start_ns = args[0].start_ns;
    end_ns = args[0].end_ns;
    for (long t = 1; t < threads; t++) {
      if (args[t].start_ns < start_ns) start_ns = args[t].start_ns;
      if (args[t].end_ns > end_ns) end_ns = args[t].end_ns;
    }
  }

  FILE *out = stdout;
  if (timing_path) {
    out = fopen(timing_path, "w");
    if (!out) {
      perror(timing_path);
      return 1;
    }
  }
  fprintf(out, "calls=%ld threads=%ld loop_ns=%ld\n", calls, threads, end_ns - start_ns);
  if (out != stdout) fclose(out);
  return 0;
}
