// Calls for filters and aggregations to select from, in an order fixed by its arguments.
//   filter_calls visits N   calls visit(n, u, name, s) N times with a spread of numbers and names
//   filter_calls timed N    calls timed_call(k) N times (k = i % 4); each call spins for
//                           kSpinNs[k] (the middle of a power-of-two range of nanoseconds), timed
//                           by the program with clock_gettime around the call: it prints one
//                           "call K NS" line per call
//   filter_calls busy MS T  T threads call visit() in a loop for MS milliseconds, then it prints
//                           "calls=N", the calls it made in all
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char* const kNames[] = {"alpha", "beta", "gamma", "delta", "epsilon", "alphabet", "zeta", "beta-max"};

__attribute__((noinline)) long visit(long n, unsigned u, const char* name, short s) {
  __asm__ volatile("");
  return n + (long)u + name[0] + s;
}

static unsigned long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static const unsigned long long kSpinNs[] = {3000, 24000, 48000, 100000};

__attribute__((noinline)) long timed_call(long k) {
  const unsigned long long until = now_ns() + kSpinNs[k & 3];
  long spins = 0;
  while (now_ns() < until) ++spins;
  return spins;
}

static long busy_ms;

static void* busy_thread(void* counted) {
  const unsigned long long until = now_ns() + (unsigned long long)busy_ms * 1000000ull;
  long calls = 0, total = 0;
  while (now_ns() < until) {
    for (int i = 0; i < 64; ++i, ++calls) total += visit(calls % 5, (unsigned)calls, kNames[calls % 8], (short)calls);
  }
  *(long*)counted = calls;
  return (void*)total;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "visits";
  const long rounds = argc > 2 ? atol(argv[2]) : 64;
  long total = 0;
  if (strcmp(mode, "busy") == 0) {
    busy_ms = rounds;
    const int threads = argc > 3 ? atoi(argv[3]) : 1;
    pthread_t ids[16];
    long counted[16] = {0};
    long calls = 0;
    for (int t = 0; t < threads && t < 16; ++t) pthread_create(&ids[t], NULL, busy_thread, &counted[t]);
    for (int t = 0; t < threads && t < 16; ++t) {
      pthread_join(ids[t], NULL);
      calls += counted[t];
    }
    printf("calls=%ld\n", calls);
    return 0;
  }
  if (strcmp(mode, "timed") == 0) {
    for (long i = 0; i < rounds; ++i) {
      const long k = i % 4;
      const unsigned long long start = now_ns();
      total += timed_call(k);
      printf("call %ld %llu\n", k, now_ns() - start);
    }
    return 0;
  }
  for (long i = 0; i < rounds; ++i) {
    const unsigned u = (unsigned)i * 2654435761u;
    total += visit(i * 7 - 100, u, kNames[(i * 5) % 8], (short)(i * 1000));
  }
  printf("total=%ld\n", total);
  return 0;
}
