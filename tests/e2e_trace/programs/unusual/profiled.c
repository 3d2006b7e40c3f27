/* setitimer(ITIMER_PROF) at 10 kHz: SIGPROF lands on whichever thread is running, often while
   it is inside work() or inside xprobe's trampoline and agent for it, and the handler calls
   work() itself. The handler's calls are counted apart (an atomic add is signal-safe). The
   kernel expires ITIMER_PROF at its tick (a few hundred a second), so a CLOCK_MONOTONIC
   timer (a high-resolution timer) sends SIGPROF at 10 kHz as well. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "work.h"

enum { kThreads = 4 };
static long calls_per_thread = 5000;

static long handler_calls;

static void on_prof(int signal) {
  (void)signal;
  work(3, NULL);
  __atomic_fetch_add(&handler_calls, 1, __ATOMIC_RELAXED);
}

static void spin(long x) {
  for (volatile long i = 0; i < 5000 + (x & 63); ++i) {
  }
}

static void* body(void* base) {
  for (long i = 0; i < calls_per_thread; ++i) work((long)base + i, spin);
  return NULL;
}

int main(int argc, char** argv) {
  /* [calls per thread] [the high-resolution timer's period in microseconds] */
  if (argc > 1) calls_per_thread = atol(argv[1]);
  const long period_us = argc > 2 ? atol(argv[2]) : 100;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_prof;
  action.sa_flags = SA_RESTART;
  sigaction(SIGPROF, &action, NULL);
  const struct itimerval every_100us = {{0, 100}, {0, 100}};
  setitimer(ITIMER_PROF, &every_100us, NULL);
  struct sigevent to_process = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGPROF};
  timer_t timer;
  timer_create(CLOCK_MONOTONIC, &to_process, &timer);
  const struct itimerspec every_period = {{0, period_us * 1000}, {0, period_us * 1000}};
  timer_settime(timer, 0, &every_period, NULL);
  pthread_t threads[kThreads];
  for (long t = 0; t < kThreads; ++t) pthread_create(&threads[t], NULL, body, (void*)(t * 1000000));
  for (int t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);
  const struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_PROF, &off, NULL);
  timer_delete(timer);
  /* The ticks depend on the CPU time taken: the first line holds only what does not. */
  printf("profiled threads=%d calls_per_thread=%ld handler_ran=%s\n", kThreads, calls_per_thread,
         handler_calls > 0 ? "yes" : "no");
  printf("record calls=%ld argument_sum=%ld result_sum=%ld handler_calls=%ld\n", work_record.calls,
          work_record.argument_sum, work_record.result_sum, handler_calls);
  return 0;
}
