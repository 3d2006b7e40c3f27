// The lifecycle workload: N forks (the child exits at once, the parent waits for it), N thread
// starts (a thread that returns at once, joined) and N fork+exec of /bin/true, each timed by
// the program itself, so that a tracer's start-up and end never count. Prints
//   fork_us=... thread_us=... exec_us=...   (mean microseconds per operation)
// to stdout or to the file given with --timing FILE.
//   lifecycle_bench [--timing FILE] N
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void *returns_at_once(void *argument) { return argument; }

int main(int argc, char **argv) {
  const char *timing = NULL;
  int first = 1;
  if (argc >= 3 && strcmp(argv[1], "--timing") == 0) {
    timing = argv[2];
    first = 3;
  }
  if (argc != first + 1) {
    fprintf(stderr, "usage: %s [--timing FILE] N\n", argv[0]);
    return 2;
  }
  const long n = strtol(argv[first], NULL, 10);
  if (n <= 0) return 2;

  double start = now_us();
  for (long i = 0; i < n; ++i) {
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) _exit(0);
    if (waitpid(child, NULL, 0) != child) return 1;
  }
  const double fork_us = (now_us() - start) / (double)n;

  start = now_us();
  for (long i = 0; i < n; ++i) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, returns_at_once, NULL) != 0) return 1;
    if (pthread_join(thread, NULL) != 0) return 1;
  }
  const double thread_us = (now_us() - start) / (double)n;

  start = now_us();
  for (long i = 0; i < n; ++i) {
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) {
      execl("/bin/true", "true", (char *)NULL);
      _exit(127);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  }
  const double exec_us = (now_us() - start) / (double)n;

  FILE *out = timing ? fopen(timing, "w") : stdout;
  if (out == NULL) return 1;
  fprintf(out, "fork_us=%.1f thread_us=%.1f exec_us=%.1f\n", fork_us, thread_us, exec_us);
  return out == stdout || fclose(out) == 0 ? 0 : 1;
}
